"""Profiling harness: record (nsys or torch.profiler), load into one Trace model, tabulate, compare, plot.

``capture`` and ``range`` load on first use (they need torch and nvtx; reading a trace does not)."""

from __future__ import annotations

from pathlib import Path

from segkit.args import checked
from segkit.trace.model import ApiCall, Kernel, Range, Trace, TraceError


@checked
def load(path: str | Path) -> Trace:
    """A Trace from an nsys report (.nsys-rep, exported with nsys; or .sqlite) or a torch.profiler chrome trace
    (.json, .json.gz). The format is read from the file's bytes (segkit.trace.formats): a suffix that promises
    another, or a file of none, is a TraceError naming it."""
    from segkit.trace.formats import GZIP, JSON, SQLITE, check_suffix, sniff

    p = Path(path)
    if not p.exists():
        raise TraceError(f"{p}: no such file")
    if p.is_dir():
        raise TraceError(f"{p}: a directory, not a trace file")
    fmt = sniff(p)
    check_suffix(p, fmt)
    if fmt == SQLITE:
        from segkit.trace.nsys import load_sqlite

        return load_sqlite(p)
    if fmt in (JSON, GZIP):
        from segkit.trace.chrome import load_chrome

        return load_chrome(p)
    from segkit.trace.nsys import export_sqlite, load_sqlite  # .nsys-rep: nsys's own format

    return load_sqlite(export_sqlite(p))


__all__ = ["ApiCall", "Kernel", "Range", "Trace", "TraceError", "capture", "load", "range"]


def __getattr__(name: str):
    if name in ("capture", "range"):
        from segkit.trace import record

        return getattr(record, name)
    raise AttributeError(f"module 'segkit.trace' has no attribute {name!r}")
