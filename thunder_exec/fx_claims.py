"""Claim under ThunderFX what thunder.jit claims: the norm and RoPE regions of the FX graphs Thunder receives.

``thunder.dynamo.thunderfx(model, executors=thunder_exec.executors())`` hands Thunder the FX GraphModules that
TorchDynamo recorded and thunder.dynamo's splitter cut; by then Hugging Face's RMSNorm and apply_rotary_pos_emb
and litgpt's RMSNorm and apply_rope are inlined into single ops, so the function lookasides of
thunder_exec.recognize never fire, and ``F.rms_norm`` / ``nn.RMSNorm`` arrive as ``torch.rms_norm``, which
Thunder 0.2.6 does not map (the splitter sends it to Inductor). Two fixes:

* While segkit_ex is among the executors: entering a GraphModule, Thunder's interpreter calls ``torch.fx.graph_module._WrappedCall.__call__`` (every
  GraphModule's ``__call__`` goes through it). A lookaside on it interprets, instead of the module's forward, the
  forward of a copy of its graph in which each region matching one of thunder_exec.fx_patterns is replaced by a
  call of that pattern's function with the bound tensors and literals. Those functions are ``recognize()``d like
  the libraries' own: segkit's replacement is the reference family's thunder.jit replacement
  (recognize's ``_HF_NORMS`` / ``_HF_ROPES`` makers, so both paths claim and refuse alike and get the same
  first-use check), after checking that the matched literals are the library's (eps is free; a ``mean`` over
  another dim, a cast to another dtype are not); otherwise a trace note and the pattern function itself, which
  computes exactly the matched nodes. The module keeps its identity (``self`` is the original GraphModule), so
  Thunder's prologue and parameter provenance are untouched. Modules with hooks or their own ``__call__`` are
  left alone. Rewritten forwards are cached per (module, generated code), bounded; ``clear_cache()`` empties it.
* ``torch.rms_norm`` is mapped to ``thunder.torch.rms_norm`` (what ``F.rms_norm`` already maps to), for the
  splitter (``thunder.torch.register_function``) and for the interpreter (a general-jit lookaside, as Thunder
  registers its own torch functions), so segkit_ex's rms_norm implementation claims it as under thunder.jit.
  This one holds for every executor list once thunder_exec.install() ran (executors() runs it; the splitter
  decides before it knows the executors, so a list of names, which installs on the first subgraph's thunder.jit,
  leaves the first graph's ``torch.rms_norm`` to Inductor): without segkit_ex, Thunder runs its own rms_norm
  decomposition where Inductor ran the op.

Not taken: a ``Transform`` on Thunder's trace matching the decomposed ltorch ops (it needs an argument beyond
``executors=``); executor lookasides (``register_operator(..., replaces=)``), which divert a call to a symbol
without interpreting Python, so they cannot run a rewritten forward; a lookaside on each GraphModule's generated
``forward`` (a new function per graph, unknown before the splitter runs); patching thunder.dynamo's splitter.
Patterns are matched with ``torch.fx``'s ``SubgraphMatcher`` through ``subgraph_rewriter``: every literal of
a pattern is a parameter, so a match binds it and the call reproduces it.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx
from torch.fx.subgraph_rewriter import replace_pattern_with_filters

import thunder.torch as ltorch
from thunder.core.compile_data import get_compile_data
from thunder.core.interpreter import _interpret_call, unwrap
from thunder.core.jit_ext import register_general_jit_lookaside

from thunder_exec.base import segkit_ex
from thunder_exec.fx_patterns import PATTERNS, Pattern
from thunder_exec.recognize import (_HF_NORMS, _HF_ROPES, _copy, _litgpt_apply_rope, _litgpt_rms_norm,
                                    left_to_thunder, recognize, run_as_symbols, run_natively)


@dataclass
class NormWeights:
    """What a Hugging Face or litgpt RMSNorm's forward reads from ``self`` (``variance_epsilon``, Gemma's and
    litgpt's ``eps``, litgpt's ``dim`` and ``add_unit_offset``): here the matched region's, so the family's
    thunder.jit replacement runs on a region as on its module."""

    weight: Any
    eps: float
    dim: int = -1
    add_unit_offset: bool = False

    @property
    def variance_epsilon(self) -> float:
        return self.eps


def _call_norm(family_make, original, tensors, literals, values):
    x, weight = tensors
    forward = family_make(lambda module, h: original(h, module.weight, *literals))
    # litgpt's (1 + weight) is the pattern's ``one`` (Gemma's Hugging Face forward reads no add_unit_offset)
    return forward(NormWeights(weight, values["eps"], values.get("dim", -1), "one" in values), x)


def _call_rope(family_make, original, tensors, literals, values):
    apply = family_make(lambda q, k, cos, sin, unsqueeze_dim=1: original(q, k, cos, sin, *literals))
    return apply(*tensors, values["unsqueeze_dim"])


def _call_rope_x(family_make, original, tensors, literals, values):
    return family_make(lambda x, cos, sin: original(x, cos, sin, *literals))(*tensors)


# kind -> (the reference families' thunder.jit makers, how a region's arguments reach one)
_KINDS = {"norm": ({**{family: make for family, _, make in _HF_NORMS}, "litgpt": _litgpt_rms_norm}, _call_norm),
          "rope": (dict(_HF_ROPES), _call_rope),
          "rope_x": ({"litgpt": _litgpt_apply_rope}, _call_rope_x)}


def _bind(pattern: Pattern, tensors: tuple, literals: tuple) -> tuple[str | None, dict]:
    """(why the matched literals are not the library's or None, the literals by name)."""
    return pattern.mismatch(tensors, literals), dict(zip(pattern.literal_names, literals))


def pattern_maker(pattern: Pattern) -> Callable[[Callable], Callable]:
    """recognize()'s ``make`` for a pattern function: its reference family's replacement when the matched literals
    are the library's, else the pattern function (exactly the matched region) with a note."""
    makers, call = _KINDS[pattern.kind]
    family_make = makers[pattern.family]

    def make(original):
        def replacement(*args):
            tensors, literals = args[:pattern.n_tensors], args[pattern.n_tensors:]
            why, values = _bind(pattern, tensors, literals)
            if why:
                return left_to_thunder(pattern.label, why, original, *args)
            return call(family_make, original, tensors, literals, values)
        return replacement
    return make


# --------------------------------------------------------------------------- graph rewriting
@functools.lru_cache(maxsize=64)
def _claiming_forward(gm: torch.fx.GraphModule, code: str) -> Callable | None:
    """The forward of ``gm``'s graph with every pattern region replaced by its function's call (None when no
    region matched). ``code`` (the module's generated source) keys the cache: a recompiled graph is rewritten."""
    rewritten = torch.fx.GraphModule(gm, copy.deepcopy(gm.graph))  # nodes copied, meta shared, modules by reference
    replaced = sum(len(replace_pattern_with_filters(rewritten, p.graph, p.replacement)) for p in PATTERNS)
    return type(rewritten).forward if replaced else None


def clear_cache() -> None:
    _claiming_forward.cache_clear()


def _plain_call(wrapped_call, gm) -> bool:
    """Calling ``gm`` is calling its forward: no hooks, no ``__call__`` of its own (what Module.__call__ adds)."""
    from torch.nn.modules import module as nn_module

    hooks = (gm._forward_hooks, gm._forward_pre_hooks, gm._backward_hooks, gm._backward_pre_hooks,
             nn_module._global_forward_hooks, nn_module._global_forward_pre_hooks,
             nn_module._global_backward_hooks, nn_module._global_backward_pre_hooks)
    return getattr(wrapped_call, "cls_call", None) is None and not any(hooks)


def _segkit_active() -> bool:
    cd = get_compile_data()
    return cd is not None and segkit_ex in (cd.executors_list or ())


_ENTER = torch.fx.graph_module._WrappedCall.__call__
_enter = _copy(_ENTER)  # the same function as another object: interpreting it does not come back here


def _enter_graph_module(wrapped_call, module, *args, **kwargs):
    """Thunder's interpreter entering a GraphModule: run the rewritten forward when segkit_ex is active."""
    gm, call = unwrap(module), unwrap(wrapped_call)
    forward = None
    if _segkit_active() and isinstance(gm, torch.fx.GraphModule) and _plain_call(call, gm):
        forward = _claiming_forward(gm, gm.code)
    if forward is None:
        return _interpret_call(_enter, wrapped_call, module, *args, **kwargs)
    return _interpret_call(forward, module, *args, **kwargs)


# --------------------------------------------------------------------------- torch.rms_norm
def map_torch_rms_norm() -> None:
    """``torch.rms_norm`` (F.rms_norm's and nn.RMSNorm's op in a dynamo graph) as ``thunder.torch.rms_norm``."""
    if torch.rms_norm in ltorch._torch_to_thunder_function_map:
        return
    ltorch.register_function(torch.rms_norm, ltorch.rms_norm)
    run_as_symbols(torch.rms_norm, ltorch.rms_norm)


def install() -> None:
    """The Thunder lookasides and the torch.rms_norm mapping above (thunder_exec.install() calls this; importing
    this module registers nothing)."""
    run_natively(_bind)
    register_general_jit_lookaside(_ENTER)(_enter_graph_module)
    map_torch_rms_norm()
    for pattern in PATTERNS:
        recognize(pattern.label, pattern.fn, pattern_maker(pattern))
