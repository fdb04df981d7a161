"""A shard whose pytest process dies mid-suite (an abort in a native library, a CUDA error that ends the process)
starts again on its device with the cases it had left, less the one it died in, which is recorded as
``crashed``. Without this one such case cost a GPU suite run every case queued behind it on that device.

A shard's attempts write their own case list, report, pytest-benchmark JSON and log (``shardI.rN.*`` beside
``shardI.*``); ``run_with_respawns`` folds them back into ``shardI.report.json`` and ``shardI.json`` and one
``ShardResult`` spanning all of them, so the merge reads a respawned shard like any other:

    attempt 0: a b c [d dies]        ->  outcomes a b c, d crashed
    attempt 1: e f g                 ->  outcomes e f g
    shard0.report.json: a b c e f g, d crashed; crashes [{crashed: d, exit: -6}]
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from segkit.files import write_atomic

# sweep.jobs's ShardJob and ShardResult (that module imports this one, so they are not imported here)
ShardJob = ShardResult = Any

CRASHED = "crashed"  # the outcome of a case its shard's process died in


def _report(job: ShardJob) -> dict:
    path = Path(job.env["SEGKIT_SWEEP_REPORT"])
    return json.loads(path.read_text()) if path.exists() else {}


def _benchmark_json(job: ShardJob) -> Path:
    return Path(next(a for a in job.command if a.startswith("--benchmark-json=")).split("=", 1)[1])


def died_in(report: dict, result: ShardResult) -> str | None:
    """The case a process died in: the one its report says was running, unless the launcher stopped it (SIGINT or
    SIGKILL at the time limit, which merge() reports as such)."""
    return None if result.interrupted or result.killed else report.get("running")


def left_after(job: ShardJob, report: dict) -> list[str]:
    """The job's cases that its process neither finished nor declined (time limit, not collected)."""
    done = set(report.get("outcomes") or {}) | set(report.get("not_run") or {})
    return [c for c in job.shard.cases if c not in done]


def respawned(job: ShardJob, cases: list[str], attempt: int) -> ShardJob:
    """``job`` for ``cases`` only, its files named ``shardI.rN.*`` so that no attempt overwrites another's."""
    def renamed(path: str) -> str:
        p = Path(path)
        stem, _, ext = p.name.partition(".")
        return str(p.with_name(f"{stem}.r{attempt}.{ext}"))

    cases_file = renamed(job.env["SEGKIT_SWEEP_SHARD"])
    write_atomic(cases_file, "\n".join(cases) + "\n")
    env = {**job.env, "SEGKIT_SWEEP_SHARD": cases_file, "SEGKIT_SWEEP_REPORT": renamed(job.env["SEGKIT_SWEEP_REPORT"])}
    command = [f"--benchmark-json={renamed(str(_benchmark_json(job)))}" if a.startswith("--benchmark-json=") else a
               for a in job.command]
    return dataclasses.replace(job, shard=dataclasses.replace(job.shard, cases=cases), command=command, env=env,
                               log=renamed(job.log))


def run_with_respawns(job: ShardJob, run: Callable[[ShardJob], ShardResult], respawns: int) -> ShardResult:
    """``run(job)``, and again with the cases left while the process died mid-case, at most ``respawns`` times and
    never past the job's deadline. Returns one result spanning the attempts; their reports and JSON are folded
    into the first attempt's files."""
    attempts = [(job, run(job))]
    while len(attempts) <= respawns:
        last_job, last = attempts[-1]
        report = _report(last_job)
        dead = died_in(report, last)
        left = [c for c in left_after(last_job, report) if c != dead]
        late = job.deadline is not None and time.time() >= job.deadline
        if late or dead is None or not left:  # no case to blame (stopped, or died starting up): no new attempt
            break
        print(f"shard {job.shard.index} (device {job.shard.label}) died in {dead} (exit {last.code}): "
              f"starting again with the {len(left)} case(s) left", flush=True)
        retry = respawned(job, left, len(attempts))
        attempts.append((retry, run(retry)))
    if len(attempts) == 1 and died_in(_report(job), attempts[0][1]) is None:
        return attempts[0][1]
    return fold(attempts)


def fold(attempts: list[tuple[ShardJob, ShardResult]]) -> ShardResult:
    """The attempts' reports and pytest-benchmark documents written as the first attempt's, and their span."""
    first_job, first = attempts[0]
    merged = {"durations": {}, "outcomes": {}, "prepare_s": {}, "not_run": {}, "crashes": []}
    docs = []
    for job, result in attempts:
        report = _report(job)
        for key in ("durations", "outcomes", "prepare_s", "not_run"):
            merged[key].update(report.get(key) or {})
        dead = died_in(report, result)
        if dead is not None and dead not in merged["outcomes"]:
            merged["outcomes"][dead] = CRASHED
            merged["not_run"].pop(dead, None)
            merged["crashes"].append({"crashed": dead, "exit": result.code, "log": job.log})
        path = _benchmark_json(job)
        text = path.read_text().strip() if path.exists() else ""
        if text:
            docs.append(json.loads(text))
    merged["stamps"] = _report(first_job).get("stamps") or {}
    write_atomic(first_job.env["SEGKIT_SWEEP_REPORT"], json.dumps(merged, indent=1))
    if docs:
        doc = {**docs[-1], "benchmarks": [b for d in docs for b in d.get("benchmarks", [])]}
        write_atomic(_benchmark_json(first_job), json.dumps(doc))
    last = attempts[-1][1]
    code = last.code if last.code not in (0, 5) or not merged["crashes"] else 1
    return dataclasses.replace(last, code=code, started=first.started)
