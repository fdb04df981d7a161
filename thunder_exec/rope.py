"""segkit_ex's RoPE symbols: RoPE on one of q or k (litgpt's ``apply_rope``, Hugging Face's
``apply_rotary_pos_emb``), forward and backward on segkit's rope_fwd / rope_bwd fusions.

x is (B, ..., T, n) with the whole last dim rotated (a partial rotary passes its slice), cos / sin broadcast
against it with (T, n) last and a batch of 1 or B first; the result has x's dtype (litgpt's ``.to(x.dtype)``),
computed in fp32 whatever the tables' dtype.

Each operator is one block, as in thunder_exec.norms: its meta, the opaque symbol on segkit_ex (the meta plus the
compile options), the fused operator for Thunder's nvFuser regions (thunder_exec.nv_ops), then the checker and
the transforms that choose between them per call (thunder_exec.decide), from Calls built once
(thunder_exec.calls.rope_calls).
"""

from __future__ import annotations


import torch

from thunder.core.proxies import TensorProxy
from thunder.core import dtypes
from thunder.core.transforms import get_grad, put_grad, sum_to
import thunder.torch as ltorch

import thunder_exec.nv_ops as nv_ops
from fusions import rope_bwd as rope_bwd_fusion, rope_fwd as rope_fwd_fusion
from segkit.layout import dense_stride_order
from thunder_exec.base import CLAIM_MODE, dtype_name, segkit_ex, supported, torch_dtype, with_options
from thunder_exec.calls import rope_call, rope_calls, rope_runner, rope_shape
from thunder_exec.decide.choice import chosen, declined
from thunder_exec.decide.options import compile_options
from thunder_exec.nv_ops import FusedOp
from thunder_exec.route_verify import verify_route


def rope_refusal(x, cos, sin) -> str | None:
    """Why segkit's RoPE fusions cannot take these arguments (None when they can)."""
    if x.ndim < 3 or not supported(x.dtype) or x.shape[-1] % 2:
        return f"x {tuple(x.shape)} {dtype_name(x.dtype)} (want (B, ..., T, even n), 16/32-bit float)"
    if not supported(cos.dtype) or cos.dtype != sin.dtype or tuple(cos.shape) != tuple(sin.shape):
        return f"cos {tuple(cos.shape)} {dtype_name(cos.dtype)} and sin {tuple(sin.shape)} {dtype_name(sin.dtype)} differ"
    if cos.ndim > x.ndim:
        return f"cos {tuple(cos.shape)} has more dims than x {tuple(x.shape)}"
    shape = (1,) * (x.ndim - cos.ndim) + tuple(cos.shape)
    if shape[-2:] != tuple(x.shape[-2:]) or any(s != 1 for s in shape[1:-2]) or shape[0] not in (1, x.shape[0]):
        return f"cos {tuple(cos.shape)} does not broadcast as (1 or B, 1.., T, n) against x {tuple(x.shape)}"
    return None


def _run(spec_name: str, x, cos, sin, x_dtype, out_dtype, policy, check):
    """segkit's fusion on x (B, H, T, n); an x laid out in another order of its dims (dq from cuDNN's attention,
    which keeps (B, T, H, n) order) is read in place by a fusion defined with its layout, not copied first."""
    shape = rope_shape(x)
    xs = x.reshape(shape)
    order = None if xs.is_contiguous() else dense_stride_order(xs.shape, xs.stride())
    run = rope_runner(spec_name, x, cos, x_dtype, out_dtype, policy, check, order)
    cos_batch = run.cfg.cos_batch
    table = shape[2:] if cos_batch == 1 else (cos_batch, *shape[2:])
    (y,) = run([xs, cos.reshape(table), sin.reshape(table)])
    return y.reshape(x.shape)


# --------------------------------------------------------------------------- the two operators
def _canonical_table(fd, t, table, x_ndim: int):
    """The region's cos / sin as rope_fwd.define_tables defines them ((T, n) or (B, T, n)): the size-1 dims before
    T squeezed off (the table broadcasts as (1 or B, 1.., T, n) against x, ``rope_refusal``)."""
    lead = x_ndim - table.ndim  # dims the table lacks on the left
    dims = [d for d in range(table.ndim - 2) if not (d + lead == 0 and table.shape[d] != 1)]
    return fd.ops.squeeze(t, dims=dims) if dims else t


def _rope_tables(fd, x, cos, sin, lc_to_nv_map) -> tuple:
    return tuple(_canonical_table(fd, lc_to_nv_map[t], t, x.ndim) for t in (cos, sin))


# x_dtype / out_dtype: x's and y's dtypes (torch dtypes, constants of the trace); dy has y's, dx x's.
def _rope_fwd_meta(x, cos, sin, out_dtype):
    return TensorProxy(like=x, dtype=dtypes.to_dtype(out_dtype))


def rope_fwd_translator(x, cos, sin, out_dtype, *, fd, lc_to_nv_map):
    cfg = rope_call("rope_fwd", x, cos, x.dtype, out_dtype).cfg
    return rope_fwd_fusion.body(fd, lc_to_nv_map[x], *_rope_tables(fd, x, cos, sin, lc_to_nv_map), cfg,
                                tuple(x.shape))


rope_fwd = segkit_ex.register_operator(
    "segkit_rope_fwd", meta=with_options(_rope_fwd_meta),
    fn=lambda x, cos, sin, out_dtype, policy, check: _run("rope_fwd", x, cos, sin, x.dtype, out_dtype, policy, check))
nv_ops.add(FusedOp("rope_fwd", "segkit_nv_rope_fwd", "rope_fwd", _rope_fwd_meta, rope_fwd_translator,
                   lambda x, cos, sin, out_dtype: rope_call("rope_fwd", x, cos, x.dtype, out_dtype),
                   "segkit_rope_fwd"))


def _rope_bwd_meta(g, cos, sin, x_dtype):
    return TensorProxy(like=g, dtype=dtypes.to_dtype(x_dtype))


def rope_bwd_translator(g, cos, sin, x_dtype, *, fd, lc_to_nv_map):
    cfg = rope_call("rope_bwd", g, cos, x_dtype, g.dtype).cfg
    return rope_bwd_fusion.body(fd, lc_to_nv_map[g], *_rope_tables(fd, g, cos, sin, lc_to_nv_map), cfg,
                                tuple(g.shape))


rope_bwd = segkit_ex.register_operator(
    "segkit_rope_bwd", meta=with_options(_rope_bwd_meta),
    fn=lambda g, cos, sin, x_dtype, policy, check: _run("rope_bwd", g, cos, sin, x_dtype, g.dtype, policy, check))
nv_ops.add(FusedOp("rope_bwd", "segkit_nv_rope_bwd", "rope_bwd", _rope_bwd_meta, rope_bwd_translator,
                   lambda g, cos, sin, x_dtype: rope_call("rope_bwd", g, cos, x_dtype, g.dtype), "segkit_rope_bwd"))


# --------------------------------------------------------------------------- claim and transforms
def promoted(a, b):
    """torch's type promotion of two floating dtypes (16-bit with fp32 is fp32; bf16 with fp16 is fp32)."""
    a, b = torch_dtype(a), torch_dtype(b)
    if a == b:
        return a
    return a if a.itemsize > b.itemsize else b if b.itemsize > a.itemsize else torch.float32


def _out(x, out_dtype):
    return torch_dtype(x.dtype if out_dtype is None else out_dtype)


def _rope_decomposition(x, cos, sin, route=None, out_dtype=None):
    """litgpt's apply_rope on broadcast tables (HF's with ``out_dtype``, the promoted dtype): what Thunder runs
    when segkit_ex does not claim the call."""
    h = x.shape[-1] // 2
    x1 = ltorch.getitem(x, (..., slice(None, h)))
    x2 = ltorch.getitem(x, (..., slice(h, None)))
    rotated = ltorch.cat((ltorch.neg(x2), x1), -1)
    return ltorch.to(ltorch.add(ltorch.mul(x, cos), ltorch.mul(rotated, sin)), _out(x, out_dtype))


def _forward(options, x, cos, sin, out_dtype):
    """y: the fusible forward, or the opaque one."""
    out = _out(x, out_dtype)
    fused = chosen(options, rope_call("rope_fwd", x, cos, x.dtype, out), x)
    return fused.rope_fwd(x, cos, sin, out) if fused is not None else rope_fwd(x, cos, sin, out, *options.symbol_args)


def _execution(x, cos, sin, route=None, out_dtype=None):
    y = _forward(compile_options(), x, cos, sin, out_dtype)
    return y if route is None else verify_route(route, (y,), (x, cos, sin))[0]


def _table_grad(g, t, table):
    """d(loss)/d(table) of ``t * table`` (fp32, reduced over the broadcast dims, in the table's dtype): eager's
    gradient when the tables need one; Thunder removes it as dead code when they do not (the common case)."""
    return ltorch.to(sum_to(ltorch.mul(ltorch.to(g, dtypes.float32), ltorch.to(t, dtypes.float32)), table.shape),
                     table.dtype)


def _grad(x, cos, sin, route=None, out_dtype=None):
    options = compile_options()
    y = _forward(options, x, cos, sin, out_dtype)
    if route is not None:
        (y,) = verify_route(route, (y,), (x, cos, sin))
    g = get_grad(y)
    x_dtype = torch_dtype(x.dtype)
    bwd = chosen(options, rope_call("rope_bwd", g, cos, x_dtype, g.dtype), g)
    put_grad(x, bwd.rope_bwd(g, cos, sin, x_dtype) if bwd is not None
             else rope_bwd(g, cos, sin, x_dtype, *options.symbol_args))
    h = x.shape[-1] // 2
    rotated = ltorch.cat((ltorch.neg(ltorch.getitem(x, (..., slice(h, None)))), ltorch.getitem(x, (..., slice(None, h)))), -1)
    put_grad(cos, _table_grad(g, x, cos))
    put_grad(sin, _table_grad(g, rotated, sin))
    return y


_rope_entry_symbol = segkit_ex.register_operator("segkit_apply_rope", like=_rope_decomposition)
def _checker(x, cos, sin, route=None, out_dtype=None) -> bool:
    if rope_refusal(x, cos, sin) is not None:
        return False
    return not declined(compile_options(), rope_calls(x, cos, _out(x, out_dtype)), x)  # one config: the forward's


segkit_ex.register_implementation(_rope_entry_symbol, checker=_checker, execution_transform=_execution,
                                  grad_transform=_grad)



def apply_rope_entry(x, cos, sin, route=None, out_dtype=None):
    """segkit's RoPE for a recognized or routed function: the entry symbol in a trace, or, while a claim is
    checked (thunder_exec.claim_check, real tensors), the forward fusion run on the reference interpreter."""
    if CLAIM_MODE.real:
        return _run("rope_fwd", x, cos, sin, x.dtype, _out(x, out_dtype), "none", False)
    return _rope_entry_symbol(x, cos, sin, route, out_dtype)
