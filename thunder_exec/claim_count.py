"""segkit_ex's claims counted per executed call, for a ``thunder.jit`` function and a ThunderFX callable alike.

A thunder.jit function's execution trace runs once per call, so its symbols are its claims. Under ThunderFX one
Thunder function may run several times per step: TorchDynamo records a decoder layer's graph once and calls it
for every layer when the model's loop breaks the graph (a 2-layer model's trace shows 3 norms where 5 run). Here
each Thunder function's last forward and backward traces count once per call it ran (``thunder.compile_stats``),
the backward once per forward call (a training step), so the counts are the calls a step executed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import thunder

# segkit_ex's opaque symbols, and (segkit_nv_*) the operators thunder_exec.nv_ops puts into nvFuser's regions
NORM_FW = frozenset({"segkit_layer_norm_fwd", "segkit_rms_norm_fwd", "segkit_layer_norm", "segkit_rms_norm",
                     "segkit_nv_layer_norm_fwd", "segkit_nv_rms_norm_fwd"})
NORM_BW = frozenset({"segkit_layer_norm_bwd", "segkit_rms_norm_bwd", "segkit_nv_layer_norm_bwd",
                     "segkit_nv_rms_norm_bwd", "segkit_layer_norm_bwd_from_output",
                     "segkit_rms_norm_bwd_from_output"})
ROPE_FW = frozenset({"segkit_rope_fwd", "segkit_nv_rope_fwd"})
ROPE_BW = frozenset({"segkit_rope_bwd", "segkit_nv_rope_bwd"})


def bound_symbols(bsyms) -> Iterable:
    """Every bound symbol, descending into fusions (CUDA-graph regions hold nvFusions; nvFusions hold the symbols
    they fused) but not into a symbol's own decomposition."""
    for b in bsyms:
        yield b
        if getattr(b.sym, "is_fusion", False):
            yield from bound_symbols(b.subsymbols)


def thunder_functions(fn) -> list:
    """The Thunder-compiled functions of ``fn``: every subgraph's of a ThunderFX callable (``thunderfx``'s result
    or a ``ThunderCompiler`` backend), else ``fn`` itself (a thunder.jit function)."""
    backend = getattr(fn, "_backend", fn)
    infos = getattr(backend, "subgraph_infos", None)
    if infos is None:
        return [fn]
    return [f for info in infos for f in info.thunder_compiled_fns]


def calls(fn) -> dict[int, int]:
    """How many times each Thunder function of ``fn`` ran so far, by id: ``since`` for :func:`per_call`."""
    return {id(f): thunder.compile_stats(f).calls for f in thunder_functions(fn)}


def per_call(fn, count: Callable[[list], int], since: dict[int, int] | None = None) -> tuple[int, int]:
    """(forward, backward): ``count`` of each Thunder function's last forward / backward execution trace (its
    bound symbols, fusions opened), times the calls it ran since ``since`` (:func:`calls`; None: since
    compiled)."""
    fw = bw = 0
    for f in thunder_functions(fn):
        n = thunder.compile_stats(f).calls - (since or {}).get(id(f), 0)
        if n <= 0:
            continue
        fw += n * count(list(bound_symbols(thunder.last_traces(f)[-1].bound_symbols)))
        if backward := thunder.last_backward_traces(f):
            bw += n * count(list(bound_symbols(backward[-1].bound_symbols)))
    return fw, bw


def claims(fn, since: dict[int, int] | None = None) -> dict[str, int]:
    """segkit_ex's norm and RoPE claims per executed call (q and k count one RoPE each): ``norm_fw``, ``norm_bw``,
    ``rope_fw``, ``rope_bw``."""
    def named(names):
        return lambda bsyms: sum(b.sym.name in names for b in bsyms)

    norm_fw, _ = per_call(fn, named(NORM_FW), since)
    _, norm_bw = per_call(fn, named(NORM_BW), since)
    rope_fw, _ = per_call(fn, named(ROPE_FW), since)
    _, rope_bw = per_call(fn, named(ROPE_BW), since)
    return {"norm_fw": norm_fw, "norm_bw": norm_bw, "rope_fw": rope_fw, "rope_bw": rope_bw}
