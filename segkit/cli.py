"""``segkit`` command line: repro scripts, bookending, differential checks, profiling and traces.

Errors: every failure prints one line, ``segkit: error: ...``, naming the file, argument or op and what
to do; exit status 2 for a usage error (a bad argument, refused before any long run), 1 for a failure (a
script that does not load, a mismatch, a trace that cannot be read), 0 otherwise. ``--debug`` prints the
traceback too. Output piped into a reader that stops early (``| head``) ends quietly (status 141).

Adding a subcommand: write a module with ``add_parser(subparsers)``, which adds its parser (argument
types from segkit.cliargs) with ``set_defaults(func=run)``, where ``run(args) -> int``; then list the
module in SUBCOMMANDS. Import only the standard library at that module's top level (torch and the rest
inside ``run``): ``segkit --help`` imports every listed module and must stay fast (tests check it).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from segkit import cliargs
from segkit.errors import NvFuserUnavailableError, ReproError, SegkitError, UsageError

#: Modules that each add a subcommand with ``add_parser(subparsers)`` (or several with ``add_parsers``),
#: after the built-in ones.
SUBCOMMANDS: list[str] = ["segkit.segments_cmd", "segkit.reuse_cli", "segkit.tune_cli", "segkit.fuzz.cli"]

EXIT_FAILURE, EXIT_USAGE, EXIT_BROKEN_PIPE = 1, 2, 141


def _nvfuser_available() -> bool:
    from segkit.nvf import nvfuser_available

    return nvfuser_available()


def _load_script(path: str):
    """A repro script recorded into segkit's IR; a fusion with no outputs is refused (nothing to run)."""
    from segkit.repro import load_repro

    repro = load_repro(path)
    if not repro.fd.fusion.outputs:
        raise ReproError(f"{path}: the fusion has no outputs (no fd.add_output(...)): nothing to run or check")
    return repro


def _run_and_compare(fd, make_inputs, label: str) -> bool:
    """Run on the reference interpreter (CPU), and check nvFuser against it when present; True if they agree."""
    from segkit.interp import run_reference

    ref = run_reference(fd, make_inputs("cpu"))
    print(f"[{label}] reference interpreter (cpu): " + ", ".join(f"{tuple(o.shape)} {o.dtype}" for o in ref))
    if not _nvfuser_available():
        print(f"[{label}] nvFuser not available (no CUDA device or nvfuser_direct): reference only")
        return True
    from segkit.check import check

    report = check(fd, make_inputs("cuda"), profile=True)
    run = report.details.get("run")
    if run is not None:
        print(f"[{label}] nvFuser: {run.segments} segment(s) {run.groups}, {run.kernel_count} kernel(s)")
        for k in run.kernels:
            print(f"    {k.name}  {k.scheduler}  {k.time_ms * 1e3:.1f} us  grid {k.grid} block {k.block}  regs {k.registers}")
    print(report)
    return report.ok


def cmd_repro(args: argparse.Namespace) -> int:
    from segkit.printing import format_fusion

    repro = _load_script(args.script)
    print(format_fusion(repro.fd.fusion))
    return 0 if _run_and_compare(repro.fd, repro.make_inputs, args.script) else 1


def cmd_bookend(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from segkit.bookend import HostPlan, bookend, run_plan
    from segkit.compare import compare
    from segkit.experiment import HEADERS, measure_variant
    from segkit.interp import run_reference
    from segkit.printing import format_fusion

    repro = _load_script(args.script)
    plan = bookend(repro.fd, args.policy, args.ops)
    print(plan.describe())
    realized = plan.apply(args.realize)
    if isinstance(realized, HostPlan):
        print("host prologue: " + ", ".join(f"{o.outputs[0].name} = {o.name}" for o in realized.prologue))
        print("host epilogue: " + ", ".join(f"{o.outputs[0].name} = {o.name}" for o in realized.epilogue))
        print("core fusion ops: " + ", ".join(o.name for o in realized.core_ops))
    else:
        print(format_fusion(realized.fusion))
    if args.plot:
        from segkit.segments_cmd import plot_plan

        plot_plan(repro.fd, plan, realized, args.plot)
    cpu = repro.make_inputs("cpu")
    diffs = compare(run_reference(repro.fd, cpu), run_plan(plan, cpu, realization=args.realize))
    print(f"reference check of the {args.realize} realization (cpu): {'ok' if all(d.ok for d in diffs) else 'MISMATCH'}")
    for d in diffs:
        print(f"  {d}")
    if not all(d.ok for d in diffs):
        return EXIT_FAILURE
    if not _nvfuser_available():
        print("nvFuser not available: no GPU measurements")
        return 0
    gpu = repro.make_inputs("cuda")
    refs = run_reference(repro.fd, gpu)
    rows = [measure_variant(repro.fd, gpu, "nvFuser default", None, None, None, refs).row(),
            measure_variant(repro.fd, gpu, f"{args.policy} / {args.realize}", args.policy, args.ops, args.realize,
                            refs).row()]
    print(tabulate(rows, headers=HEADERS))
    return 0 if all(r[1] == "ok" for r in rows) else EXIT_FAILURE


def _load_target(target: str, device: str):
    """A repro script path, or a fusions spec as NAME:CONFIG; returns (fd, inputs)."""
    from pathlib import Path

    if Path(target).exists():
        repro = _load_script(target)
        return repro.fd, repro.make_inputs(device)
    if ":" not in target:
        raise UsageError(f"no such file: {target} (and not a fusions spec NAME:CONFIG)")
    import fusions

    name, cfg = target.split(":", 1)
    try:
        spec = fusions.get(name)
        return spec.build(cfg), list(spec.make_inputs(cfg, device=device).values())
    except KeyError as e:
        raise UsageError(f"{target}: {e.args[0] if e.args else e}") from None


def _require_nvfuser(what: str) -> None:
    if not _nvfuser_available():
        raise NvFuserUnavailableError(f"segkit {what} runs the fusion on nvFuser: it needs a CUDA device and nvfuser_direct")


def cmd_check(args: argparse.Namespace) -> int:
    from segkit.check import check

    _require_nvfuser("check")
    fd, inputs = _load_target(args.target, "cuda")
    tols = dict(args.dtype_tol or [])
    reports = [check(fd, inputs, tol=tols)]
    if args.policy:
        reports += [check(fd, inputs, policy=args.policy, realization=r, tol=tols) for r in ("segment_set", "host")]
    for r in reports:
        print(r)
    return 0 if all(r.ok for r in reports) else EXIT_FAILURE


def cmd_minimize(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    import torch

    from segkit.check import check
    from segkit.interp import random_inputs
    from segkit.minimize import input_shapes, is_symbolic, minimize_as_recorded_if_needed, size_of, specialize
    from segkit.printing import emit_repro

    _require_nvfuser("minimize")
    t0 = time.perf_counter()
    repro = _load_script(args.script)
    inputs = repro.make_inputs("cpu")

    def report(c, cand_shapes=None):
        return check(c, random_inputs(c, "cuda", shapes=cand_shapes), policy=args.policy)

    first = report(specialize(repro.fd, inputs))
    if first.ok and is_symbolic(repro.fd):  # static sizes may hide it: the verdict with the sizes as recorded (-1)
        symbolic = report(repro.fd, input_shapes(inputs))
        if symbolic.error is None and not symbolic.ok:
            print("with static sizes the fusion matches the reference; minimizing it with its sizes kept symbolic")
            first = symbolic
    print(first)
    if first.ok or first.error:
        print("nothing to minimize: " + ("the fusion already matches the reference" if first.ok else "nvFuser fails to run it"))
        return 0
    res = minimize_as_recorded_if_needed(repro.fd, inputs, lambda *c: (r := report(*c)).error is None and not r.ok,
                                         max_seconds=args.max_seconds)
    final = report(res.fd, res.shapes)
    import nvfuser_direct

    seconds = time.perf_counter() - t0
    header = [f"# Minimized by `segkit minimize` from {Path(args.script).name} ({res.start_size[0]} ops) to "
              f"{size_of(res.fd)[0]} ops in {seconds:.0f} s ({res.checks} nvFuser checks)"
              + ("; sizes kept symbolic: with static sizes the failure does not show." if res.shapes else "."),
              f"# On {torch.cuda.get_device_name()}, nvfuser_direct {nvfuser_direct.version()}, torch {torch.__version__}:",
              *[f"#   {line}" for line in str(final).splitlines()],
              f"# Steps: {'; '.join(res.steps)}"]
    args.output.write_text("\n".join(header) + "\n" + emit_repro(res.fd, random_inputs(res.fd, "cpu", shapes=res.shapes)))
    print(f"wrote {args.output}: {size_of(res.fd)[0]} ops, {seconds:.0f} s")
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    import shutil

    from segkit.trace import load
    from segkit.trace.record import profile_command
    from segkit.trace.report import show

    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        raise UsageError("give the command to profile after --, e.g. segkit profile -o run -- python script.py")
    backend = "torch" if args.torch else "nsys"
    if backend == "nsys" and shutil.which("nsys") is None:
        if args.nsys:
            raise UsageError("--nsys: nsys is not on PATH")
        print("nsys not found on PATH: recording with torch.profiler instead")
        backend = "torch"
    report = profile_command(cmd, args.output, backend)
    print(f"report: {report}")
    print(show(load(report)))
    return 0


def cmd_trace_show(args: argparse.Namespace) -> int:
    from segkit.trace import load
    from segkit.trace.report import show_tables, write_tables

    trace = load(args.report)
    write_tables(show_tables(trace, args.range, args.all_ranges), args.format, args.table, args.csv_dir,
                 title=trace.describe())
    return 0


def cmd_trace_compare(args: argparse.Namespace) -> int:
    from segkit.trace import load
    from segkit.trace.diff import compare_tables
    from segkit.trace.report import write_tables

    a, b = load(args.a), load(args.b)
    write_tables(compare_tables(a, b, args.by, args.range), args.format, args.table, args.csv_dir,
                 title=f"A = {a.describe()}\nB = {b.describe()}")
    if args.plot:
        from segkit.trace.plot import plot_compare

        out = plot_compare(a, b, args.plot, [args.range] if args.range else None)
        print(f"plot: {out}", file=sys.stderr if args.format in ("json", "csv") else sys.stdout)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from segkit.demo import main as demo_main

    return demo_main()


class _Parser(argparse.ArgumentParser):
    """argparse with segkit's one-line usage errors (exit 2)."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


_SCRIPT_RUNS = "The script's imports and its fusion function run as Python code: only give scripts you trust."
_TABLE_OUTPUT = ("--format json prints one JSON object of tables; --format csv prints one table (--table) "
                 "or writes every table into --csv-dir.")


def _add_table_output(p: argparse.ArgumentParser, formats: list[str]) -> None:
    p.add_argument("--format", default="table", choices=formats)
    p.add_argument("--table", help="with --format csv: the table to print (default: the first)")
    p.add_argument("--csv-dir", type=cliargs.output_dir, help="with --format csv: write each table to DIR/NAME.csv")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="segkit", description=__doc__.split("\n\n")[0],
                     epilog="Exit status: 0 ok, 1 failure or mismatch, 2 usage error. Limits: "
                            "SEGKIT_MAX_TENSOR_BYTES (reference interpreter, per tensor, default 16G), "
                            "SEGKIT_SCRIPT_TIMEOUT (a script's fusion function, seconds, default 60).")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("repro", help="load a repro script, print its fusion, run it and compare backends",
                       description="Load a repro script, print its fusion, run it on the reference interpreter "
                                   "and, on a GPU, on nvFuser, and check the two agree. " + _SCRIPT_RUNS)
    p.add_argument("script", type=cliargs.script)
    p.set_defaults(func=cmd_repro)
    p = sub.add_parser("bookend", help="plan bookending for a repro script, check it, and measure it on a GPU",
                       description="Plan bookending for a repro script, check the realization against the "
                                   "reference, and measure it on a GPU. " + _SCRIPT_RUNS)
    p.add_argument("script", type=cliargs.script)
    p.add_argument("--policy", default="outputs", choices=["none", "outputs", "inputs+outputs"])
    p.add_argument("--ops", type=cliargs.meta_ops, help="comma-separated meta ops that may be bookended (e.g. slice,squeeze)")
    p.add_argument("--realize", default="segment_set", choices=["segment_set", "host"])
    importlib.import_module("segkit.segments_cmd").add_plot_argument(p)
    p.set_defaults(func=cmd_bookend)
    p = sub.add_parser("check", help="run on nvFuser and the reference interpreter; exit 1 on mismatch",
                       description="Run a fusion on nvFuser and on the reference interpreter, one verdict per "
                                   "output; exit 1 on mismatch. " + _SCRIPT_RUNS)
    p.add_argument("target", type=cliargs.script_or_spec, help="a repro script, or a fusions spec NAME:CONFIG")
    p.add_argument("--policy", choices=["outputs", "inputs+outputs"], help="also check both realizations of this policy")
    p.add_argument("--dtype-tol", action="append", type=cliargs.dtype_tolerance, metavar="DTYPE=TOL",
                   help="relative tolerance, e.g. bf16=2e-2")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("minimize", help="delta-debug a mismatching fusion to a small repro script",
                       description="Delta-debug a mismatching fusion to a small repro script. " + _SCRIPT_RUNS)
    p.add_argument("script", type=cliargs.script)
    p.add_argument("-o", "--output", required=True, type=cliargs.output_file)
    p.add_argument("--policy", choices=["outputs", "inputs+outputs"], help="minimize the mismatch of this realization")
    p.add_argument("--max-seconds", type=cliargs.positive_float, default=900)
    p.set_defaults(func=cmd_minimize)
    p = sub.add_parser("profile", help="run a command under nsys (or torch.profiler) and print its trace summary")
    rec = p.add_mutually_exclusive_group()
    rec.add_argument("--nsys", action="store_true", help="require nsys")
    rec.add_argument("--torch", action="store_true", help="record with torch.profiler (python scripts)")
    p.add_argument("-o", "--output", default="segkit-profile", type=cliargs.output_dir, help="report directory")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command ...")
    p.set_defaults(func=cmd_profile)
    trace = sub.add_parser("trace", help="read, tabulate and compare traces").add_subparsers(
        dest="trace_cmd", required=True, parser_class=_Parser)
    p = trace.add_parser("show", help="per-kernel GPU trace and per-range summary", epilog=_TABLE_OUTPUT)
    p.add_argument("report", type=cliargs.trace_file)
    p.add_argument("--range", help="only this NVTX range (by exact name)")
    _add_table_output(p, ["table", "csv", "json", "markdown"])
    p.add_argument("--all-ranges", action="store_true", help="summarise every range, nvFuser's own too")
    p.set_defaults(func=cmd_trace_show)
    p = trace.add_parser("compare", help="two traces side by side, per range and per kernel", epilog=_TABLE_OUTPUT)
    p.add_argument("a", type=cliargs.trace_file)
    p.add_argument("b", type=cliargs.trace_file)
    p.add_argument("--by", default="range", choices=["range", "kernel"])
    p.add_argument("--range", help="only this range")
    _add_table_output(p, ["table", "markdown", "csv", "json"])
    p.add_argument("--plot", type=cliargs.plot_file, help="write an image (.png, .svg, .pdf): kernel timeline per "
                   "range and kernel time A vs B")
    p.set_defaults(func=cmd_trace_compare)
    p = sub.add_parser("demo", help="the main job: the bundled fusions on the reference (and nvFuser on a GPU)")
    p.set_defaults(func=cmd_demo)
    for name in SUBCOMMANDS:
        module = importlib.import_module(name)
        (module.add_parser if hasattr(module, "add_parser") else module.add_parsers)(sub)
    return parser


def _quiet_broken_pipe() -> int:
    """The reader of our output went away (``| head``): stop writing, without a traceback at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout replaced by an object without a file descriptor
        pass
    return EXIT_BROKEN_PIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (usage errors included: argparse's exit is caught)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    own = argv.index("--") if "--" in argv else len(argv)  # after "--": a profiled command's own arguments
    debug = "--debug" in argv[:own]
    argv = [a for i, a in enumerate(argv) if i >= own or a != "--debug"]  # --debug goes anywhere before "--"
    try:
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as e:  # --help (0) or a usage error (2), already printed
            return e.code if isinstance(e.code, int) else EXIT_USAGE
        status = args.func(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except KeyboardInterrupt:
        print("segkit: interrupted", file=sys.stderr)
        return 130
    except Exception as e:
        if debug:
            import traceback

            traceback.print_exc()
        code = EXIT_USAGE if isinstance(e, UsageError) else EXIT_FAILURE
        if isinstance(e, SegkitError):
            print(f"segkit: error: {_one_line(e)}", file=sys.stderr)
        else:
            print(f"segkit: error: {type(e).__name__}: {_one_line(e)} (an unexpected error in segkit: please "
                  "report it; --debug shows the traceback)", file=sys.stderr)
        return code


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 1000 else text[:997] + "..."


if __name__ == "__main__":
    sys.exit(main())
