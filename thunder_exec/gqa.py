"""Grouped-query attention reaches segkit's cuDNN attention with k / v as the model computed them, not repeated.

litgpt repeats k / v to q's heads before SDPA (``k.repeat_interleave(q_per_kv, dim=1)``): the forward writes the
repeated copies and the backward sums dk / dv over each group, while cuDNN's attention takes the grouped k / v
itself (thunder_exec.attention). Where segkit_ex is among the executors, a Thunder lookaside on
``torch.nn.functional.scaled_dot_product_attention`` looks up how the trace being recorded computed k and v:
both ``repeat_interleave`` of 4-dim tensors on dim 1 by the same count, with no mask and no dropout, make the call
``segkit_grouped_sdpa`` on the unrepeated tensors (the repeats, now unused, leave the trace as dead code). So does
torch's ``enable_gqa=True``, which Thunder 0.2.6's SDPA does not take; with a mask or dropout that call gets its
repeats explicitly. Anything else is Thunder's SDPA, as without the lookaside. The compile option
``segkit_gqa=False`` keeps the repeats (the comparison).
"""

from __future__ import annotations

import torch
import thunder.torch as ltorch
from thunder.core.compile_data import get_compile_option
from thunder.core.interpreter import interpreter_needs_wrap
from thunder.core.jit_ext import register_general_jit_lookaside
from thunder.core.proxies import TensorProxy
from thunder.core.trace import get_tracectx

from thunder_exec.attention import grouped_sdpa
from thunder_exec.recognize import active

REPEAT = "torch.repeat_interleave"


def repeated_from(t) -> tuple[TensorProxy, int] | None:
    """(x, r) where the trace being recorded computed ``t`` as ``x.repeat_interleave(r, dim=1)`` with x of 4 dims
    and r an int; None otherwise (or where no trace is being recorded)."""
    trace = get_tracectx()
    if trace is None or not isinstance(t, TensorProxy):
        return None
    for bsym in reversed(trace.peek_scope()):
        if bsym.output is not t:
            continue
        if bsym.sym.id != REPEAT or len(bsym.args) < 3:
            return None
        x, repeats, dim = bsym.args[:3]
        if isinstance(x, TensorProxy) and x.ndim == 4 and type(repeats) is int and type(dim) is int and dim % 4 == 1:
            return x, repeats
        return None
    return None


def grouped_sources(query, key, value) -> tuple[TensorProxy, TensorProxy] | None:
    """The unrepeated (k, v) behind SDPA's ``key`` and ``value`` where both are repeats of one count that brings
    their heads to q's (``repeated_from``); None otherwise."""
    k, v = repeated_from(key), repeated_from(value)
    if k is None or v is None or k[1] != v[1] or query.ndim != 4:
        return None
    (k0, repeats), (v0, _) = k, v
    if k0.shape[1] * repeats != query.shape[1] or tuple(k0.shape) != tuple(v0.shape):
        return None
    return k0, v0


def grouping() -> bool:
    """The compile option ``segkit_gqa`` (default True: grouped calls reach cuDNN unrepeated)."""
    value = get_compile_option("segkit_gqa", "grouped-query attention on cuDNN with k / v unrepeated: True | False")
    if value is None:
        return True
    if not isinstance(value, bool):
        raise ValueError(f"segkit_gqa must be True or False, got {value!r}")
    return value


def _enable_gqa_pair(query, key, value) -> tuple[TensorProxy, TensorProxy] | None:
    """(k, v) of an ``enable_gqa=True`` call whose k / v have fewer heads than q (None: as many), after torch's
    own checks, so a wrong call is named here rather than deep in Thunder's SDPA."""
    hq, hk, hv = query.shape[-3], key.shape[-3], value.shape[-3]
    if hk == hq and hv == hq:
        return None
    if hk != hv or hq % hk:
        raise ValueError(f"scaled_dot_product_attention(enable_gqa=True): k and v must have one head count that "
                         f"divides q's; got q {tuple(query.shape)}, k {tuple(key.shape)}, v {tuple(value.shape)}")
    return key, value


def _scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                  enable_gqa=False):
    if not active():  # Thunder's own mapping, enable_gqa and its error included
        extra = {"enable_gqa": enable_gqa} if enable_gqa else {}
        return ltorch.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale=scale,
                                                   **extra)
    grouped = _enable_gqa_pair(query, key, value) if enable_gqa else None
    unmasked = attn_mask is None and dropout_p == 0.0
    if grouped is None and unmasked and grouping():
        grouped = grouped_sources(query, key, value)
    if grouped is not None and unmasked and query.ndim == 4 and grouping():
        return grouped_sdpa(query, *grouped, is_causal, scale)
    if grouped is not None:  # enable_gqa with a mask, dropout or grouping off: torch's repeats, then Thunder's SDPA
        repeats = query.shape[-3] // key.shape[-3]
        key, value = ltorch.repeat_interleave(key, repeats, -3), ltorch.repeat_interleave(value, repeats, -3)
    return ltorch.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale=scale)


def install() -> None:
    """Register the lookaside (once: thunder_exec.patches)."""
    register_general_jit_lookaside(torch.nn.functional.scaled_dot_product_attention)(
        interpreter_needs_wrap(_scaled_dot_product_attention))
