"""``segkit minimize SCRIPT -o OUT``: delta-debug a fusion nvFuser gets wrong down to a small repro script."""

from __future__ import annotations

import argparse

from segkit_cli import argtypes, targets
from segkit_cli.parser import SCRIPT_RUNS


def register(sub) -> None:
    p = sub.add_parser("minimize", help="delta-debug a mismatching fusion to a small repro script",
                       description="Delta-debug a mismatching fusion to a small repro script. " + SCRIPT_RUNS)
    p.add_argument("script", type=argtypes.script)
    targets.add_fusion_option(p)
    p.add_argument("-o", "--output", required=True, type=argtypes.output_file)
    p.add_argument("--policy", choices=["outputs", "inputs+outputs"], help="minimize the mismatch of this realization")
    p.add_argument("--max-seconds", type=argtypes.positive_float, default=900)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time
    from pathlib import Path

    import torch

    from segkit.check import check
    from segkit.interp import random_inputs
    from segkit.minimize import input_shapes, is_symbolic, minimize_as_recorded_if_needed, size_of, specialize
    from segkit.printing import emit_repro

    targets.require_nvfuser("minimize", args.script, args.fusion)
    t0 = time.perf_counter()
    repro = targets.load_script(args.script, args.fusion)
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
