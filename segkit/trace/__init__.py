"""Profiling harness: record (nsys or torch.profiler), load into one Trace model, tabulate, compare, plot."""

from __future__ import annotations

from pathlib import Path

from segkit.trace.model import ApiCall, Kernel, Range, Trace, TraceError
from segkit.trace.record import capture, range


def load(path: str | Path) -> Trace:
    """A Trace from an nsys report (.nsys-rep, exported with nsys; or .sqlite) or a torch.profiler chrome trace."""
    p = Path(path)
    if not p.exists():
        raise TraceError(f"{p}: no such file")
    if p.suffix == ".nsys-rep":
        from segkit.trace.nsys import export_sqlite, load_sqlite

        return load_sqlite(export_sqlite(p))
    if p.suffix in (".sqlite", ".db"):
        from segkit.trace.nsys import load_sqlite

        return load_sqlite(p)
    if p.name.endswith((".json", ".json.gz")):
        from segkit.trace.chrome import load_chrome

        return load_chrome(p)
    raise TraceError(f"{p}: unknown trace type (expected .nsys-rep, .sqlite, .json or .json.gz)")


__all__ = ["ApiCall", "Kernel", "Range", "Trace", "TraceError", "capture", "load", "range"]
