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
  F.layer_norm, F.rms_norm) over the last dim, with or without weight / bias,
  bf16/fp16/fp32: forward with autograd = one fusion returning y and the fp32
  statistics; backward = the fused dx + dw (+ db) fusion (fusions.layernorm_bwd /
  rmsnorm_bwd); without autograd (inference) = the forward fusion with y as
  its only output (segkit_layer_norm / segkit_rms_norm).
* ``segkit_rms_norm_entry`` (litgpt's RMSNorm math, fp32 weights with 16-bit x,
  Gemma's ``1 + weight``), RoPE (thunder_exec.rope) and qkv split + RoPE
  (litgpt's layout before 0.5.5): entry symbols that thunder_exec.recognize puts
  in the trace for the libraries' own functions and for ``route()``d ones, after
  checking on the proxies that segkit can run the call (Thunder's path otherwise).

Compile options: ``segkit_bookend`` ("none" | "outputs" | "inputs+outputs",
default "outputs") runs the fusions through segkit's bookend pass;
``segkit_check=True`` validates each new input signature of segkit's fusions once
against the reference interpreter and refuses a wrong nvFuser result (warning,
reference result instead). For Thunder's own nvFusion regions use
``transforms=[thunder_exec.CheckNvFusions()]`` (thunder_exec.check_hook).
"""

from __future__ import annotations

import math
import warnings

import torch
from thunder.core import dtypes
from thunder.core.compile_data import get_compile_data, get_compile_option
from thunder.core.proxies import TensorProxy
from thunder.core.transforms import get_grad, put_grad
from thunder.extend import FusionExecutor, OperatorExecutor, register_executor
import thunder.torch as ltorch

from fusions import torch_models
from fusions.configs import NormConfig, RopeConfig
from fusions.runner import RUNNERS, SpecRunner, runner, unit_weight

segkit_ex = OperatorExecutor("segkit", version="0.2")
register_executor(segkit_ex)

_DTYPES = (dtypes.bfloat16, dtypes.float16, dtypes.float32)


_WARNED: set[tuple[str, ...]] = set()


def warn_if_shadowed(executors) -> None:
    """Warn (once per executor list) when a fusion executor comes before segkit_ex: the first executor that can
    run or fuse a symbol owns its grad rule, so segkit's fused backward would never run."""
    executors = list(executors or ())
    if segkit_ex not in executors:
        return
    before = [e for e in executors[:executors.index(segkit_ex)] if isinstance(e, FusionExecutor)]
    names = tuple(str(e.name) for e in executors)
    if before and names not in _WARNED:
        _WARNED.add(names)
        warnings.warn(f"segkit_ex comes after {', '.join(str(e.name) for e in before)} in the executors list "
                      f"{list(names)}: they take the norms first and segkit's fused backward is never used; "
                      "put segkit_ex first (thunder_exec.executors())", stacklevel=3)


def _options() -> tuple[str, bool]:
    """(bookend policy, check) from the compile options; both travel as the last arguments of segkit's symbols."""
    cd = get_compile_data()
    if cd is not None:
        warn_if_shadowed(cd.executors_list)
    policy = get_compile_option("segkit_bookend", "bookend policy for segkit's fusions: none | outputs | inputs+outputs")
    check = get_compile_option("segkit_check", "validate each new signature of segkit's fusions against the reference")
    return ("outputs" if policy is None else policy), bool(check)


def torch_dtype(d) -> torch.dtype:
    return d if isinstance(d, torch.dtype) else dtypes.to_torch_dtype(d)


def dtype_name(d) -> str:
    return str(torch_dtype(d)).removeprefix("torch.")


def _norm_runner(spec_name: str, a: torch.Tensor, param_dtype: torch.dtype, eps: float, bias: bool, policy: str,
                 check: bool, outputs: tuple[int, ...] | None = None) -> SpecRunner:
    """Runners looked up by plain values (shape, dtype, ...): no config dataclass is built on the per-call path."""
    def make() -> SpecRunner:
        shape = tuple(a.shape) if a.ndim in (2, 3) else (math.prod(a.shape[:-1]), a.shape[-1])
        cfg = NormConfig("thunder", shape, a.dtype, float(eps), bias, None if param_dtype == a.dtype else param_dtype)
        return runner(spec_name, cfg, policy, check, outputs)

    return RUNNERS.get((spec_name, a.shape, a.dtype, param_dtype, eps, bias, policy, check, outputs), make)


def _shaped(t: torch.Tensor, shape) -> torch.Tensor:
    """``t`` viewed as ``shape``; no reshape call when it already has it (2-D and 3-D inputs, the common case)."""
    return t if t.shape == shape else t.reshape(shape)


def _stats_meta(a: TensorProxy) -> TensorProxy:
    return TensorProxy(like=a, shape=tuple(a.shape[:-1]), dtype=dtypes.float32)


def _param_meta(a: TensorProxy, weight: TensorProxy | None) -> TensorProxy:
    """dw / db: like the weight; a norm without weight still gets one (of ones), its gradient dropped."""
    return TensorProxy(like=weight) if weight is not None else TensorProxy(like=a, shape=(a.shape[-1],))


def _weight(a: torch.Tensor, weight: torch.Tensor | None) -> torch.Tensor:
    return weight if weight is not None else unit_weight(a.shape[-1], a.dtype, a.device)


def _pdtype(a: torch.Tensor, weight: torch.Tensor | None) -> torch.dtype:
    return a.dtype if weight is None else weight.dtype


# --------------------------------------------------------------------------- layer norm
def _ln_fwd_meta(a, weight, bias, eps, policy, check):
    return TensorProxy(like=a), _stats_meta(a), _stats_meta(a)


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
    return TensorProxy(like=a), _param_meta(a, weight), _param_meta(a, weight)


def _ln_bwd_impl(g, a, mean, rstd, weight, eps, policy, check):
    run = _norm_runner("layernorm_bwd", a, _pdtype(a, weight), eps, False, policy, check)
    shape = run.cfg.shape
    dx, dw, db = run([_shaped(a, shape), _shaped(g, shape), _shaped(mean, shape[:-1]), _shaped(rstd, shape[:-1]),
                      _weight(a, weight)])
    return _shaped(dx, a.shape), dw, db


ln_fwd = segkit_ex.register_operator("segkit_layer_norm_fwd", meta=_ln_fwd_meta, fn=_ln_fwd_impl)
ln_bwd = segkit_ex.register_operator("segkit_layer_norm_bwd", meta=_ln_bwd_meta, fn=_ln_bwd_impl)
# Without autograd only y is needed. Not writing the fp32 statistics, nanoGPT size on an H200
# (benchmarks/results/h200-2026-11-21-rerun/norm_fwd_schedules.log): layer norm 6.86 -> 6.72 us, RMSNorm 5.82 -> 5.22.
ln_y = segkit_ex.register_operator("segkit_layer_norm", meta=lambda a, weight, bias, eps, policy, check:
                                   TensorProxy(like=a), fn=_ln_y_impl)


def norm_refusal(a, weight, *others, same_dtype: bool = True) -> str | None:
    """Why segkit's norm fusions cannot take these arguments (None when they can). ``same_dtype``: the weight
    must have x's dtype (torch's own norms promote otherwise); litgpt's RMSNorm casts back, so fp32 weights
    with 16-bit x are fine there."""
    if a.ndim < 2:
        return f"{a.ndim}-D input"
    if a.dtype not in _DTYPES:
        return f"input dtype {dtype_name(a.dtype)}"
    for name, t in (("weight", weight), *(("bias", o) for o in others)):
        if t is None:
            continue
        if tuple(t.shape) != (a.shape[-1],):
            return f"{name} of shape {tuple(t.shape)} for hidden {a.shape[-1]}"
        if t.dtype not in _DTYPES or (same_dtype and t.dtype != a.dtype):
            return f"{name} dtype {dtype_name(t.dtype)} with input dtype {dtype_name(a.dtype)}"
        if weight is not None and t.dtype != weight.dtype:
            return f"{name} dtype {dtype_name(t.dtype)} with weight dtype {dtype_name(weight.dtype)}"
    return None


def _ln_checker(a, normalized_shape, weight=None, bias=None, eps=1e-5) -> bool:
    return tuple(normalized_shape) == (a.shape[-1],) and norm_refusal(a, weight, bias) is None


def _ln_execution(a, normalized_shape, weight=None, bias=None, eps=1e-5):
    return ln_y(a, weight, bias, eps, *_options())


def _ln_grad(a, normalized_shape, weight=None, bias=None, eps=1e-5):
    options = _options()
    y, mean, rstd = ln_fwd(a, weight, bias, eps, *options)
    dx, dw, db = ln_bwd(get_grad(y), a, mean, rstd, weight, eps, *options)
    put_grad(a, dx)
    if weight is not None:
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
    run = _norm_runner("rmsnorm_fwd", a, weight.dtype, eps, False, policy, check)
    y, rstd = run([_shaped(a, run.cfg.shape), weight])
    return _shaped(y, a.shape), _shaped(rstd, a.shape[:-1])


def _rms_y_impl(a, weight, eps, policy, check):
    run = _norm_runner("rmsnorm_fwd", a, weight.dtype, eps, False, policy, check, outputs=(0,))
    (y,) = run([_shaped(a, run.cfg.shape), weight])
    return _shaped(y, a.shape)


def _rms_bwd_meta(g, a, rstd, weight, eps, policy, check):
    return TensorProxy(like=a), TensorProxy(like=weight)


def _rms_bwd_impl(g, a, rstd, weight, eps, policy, check):
    run = _norm_runner("rmsnorm_bwd", a, weight.dtype, eps, False, policy, check)
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
    return torch.finfo(torch.float32 if a.dtype in (dtypes.bfloat16, dtypes.float16) else torch_dtype(a.dtype)).eps


def _rms_checker(a, normalized_shape, weight=None, eps=None) -> bool:
    return tuple(normalized_shape) == (a.shape[-1],) and weight is not None and norm_refusal(a, weight) is None


def _rms_execution(a, normalized_shape, weight=None, eps=None):
    return rms_y(a, weight, _rms_eps(a, eps), *_options())


def _rms_grad_core(a, weight, eps, unit_offset=False, route=None):
    """Forward + backward of RMSNorm with weight ``(1 + weight)`` when ``unit_offset`` (Gemma's), y verified
    against a routed function on its first call when ``route`` names one."""
    options = _options()
    w = ltorch.add(weight, 1) if unit_offset else weight
    y, rstd = rms_fwd(a, w, eps, *options)
    if route is not None:
        (y,) = verify_route(route, (y,), (a, weight, eps))
    dx, dw = rms_bwd(get_grad(y), a, rstd, w, eps, *options)
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


def _rms_decomposition(x, weight, eps=1e-6, unit_offset=False, route=None):
    """litgpt's RMSNorm math: what Thunder runs when segkit_ex does not claim the call (torch or proxies)."""
    dtype = x.dtype
    xf = x.float()
    normed = xf * torch.rsqrt(torch.mean(xf * xf, dim=-1, keepdim=True) + eps)
    w = (1 + weight) if unit_offset else weight
    return (normed * w.float()).to(dtype)


def _rms_entry_decomposition(x, weight, eps=1e-6, unit_offset=False, route=None):
    xf = ltorch.to(x, dtypes.float32)
    normed = ltorch.mul(xf, ltorch.rsqrt(ltorch.add(ltorch.mean(ltorch.mul(xf, xf), -1, keepdim=True), eps)))
    w = ltorch.add(weight, 1) if unit_offset else weight
    return ltorch.to(ltorch.mul(normed, ltorch.to(w, dtypes.float32)), x.dtype)


# One entry symbol for every RMSNorm recognized or routed (litgpt's module, Hugging Face's, a user's function):
# claimed by segkit_ex, or decomposed back into Thunder's ops when its checker refuses.
rms_norm_entry = segkit_ex.register_operator("segkit_rms_norm_entry", like=_rms_entry_decomposition,
                                             fn=_rms_decomposition)
segkit_ex.register_implementation(
    rms_norm_entry,
    checker=lambda x, weight, eps=1e-6, unit_offset=False, route=None: norm_refusal(x, weight, same_dtype=False) is None,
    execution_transform=lambda x, weight, eps=1e-6, unit_offset=False, route=None: _rms_entry_y(x, weight, eps,
                                                                                                 unit_offset, route),
    grad_transform=_rms_grad_core,
)


def _rms_entry_y(x, weight, eps, unit_offset, route):
    y = rms_y(x, ltorch.add(weight, 1) if unit_offset else weight, eps, *_options())
    return y if route is None else verify_route(route, (y,), (x, weight, eps))[0]


# --------------------------------------------------------------------------- routes
def _verify_meta(route, outputs, inputs):
    return tuple(TensorProxy(like=o) for o in outputs)


def _verify_impl(route, outputs, inputs):
    from thunder_exec.routes import verify

    verify(route, outputs, inputs)
    return tuple(outputs)


# Passes segkit's outputs through; on the first call of each input signature it runs the routed function eagerly
# on the same inputs and raises if the two disagree (thunder_exec.routes).
verify_route = segkit_ex.register_operator("segkit_verify_route", meta=_verify_meta, fn=_verify_impl)


# --------------------------------------------------------------------------- qkv split + RoPE (litgpt < 0.5.5 layout)
def _rope_cfg(qkv, n_head, n_query_groups, head_size, rope_n_elem) -> RopeConfig:
    B, T, _ = qkv.shape
    return RopeConfig("thunder", B, n_head * head_size, n_head, n_query_groups, head_size, rope_n_elem, T,
                      torch_dtype(qkv.dtype))


def _rope_runner(spec_name, qkv, n_head, n_query_groups, head_size, rope_n_elem, policy, check) -> SpecRunner:
    return RUNNERS.get(
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
    """qkv split + RoPE in litgpt's layout before 0.5.5 (per query group: q_per_kv q heads, then k, then v;
    fusions.torch_models.qkv_split_rope); routed to segkit under thunder.jit. litgpt >= 0.5.5 splits qkv as
    (all q, all k, all v) and is claimed per q / k RoPE without any call (thunder_exec.recognize)."""
    return torch_models.qkv_split_rope(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem)


def qkv_refusal(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem) -> str | None:
    """Why the qkv split + RoPE fusion cannot take these arguments (None when it can)."""
    try:
        _rope_cfg(qkv, n_head, n_query_groups, head_size, rope_n_elem)
    except ValueError as e:
        return str(e)
    if qkv.ndim != 3 or qkv.dtype not in _DTYPES:
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
    out = qkv_fwd(*args, *_options())
    return out if route is None else verify_route(route, out, args)


def _qkv_grad(qkv, cos, sin, n_head, n_query_groups, head_size, rope_n_elem, route=None):
    options = _options()
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
qkv_split_rope_entry = segkit_ex.register_operator("segkit_qkv_split_rope", meta=_qkv_meta, fn=qkv_split_rope)
segkit_ex.register_implementation(qkv_split_rope_entry, checker=_qkv_checker, execution_transform=_qkv_execution,
                                  grad_transform=_qkv_grad)
