"""``python -m sweep --estimate-one-gpu MERGED [--alone ONE_GPU.json]``: the one-GPU side of a
scale-out ratio, computed from a merged sweep instead of measured.

A sweep over N GPUs records every case's duration and each shard's start-up. One GPU running the same cases
would take the launcher's collection, one shard's start-up (to its first case), the sum of the case durations
and one shard's tail (after its last case). That sum is measured beside N - 1 other shards, which makes cases
slower (CPU contention while compiling): so the computed one-GPU time overstates the real one and the ratio
N-GPU wall / one-GPU time reads better than it is. Where a one-GPU sweep of some of the same cases is given
(``--alone``), the contention factor (sum of those cases' durations side by side / alone) is measured, and the
bound with the per-case durations divided by it is printed too.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from segkit.files import read_text


class EstimateError(Exception):
    """The file is not a merged sweep with per-case durations."""


@dataclass
class Estimate:
    """The one-GPU time of a sweep's cases, computed; and the sweep's own wall."""

    devices: int
    cases: int
    complete: bool
    wall_s: float  # the N-GPU sweep's wall (the sum over its runs where it was resumed)
    runs: int
    cases_s: float  # sum of the per-case durations, measured beside the other shards
    startup_s: float  # collection + one shard's time to its first case + one shard's tail
    contention: float | None = None  # side by side / alone, over the cases both sweeps ran
    contention_cases: int = 0

    @property
    def one_gpu_s(self) -> float:
        return self.startup_s + self.cases_s

    @property
    def one_gpu_bound_s(self) -> float | None:
        return None if self.contention is None else self.startup_s + self.cases_s / self.contention


def _sweep(path: Path) -> dict:
    try:
        sweep = json.loads(read_text(path))["sweep"]  # the lab keeps its runs gzipped
        sweep["durations"].items()
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise EstimateError(f"{path}: not a merged sweep with per-case durations ({type(e).__name__}: {e})") from None
    return sweep


def estimate(path: Path, alone: Path | None = None) -> Estimate:
    sweep = _sweep(path)
    durations = sweep["durations"]
    timing = list((sweep.get("timing") or {}).values())
    launcher = sweep.get("launcher") or {}
    if not timing or "wall_s" not in launcher:
        raise EstimateError(f"{path}: the sweep record has no per-shard timing or launcher wall (written before "
                            "sweep recorded them)")
    runs = sweep.get("runs") or [{"wall_s": launcher["wall_s"]}]
    first = statistics.median(t["to_first_case_s"] for t in timing if t.get("to_first_case_s") is not None)
    tail = statistics.median(t["other_s"] for t in timing if t.get("other_s") is not None)
    out = Estimate(devices=len(sweep["devices"]), cases=len(durations), complete=bool(sweep.get("complete")),
                   wall_s=sum(r["wall_s"] for r in runs), runs=len(runs), cases_s=sum(durations.values()),
                   startup_s=launcher.get("collect_s", 0.0) + first + tail)
    if alone is not None:
        solo = _sweep(alone)["durations"]
        common = sorted(set(solo) & set(durations))
        if not common:
            raise EstimateError(f"--alone {alone}: no case in common with {path}")
        out.contention = sum(durations[c] for c in common) / sum(solo[c] for c in common)
        out.contention_cases = len(common)
    return out


def estimate_report(path: Path, alone: Path | None = None) -> str:
    e = estimate(path, alone)
    which = "all the" if e.complete else "the"
    lines = [
        f"{e.devices}-GPU sweep {path}: {e.cases} case(s) run ({'complete' if e.complete else 'incomplete'}), "
        f"wall {e.wall_s:.1f} s over {e.runs} run(s) (measured)",
        f"1-GPU time for {which} same {e.cases} case(s), COMPUTED (not measured): {e.cases_s:.1f} s of per-case "
        f"durations + {e.startup_s:.1f} s start-up (collection, one shard to its first case, one shard's tail) "
        f"= {e.one_gpu_s:.1f} s",
        f"ratio {e.devices}-GPU wall / 1-GPU time = {e.wall_s / e.one_gpu_s:.3f} (speed-up {e.one_gpu_s / e.wall_s:.2f}x)",
        "caveat: the per-case durations were measured beside the other shards, which slows cases down (CPU "
        "contention); the computed 1-GPU time overstates the real one, so this ratio is optimistic.",
    ]
    if e.contention is not None:
        lines.append(f"contention factor {e.contention:.2f} (sum of {e.contention_cases} common case(s) side by side "
                     f"/ alone, from {alone}): 1-GPU bound {e.one_gpu_bound_s:.1f} s, ratio "
                     f"{e.wall_s / e.one_gpu_bound_s:.3f} (speed-up {e.one_gpu_bound_s / e.wall_s:.2f}x)")
    else:
        lines.append("no contention factor: give --alone ONE_GPU.json (a one-GPU sweep of some of the same cases)")
    return "\n".join(lines)
