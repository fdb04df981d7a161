"""``segkit fuzz``: run a campaign, re-check its findings, or write one as a standalone script."""

from __future__ import annotations

import argparse
from pathlib import Path

from segkit.fuzz.findings import INDEX
from segkit.fuzz.outdir import LOCK, REWRITTEN
from segkit_cli import argtypes, targets


#: -o: what a campaign writes (segkit.fuzz.outdir); a directory holding an index.json is a campaign segkit wrote
#: before directories were marked.
CAMPAIGN_DIR = argtypes.output_dir_writing(*REWRITTEN, LOCK, "f[0-9][0-9][0-9]_*.py", owned_if=(INDEX,))


#: Options only a campaign uses (their default is None or False).
CAMPAIGN_ONLY = ("--output", "--minutes", "--max-cases", "--resume")


def register(sub) -> None:
    p = sub.add_parser("fuzz", help="differential fuzzing of nvFuser against the reference interpreter",
                       description="Generate random fusions, run them on nvFuser (as written and bookended) and on "
                                   "the reference interpreter; minimize, deduplicate and write what differs.")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--replay", metavar="DIR", type=argtypes.existing_dir, help="re-check every finding stored in DIR and print a table")
    mode.add_argument("--emit", metavar="FINDING", type=argtypes.script,
                      help="print a finding (or any repro script) as a standalone nvfuser_direct script")
    targets.add_fusion_option(p)
    p.goes_with("--fusion", "--emit")
    p.add_argument("-o", "--output", type=CAMPAIGN_DIR,
                   help="findings directory (repros, index.json, summary.md; default: findings); locked while the "
                   "campaign runs")
    p.add_argument("--minutes", type=argtypes.positive_float,
                   help="campaign length (generation, runs and minimization; at least one case runs)")
    p.add_argument("--max-cases", type=argtypes.positive_int, help="stop after this many cases")
    p.add_argument("--seed", type=argtypes.whole_number, default=0, help="the campaign's seed (any whole number)")
    p.add_argument("--target", default="nvfuser", choices=["nvfuser", "reference"],
                   help="backend under test ('reference' checks the generator: it must find nothing)")
    p.add_argument("--workers", type=argtypes.count, default=4, help="worker processes (0: run in this process, no timeouts)")
    p.add_argument("--case-timeout", type=argtypes.positive_float, default=60.0, help="seconds one case may take before it is killed")
    p.add_argument("--minimize-seconds", type=argtypes.nonnegative_float, default=90.0, help="time limit of each minimization")
    p.add_argument("--max-ops", type=argtypes.positive_int, default=10, help="generator steps per case")
    p.add_argument("--max-elements", type=argtypes.positive_int, default=1 << 16, help="largest tensor the generator makes")
    p.add_argument("--resume", action="store_true", help="continue the campaign saved in -o (same --seed)")
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import importlib.util

    if importlib.util.find_spec("hypothesis") is None:
        from segkit.errors import SegkitError

        raise SegkitError("segkit fuzz draws its cases with hypothesis, which is not installed: "
                          "pip install 'segkit[fuzz]'")
    from segkit.fuzz.campaign import fuzz
    from segkit.fuzz.triage import emit_standalone, load_findings, replay_each, replay_table
    from segkit.repro import load_repro

    from segkit.errors import UsageError

    if args.replay or args.emit:  # a campaign's options would be silently ignored
        unused = [f for f in CAMPAIGN_ONLY if getattr(args, f.lstrip("-").replace("-", "_")) not in (None, False)]
        if unused:
            raise UsageError(f"{'--replay' if args.replay else '--emit'} runs no campaign: leave out "
                             f"{', '.join(unused)}")
    if args.emit:
        path = Path(args.emit)
        found = {f.file: f for f in load_findings(path.parent)} if (path.parent / "index.json").exists() else {}
        print(emit_standalone(load_repro(path, fusion=args.fusion), found.get(path.name)))
        return 0
    if args.replay:
        rows = []
        for r in replay_each(args.replay, args.target, workers=min(args.workers, 1), timeout=max(args.case_timeout, 120)):
            rows.append(r)
            print(f"{r.finding.id}: {'reproduces' if r.reproduces else 'no longer (' + r.status + ')'}", flush=True)
        print(replay_table(rows))
        return 0 if not any(r.reproduces for r in rows) else 1
    if args.minutes is None and args.max_cases is None:
        args.minutes = 1.0
    import signal

    from segkit.fuzz.campaign import STOP

    STOP.clear()
    signal.signal(signal.SIGTERM, lambda *_: STOP.set())  # a stopped campaign still saves what it found
    out = args.output or Path("findings")
    try:
        s = fuzz(args.target, out, minutes=args.minutes, max_cases=args.max_cases, seed=args.seed,
                 workers=args.workers, case_timeout=args.case_timeout, minimize_seconds=args.minimize_seconds,
                 max_ops=args.max_ops, max_elements=args.max_elements, resume=args.resume, progress=not args.quiet)
    except KeyboardInterrupt:
        from segkit.fuzz.findings import INDEX

        left = (f"the campaign in {out} is saved: continue it with --resume" if (out / INDEX).exists()
                else f"no campaign was started in {out}")
        raise KeyboardInterrupt(left) from None
    print(s.markdown())
    print(f"findings, index.json and summary.md in {out}")
    return 0
