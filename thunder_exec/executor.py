"""segkit_ex: a Thunder executor that runs layer norm, RMSNorm and qkv split + RoPE on segkit's fusions.

Use it first in the executor list::

    thunder.jit(model, executors=[thunder_exec.segkit_ex, *thunder.get_default_executors()])

Order matters: for each symbol Thunder asks the executors in order and the
first one that can execute *or fuse* it owns its grad rule. nvFuser can fuse
the decomposition of layer_norm / rms_norm, so with segkit_ex placed after
nvFuser the fused backward here is never consulted (and, for the same reason,
segkit_ex cannot notice and warn from inside Thunder: use
``thunder_exec.executors()`` to get the list in the right order).

What it claims:

* ``ltorch.layer_norm`` / ``ltorch.rms_norm`` (torch.nn.LayerNorm, RMSNorm,
  F.layer_norm, F.rms_norm) over the last dim with a weight, bf16/fp16/fp32:
  forward with autograd = one fusion returning y and the fp32 statistics;
  backward = the fused dx + dw (+ db) fusion (fusions.layernorm_bwd /
  rmsnorm_bwd); without autograd (inference) = the forward fusion with y as
  its only output (segkit_layer_norm / segkit_rms_norm).
* ``thunder_exec.rms_norm(x, weight, eps)`` (litgpt's hand-written RMSNorm)
  and ``thunder_exec.qkv_split_rope(...)`` (litgpt's qkv split + RoPE) through
  lookasides: calls of these functions inside a jitted model become segkit
  symbols. ``thunder_exec.route(fn, to)`` adds the same lookaside for a
  user's own function of the same signature, without editing the model.

Compile options: ``segkit_bookend`` ("none" | "outputs" | "inputs+outputs",
default "outputs") runs the fusions through segkit's bookend pass;
``segkit_check=True`` validates each new input signature of segkit's fusions once
against the reference interpreter and refuses a wrong nvFuser result (warning,
reference result instead). For Thunder's own nvFusion regions use
``transforms=[thunder_exec.CheckNvFusions()]`` (thunder_exec.check_hook).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from thunder.core import dtypes
from thunder.core.compile_data import get_compile_option
from thunder.core.proxies import TensorProxy
from thunder.core.transforms import get_grad, put_grad
from thunder.extend import OperatorExecutor, register_executor
import thunder.torch as ltorch

from fusions import torch_models
from fusions.configs import NormConfig, RopeConfig
from thunder_exec.runtime import SpecRunner, runner

segkit_ex = OperatorExecutor("segkit", version="0.1")
register_executor(segkit_ex)

_DTYPES = (dtypes.bfloat16, dtypes.float16, dtypes.float32)


def _options() -> tuple[str, bool]:
    """(bookend policy, check) from the compile options; both travel as the last arguments of segkit's symbols."""
    policy = get_compile_option("segkit_bookend", "bookend policy for segkit's fusions: none | outputs | inputs+outputs")
    check = get_compile_option("segkit_check", "validate each new signature of segkit's fusions against the reference")
    return ("outputs" if policy is None else policy), bool(check)


def _norm_cfg(a: torch.Tensor, eps: float, bias: bool) -> NormConfig:
    shape = tuple(a.shape) if a.ndim in (2, 3) else (math.prod(a.shape[:-1]), a.shape[-1])
    return NormConfig("thunder", shape, a.dtype, float(eps), bias)


_RUNNERS: dict[tuple, SpecRunner] = {}


def _cached_runner(key: tuple, make: Callable[[], SpecRunner]) -> SpecRunner:
    """Runners looked up by plain values (shape, dtype, ...): no config dataclass is built on the per-call path."""
    found = _RUNNERS.get(key)
    if found is None:
        found = _RUNNERS[key] = make()
    return found


def _norm_runner(spec_name: str, a: torch.Tensor, eps: float, bias: bool, policy: str, check: bool,
                 outputs: tuple[int, ...] | None = None) -> SpecRunner:
    return _cached_runner((spec_name, a.shape, a.dtype, eps, bias, policy, check, outputs),
                          lambda: runner(spec_name, _norm_cfg(a, eps, bias), policy, check, outputs))


def _shaped(t: torch.Tensor, shape) -> torch.Tensor:
    """``t`` viewed as ``shape``; no reshape call when it already has it (2-D and 3-D inputs, the common case)."""
    return t if t.shape == shape else t.reshape(shape)


def _stats_meta(a: TensorProxy) -> TensorProxy:
    return TensorProxy(like=a, shape=tuple(a.shape[:-1]), dtype=dtypes.float32)


# --------------------------------------------------------------------------- layer norm
def _ln_fwd_meta(a, weight, bias, eps, policy, check):
    return TensorProxy(like=a), _stats_meta(a), _stats_meta(a)


def _ln_fwd_impl(a, weight, bias, eps, policy, check):
    run = _norm_runner("layernorm_fwd", a, eps, bias is not None, policy, check)
    y, mean, rstd = run([_shaped(a, run.cfg.shape), weight] + ([bias] if bias is not None else []))
    rows = a.shape[:-1]
    return _shaped(y, a.shape), _shaped(mean, rows), _shaped(rstd, rows)


def _ln_y_impl(a, weight, bias, eps, policy, check):
    run = _norm_runner("layernorm_fwd", a, eps, bias is not None, policy, check, outputs=(0,))
    (y,) = run([_shaped(a, run.cfg.shape), weight] + ([bias] if bias is not None else []))
    return _shaped(y, a.shape)


def _ln_bwd_meta(g, a, mean, rstd, weight, eps, policy, check):
    return TensorProxy(like=a), TensorProxy(like=weight), TensorProxy(like=weight)


def _ln_bwd_impl(g, a, mean, rstd, weight, eps, policy, check):
    run = _norm_runner("layernorm_bwd", a, eps, False, policy, check)
    shape = run.cfg.shape
    dx, dw, db = run([_shaped(a, shape), _shaped(g, shape), _shaped(mean, shape[:-1]), _shaped(rstd, shape[:-1]),
                      weight])
    return _shaped(dx, a.shape), dw, db


ln_fwd = segkit_ex.register_operator("segkit_layer_norm_fwd", meta=_ln_fwd_meta, fn=_ln_fwd_impl)
ln_bwd = segkit_ex.register_operator("segkit_layer_norm_bwd", meta=_ln_bwd_meta, fn=_ln_bwd_impl)
# Without autograd only y is needed. Not writing the fp32 statistics, nanoGPT size on an H200
# (benchmarks/results/h200-2026-11-21-rerun/norm_fwd_schedules.log): layer norm 6.86 -> 6.72 us, RMSNorm 5.82 -> 5.22.
ln_y = segkit_ex.register_operator("segkit_layer_norm", meta=lambda a, weight, bias, eps, policy, check:
                                   TensorProxy(like=a), fn=_ln_y_impl)


def _supported(a, weight, *others) -> bool:
    return (a.ndim >= 2 and a.dtype in _DTYPES and weight is not None and tuple(weight.shape) == (a.shape[-1],)
            and weight.dtype == a.dtype and all(o is None or (o.dtype == a.dtype and o.shape == weight.shape) for o in others))


def _ln_checker(a, normalized_shape, weight=None, bias=None, eps=1e-5) -> bool:
    return tuple(normalized_shape) == (a.shape[-1],) and _supported(a, weight, bias)


def _ln_execution(a, normalized_shape, weight=None, bias=None, eps=1e-5):
    return ln_y(a, weight, bias, eps, *_options())


def _ln_grad(a, normalized_shape, weight=None, bias=None, eps=1e-5):
    options = _options()
    y, mean, rstd = ln_fwd(a, weight, bias, eps, *options)
    dx, dw, db = ln_bwd(get_grad(y), a, mean, rstd, weight, eps, *options)
    put_grad(a, dx)
    put_grad(weight, dw)
    if bias is not None:
        put_grad(bias, db)
    return y


segkit_ex.register_implementation(ltorch.layer_norm, checker=_ln_checker, execution_transform=_ln_execution,
                                  grad_transform=_ln_grad)


# --------------------------------------------------------------------------- RMSNorm
def _rms_fwd_meta(a, weight, eps, policy, check):
    return TensorProxy(like=a), _stats_meta(a)


def _rms_fwd_impl(a, weight, eps, policy, check):
    run = _norm_runner("rmsnorm_fwd", a, eps, False, policy, check)
    y, rstd = run([_shaped(a, run.cfg.shape), weight])
    return _shaped(y, a.shape), _shaped(rstd, a.shape[:-1])


def _rms_y_impl(a, weight, eps, policy, check):
    run = _norm_runner("rmsnorm_fwd", a, eps, False, policy, check, outputs=(0,))
    (y,) = run([_shaped(a, run.cfg.shape), weight])
    return _shaped(y, a.shape)


def _rms_bwd_meta(g, a, rstd, weight, eps, policy, check):
    return TensorProxy(like=a), TensorProxy(like=weight)


def _rms_bwd_impl(g, a, rstd, weight, eps, policy, check):
    run = _norm_runner("rmsnorm_bwd", a, eps, False, policy, check)
    shape = run.cfg.shape
    dx, dw = run([_shaped(a, shape), _shaped(g, shape), _shaped(rstd, shape[:-1]), weight])
    return _shaped(dx, a.shape), dw


rms_fwd = segkit_ex.register_operator("segkit_rms_norm_fwd", meta=_rms_fwd_meta, fn=_rms_fwd_impl)
rms_bwd = segkit_ex.register_operator("segkit_rms_norm_bwd", meta=_rms_bwd_meta, fn=_rms_bwd_impl)
rms_y = segkit_ex.register_operator("segkit_rms_norm", meta=lambda a, weight, eps, policy, check: TensorProxy(like=a),
                                    fn=_rms_y_impl)


def _rms_eps(a, eps):
    """ltorch.rms_norm's default: the eps of the dtype it computes in (fp32 for half types)."""
    if eps is not None:
        return eps
    return torch.finfo(torch.float32 if a.dtype in (dtypes.bfloat16, dtypes.float16) else dtypes.to_torch_dtype(a.dtype)).eps


def _rms_checker(a, normalized_shape, weight=None, eps=None) -> bool:
    return tuple(normalized_shape) == (a.shape[-1],) and _supported(a, weight)


def _rms_execution(a, normalized_shape, weight=None, eps=None):
    return rms_y(a, weight, _rms_eps(a, eps), *_options())


def _rms_grad_core(a, weight, eps):
    options = _options()
    y, rstd = rms_fwd(a, weight, eps, *options)
    dx, dw = rms_bwd(get_grad(y), a, rstd, weight, eps, *options)
    put_grad(a, dx)
    put_grad(weight, dw)
    return y


def _rms_grad(a, normalized_shape, weight=None, eps=None):
    return _rms_grad_core(a, weight, _rms_eps(a, eps))


segkit_ex.register_implementation(ltorch.rms_norm, checker=_rms_checker, execution_transform=_rms_execution,
                                  grad_transform=_rms_grad)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """litgpt's hand-written RMSNorm (fp32 statistics, weight applied in fp32); routed to segkit under thunder.jit."""
    dtype = x.dtype
    xf = x.float()
    normed = xf * torch.rsqrt(torch.mean(xf * xf, dim=-1, keepdim=True) + eps)
    return (normed * weight.float()).to(dtype)


def _lit_rms_meta(x, weight, eps=1e-6):
    return TensorProxy(like=x)


lit_rms_norm = segkit_ex.register_operator("segkit_litgpt_rms_norm", meta=_lit_rms_meta, fn=rms_norm, replaces=rms_norm)
segkit_ex.register_implementation(
    lit_rms_norm,
    checker=lambda x, weight, eps=1e-6: _supported(x, weight),
    execution_transform=lambda x, weight, eps=1e-6: rms_y(x, weight, eps, *_options()),
    grad_transform=lambda x, weight, eps=1e-6: _rms_grad_core(x, weight, eps),
)


# --------------------------------------------------------------------------- qkv split + RoPE
def _rope_cfg(qkv, n_head, n_query_groups, head_size, rope_n_elem) -> RopeConfig:
    B, T, _ = qkv.shape
    return RopeConfig("thunder", B, n_head * head_size, n_head, n_query_groups, head_size, rope_n_elem, T,
                      dtypes.to_torch_dtype(qkv.dtype) if not isinstance(qkv.dtype, torch.dtype) else qkv.dtype)


def _rope_runner(spec_name, qkv, n_head, n_query_groups, head_size, rope_n_elem, policy, check) -> SpecRunner:
    return _cached_runner(
        (spec_name, qkv.shape, qkv.dtype, n_head, n_query_groups, head_size, rope_n_elem, policy, check),
        lambda: runner(spec_name, _rope_cfg(qkv, n_head, n_query_groups, head_size, rope_n_elem), policy, check))


def _qkv_fwd_meta(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, policy, check):
    B, T, _ = qkv.shape
    out = (B, n_head, T, head_size)
    return tuple(TensorProxy(like=qkv, shape=out) for _ in range(3))


def _qkv_fwd_impl(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, policy, check):
    return tuple(_rope_runner("qkv_split_rope_fwd", qkv, n_head, n_query_groups, head_size, rope_n_elem, policy,
                              check)([qkv, cos, sin]))


def _qkv_bwd_meta(dq, dk, dv, cos, sin, qkv, n_head, n_query_groups, head_size, rope_n_elem, policy, check):
    return TensorProxy(like=qkv)


def _qkv_bwd_impl(dq, dk, dv, cos, sin, qkv, n_head, n_query_groups, head_size, rope_n_elem, policy, check):
    return _rope_runner("qkv_split_rope_bwd", qkv, n_head, n_query_groups, head_size, rope_n_elem, policy,
                        check)([dq, dk, dv, cos, sin])[0]


qkv_fwd = segkit_ex.register_operator("segkit_qkv_split_rope_fwd", meta=_qkv_fwd_meta, fn=_qkv_fwd_impl)
qkv_bwd = segkit_ex.register_operator("segkit_qkv_split_rope_bwd", meta=_qkv_bwd_meta, fn=_qkv_bwd_impl)


def qkv_split_rope(qkv, cos, sin, n_head: int, n_query_groups: int, head_size: int, rope_n_elem: int):
    """litgpt's qkv split + RoPE (fusions.torch_models.qkv_split_rope); routed to segkit under thunder.jit."""
    return torch_models.qkv_split_rope(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem)


def _qkv_meta(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem):
    return _qkv_fwd_meta(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, None, False)


def _qkv_checker(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem) -> bool:
    try:
        _rope_cfg(qkv, n_head, n_query_groups, head_size, rope_n_elem)
    except ValueError:
        return False
    T = qkv.shape[1]
    return (qkv.ndim == 3 and qkv.dtype in _DTYPES and cos.dtype == qkv.dtype == sin.dtype
            and tuple(cos.shape) == tuple(sin.shape) == (T, rope_n_elem)
            and qkv.shape[2] == (n_head + 2 * n_query_groups) * head_size)


def _qkv_grad(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem):
    options = _options()
    q, k, v = qkv_fwd(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, *options)
    dq, dk, dv = get_grad(q), get_grad(k), get_grad(v)
    put_grad(qkv, qkv_bwd(dq, dk, dv, cos, sin, qkv, n_head, n_query_groups, head_size, rope_n_elem, *options))
    return q, k, v


qkv_split_rope_sym = segkit_ex.register_operator(
    "segkit_qkv_split_rope", meta=_qkv_meta, fn=qkv_split_rope,
    replaces=(qkv_split_rope, torch_models.qkv_split_rope))
segkit_ex.register_implementation(
    qkv_split_rope_sym, checker=_qkv_checker,
    execution_transform=lambda *a: qkv_fwd(*a, *_options()),
    grad_transform=_qkv_grad,
)

_ROUTES = {"rms_norm": lit_rms_norm, "qkv_split_rope": qkv_split_rope_sym}


def route(fn: Callable, to: str) -> None:
    """Make calls of the user's ``fn`` inside thunder.jit run as segkit's ``to`` ("rms_norm" or "qkv_split_rope").

    ``fn`` must take the same arguments as thunder_exec's function of that name; no model edits needed.
    """
    if to not in _ROUTES:
        raise ValueError(f"route(fn, to): to must be one of {sorted(_ROUTES)}, got {to!r}")
    segkit_ex._lookasides[fn] = _ROUTES[to]
