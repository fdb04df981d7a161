"""``segkit`` command line: repro scripts and the demo."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from segkit.compare import compare
from segkit.errors import SegkitError
from segkit.interp import run_reference
from segkit.nvf import nvfuser_available, run_nvfuser
from segkit.repro import format_fusion, load_repro


def _run_and_compare(fd, make_inputs, label: str) -> bool:
    """Run on the reference interpreter (CPU), and on nvFuser when present; True if they agree."""
    cpu_inputs = make_inputs("cpu")
    ref = run_reference(fd, cpu_inputs)
    print(f"[{label}] reference interpreter (cpu): " + ", ".join(f"{tuple(o.shape)} {o.dtype}" for o in ref))
    if not nvfuser_available():
        print(f"[{label}] nvFuser not available (no CUDA device or nvfuser_direct): reference only")
        return True
    gpu_inputs = [x.cuda() if hasattr(x, "cuda") else x for x in cpu_inputs]
    ref_gpu = run_reference(fd, gpu_inputs)
    run = run_nvfuser(fd, gpu_inputs)
    print(f"[{label}] nvFuser: {run.segments} segment(s) {run.groups}, {run.kernel_count} kernel(s)")
    for k in run.kernels:
        print(f"    {k.name}  {k.scheduler}  {k.time_ms * 1e3:.1f} us  grid {k.grid} block {k.block}  regs {k.registers}")
    diffs = compare(ref_gpu, run.outputs)
    for d in diffs:
        print("   ", d)
    return all(d.ok for d in diffs)


def cmd_repro(args: argparse.Namespace) -> int:
    repro = load_repro(args.script)
    print(format_fusion(repro.fd.fusion))
    return 0 if _run_and_compare(repro.fd, repro.make_inputs, args.script) else 1


def cmd_demo(args: argparse.Namespace) -> int:
    from segkit.demo import main as demo_main

    return demo_main()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="segkit", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("repro", help="load a repro script, print its fusion, run it and compare backends")
    p.add_argument("script")
    p.set_defaults(func=cmd_repro)
    p = sub.add_parser("demo", help="the main job: the bundled fusions on the reference (and nvFuser on a GPU)")
    p.set_defaults(func=cmd_demo)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except SegkitError as e:
        print(f"segkit: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
