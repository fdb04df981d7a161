"""Property: random chains of pointwise, meta and reduction ops run with the shapes the frontend inferred."""

from __future__ import annotations

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import segkit
from segkit import DataType, FusionDefinition

DTYPES = [DataType.Float, DataType.BFloat16, DataType.Double]


def _pick_dim(data, v):
    return data.draw(st.integers(0, v.ndim - 1))


ALL_KINDS = ("unary", "binary", "scalar", "cast", "permute", "reshape", "broadcast", "slice", "sum", "max",
             "squeeze", "pad", "set", "where")


def _apply(fd, data, x, kinds=ALL_KINDS):
    """One random op on x that is valid for its static shape (returns the new value)."""
    kind = data.draw(st.sampled_from(kinds))
    n = x.ndim
    if kind == "unary":
        return getattr(fd.ops, data.draw(st.sampled_from(["exp", "neg", "abs", "tanh", "sigmoid"])))(x)
    if kind == "binary":
        return getattr(fd.ops, data.draw(st.sampled_from(["add", "mul", "sub", "maximum"])))(x, x)
    if kind == "scalar":
        return fd.ops.mul(x, data.draw(st.sampled_from([2.0, -0.5, 3])))
    if kind == "cast":
        return fd.ops.cast(x, dtype=data.draw(st.sampled_from(DTYPES)))
    if kind == "permute":
        return fd.ops.permute(x, dims=data.draw(st.permutations(range(n))))
    if kind == "reshape":
        if n >= 2 and data.draw(st.booleans()):
            d = data.draw(st.integers(0, n - 2))
            new = list(x.shape[:d]) + [x.shape[d] * x.shape[d + 1]] + list(x.shape[d + 2:])
        else:
            new = [math.prod(x.shape)]
        return fd.ops.reshape(x, new_shape=new)
    if kind == "broadcast":
        at = data.draw(st.integers(0, n))
        flags = [False] * n
        flags.insert(at, True)
        b = fd.ops.broadcast(x, is_broadcast_dim=flags)
        shape = list(b.shape)
        shape[at] = data.draw(st.integers(1, 3))
        return fd.ops.expand(b, shape=shape)
    if kind == "slice":
        starts, ends = [], []
        for s in x.shape:
            lo = data.draw(st.integers(0, s - 1))
            starts.append(lo), ends.append(data.draw(st.integers(lo + 1, s)))
        return fd.ops.slice(x, start_indices=starts, end_indices=ends)
    if kind in ("sum", "max"):
        d, keep = _pick_dim(data, x), data.draw(st.booleans())
        if n == 1 and not keep:
            keep = True
        if kind == "sum":
            return fd.ops.sum(x, dims=[d], keepdim=keep, dtype=DataType.Float)
        return fd.ops.max(x, dims=[d], keepdim=keep)
    if kind == "squeeze":
        ones = [d for d in range(n) if x.shape[d] == 1 and not x.expanded[d]]
        if not ones or n == 1:
            return fd.ops.set(x)
        return fd.ops.squeeze(x, dims=[data.draw(st.sampled_from(ones))])
    if kind == "pad":
        return fd.ops.pad(x, pad_widths=[data.draw(st.integers(0, 2)), data.draw(st.integers(0, 2))])
    if kind == "where":
        return fd.ops.where(fd.ops.gt(x, 0.0), x, fd.ops.neg(x))
    return fd.ops.segment_set(x) if data.draw(st.booleans()) else fd.ops.set(x)


@settings(max_examples=80, deadline=None)
@given(st.data())
def test_random_chains_run_with_inferred_shapes(data):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4))
    dtype = data.draw(st.sampled_from(DTYPES))
    with FusionDefinition() as fd:
        values = [fd.define_tensor(shape=shape, contiguity=[True] * len(shape), dtype=dtype)]
        for _ in range(data.draw(st.integers(1, 8))):
            values.append(_apply(fd, data, data.draw(st.sampled_from(values))))
        for v in values[1:]:
            fd.add_output(v)
    x = torch.randn(shape, dtype=torch.float64).to(dtype.torch)
    outs = segkit.run_reference(fd, [x])
    for v, out in zip(values[1:], outs):
        assert tuple(out.shape) == v.shape, f"{v.describe()} ran as {tuple(out.shape)}"
        assert out.dtype == v.dtype.torch, f"{v.describe()} ran as {out.dtype}"
