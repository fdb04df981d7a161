"""``segkit repro SCRIPT``: print a repro script's fusion, run it on the reference interpreter and, on a GPU,
on nvFuser, and check the two agree."""

from __future__ import annotations

import argparse

from segkit_cli import argtypes, targets
from segkit_cli.parser import EXIT_FAILURE, SCRIPT_RUNS


def register(sub) -> None:
    p = sub.add_parser("repro", help="load a repro script, print its fusion, run it and compare backends",
                       description="Load a repro script, print its fusion, run it on the reference interpreter "
                                   "and, on a GPU, on nvFuser, and check the two agree. " + SCRIPT_RUNS)
    p.add_argument("script", type=argtypes.script)
    targets.add_fusion_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from segkit.printing import format_fusion

    repro = targets.load_script(args.script, args.fusion)
    print(format_fusion(repro.fd.fusion))
    return 0 if run_and_compare(repro.fd, repro.make_inputs, args.script) else EXIT_FAILURE


def run_and_compare(fd, make_inputs, label: str) -> bool:
    """Run on the reference interpreter (CPU), and check nvFuser against it when present; True if they agree."""
    from segkit.compare import nonfinite_notes
    from segkit.interp import run_reference

    ref = run_reference(fd, make_inputs("cpu"))
    print(f"[{label}] reference interpreter (cpu): " + ", ".join(f"{tuple(o.shape)} {o.dtype}" for o in ref))
    for note in nonfinite_notes(ref):
        print(f"[{label}] note: {note}")
    if not targets.nvfuser_available():
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
