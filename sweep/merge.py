"""Merging a sweep's shards: one pytest-benchmark document out of the shards' documents and reports, with the
sweep's own record beside it (per-case durations and outcomes, what each device did not run and why, where each
shard's time went, the machine block), and the one line per device that says where its time went.
"""

from __future__ import annotations

import json
from pathlib import Path

from sweep import resume as sweep_resume
from sweep.jobs import ShardResult
from sweep.machine import KEY, machine_block
from sweep.plan import Shard


def _timing(report: dict, result: ShardResult, durations: dict[str, float]) -> dict:
    """Where one shard's wall time went: start-up (interpreter, pytest, plugins) and collection (conftest and
    test-module imports) before the first case, the cases themselves (a session-scoped fixture such as the
    copy-bandwidth measurement counts in the first case that uses it), and the rest (between and after cases:
    session teardown, pytest-benchmark's JSON). Of the case time, ``compile_s`` is what benchmark cases spent
    before their timed rounds (building, compiling, the correctness check; ``compiled_cases`` of them said)."""
    stamps = report.get("stamps") or {}
    wall = result.ended - result.started

    def since_start(key: str) -> float | None:
        return None if stamps.get(key) is None else round(stamps[key] - result.started, 3)

    first = since_start("first_case")
    cases = sum(durations.values())
    prepare = {k: v for k, v in (report.get("prepare_s") or {}).items() if k in durations}
    return {"wall_s": round(wall, 3), "startup_s": since_start("configured"), "collected_at_s": since_start("collected"),
            "to_first_case_s": first, "cases_s": round(cases, 3), "cases_run": len(durations),
            "compile_s": round(sum(prepare.values()), 3) if prepare else None, "compiled_cases": len(prepare),
            "other_s": None if first is None else round(wall - first - cases, 3)}


def _why_not_run(result: ShardResult) -> str:
    if result.killed:
        return f"shard killed: SIGINT at {result.stopped_by} did not end it within the grace"
    if result.interrupted:
        return f"shard interrupted (SIGINT) at {result.stopped_by} before this case finished"
    return f"shard crashed (exit {result.code}) before this case finished"


def _machine(shards: list[Shard], shard_infos: list[dict], gbs: dict[str, float]) -> dict:
    """The sweep's machine block: the launcher's view of the devices the shards ran on, with what a shard saw
    filled in where the launcher could not see a GPU (a submitit job on another node)."""
    block = machine_block(gbs or None, _gpus(shards))
    seen = next((m[KEY] for m in shard_infos if isinstance(m.get(KEY), dict) and m[KEY].get("gpu")), None)
    if block["gpu"] is None and seen:
        block.update(gpu=seen["gpu"], driver=seen["driver"], cuda=seen["cuda"], gpu_count=len(_gpus(shards)))
    return block


def _gpus(shards: list[Shard]) -> list[str]:
    """The distinct devices the shards ran on, in order."""
    return list(dict.fromkeys(s.device for s in shards))


def merge(shards: list[Shard], work: Path, results: list[ShardResult], launcher: dict | None = None) -> dict:
    """One pytest-benchmark document out of the shards' documents, with the sweep's own record beside it:
    per-case durations and outcomes (a GPU test run has no benchmark records, only those), the cases each
    device did not run and why, and where each shard's time went. A shard that was killed or crashed still
    contributes the cases its last report holds; its pytest-benchmark records are lost (the record says so)."""
    benchmarks, machines, durations, outcomes, not_run, timing, first = [], [], {}, {}, {}, {}, None
    for shard, result in zip(shards, results):
        report_path = work / f"shard{shard.index}.report.json"
        report = json.loads(report_path.read_text()) if report_path.exists() else {}
        shard_durations = report.get("durations") or {}
        durations.update(shard_durations)
        outcomes.update({k: {"outcome": v, "device": shard.label} for k, v in (report.get("outcomes") or {}).items()})
        missing = dict(report.get("not_run") or {})
        done = set(report.get("outcomes") or {})
        for case in shard.cases:
            if case not in done and case not in missing:
                missing[case] = _why_not_run(result)
        if missing:
            not_run[shard.label] = dict(sorted(missing.items()))
        timing[shard.label] = _timing(report, result, shard_durations)
        if report.get("crashes"):
            timing[shard.label]["crashes"] = report["crashes"]
        path = work / f"shard{shard.index}.json"
        # pytest-benchmark opens its JSON when pytest starts and fills it only where the shard timed benchmarks
        text = path.read_text().strip() if path.exists() else ""
        doc = json.loads(text) if text else {}
        benchmarks += doc.get("benchmarks", [])
        machines.append({**doc.get("machine_info", {}), "sweep_device": shard.label, "exit_code": result.code,
                         "interrupted": result.interrupted, "killed": result.killed,
                         "benchmark_json": "written" if doc else
                         "none" if not (result.interrupted or result.killed) else
                         f"missing: the shard ended (exit {result.code}) before pytest-benchmark wrote it; "
                         "the benchmark records of the cases it finished are lost"})
        first = first or (doc or None)
    merged = {k: v for k, v in (first or {}).items() if k not in ("benchmarks", "machine_info")}
    machine = {k: v for k, v in (first or {}).get("machine_info", {}).items() if k != "sweep_device"}
    gbs = {m["sweep_device"]: m["copy_gbs"] for m in machines if m.get("copy_gbs")}
    if gbs:
        machine["copy_gbs_per_device"] = gbs
    merged["machine_info"] = machine
    merged[KEY] = _machine(shards, machines, gbs)
    merged["benchmarks"] = sorted(benchmarks, key=lambda b: b["fullname"])
    counts = sweep_resume.outcome_counts(outcomes, not_run)
    n_not_run = counts.get("not run", 0)
    merged["sweep"] = {"devices": _gpus(shards), "shards": machines,
                       "cases": {s.label: len(s.cases) for s in shards}, "counts": counts,
                       "complete": not n_not_run, "not_run": not_run, "timing": timing,
                       "launcher": launcher or {}, "durations": durations, "outcomes": outcomes}
    return merged


def timing_line(device: str, t: dict, not_run: int) -> str:
    def s(v):
        return "?" if v is None else f"{v:.1f} s"

    compiled = (f" ({s(t['compile_s'])} of it preparing/compiling {t['compiled_cases']} benchmark(s))"
                if t.get("compile_s") is not None else "")
    return (f"device {device}: wall {s(t['wall_s'])} = {s(t['to_first_case_s'])} to the first case (pytest up after "
            f"{s(t['startup_s'])}, collected after {s(t['collected_at_s'])}) + {s(t['cases_s'])} in "
            f"{t['cases_run']} case(s){compiled} + {s(t['other_s'])} other; {not_run} not run")
