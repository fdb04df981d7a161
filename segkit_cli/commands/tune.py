"""``segkit tune TARGET``: search formulations x nvFuser options x bookend policy for a workload or a repro
script, and keep the winner per GPU model in a tuning table (the search: ``fusions.tune`` for a workload,
``segkit.tuning.search`` for a script)."""

from __future__ import annotations

import argparse

from segkit_cli import argtypes, targets


def register(sub) -> None:
    p = sub.add_parser("tune", help="search formulations x nvFuser options x bookend policy; keep the winner per GPU")
    p.add_argument("target", nargs="?", type=argtypes.script_or_spec,
                   help="a fusions spec NAME:CONFIG, or a repro script")
    targets.add_fusion_option(p)
    p.add_argument("--dtype", choices=("bf16", "fp16", "fp32"), help="override the config's dtype")
    p.add_argument("--amaxes", type=argtypes.text,
                   help="fp8_amax: the outputs to tune for, comma-separated (e.g. row,all), instead of the config's")
    p.add_argument("--reference", action="store_true",
                   help="no GPU: validate every candidate on the reference interpreter at the tiny config, no timing")
    p.add_argument("--full", action="store_true", help="the full grid of heuristic overrides (default: a small one)")
    p.add_argument("--budget", type=argtypes.positive_float, metavar="SECONDS", help="stop trying new candidates after this long")
    p.add_argument("--shard", metavar="I/N", type=argtypes.shard, help="only shard I of N of the candidates (the baselines run in every "
                   "shard): one process per GPU, e.g. through python -m sweep --each; merge with --merge")
    p.add_argument("--out", type=argtypes.output_file, help="merge the winner into this tuning table JSON (with --merge: write there instead "
                   "of the committed table)")
    p.add_argument("--write", action="store_true", help="merge the winner into the committed table (fusions/tunings.json)")
    p.add_argument("--merge", nargs="+", metavar="TABLE", type=argtypes.existing_file,
                   help="merge these tables (per GPU and config the least kernel time among them: shards of one "
                   "search) into the committed table, or into --out, and exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    import torch
    from tabulate import tabulate

    from segkit.errors import SegkitError, UsageError
    from segkit.tuning import TuningTable, gpu_model
    from segkit.tuning.search import tune_script

    if args.merge:
        return merge(args)
    if not args.target:
        raise UsageError("segkit tune needs a target (NAME:CONFIG or a repro script), or --merge")
    if args.write and args.reference:
        raise UsageError("--write keeps a timed winner; --reference times nothing (leave one out)")
    if args.out and args.reference:
        raise UsageError("--out keeps a timed winner (or, with --merge, merged tables); --reference times nothing")
    if not args.reference and not targets.nvfuser_available():
        raise SegkitError("segkit tune times candidates on nvFuser: it needs a CUDA device and nvfuser_direct "
                          "(or --reference to validate them on the reference interpreter)")
    shard_of = args.shard or (0, 1)
    log = (lambda _: None) if args.reference else (lambda line: print(line, flush=True))  # GPU runs: progress
    if Path(args.target).exists():
        for flag, value in (("--amaxes", args.amaxes), ("--dtype", args.dtype), ("--full", args.full)):
            if value is not None and value is not False:
                raise UsageError(f"{flag} applies to a fusions spec NAME:CONFIG; {args.target} is a script")
        result = tune_script(args.target, args.reference, log, args.budget, shard_of, fusion=args.fusion)
    elif ":" in args.target:
        if args.fusion is not None:
            raise UsageError(f"--fusion {args.fusion}: picks a fusion of a repro script; {args.target} is a "
                             "fusions spec")
        from fusions.tune import tune_spec

        dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}.get(args.dtype)
        name, config = args.target.split(":", 1)
        amaxes = tuple(a.strip() for a in args.amaxes.split(",")) if args.amaxes is not None else None
        if amaxes is not None and not all(amaxes):
            raise UsageError(f"--amaxes {args.amaxes!r}: give output names separated by commas, e.g. row,all")
        result = tune_spec(name, config, dtype, args.reference, quick=not args.full, log=log, budget_s=args.budget,
                           shard_of=shard_of, amaxes=amaxes)
    else:
        raise SegkitError(f"{args.target}: no such script, and not a fusions spec NAME:CONFIG")
    print(tabulate(result.rows(), headers=result.HEADERS))
    if hint := result.budget_hint():
        print(hint)
    if args.reference:
        rejected = [t for t in result.trials if not t.ok]
        print(f"{len(result.trials) - len(rejected)} of {len(result.trials)} candidates match the reference")
        return 1 if rejected else 0
    entry = result.entry(gpu_model())
    print(f"winner on {entry.gpu}: {entry.describe()}")
    rule = result.baseline("builder rule")
    if rule is not None:
        print(f"builder rule: {rule.candidate.tuning.describe()}: " + (f"{rule.us:.1f} us" if rule.us else rule.note))
    paths = [Path(args.out)] if args.out else []
    if args.write:
        from fusions.spec import TABLE_PATH

        paths.append(TABLE_PATH)
    for path in paths:
        table = TuningTable.load(path)
        table.put(entry)
        table.save(path)
        print(f"winner written to {path}")
    return 0


def merge(args: argparse.Namespace) -> int:
    """``--merge``: the fastest entry per GPU and config among the given tables, merged into the committed table
    (or ``--out``). Nothing is written unless every input reads and holds entries: a shell glob that matched
    nothing, or an empty or truncated file, never rewrites the table."""
    from fusions.spec import TABLE_PATH
    from segkit.errors import SegkitError, UsageError
    from segkit.tuning import TuningTable

    search = [f for f in ("target", "fusion", "reference", "full", "budget", "shard", "dtype", "amaxes", "write")
              if getattr(args, f) not in (None, False)]
    if search:
        flags = ", ".join(f if f == "target" else "--" + f for f in search)
        raise UsageError(f"--merge only merges tables (into the committed table, or --out): leave out {flags}")
    dest = args.out or TABLE_PATH
    try:
        tables = [(str(path), TuningTable.load(path, must_exist=True)) for path in args.merge]
        empty = [path for path, t in tables if not t.entries()]
        if empty:
            raise ValueError(f"{empty[0]} holds no entries: nothing to merge (the table is left as it is)")
        new, source = TuningTable.fastest_of(tables)
        table = TuningTable.load(dest)
    except ValueError as e:
        raise SegkitError(f"segkit tune --merge: {e}") from None
    for e in new.entries():
        print(f"{e.gpu} {e.spec} {e.signature}: {e.describe()}  [from {source[e.key()]}]")
    table.merge(new)
    table.save(dest)
    print(f"{dest}: {len(table.entries())} entries for {', '.join(table.gpus())}")
    return 0


def parse_shard(text: str) -> tuple[int, int]:
    """--shard I/N as (I, N); lab/campaigns/big_shapes.py parses its --shard with it too."""
    from segkit.errors import SegkitError

    try:
        return argtypes.shard(text)
    except argparse.ArgumentTypeError as e:
        raise SegkitError(f"--shard {e}") from None
