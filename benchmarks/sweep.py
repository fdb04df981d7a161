"""Shard a pytest suite over the GPUs of a host (or over cluster jobs), one pinned process per GPU, and merge.

    python -m benchmarks.sweep --gpus all -o norm_bwd.json -- benchmarks/test_norm_bwd.py -k bfloat16
    python -m benchmarks.sweep --gpus 4 -o gpu_tests.json -- -m gpu tests
    python -m benchmarks.sweep --gpus all --each "segkit fuzz --minutes 9 --seed {shard} -o findings/{shard}"
    python -m benchmarks.sweep --gpus 8 --backend submitit --slurm-partition gpu -o run.json -- benchmarks

This field's habit (Thunder's CI, nvFuser's benchmarks) is one process per GPU and merged results:
pytest-benchmark turns itself off under pytest-xdist, so the shards here are plain pytest processes, each
pinned to one device with ``CUDA_VISIBLE_DEVICES`` and each keeping only its own cases
(benchmarks/sweep_plugin.py). Cases are balanced over the shards by the duration each took in the last
sweep (``--durations LAST.json``; longest first onto the least loaded shard), and each shard measures its
own GPU's copy bandwidth, so every case's "% of copy bandwidth" is against the GPU it ran on. The merged
file is a pytest-benchmark JSON (``benchmarks``, ``machine_info``) that ``benchmarks.summarize``,
``benchmarks.targets`` and ``pytest-benchmark compare`` read unchanged, plus a ``sweep`` object: devices,
per-shard exit codes and machine info, per-case durations for the next balance.

``--backend submitit`` submits one job per shard through submitit (SLURM on a cluster, its local executor
elsewhere); on SLURM each job asks for one GPU and the scheduler pins it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class SweepError(Exception):
    """A sweep cannot start or merge (bad device list, nothing collected, a shard wrote no results)."""


@dataclass
class Shard:
    """One worker: the device it is pinned to and the cases it runs."""

    index: int
    device: str
    cases: list[str] = field(default_factory=list)
    expected_s: float = 0.0


# --------------------------------------------------------------------------- devices and cases
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


def load_durations(paths: list[Path]) -> dict[str, float]:
    """Per-case seconds from earlier merged sweeps (their ``sweep.durations``); later files win."""
    out: dict[str, float] = {}
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as e:
            raise SweepError(f"--durations {path}: cannot read it as a sweep JSON ({e})") from None
        out.update((data.get("sweep") or {}).get("durations") or {})
    return out


def balance(cases: list[str], durations: dict[str, float], devices: list[str]) -> list[Shard]:
    """Longest case first onto the least loaded shard; a case never timed counts as the median known one."""
    known = [durations[c] for c in cases if c in durations]
    default = statistics.median(known) if known else 1.0
    shards = [Shard(i, d) for i, d in enumerate(devices)]
    for case in sorted(cases, key=lambda c: (-durations.get(c, default), c)):
        target = min(shards, key=lambda s: (s.expected_s, s.index))
        target.cases.append(case)
        target.expected_s += durations.get(case, default)
    return shards


# --------------------------------------------------------------------------- running shards
@dataclass
class ShardJob:
    """Everything one shard needs to run on its own (picklable: submitit ships it to a cluster node)."""

    shard: Shard
    command: list[str]
    env: dict[str, str]
    workdir: str
    log: str
    pin: bool = True  # set CUDA_VISIBLE_DEVICES (off on SLURM, where the scheduler pins the job's GPU)


def run_job(job: ShardJob) -> int:
    """Run one shard to completion; its output goes to its log. Returns the process's exit code."""
    env = {**os.environ, **job.env}
    if job.pin:
        env["CUDA_VISIBLE_DEVICES"] = job.shard.device
    with open(job.log, "w") as log:
        return subprocess.run(job.command, cwd=job.workdir, env=env, stdout=log, stderr=subprocess.STDOUT).returncode


def _pytest_job(shard: Shard, pytest_args: list[str], work: Path, pin: bool) -> ShardJob:
    cases = work / f"shard{shard.index}.cases"
    cases.write_text("\n".join(shard.cases) + "\n")
    env = {"SEGKIT_SWEEP_SHARD": str(cases), "SEGKIT_SWEEP_DEVICE": shard.device,
           "SEGKIT_SWEEP_REPORT": str(work / f"shard{shard.index}.report.json"),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "pytest", "-p", "benchmarks.sweep_plugin", "-p", "no:cacheprovider",
               *pytest_args, f"--benchmark-json={work / f'shard{shard.index}.json'}"]
    return ShardJob(shard, command, env, str(ROOT), str(work / f"shard{shard.index}.log"), pin)


def _each_job(shard: Shard, template: str, n: int, work: Path, pin: bool) -> ShardJob:
    try:
        command = template.format(shard=shard.index, device=shard.device, n=n)
    except (KeyError, IndexError, ValueError) as e:
        raise SweepError(f"--each {template!r}: only {{shard}}, {{device}} and {{n}} can be filled in ({e})") from None
    return ShardJob(shard, shlex.split(command), {"SEGKIT_SWEEP_DEVICE": shard.device}, str(ROOT),
                    str(work / f"shard{shard.index}.log"), pin)


def run_local(jobs: list[ShardJob]) -> list[int]:
    """All shards at once, one process each, on this host."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=max(1, len(jobs))) as pool:
        return list(pool.map(run_job, jobs))


def run_submitit(jobs: list[ShardJob], folder: Path, cluster: str | None, partition: str | None,
                 timeout_min: int) -> list[int]:
    """One submitit job per shard; on SLURM each asks for one GPU (and is pinned by the scheduler)."""
    import submitit

    executor = submitit.AutoExecutor(folder=folder, cluster=cluster)
    params = {"timeout_min": timeout_min}
    if executor.cluster == "slurm":
        params.update(slurm_partition=partition, gpus_per_node=1, tasks_per_node=1)
    executor.update_parameters(**{k: v for k, v in params.items() if v is not None})
    handles = [executor.submit(run_job, job) for job in jobs]
    return [h.result() for h in handles]


# --------------------------------------------------------------------------- merging
def merge(shards: list[Shard], work: Path, codes: list[int]) -> dict:
    """One pytest-benchmark document out of the shards' documents, with the sweep's own record beside it:
    per-case durations and outcomes (a GPU test run has no benchmark records, only those)."""
    benchmarks, machines, durations, outcomes, first = [], [], {}, {}, None
    for shard, code in zip(shards, codes):
        report = work / f"shard{shard.index}.report.json"
        if report.exists():
            data = json.loads(report.read_text())
            durations.update(data["durations"])
            outcomes.update({k: {"outcome": v, "device": shard.device} for k, v in data["outcomes"].items()})
        elif code != 0:
            raise SweepError(f"shard {shard.index} (device {shard.device}) exited {code} before reporting: "
                             f"see {work / f'shard{shard.index}.log'}")
        path = work / f"shard{shard.index}.json"
        doc = json.loads(path.read_text()) if path.exists() else {}
        benchmarks += doc.get("benchmarks", [])
        machines.append({**doc.get("machine_info", {}), "sweep_device": shard.device, "exit_code": code})
        first = first or (doc or None)
    merged = {k: v for k, v in (first or {}).items() if k not in ("benchmarks", "machine_info")}
    machine = {k: v for k, v in (first or {}).get("machine_info", {}).items() if k != "sweep_device"}
    gbs = {m["sweep_device"]: m["copy_gbs"] for m in machines if m.get("copy_gbs")}
    if gbs:
        machine["copy_gbs_per_device"] = gbs
    merged["machine_info"] = machine
    merged["benchmarks"] = sorted(benchmarks, key=lambda b: b["fullname"])
    counts: dict[str, int] = {}
    for o in outcomes.values():
        counts[o["outcome"]] = counts.get(o["outcome"], 0) + 1
    merged["sweep"] = {"devices": [s.device for s in shards], "shards": machines,
                       "cases": {s.device: len(s.cases) for s in shards}, "counts": counts,
                       "durations": durations, "outcomes": outcomes}
    return merged


# --------------------------------------------------------------------------- command line
def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.sweep", description=__doc__.split("\n\n")[0])
    where = p.add_mutually_exclusive_group()
    where.add_argument("--gpus", help="'all' (default) or N: how many of the visible GPUs to use")
    where.add_argument("--devices", help="explicit device ids, e.g. 0,1,3 (labels only without a GPU: a dry run)")
    p.add_argument("-o", "--output", type=Path, help="merged pytest-benchmark JSON (pytest mode)")
    p.add_argument("--durations", type=Path, action="append", default=[], help="earlier merged JSON to balance by")
    p.add_argument("--workdir", type=Path, help="where shard files and logs go (default: beside --output)")
    p.add_argument("--each", metavar="CMD", help="instead of pytest: run CMD once per device, {shard}/{device}/{n} "
                                                 "filled in (independent seeds for fuzz / tune)")
    p.add_argument("--backend", choices=("local", "submitit"), default="local")
    p.add_argument("--submitit-cluster", help="submitit cluster: slurm, local or debug (default: auto-detect)")
    p.add_argument("--slurm-partition")
    p.add_argument("--timeout-min", type=int, default=60, help="per-job limit for submitit")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: what pytest runs")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    pytest_args = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    try:
        if args.each and pytest_args:
            raise SweepError("--each runs a command per device; give no pytest arguments with it")
        if not args.each and not args.output:
            raise SweepError("-o/--output is required: where the merged JSON goes")
        devices = resolve_devices(args.gpus, args.devices)
        work = args.workdir or (args.output.parent / f"{args.output.stem}.shards" if args.output else Path("sweep.shards"))
        work = work.resolve()
        work.mkdir(parents=True, exist_ok=True)
        pin = not (args.backend == "submitit" and args.submitit_cluster in (None, "slurm"))
        if args.each:
            shards = [Shard(i, d) for i, d in enumerate(devices)]
            jobs = [_each_job(s, args.each, len(devices), work, pin) for s in shards]
        else:
            cases = collect(pytest_args)
            shards = [s for s in balance(cases, load_durations(args.durations), devices) if s.cases]
            jobs = [_pytest_job(s, pytest_args, work, pin) for s in shards]
        for s in shards:
            print(f"shard {s.index} on device {s.device}: {len(s.cases) or 'one command'} case(s), "
                  f"expected {s.expected_s:.0f} s", flush=True)
        if args.backend == "submitit":
            codes = run_submitit(jobs, work / "submitit", args.submitit_cluster, args.slurm_partition, args.timeout_min)
        else:
            codes = run_local(jobs)
        for s, job, code in zip(shards, jobs, codes):
            print(f"shard {s.index} (device {s.device}) exit {code}, log {job.log}")
        if not args.each:
            merged = merge(shards, work, codes)
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(json.dumps(merged, indent=1))
            counts = ", ".join(f"{n} {k}" for k, n in sorted(merged["sweep"]["counts"].items()))
            print(f"merged {len(shards)} shard(s) into {args.output}: {counts}; "
                  f"{len(merged['benchmarks'])} benchmark record(s)")
    except SweepError as e:
        print(f"sweep: {e}", file=sys.stderr)
        return 2
    # pytest's 'no tests ran' on a shard whose cases were all skipped is not a failure of the sweep.
    return max((0 if c == 5 else c) for c in codes)


if __name__ == "__main__":
    sys.exit(main())
