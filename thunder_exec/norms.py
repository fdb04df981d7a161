"""segkit_ex's norms, both forms of each operator side by side: ``ltorch.layer_norm`` / ``ltorch.rms_norm``
(torch.nn.LayerNorm, RMSNorm, F.layer_norm, F.rms_norm) over the last dim, with or without weight / bias,
bf16/fp16/fp32, and the ``segkit_rms_norm_entry`` symbol thunder_exec.recognize puts in the trace for litgpt's
RMSNorm math (fp32 weights with 16-bit x, Gemma's ``1 + weight``) and for ``route()``d functions.

Each operator is one block: its meta, the opaque symbol on segkit_ex (segkit's own fusion as a separate call; its
meta the fused one's plus the compile options, base.with_options), the fused operator for Thunder's nvFuser
regions (a translator that emits the fusion's body into the region: thunder_exec.nv_ops), then the checker and
the transforms that choose between them per call (thunder_exec.decide). Forward with autograd = y and the fp32
statistics; backward = the fused dx + dw (+ db) fusion (fusions.layernorm_bwd / rmsnorm_bwd), or with
``segkit_norm_saves="output"`` the one that reads y instead of x (fusions.*_bwd_from_output: opaque symbols only),
so x need not be kept for the backward; without autograd (inference) = the forward with y as its only output
(segkit_layer_norm / segkit_rms_norm). A call's configs are
built once (thunder_exec.calls.norm_calls) and passed down.
"""

from __future__ import annotations

import functools

import torch
from thunder.core import dtypes
from thunder.core.proxies import TensorProxy
from thunder.core.transforms import get_grad, put_grad
import thunder.torch as ltorch

from fusions import layernorm_bwd, layernorm_fwd, rmsnorm_bwd, rmsnorm_fwd
from fusions.configs import unit_row_dims
from fusions.runner import SpecRunner, unit_weight
import thunder_exec.nv_ops as nv_ops
from thunder_exec.base import CLAIM_MODE, dtype_name, segkit_ex, supported, torch_dtype, with_options
from thunder_exec.calls import norm_call, norm_calls, norm_runner
from thunder_exec.decide.choice import chosen, declined, reads_output
from thunder_exec.decide.options import compile_options
from thunder_exec.nv_ops import FusedOp
from thunder_exec.route_verify import verify_route


# --------------------------------------------------------------------------- shared
def stats_meta(a) -> TensorProxy:
    """mean / rstd: one fp32 value per row of ``a``."""
    return TensorProxy(like=a, shape=tuple(a.shape[:-1]), dtype=dtypes.float32)


def param_meta(a, weight) -> TensorProxy:
    """dw / db: like the weight; a norm without weight still gets one (of ones), its gradient dropped."""
    return TensorProxy(like=weight) if weight is not None else TensorProxy(like=a, shape=(a.shape[-1],))


def _shaped(t: torch.Tensor, shape) -> torch.Tensor:
    """``t`` viewed as ``shape``; no reshape call when it already has it (2-D and 3-D inputs, the common case)."""
    return t if t.shape == shape else t.reshape(shape)


def _weight(a: torch.Tensor, weight: torch.Tensor | None) -> torch.Tensor:
    return weight if weight is not None else unit_weight(a.shape[-1], a.dtype, a.device)


def _pdtype(a: torch.Tensor, weight: torch.Tensor | None) -> torch.dtype:
    return a.dtype if weight is None else weight.dtype


def _nv(x, lc_to_nv_map):
    """The region's tensor for proxy ``x`` (None stays None)."""
    return None if x is None else lc_to_nv_map[x]


def _squeezed(fd, tensors, dims: list[int]):
    return [fd.ops.squeeze(t, dims=dims) if dims else t for t in tensors]


def _unsqueezed(fd, t, a, dims: list[int]):
    """``t`` (x's shape less ``dims``) back at x's shape."""
    if not dims:
        return t
    kept = [d for d in range(a.ndim) if d not in dims]
    return fd.ops.broadcast_in_dim(t, shape=list(a.shape), broadcast_dims=kept)


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


# --------------------------------------------------------------------------- layer norm forward
def _ln_calls(a, weight, bias, eps):
    """The layer norm call's (forward, backward) Calls (the forward's config has the bias, the backward's not)."""
    return norm_calls("layernorm", a, weight, eps, bias is not None)


def _ln_fwd_meta(a, weight, bias, eps):
    return TensorProxy(like=a), stats_meta(a), stats_meta(a)


def _ln_y_meta(a, weight, bias, eps):
    return TensorProxy(like=a)


def _ln_args(run: SpecRunner, a, weight, bias) -> list[torch.Tensor]:
    return [_shaped(a, run.cfg.shape), _weight(a, weight)] + ([bias] if bias is not None else [])


def _ln_fwd_impl(a, weight, bias, eps, policy, check):
    run = norm_runner("layernorm_fwd", a, _pdtype(a, weight), eps, bias is not None, policy, check)
    y, mean, rstd = run(_ln_args(run, a, weight, bias))
    rows = a.shape[:-1]
    return _shaped(y, a.shape), _shaped(mean, rows), _shaped(rstd, rows)


def _ln_y_impl(a, weight, bias, eps, policy, check):
    run = norm_runner("layernorm_fwd", a, _pdtype(a, weight), eps, bias is not None, policy, check, outputs=(0,))
    (y,) = run(_ln_args(run, a, weight, bias))
    return _shaped(y, a.shape)


def ln_fwd_translator(a, weight, bias, eps, *, fd, lc_to_nv_map):
    nv = functools.partial(_nv, lc_to_nv_map=lc_to_nv_map)
    return layernorm_fwd.body(fd, nv(a), nv(weight), nv(bias), _ln_calls(a, weight, bias, eps)[0].cfg, a.ndim)


ln_fwd = segkit_ex.register_operator("segkit_layer_norm_fwd", meta=with_options(_ln_fwd_meta), fn=_ln_fwd_impl)
# Without autograd only y is needed: the fp32 statistics are not written.
ln_y = segkit_ex.register_operator("segkit_layer_norm", meta=with_options(_ln_y_meta), fn=_ln_y_impl)
nv_ops.add(FusedOp("ln_fwd", "segkit_nv_layer_norm_fwd", "layernorm_fwd", _ln_fwd_meta, ln_fwd_translator,
                   lambda a, weight, bias, eps: _ln_calls(a, weight, bias, eps)[0], "segkit_layer_norm_fwd",
                   "segkit_layer_norm"))


# --------------------------------------------------------------------------- layer norm backward
def _ln_bwd_meta(g, a, mean, rstd, weight, eps):
    return TensorProxy(like=a), param_meta(a, weight), param_meta(a, weight)


def _ln_bwd_impl(g, a, mean, rstd, weight, eps, policy, check):
    run = norm_runner("layernorm_bwd", a, _pdtype(a, weight), eps, False, policy, check)
    shape = run.cfg.shape
    dx, dw, db = run.in_place([a, g, mean, rstd, _weight(a, weight)]) or run(
        [_shaped(a, shape), _shaped(g, shape), _shaped(mean, shape[:-1]), _shaped(rstd, shape[:-1]),
         _weight(a, weight)])
    return _shaped(dx, a.shape), dw, db


def ln_bwd_translator(g, a, mean, rstd, weight, eps, *, fd, lc_to_nv_map):
    cfg = _ln_calls(a, weight, None, eps)[1].cfg
    nv = functools.partial(_nv, lc_to_nv_map=lc_to_nv_map)
    dims = unit_row_dims(a.shape)
    x, dy, m, r = _squeezed(fd, (nv(a), nv(g), nv(mean), nv(rstd)), dims)
    dx, dw, db = layernorm_bwd.body(fd, x, dy, m, r, nv(weight), cfg, a.ndim - len(dims))
    return _unsqueezed(fd, dx, a, dims), dw, db


ln_bwd = segkit_ex.register_operator("segkit_layer_norm_bwd", meta=with_options(_ln_bwd_meta), fn=_ln_bwd_impl)
nv_ops.add(FusedOp("ln_bwd", "segkit_nv_layer_norm_bwd", "layernorm_bwd", _ln_bwd_meta, ln_bwd_translator,
                   lambda g, a, mean, rstd, weight, eps: _ln_calls(a, weight, None, eps)[1], "segkit_layer_norm_bwd"))


# --------------------------------------------------------------------------- layer norm backward from its output
def _ln_bwd_out_meta(g, y, rstd, weight, bias, eps):
    return TensorProxy(like=y), param_meta(y, weight), param_meta(y, weight)


def _ln_bwd_out_impl(g, y, rstd, weight, bias, eps, policy, check):
    run = norm_runner("layernorm_bwd_from_output", y, _pdtype(y, weight), eps, bias is not None, policy, check)
    shape = run.cfg.shape
    dx, dw, db = run([_shaped(y, shape), _shaped(g, shape), _shaped(rstd, shape[:-1]), _weight(y, weight)]
                     + ([bias] if bias is not None else []))
    return _shaped(dx, y.shape), dw, db


ln_bwd_out = segkit_ex.register_operator("segkit_layer_norm_bwd_from_output", meta=with_options(_ln_bwd_out_meta),
                                         fn=_ln_bwd_out_impl)


# --------------------------------------------------------------------------- layer norm: claim and transforms
def _ln_checker(a, normalized_shape, weight=None, bias=None, eps=1e-5) -> bool:
    return (tuple(normalized_shape) == (a.shape[-1],) and norm_refusal(a, weight, bias) is None
            and not declined(compile_options(), _ln_calls(a, weight, bias, eps), a))


def _ln_execution(a, normalized_shape, weight=None, bias=None, eps=1e-5):
    options = compile_options()
    fused = chosen(options, _ln_calls(a, weight, bias, eps)[0], a)
    if fused is not None:
        return fused.ln_fwd(a, weight, bias, eps)[0]
    return ln_y(a, weight, bias, eps, *options.symbol_args)


def _ln_grad(a, normalized_shape, weight=None, bias=None, eps=1e-5):
    options = compile_options()
    fwd_call, bwd_call = _ln_calls(a, weight, bias, eps)
    fwd = chosen(options, fwd_call, a)
    y, mean, rstd = (fwd.ln_fwd(a, weight, bias, eps) if fwd is not None
                     else ln_fwd(a, weight, bias, eps, *options.symbol_args))
    if reads_output(options, bwd_call, norm_call("layernorm_bwd_from_output", a, weight, eps, bias is not None)):
        dx, dw, db = ln_bwd_out(get_grad(y), y, rstd, weight, bias, eps, *options.symbol_args)
    else:
        bwd = chosen(options, bwd_call, a)
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


# --------------------------------------------------------------------------- RMSNorm forward
# round_normed: Hugging Face's Llama-style rounding (fusions.rmsnorm_fwd), a constant of the trace; the compile
# options come last, as in every segkit symbol.
def _rms_calls(a, weight, eps, round_normed=False):
    """The RMSNorm call's (forward, backward) Calls (one config)."""
    return norm_calls("rmsnorm", a, weight, eps, round_normed=round_normed)


def _rms_fwd_meta(a, weight, eps, round_normed):
    return TensorProxy(like=a), stats_meta(a)


def _rms_y_meta(a, weight, eps, round_normed):
    return TensorProxy(like=a)


def _rms_fwd_impl(a, weight, eps, round_normed, policy, check):
    run = norm_runner("rmsnorm_fwd", a, weight.dtype, eps, False, policy, check, round_normed=round_normed)
    y, rstd = run([_shaped(a, run.cfg.shape), weight])
    return _shaped(y, a.shape), _shaped(rstd, a.shape[:-1])


def _rms_y_impl(a, weight, eps, round_normed, policy, check):
    run = norm_runner("rmsnorm_fwd", a, weight.dtype, eps, False, policy, check, outputs=(0,),
                      round_normed=round_normed)
    (y,) = run([_shaped(a, run.cfg.shape), weight])
    return _shaped(y, a.shape)


def rms_fwd_translator(a, weight, eps, round_normed, *, fd, lc_to_nv_map):
    cfg = _rms_calls(a, weight, eps, round_normed)[0].cfg
    return rmsnorm_fwd.body(fd, _nv(a, lc_to_nv_map), _nv(weight, lc_to_nv_map), cfg, a.ndim)


rms_fwd = segkit_ex.register_operator("segkit_rms_norm_fwd", meta=with_options(_rms_fwd_meta), fn=_rms_fwd_impl)
rms_y = segkit_ex.register_operator("segkit_rms_norm", meta=with_options(_rms_y_meta), fn=_rms_y_impl)
nv_ops.add(FusedOp("rms_fwd", "segkit_nv_rms_norm_fwd", "rmsnorm_fwd", _rms_fwd_meta, rms_fwd_translator,
                   lambda a, weight, eps, round_normed: _rms_calls(a, weight, eps, round_normed)[0],
                   "segkit_rms_norm_fwd", "segkit_rms_norm"))


# --------------------------------------------------------------------------- RMSNorm backward
def _rms_bwd_meta(g, a, rstd, weight, eps, round_normed):
    return TensorProxy(like=a), TensorProxy(like=weight)


def _rms_bwd_impl(g, a, rstd, weight, eps, round_normed, policy, check):
    run = norm_runner("rmsnorm_bwd", a, weight.dtype, eps, False, policy, check, round_normed=round_normed)
    shape = run.cfg.shape
    dx, dw = run.in_place([a, g, rstd, weight]) or run(
        [_shaped(a, shape), _shaped(g, shape), _shaped(rstd, shape[:-1]), weight])
    return _shaped(dx, a.shape), dw


def rms_bwd_translator(g, a, rstd, weight, eps, round_normed, *, fd, lc_to_nv_map):
    cfg = _rms_calls(a, weight, eps, round_normed)[1].cfg
    nv = functools.partial(_nv, lc_to_nv_map=lc_to_nv_map)
    dims = unit_row_dims(a.shape)
    x, dy, r = _squeezed(fd, (nv(a), nv(g), nv(rstd)), dims)
    dx, dw = rmsnorm_bwd.body(fd, x, dy, r, nv(weight), cfg, a.ndim - len(dims))
    return _unsqueezed(fd, dx, a, dims), dw


rms_bwd = segkit_ex.register_operator("segkit_rms_norm_bwd", meta=with_options(_rms_bwd_meta), fn=_rms_bwd_impl)
nv_ops.add(FusedOp("rms_bwd", "segkit_nv_rms_norm_bwd", "rmsnorm_bwd", _rms_bwd_meta, rms_bwd_translator,
                   lambda g, a, rstd, weight, eps, round_normed: _rms_calls(a, weight, eps, round_normed)[1],
                   "segkit_rms_norm_bwd"))


# --------------------------------------------------------------------------- RMSNorm backward from its output
def _rms_bwd_out_meta(g, y, rstd, weight, eps):
    return TensorProxy(like=y), TensorProxy(like=weight)


def _rms_bwd_out_impl(g, y, rstd, weight, eps, policy, check):
    run = norm_runner("rmsnorm_bwd_from_output", y, weight.dtype, eps, False, policy, check)
    shape = run.cfg.shape
    dx, dw = run([_shaped(y, shape), _shaped(g, shape), _shaped(rstd, shape[:-1]), weight])
    return _shaped(dx, y.shape), dw


rms_bwd_out = segkit_ex.register_operator("segkit_rms_norm_bwd_from_output", meta=with_options(_rms_bwd_out_meta),
                                          fn=_rms_bwd_out_impl)


# --------------------------------------------------------------------------- RMSNorm: claim and transforms
def _rms_eps(a, eps):
    """ltorch.rms_norm's default: the eps of the dtype it computes in (fp32 for half types)."""
    if eps is not None:
        return eps
    return torch.finfo(torch.float32 if a.dtype in (dtypes.bfloat16, dtypes.float16) else torch_dtype(a.dtype)).eps


def _rms_declined(a, weight, eps, round_normed=False) -> bool:
    """The RMSNorm call left to Thunder's own decomposition (thunder_exec.decide.choice.declined)."""
    return declined(compile_options(), _rms_calls(a, weight, eps, round_normed), a)


def _rms_checker(a, normalized_shape, weight=None, eps=None) -> bool:
    return (tuple(normalized_shape) == (a.shape[-1],) and weight is not None and norm_refusal(a, weight) is None
            and not _rms_declined(a, weight, _rms_eps(a, eps)))


def _rms_execution(a, normalized_shape, weight=None, eps=None):
    return _rms_y(a, weight, _rms_eps(a, eps), False)


def _rms_y(a, w, eps, round_normed):
    """y of RMSNorm without autograd: the fusible forward's y, or the opaque y-only symbol."""
    options = compile_options()
    fused = chosen(options, _rms_calls(a, w, eps, round_normed)[0], a)
    if fused is not None:
        return fused.rms_fwd(a, w, eps, round_normed)[0]
    return rms_y(a, w, eps, round_normed, *options.symbol_args)


def _rms_grad_core(a, weight, eps, unit_offset=False, route=None, round_normed=False):
    """Forward + backward of RMSNorm with weight ``(1 + weight)`` when ``unit_offset`` (Gemma's), Hugging Face's
    rounding when ``round_normed``, y verified against a routed function on its first call when ``route`` names
    one."""
    options = compile_options()
    w = ltorch.add(weight, 1) if unit_offset else weight
    fwd_call, bwd_call = _rms_calls(a, w, eps, round_normed)
    fwd = chosen(options, fwd_call, a)
    y, rstd = (fwd.rms_fwd(a, w, eps, round_normed) if fwd is not None
               else rms_fwd(a, w, eps, round_normed, *options.symbol_args))
    if route is not None:
        (y,) = verify_route(route, (y,), (a, weight, eps))
    # Hugging Face's rounding (round_normed) is not modelled by the backward from the output: it reads x
    out_call = None if round_normed else norm_call("rmsnorm_bwd_from_output", a, w, eps)
    if reads_output(options, bwd_call, out_call):
        dx, dw = rms_bwd_out(get_grad(y), y, rstd, w, eps, *options.symbol_args)
    else:
        bwd = chosen(options, bwd_call, a)
        dx, dw = (bwd.rms_bwd(get_grad(y), a, rstd, w, eps, round_normed) if bwd is not None
                  else rms_bwd(get_grad(y), a, rstd, w, eps, round_normed, *options.symbol_args))
    put_grad(a, dx)
    put_grad(weight, dw)
    return y


def _rms_grad(a, normalized_shape, weight=None, eps=None):
    return _rms_grad_core(a, weight, _rms_eps(a, eps))


segkit_ex.register_implementation(ltorch.rms_norm, checker=_rms_checker, execution_transform=_rms_execution,
                                  grad_transform=_rms_grad)


# --------------------------------------------------------------------------- RMSNorm entry (recognized, routed)
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
