"""The GPU gate's comparisons and record (scripts/gpu/gate.sh runs the GPU side; this module only reads files).

    python -m benchmarks.gate headline-k                      # the -k expression of the headline kernel cases
    python -m benchmarks.gate compare RUN.json [STEP.json] --rerun-ids IDS.txt [--rerun-step FLAG.txt]
                                      [--log RUN.jsonl]
    python -m benchmarks.gate record --tests GPU_TESTS.json --bench RUN.json [--step STEP.json]
                                     [--rerun RERUN.json] [--rerun-step STEP_RERUN.json] [--log RUN.jsonl]
                                     --commit C -o RECORD.json
    python -m benchmarks.gate land RECORD.json [--no-rows]   # append it to benchmarks/data/gate.jsonl, trimmed
    python -m benchmarks.gate promote --gpu "NVIDIA H200" [--run NAME] [--executor E] [--accept-slower WHY]

A headline case of segkit's (executor ``segkit``, ``segkit:*``, ``thunder+segkit_ex``, a step's ``segkit-*``) is
compared with the committed baseline for the run's GPU model (benchmarks/data/baseline.jsonl: one row per GPU,
suite, case and executor, in the results data's schema). One more than ``TOLERANCE`` slower is re-run (a kernel
case's pytest node ids are written for gate.sh, and the step's flag: a lease drifts, the step included); it fails
the gate if the re-run is slower too. Rivals' ratios to their
own baselines are shown, not judged: they say whether the machine drifted. A baseline case the run has no row for
(a benchmark that failed its validation or errored reports nothing) is "missing": one of ours fails the gate, a
rival's is shown with its reason. A faster result never moves the baseline by itself; ``promote`` does, from rows
already in the results data, and it refuses to move a case of ours to a slower time unless told why: a baseline
that takes a regression no longer catches it. ``land`` keeps a record without its per-test outcome log (the run's
own files keep that), its comparison as a table by case (benchmarks/gate_log.py); the verdict reads the same from it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchmarks import gate_log
from benchmarks.summarize import add_lines, check_row, data_line, data_rows, read_data
from segkit.cli import argtypes, entry
from segkit.cli.parser import Parser
from segkit.files import read_text, write_atomic

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data"
BASELINE = DATA / "baseline.jsonl"
RESULTS = DATA / "results.jsonl.gz"
GATE_LOG = DATA / "gate.jsonl"
TOLERANCE = 0.03

#: The headline kernel cases, per suite: the norms' seed shape forward and backward, the qkv split + RoPE forward and
#: backward at Llama-2-13b and Llama-3-70B, fp8 amax at the seed and two large shapes; bf16, no inference mode.
HEADLINE = {"norm_fwd": ("mixorder_576000x384",), "norm_bwd": ("mixorder_576000x384",),
            "qkv_split_rope": ("Llama-2-13b-hf_bs2", "Llama-3-70B_bs2"),
            "fp8_amax": ("seed_12x34x56", "16384x8192", "8192x28672")}
HEADLINE_K = "bfloat16 and not inference and (" + " or ".join(
    f"(test_{suite} and ({' or '.join(shapes)}))" for suite, shapes in HEADLINE.items()) + ")"
#: The Llama-3-8B step, with the step table's own settings (paired rounds, as its baseline rows were measured).
STEP = {"case": "llama3-8b-x1", "variants": "segkit-auto", "rounds": 3}


def headline(row: dict) -> bool:
    """Whether a results row is one of the gate's cases (the baseline keeps only those)."""
    case = row["case"]
    if row["suite"] == "model_step":
        return case.get("model") == STEP["case"] and "back_to_back" not in case
    return (case.get("shape") in HEADLINE.get(row["suite"], ()) and case.get("dtype") == "bfloat16"
            and case.get("mode") != "inference")


def is_ours(executor: str) -> bool:
    """Whether an executor runs segkit's own code (``segkit``, ``segkit:*``, ``segkit+*``, ``thunder+segkit_ex``, a
    step's ``segkit-*``), rather than a rival's."""
    return executor.startswith("segkit") or executor == "thunder+segkit_ex"


def ours(row: dict) -> bool:
    """Whether a row measures segkit's own code (judged), rather than a rival (shown)."""
    return is_ours(row["executor"])


def value(row: dict) -> float | None:
    """The time a row is judged by: kernel us, or step ms."""
    m = row["metrics"]
    v = m.get("us", m.get("ms"))
    return float(v) if isinstance(v, (int, float)) and v > 0 else None


def spread(row: dict) -> float:
    """The row's own resolution: the interquartile range of its kernel times (0 where the run recorded none, as a
    step's)."""
    v = row["metrics"].get("us_iqr")
    return float(v) if isinstance(v, (int, float)) and v > 0 else 0.0


def past_tolerance(now: float, was: float, resolution: float = 0.0) -> bool:
    """Whether ``now`` is slower than ``was`` by more than ``TOLERANCE``, and by more than ``resolution`` (the new
    measurement's ``spread``): the gate's one rule, for its verdicts and for what ``promote`` refuses. On a kernel of
    a few us, 3% is a fraction of its own rounds' spread: no verdict there."""
    return now > was * (1 + TOLERANCE) and now - was > resolution


def key(row: dict) -> tuple:
    return row["gpu"], row["suite"], json.dumps(row["case"], sort_keys=True), row["executor"]


def load_baseline(path: Path = BASELINE) -> dict[tuple, dict]:
    return {key(r): r for r in read_data(path)}


def load_json(path: Path, what: str) -> dict:
    """One JSON object file the gate reads (``what`` it should be: a pytest-benchmark run, a sweep's merged
    results, a gate record); anything else is a ValueError naming the file and what it is not, never the decoder's
    traceback."""
    try:
        doc = json.loads(read_text(path))
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file (want {what})") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON (want {what}): {e.msg} at line {e.lineno}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: a JSON {type(doc).__name__}, not an object (want {what})")
    return doc


def run_rows(bench: Path | None, step: Path | None, run: str, commit: str | None) -> tuple[list[dict], dict]:
    """The rows of a headline run (and its step table) and each kernel row's pytest node id (for a re-run)."""
    rows, ids = [], {}
    if bench is not None:
        records = [b for b in load_json(bench, "a pytest-benchmark JSON run").get("benchmarks", [])
                   if "kernel_us_median" in (b.get("extra_info") or {})]
        got = data_rows(Path(bench), run, commit)
        for r, b in zip(got, records):
            ids[key(r)] = b["fullname"]
        rows += got
    if step is not None:
        load_json(step, "a step table's JSON (benchmarks/model_step.py --json)")
        rows += data_rows(Path(step), run, commit)
    return rows, ids


def judge(rows: list[dict], baseline: dict[tuple, dict], rerun: dict[tuple, dict] | None = None,
          errors: dict[tuple, str] | None = None) -> list[dict]:
    """Each row against its baseline: ratio (now / baseline), and for ours a verdict: "ok" ("ok, within its spread":
    past the tolerance by less than its own IQR), "slower" (past the tolerance, to re-run), "slower, re-run slower
    too" (fails), "faster" (the baseline stays until ``promote``), "no baseline" or "not measured". A baseline case
    of ours on the run's GPU that the run has no row for is "missing" (a benchmark that failed its validation,
    errored or was skipped reports nothing), with the reason from ``errors`` (``bench_errors``) where the run
    recorded one; a rival's only where it recorded one."""
    out = []
    for r in rows:
        base = baseline.get(key(r))
        now, was = value(r), value(base) if base else None
        entry = {"gpu": r["gpu"], "suite": r["suite"], "case": r["case"], "executor": r["executor"], "now": now,
                 "baseline": was,
                 "baseline_commit": base["commit"] if base else None, "ours": ours(r)}
        if now is None:
            entry["verdict"] = "not measured"
        elif was is None:
            entry["verdict"] = "no baseline"
        else:
            entry["ratio"] = round(now / was, 4)
            entry["verdict"] = ("slower" if past_tolerance(now, was, spread(r)) else
                                "faster" if faster(now, was) else
                                "ok, within its spread" if past_tolerance(now, was) else "ok")
            again = (rerun or {}).get(key(r))
            if entry["verdict"] == "slower" and again is not None and value(again) is not None:
                entry["rerun"] = value(again)
                entry["verdict"] = ("slower, re-run slower too" if past_tolerance(value(again), was, spread(again))
                                    else "ok on re-run")
        out.append(entry)
    gpus, have, errors = {r["gpu"] for r in rows}, {key(r) for r in rows}, errors or {}
    # a baseline case of ours without a result, and any case that failed (a rival not run, as Quack not staged or
    # the step's other variants, is no hole)
    absent = {k for k, base in baseline.items() if k[0] in gpus and ours(base)} | set(errors)
    for k in sorted(absent - have):
        base = baseline.get(k)
        executor = k[3]
        out.append({"gpu": k[0], "suite": k[1], "case": base["case"] if base else json.loads(k[2]),
                    "executor": executor,
                    "now": None, "baseline": value(base) if base else None,
                    "baseline_commit": base["commit"] if base else None,
                    "ours": ours({"executor": executor}), "verdict": "missing",
                    **({"error": errors[k]} if k in errors else {})})
    return out


def failures(judged: list[dict]) -> list[dict]:
    """Ours that fail: slower and not cleared by a re-run, not measured, or missing from the run."""
    return [j for j in judged if j["ours"] and (j["verdict"].startswith("slower")
                                                or j["verdict"] in ("not measured", "missing"))]


def bench_errors(log: Path | None) -> dict[tuple, str]:
    """The benchmarks that failed their validation in the run's log ($SEGKIT_BENCH_LOG: benchmarks/harness.py
    writes a line with "error" for each), keyed like results rows: the message ("wrong result, not benchmarked:
    ...")."""
    from benchmarks.summarize import _plain

    out = {}
    lines = read_text(log).splitlines() if log is not None and Path(log).exists() else ()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        rec = data_line(line, log, n)
        if "error" not in rec:
            continue
        params = rec["params"]
        case = {k: _plain(v) for k, v in params.items() if k != "executor"}
        suite = rec["name"].split("[")[0].removeprefix("test_")
        out[(rec["machine"]["gpu"], suite, json.dumps(case, sort_keys=True), params["executor"])] = rec["error"]
    return out


def table(judged: list[dict]) -> str:
    lines = [f"{'suite':15s} {'case':60s} {'executor':18s} {'now':>9s} {'baseline':>9s} {'ratio':>6s}  verdict"]
    for j in judged:
        case = " ".join(str(v) for v in j["case"].values())[:60]
        now = f"{j['now']:.4g}" if j["now"] else "-"
        was = f"{j['baseline']:.4g}" if j["baseline"] else "-"
        ratio = f"{j['ratio']:.3f}" if "ratio" in j else "-"
        verdict = (j["verdict"] + (f": {j['error']}" if j.get("error") else "")
                   + ("" if j["ours"] else " (rival: shown, not judged)"))
        lines.append(f"{j['suite']:15s} {case:60s} {j['executor']:18s} {now:>9s} {was:>9s} {ratio:>6s}  {verdict}")
    return "\n".join(lines)


def tests_summary(path: Path) -> dict:
    """Pass/fail per test of the sweep's merged JSON, with its counts and wall time."""
    sweep = load_json(path, "the GPU suite's merged results (python -m sweep -o)").get("sweep") or {}
    outcomes = {k: (v.get("outcome") if isinstance(v, dict) else v) for k, v in (sweep.get("outcomes") or {}).items()}
    walls = [s.get("wall_s") or 0 for s in (sweep.get("timing") or {}).values()]
    counts = sweep.get("counts") or _counts(outcomes)
    return {"counts": counts, "complete": bool(sweep.get("complete")),
            "not_run": sorted(sweep.get("not_run") or {}), "wall_s": max(walls, default=None),
            "failed": sorted(k for k, v in outcomes.items() if v in ("failed", "error")), "outcomes": outcomes}


def _counts(outcomes: dict) -> dict[str, int]:
    """How many tests had each outcome (what the sweep's ``counts`` says, for a file that lacks them)."""
    out: dict[str, int] = {}
    for v in outcomes.values():
        out[v] = out.get(v, 0) + 1
    return out


def ran(tests: dict) -> int:
    """How many GPU tests ran (every outcome of the suite's counts but "not run"): a landed record keeps the counts,
    not the per-test outcomes, and the verdict reads the same from either."""
    return sum(n for k, n in (tests.get("counts") or {}).items() if k != "not run")


def verdict(tests: dict, judged: list[dict]) -> tuple[bool, list[str]]:
    """Whether the gate passes, and every reason it does not. A gate that judged nothing fails: a suite that ran
    no test, a run with no benchmark rows (every case errored, or the wrong file was given), or a run none of whose
    cases of ours met a baseline of its GPU (a GPU with no baseline yet: ``promote`` one first)."""
    why = []
    if not ran(tests):
        why.append("the GPU suite ran no test")
    if not judged:
        why.append("the benchmark run has no rows: nothing was measured")
    elif not any(j["ours"] and "ratio" in j for j in judged):
        gpus = sorted({g for j in judged if (g := j.get("gpu"))})
        why.append(f"no case of ours was judged against a baseline (GPU {', '.join(gpus) or 'unknown'}): "
                   "promote a baseline for it first")
    if tests["failed"]:
        why.append(f"{len(tests['failed'])} GPU test(s) failed: {', '.join(tests['failed'][:5])}")
    if tests["not_run"] or not tests["complete"]:
        why.append(f"{len(tests['not_run'])} GPU test(s) not run")
    for j in failures(judged):
        why.append(f"{j['suite']} {j['case']} {j['executor']}: {j['verdict']} ({j.get('ratio', '-')} x baseline)")
    return not why, why


def _machine(rows: list[dict]) -> dict:
    return rows[0]["machine"] if rows else {}


#: An existing gate record (JSON with ``gate``) or sweep / step / re-run JSON: what the gate's outputs may replace.
RECORD_OUT = argtypes.output_file_of("a gate record", argtypes.json_holding("gate"))
IDS_OUT = argtypes.output_file_of("pytest node ids", argtypes.text_starting("benchmarks/", "step"))


def build_parser() -> Parser:
    """The gate's command line (``python -m benchmarks.gate``): one subcommand per step of gate.sh."""
    p = Parser(prog="python -m benchmarks.gate", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    sub.add_parser("headline-k").set_defaults(func=_headline_k)
    c = sub.add_parser("compare")
    c.add_argument("bench", type=argtypes.existing_file, metavar="RUN.json", help="the headline run (pytest-benchmark JSON)")
    c.add_argument("step", type=argtypes.existing_file, nargs="?", metavar="STEP.json", help="the step table's JSON")
    c.add_argument("--rerun-ids", type=IDS_OUT, required=True, help="write the node ids of ours to re-run here")
    c.add_argument("--rerun-step", type=IDS_OUT, help="write 'step' here when the step of ours is past the tolerance "
                   "(an empty file when it is not)")
    c.add_argument("--log", type=argtypes.optional_file, help="the run's $SEGKIT_BENCH_LOG: why a case is missing")
    c.add_force()
    c.set_defaults(func=_compare)
    r = sub.add_parser("record")
    r.add_argument("--tests", type=argtypes.existing_file, required=True, help="the GPU suite's merged JSON file")
    r.add_argument("--bench", type=argtypes.existing_file, required=True, help="the headline run's JSON file")
    r.add_argument("--step", type=argtypes.existing_file, help="the step table's JSON file")
    r.add_argument("--rerun", type=argtypes.existing_file, help="the kernel cases' re-run (pytest-benchmark JSON)")
    r.add_argument("--rerun-step", type=argtypes.existing_file, help="the step's re-run (its step table JSON)")
    r.add_argument("--log", type=argtypes.optional_file, help="the run's $SEGKIT_BENCH_LOG: why a case is missing")
    r.add_argument("--commit", type=argtypes.name, required=True)
    r.add_argument("--tests-commit", type=argtypes.name, help="the commit the suite phase ran on, when not --commit")
    r.add_argument("-o", "--out", type=RECORD_OUT, required=True, help="the record's JSON file")
    r.add_force()
    r.set_defaults(func=_record)
    land = sub.add_parser("land")
    land.add_argument("record", type=argtypes.existing_file, metavar="RECORD.json", help="a gate record file")
    land.add_argument("--no-rows", action="store_true",
                      help="the record only: its measurements stay out of the results data (a run of code with a "
                           "bug fixed since)")
    land.set_defaults(func=_land)
    pr = sub.add_parser("promote")
    pr.add_argument("--gpu", type=argtypes.name, required=True)
    pr.add_argument("--run", type=argtypes.name,
                    help="only this run's rows (default: the latest row of each case in the results data)")
    pr.add_argument("--executor", type=argtypes.name, help="only this executor's rows")
    pr.add_argument("--suite", type=argtypes.name, help="only this suite's rows (fp8_amax, qkv_split_rope, ...)")
    pr.add_argument("--faster", action="store_true", help=f"only the cases of ours more than {TOLERANCE:.0%}% faster "
                    f"than their baseline (what a change sped up; the rest stay)")
    pr.add_argument("--accept-slower", type=argtypes.text, metavar="WHY", help=f"let a case of ours move to a time "
                    f"more than {TOLERANCE:.0%}% slower than its baseline (say why in the commit)")
    pr.set_defaults(func=_promote)
    return p


def main(argv: list[str] | None = None) -> int:
    """``python -m benchmarks.gate``; a file that is not what the command reads is one line naming it (exit 2)."""
    return entry.run(build_parser, argv, expected_status=2)


def _headline_k(args: argparse.Namespace) -> int:
    """``headline-k``: the pytest -k expression of the headline kernel cases."""
    print(HEADLINE_K)
    return 0


def _compare(args: argparse.Namespace) -> int:
    """``compare``: the run against the baseline, and what of ours to re-run (node ids, the step's flag)."""
    rows, ids = run_rows(args.bench, args.step, "gate", None)
    judged = judge(rows, load_baseline(), errors=bench_errors(args.log))
    print(table(judged))
    again = [ids[key(row)] for row, j in zip(rows, judged) if j["ours"] and j["verdict"] == "slower"
             and key(row) in ids]
    write_atomic(args.rerun_ids, "".join(f"{i}\n" for i in again))
    step_again = any(j["ours"] and j["verdict"] == "slower" and j["suite"] == "model_step" for j in judged)
    if args.rerun_step is not None:
        write_atomic(args.rerun_step, "step\n" if step_again else "")
    print(f"\n{len(again)} of ours past {TOLERANCE:.0%} slower: re-run", file=sys.stderr)
    return 0


def _record(args: argparse.Namespace) -> int:
    """``record``: the gate's record (verdict and why, the suite's summary, every comparison, the run's rows);
    1 when the gate fails."""
    run = f"gate-{args.commit}"
    rows, _ = run_rows(args.bench, args.step, run, args.commit)
    again = run_rows(args.rerun, args.rerun_step, run, args.commit)[0] if args.rerun or args.rerun_step else []
    rerun = {key(x): x for x in again} if again else None
    judged = judge(rows, load_baseline(), rerun, bench_errors(args.log))
    tests = tests_summary(args.tests)
    ok, why = verdict(tests, judged)
    machine = _machine(rows)
    record = {"gate": "pass" if ok else "fail", "why": why, "commit": args.commit,
              "tests_commit": args.tests_commit or args.commit,
              "date": next((r["date"] for r in rows if r.get("date")), None), "run_at": _run_at(args.bench),
              # the gate's own re-run (seconds after the run, in its lease) or a fresh lease's
              "rerun_at": _run_at(args.rerun) if args.rerun else None, "gpu": machine.get("gpu"),
              "machine": machine, "tolerance": TOLERANCE, "tests": tests, "benchmarks": judged, "rows": rows}
    write_atomic(args.out, json.dumps(record) + "\n")
    counts = ", ".join(f"{v} {k}" for k, v in tests["counts"].items())
    print(table(judged))
    print(f"\nGPU tests: {counts}; not run {len(tests['not_run'])}; longest shard {tests['wall_s']} s")
    print(f"gate: {record['gate'].upper()}" + "".join(f"\n  {w}" for w in why))
    return 0 if ok else 1


def _land(args: argparse.Namespace) -> int:
    """``land``: the record appended to the gate log in its trimmed form (``gate_log.trimmed``), its rows to the
    results data; a record already landed is refused, naming its line."""
    record = load_json(args.record, "a gate record (python -m benchmarks.gate record -o)")
    if "rows" not in record or "machine" not in record:
        raise ValueError(f"{args.record}: a JSON object without a gate record's rows and machine")
    rows = [check_row(r) for r in record.pop("rows")]
    there = landed(record)
    if there is not None:
        raise ValueError(f"{args.record}: already landed as line {there} of {GATE_LOG.name} (gate "
                         f"{record['gate']} of {record['commit']} on {record.get('gpu')}, run at "
                         f"{record.get('run_at')}): nothing written")
    add_lines(GATE_LOG, [gate_log.line(record)])
    if not args.no_rows:
        _append_rows(rows, RESULTS)
    print(f"landed gate {record['gate']} of {record['commit']} in {GATE_LOG.name}"
          + ("" if args.no_rows else f" and its {len(rows)} rows in {RESULTS.name}"))
    return 0


def _promote(args: argparse.Namespace) -> int:
    """``promote``: the GPU's baseline moved to rows already in the results data (refusing a case of ours moved
    slower unless told why)."""
    rows = [r for r in read_data(RESULTS) if r["gpu"] == args.gpu and (args.run is None or r["run"] == args.run)
            and (args.executor is None or r["executor"] == args.executor)
            and (args.suite is None or r["suite"] == args.suite) and headline(r)]
    old = load_baseline()
    if args.faster:  # what a change sped up, its run's other cases (within their noise) left where they are
        rows = [r for r in rows if ours(r) and _faster(r, old)]
    if not rows:
        print(f"no rows for {args.gpu!r}" + (f" in run {args.run!r}" if args.run else "")
              + (f" of {args.executor!r}" if args.executor else "") + (f" of {args.suite}" if args.suite else "")
              + (" faster than their baseline" if args.faster else ""), file=sys.stderr)
        return 2
    # the latest row of every case: the GPU's baseline anew
    whole = args.run is None and args.executor is None and args.suite is None and not args.faster
    base = {k: v for k, v in old.items() if k[0] != args.gpu or not whole}
    for r in rows:  # later rows win: the latest measurement of each case
        if value(r) is not None:
            base[key(r)] = r
    slower = sorted(_slower(old, base, args.gpu))
    if slower and not args.accept_slower:
        print("promote moves no case of ours to a slower time (a baseline that takes a regression can no longer "
              "catch it); fix the code, or pass --accept-slower WHY:" + "".join(f"\n  {s}" for s in slower),
              file=sys.stderr)
        return 2
    _write_rows(sorted(base.values(), key=lambda r: key(r)), BASELINE)
    print(f"baseline for {args.gpu}: {sum(k[0] == args.gpu for k in base)} cases", file=sys.stderr)
    return 0


def identity(record: dict) -> tuple:
    """What makes two gate records the same gate: its commits, GPU and when its run and re-run were measured."""
    return (record.get("commit"), record.get("tests_commit"), record.get("gpu"), record.get("run_at"),
            record.get("rerun_at"))


def landed(record: dict, log: Path | None = None) -> int | None:
    """The line of ``log`` (the gate log) that already holds ``record``, or None."""
    log = GATE_LOG if log is None else log
    want = identity(record)
    for n, line in enumerate(read_text(log).splitlines() if log.exists() else (), 1):
        if line.strip() and identity(data_line(line, log, n)) == want:
            return n
    return None


def faster(now: float, was: float) -> bool:
    """The gate's "faster": past the tolerance below the baseline."""
    return now < was * (1 - TOLERANCE)


def _faster(row: dict, baseline: dict[tuple, dict]) -> bool:
    """Whether ``row`` is faster than its baseline (False where either has no time)."""
    base = baseline.get(key(row))
    now, was = value(row), value(base) if base else None
    return now is not None and was is not None and faster(now, was)


def _slower(old: dict[tuple, dict], new: dict[tuple, dict], gpu: str) -> list[str]:
    """The cases of ours on ``gpu`` whose time in ``new`` is more than ``TOLERANCE`` above ``old``'s, as lines."""
    out = []
    for k, was in old.items():
        now = new.get(k)
        if k[0] == gpu and ours(was) and now is not None and value(now) and value(was) \
                and past_tolerance(value(now), value(was), spread(now)):
            out.append(f"{k[1]} {k[2]} {k[3]}: {value(now):g} against {value(was):g} ({value(now) / value(was):.2f}x, "
                       f"run {now['run']})")
    return out


def _run_at(bench: Path) -> str | None:
    """When pytest-benchmark wrote a run (its ``datetime``)."""
    return load_json(bench, "a pytest-benchmark JSON run").get("datetime")


def _append_rows(rows: list[dict], path: Path) -> None:
    from benchmarks.summarize import _lines, row_key

    there = read_data(path)
    have, written = {row_key(r) for r in there}, {(r["run"], r["source"]) for r in there}
    new = [r for r in rows if row_key(r) not in have]
    add_lines(path, _lines(new, written))


def _write_rows(rows: list[dict], path: Path) -> None:
    from benchmarks.summarize import _lines

    add_lines(path, _lines(rows, set()), replace=True)


if __name__ == "__main__":
    sys.exit(main())
