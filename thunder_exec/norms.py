"""segkit_ex's norm symbols: ``ltorch.layer_norm`` / ``ltorch.rms_norm`` (torch.nn.LayerNorm, RMSNorm,
F.layer_norm, F.rms_norm) over the last dim, with or without weight / bias, bf16/fp16/fp32, and the
``segkit_rms_norm_entry`` symbol thunder_exec.recognize puts in the trace for litgpt's RMSNorm math (fp32 weights
with 16-bit x, Gemma's ``1 + weight``) and for ``route()``d functions.

Forward with autograd = one fusion returning y and the fp32 statistics; backward = the fused dx + dw (+ db)
fusion (fusions.layernorm_bwd / rmsnorm_bwd); without autograd (inference) = the forward fusion with y as its
only output (segkit_layer_norm / segkit_rms_norm). Each symbol is registered on segkit_ex beside its translator.
With ``segkit_fuse`` the same calls emit the fusible symbols on Thunder's nvFuser executor instead
(thunder_exec.fusible), each symbol call decided on its own.
"""

from __future__ import annotations

import math

import torch
from thunder.core import dtypes
from thunder.core.proxies import TensorProxy
from thunder.core.transforms import get_grad, put_grad
import thunder.torch as ltorch

from fusions.configs import NormConfig, unit_row_dims
from thunder_exec.base import CLAIM_MODE, compile_options, dtype_name, segkit_ex, supported, torch_dtype
from thunder_exec.fusible import chosen, declined, norm_config, param_meta, stats_meta
from thunder_exec.route_verify import verify_route
from fusions.runner import RUNNERS, SpecRunner, runner, unit_weight


def _norm_runner(spec_name: str, a: torch.Tensor, param_dtype: torch.dtype, eps: float, bias: bool, policy: str,
                 check: bool, outputs: tuple[int, ...] | None = None, round_normed: bool = False) -> SpecRunner:
    """Runners looked up by plain values (shape, dtype, ...): no config dataclass is built on the per-call path."""
    def make() -> SpecRunner:
        shape = runner_shape(tuple(a.shape))
        cfg = NormConfig("thunder", shape, a.dtype, float(eps), bias, None if param_dtype == a.dtype else param_dtype,
                         round_normed)
        return runner(spec_name, cfg, policy, check, outputs)

    return RUNNERS.get((spec_name, a.shape, a.dtype, param_dtype, eps, bias, policy, check, outputs, round_normed),
                       make)


def runner_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape segkit's norm fusion is defined at for x of ``shape``: x's own when it is 2-D or 3-D with no
    size-1 row dim (fusions.configs.unit_row_dims says why), else (rows, hidden)."""
    if len(shape) in (2, 3) and not unit_row_dims(shape):
        return shape
    return (math.prod(shape[:-1]), shape[-1])


def _shaped(t: torch.Tensor, shape) -> torch.Tensor:
    """``t`` viewed as ``shape``; no reshape call when it already has it (2-D and 3-D inputs, the common case)."""
    return t if t.shape == shape else t.reshape(shape)


def _weight(a: torch.Tensor, weight: torch.Tensor | None) -> torch.Tensor:
    return weight if weight is not None else unit_weight(a.shape[-1], a.dtype, a.device)


def _pdtype(a: torch.Tensor, weight: torch.Tensor | None) -> torch.dtype:
    return a.dtype if weight is None else weight.dtype


# --------------------------------------------------------------------------- layer norm
def _ln_fwd_meta(a, weight, bias, eps, policy, check):
    return TensorProxy(like=a), stats_meta(a), stats_meta(a)


def _ln_args(run: SpecRunner, a, weight, bias) -> list[torch.Tensor]:
    return [_shaped(a, run.cfg.shape), _weight(a, weight)] + ([bias] if bias is not None else [])


def _ln_fwd_impl(a, weight, bias, eps, policy, check):
    run = _norm_runner("layernorm_fwd", a, _pdtype(a, weight), eps, bias is not None, policy, check)
    y, mean, rstd = run(_ln_args(run, a, weight, bias))
    rows = a.shape[:-1]
    return _shaped(y, a.shape), _shaped(mean, rows), _shaped(rstd, rows)


def _ln_y_impl(a, weight, bias, eps, policy, check):
    run = _norm_runner("layernorm_fwd", a, _pdtype(a, weight), eps, bias is not None, policy, check, outputs=(0,))
    (y,) = run(_ln_args(run, a, weight, bias))
    return _shaped(y, a.shape)


def _ln_bwd_meta(g, a, mean, rstd, weight, eps, policy, check):
    return TensorProxy(like=a), param_meta(a, weight), param_meta(a, weight)


def _ln_bwd_impl(g, a, mean, rstd, weight, eps, policy, check):
    run = _norm_runner("layernorm_bwd", a, _pdtype(a, weight), eps, False, policy, check)
    shape = run.cfg.shape
    dx, dw, db = run.in_place([a, g, mean, rstd, _weight(a, weight)]) or run(
        [_shaped(a, shape), _shaped(g, shape), _shaped(mean, shape[:-1]), _shaped(rstd, shape[:-1]),
         _weight(a, weight)])
    return _shaped(dx, a.shape), dw, db


ln_fwd = segkit_ex.register_operator("segkit_layer_norm_fwd", meta=_ln_fwd_meta, fn=_ln_fwd_impl)
ln_bwd = segkit_ex.register_operator("segkit_layer_norm_bwd", meta=_ln_bwd_meta, fn=_ln_bwd_impl)
# Without autograd only y is needed: the fp32 statistics are not written.
ln_y = segkit_ex.register_operator("segkit_layer_norm", meta=lambda a, weight, bias, eps, policy, check:
                                   TensorProxy(like=a), fn=_ln_y_impl)


def norm_refusal(a, weight, *others, same_dtype: bool = True) -> str | None:
    """Why segkit's norm fusions cannot take these arguments (None when they can). ``same_dtype``: the weight
    must have x's dtype (torch's own norms promote otherwise); litgpt's RMSNorm casts back, so fp32 weights
    with 16-bit x are fine there."""
    if a.ndim < 2:
        return f"{a.ndim}-D input"
    if not supported(a.dtype):
        return f"input dtype {dtype_name(a.dtype)}"
    for name, t in (("weight", weight), *(("bias", o) for o in others)):
        if t is None:
            continue
        if tuple(t.shape) != (a.shape[-1],):
            return f"{name} of shape {tuple(t.shape)} for hidden {a.shape[-1]}"
        if not supported(t.dtype) or (same_dtype and t.dtype != a.dtype):
            return f"{name} dtype {dtype_name(t.dtype)} with input dtype {dtype_name(a.dtype)}"
        if weight is not None and t.dtype != weight.dtype:
            return f"{name} dtype {dtype_name(t.dtype)} with weight dtype {dtype_name(weight.dtype)}"
    return None


def _ln_checker(a, normalized_shape, weight=None, bias=None, eps=1e-5) -> bool:
    return (tuple(normalized_shape) == (a.shape[-1],) and norm_refusal(a, weight, bias) is None and not declined(
        compile_options(), (("layernorm_fwd", norm_config(a, weight, eps, bias is not None)),
                            ("layernorm_bwd", norm_config(a, weight, eps))), a))


def _rms_declined(a, weight, eps, round_normed=False) -> bool:
    """The RMSNorm call left to Thunder's own decomposition (thunder_exec.fusible.declined)."""
    cfg = norm_config(a, weight, eps, round_normed=round_normed)
    return declined(compile_options(), (("rmsnorm_fwd", cfg), ("rmsnorm_bwd", cfg)), a)


def _ln_execution(a, normalized_shape, weight=None, bias=None, eps=1e-5):
    options = compile_options()
    fused = chosen(options, "layernorm_fwd", norm_config(a, weight, eps, bias is not None), a)
    if fused is not None:
        return fused.ln_fwd(a, weight, bias, eps)[0]
    return ln_y(a, weight, bias, eps, *options.symbol_args)


def _ln_grad(a, normalized_shape, weight=None, bias=None, eps=1e-5):
    options = compile_options()
    fwd = chosen(options, "layernorm_fwd", norm_config(a, weight, eps, bias is not None), a)
    y, mean, rstd = (fwd.ln_fwd(a, weight, bias, eps) if fwd is not None
                     else ln_fwd(a, weight, bias, eps, *options.symbol_args))
    bwd = chosen(options, "layernorm_bwd", norm_config(a, weight, eps), a)
    dx, dw, db = (bwd.ln_bwd(get_grad(y), a, mean, rstd, weight, eps) if bwd is not None
                  else ln_bwd(get_grad(y), a, mean, rstd, weight, eps, *options.symbol_args))
    put_grad(a, dx)
    if weight is not None:
        put_grad(weight, dw)
    if bias is not None:
        put_grad(bias, db)
    return y


segkit_ex.register_implementation(ltorch.layer_norm, checker=_ln_checker, execution_transform=_ln_execution,
                                  grad_transform=_ln_grad)


# --------------------------------------------------------------------------- RMSNorm
# round_normed: Hugging Face's Llama-style rounding (fusions.rmsnorm_fwd), a constant of the trace; the compile
# options come last, as in every segkit symbol.
def _rms_fwd_meta(a, weight, eps, round_normed, policy, check):
    return TensorProxy(like=a), stats_meta(a)


def _rms_fwd_impl(a, weight, eps, round_normed, policy, check):
    run = _norm_runner("rmsnorm_fwd", a, weight.dtype, eps, False, policy, check, round_normed=round_normed)
    y, rstd = run([_shaped(a, run.cfg.shape), weight])
    return _shaped(y, a.shape), _shaped(rstd, a.shape[:-1])


def _rms_y_impl(a, weight, eps, round_normed, policy, check):
    run = _norm_runner("rmsnorm_fwd", a, weight.dtype, eps, False, policy, check, outputs=(0,),
                       round_normed=round_normed)
    (y,) = run([_shaped(a, run.cfg.shape), weight])
    return _shaped(y, a.shape)


def _rms_bwd_meta(g, a, rstd, weight, eps, round_normed, policy, check):
    return TensorProxy(like=a), TensorProxy(like=weight)


def _rms_bwd_impl(g, a, rstd, weight, eps, round_normed, policy, check):
    run = _norm_runner("rmsnorm_bwd", a, weight.dtype, eps, False, policy, check, round_normed=round_normed)
    shape = run.cfg.shape
    dx, dw = run.in_place([a, g, rstd, weight]) or run(
        [_shaped(a, shape), _shaped(g, shape), _shaped(rstd, shape[:-1]), weight])
    return _shaped(dx, a.shape), dw


rms_fwd = segkit_ex.register_operator("segkit_rms_norm_fwd", meta=_rms_fwd_meta, fn=_rms_fwd_impl)
rms_bwd = segkit_ex.register_operator("segkit_rms_norm_bwd", meta=_rms_bwd_meta, fn=_rms_bwd_impl)
rms_y = segkit_ex.register_operator("segkit_rms_norm", meta=lambda a, weight, eps, round_normed, policy, check:
                                    TensorProxy(like=a), fn=_rms_y_impl)


def _rms_eps(a, eps):
    """ltorch.rms_norm's default: the eps of the dtype it computes in (fp32 for half types)."""
    if eps is not None:
        return eps
    return torch.finfo(torch.float32 if a.dtype in (dtypes.bfloat16, dtypes.float16) else torch_dtype(a.dtype)).eps


def _rms_checker(a, normalized_shape, weight=None, eps=None) -> bool:
    return (tuple(normalized_shape) == (a.shape[-1],) and weight is not None and norm_refusal(a, weight) is None
            and not _rms_declined(a, weight, _rms_eps(a, eps)))


def _rms_execution(a, normalized_shape, weight=None, eps=None):
    return _rms_y(a, weight, _rms_eps(a, eps), False)


def _rms_y(a, w, eps, round_normed):
    """y of RMSNorm without autograd: the fusible forward's y, or the opaque y-only symbol."""
    options = compile_options()
    fused = chosen(options, "rmsnorm_fwd", norm_config(a, w, eps, round_normed=round_normed), a)
    if fused is not None:
        return fused.rms_fwd(a, w, eps, round_normed)[0]
    return rms_y(a, w, eps, round_normed, *options.symbol_args)


def _rms_grad_core(a, weight, eps, unit_offset=False, route=None, round_normed=False):
    """Forward + backward of RMSNorm with weight ``(1 + weight)`` when ``unit_offset`` (Gemma's), Hugging Face's
    rounding when ``round_normed``, y verified against a routed function on its first call when ``route`` names
    one."""
    options = compile_options()
    w = ltorch.add(weight, 1) if unit_offset else weight
    cfg = norm_config(a, w, eps, round_normed=round_normed)
    fwd = chosen(options, "rmsnorm_fwd", cfg, a)
    y, rstd = (fwd.rms_fwd(a, w, eps, round_normed) if fwd is not None
               else rms_fwd(a, w, eps, round_normed, *options.symbol_args))
    if route is not None:
        (y,) = verify_route(route, (y,), (a, weight, eps))
    bwd = chosen(options, "rmsnorm_bwd", cfg, a)
    dx, dw = (bwd.rms_bwd(get_grad(y), a, rstd, w, eps, round_normed) if bwd is not None
              else rms_bwd(get_grad(y), a, rstd, w, eps, round_normed, *options.symbol_args))
    put_grad(a, dx)
    put_grad(weight, dw)
    return y


def _rms_grad(a, normalized_shape, weight=None, eps=None):
    return _rms_grad_core(a, weight, _rms_eps(a, eps))


segkit_ex.register_implementation(ltorch.rms_norm, checker=_rms_checker, execution_transform=_rms_execution,
                                  grad_transform=_rms_grad)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """litgpt's hand-written RMSNorm (fp32 statistics, weight applied in fp32); routed to segkit under thunder.jit."""
    return _rms_decomposition(x, weight, eps)


def _rms_decomposition(x, weight, eps=1e-6, unit_offset=False, route=None, round_normed=False):
    """litgpt's RMSNorm math (Hugging Face's Llama-style rounding with ``round_normed``): what Thunder runs when
    segkit_ex does not claim the call (torch or proxies)."""
    dtype = x.dtype
    xf = x.float()
    normed = xf * torch.rsqrt(torch.mean(xf * xf, dim=-1, keepdim=True) + eps)
    w = (1 + weight) if unit_offset else weight
    if round_normed:
        return (w * normed.to(dtype)).to(dtype)
    return (normed * w.float()).to(dtype)


def _rms_entry_decomposition(x, weight, eps=1e-6, unit_offset=False, route=None, round_normed=False):
    xf = ltorch.to(x, dtypes.float32)
    normed = ltorch.mul(xf, ltorch.rsqrt(ltorch.add(ltorch.mean(ltorch.mul(xf, xf), -1, keepdim=True), eps)))
    w = ltorch.add(weight, 1) if unit_offset else weight
    if round_normed:
        return ltorch.to(ltorch.mul(w, ltorch.to(normed, x.dtype)), x.dtype)
    return ltorch.to(ltorch.mul(normed, ltorch.to(w, dtypes.float32)), x.dtype)


# One entry symbol for every RMSNorm recognized or routed (litgpt's module, Hugging Face's, a user's function):
# claimed by segkit_ex, or decomposed back into Thunder's ops when its checker refuses.
_rms_entry_symbol = segkit_ex.register_operator("segkit_rms_norm_entry", like=_rms_entry_decomposition,
                                                fn=_rms_decomposition)
segkit_ex.register_implementation(
    _rms_entry_symbol,
    checker=lambda x, weight, eps=1e-6, unit_offset=False, route=None, round_normed=False: norm_refusal(
        x, weight, same_dtype=False) is None and not _rms_declined(x, weight, eps, round_normed),
    execution_transform=lambda x, weight, eps=1e-6, unit_offset=False, route=None, round_normed=False: _rms_entry_y(
        x, weight, eps, unit_offset, route, round_normed),
    grad_transform=_rms_grad_core,
)


def _rms_entry_y(x, weight, eps, unit_offset, route, round_normed):
    y = _rms_y(x, ltorch.add(weight, 1) if unit_offset else weight, eps, round_normed)
    return y if route is None else verify_route(route, (y,), (x, weight, eps))[0]


def rms_norm_entry(x, weight, eps=1e-6, unit_offset=False, route=None, round_normed=False):
    """segkit's RMSNorm for a recognized or routed function: the entry symbol in a trace, or, while a claim is
    checked (thunder_exec.claim_check, real tensors), the forward fusion run on the reference interpreter."""
    if CLAIM_MODE.real:
        return _rms_y_impl(x, weight + 1 if unit_offset else weight, eps, round_normed, "none", False)
    return _rms_entry_symbol(x, weight, eps, unit_offset, route, round_normed)
