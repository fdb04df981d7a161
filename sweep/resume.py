"""``python -m sweep --resume WORKDIR``: continue a sweep that its time limit cut, over as many runs as
it takes, and keep one merged document of all of them.

Every pytest-mode sweep leaves its merged document in its workdir (``sweep.json``, beside the shard files), with
the pytest arguments it ran and the cases it did not run (``sweep.not_run``). A resumed run reads that document,
runs exactly those cases (balanced by the seconds known for them, see ``Resume.durations``) with its shard files
in ``WORKDIR/runK/``, and merges its outcome into the earlier one: outcomes, durations and pytest-benchmark
records of both, the newer one winning for a case that ran in both; ``sweep.runs`` lists each run's wall time and
cases. Nothing here knows how shards run: ``sweep.jobs`` does that, and ``sweep.launch`` calls ``load``,
``combine`` and ``save``.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from segkit.files import write_atomic
from sweep.machine import KEY, block_of

STATE = "sweep.json"  # the merged document so far, in the workdir


class ResumeRefused(Exception):
    """``--resume`` cannot continue this workdir (no sweep there, or other pytest arguments than the earlier run's)."""


@dataclass
class Resume:
    """What a resumed run continues from."""

    earlier: dict  # the merged document so far
    pytest_args: list[str]  # the earlier runs' pytest arguments (this run uses the same)
    cases: list[str]  # not run yet: this run's cases
    durations: dict[str, float]  # seconds to balance them by: measured so far, and the earlier runs' --durations
    run: int  # this run's number (the first run of a sweep is 1)

    @property
    def complete(self) -> bool:
        return not self.cases

    def folder(self, work: Path) -> Path:
        """Where this run's shard files go (the first run's are in the workdir itself, so they stay untouched)."""
        return work / f"run{self.run}"


def _quote(args: list[str]) -> str:
    return shlex.join(args) if args else "(none)"


def load(work: Path, pytest_args: list[str]) -> Resume:
    """The sweep in ``work``, checked: a one-line ``ResumeRefused`` where there is none, or where ``pytest_args``
    (empty: the earlier ones) differ from what the earlier run ran."""
    path = work / STATE
    if not path.is_file():
        raise ResumeRefused(f"--resume {work}: no sweep there (no {STATE}); start one with --workdir {work}")
    try:
        earlier = json.loads(path.read_text())
        sweep = earlier["sweep"]
        ran_with = list(sweep["pytest_args"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ResumeRefused(f"--resume {work}: {STATE} is not a sweep's merged record ({e!r})") from None
    if pytest_args and pytest_args != ran_with:
        raise ResumeRefused(f"--resume {work}: its sweep ran pytest with {_quote(ran_with)}, this run gives "
                            f"{_quote(pytest_args)}; give the same arguments or none")
    cases = sorted({case for per_device in (sweep.get("not_run") or {}).values() for case in per_device})
    durations = {**(sweep.get("pending_durations") or {}), **(sweep.get("durations") or {})}
    return Resume(earlier, ran_with, cases, durations, len(sweep.get("runs") or [None]) + 1)


def check_same_gpu(resume: Resume, gpu: str | None) -> None:
    """Refuse to continue on another GPU model: one merged record holds one machine's numbers."""
    earlier = (block_of(resume.earlier) or {}).get("gpu")
    if earlier and gpu and earlier != gpu:
        raise ResumeRefused(f"--resume: the earlier runs of this sweep ran on {earlier}, this run's devices are {gpu}; "
                            "continue it on the same GPU model, or start a new sweep")


def outcome_counts(outcomes: dict, not_run: dict) -> dict[str, int]:
    """How many cases ended in each outcome, and how many were not run."""
    counts: dict[str, int] = {}
    for o in outcomes.values():
        counts[o["outcome"]] = counts.get(o["outcome"], 0) + 1
    n_not_run = sum(len(v) for v in not_run.values())
    if n_not_run:
        counts["not run"] = n_not_run
    return counts


def run_record(merged: dict, folder: str) -> dict:
    """One entry of ``sweep.runs``: what this run did, from its own merged document."""
    sweep = merged["sweep"]
    launcher = sweep.get("launcher") or {}
    block = block_of(merged) or {}
    return {"folder": folder, "wall_s": launcher.get("wall_s"), "time_limit_s": launcher.get("time_limit_s"),
            "commit": block.get("commit"), "date": block.get("date"),
            "devices": sweep["devices"], "cases_run": len(sweep["outcomes"]),
            "not_run": sum(len(v) for v in sweep["not_run"].values())}


def combine(earlier: dict | None, new: dict, folder: str) -> dict:
    """The earlier merged document (None: this is a sweep's first run) with this run's merged into it. This run's
    outcomes, durations and benchmark records replace the earlier ones of the same case; what is still not run,
    and the per-run fields (devices, shards, timing, launcher), are this run's; ``sweep.runs`` gains this run."""
    record = run_record(new, folder)
    if earlier is None:
        new["sweep"]["runs"] = [record]
        return new
    old, cur = earlier["sweep"], new["sweep"]
    ran = set(cur["outcomes"])
    benchmarks = [b for b in earlier.get("benchmarks", []) if b["fullname"] not in ran] + new.get("benchmarks", [])
    machine = dict(earlier.get("machine_info") or new.get("machine_info") or {})
    gbs = {**(machine.get("copy_gbs_per_device") or {}), **(new.get("machine_info") or {}).get("copy_gbs_per_device", {})}
    if gbs:
        machine["copy_gbs_per_device"] = gbs
    outcomes = {**old.get("outcomes", {}), **cur["outcomes"]}
    block = dict(block_of(new) or block_of(earlier) or {})
    if block and gbs:
        block["copy_gbs"] = {k: round(float(v), 1) for k, v in gbs.items()}
    return {**earlier, **{k: v for k, v in new.items() if k not in ("benchmarks", "machine_info", "sweep", KEY)},
            "machine_info": machine, KEY: block or None, "benchmarks": sorted(benchmarks, key=lambda b: b["fullname"]),
            "sweep": {**cur, "durations": {**old.get("durations", {}), **cur["durations"]}, "outcomes": outcomes,
                      "counts": outcome_counts(outcomes, cur["not_run"]), "runs": [*old.get("runs", []), record]}}


def save(work: Path, merged: dict) -> None:
    """Keep the merged document in the workdir for the next ``--resume`` (whole or not at all)."""
    write_atomic(work / STATE, json.dumps(merged, indent=1))
