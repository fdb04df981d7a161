"""``segkit segments TARGET``: why nvFuser segmented a fusion, mapped to your ops, as text and a picture; and the
picture of a bookend plan that ``segkit bookend --plot`` draws."""

from __future__ import annotations

import argparse

from segkit_cli import argtypes, targets

#: --emit-dir: the per-segment repros segkit.segments.segment_repros writes.
EMIT_DIR = argtypes.output_dir_writing("segment*.py")
TARGET_HELP = "a repro script (nvFuser's, or a region Thunder captured), or a fusions spec NAME:CONFIG"


def register(sub) -> None:
    p = sub.add_parser("segments", help="nvFuser's segments mapped to your ops: cost, reasons, per-segment repros")
    p.add_argument("target", type=argtypes.script_or_spec, help=TARGET_HELP)
    targets.add_fusion_option(p)
    p.add_argument("--emit-dir", type=EMIT_DIR,
                   help="write one runnable nvfuser_direct repro per segment here, each checked")
    p.add_argument("--plot", metavar="STEM", type=argtypes.plot_stem,
                   help="write STEM.dot, STEM.png and STEM.svg: the fusion with its segments")
    p.add_argument("--reps", type=argtypes.positive_int, default=20, help="timed calls per kernel (cold L2)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from segkit.segments import analyze, check_repro_script, describe_cpu, format_report, gpu_picture, plan_picture

    if not targets.nvfuser_available():
        if args.emit_dir:  # refused before anything runs, never silently skipped
            from segkit.errors import NvFuserUnavailableError

            raise NvFuserUnavailableError("segkit segments --emit-dir writes one repro per segment nvFuser made: it "
                                          "needs a CUDA device and nvfuser_direct (leave --emit-dir out to see what "
                                          "is known without a GPU)")
        fd, _ = targets.load_target(args.target, "cpu", args.fusion)
        print("no CUDA device or nvfuser_direct here: nvFuser's segments cannot be known; what can be:\n")
        print(describe_cpu(fd))
        if args.plot:
            from segkit.bookend import bookend
            from segkit.graph import save

            cuts = bookend(fd, "outputs").cuts
            print(f"\npicture: {save(plan_picture(fd, cuts, f'{args.target}: regions of the outputs bookend plan'), args.plot)}")
        return 0
    fd, inputs = targets.load_target(args.target, "cuda", args.fusion)
    report = analyze(fd, inputs, reps=args.reps)
    print(format_report(report))
    ok = True
    if args.plot:
        from segkit.graph import save

        print(f"\npicture: {save(gpu_picture(report, args.target), args.plot)}")
    if args.emit_dir:
        from segkit.segments import segment_repros

        print(f"\nper-segment repros in {args.emit_dir}:")
        for r in segment_repros(report, inputs, args.emit_dir):
            diffs = check_repro_script(r.path)
            good = all(d.ok for d in diffs)
            ok &= good
            worst = max((d.rel_err for d in diffs), default=0.0)
            print(f"  {r.path}: {'ok' if good else 'MISMATCH'} against the reference (max rel err {worst:.1e})")
    return 0 if ok else 1


def plot_plan(fd, plan, realized, stem: str) -> None:
    """``segkit bookend --plot``: the fusion with the plan's cuts, and its realization, side by side."""
    from segkit.bookend import Cut, HostPlan
    from segkit.graph import Cluster, picture, save
    from segkit.ops import is_segment_boundary
    from segkit.segments import plan_picture

    before = plan_picture(fd, plan.cuts, f"before: {plan.policy} plan (cuts dashed red)")
    if isinstance(realized, HostPlan):
        ops = before.fusion.ops
        host = {id(op) for op in realized.prologue + realized.epilogue}
        clusters = [Cluster("host views (torch)", [i for i, op in enumerate(ops) if id(op) in host]),
                    Cluster("core fusion (nvFuser)", [i for i, op in enumerate(ops) if id(op) not in host])]
        after = picture(fd, [c for c in clusters if c.ops], title="after: host realization")
    else:
        cuts = [Cut(op.inputs[0], [op]) for op in realized.fusion.ops if is_segment_boundary(op)]
        after = plan_picture(realized, cuts, "after: segment_set inserted (the regions nvFuser segments)")
    print(f"plan pictures: {save([before, after], stem)}")
