"""segkit_ex's qkv split + RoPE symbols, litgpt's layout before 0.5.5 (per query group: q_per_kv q heads, then
k, then v): forward and backward on segkit's qkv_split_rope_fwd / _bwd fusions, and the entry symbol
thunder_exec.recognize puts in the trace for ``qkv_split_rope`` calls (thunder_exec's, fusions.torch_models',
``route()``d ones). litgpt >= 0.5.5 splits qkv as (all q, all k, all v) and is claimed per q / k RoPE
(thunder_exec.rope).
"""

from __future__ import annotations

from thunder.core.proxies import TensorProxy
from thunder.core.transforms import get_grad, put_grad

from fusions import torch_models
from thunder_exec.base import CLAIM_MODE, dtype_name, segkit_ex, supported
from thunder_exec.calls import qkv_config, qkv_runner
from thunder_exec.decide.options import compile_options
from thunder_exec.route_verify import verify_route


def _qkv_fwd_meta(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, policy, check):
    B, T, _ = qkv.shape
    out = (B, n_head, T, head_size)
    return tuple(TensorProxy(like=qkv, shape=out) for _ in range(3))


def _qkv_fwd_impl(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, policy, check):
    return tuple(qkv_runner("qkv_split_rope_fwd", qkv, n_head, n_query_groups, head_size, rope_n_elem, policy,
                              check)([qkv, cos, sin]))


def _qkv_bwd_meta(dq, dk, dv, cos, sin, qkv, n_head, n_query_groups, head_size, rope_n_elem, policy, check):
    return TensorProxy(like=qkv)


def _qkv_bwd_impl(dq, dk, dv, cos, sin, qkv, n_head, n_query_groups, head_size, rope_n_elem, policy, check):
    return qkv_runner("qkv_split_rope_bwd", qkv, n_head, n_query_groups, head_size, rope_n_elem, policy,
                        check)([dq, dk, dv, cos, sin])[0]


qkv_fwd = segkit_ex.register_operator("segkit_qkv_split_rope_fwd", meta=_qkv_fwd_meta, fn=_qkv_fwd_impl)
qkv_bwd = segkit_ex.register_operator("segkit_qkv_split_rope_bwd", meta=_qkv_bwd_meta, fn=_qkv_bwd_impl)


def qkv_split_rope(qkv, cos, sin, n_head: int, n_query_groups: int, head_size: int, rope_n_elem: int):
    """qkv split + RoPE in litgpt's layout before 0.5.5 (per query group: q_per_kv q heads, then k, then v;
    fusions.torch_models.qkv_split_rope); routed to segkit under thunder.jit. litgpt >= 0.5.5 splits qkv as
    (all q, all k, all v) and is claimed per q / k RoPE without any call (thunder_exec.recognize)."""
    return torch_models.qkv_split_rope(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem)


def qkv_refusal(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem) -> str | None:
    """Why the qkv split + RoPE fusion cannot take these arguments (None when it can)."""
    try:
        qkv_config(qkv, n_head, n_query_groups, head_size, rope_n_elem)
    except ValueError as e:
        return str(e)
    if qkv.ndim != 3 or not supported(qkv.dtype):
        return f"qkv {qkv.ndim}-D {dtype_name(qkv.dtype)}"
    if not (cos.dtype == qkv.dtype == sin.dtype):
        return f"cos/sin {dtype_name(cos.dtype)} with qkv {dtype_name(qkv.dtype)}"
    if not tuple(cos.shape) == tuple(sin.shape) == (qkv.shape[1], rope_n_elem):
        return f"cos/sin of shape {tuple(cos.shape)}, the fusion takes (T, rope_n_elem) = {(qkv.shape[1], rope_n_elem)}"
    if qkv.shape[2] != (n_head + 2 * n_query_groups) * head_size:
        return f"qkv width {qkv.shape[2]} != (n_head + 2 n_query_groups) head_size"
    return None


def _qkv_checker(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, route=None) -> bool:
    return qkv_refusal(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem) is None


def _qkv_execution(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, route=None):
    args = (qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem)
    out = qkv_fwd(*args, *compile_options().symbol_args)
    return out if route is None else verify_route(route, out, args)


def _qkv_grad(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, route=None):
    options = compile_options().symbol_args
    args = (qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem)
    q, k, v = qkv_fwd(*args, *options)
    if route is not None:
        q, k, v = verify_route(route, (q, k, v), args)
    dq, dk, dv = get_grad(q), get_grad(k), get_grad(v)
    put_grad(qkv, qkv_bwd(dq, dk, dv, cos, sin, qkv, n_head, n_query_groups, head_size, rope_n_elem, *options))
    return q, k, v


def _qkv_meta(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, route=None):
    return _qkv_fwd_meta(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, None, False)


# Called only through thunder_exec.recognize, which checks qkv_refusal first and runs the function itself otherwise.
_qkv_entry_symbol = segkit_ex.register_operator("segkit_qkv_split_rope", meta=_qkv_meta, fn=qkv_split_rope)
segkit_ex.register_implementation(_qkv_entry_symbol, checker=_qkv_checker, execution_transform=_qkv_execution,
                                  grad_transform=_qkv_grad)


def qkv_split_rope_entry(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, route=None):
    """segkit's qkv split + RoPE for a recognized or routed function: the entry symbol in a trace, or, while a
    claim is checked (thunder_exec.claim_check, real tensors), the forward fusion on the reference interpreter."""
    if CLAIM_MODE.real:
        return _qkv_fwd_impl(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, "none", False)
    return _qkv_entry_symbol(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, route)
