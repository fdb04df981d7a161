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
    target = targets.resolve(args.target, args.fusion)  # a bad target is named before a missing nvFuser
    targets.require_nvfuser("check")
    reports = check_target(target, "cuda", args.policy, dict(args.dtype_tol or []))
    for r in reports:
        print(r)
    return 0 if all(r.ok for r in reports) else EXIT_FAILURE


def check_target(target: targets.Target, device: str, policy: str | None, tol: dict) -> list:
    """The reports ``segkit check`` prints for ``target``: the fusion, and both realizations of ``policy``, on
    nvFuser, against one reference run on inputs made once on ``device``."""
    from segkit.check import check_policy

    return check_policy(target.fd, target.inputs(device), policy, tol=tol)
