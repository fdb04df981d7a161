"""``segkit trace show|compare|idle|breakdown``: read, tabulate and compare recorded traces (nsys, sqlite, chrome
JSON), find where the GPU waits for the host, and where a step's time goes by kind of work."""

from __future__ import annotations

import argparse

from segkit_cli import argtypes
from segkit_cli.parser import Parser, messages

_TABLE_OUTPUT = ("--format json prints one JSON object of tables; --format csv prints one table (--table) "
                 "or writes every table into --csv-dir.")


#: --csv-dir: one NAME.csv per table.
CSV_DIR = argtypes.output_dir_writing("*.csv")


def register(sub) -> None:
    trace = sub.add_parser("trace", help="read, tabulate and compare traces").add_subparsers(
        dest="trace_cmd", required=True, parser_class=Parser)
    p = trace.add_parser("show", help="per-kernel GPU trace and per-range summary", epilog=_TABLE_OUTPUT)
    p.add_argument("report", type=argtypes.trace_file)
    p.add_argument("--range", type=argtypes.name, help="only this NVTX range (by exact name)")
    _add_table_output(p, ["table", "csv", "json", "markdown"])
    p.add_argument("--all-ranges", action="store_true", help="summarise every range, nvFuser's own too")
    p.set_defaults(func=run_show)
    p = trace.add_parser("compare", help="two traces side by side, per range and per kernel", epilog=_TABLE_OUTPUT)
    p.add_argument("a", type=argtypes.trace_file)
    p.add_argument("b", type=argtypes.trace_file)
    p.add_argument("--by", default="range", choices=["range", "kernel", "launch", "section"],
                   help="range: per range; kernel: each kernel's median per range, matched by name; launch: one "
                   "step's launches aligned in order, with totals per kind; section: one step's memory-bound "
                   "kernels summed between its GEMMs and attention kernels, paired by place (the last two for two "
                   "profiles of a model step)")
    p.add_argument("--range", type=argtypes.name, help="only this range (with --by launch or section: the range a "
                   "step is recorded in, default step, as the step table records it; both profiles must have it, "
                   "or --whole)")
    p.add_argument("--whole", action="store_true", help="read a profile without step ranges as one step, from "
                   "its first kernel to its last (its start-up, compiles and idle included; without it such a "
                   "profile is refused)")
    p.goes_with("--whole", "--by", "launch", "section")
    p.add_argument("--top", type=argtypes.positive_int, default=10,
                   help="with --by section: the sections in the largest-deltas table (default 10)")
    p.goes_with("--top", "--by", "section")
    _add_table_output(p, ["table", "markdown", "csv", "json"])
    p.add_argument("--plot", type=argtypes.plot_file, help="write an image (.png, .svg, .pdf): kernel timeline per "
                   "range and kernel time A vs B")
    p.set_defaults(func=run_compare)
    p = trace.add_parser("idle", help="where the GPU waits: gaps between kernels, and which the host caused",
                         epilog=_TABLE_OUTPUT)
    p.add_argument("report", type=argtypes.trace_file)
    p.add_argument("--min-us", type=argtypes.nonnegative_float, default=10.0,
                   help="list gaps of at least this many us (default 10)")
    p.add_argument("--top", type=argtypes.positive_int, default=20,
                   help="at most this many gaps, the longest (default 20)")
    p.add_argument("--step", type=argtypes.name, help="the range a step is recorded in: its lead-in, from its start "
                   "to the first kernel, is in the summary (default: step, as the step table records it)")
    _add_table_output(p, ["table", "markdown", "csv", "json"])
    p.set_defaults(func=run_idle)
    p = trace.add_parser("breakdown", help="where a step's time goes: GEMMs, attention, nvFuser and other "
                         "memory-bound kernels, idle, host lead-in (per step; several profiles side by side)",
                         epilog=_TABLE_OUTPUT)
    p.add_argument("reports", nargs="+", type=argtypes.trace_file, help="profiles (the first is the others' "
                   "reference in the ratio columns)")
    p.add_argument("--step", type=argtypes.name, help="the range each step is recorded in (default: step, as the "
                   "step table records it; a profile without it is refused, or one step with --whole)")
    p.add_argument("--whole", action="store_true", help="read a profile without step ranges as one step, from "
                   "its first kernel to its last (its start-up, compiles and idle included; without it such a "
                   "profile is refused)")
    _add_table_output(p, ["table", "markdown", "csv", "json"])
    p.set_defaults(func=run_breakdown)


def _add_table_output(p: argparse.ArgumentParser, formats: list[str]) -> None:
    p.add_argument("--format", default="table", choices=formats)
    p.add_argument("--table", type=argtypes.name, help="with --format csv: the table to print (default: the first)")
    p.add_argument("--csv-dir", type=CSV_DIR, help="with --format csv: write each table to DIR/NAME.csv")
    p.goes_with("--table", "--format", "csv")
    p.goes_with("--csv-dir", "--format", "csv")


def run_show(args: argparse.Namespace) -> int:
    from segkit.trace import load
    from segkit.trace.report import show_tables, write_tables

    trace = load(args.report)
    write_tables(show_tables(trace, args.range, args.all_ranges), args.format, args.table, args.csv_dir,
                 title=trace.describe())
    return 0


def run_compare(args: argparse.Namespace) -> int:
    from segkit.trace import load
    from segkit.trace.diff import compare_tables
    from segkit.trace.report import write_tables

    if args.plot and args.by == "section":
        from segkit.errors import UsageError

        raise UsageError("--plot draws ranges, kernels or launches; --by section has no plot (its tables are the "
                         "view: --format markdown / csv / json)")
    a, b = load(args.a), load(args.b)
    if args.by in ("launch", "section"):
        tables = _step_tables(args, a, b)
    else:
        tables = compare_tables(a, b, args.by, args.range)
    write_tables(tables, args.format, args.table, args.csv_dir, title=f"A = {a.describe()}\nB = {b.describe()}")
    if args.plot:
        from segkit.trace.plot import plot_compare, plot_kernels

        out = (plot_kernels(tables["launches"], a, b, args.plot) if args.by == "launch"
               else plot_kernels(tables["kernels"], a, b, args.plot) if args.by == "kernel"
               else plot_compare(a, b, args.plot, [args.range] if args.range else None))
        print(f"plot: {out}", file=messages(args))
    return 0


def _step_tables(args: argparse.Namespace, a, b) -> dict[str, list[dict]]:
    """``--by launch`` / ``--by section``: a --range given must be in both profiles, and each must have kernels."""
    from segkit.trace.idle import STEP_RANGE
    from segkit.trace.launches import launch_tables
    from segkit.trace.sections import section_tables

    for path, t in ((args.a, a), (args.b, b)):
        _require_range("--range", args.range, path, t)
        _require_kernels(path, t, "align")
    if args.by == "section":
        return section_tables(a, b, args.range or STEP_RANGE, args.top, args.whole)
    return launch_tables(a, b, args.range or STEP_RANGE, args.whole)


def _require_range(option: str, name: str | None, path, trace) -> None:
    """A range ``option`` names (None: not given) must be in ``trace``: a usage error listing its ranges."""
    if name is not None and not trace.ranges_named(name):
        from segkit.errors import UsageError

        raise UsageError(f"{option} {name!r}: no range named so in {path}; ranges: "
                         f"{', '.join(trace.range_names()[:20]) or 'none'}")


def _require_kernels(path, trace, what: str) -> None:
    if not trace.kernels:
        from segkit.errors import SegkitError

        raise SegkitError(f"{path}: the profile has no kernels: nothing to {what}")


def run_idle(args: argparse.Namespace) -> int:
    from segkit.trace import load
    from segkit.trace.idle import STEP_RANGE, idle_tables
    from segkit.trace.report import write_tables

    trace = load(args.report)
    _require_range("--step", args.step, args.report, trace)  # given, it must be there: no silent summary
    tables = idle_tables(trace, args.min_us, args.top, args.step or STEP_RANGE)
    write_tables(tables, args.format, args.table, args.csv_dir, title=trace.describe())
    return 0


def run_breakdown(args: argparse.Namespace) -> int:
    from segkit.trace import load
    from segkit.trace.breakdown import STEP_RANGE, breakdown_tables, steps
    from segkit.trace.report import write_tables

    step = args.step or STEP_RANGE
    traces = [load(r) for r in args.reports]
    for path, t in zip(args.reports, traces):
        _require_range("--step", args.step, path, t)  # given, it must be there
        _require_kernels(path, t, "break down")
    labels = _labels(args.reports)
    title = "\n".join(f"{label} = {t.describe()}: {len(steps(t, step, args.whole))} step(s)"
                      for label, t in zip(labels, traces))
    write_tables(breakdown_tables(list(zip(labels, traces)), step, args.whole), args.format, args.table, args.csv_dir,
                 title=title)
    return 0


def _labels(paths) -> list[str]:
    """Short column labels: the file names without their trace suffixes, numbered where two are the same."""
    names = [str(p).rsplit("/", 1)[-1].removesuffix(".gz").removesuffix(".json").removesuffix(".sqlite")
             .removesuffix(".nsys-rep") for p in paths]
    return [n if names.count(n) == 1 else f"{n}#{i + 1}" for i, n in enumerate(names)]
