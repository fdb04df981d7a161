"""Trace capture for ``segkit regions`` (segkit.regions: where a Thunder program is cut between its fusion
regions) from a live ``thunder.jit``'ed function: save its final forward and backward execution traces as the
files the command reads, or analyse them directly (``regions(jfn)``); ``CallRanges`` marks each call for a
profile (``segkit regions --profile``).

Thunder prints no type for the outputs of a call returning several tensors (``(y, rstd) = segkit_rms_norm_fwd(..)``),
so a saved trace ends with a comment block giving the type of every tensor its top-level calls take or make, in
Thunder's own type-comment form; the file stays the Python Thunder printed.
"""

from __future__ import annotations

from pathlib import Path

import thunder
import torch
from thunder.core import codeutils
from thunder.core.proxies import TensorProxy
from thunder.core.trace import TraceProvenance, from_trace
from thunder.core.transform_common import Transform
from thunder.dev_utils.utils import NON_COMPUTATION_PRIMS
from thunder.extend import OperatorExecutor

from segkit.regions import CostModel, RegionsReport, analyze, cost_model
from segkit.regions.parse import call_key

TYPES_HEADER = "# segkit regions: the type of every tensor of the trace's calls (Thunder prints none for a call with several outputs)"


def _typed_source(trace) -> str:
    seen: dict[str, str] = {}
    for bsym in trace.bound_symbols:
        for p in (*bsym.flat_proxy_args, *bsym.flat_proxy_outs):
            if isinstance(p, TensorProxy):
                seen.setdefault(p.name, codeutils.prettyprint(p, with_type=True))
    return f"{trace}\n{TYPES_HEADER}\n" + "".join(f"# {t}\n" for t in seen.values())


def final_traces(jfn) -> list[tuple[str, str]]:
    """(kind, source) of ``jfn``'s last forward and, if it has one, backward execution trace; ``jfn`` must have
    been called (that is when Thunder makes them)."""
    try:
        fwd = thunder.last_traces(jfn)
    except TypeError as e:
        raise TypeError(f"no execution trace to read: {e} (call the jitted function once first)") from None
    out = [("fwd", _typed_source(fwd[-1]))]
    bwd = thunder.last_backward_traces(jfn)
    if bwd:
        out.append(("bwd", _typed_source(bwd[-1])))
    return out


def save_traces(jfn, directory: str | Path, stem: str = "trace") -> list[Path]:
    """Write ``jfn``'s final forward (``STEM.fwd.py``) and backward (``STEM.bwd.py``) execution traces into
    ``directory`` (made if missing), as ``segkit regions`` reads them; returns the paths, forward first."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for kind, source in final_traces(jfn):
        path = directory / f"{stem}.{kind}.py"
        path.write_text(source)
        paths.append(path)
    return paths


def regions(jfn, gpu: str = "h100", step_ms: float | None = None, model: CostModel | None = None) -> RegionsReport:
    """The regions and cuts of ``jfn``'s final traces (what ``segkit regions`` prints for the saved files), under
    ``model`` or the default cost model of ``gpu``; ``step_ms``: the measured step, for the fused estimate."""
    cd = thunder.compile_data(jfn)
    fn = cd.fn if cd is not None else jfn
    name = getattr(fn, "__name__", type(fn).__name__)
    return analyze([(f"{name}.{kind}", src) for kind, src in final_traces(jfn)], model or cost_model(gpu), step_ms)


_OPEN_RANGES: list[torch.profiler.record_function] = []  # the ranges of the calls running now, innermost last


def _range_enter(name: str) -> None:
    r = torch.profiler.record_function(name)
    r.__enter__()
    _OPEN_RANGES.append(r)


def _range_exit() -> None:
    _OPEN_RANGES.pop().__exit__(None, None, None)


ranges_ex = OperatorExecutor("segkit_call_ranges")
range_enter = ranges_ex.register_operator("segkit_range_enter", meta=lambda name: None, fn=_range_enter)
range_exit = ranges_ex.register_operator("segkit_range_exit", meta=lambda: None, fn=_range_exit)


class CallRanges(Transform):
    """A torch.profiler range around every call of the final forward and backward traces that makes a tensor
    (regions and cuts), named by the call's printed line, so that ``segkit regions --profile`` finds each cut's
    kernels and host time: ``thunder.jit(model, executors=..., transforms=[CallRanges()])``, then profile steps
    with ``segkit.trace.capture(path)``. Only for profiling: each call gains a range's host time."""

    def transform_trace_post_optimization(self, trace, **kwargs):
        out = from_trace(trace)
        for bsym in trace.bound_symbols:
            if bsym.sym.id in NON_COMPUTATION_PRIMS or not any(isinstance(p, TensorProxy) for p in bsym.flat_proxy_outs):
                out.bound_symbols.append(bsym)
                continue
            out.bound_symbols += [range_enter.bind(call_key(bsym.python(indent=0)[0]), output=None), bsym,
                                  range_exit.bind(output=None)]
        out.set_provenance(TraceProvenance("segkit CallRanges (a profiler range per call)"))
        return out
