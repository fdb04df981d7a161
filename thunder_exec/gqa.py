"""Grouped-query attention reaches segkit's cuDNN attention with k / v as the model computed them, not repeated.

litgpt repeats k / v to q's heads before SDPA (``k.repeat_interleave(q_per_kv, dim=1)``): the forward writes the
repeated copies and the backward sums dk / dv over each group, while cuDNN's attention takes the grouped k / v
itself (thunder_exec.attention). Where segkit_ex is among the executors, a Thunder lookaside on
``torch.nn.functional.scaled_dot_product_attention`` looks up how the trace being recorded computed k and v:
both ``repeat_interleave`` of 4-dim tensors on dim 1 by the same count, with no mask and no dropout, make the call
``segkit_grouped_sdpa`` on the unrepeated tensors (the repeats, now unused, leave the trace as dead code). So does
torch's ``enable_gqa=True``, which Thunder 0.2.6's SDPA does not take; with a mask or dropout that call gets its
repeats explicitly. Anything else is Thunder's SDPA, as without the lookaside.

Whether a grouped call pays depends on the group: cuDNN's grouped backward adds two kernels that reduce dk / dv
over each group (``fmha_reduce_head``) where the repeated path sums them in Thunder's regions, against the forward's
saved repeats. The compile option ``segkit_gqa`` chooses (thunder_exec.decide.choice.grouping): "auto" (the
default) takes the grouped call where a step measured it faster on this GPU at this group size (the GQA evidence,
thunder_exec.decide.evidence, each record naming its run) and keeps the repeats elsewhere; True and False force it.
"""

from __future__ import annotations

import torch
import thunder.torch as ltorch
from thunder.core.interpreter import interpreter_needs_wrap
from thunder.core.jit_ext import register_general_jit_lookaside
from thunder.core.proxies import TensorProxy
from thunder.core.trace import get_tracectx

from thunder_exec.attention import grouped_sdpa
from thunder_exec.decide.choice import grouping
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
    unmasked = attn_mask is None and dropout_p == 0.0
    # the unrepeated (k, v): enable_gqa's own, or those behind the model's repeats
    pair = (_enable_gqa_pair(query, key, value) if enable_gqa
            else grouped_sources(query, key, value) if unmasked else None)
    if pair is not None and unmasked and query.ndim == 4 and grouping(query, pair[0]):
        return grouped_sdpa(query, *pair, is_causal, scale)
    if enable_gqa and pair is not None:  # with a mask, dropout or the repeats chosen: torch's repeats, Thunder's SDPA
        repeats = query.shape[-3] // key.shape[-3]
        key, value = ltorch.repeat_interleave(key, repeats, -3), ltorch.repeat_interleave(value, repeats, -3)
    return ltorch.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal, scale=scale)


def install() -> None:
    """Register the lookaside (once: thunder_exec.patches)."""
    register_general_jit_lookaside(torch.nn.functional.scaled_dot_product_attention)(
        interpreter_needs_wrap(_scaled_dot_product_attention))
