"""Issue 21's second norm bar, and issue 38's forward campaign: every norm config of at least 32M elements (bf16;
the backward by default, ``--specs`` the forward, ``--min-elements 0`` every size) searched by ``segkit tune``
(formulations x nvFuser options x bookend policy, each candidate checked against float64 before it is timed),
its winner's cold-L2 kernel time set against the bytes floor at the copy bandwidth measured in the same process.
One JSON line per case holds every candidate tried, so the log says what was tried for each shape below 90% of
the floor; the winners merge into a tuning table for the benchmark to run with
(``SEGKIT_TUNING_TABLE``).

    python -m lab.campaigns.big_shapes [--cases SPEC:CONFIG,...] [--specs rmsnorm_fwd,layernorm_fwd] [--min-elements N]
        [--shard I/N] [--budget S] [--budget-wide S] [--jsonl F] [--out TABLE [--skip-tuned]]
    python -m sweep --gpus all --each "python -m lab.campaigns.big_shapes --shard {shard}/{n} ..."
    python -m lab.campaigns.big_shapes --reference     (no GPU: every candidate checked at the tiny twins, no timing)
    python -m lab.campaigns.big_shapes --table F.jsonl ...   (the table of earlier runs, e.g. one per GPU; of a case
                                                          logged twice on one GPU, the later log's record)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

BIG = 1 << 25  # 32M elements: rows x hidden
SPECS = ("rmsnorm_bwd", "layernorm_bwd")  # the default
KNOWN_SPECS = ("rmsnorm_bwd", "layernorm_bwd", "rmsnorm_fwd", "layernorm_fwd")
BAR = 90.0  # % of the bytes floor
#: the widest hidden searched with --budget; wider rows get --budget-wide (their search is nvFuser's heuristic
#: overrides first, the hand schedules last: fusions/norm_tune.py)
NARROW_HIDDEN = 1024


def cases(specs: tuple[str, ...] = SPECS, min_elements: int = BIG) -> list[tuple[str, str]]:
    """(spec, config) of every config of ``specs`` of at least ``min_elements`` elements, smallest first."""
    import fusions

    out = [(s, name, cfg.rows * cfg.hidden) for s in specs for name, cfg in fusions.get(s).configs.items()
           if not name.endswith("_tiny") and cfg.rows * cfg.hidden >= min_elements]
    return [(s, name) for s, name, _ in sorted(out, key=lambda c: (c[2], c[0], c[1]))]


def search_case(spec_name: str, config: str, gbs: float | None, budget_s: float | None, reference: bool):
    """One case's search: (a JSON-able record of winner, baselines, floor and every trial; the TuneResult)."""
    import fusions
    from benchmarks.workloads import norm_bytes
    from fusions.tune import tune_spec
    from segkit.tuning import gpu_model

    result = tune_spec(spec_name, config, torch.bfloat16, reference, log=print, budget_s=budget_s)
    cfg = fusions.get(spec_name).config(config, torch.bfloat16)
    kind, direction = spec_name.split("_")
    floor_us = norm_bytes(kind, direction, cfg) / gbs / 1e3 if gbs else None
    win = None if reference else result.winner

    def us(t):
        return None if t is None or not t.ok or t.us is None else round(t.us, 2)

    rec = {"spec": spec_name, "config": config, "shape": [cfg.rows, cfg.hidden],
           "gpu": None if reference else gpu_model(), "copy_gbs": gbs and round(gbs, 1),
           "floor_us": floor_us and round(floor_us, 2), "winner": win and win.candidate.label(), "winner_us": us(win),
           "defaults_us": us(result.baseline("nvFuser defaults")), "rule_us": us(result.baseline("builder rule")),
           "trials": [{"candidate": t.candidate.label(), "ok": t.ok, "note": t.note, "kernel_us": t.us,
                       "call_us": t.call_us} for t in result.trials]}
    rec["pct_floor"] = round(100 * floor_us / win.us, 1) if floor_us and win is not None and win.us else None
    return rec, result


def budget_for(spec_name: str, config: str, narrow_s: float | None, wide_s: float | None) -> float | None:
    """The search budget of one case: ``wide_s`` (when given) for rows wider than ``NARROW_HIDDEN``."""
    import fusions

    wide = fusions.get(spec_name).config(config).hidden > NARROW_HIDDEN
    return wide_s if wide and wide_s is not None else narrow_s


def tuned_already(table, gpu: str, spec_name: str, config: str) -> bool:
    """Whether ``table`` holds a winner for this case (its sizes and bf16) on ``gpu``: a resumed campaign skips it."""
    import fusions
    from fusions.spec import signature

    return table.lookup(gpu, spec_name, signature(fusions.get(spec_name).config(config, torch.bfloat16))) is not None


def latest(records: list[dict]) -> list[dict]:
    """One record per case and GPU, the last one given: a rerun (a longer budget, a changed search) supersedes."""
    return list({(r["spec"], r["config"], r["gpu"]): r for r in records}.values())


def table(records: list[dict]) -> str:
    """One row per case: candidates tried, winner, its kernel time, the floor and whether it reaches ``BAR``."""
    from tabulate import tabulate

    rows = []
    for r in records:
        ok = sum(t["ok"] for t in r["trials"])
        pct = r["pct_floor"]
        rows.append([f"{r['spec']}:{r['config']}", r["gpu"] or "reference", f"{len(r['trials'])} ({ok} ok)",
                     r["winner"] or "-", r["winner_us"] or "-", r["defaults_us"] or "-", r["floor_us"] or "-",
                     pct or "-", "-" if pct is None else ("yes" if pct >= BAR else "no")])
    return tabulate(rows, headers=["case", "gpu", "candidates", "winner", "kernel us", "defaults us", "floor us",
                                   "% floor", f">= {BAR:.0f}%"])


def main(argv: list[str] | None = None) -> int:
    from segkit.errors import SegkitError
    from segkit_cli.commands.tune import parse_shard
    from segkit.tuning import TuningTable, gpu_model

    p = argparse.ArgumentParser(prog="python -m lab.campaigns.big_shapes", description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", help="comma-separated SPEC:CONFIG (default: every config of --specs of at least "
                   "--min-elements)")
    p.add_argument("--specs", default=",".join(SPECS), help=f"comma-separated, of {', '.join(KNOWN_SPECS)}")
    p.add_argument("--min-elements", type=int, default=BIG, metavar="N", help="rows x hidden at least (default 32M)")
    p.add_argument("--shard", default="0/1", metavar="I/N", help="only every N-th case from the I-th (one per GPU)")
    p.add_argument("--budget", type=float, default=60.0, metavar="S", help="seconds of candidates per case")
    p.add_argument("--budget-wide", type=float, metavar="S", help=f"seconds of candidates per case of hidden > "
                   f"{NARROW_HIDDEN} (default: --budget)")
    p.add_argument("--jsonl", help="append one JSON line per case here")
    p.add_argument("--out", help="merge each case's winner into this tuning table")
    p.add_argument("--skip-tuned", action="store_true", help="leave out the cases --out already holds a winner "
                   "for on this GPU (a campaign resumed over several calls)")
    p.add_argument("--reference", action="store_true", help="no GPU: check the candidates at the tiny twins")
    p.add_argument("--time-limit", type=float, metavar="S", help="start no case after this many seconds (the "
                   "cases left are named at the end)")
    p.add_argument("--table", nargs="+", metavar="JSONL", help="print the table of these logs and exit")
    args = p.parse_args(argv)
    if args.table:
        records = [json.loads(line) for path in args.table for line in Path(path).read_text().splitlines() if line]
        print(table(latest(records)))
        return 0
    specs = tuple(s for s in args.specs.split(",") if s)
    unknown = [s for s in specs if s not in KNOWN_SPECS]
    if unknown or not specs:
        p.error(f"--specs: {', '.join(unknown) or 'none given'}: expected some of {', '.join(KNOWN_SPECS)}")
    todo = [tuple(c.split(":", 1)) for c in args.cases.split(",")] if args.cases else cases(specs, args.min_elements)
    bad = [c for c in todo if len(c) != 2 or c[0] not in KNOWN_SPECS]
    if bad:
        p.error(f"--cases: {':'.join(bad[0])!r} is not SPEC:CONFIG with SPEC one of {', '.join(KNOWN_SPECS)}")
    try:
        i, n = parse_shard(args.shard)
    except SegkitError as e:
        p.error(str(e))
    if not 0 <= i < n:
        p.error(f"--shard {args.shard!r}: expected I/N with I in 0..N-1, e.g. 0/2")
    todo = todo[i::n]
    if args.skip_tuned and not args.out:
        p.error("--skip-tuned skips the cases --out already holds: give --out")
    if args.skip_tuned and not args.reference:
        held = TuningTable.load(args.out)
        done = [c for c in todo if tuned_already(held, gpu_model(), *c)]
        todo = [c for c in todo if c not in done]
        print(f"--skip-tuned: {len(done)} cases already in {args.out} for {gpu_model()}", flush=True)
    gbs = None
    if not args.reference:
        from benchmarks.harness import copy_bandwidth_gbs

        gbs = copy_bandwidth_gbs()
        print(f"{torch.cuda.get_device_name()}: copy bandwidth {gbs:.0f} GB/s; {len(todo)} cases", flush=True)
    records, rejected, started = [], 0, time.monotonic()
    for k, (spec_name, config) in enumerate(todo):
        if args.time_limit is not None and time.monotonic() - started > args.time_limit:
            print(f"\npast --time-limit {args.time_limit:.0f} s: not run: "
                  + ", ".join(f"{s_}:{c}" for s_, c in todo[k:]), flush=True)
            break
        print(f"\n=== {spec_name}:{config}", flush=True)
        budget = None if args.reference else budget_for(spec_name, config, args.budget, args.budget_wide)
        rec, result = search_case(spec_name, config, gbs, budget, args.reference)
        if args.out and not args.reference:
            tuned = TuningTable.load(args.out)
            tuned.put(result.entry(gpu_model()))
            tuned.save(args.out)
        if args.jsonl:
            with open(args.jsonl, "a") as f:
                f.write(json.dumps(rec) + "\n")
        rejected += sum(not t["ok"] for t in rec["trials"])
        records.append(rec)
    print("\n" + table(records))
    return 1 if args.reference and rejected else 0  # on a GPU a rejected candidate is a finding, not a failure


if __name__ == "__main__":
    sys.exit(main())
