"""Planning a sweep's shards: the devices, the cases pytest would run, the per-case seconds that balance them
(an earlier sweep's, or the committed ``benchmarks/durations/<suite>-<gpu>.json``), and the balance itself.

Nothing here starts a shard (sweep.jobs does) or reads what one did (sweep.merge); ``python -m sweep
--write-durations`` keeps a merged sweep's seconds as its suite's committed file (``write_durations``).
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from segkit.files import read_text, write_text_atomic

ROOT = Path(__file__).resolve().parent.parent
DURATIONS_DIR = ROOT / "benchmarks" / "durations"  # committed per-case seconds, one file per suite and GPU


class SweepError(Exception):
    """A sweep cannot start or merge (bad device list, nothing collected, a shard wrote no results)."""


@dataclass
class Shard:
    """One worker: the device it is pinned to and the cases it runs."""

    index: int
    device: str  # the GPU it is pinned to (what CUDA_VISIBLE_DEVICES holds)
    cases: list[str] = field(default_factory=list)
    expected_s: float = 0.0  # what balancing weighed: measured seconds, a never-timed case as the median one
    known_s: float = 0.0  # measured seconds only (from --durations)
    untimed: int = 0  # cases no earlier sweep timed
    label: str = ""  # what the record names it by: the device, or "device.slot" with several shards per GPU

    def __post_init__(self) -> None:
        self.label = self.label or self.device

    def estimate(self) -> str:
        """What the launcher can honestly say about this shard's duration before it runs."""
        if not self.cases:
            return "duration unknown (one command)"
        if self.untimed == len(self.cases):
            return "duration unknown (no --durations timing for its cases)"
        if self.untimed:
            return f"{self.known_s:.0f} s measured last time for {len(self.cases) - self.untimed} case(s), " \
                   f"{self.untimed} never timed"
        return f"expected {self.known_s:.0f} s (last sweep's durations)"



def resolve_devices(gpus: str | None, devices: str | None) -> list[str]:
    """``--devices 0,2,5`` as given; ``--gpus all|N``: the visible GPUs (honouring CUDA_VISIBLE_DEVICES)."""
    if devices:
        out = [d.strip() for d in devices.split(",")]
        if any(not d for d in out) or len(set(out)) != len(out):
            raise SweepError(f"--devices {devices!r}: give distinct, non-empty device ids separated by commas")
        return out
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = [d.strip() for d in visible.split(",") if d.strip()]
    else:
        import torch

        ids = [str(i) for i in range(torch.cuda.device_count())]
    if not ids:
        raise SweepError("no GPU is visible: run on a GPU host, or name labels with --devices for a dry run")
    if gpus in (None, "all"):
        return ids
    if not gpus.isdigit() or int(gpus) < 1:
        raise SweepError(f"--gpus {gpus!r}: expected 'all' or a positive number")
    if int(gpus) > len(ids):
        raise SweepError(f"--gpus {gpus}: only {len(ids)} GPU(s) visible ({', '.join(ids)})")
    return ids[: int(gpus)]


def collect(pytest_args: list[str]) -> list[str]:
    """The node ids pytest would run for ``pytest_args`` (collected once, in this process's environment)."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           *pytest_args], cwd=ROOT, capture_output=True, text=True)
    ids = [line.strip() for line in proc.stdout.splitlines() if "::" in line and not line.startswith(" ")]
    if proc.returncode not in (0, 5):
        raise SweepError(f"collecting {' '.join(pytest_args) or 'the default suite'} failed "
                         f"(pytest exit {proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    if not ids:
        raise SweepError(f"pytest collected no case for: {' '.join(pytest_args) or '(no arguments)'}")
    return ids


def _duration(seconds) -> bool:
    """Whether ``seconds`` can be a case's duration: a finite number >= 0."""
    return isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and math.isfinite(seconds) \
        and seconds >= 0


def load_durations(paths: list[Path]) -> dict[str, float]:
    """Per-case seconds from earlier merged sweeps (their ``sweep.durations``) or committed durations files
    (``durations``); later files win."""
    out: dict[str, float] = {}
    for path in paths:
        try:
            data = json.loads(read_text(path))  # the lab keeps its runs gzipped
        except (OSError, ValueError) as e:
            raise SweepError(f"--durations {path}: cannot read it as a sweep JSON ({e})") from None
        found = ((data.get("sweep") or {}).get("durations") or data.get("durations")) if isinstance(data, dict) \
            else None
        if not isinstance(found, dict):
            raise SweepError(f"--durations {path}: holds no per-case durations (no sweep.durations or durations)")
        for case, seconds in found.items():
            if not _duration(seconds):
                raise SweepError(f"--durations {path}: case {case}: {seconds!r} is not a duration (seconds, finite, "
                                 ">= 0); fix the file or leave it out")
        out.update(found)
    return out


def suite_key(pytest_args: list[str]) -> str:
    """The name a suite's committed durations file goes by: the stems of the paths pytest runs, joined
    (``benchmarks/test_norm_bwd.py -k bfloat16`` -> test_norm_bwd; ``-m gpu tests`` -> tests)."""
    options_with_value = {"-k", "-m", "-p", "-o", "--deselect", "--ignore"}
    paths, skip = [], False
    for arg in pytest_args:
        if skip or arg.startswith("-"):
            skip = not skip and arg in options_with_value
            continue
        paths.append(Path(arg.split("::")[0]).stem)
    return "+".join(paths) or "default"


def gpu_key(gpu: str | None) -> str | None:
    """'NVIDIA H200' -> h200, 'NVIDIA H100 80GB HBM3' -> h100: the GPU part of a durations file name."""
    words = [w for w in (gpu or "").lower().split() if w != "nvidia"]
    return words[0] if words else None


def write_durations(merged: Path, pytest_args: list[str], gpu: str | None) -> tuple[Path, str]:
    """Merge a merged sweep's per-case seconds into the committed durations file of its suite and GPU (a case it
    ran replaces its old seconds, one it did not run keeps them): the file, and the line saying what it kept and
    replaced. The suite is
    the one the sweep ran (``sweep.pytest_args``; ``pytest_args`` for a record older than that field), the GPU its
    machine block's, a record's ``sweep_gpu``, or ``gpu``."""
    from sweep.machine import block_of, legacy_block

    try:
        doc = json.loads(read_text(merged))  # the lab keeps its runs gzipped
        sweep = doc["sweep"]
        durations = dict(sweep["durations"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SweepError(f"--write-durations {merged}: not a merged sweep with per-case durations "
                         f"({type(e).__name__}: {e})") from None
    args = sweep.get("pytest_args") or pytest_args
    seen = (block_of(doc) or legacy_block(doc) or {}).get("gpu") or next(
        (b["extra_info"]["sweep_gpu"] for b in doc.get("benchmarks", []) if b.get("extra_info", {}).get("sweep_gpu")),
        None)
    gpu = seen or gpu
    if not args or not gpu_key(gpu):
        raise SweepError(f"--write-durations {merged}: the record does not name its "
                         f"{'pytest arguments (give them after --)' if not args else 'GPU (give --gpu-name)'}")
    path = DURATIONS_DIR / f"{suite_key(args)}-{gpu_key(gpu)}.json"
    kept = {}
    if path.exists():  # the committed file: merged, never replaced by a smaller run
        try:
            kept = dict(json.loads(read_text(path))["durations"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise SweepError(f"{path}: not a durations file ({type(e).__name__}: {e}); fix it or remove it, then "
                             "run --write-durations again") from None
    for case, seconds in durations.items():
        if not _duration(seconds):
            raise SweepError(f"--write-durations {merged}: case {case}: {seconds!r} is not a duration (seconds, "
                             "finite, >= 0)")
    replaced = sum(c in kept for c in durations)
    total = {**kept, **durations}
    source = (str(Path(merged).resolve().relative_to(ROOT)) if Path(merged).resolve().is_relative_to(ROOT)
              else str(merged))
    write_text_atomic(path, json.dumps({"suite": args, "gpu": gpu, "from": source, "cases": len(total),
                                        "durations": dict(sorted(total.items()))}, indent=1) + "\n")
    return path, (f"wrote {path}: {len(total)} case(s): {len(durations) - replaced} added and {replaced} replaced from "
            f"{merged}, {len(kept) - replaced} kept that it did not run")


def default_durations(pytest_args: list[str], gpu: str | None) -> Path | None:
    """The committed durations file of this suite on this GPU (``benchmarks/durations/<suite>-<gpu>.json``), else
    of this suite on another GPU (relative durations still balance better than counts), else None: what balances
    the first sweep on a host."""
    suite = suite_key(pytest_args)
    path = DURATIONS_DIR / f"{suite}-{gpu_key(gpu)}.json"
    if gpu_key(gpu) and path.is_file():
        return path
    others = sorted(DURATIONS_DIR.glob(f"{suite}-*.json"))
    return others[0] if others else None


def slots(devices: list[str], per_gpu: int = 1) -> list[Shard]:
    """Empty shards, ``per_gpu`` on each device: one each on every device first, then a second each, and so on
    (labelled "device.slot" when there are several per GPU)."""
    if per_gpu < 1:
        raise SweepError(f"--per-gpu {per_gpu}: expected at least 1 shard per GPU")
    pairs = [(d, d if per_gpu == 1 else f"{d}.{k}") for k in range(per_gpu) for d in devices]
    return [Shard(i, d, label=label) for i, (d, label) in enumerate(pairs)]


def balance(cases: list[str], durations: dict[str, float], devices: list[str], per_gpu: int = 1) -> list[Shard]:
    """Longest case first onto the least loaded shard; a case never timed counts as the median known one (of
    these cases; where none of them was timed, of all ``durations``: what a resumed sweep ran so far)."""
    known = [durations[c] for c in cases if c in durations] or list(durations.values())
    default = statistics.median(known) if known else 1.0
    shards = slots(devices, per_gpu)
    for case in sorted(cases, key=lambda c: (-durations.get(c, default), c)):
        target = min(shards, key=lambda s: (s.expected_s, s.index))
        target.cases.append(case)
        target.expected_s += durations.get(case, default)
        if case in durations:
            target.known_s += durations[case]
        else:
            target.untimed += 1
    return shards
