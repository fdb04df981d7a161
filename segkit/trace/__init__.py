"""Profiling harness: record (nsys or torch.profiler), load into one Trace model, tabulate, compare, plot.

``capture`` and ``range`` load on first use (they need torch and nvtx; reading a trace does not)."""

from __future__ import annotations

from pathlib import Path

from segkit.args import checked
from segkit.trace.model import ApiCall, Kernel, Range, Trace, TraceError


@checked
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


def __getattr__(name: str):
    if name in ("capture", "range"):
        from segkit.trace import record

        return getattr(record, name)
    raise AttributeError(f"module 'segkit.trace' has no attribute {name!r}")
