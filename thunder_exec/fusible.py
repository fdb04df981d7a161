"""segkit's norms and RoPE as operators of Thunder's nvFuser executor, so its regions fuse them instead of being
cut by segkit_ex's opaque symbols (compile option ``segkit_fuse``, thunder_exec.base).

The pattern of Thunder's own cross entropy (thunder/executors/nvfuserex_impl.py): each symbol is registered ON
the nvFuser executor with a translator ``fn(args..., *, fd, lc_to_nv_map)`` that emits the op into the region's
FusionDefinition. Here the translators call the fusions' bodies (``rmsnorm_fwd.body`` ...), the same math as
segkit's own fusions, on the region's tensors. Registration happens once, and only where Thunder's nvFuser
executor is loaded (a CUDA host with nvfuser_direct); elsewhere ``segkit_fuse="fused"`` falls back to the opaque
symbols with one ``FuseFallbackWarning``.

The norm and RoPE checkers ask ``declined`` whether to leave a call to Thunder's own decomposition; their
transforms ask ``chosen`` which symbols to emit.
"""

from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass
from typing import Any

from thunder.core import dtypes
from thunder.core.compile_data import get_compile_data
from thunder.core.devices import DeviceType
from thunder.core.proxies import TensorProxy

from fusions import layernorm_bwd, layernorm_fwd, rmsnorm_bwd, rmsnorm_fwd, rope_bwd, rope_fwd
from fusions.configs import ApplyRopeConfig, NormConfig, unit_row_dims
from fusions.cut_cost import FUSED, OPAQUE, THUNDER, call_declines, crossing_bytes, decide
from fusions.runner import LRUCache
from fusions.spec import signature
from segkit.tuning import gpu_model
from thunder_exec.base import CompileOptions, call_shape, torch_dtype


class FuseFallbackWarning(UserWarning):
    """``segkit_fuse`` asked for fused symbols where they cannot run: the opaque ones run instead."""


# --------------------------------------------------------------------------- configs of a call
def norm_config(a, weight, eps: float, bias: bool = False, round_normed: bool = False) -> NormConfig:
    """The norm config of a call on x ``a`` (rows x hidden: the bodies take x's own rank)."""
    param = torch_dtype(a.dtype) if weight is None else torch_dtype(weight.dtype)
    io = torch_dtype(a.dtype)
    return NormConfig("thunder", (math.prod(a.shape[:-1]), a.shape[-1]), io, float(eps), bias,
                      None if param == io else param, round_normed)


def rope_shape(x) -> tuple[int, int, int, int]:
    """x as RoPE's (B, H, T, n): H the product of the middle dims."""
    return (x.shape[0], math.prod(x.shape[1:-2]), x.shape[-2], x.shape[-1])


def rope_config(x, cos, x_dtype, out_dtype, x_stride_order=None) -> ApplyRopeConfig:
    """The RoPE config of a call: x as ``rope_shape``, the tables' batch, x's layout where it is permuted (a
    run-time tensor's; a trace's proxies have none)."""
    shape = rope_shape(x)
    T, n = shape[2], shape[3]
    table, io, out = torch_dtype(cos.dtype), torch_dtype(x_dtype), torch_dtype(out_dtype)
    return ApplyRopeConfig("thunder", shape, math.prod(cos.shape) // (T * n), io, None if table == io else table,
                           None if out == io else out, x_stride_order)


# --------------------------------------------------------------------------- metas
def stats_meta(a) -> TensorProxy:
    """mean / rstd: one fp32 value per row of ``a``."""
    return TensorProxy(like=a, shape=tuple(a.shape[:-1]), dtype=dtypes.float32)


def param_meta(a, weight) -> TensorProxy:
    """dw / db: like the weight; a norm without weight still gets one (of ones), its gradient dropped."""
    return TensorProxy(like=weight) if weight is not None else TensorProxy(like=a, shape=(a.shape[-1],))


def _rms_fwd_meta(a, weight, eps, round_normed):
    return TensorProxy(like=a), stats_meta(a)


def _rms_bwd_meta(g, a, rstd, weight, eps, round_normed):
    return TensorProxy(like=a), TensorProxy(like=weight)


def _ln_fwd_meta(a, weight, bias, eps):
    return TensorProxy(like=a), stats_meta(a), stats_meta(a)


def _ln_bwd_meta(g, a, mean, rstd, weight, eps):
    return TensorProxy(like=a), param_meta(a, weight), param_meta(a, weight)


def _rope_fwd_meta(x, cos, sin, out_dtype):
    return TensorProxy(like=x, dtype=dtypes.to_dtype(out_dtype))


def _rope_bwd_meta(g, cos, sin, x_dtype):
    return TensorProxy(like=g, dtype=dtypes.to_dtype(x_dtype))


# --------------------------------------------------------------------------- translators
def _nv(x, lc_to_nv_map):
    """The region's tensor for proxy ``x`` (None stays None)."""
    return None if x is None else lc_to_nv_map[x]


def rms_fwd_translator(a, weight, eps, round_normed, *, fd, lc_to_nv_map):
    cfg = norm_config(a, weight, eps, round_normed=round_normed)
    return rmsnorm_fwd.body(fd, _nv(a, lc_to_nv_map), _nv(weight, lc_to_nv_map), cfg, a.ndim)


def _squeezed(fd, tensors, dims: list[int]):
    return [fd.ops.squeeze(t, dims=dims) if dims else t for t in tensors]


def _unsqueezed(fd, t, a, dims: list[int]):
    """``t`` (x's shape less ``dims``) back at x's shape."""
    if not dims:
        return t
    kept = [d for d in range(a.ndim) if d not in dims]
    return fd.ops.broadcast_in_dim(t, shape=list(a.shape), broadcast_dims=kept)


def rms_bwd_translator(g, a, rstd, weight, eps, round_normed, *, fd, lc_to_nv_map):
    cfg = norm_config(a, weight, eps, round_normed=round_normed)
    nv = functools.partial(_nv, lc_to_nv_map=lc_to_nv_map)
    dims = unit_row_dims(a.shape)
    x, dy, r = _squeezed(fd, (nv(a), nv(g), nv(rstd)), dims)
    dx, dw = rmsnorm_bwd.body(fd, x, dy, r, nv(weight), cfg, a.ndim - len(dims))
    return _unsqueezed(fd, dx, a, dims), dw


def ln_fwd_translator(a, weight, bias, eps, *, fd, lc_to_nv_map):
    cfg = norm_config(a, weight, eps, bias is not None)
    nv = functools.partial(_nv, lc_to_nv_map=lc_to_nv_map)
    return layernorm_fwd.body(fd, nv(a), nv(weight), nv(bias), cfg, a.ndim)


def ln_bwd_translator(g, a, mean, rstd, weight, eps, *, fd, lc_to_nv_map):
    cfg = norm_config(a, weight, eps)
    nv = functools.partial(_nv, lc_to_nv_map=lc_to_nv_map)
    dims = unit_row_dims(a.shape)
    x, dy, m, r = _squeezed(fd, (nv(a), nv(g), nv(mean), nv(rstd)), dims)
    dx, dw, db = layernorm_bwd.body(fd, x, dy, m, r, nv(weight), cfg, a.ndim - len(dims))
    return _unsqueezed(fd, dx, a, dims), dw, db


def _canonical_table(fd, t, table, x_ndim: int):
    """The region's cos / sin as rope_fwd.define_tables defines them ((T, n) or (B, T, n)): the size-1 dims before
    T squeezed off (the table broadcasts as (1 or B, 1.., T, n) against x, thunder_exec.rope.rope_refusal)."""
    lead = x_ndim - table.ndim  # dims the table lacks on the left
    dims = [d for d in range(table.ndim - 2) if not (d + lead == 0 and table.shape[d] != 1)]
    return fd.ops.squeeze(t, dims=dims) if dims else t


def _rope_tables(fd, x, cos, sin, lc_to_nv_map) -> tuple:
    return tuple(_canonical_table(fd, _nv(t, lc_to_nv_map), t, x.ndim) for t in (cos, sin))


def rope_fwd_translator(x, cos, sin, out_dtype, *, fd, lc_to_nv_map):
    cfg = rope_config(x, cos, x.dtype, out_dtype)
    return rope_fwd.body(fd, _nv(x, lc_to_nv_map), *_rope_tables(fd, x, cos, sin, lc_to_nv_map), cfg, tuple(x.shape))


def rope_bwd_translator(g, cos, sin, x_dtype, *, fd, lc_to_nv_map):
    cfg = rope_config(g, cos, x_dtype, g.dtype)
    return rope_bwd.body(fd, _nv(g, lc_to_nv_map), *_rope_tables(fd, g, cos, sin, lc_to_nv_map), cfg, tuple(g.shape))


# --------------------------------------------------------------------------- registration
@dataclass(frozen=True)
class FusibleSymbols:
    """segkit's operators registered on Thunder's nvFuser executor (``executor``), which runs them on ``device``."""

    executor: Any
    device: DeviceType
    rms_fwd: Any
    rms_bwd: Any
    ln_fwd: Any
    ln_bwd: Any
    rope_fwd: Any
    rope_bwd: Any


@dataclass(frozen=True)
class FusibleOp:
    """One of segkit's operators on Thunder's nvFuser executor: its ``name``, ``meta`` and ``translator``; the
    fusion ``spec`` it emits and the ``config`` of a call (from the call's arguments, as the translator builds
    it); the segkit_ex symbols that run the same call opaque (``opaque``, the same arguments then the compile
    options' ``symbol_args``; ``opaque_y``: y only, where nothing needs the statistics).

    Not tagged REDUCTION_OP (as Thunder tags its cross entropy): the tag stops rematerialization from
    recomputing a fused forward inside the backward's region, and with the statistics saved nvFuser segmented a
    step's fused norm backward region worse (measured; the lab's index has the run)."""

    name: str
    spec: str
    meta: Any
    translator: Any
    config: Any
    opaque: str
    opaque_y: str | None = None


_SYMBOLS = {  # FusibleSymbols field: its operator
    "rms_fwd": FusibleOp("segkit_nv_rms_norm_fwd", "rmsnorm_fwd", _rms_fwd_meta, rms_fwd_translator,
                         lambda a, weight, eps, round_normed: norm_config(a, weight, eps, round_normed=round_normed),
                         "segkit_rms_norm_fwd", "segkit_rms_norm"),
    "rms_bwd": FusibleOp("segkit_nv_rms_norm_bwd", "rmsnorm_bwd", _rms_bwd_meta, rms_bwd_translator,
                         lambda g, a, rstd, weight, eps, round_normed:
                         norm_config(a, weight, eps, round_normed=round_normed),
                         "segkit_rms_norm_bwd"),
    "ln_fwd": FusibleOp("segkit_nv_layer_norm_fwd", "layernorm_fwd", _ln_fwd_meta, ln_fwd_translator,
                        lambda a, weight, bias, eps: norm_config(a, weight, eps, bias is not None),
                        "segkit_layer_norm_fwd", "segkit_layer_norm"),
    "ln_bwd": FusibleOp("segkit_nv_layer_norm_bwd", "layernorm_bwd", _ln_bwd_meta, ln_bwd_translator,
                        lambda g, a, mean, rstd, weight, eps: norm_config(a, weight, eps),
                        "segkit_layer_norm_bwd"),
    "rope_fwd": FusibleOp("segkit_nv_rope_fwd", "rope_fwd", _rope_fwd_meta, rope_fwd_translator,
                          lambda x, cos, sin, out_dtype: rope_config(x, cos, x.dtype, out_dtype), "segkit_rope_fwd"),
    "rope_bwd": FusibleOp("segkit_nv_rope_bwd", "rope_bwd", _rope_bwd_meta, rope_bwd_translator,
                          lambda g, cos, sin, x_dtype: rope_config(g, cos, x_dtype, g.dtype), "segkit_rope_bwd"),
}
NAMES = tuple(op.name for op in _SYMBOLS.values())
BY_NAME = {op.name: op for op in _SYMBOLS.values()}


def _on(device: DeviceType, *args) -> bool:
    """Every tensor argument on ``device``."""
    return all(a.device.devicetype is device for a in args if isinstance(a, TensorProxy))


def register(executor, register_supported, device: DeviceType = DeviceType.CUDA) -> FusibleSymbols:
    """Register segkit's operators on ``executor`` (Thunder's nvFuser executor) with their translators through
    ``register_supported(symbol_id, translator, checker)`` (nvfuserex_impl's); the checker wants ``device``."""
    symbols = {}
    for field_name, op in _SYMBOLS.items():
        sym = executor.register_operator(op.name, meta=op.meta)
        register_supported(sym.id, op.translator, functools.partial(_on, device))
        symbols[field_name] = sym
    return FusibleSymbols(executor, device, **symbols)


@functools.lru_cache(maxsize=1)
def registered() -> FusibleSymbols | None:
    """The operators on Thunder's nvFuser executor, registered on first use; None where that executor is not
    loaded (no CUDA or no nvfuser_direct)."""
    from thunder.executors.nvfuserex import nvfuserex

    if nvfuserex is None:
        return None
    from thunder.executors import nvfuserex_impl

    return register(nvfuserex_impl.ex, nvfuserex_impl.register_supported)


@functools.lru_cache(maxsize=16)
def _fall_back(why: str) -> None:
    """Warn once per reason (``clear_notes()`` to hear it again)."""
    warnings.warn(f"segkit_fuse: {why}; segkit's opaque norm / RoPE symbols run instead", FuseFallbackWarning,
                  stacklevel=4)


@dataclass(frozen=True)
class Choice:
    """What one call of a fusible spec became: ``chosen`` FUSED, OPAQUE or THUNDER (left to Thunder's own
    decomposition), under ``mode`` (segkit_fuse), and why
    (the cut decision's ``describe()`` under "auto"); ``alone``: decided again after the fusion pass, the call
    alone in its region (thunder_exec.alone)."""

    spec: str
    signature: str
    mode: str
    chosen: str
    why: str
    alone: bool = False


# The choices of the compilations since the last ``clear_notes()``, one per (spec, signature, mode), the oldest
# dropped past maxsize: which calls a step cut, and why (the step table records them).
CHOICES = LRUCache(maxsize=256)


def record(choice: Choice) -> None:
    """Keep ``choice`` as the last word on its (spec, signature, mode): a call decided again alone in its region
    replaces the transform's choice."""
    CHOICES.put((choice.spec, choice.signature, choice.mode), choice)


def clear_notes() -> None:
    """Forget which fallbacks were said, the cut costs computed and the choices made (the next compile says,
    computes and records again)."""
    _fall_back.cache_clear()
    crossing_bytes.cache_clear()
    CHOICES.clear()


def declined(options: CompileOptions, calls, x) -> bool:
    """Whether segkit_ex leaves a call to Thunder's own decomposition (its checker refuses it): ``calls`` are the
    call's (spec, config) pairs, forward then backward, on x ``x``; one under segkit_fuse "thunder", or the call's
    "auto" specs with step evidence that Thunder's own ran faster on this GPU, as the call would run now
    (fusions.cut_cost.call_declines), declines the whole call. Recorded as a Choice."""
    modes = {s: options.fuse.mode(s, call_shape(c)) for s, c in calls}
    why = next(((s, "segkit_fuse thunder") for s, _ in calls if modes[s] == THUNDER), None)
    auto = [(s, c) for s, c in calls if modes[s] == "auto"]
    if why is None and auto and _nvfuser_runs(x):
        found = call_declines(auto, gpu_model())
        why = found and (found[0], f"Thunder's own ran faster: {found[1].describe()}")
    if not why:
        return False
    spec_name, reason = why
    for s, c in calls:
        record(Choice(s, signature(c), modes[s], THUNDER, reason if s == spec_name else
                      f"left to Thunder with {spec_name}, {reason}"))
    return True


def _nvfuser_refusal() -> str | None:
    """Why Thunder's nvFuser executor cannot fuse anything in this compilation (not loaded, or not among its
    executors); None when it can."""
    symbols = registered()
    if symbols is None:
        return "Thunder's nvFuser executor is not loaded here (no CUDA or no nvfuser_direct)"
    cd = get_compile_data()
    if cd is not None and symbols.executor not in (cd.executors_list or ()):
        return "nvFuser is not among this compilation's executors"
    return None


def _nvfuser_runs(x) -> bool:
    """Thunder's nvFuser executor can fuse in this compilation (``_nvfuser_refusal``) and ``x`` is on its device."""
    return _nvfuser_refusal() is None and _on(registered().device, x)


def chosen(options: CompileOptions, spec_name: str, cfg, x) -> FusibleSymbols | None:
    """The fusible symbols when this call of ``spec_name`` (config ``cfg``, x ``x``) is to be fused into Thunder's
    nvFuser regions, else None (emit segkit_ex's opaque symbols, as without the option)."""
    mode = options.fuse.mode(spec_name, call_shape(cfg))
    if mode == THUNDER:  # the checker declined the call (``declined``); a call claimed anyway decides as auto
        mode = "auto"
    if mode == OPAQUE:
        record(Choice(spec_name, signature(cfg), mode, OPAQUE, "segkit_fuse opaque"))
        return None
    refusal = _nvfuser_refusal()
    if refusal is not None:  # "auto" decides opaque here; "fused" was asked for and is told why not
        if mode == FUSED:
            _fall_back(refusal)
        return None
    symbols = registered()
    if not _on(symbols.device, x) or not all(isinstance(s, int) for s in x.shape):
        return None
    if mode == "auto":
        d = decide(spec_name, cfg, gpu_model())
        record(Choice(spec_name, d.signature, mode, d.decision, d.describe()))
        return None if d.decision == OPAQUE else symbols
    record(Choice(spec_name, signature(cfg), mode, FUSED, f"segkit_fuse {mode}"))
    return symbols
