"""``segkit reuse SCRIPT``: plan reduction reuse for a repro script (or a fusions spec NAME:CONFIG), check the
rewritten fusion against the reference interpreter, and on a GPU measure it next to the original on nvFuser."""

from __future__ import annotations

import argparse

from segkit_cli import argtypes, targets
from segkit_cli.parser import EXIT_FAILURE


def register(sub) -> None:
    p = sub.add_parser("reuse", help="feed wider reductions from narrower ones; check, and measure on a GPU")
    p.add_argument("target", type=argtypes.script_or_spec, help="a repro script, or a fusions spec NAME:CONFIG")
    targets.add_fusion_option(p)
    p.add_argument("--inner-outer", choices=["outer", "inner"],
                   help="also pair a max/min over the trailing dims with one over the leading dims (nvFuser's "
                        "inner-outer pattern); the side that reads the clipped value")
    p.add_argument("--reps", type=argtypes.positive_int, default=50, help="host wall-time repetitions per variant on the GPU")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from segkit.compare import compare
    from segkit.interp import run_reference
    from segkit.printing import format_fusion
    from segkit.reuse import reuse_reductions

    fd, cpu = targets.load_target(args.target, "cpu", args.fusion)
    plan = reuse_reductions(fd, inner_outer=args.inner_outer)
    print(plan.describe())
    if not plan.changed:
        return 0
    new = plan.apply()
    print(format_fusion(new.fusion))
    diffs = compare(run_reference(fd, cpu), run_reference(new, cpu))
    ok = all(d.ok for d in diffs)
    print(f"reference check of the rewritten fusion (cpu): {'ok' if ok else 'MISMATCH'}")
    if not ok:
        for d in diffs:
            print(f"  {d}")
        return EXIT_FAILURE
    if not targets.nvfuser_available():
        print("nvFuser not available: no GPU measurements")
        return 0
    from tabulate import tabulate

    from segkit.experiment import HEADERS, measure_variant

    _, gpu = targets.load_target(args.target, "cuda", args.fusion)
    refs = run_reference(fd, gpu)
    rows = [measure_variant(fd, gpu, "original", None, None, None, refs, args.reps).row(),
            measure_variant(new, gpu, "reductions reused", None, None, None, refs, args.reps).row()]
    print(tabulate(rows, headers=HEADERS))
    return 0 if all(r[1] == "ok" for r in rows) else EXIT_FAILURE
