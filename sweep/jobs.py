"""Running a sweep's shards: what one shard runs (``ShardJob``: its command, environment, log, deadline), how
its process ended (``ShardResult``), and running them all at once on this host or as submitit jobs.

Past its deadline plus the grace, or when the launcher is stopped (``STOP``), a shard gets SIGINT so pytest still
ends its session and writes its JSON, and SIGKILL with its process group a grace later.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from segkit.files import write_atomic
from sweep import respawn as sweep_respawn
from sweep.plan import ROOT, Shard, SweepError


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


STOP = threading.Event()  # set when the launcher is told to stop (SIGINT/SIGTERM): every shard is interrupted now
STOPPED_BY: list[int] = []  # the signal that set STOP (the launcher then exits 128 + it)


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
            if not interrupted and (STOP.is_set() or (limit is not None and time.time() >= limit)):
                stopped_by = "a signal to the launcher" if STOP.is_set() else "the time limit"
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


def pytest_job(shard: Shard, pytest_args: list[str], work: Path, pin: bool, deadline: float | None,
               limit_s: float | None, grace_s: float, compile_vars: dict[str, str], name: str = "") -> ShardJob:
    name = name or f"shard{shard.index}"
    cases = work / f"{name}.cases"
    write_atomic(cases, "\n".join(shard.cases) + "\n")
    env = {"SEGKIT_SWEEP_SHARD": str(cases), "SEGKIT_SWEEP_DEVICE": shard.label,
           "SEGKIT_SWEEP_REPORT": str(work / f"{name}.report.json"), **compile_vars,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    if deadline is not None:
        env.update(SEGKIT_SWEEP_DEADLINE=repr(deadline), SEGKIT_SWEEP_LIMIT=f"{limit_s:g}")
    command = [sys.executable, "-m", "pytest", "-p", "sweep.plugin", "-p", "no:cacheprovider",
               *pytest_args, f"--benchmark-json={work / f'{name}.json'}"]
    return ShardJob(shard, command, env, str(ROOT), str(work / f"{name}.log"), pin, deadline, grace_s)


def each_job(shard: Shard, template: str, n: int, work: Path, pin: bool, deadline: float | None,
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
