"""``segkit regions`` for a live ``thunder.jit``'ed function: save its final forward and backward execution traces
as the files the command reads, or analyse them directly (segkit.regions).

Thunder prints no type for the outputs of a call returning several tensors (``(y, rstd) = segkit_rms_norm_fwd(..)``),
so a saved trace ends with a comment block giving the type of every tensor its top-level calls take or make, in
Thunder's own type-comment form; the file stays the Python Thunder printed.
"""

from __future__ import annotations

from pathlib import Path

import thunder
from thunder.core import codeutils
from thunder.core.proxies import TensorProxy

from segkit.regions import CostModel, RegionsReport, analyze, cost_model

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
    return analyze([(f"{jfn_name(jfn)}.{kind}", src) for kind, src in final_traces(jfn)],
                   model or cost_model(gpu), step_ms)


def jfn_name(jfn) -> str:
    fn = getattr(jfn, "_lc_cd", None)
    fn = getattr(fn, "fn", None) or jfn
    return getattr(fn, "__name__", type(fn).__name__)
