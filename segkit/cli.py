"""``segkit`` command line: repro scripts and the demo."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from segkit.compare import compare
from segkit.errors import SegkitError
from segkit.trace.model import TraceError
from segkit.interp import run_reference
from segkit.nvf import nvfuser_available
from segkit import reuse_cli, segments_cmd
from segkit.repro import format_fusion, load_repro


def _run_and_compare(fd, make_inputs, label: str) -> bool:
    """Run on the reference interpreter (CPU), and check nvFuser against it when present; True if they agree."""
    ref = run_reference(fd, make_inputs("cpu"))
    print(f"[{label}] reference interpreter (cpu): " + ", ".join(f"{tuple(o.shape)} {o.dtype}" for o in ref))
    if not nvfuser_available():
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
    repro = load_repro(args.script)
    print(format_fusion(repro.fd.fusion))
    return 0 if _run_and_compare(repro.fd, repro.make_inputs, args.script) else 1


def cmd_bookend(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from segkit.bookend import HostPlan, bookend, run_plan
    from segkit.experiment import HEADERS, measure_variant

    repro = load_repro(args.script)
    ops = set(args.ops.split(",")) if args.ops else None
    plan = bookend(repro.fd, args.policy, ops)
    print(plan.describe())
    realized = plan.apply(args.realize)
    if isinstance(realized, HostPlan):
        print("host prologue: " + ", ".join(f"{o.outputs[0].name} = {o.name}" for o in realized.prologue))
        print("host epilogue: " + ", ".join(f"{o.outputs[0].name} = {o.name}" for o in realized.epilogue))
        print("core fusion ops: " + ", ".join(o.name for o in realized.core_ops))
    else:
        print(format_fusion(realized.fusion))
    if args.plot:
        segments_cmd.plot_plan(repro.fd, plan, realized, args.plot)
    cpu = repro.make_inputs("cpu")
    diffs = compare(run_reference(repro.fd, cpu), run_plan(plan, cpu, realization=args.realize))
    print(f"reference check of the {args.realize} realization (cpu): {'ok' if all(d.ok for d in diffs) else 'MISMATCH'}")
    if not all(d.ok for d in diffs):
        return 1
    if not nvfuser_available():
        print("nvFuser not available: no GPU measurements")
        return 0
    gpu = repro.make_inputs("cuda")
    refs = run_reference(repro.fd, gpu)
    rows = [measure_variant(repro.fd, gpu, "nvFuser default", None, None, None, refs).row(),
            measure_variant(repro.fd, gpu, f"{args.policy} / {args.realize}", args.policy, ops, args.realize, refs).row()]
    print(tabulate(rows, headers=HEADERS))
    return 0 if all(r[1] == "ok" for r in rows) else 1


def _load_target(target: str, device: str):
    """A repro script path, or a fusions spec as NAME:CONFIG; returns (fd, inputs)."""
    from pathlib import Path

    if Path(target).exists():
        repro = load_repro(target)
        return repro.fd, repro.make_inputs(device)
    if ":" in target:
        import fusions

        name, cfg = target.split(":", 1)
        spec = fusions.get(name)
        return spec.build(cfg), list(spec.make_inputs(cfg, device=device).values())
    raise SegkitError(f"{target}: no such script, and not a fusions spec NAME:CONFIG")


def _tolerances(items: list[str]) -> dict:
    import torch

    out = {}
    for item in items or []:
        name, _, value = item.partition("=")
        dtype = getattr(torch, {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}.get(name, name), None)
        if not isinstance(dtype, torch.dtype) or not value:
            raise SegkitError(f"--dtype-tol takes DTYPE=VALUE (e.g. bf16=2e-2), got {item!r}")
        out[dtype] = float(value)
    return out


def _require_nvfuser(what: str) -> None:
    if not nvfuser_available():
        from segkit.errors import NvFuserUnavailableError

        raise NvFuserUnavailableError(f"segkit {what} runs the fusion on nvFuser: it needs a CUDA device and nvfuser_direct")


def cmd_check(args: argparse.Namespace) -> int:
    from segkit.check import check

    _require_nvfuser("check")
    fd, inputs = _load_target(args.target, "cuda")
    tols = _tolerances(args.dtype_tol)
    reports = [check(fd, inputs, tol=tols)]
    if args.policy:
        reports += [check(fd, inputs, policy=args.policy, realization=r, tol=tols) for r in ("segment_set", "host")]
    for r in reports:
        print(r)
    return 0 if all(r.ok for r in reports) else 1


def cmd_minimize(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    import torch

    from segkit.check import check
    from segkit.interp import random_inputs
    from segkit.minimize import minimize, size_of, specialize
    from segkit.repro import emit_repro

    _require_nvfuser("minimize")
    t0 = time.perf_counter()
    repro = load_repro(args.script)
    fd = specialize(repro.fd, repro.make_inputs("cpu"))

    def report(c):
        return check(c, random_inputs(c, "cuda"), policy=args.policy)

    first = report(fd)
    print(first)
    if first.ok or first.error:
        print("nothing to minimize: " + ("the fusion already matches the reference" if first.ok else "nvFuser fails to run it"))
        return 0
    res = minimize(fd, lambda c: (r := report(c)).error is None and not r.ok, max_seconds=args.max_seconds)
    final = report(res.fd)
    import nvfuser_direct

    seconds = time.perf_counter() - t0
    header = [f"# Minimized by `segkit minimize` from {Path(args.script).name} ({res.start_size[0]} ops) to "
              f"{size_of(res.fd)[0]} ops in {seconds:.0f} s ({res.checks} nvFuser checks).",
              f"# On {torch.cuda.get_device_name()}, nvfuser_direct {nvfuser_direct.version()}, torch {torch.__version__}:",
              *[f"#   {line}" for line in str(final).splitlines()],
              f"# Steps: {'; '.join(res.steps)}"]
    Path(args.output).write_text("\n".join(header) + "\n" + emit_repro(res.fd, random_inputs(res.fd, "cpu")))
    print(f"wrote {args.output}: {size_of(res.fd)[0]} ops, {seconds:.0f} s")
    return 0


def cmd_profile(args: argparse.Namespace) -> int:
    import shutil
    from pathlib import Path

    from segkit.trace import load
    from segkit.trace.record import profile_command
    from segkit.trace.report import show

    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        print("segkit: error: give the command to profile after --", file=sys.stderr)
        return 2
    backend = "torch" if args.torch else "nsys"
    if backend == "nsys" and shutil.which("nsys") is None:
        if args.nsys:
            print("segkit: error: nsys is not on PATH", file=sys.stderr)
            return 2
        print("nsys not found on PATH: recording with torch.profiler instead")
        backend = "torch"
    report = profile_command(cmd, Path(args.output), backend)
    print(f"report: {report}")
    print(show(load(report)))
    return 0


def cmd_trace_show(args: argparse.Namespace) -> int:
    from segkit.trace import load
    from segkit.trace.report import show

    print(show(load(args.report), args.range, args.format, args.all_ranges))
    return 0


def cmd_trace_compare(args: argparse.Namespace) -> int:
    from pathlib import Path

    from segkit.trace import load
    from segkit.trace.diff import compare as compare_traces
    from segkit.trace.plot import plot_compare

    a, b = load(args.a), load(args.b)
    print(compare_traces(a, b, args.by, args.format, args.range))
    if args.plot:
        print(f"plot: {plot_compare(a, b, Path(args.plot), [args.range] if args.range else None)}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from segkit.demo import main as demo_main

    return demo_main()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="segkit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("repro", help="load a repro script, print its fusion, run it and compare backends")
    p.add_argument("script")
    p.set_defaults(func=cmd_repro)
    p = sub.add_parser("bookend", help="plan bookending for a repro script, check it, and measure it on a GPU")
    p.add_argument("script")
    p.add_argument("--policy", default="outputs", choices=["none", "outputs", "inputs+outputs"])
    p.add_argument("--ops", help="comma-separated meta ops that may be bookended (e.g. slice,squeeze)")
    p.add_argument("--realize", default="segment_set", choices=["segment_set", "host"])
    segments_cmd.add_plot_argument(p)
    p.set_defaults(func=cmd_bookend)
    p = sub.add_parser("check", help="run on nvFuser and the reference interpreter; exit 1 on mismatch")
    p.add_argument("target", help="a repro script, or a fusions spec NAME:CONFIG")
    p.add_argument("--policy", choices=["outputs", "inputs+outputs"], help="also check both realizations of this policy")
    p.add_argument("--dtype-tol", action="append", metavar="DTYPE=TOL", help="relative tolerance, e.g. bf16=2e-2")
    p.set_defaults(func=cmd_check)
    p = sub.add_parser("minimize", help="delta-debug a mismatching fusion to a small repro script")
    p.add_argument("script")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--policy", choices=["outputs", "inputs+outputs"], help="minimize the mismatch of this realization")
    p.add_argument("--max-seconds", type=float, default=900)
    p.set_defaults(func=cmd_minimize)
    p = sub.add_parser("profile", help="run a command under nsys (or torch.profiler) and print its trace summary")
    rec = p.add_mutually_exclusive_group()
    rec.add_argument("--nsys", action="store_true", help="require nsys")
    rec.add_argument("--torch", action="store_true", help="record with torch.profiler (python scripts)")
    p.add_argument("-o", "--output", default="segkit-profile", help="report directory")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command ...")
    p.set_defaults(func=cmd_profile)
    trace = sub.add_parser("trace", help="read, tabulate and compare traces").add_subparsers(dest="trace_cmd", required=True)
    p = trace.add_parser("show", help="per-kernel GPU trace and per-range summary")
    p.add_argument("report")
    p.add_argument("--range", help="only this NVTX range (by exact name)")
    p.add_argument("--format", default="table", choices=["table", "csv", "json", "markdown"])
    p.add_argument("--all-ranges", action="store_true", help="summarise every range, nvFuser's own too")
    p.set_defaults(func=cmd_trace_show)
    p = trace.add_parser("compare", help="two traces side by side, per range and per kernel")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--by", default="range", choices=["range", "kernel"])
    p.add_argument("--range", help="only this range")
    p.add_argument("--format", default="table", choices=["table", "markdown", "csv", "json"])
    p.add_argument("--plot", help="write a PNG: kernel timeline per range and kernel time A vs B")
    p.set_defaults(func=cmd_trace_compare)
    segments_cmd.add_parsers(sub)
    reuse_cli.add_parser(sub)
    p = sub.add_parser("demo", help="the main job: the bundled fusions on the reference (and nvFuser on a GPU)")
    p.set_defaults(func=cmd_demo)
    from segkit import tune
    tune.add_parser(sub)
    sub.choices["tune"].set_defaults(func=tune.run)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (SegkitError, TraceError, KeyError) as e:
        print(f"segkit: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
