"""``segkit check TARGET``: run a fusion on nvFuser and on the reference interpreter, one verdict per output."""

from __future__ import annotations

import argparse

from segkit_cli import argtypes, targets
from segkit_cli.parser import EXIT_FAILURE, SCRIPT_RUNS


def register(sub) -> None:
    p = sub.add_parser("check", help="run on nvFuser and the reference interpreter; exit 1 on mismatch",
                       description="Run a fusion on nvFuser and on the reference interpreter, one verdict per "
                                   "output; exit 1 on mismatch. " + SCRIPT_RUNS)
    p.add_argument("target", type=argtypes.script_or_spec, help="a repro script, or a fusions spec NAME:CONFIG")
    targets.add_fusion_option(p)
    p.add_argument("--policy", choices=["outputs", "inputs+outputs"], help="also check both realizations of this policy")
    p.add_argument("--dtype-tol", action="append", type=argtypes.dtype_tolerance, metavar="DTYPE=TOL",
                   help="relative tolerance, e.g. bf16=2e-2")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from segkit.check import check

    targets.require_nvfuser("check", args.target, args.fusion)
    fd, inputs = targets.load_target(args.target, "cuda", args.fusion)
    tols = dict(args.dtype_tol or [])
    reports = [check(fd, inputs, tol=tols)]
    if args.policy:
        reports += [check(fd, inputs, policy=args.policy, realization=r, tol=tols) for r in ("segment_set", "host")]
    for r in reports:
        print(r)
    return 0 if all(r.ok for r in reports) else EXIT_FAILURE
