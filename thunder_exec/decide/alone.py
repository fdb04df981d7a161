"""A fused norm / RoPE call that nvFuser's fusion pass left alone in its region cuts nothing by running opaque:
under ``segkit_fuse="auto"`` it runs as segkit_ex's opaque symbol where segkit's tuned kernel beats nvFuser's
default for that call (cut_cost.decide_alone), else stays fused.

segkit's transforms choose fused or opaque per call (thunder_exec.decide.choice.chosen) before the regions exist, so the
cut cost model assumes neighbours to fuse with. Where the fusion pass finds none (an isolated norm, a norm between
two matmuls), fusing saves no bytes and only trades segkit's schedule for nvFuser's default; and a fused forward's
region can be copied into the backward's (Thunder's rematerialization, inside the same fusion pass, on the joint
forward-backward trace), after which the backward's region is not alone. So this pass runs on the fusion pass's
regions before its rematerialization, and again after the pass (thunder_exec.install(), thunder_exec.patches):
one job, the regions whose only bound symbol is one of segkit's fusible operators.
"""

from __future__ import annotations

from thunder.core.compile_data import get_compile_data
from thunder.core.symbol import BoundSymbol
from thunder.core.trace import TraceCtx, TraceProvenance, from_trace

from segkit.tuning import gpu_model
from thunder_exec.base import segkit_ex
from thunder_exec.decide.choice import Choice, record
from thunder_exec.decide.cut_cost import OPAQUE, decide_alone
from thunder_exec.decide.options import compile_options
from thunder_exec.nv_ops import BY_NAME

_installed = False


def _alone(bsym: BoundSymbol) -> BoundSymbol | None:
    """The fusible call ``bsym`` holds when it is an nvFuser region of that call alone, else None."""
    if bsym.sym.name.startswith("nvFusion") and len(bsym.subsymbols) == 1 and bsym.subsymbols[0].sym.name in BY_NAME:
        return bsym.subsymbols[0]
    return None


def _opaque_call(region: BoundSymbol, call: BoundSymbol, options) -> BoundSymbol | None:
    """The opaque symbol's call that replaces ``region``, which holds ``call`` alone (auto mode, the tuned kernel
    faster), else None."""
    op = BY_NAME[call.sym.name]
    fused = op.call(*call.args)
    if options.fuse.mode(op.spec, fused.shape) != "auto":
        return None
    d = decide_alone(op.spec, fused.cfg, gpu_model())
    record(Choice(op.spec, d.signature, "auto", d.decision, d.describe(), alone=True))
    if d.decision != OPAQUE:
        return None
    outs = call.flat_proxy_outs
    wanted = {o.name for o in region.flat_proxy_outs}
    if op.opaque_y is not None and {o.name for o in outs[1:]}.isdisjoint(wanted):  # the statistics unused
        return segkit_ex.opmap[op.opaque_y].bind(*call.args, *options.symbol_args, output=outs[0])
    return segkit_ex.opmap[op.opaque].bind(*call.args, *options.symbol_args, output=call.output)


def run_alone_opaque(trace: TraceCtx) -> TraceCtx:
    """``trace`` with each region of one fusible call alone replaced by its opaque call where that pays
    (``_opaque_call``); the same trace when none is."""
    alone = {i: call for i, b in enumerate(trace.bound_symbols) if (call := _alone(b)) is not None}
    if not alone or get_compile_data() is None:
        return trace
    options = compile_options()
    swapped = list(trace.bound_symbols)
    for i, call in alone.items():
        swapped[i] = _opaque_call(swapped[i], call, options) or swapped[i]
    if all(a is b for a, b in zip(swapped, trace.bound_symbols)):
        return trace
    new = from_trace(trace)
    new.bound_symbols = swapped
    new.set_provenance(TraceProvenance("segkit: fused calls alone in their region run opaque"))
    return new


def install() -> bool:
    """Run ``run_alone_opaque`` before the rematerialization inside Thunder's nvFuser fusion pass and after the
    pass (once); False where that executor is not loaded (no CUDA or no nvfuser_direct)."""
    global _installed
    if _installed:
        return True
    from thunder.executors.nvfuserex import nvfuserex

    if nvfuserex is None:
        return False
    from thunder.executors import nvfuserex_impl

    ex, rematerialize = nvfuserex_impl.ex, nvfuserex_impl.rematerialize
    original = ex.fusion_pass

    def rematerialize_alone_first(trace: TraceCtx) -> TraceCtx:
        return rematerialize(run_alone_opaque(trace))

    def fusion_pass(trace: TraceCtx) -> TraceCtx:
        return run_alone_opaque(original(trace))

    rematerialize_alone_first.thunder_original = rematerialize
    fusion_pass.thunder_original = original
    nvfuserex_impl.rematerialize = rematerialize_alone_first
    ex.fusion_pass = fusion_pass
    _installed = True
    return True
