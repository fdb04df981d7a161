"""Catalogue entries for matmul-like ops: matmul, linear, grouped_mm, sdpfa_fwd, sdpfa_bwd.

Shape rules follow nvFuser's csrc/ops/composite.cpp and arith.cpp (grouped_mm); the references compute
what nvFuser's expression evaluator asks ATen for (csrc/ir/composite_nodes.cpp), attention in float32 on
the math path (scores, softmax, logsumexp), which is what flash attention approximates.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from segkit.dtypes import DataType
from segkit.ir import Value
from segkit.ops.catalogue import REQUIRED, InferError, OpDef, Out, RunContext, register, static, tensor_arg


def _dims(t: Value, idx: list[int]) -> tuple[list[int], list[bool], list[bool]]:
    return [t.shape[i] for i in idx], [t.broadcast[i] for i in idx], [t.expanded[i] for i in idx]


def _same_dtype(op: str, *ts: Value) -> None:
    if len({t.dtype for t in ts}) != 1:
        raise InferError(f"{op} expects operands of one dtype, got {', '.join(t.describe() for t in ts)}")


def _k_kind(t: Value, d: int) -> str:
    if t.expanded[d]:
        return f"an expanded broadcast (size {t.shape[d]}, stride 0)"
    return "a broadcast" if t.broadcast[d] else "not a broadcast"


def _check_k(op: str, a: Value, ka: int, b: Value, kb: int, names: tuple[str, str] = ("arg1", "arg2"),
             same_broadcast: bool = True) -> None:
    """The contraction (K) dims agree in size and, for nvFuser's matmul, linear and grouped_mm
    (``newForMatmul`` / ``newForLinear`` in csrc/ops/composite.cpp, ``createGroupedMmaOutput`` in
    csrc/ops/arith.cpp), are both broadcast or neither: an expanded (stride-0) K on one side only is refused
    when the op is defined. Two static size-1 K dims pass: nvFuser makes a size-1 slice or pad a Broadcast,
    which segkit's flags do not track."""
    sa, sb = a.shape[ka], b.shape[kb]
    if -1 not in (sa, sb) and sa != sb:
        raise InferError(f"{op}: contraction sizes differ: {a.describe()} dim {ka} is {sa}, {b.describe()} dim {kb} is {sb}")
    if same_broadcast and a.broadcast[ka] != b.broadcast[kb] and not sa == sb == 1:
        raise InferError(f"{op}: K should be broadcast in both {names[0]} and {names[1]}, or neither (nvFuser's rule): "
                         f"{names[0]} {a.describe()} dim {ka} is {_k_kind(a, ka)}, {names[1]} {b.describe()} dim {kb} "
                         f"is {_k_kind(b, kb)}")


def _batch(op: str, xs: list[Value], lead: list[int]) -> tuple[list[int], list[bool], list[bool]]:
    """torch-style right-aligned broadcast of the leading (batch) dims of several tensors."""
    n = max(lead)
    shape, bc, ex = [], [], []
    for i in range(n):
        sizes, bcs, exs = [], [], []
        for x, m in zip(xs, lead):
            j = i - (n - m)
            if j >= 0:
                sizes.append(x.shape[j]), bcs.append(x.broadcast[j]), exs.append(x.expanded[j])
        real = {s for s, b, e in zip(sizes, bcs, exs) if not (b and not e) and s != 1}
        known = {s for s in real if s != -1}
        if len(known) > 1:
            raise InferError(f"{op}: batch dims do not broadcast: {', '.join(x.describe() for x in xs)}")
        shape.append(known.pop() if known else (-1 if real else 1))
        bc.append(not real and all(bcs)), ex.append(False)
    return shape, bc, ex


# --------------------------------------------------------------------------- matmul, linear
def _matmul_infer(a: dict) -> list[Out]:
    x, y = tensor_arg(a["arg1"], "matmul's arg1"), tensor_arg(a["arg2"], "matmul's arg2")
    if x.ndim == 0 or y.ndim == 0:
        raise InferError(f"matmul expects inputs of at least 1 dim, got {x.describe()} and {y.describe()}")
    _same_dtype("matmul", x, y)
    _check_k("matmul", x, x.ndim - 1, y, max(y.ndim - 2, 0))
    if x.ndim == 1 and y.ndim == 1:
        return [Out(x.dtype, (), (), ())]
    if y.ndim == 1:
        s, b, e = _dims(x, list(range(x.ndim - 1)))
    elif x.ndim == 1:
        s, b, e = _dims(y, list(range(y.ndim - 2)) + [y.ndim - 1])
    else:
        s, b, e = _batch("matmul", [x, y], [x.ndim - 2, y.ndim - 2])
        for t, d in ((x, x.ndim - 2), (y, y.ndim - 1)):
            s.append(t.shape[d]), b.append(t.broadcast[d]), e.append(t.expanded[d])
    return [Out(x.dtype, tuple(s), tuple(b), tuple(e))]


def _linear_infer(a: dict) -> list[Out]:
    x, w, bias = tensor_arg(a["arg1"], "linear's arg1"), tensor_arg(a["arg2"], "linear's arg2"), a["bias"]
    if x.ndim < 1:
        raise InferError(f"linear: input must be at least 1-d, got {x.describe()}")
    if w.ndim < 2:
        raise InferError(f"linear: weight must be at least 2-d ([*, out_features, in_features]), got {w.describe()}")
    _check_k("linear", x, x.ndim - 1, w, w.ndim - 1)
    ts = [x, w]
    if bias is not None:
        bias = tensor_arg(bias, "linear's bias")
        if bias.ndim < 1:
            raise InferError(f"linear: bias must be at least 1-d, got {bias.describe()}")
        ts.append(bias)
    _same_dtype("linear", *ts)
    s, b, e = _dims(w, list(range(w.ndim - 2)))
    si, bi, ei = _dims(x, list(range(x.ndim - 1)))
    n = w.ndim - 2
    return [Out(x.dtype, tuple(s + si + [w.shape[n]]), tuple(b + bi + [w.broadcast[n]]),
                tuple(e + ei + [w.expanded[n]]))]


def _linear_run(a: dict, ctx: RunContext):
    x, w, bias = a["arg1"], a["arg2"], a["bias"]
    lead = w.ndim - 2  # leading weight dims: nvFuser's device dims, size 1
    if any(s != 1 for s in w.shape[:lead]):
        raise ValueError(f"linear: leading weight dims must be size 1 (nvFuser's device dims), got {list(w.shape)}")
    w2 = w.reshape(w.shape[lead:])
    b2 = None if bias is None else bias.reshape(bias.shape[-1:]) if bias.ndim > 1 else bias
    out = torch.nn.functional.linear(x, w2, b2)
    return out.reshape([1] * lead + list(out.shape))


register(OpDef("matmul", ("arg1", "arg2"), (), _matmul_infer, lambda a, ctx: torch.matmul(a["arg1"], a["arg2"])))
register(OpDef("linear", ("arg1", "arg2"), (("bias", None),), _linear_infer, _linear_run,
               doc="arg1 @ arg2.T + bias"))


# --------------------------------------------------------------------------- grouped_mm
_SCALED = (("scale1", None), ("scale2", None), ("alpha", None), ("bias", None), ("beta", None),
           ("dtype", DataType.BFloat16), ("output_block_scale_size", 0),
           ("output_block_scale_dtype", DataType.BFloat16), ("output_gamma", False))


def _grouped_mm_infer(a: dict) -> list[Out]:
    given = [k for k, default in _SCALED if a[k] is not default and a[k] != default]
    if given:
        raise InferError(f"grouped_mm: the scaled overload ({', '.join(given)}) is deliberately unsupported: its "
                         "block-scaled fp8/nvfp4 semantics are defined by CUDA kernels the reference cannot follow")
    m1, m2 = tensor_arg(a["mat1"], "grouped_mm's mat1"), tensor_arg(a["mat2"], "grouped_mm's mat2")
    offs = tensor_arg(a["offsets"], "grouped_mm's offsets")
    if offs.ndim != 1 or offs.dtype is not DataType.Int32:
        raise InferError(f"grouped_mm: offsets must be a 1-d Int32 tensor, got {offs.describe()}")
    _same_dtype("grouped_mm", m1, m2)
    ranks = (m1.ndim, m2.ndim)
    if ranks not in ((2, 2), (3, 2), (2, 3)):
        raise InferError(f"grouped_mm: expects ranks <2, 2>, <3, 2> or <2, 3>, got {m1.describe()} and {m2.describe()}")
    _check_k("grouped_mm", m1, m1.ndim - 1, m2, m2.ndim - 2, ("mat1", "mat2"))
    g = offs.shape[0]
    for t in (m1, m2):
        if t.ndim == 3 and -1 not in (g, t.shape[0]) and t.shape[0] != g:
            raise InferError(f"grouped_mm: {t.describe()} has {t.shape[0]} groups, offsets {offs.describe()} has {g}")
    m, n = (0, m1.ndim - 2)[m1.ndim == 3], m2.ndim - 1
    if ranks == (2, 2):
        s, b, e = [g, m1.shape[0], m2.shape[1]], [False, m1.broadcast[0], m2.broadcast[1]], [False] * 3
    else:
        s, b, e = [m1.shape[m], m2.shape[n]], [m1.broadcast[m], m2.broadcast[n]], [False] * 2
    return [Out(m1.dtype, tuple(s), tuple(b), tuple(e))]


def _grouped_mm_run(a: dict, ctx: RunContext):
    """nvFuser's fallback (GroupedMmaOp::evaluate): offsets are the groups' cumulative ends."""
    m1, m2, offs = a["mat1"], a["mat2"], [int(o) for o in a["offsets"].tolist()]
    sizes = [e - s for s, e in zip([0] + offs[:-1], offs)]
    if m1.ndim == 2 and m2.ndim == 2:  # [m, k] @ [k, n] -> [g, m, n], k split in groups
        return torch.stack([x @ y for x, y in zip(m1.split(sizes, -1), m2.split(sizes, 0))])
    if m1.ndim == 3:  # [g, m, k] @ [k, n] -> [m, n], n split in groups
        return torch.cat([x @ y for x, y in zip(m1.unbind(), m2.split(sizes, -1))], -1)
    return torch.cat([x @ y for x, y in zip(m1.split(sizes, 0), m2.unbind())], 0)  # [m, k] @ [g, k, n]


register(OpDef("grouped_mm", ("mat1", "mat2", "offsets"), _SCALED, _grouped_mm_infer, _grouped_mm_run,
               doc="matmul per group; offsets (Int32) are the groups' cumulative ends"))


# --------------------------------------------------------------------------- attention
def _dropout_on(p: Any) -> bool:
    """Whether a dropout_p argument may be nonzero (a fusion input counts as nonzero)."""
    if p is None:
        return False
    v = static(p)
    return v is None or float(v) != 0.0


def _optional_scalar(op: str, a: dict, *names: str) -> None:
    for k in names:
        if isinstance(a[k], Value) and a[k].is_tensor:
            raise InferError(f"{op}: {k} must be a scalar, got tensor {a[k].describe()}")


def _sdpfa_fwd_infer(a: dict) -> list[Out]:
    q, k, v = (tensor_arg(a[n], f"sdpfa_fwd's {n}") for n in ("query", "key", "value"))
    _same_dtype("sdpfa_fwd", q, k, v)
    if not q.ndim == k.ndim == v.ndim or q.ndim < 4:
        raise InferError(f"sdpfa_fwd: query, key and value must have one rank >= 4 ([N*, H, L, E]), got "
                         f"{q.describe()}, {k.describe()}, {v.describe()}")
    _check_k("sdpfa_fwd", q, q.ndim - 1, k, k.ndim - 1, same_broadcast=False)
    for name, want in (("bias", q.dtype), ("mask", DataType.Bool)):
        t = a[name]
        if t is not None:
            t = tensor_arg(t, f"sdpfa_fwd's {name}")
            if t.ndim != q.ndim or t.dtype is not want:
                raise InferError(f"sdpfa_fwd: {name} must be a {want.name} tensor of rank {q.ndim}, got {t.describe()}")
    _optional_scalar("sdpfa_fwd", a, "dropout_p", "is_causal", "scale")
    s, b, e = _batch("sdpfa_fwd", [q, k, v], [q.ndim - 2] * 3)
    n = q.ndim
    out = Out(q.dtype, (*s, q.shape[n - 2], v.shape[n - 1]), (*b, q.broadcast[n - 2], v.broadcast[n - 1]),
              (False,) * n)
    lse = Out(DataType.Float, (*s, q.shape[n - 2]), (*b, q.broadcast[n - 2]), (False,) * (n - 1))
    return [out, lse, Out(DataType.UInt64, (2,), (False,), (False,)), Out(DataType.UInt64, (), (), ())]


def _scores(q, k, bias, mask, is_causal, scale):
    """Attention scores in float32 with bias, mask and the causal (top-left) mask applied."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    s = (q.float() @ k.float().transpose(-2, -1)) * scale
    if bias is not None:
        s = s + bias.float()
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    if is_causal:
        keep = torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).tril()
        s = s.masked_fill(~keep, float("-inf"))
    return s


def _attention(q, k, v, a: dict):
    s = _scores(q, k, a.get("bias"), a.get("mask"), bool(a["is_causal"]), a["scale"])
    p = torch.softmax(s, -1)
    if a["dropout_p"]:
        p = torch.nn.functional.dropout(p, float(a["dropout_p"]))
    return p @ v.float(), torch.logsumexp(s, -1)


def _sdpfa_fwd_run(a: dict, ctx: RunContext):
    q, k, v = a["query"], a["key"], a["value"]
    out, lse = _attention(q, k, v, a)
    seed = torch.zeros(2, dtype=torch.uint64, device=q.device)  # nvFuser returns its Philox state here
    return out.to(q.dtype), lse, seed, torch.zeros((), dtype=torch.uint64, device=q.device)


def _sdpfa_bwd_infer(a: dict) -> list[Out]:
    names = ("grad_output", "query", "key", "value", "output")
    go, q, k, v, o = (tensor_arg(a[n], f"sdpfa_bwd's {n}") for n in names)
    _same_dtype("sdpfa_bwd", go, q, k, v, o)
    if len({t.ndim for t in (go, q, k, v, o)}) != 1 or q.ndim not in (4, 5):
        raise InferError("sdpfa_bwd: grad_output, query, key, value and output must all be 4-d (or 5-d), got "
                         + ", ".join(t.describe() for t in (go, q, k, v, o)))
    lse = tensor_arg(a["logsumexp"], "sdpfa_bwd's logsumexp")
    if lse.ndim != q.ndim - 1:
        raise InferError(f"sdpfa_bwd: logsumexp must have one dim fewer than query, got {lse.describe()}")
    for n in ("philox_seed", "philox_offset"):
        tensor_arg(a[n], f"sdpfa_bwd's {n}")
    _optional_scalar("sdpfa_bwd", a, "dropout_p", "is_causal", "scale")
    return [Out(t.dtype, t.shape, t.broadcast, t.expanded) for t in (q, k, v)]


def _sdpfa_bwd_run(a: dict, ctx: RunContext):
    q, k, v = (a[n].detach().float().requires_grad_() for n in ("query", "key", "value"))
    with torch.enable_grad():
        out, _ = _attention(q, k, v, a)
        gq, gk, gv = torch.autograd.grad(out, (q, k, v), a["grad_output"].float())
    return tuple(g.to(a[n].dtype) for g, n in zip((gq, gk, gv), ("query", "key", "value")))


register(OpDef("sdpfa_fwd", ("query", "key", "value"),
               (("bias", None), ("mask", None), ("dropout_p", None), ("is_causal", None), ("scale", None)),
               _sdpfa_fwd_infer, _sdpfa_fwd_run, literal_operands=False,
               random=lambda a: [_dropout_on(a["dropout_p"])] * 2 + [True, True],
               doc="(output, logsumexp, philox_seed, philox_offset); the last two are nvFuser's RNG state"))
register(OpDef("sdpfa_bwd", ("grad_output", "query", "key", "value", "output", "logsumexp"),
               (("dropout_p", REQUIRED), ("is_causal", REQUIRED), ("philox_seed", REQUIRED),
                ("philox_offset", REQUIRED), ("scale", REQUIRED)),
               _sdpfa_bwd_infer, _sdpfa_bwd_run, literal_operands=False,
               random=lambda a: [_dropout_on(a["dropout_p"])] * 3,
               doc="(grad_query, grad_key, grad_value)"))
