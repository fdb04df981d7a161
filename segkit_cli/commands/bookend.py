"""``segkit bookend SCRIPT``: plan bookending for a repro script, check the realization against the reference
interpreter, and on a GPU measure it next to nvFuser's default segmentation."""

from __future__ import annotations

import argparse

from segkit_cli import argtypes, targets
from segkit_cli.parser import EXIT_FAILURE, SCRIPT_RUNS


def register(sub) -> None:
    p = sub.add_parser("bookend", help="plan bookending for a repro script, check it, and measure it on a GPU",
                       description="Plan bookending for a repro script, check the realization against the "
                                   "reference, and measure it on a GPU. " + SCRIPT_RUNS)
    p.add_argument("script", type=argtypes.script)
    targets.add_fusion_option(p)
    p.add_argument("--policy", default="outputs", choices=["none", "outputs", "inputs+outputs"])
    p.add_argument("--ops", type=argtypes.meta_ops, help="comma-separated meta ops that may be bookended (e.g. slice,squeeze)")
    p.add_argument("--realize", default="segment_set", choices=["segment_set", "host"])
    p.add_argument("--plot", metavar="STEM", type=argtypes.plot_stem,
                   help="draw the plan before and after: STEM.dot, STEM.png, STEM.svg")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from segkit.bookend import HostPlan, bookend, run_plan
    from segkit.compare import compare
    from segkit.experiment import HEADERS, measure_variant
    from segkit.interp import run_reference
    from segkit.printing import format_fusion

    repro = targets.load_script(args.script, args.fusion)
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
        from segkit_cli.commands.segments import plot_plan

        plot_plan(repro.fd, plan, realized, args.plot)
    cpu = repro.make_inputs("cpu")
    diffs = compare(run_reference(repro.fd, cpu), run_plan(plan, cpu, realization=args.realize))
    print(f"reference check of the {args.realize} realization (cpu): {'ok' if all(d.ok for d in diffs) else 'MISMATCH'}")
    for d in diffs:
        print(f"  {d}")
    if not all(d.ok for d in diffs):
        return EXIT_FAILURE
    if not targets.nvfuser_available():
        print("nvFuser not available: no GPU measurements")
        return 0
    gpu = repro.make_inputs("cuda")
    refs = run_reference(repro.fd, gpu)
    rows = [measure_variant(repro.fd, gpu, "nvFuser default", None, None, None, refs).row(),
            measure_variant(repro.fd, gpu, f"{args.policy} / {args.realize}", args.policy, args.ops, args.realize,
                            refs).row()]
    print(tabulate(rows, headers=HEADERS))
    return 0 if all(r[1] == "ok" for r in rows) else EXIT_FAILURE
