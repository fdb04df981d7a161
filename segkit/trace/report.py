"""Tables: the per-kernel GPU trace (like ``nsys nvprof --print-gpu-trace``) and per-range summaries."""

from __future__ import annotations

import csv
import io
import json
import sys
from collections import Counter
from pathlib import Path

from tabulate import tabulate

from segkit.errors import UsageError
from segkit.results import validate
from segkit.trace.model import Range, Trace, median_ns

FORMATS = ("table", "csv", "json", "markdown")


def _xyz(v) -> str:
    return "-" if v is None else "[" + ",".join(str(x) for x in v) + "]"


def gpu_trace_rows(trace: Trace, range_name: str | None = None) -> list[dict]:
    kernels = trace.kernels if range_name is None else [k for r in trace.ranges_named(range_name) for k in r.kernels]
    t0 = trace.kernels[0].start_ns if trace.kernels else 0
    return [{"start_us": (k.start_ns - t0) / 1e3, "duration_us": k.duration_ns / 1e3, "grid": _xyz(k.grid),
             "block": _xyz(k.block), "regs": k.registers_per_thread, "static_smem": k.static_smem,
             "dynamic_smem": k.dynamic_smem, "stream": k.stream, "name": k.name} for k in kernels]


def range_summary(ranges: list[Range]) -> dict:
    """Kernel count, total and median kernel time, wall time, launch overhead and top kernels of a range's instances."""
    kernel = [r.kernel_ns for r in ranges]
    wall = [r.wall_ns for r in ranges]
    by_name = Counter()
    for r in ranges:
        for k in r.kernels:
            by_name[k.key] += k.duration_ns
    return {
        "range": ranges[0].name, "instances": len(ranges),
        "kernels_per_instance": sum(len(r.kernels) for r in ranges) / len(ranges),
        "kernel_us_total": sum(kernel) / 1e3, "kernel_us_median": median_ns(kernel) / 1e3,
        "wall_us_median": median_ns(wall) / 1e3,
        "launch_overhead_us_median": median_ns([w - k for w, k in zip(wall, kernel)]) / 1e3,
        "top_kernels": ", ".join(f"{n} {t / 1e3 / len(ranges):.1f}us" for n, t in by_name.most_common(3)),
    }


def range_rows(trace: Trace, range_name: str | None = None, all_ranges: bool = False) -> list[dict]:
    names = [range_name] if range_name else trace.range_names() if all_ranges else trace.user_range_names()
    rows = [range_summary(trace.ranges_named(n)) for n in names if trace.ranges_named(n)]
    if range_name and not rows:
        raise UsageError(f"no range named {range_name!r} in {trace.source}; ranges: {_some(trace.range_names())}")
    return rows


def _some(names: list[str], n: int = 20) -> str:
    return (", ".join(names[:n]) + (f", ... ({len(names)} in all)" if len(names) > n else "")) or "none"


def render(rows: list[dict], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(rows, indent=1)
    if fmt == "csv":
        buf = io.StringIO()
        if rows:
            w = csv.DictWriter(buf, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        return buf.getvalue()
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}")
    return tabulate(rows, headers="keys", tablefmt="github" if fmt == "markdown" else "simple", floatfmt=".2f")


def notes_table(*traces: Trace) -> list[dict]:
    """What each trace lacked, as a table (one row per note)."""
    return [{"trace": t.source, "note": m} for t in traces for m in t.missing]


def show_tables(trace: Trace, range_name: str | None = None, all_ranges: bool = False) -> dict[str, list[dict]]:
    """The views of one trace as named tables: kernels (GPU trace), ranges (summaries), notes."""
    return {"kernels": gpu_trace_rows(trace, range_name), "ranges": range_rows(trace, range_name, all_ranges),
            "notes": notes_table(trace)}


def format_tables(tables: dict[str, list[dict]], fmt: str = "table", table: str | None = None,
                  title: str = "") -> str:
    """``json``: one JSON object of tables; ``csv``: one table (``table``, default the first);
    ``table`` / ``markdown``: the title, notes, then each table, an empty one said in words."""
    _check_table(tables, table)
    validate(tables, "tables")
    if fmt == "json":
        return json.dumps(tables, indent=1)
    if fmt == "csv":
        return render(tables[table or next(iter(tables))], "csv")
    if fmt not in FORMATS:
        raise UsageError(f"format must be one of {', '.join(FORMATS)}")
    parts = [title] if title else []
    parts += [f"note: {r['note']}" for r in tables.get("notes", [])]
    for name, rows in tables.items():
        if name == "notes" or (table is not None and name != table):
            continue
        parts.append(render(rows, fmt) if rows else f"({name}: none)")
    return "\n\n".join(parts)


def _check_table(tables: dict[str, list[dict]], table: str | None) -> None:
    """A table asked for (``--table``) must be one of ``tables``: a usage error listing them."""
    if table is not None and table not in tables:
        raise UsageError(f"--table {table!r}: no such table; tables: {', '.join(tables)}")


def write_tables(tables: dict[str, list[dict]], fmt: str, table: str | None = None, csv_dir: Path | None = None,
                 title: str = "") -> None:
    """Print the tables (see format_tables), or with ``csv_dir`` write each as DIR/NAME.csv and list them."""
    if fmt != "csv" and csv_dir is not None:
        raise UsageError("--csv-dir goes with --format csv")
    if csv_dir is None:
        text = format_tables(tables, fmt, table, title)
        print(text, end="" if text.endswith("\n") else "\n")  # a CSV ends in its own newline: no empty row
        return
    _check_table(tables, table)  # before the folder is made: a table not there writes nothing and says so
    validate(tables, "tables")
    csv_dir.mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        if table is None or name == table:
            out = csv_dir / f"{name}.csv"
            out.write_text(render(rows, "csv"))
            print(f"wrote {out} ({len(rows)} rows)", file=sys.stderr)  # stdout is for data (--format csv)


def show(trace: Trace, range_name: str | None = None, fmt: str = "table", all_ranges: bool = False) -> str:
    """``show_tables`` formatted (see format_tables)."""
    return format_tables(show_tables(trace, range_name, all_ranges), fmt, title=trace.describe())
