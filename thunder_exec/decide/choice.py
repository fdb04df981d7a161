"""What each claimed call becomes, and the record of it: ``declined`` (the checkers: leave the call to Thunder's own
decomposition), ``chosen`` (the transforms: fuse it into Thunder's nvFuser regions, or run it opaque),
``grouping`` (the GQA lookaside: cuDNN's grouped call, or the repeats), each choice of a norm / RoPE call kept in
``CHOICES``.

Without Thunder's nvFuser executor (no CUDA, or no nvfuser_direct) "auto" is opaque and ``segkit_fuse="fused"``
falls back to the opaque symbols with one ``FuseFallbackWarning``.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

from thunder.core import devices
from thunder.core.compile_data import get_compile_data

from fusions.runner import LRUCache
from segkit.tuning import gpu_model
import thunder_exec.nv_ops as nv_ops
import thunder_exec.decide.evidence as evidence
from thunder_exec.decide.cut_cost import FUSED, OPAQUE, THUNDER, call_declines, crossing_bytes, decide
from thunder_exec.decide.options import CompileOptions, gqa_option


class FuseFallbackWarning(UserWarning):
    """``segkit_fuse`` asked for fused symbols where they cannot run: the opaque ones run instead."""


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
    alone in its region (thunder_exec.decide.alone)."""

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
    call's thunder_exec.calls.Call objects, forward then backward, on x ``x``; one under segkit_fuse "thunder", or
    the call's "auto" specs with step evidence that Thunder's own ran faster on this GPU, as the call would run now
    (cut_cost.call_declines), declines the whole call. Recorded as a Choice."""
    modes = {c.spec: options.fuse.mode(c.spec, c.shape) for c in calls}
    why = next(((c.spec, "segkit_fuse thunder") for c in calls if modes[c.spec] == THUNDER), None)
    auto = [(c.spec, c.cfg) for c in calls if modes[c.spec] == "auto"]
    if why is None and auto and _nvfuser_runs(x):
        found = call_declines(auto, gpu_model())
        why = found and (found[0], f"Thunder's own ran faster: {found[1].describe()}")
    if not why:
        return False
    spec_name, reason = why
    for c in calls:
        record(Choice(c.spec, c.signature, modes[c.spec], THUNDER, reason if c.spec == spec_name else
                      f"left to Thunder with {spec_name}, {reason}"))
    return True


def _nvfuser_refusal() -> str | None:
    """Why Thunder's nvFuser executor cannot fuse anything in this compilation (not loaded, or not among its
    executors); None when it can."""
    symbols = nv_ops.registered()
    if symbols is None:
        return "Thunder's nvFuser executor is not loaded here (no CUDA or no nvfuser_direct)"
    cd = get_compile_data()
    if cd is not None and symbols.executor not in (cd.executors_list or ()):
        return "nvFuser is not among this compilation's executors"
    return None


def _nvfuser_runs(x) -> bool:
    """Thunder's nvFuser executor can fuse in this compilation (``_nvfuser_refusal``) and ``x`` is on its device."""
    return _nvfuser_refusal() is None and nv_ops.on(nv_ops.registered().device, x)


def chosen(options: CompileOptions, call, x) -> nv_ops.FusibleSymbols | None:
    """The fusible symbols when ``call`` (a thunder_exec.calls.Call on x ``x``) is to be fused into Thunder's
    nvFuser regions, else None (emit segkit_ex's opaque symbols, as without the option)."""
    mode = options.fuse.mode(call.spec, call.shape)
    if mode == THUNDER:  # the checker declined the call (``declined``); a call claimed anyway decides as auto
        mode = "auto"
    if mode == OPAQUE:
        record(Choice(call.spec, call.signature, mode, OPAQUE, "segkit_fuse opaque"))
        return None
    refusal = _nvfuser_refusal()
    if refusal is not None:  # "auto" decides opaque here; "fused" was asked for and is told why not
        if mode == FUSED:
            _fall_back(refusal)
        return None
    symbols = nv_ops.registered()
    if not nv_ops.on(symbols.device, x) or not all(isinstance(s, int) for s in x.shape):
        return None
    if mode == "auto":
        d = decide(call.spec, call.cfg, gpu_model())
        record(Choice(call.spec, d.signature, mode, d.decision, d.describe()))
        return None if d.decision == OPAQUE else symbols
    record(Choice(call.spec, call.signature, mode, FUSED, f"segkit_fuse {mode}"))
    return symbols


def reads_output(options: CompileOptions, bwd_call, out_call) -> bool:
    """Whether a norm's backward reads the forward's output (``segkit_norm_saves="output"``; ``out_call``: the
    call of its from-output spec, None where the call has none, e.g. Hugging Face's rounded RMSNorm). That
    backward runs as segkit_ex's opaque symbol (it has no fused form yet), recorded as a Choice; a ``segkit_fuse``
    "fused" for the backward is told so once."""
    if options.norm_saves != "output" or out_call is None:
        return False
    mode = options.fuse.mode(bwd_call.spec, bwd_call.shape)
    if mode == FUSED:
        _fall_back("segkit_norm_saves='output': the norm backward from its output has no fused form")
    record(Choice(out_call.spec, out_call.signature, mode, OPAQUE, "segkit_norm_saves output"))
    return True


def grouping(query, key) -> bool:
    """Whether this SDPA call (q and its unrepeated k) runs grouped on cuDNN: the compile option ``segkit_gqa``,
    by the step evidence under "auto" (the default) on the GPU the call runs on (evidence.committed_grouped)."""
    value = gqa_option()
    if value != "auto":
        return value
    cuda = query.device.devicetype is devices.DeviceType.CUDA
    return evidence.committed_grouped().grouped(gpu_model() if cuda else None, query.shape[-3] // key.shape[-3])
