"""Shard a pytest suite over the GPUs of a host (or over cluster jobs), one pinned process per GPU, and merge.

    python -m sweep --gpus all -o norm_bwd.json -- benchmarks/test_norm_bwd.py -k bfloat16
    python -m sweep --gpus all --time-limit 500 --workdir $OUT/w -o $OUT/w/norm_bwd.json -- ...
    python -m sweep --gpus all --time-limit 500 --resume $OUT/w -o $OUT/w/norm_bwd.json
    python -m sweep --gpus 4 -o gpu_tests.json -- -m gpu tests
    python -m sweep --gpus all --each "segkit fuzz --minutes 9 --seed {shard} -o findings/{shard}"
    python -m sweep --gpus 8 --backend submitit --slurm-partition gpu -o run.json -- benchmarks

This field's habit (Thunder's CI, nvFuser's benchmarks) is one process per GPU and merged results:
pytest-benchmark turns itself off under pytest-xdist, so the shards here are plain pytest processes, each
pinned to one device with ``CUDA_VISIBLE_DEVICES`` and each keeping only its own cases
(sweep/plugin.py). Cases are balanced over the shards by the duration each took in the last
sweep (``--durations LAST.json``; longest first onto the least loaded shard), and each shard measures its
own GPU's copy bandwidth, so every case's "% of copy bandwidth" is against the GPU it ran on. The merged
file is a pytest-benchmark JSON (``benchmarks``, ``machine_info``) that ``benchmarks.summarize`` and
``pytest-benchmark compare`` read unchanged, plus a ``sweep`` object: devices,
per-shard exit codes and machine info, per-case durations for the next balance; and a top-level ``machine``
block (sweep/machine.py). Each shard compiles with a fixed thread budget and one Inductor / Triton cache
shared by all shards (``--compile-threads``, ``--compile-cache``, ``--warmup``); without ``--durations`` the
committed ``benchmarks/durations/<suite>-<gpu>.json`` balances the shards.

``--time-limit SECONDS`` (from launch) makes a sweep end with what it has instead of being killed from outside:
no case starts after the deadline (the plugin skips it, so pytest ends normally and pytest-benchmark writes its
JSON); a shard still running ``--grace`` after it gets SIGINT, and SIGKILL ``--grace`` later (SIGINT or SIGTERM
to the launcher does the same at once). Each shard rewrites its report after every case, so even a killed shard
contributes the durations and outcomes of the cases it finished. The ``sweep`` record lists per device the cases
not run and why, and where each shard's time went (``timing``); the exit code is 3 when cases did not run.
A shard whose process dies mid-case starts again with the cases it had left; the case it died in is recorded as
``crashed`` (``--respawns``, sweep/respawn.py).

``--resume WORKDIR`` continues a sweep that did not complete, with exactly the cases it did not run, and merges
all its runs into one document (sweep/resume.py says how; sweep/README.md's "Resuming" what it refuses).

``--per-gpu N`` runs N shards on each GPU (labelled "device.slot"): for a test suite whose cases mostly wait on the
CPU (tracing, compiling); a benchmark suite keeps one shard per GPU, or its timings share the GPU.

``--estimate-one-gpu MERGED`` computes the one-GPU time of a sweep's cases (sweep/estimate.py);
``--write-durations MERGED`` keeps a sweep's durations as the committed file of its suite and GPU.

``--backend submitit`` submits one job per shard through submitit (SLURM on a cluster, its local executor
elsewhere); on SLURM each job asks for one GPU and the scheduler pins it.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from sweep import respawn as sweep_respawn
from sweep import resume as sweep_resume
from sweep.estimate import EstimateError, estimate_report
from sweep.machine import KEY, machine_block
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
    """Per-case seconds from earlier merged sweeps (their ``sweep.durations``) or committed durations files
    (``durations``); later files win."""
    out: dict[str, float] = {}
    for path in paths:
        try:
            data = json.loads(read_text(path))  # the lab keeps its runs gzipped
        except (OSError, ValueError) as e:
            raise SweepError(f"--durations {path}: cannot read it as a sweep JSON ({e})") from None
        found = (data.get("sweep") or {}).get("durations") or data.get("durations")
        if not isinstance(found, dict):
            raise SweepError(f"--durations {path}: holds no per-case durations (no sweep.durations or durations)")
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


def write_durations(merged: Path, pytest_args: list[str], gpu: str | None) -> Path:
    """Keep a merged sweep's per-case seconds as the committed durations file of its suite and GPU. The suite is
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
    write_text_atomic(path, json.dumps({"suite": args, "gpu": gpu, "from": str(Path(merged).resolve().relative_to(ROOT))
                                   if Path(merged).resolve().is_relative_to(ROOT) else str(merged),
                                   "cases": len(durations), "durations": dict(sorted(durations.items()))}, indent=1)
                 + "\n")
    return path


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
    deadline: float | None = None  # epoch seconds: the shard is interrupted at deadline + grace_s
    grace_s: float = 30.0  # after the deadline before SIGINT, and after SIGINT before SIGKILL
    respawns: int = 0  # a pytest shard whose process dies mid-case starts again this often (sweep_respawn)


@dataclass
class ShardResult:
    """How one shard's process ended, and when (epoch seconds, this host's clock)."""

    code: int
    started: float
    ended: float
    interrupted: bool = False  # the launcher sent SIGINT (time limit or the launcher itself was stopped)
    killed: bool = False  # SIGINT did not end it within the grace: SIGKILL
    stopped_by: str = ""  # why it was interrupted: "the time limit" or "a signal to the launcher"


_STOP = threading.Event()  # set when the launcher is told to stop (SIGINT/SIGTERM): every shard is interrupted now
_STOPPED_BY: list[int] = []  # the signal that set _STOP (the launcher then exits 128 + it)


def run_job(job: ShardJob) -> ShardResult:
    """Run one shard; its output goes to its log. Past ``deadline + grace_s`` (or when the launcher is
    stopped) it gets SIGINT, so pytest finishes its session and pytest-benchmark still writes its JSON; a
    shard that has not ended ``grace_s`` later is killed with its whole process group."""
    env = {**os.environ, **job.env}
    if job.pin:
        env["CUDA_VISIBLE_DEVICES"] = job.shard.device
    interrupted = killed = False
    stopped_by = ""
    started = time.time()
    with open(job.log, "w") as log:
        proc = subprocess.Popen(job.command, cwd=job.workdir, env=env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        limit = None if job.deadline is None else job.deadline + job.grace_s
        while proc.poll() is None:
            if not interrupted and (_STOP.is_set() or (limit is not None and time.time() >= limit)):
                stopped_by = "a signal to the launcher" if _STOP.is_set() else "the time limit"
                proc.send_signal(signal.SIGINT)
                interrupted, limit = True, time.time() + job.grace_s
            elif interrupted and time.time() >= limit:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                    killed = True
                except ProcessLookupError:  # it ended in between
                    pass
                proc.wait()
                break
            time.sleep(0.1)
    return ShardResult(proc.returncode, started, time.time(), interrupted, killed, stopped_by)


def compile_env(threads: int, cache: Path | None) -> dict[str, str]:
    """What each shard's compilers get: a fixed thread budget (so N shards compiling at once share the CPUs
    instead of each starting a worker per core) and, unless ``cache`` is None, one Inductor / Triton cache for
    all shards, kept in the sweep's workdir so a ``--resume`` run starts warm."""
    env = {"TORCHINDUCTOR_COMPILE_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    if cache is not None:
        env.update(TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"), TRITON_CACHE_DIR=str(cache / "triton"))
    return env


def _pytest_job(shard: Shard, pytest_args: list[str], work: Path, pin: bool, deadline: float | None,
                limit_s: float | None, grace_s: float, compile_vars: dict[str, str], name: str = "") -> ShardJob:
    name = name or f"shard{shard.index}"
    cases = work / f"{name}.cases"
    cases.write_text("\n".join(shard.cases) + "\n")
    env = {"SEGKIT_SWEEP_SHARD": str(cases), "SEGKIT_SWEEP_DEVICE": shard.label,
           "SEGKIT_SWEEP_REPORT": str(work / f"{name}.report.json"), **compile_vars,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    if deadline is not None:
        env.update(SEGKIT_SWEEP_DEADLINE=repr(deadline), SEGKIT_SWEEP_LIMIT=f"{limit_s:g}")
    command = [sys.executable, "-m", "pytest", "-p", "sweep.plugin", "-p", "no:cacheprovider",
               *pytest_args, f"--benchmark-json={work / f'{name}.json'}"]
    return ShardJob(shard, command, env, str(ROOT), str(work / f"{name}.log"), pin, deadline, grace_s)


def _each_job(shard: Shard, template: str, n: int, work: Path, pin: bool, deadline: float | None,
              grace_s: float, compile_vars: dict[str, str]) -> ShardJob:
    try:
        command = template.format(shard=shard.index, device=shard.device, n=n)
    except (KeyError, IndexError, ValueError) as e:
        raise SweepError(f"--each {template!r}: only {{shard}}, {{device}} and {{n}} can be filled in ({e})") from None
    return ShardJob(shard, shlex.split(command), {"SEGKIT_SWEEP_DEVICE": shard.label, **compile_vars}, str(ROOT),
                    str(work / f"shard{shard.index}.log"), pin, deadline, grace_s)


def _finished(job: ShardJob, result: ShardResult) -> None:
    how = " (killed after SIGINT)" if result.killed else " (interrupted)" if result.interrupted else ""
    print(f"shard {job.shard.index} (device {job.shard.label}) finished after {result.ended - result.started:.1f} s: "
          f"exit {result.code}{how}, log {job.log}", flush=True)


def run_local(jobs: list[ShardJob]) -> list[ShardResult]:
    """All shards at once, one process each, on this host (a pytest shard that dies mid-case started again with
    the cases it had left, ``ShardJob.respawns`` times); a line as each one finishes."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    def run(job: ShardJob) -> ShardResult:
        if "SEGKIT_SWEEP_REPORT" in job.env:  # a pytest shard: a crash is named even with no respawn
            return sweep_respawn.run_with_respawns(job, run_job, job.respawns)
        return run_job(job)

    with ThreadPoolExecutor(max_workers=max(1, len(jobs))) as pool:
        futures = {pool.submit(run, job): i for i, job in enumerate(jobs)}
        results: list[ShardResult | None] = [None] * len(jobs)
        for future in as_completed(futures):
            i = futures[future]
            results[i] = future.result()
            _finished(jobs[i], results[i])
    return results


def run_submitit(jobs: list[ShardJob], folder: Path, cluster: str | None, partition: str | None,
                 timeout_min: int) -> list[ShardResult]:
    """One submitit job per shard; on SLURM each asks for one GPU (and is pinned by the scheduler)."""
    import submitit

    executor = submitit.AutoExecutor(folder=folder, cluster=cluster)
    params = {"timeout_min": timeout_min}
    if executor.cluster == "slurm":
        params.update(slurm_partition=partition, gpus_per_node=1, tasks_per_node=1)
    executor.update_parameters(**{k: v for k, v in params.items() if v is not None})
    handles = [executor.submit(run_job, job) for job in jobs]
    results = []
    for job, handle in zip(jobs, handles):
        results.append(handle.result())
        _finished(job, results[-1])
    return results


# --------------------------------------------------------------------------- merging
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


def _timing_line(device: str, t: dict, not_run: int) -> str:
    def s(v):
        return "?" if v is None else f"{v:.1f} s"

    compiled = (f" ({s(t['compile_s'])} of it preparing/compiling {t['compiled_cases']} benchmark(s))"
                if t.get("compile_s") is not None else "")
    return (f"device {device}: wall {s(t['wall_s'])} = {s(t['to_first_case_s'])} to the first case (pytest up after "
            f"{s(t['startup_s'])}, collected after {s(t['collected_at_s'])}) + {s(t['cases_s'])} in "
            f"{t['cases_run']} case(s){compiled} + {s(t['other_s'])} other; {not_run} not run")


# --------------------------------------------------------------------------- command line
INCOMPLETE = 3  # exit code: the sweep ended, but some cases did not run (sweep.not_run says which and why)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m sweep", description=__doc__.split("\n\n")[0])
    where = p.add_mutually_exclusive_group()
    where.add_argument("--gpus", help="'all' (default) or N: how many of the visible GPUs to use")
    where.add_argument("--devices", help="explicit device ids, e.g. 0,1,3 (labels only without a GPU: a dry run)")
    p.add_argument("--per-gpu", type=int, default=1, metavar="N",
                   help="N shards on each GPU (default 1). For a test suite whose cases mostly wait on the CPU "
                        "(compiling, tracing); never for a benchmark suite, whose timings need the GPU alone")
    p.add_argument("-o", "--output", type=Path, help="merged pytest-benchmark JSON (pytest mode)")
    p.add_argument("--durations", type=Path, action="append", default=[],
                   help="earlier merged JSON (or a durations file) to balance by; default: the committed "
                        "benchmarks/durations/<suite>-<gpu>.json where there is one")
    p.add_argument("--workdir", type=Path, help="where shard case lists, reports, JSON and logs go (default: "
                                                "OUTPUT.shards/ beside --output); put it in a folder that comes back")
    p.add_argument("--resume", type=Path, metavar="WORKDIR",
                   help="continue the sweep in WORKDIR with the cases it did not run (same pytest arguments, or "
                        "none), merging them into its outcomes; -o is where the merged JSON of all runs goes")
    p.add_argument("--time-limit", type=float, metavar="SECONDS",
                   help="from launch: no case starts after it (skipped, named in sweep.not_run); a shard still "
                        "running at the limit + --grace gets SIGINT, and SIGKILL --grace later; exit 3 if incomplete")
    p.add_argument("--grace", type=float, default=30.0, metavar="SECONDS",
                   help="with --time-limit: how long a running case may overrun before SIGINT, and SIGINT before "
                        "SIGKILL (default 30)")
    p.add_argument("--compile-threads", type=int, metavar="N",
                   help="compile threads per shard (TORCHINDUCTOR_COMPILE_THREADS, OMP_NUM_THREADS); "
                        "default: this host's cores / shards")
    p.add_argument("--compile-cache", default="workdir", metavar="DIR|workdir|none",
                   help="one Inductor / Triton cache for all shards: 'workdir' (default: WORKDIR/compile-cache, "
                        "so a --resume run starts warm), a folder, or 'none' (the environment's own)")
    p.add_argument("--warmup", type=int, default=0, metavar="N",
                   help="before the shards start, run the N shortest cases once in one process on the first "
                        "device (fills the shared compile cache; not counted as results)")
    p.add_argument("--estimate-one-gpu", type=Path, metavar="MERGED",
                   help="print the one-GPU time of a merged sweep's cases, computed from its per-case durations "
                        "and measured start-up, and its wall against it; runs nothing")
    p.add_argument("--write-durations", type=Path, metavar="MERGED",
                   help="keep a merged sweep's per-case seconds as benchmarks/durations/<suite>-<gpu>.json (what "
                        "balances the next first sweep of that suite on that GPU); runs nothing")
    p.add_argument("--gpu-name", help="with --write-durations: the GPU, for a record that does not name it")
    p.add_argument("--alone", type=Path, metavar="ONE_GPU.json",
                   help="with --estimate-one-gpu: a one-GPU sweep of some of the same cases, for the contention factor")
    p.add_argument("--respawns", type=int, default=2, metavar="N",
                   help="a shard whose pytest process dies mid-case starts again with the cases it had left (the "
                        "one it died in recorded as 'crashed'), at most N times (default 2)")
    p.add_argument("--each", metavar="CMD", help="instead of pytest: run CMD once per device, {shard}/{device}/{n} "
                                                 "filled in (independent seeds for fuzz / tune)")
    p.add_argument("--backend", choices=("local", "submitit"), default="local")
    p.add_argument("--submitit-cluster", help="submitit cluster: slurm, local or debug (default: auto-detect)")
    p.add_argument("--slurm-partition")
    p.add_argument("--timeout-min", type=int, default=60, help="per-job limit for submitit")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: what pytest runs")
    return p


def _stop_on_signals():
    """SIGINT / SIGTERM to the launcher (Ctrl-C, an outer ``timeout``) interrupts every shard and still merges
    (and saves: a second one does not cut that short). Returns a function that restores the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    _STOP.clear()
    _STOPPED_BY.clear()

    def stop(signum, frame) -> None:
        _STOPPED_BY.append(signum)
        _STOP.set()

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    return lambda: [signal.signal(sig, handler) for sig, handler in old.items()]


def _interrupted(what: str) -> int:
    """The one line for a launcher stopped by a signal, and its exit status (128 + the signal)."""
    signum = _STOPPED_BY[0] if _STOPPED_BY else signal.SIGINT
    print(f"sweep: interrupted ({signal.Signals(signum).name}): {what}", file=sys.stderr)
    return 128 + signum


def main(argv: list[str] | None = None) -> int:
    launched = time.time()
    args = _parser().parse_args(argv)
    pytest_args = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    restore = lambda: None  # noqa: E731
    try:
        if args.estimate_one_gpu:
            print(estimate_report(args.estimate_one_gpu, args.alone))
            return 0
        if args.write_durations:
            print(f"wrote {write_durations(args.write_durations, pytest_args, args.gpu_name)}")
            return 0
        if args.each and pytest_args:
            raise SweepError("--each runs a command per device; give no pytest arguments with it")
        if not args.each and not args.output:
            raise SweepError("-o/--output is required: where the merged JSON goes")
        if args.time_limit is not None and args.time_limit <= 0 or args.grace < 0:
            raise SweepError("--time-limit must be positive and --grace not negative (seconds)")
        resume = None
        if args.resume:
            if args.each:
                raise SweepError("--resume continues a pytest sweep's cases; an --each run has none to continue")
            if args.workdir:
                raise SweepError("--resume WORKDIR is the sweep's workdir: give --resume or --workdir, not both")
            resume = sweep_resume.load(args.resume.resolve(), pytest_args)
            if resume.complete:
                runs = len(resume.earlier["sweep"].get("runs") or [None])
                print(f"sweep in {args.resume} is complete ({len(resume.earlier['sweep']['outcomes'])} case(s) "
                      f"over {runs} run(s)): nothing to resume")
                return 0
            pytest_args = resume.pytest_args
        restore = _stop_on_signals()  # from here a Ctrl-C only sets _STOP: no KeyboardInterrupt inside an import
        devices = resolve_devices(args.gpus, args.devices)
        gpu = machine_block(devices=devices)["gpu"]
        if resume:
            sweep_resume.check_same_gpu(resume, gpu)
        work = args.resume or args.workdir or (args.output.parent / f"{args.output.stem}.shards" if args.output
                                               else Path("sweep.shards"))
        work = work.resolve()
        shard_dir = resume.folder(work) if resume else work
        fresh = not shard_dir.exists()
        shard_dir.mkdir(parents=True, exist_ok=True)
        pin = not (args.backend == "submitit" and args.submitit_cluster in (None, "slurm"))
        deadline = None if args.time_limit is None else launched + args.time_limit
        n_shards = len(devices) * args.per_gpu
        threads = args.compile_threads or max(1, (os.cpu_count() or 1) // n_shards)
        cache = {"none": None, "workdir": work / "compile-cache"}.get(args.compile_cache, Path(args.compile_cache))
        compile_vars = compile_env(threads, cache)
        if args.each:
            shards = slots(devices, args.per_gpu)
            jobs = [_each_job(s, args.each, len(shards), work, pin, deadline, args.grace, compile_vars)
                    for s in shards]
        else:
            # a resumed run balances by the seconds its earlier runs measured, and new --durations over those
            try:
                cases = resume.cases if resume else collect(pytest_args)
            except SweepError:
                if not _STOP.is_set():
                    raise
            if _STOP.is_set():  # the collecting pytest got the same Ctrl-C
                if fresh:
                    with contextlib.suppress(OSError):
                        shard_dir.rmdir()  # only when empty
                return _interrupted("before any shard started; no record written")
            committed = None if args.durations or resume else default_durations(pytest_args, gpu)
            if committed:
                print(f"balancing by the committed durations {committed.relative_to(ROOT)}", flush=True)
            durations = {**(resume.durations if resume else {}), **load_durations(args.durations or
                                                                                 [p for p in [committed] if p])}
            shards = [s for s in balance(cases, durations, devices, args.per_gpu) if s.cases]
            jobs = [dataclasses.replace(_pytest_job(s, pytest_args, shard_dir, pin, deadline, args.time_limit,
                                                    args.grace, compile_vars), respawns=args.respawns)
                    for s in shards]
        if _STOP.is_set():
            return _interrupted("before any shard started; no record written")
        collected = time.time()
        limit = "" if deadline is None else f"; time limit {args.time_limit:g} s ({deadline - collected:.0f} s left)"
        what = (f"run {resume.run} of the sweep in {work}: {len(cases)} case(s) not run before" if resume
                else f"collected in {collected - launched:.1f} s")
        print(f"{what}{limit}; shard files and logs in {shard_dir}", flush=True)
        for s in shards:
            print(f"shard {s.index} on device {s.label}: {len(s.cases) or 'one command'} case(s), {s.estimate()}",
                  flush=True)
        warmup_s = None
        if args.warmup > 0 and not args.each:
            warm = Shard(-1, devices[0], sorted(cases, key=lambda c: (durations.get(c, 0.0), c))[: args.warmup])
            job = _pytest_job(warm, pytest_args, shard_dir, pin, deadline, args.time_limit, args.grace, compile_vars,
                              "warmup")
            result = run_job(job)
            warmup_s = round(result.ended - result.started, 3)
            print(f"warm-up: {len(warm.cases)} case(s) on device {warm.device} in {warmup_s:.1f} s (exit "
                  f"{result.code}, log {job.log}; not counted)", flush=True)
        if args.backend == "submitit":
            results = run_submitit(jobs, work / "submitit", args.submitit_cluster, args.slurm_partition,
                                   args.timeout_min)
        else:
            results = run_local(jobs)
        codes = [r.code for r in results]
        if args.each:
            if _STOP.is_set():
                return _interrupted(f"every shard was stopped; their logs are in {work}")
            return max((0 if c == 5 else c) for c in codes)
        launcher = {"collect_s": round(collected - launched, 3), "wall_s": round(time.time() - launched, 3),
                    "time_limit_s": args.time_limit, "grace_s": args.grace if deadline is not None else None,
                    "stopped_by_signal": _STOP.is_set(), "warmup_s": warmup_s, "shards_per_gpu": args.per_gpu,
                    "compile_threads": threads,
                    "compile_cache": None if cache is None else str(cache)}
        merged = merge(shards, shard_dir, results, launcher)
        left = {c for per_device in merged["sweep"]["not_run"].values() for c in per_device}
        merged["sweep"].update(pytest_args=pytest_args,
                               pending_durations={c: durations[c] for c in sorted(left) if c in durations})
        merged = sweep_resume.combine(resume.earlier if resume else None, merged,
                                      shard_dir.relative_to(work).as_posix())
        sweep_resume.save(work, merged)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.output, json.dumps(merged, indent=1))  # never half a record
        sweep = merged["sweep"]
        for device, t in sweep["timing"].items():
            print(_timing_line(device, t, len(sweep["not_run"].get(device, {}))))
        counts = ", ".join(f"{n} {k}" for k, n in sorted(sweep["counts"].items()))
        lost = [m["sweep_device"] for m in sweep["shards"] if m["benchmark_json"].startswith("missing")]
        over = f" (run {len(sweep['runs'])} of the sweep; all runs merged)" if resume else ""
        print(f"merged {len(shards)} shard(s){over} into {args.output} in {launcher['wall_s']:.1f} s "
              f"(collection {launcher['collect_s']:.1f} s): {counts}; {len(merged['benchmarks'])} benchmark record(s)"
              + (f"; no pytest-benchmark JSON from device(s) {', '.join(lost)}" if lost else ""))
        if _STOP.is_set():
            return _interrupted(f"{counts}; what ran is merged into {args.output}; continue with --resume {work}")
        if not sweep["complete"]:
            print(f"sweep incomplete: {counts}; see sweep.not_run in {args.output}", file=sys.stderr)
            return INCOMPLETE
    except (SweepError, sweep_resume.ResumeRefused, EstimateError) as e:
        print(f"sweep: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before any shard started (collecting, balancing): nothing was run or merged
        print("sweep: interrupted (SIGINT) before any shard started; no record written", file=sys.stderr)
        return 130
    finally:
        restore()
    # pytest's 'no tests ran' on a shard whose cases were all skipped is not a failure of the sweep.
    return max((0 if c == 5 else c) for c in codes)


if __name__ == "__main__":
    sys.exit(main())
