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

This module is the command line (``main`` is ``python -m sweep``): ``sweep.plan`` plans the shards (devices, cases,
durations, balance), ``sweep.jobs`` runs them, ``sweep.merge`` merges what they did into one record.
"""


from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from segkit.cli import argtypes, entry
from segkit.cli.parser import Parser
from segkit.files import write_text_atomic
from sweep import jobs, plan
from sweep import resume as sweep_resume
from sweep.estimate import EstimateError, estimate_report
from sweep.machine import machine_block
from sweep.merge import merge, timing_line
from sweep.plan import ROOT, Shard, SweepError

INCOMPLETE = 3  # exit code: the sweep ended, but some cases did not run (sweep.not_run says which and why)


#: What a sweep writes into its workdir (shard case lists, reports, JSON and logs, the shared compile cache,
#: submitit's folder, the merged state and a resumed run's folder): an -o beside them is no clash.
WORKDIR = argtypes.output_dir_writing("shard*", "warmup*", "compile-cache*", "submitit*", "sweep.json*", "run[0-9]*",
                                      owned_if=("sweep.json",))
#: A merged sweep (or a pytest-benchmark JSON): what -o may write over.
MERGED_OUT = argtypes.output_file_of("a merged sweep", argtypes.json_holding("sweep", "benchmarks"), new_parent=True)


def build_parser() -> Parser:
    """``python -m sweep``'s command line."""
    p = Parser(prog="python -m sweep", description=__doc__.split("\n\n")[0])
    where = p.add_mutually_exclusive_group()
    where.add_argument("--gpus", type=argtypes.name, help="'all' (default) or N: how many of the visible GPUs to use")
    where.add_argument("--devices", type=argtypes.name,
                       help="explicit device ids, e.g. 0,1,3 (labels only without a GPU: a dry run)")
    p.add_argument("--per-gpu", type=argtypes.positive_int, default=1, metavar="N",
                   help="N shards on each GPU (default 1). For a test suite whose cases mostly wait on the CPU "
                        "(compiling, tracing); never for a benchmark suite, whose timings need the GPU alone")
    p.add_argument("-o", "--output", type=MERGED_OUT, help="merged pytest-benchmark JSON (pytest mode)")
    p.add_argument("--durations", type=argtypes.existing_file, action="append", default=[],
                   help="earlier merged JSON (or a durations file) to balance by; default: the committed "
                        "benchmarks/durations/<suite>-<gpu>.json where there is one")
    p.add_argument("--workdir", type=WORKDIR, help="where shard case lists, reports, JSON and logs go (default: "
                                                   "OUTPUT.shards/ beside --output); put it in a folder that comes back")
    p.add_argument("--resume", type=argtypes.existing_dir, metavar="WORKDIR",
                   help="continue the sweep in WORKDIR with the cases it did not run (same pytest arguments, or "
                        "none), merging them into its outcomes; -o is where the merged JSON of all runs goes")
    p.add_argument("--time-limit", type=argtypes.positive_float, metavar="SECONDS",
                   help="from launch: no case starts after it (skipped, named in sweep.not_run); a shard still "
                        "running at the limit + --grace gets SIGINT, and SIGKILL --grace later; exit 3 if incomplete")
    p.add_argument("--grace", type=argtypes.nonnegative_float, default=30.0, metavar="SECONDS",
                   help="with --time-limit: how long a running case may overrun before SIGINT, and SIGINT before "
                        "SIGKILL (default 30)")
    p.add_argument("--compile-threads", type=argtypes.positive_int, metavar="N",
                   help="compile threads per shard (TORCHINDUCTOR_COMPILE_THREADS, OMP_NUM_THREADS); "
                        "default: this host's cores / shards")
    p.add_argument("--compile-cache", default="workdir", metavar="DIR|workdir|none",
                   type=argtypes.cache_dir_or("workdir", "none"),
                   help="one Inductor / Triton cache for all shards: 'workdir' (default: WORKDIR/compile-cache, "
                        "so a --resume run starts warm), a folder, or 'none' (the environment's own)")
    p.add_argument("--warmup", type=argtypes.count, default=0, metavar="N",
                   help="before the shards start, run the N shortest cases once in one process on the first "
                        "device (fills the shared compile cache; not counted as results)")
    p.add_argument("--estimate-one-gpu", type=argtypes.existing_file, metavar="MERGED",
                   help="print the one-GPU time of a merged sweep's cases, computed from its per-case durations "
                        "and measured start-up, and its wall against it; runs nothing")
    p.add_argument("--write-durations", type=argtypes.existing_file, metavar="MERGED",
                   help="merge a merged sweep's per-case seconds into benchmarks/durations/<suite>-<gpu>.json (what "
                        "balances the next first sweep of that suite on that GPU; cases it did not run are kept); "
                        "runs nothing")
    p.add_argument("--gpu-name", type=argtypes.name,
                   help="with --write-durations: the GPU, for a record that does not name it")
    p.add_argument("--alone", type=argtypes.existing_file, metavar="ONE_GPU.json",
                   help="with --estimate-one-gpu: a one-GPU sweep of some of the same cases, for the contention factor")
    p.add_argument("--respawns", type=argtypes.count, default=2, metavar="N",
                   help="a shard whose pytest process dies mid-case starts again with the cases it had left (the "
                        "one it died in recorded as 'crashed'), at most N times (default 2)")
    p.add_argument("--each", type=argtypes.text, metavar="CMD",
                   help="instead of pytest: run CMD once per device, {shard}/{device}/{n} filled in (independent "
                        "seeds for fuzz / tune); no merged JSON (no -o): each command keeps its own results")
    p.add_argument("--backend", choices=("local", "submitit"), default="local")
    p.add_argument("--submitit-cluster", type=argtypes.name,
                   help="submitit cluster: slurm, local or debug (default: auto-detect)")
    p.add_argument("--slurm-partition", type=argtypes.name)
    p.add_argument("--timeout-min", type=argtypes.positive_int, default=60, help="per-job limit for submitit")
    p.add_argument("pytest_args", nargs=argparse.REMAINDER, help="after --: what pytest runs")
    p.goes_with("--gpu-name", "--write-durations")
    p.goes_with("--alone", "--estimate-one-gpu")
    p.goes_with("--grace", "--time-limit")
    p.set_defaults(func=_sweep)
    return p


def _stop_on_signals():
    """SIGINT / SIGTERM to the launcher (Ctrl-C, an outer ``timeout``) interrupts every shard and still merges
    (and saves: a second one does not cut that short). Returns a function that restores the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    jobs.STOP.clear()
    jobs.STOPPED_BY.clear()

    def stop(signum, frame) -> None:
        jobs.STOPPED_BY.append(signum)
        jobs.STOP.set()

    old = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    return lambda: [signal.signal(sig, handler) for sig, handler in old.items()]


def _interrupted(what: str) -> int:
    """The one line for a launcher stopped by a signal, and its exit status (128 + the signal)."""
    signum = jobs.STOPPED_BY[0] if jobs.STOPPED_BY else signal.SIGINT
    print(f"sweep: interrupted ({signal.Signals(signum).name}): {what}", file=sys.stderr)
    return 128 + signum


def _refuse_bad_options(args: argparse.Namespace, pytest_args: list[str]) -> None:
    """The option combinations ``main`` refuses before it does anything."""
    if args.each and pytest_args:
        raise SweepError("--each runs a command per device; give no pytest arguments with it")
    if args.each and args.output:
        raise SweepError("--each runs a command per device and writes no merged JSON: leave out -o/--output (each "
                         "command writes its own files)")
    if not args.each and not args.output:
        raise SweepError("-o/--output is required: where the merged JSON goes")
    if args.time_limit is not None and args.time_limit <= 0 or args.grace < 0:
        raise SweepError("--time-limit must be positive and --grace not negative (seconds)")
    if args.resume:
        if args.each:
            raise SweepError("--resume continues a pytest sweep's cases; an --each run has none to continue")
        if args.workdir:
            raise SweepError("--resume WORKDIR is the sweep's workdir: give --resume or --workdir, not both")


@dataclass
class _Setting:
    """Where and how this run's shards go, settled before any of them starts."""

    devices: list[str]
    gpu: str | None
    work: Path  # the sweep's workdir
    shard_dir: Path  # this run's shard files: the workdir, or a resumed run's folder in it
    fresh: bool  # shard_dir did not exist before (removed again, when empty, if a signal comes while collecting)
    pin: bool  # set CUDA_VISIBLE_DEVICES per shard (off on SLURM)
    deadline: float | None  # epoch seconds: no case starts after it
    threads: int  # compile threads per shard
    cache: Path | None  # the shared Inductor / Triton cache, or None for the environment's own
    compile_vars: dict[str, str]


def _setting(args: argparse.Namespace, resume, launched: float) -> _Setting:
    devices = plan.resolve_devices(args.gpus, args.devices)
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
    return _Setting(devices, gpu, work, shard_dir, fresh, pin, deadline, threads, cache,
                    jobs.compile_env(threads, cache))


def _each_jobs(args: argparse.Namespace, s: _Setting) -> tuple[list[Shard], list[jobs.ShardJob]]:
    shards = plan.slots(s.devices, args.per_gpu)
    return shards, [jobs.each_job(shard, args.each, len(shards), s.work, s.pin, s.deadline, args.grace,
                                  s.compile_vars) for shard in shards]


def _pytest_jobs(args: argparse.Namespace, pytest_args: list[str], resume, s: _Setting):
    """The cases, their durations, the balanced shards and their jobs; None when a signal came while collecting
    (the collecting pytest got the same Ctrl-C). A resumed run balances by the seconds its earlier runs measured,
    and new --durations over those."""
    try:
        cases = resume.cases if resume else plan.collect(pytest_args)
    except SweepError:
        if not jobs.STOP.is_set():
            raise
    if jobs.STOP.is_set():
        if s.fresh:
            with contextlib.suppress(OSError):
                s.shard_dir.rmdir()  # only when empty
        return None
    committed = None if args.durations or resume else plan.default_durations(pytest_args, s.gpu)
    if committed:
        print(f"balancing by the committed durations {committed.relative_to(ROOT)}", flush=True)
    durations = {**(resume.durations if resume else {}), **plan.load_durations(args.durations or
                                                                              [p for p in [committed] if p])}
    shards = [shard for shard in plan.balance(cases, durations, s.devices, args.per_gpu) if shard.cases]
    shard_jobs = [dataclasses.replace(jobs.pytest_job(shard, pytest_args, s.shard_dir, s.pin, s.deadline,
                                                      args.time_limit, args.grace, s.compile_vars),
                                      respawns=args.respawns) for shard in shards]
    return cases, durations, shards, shard_jobs


def _warmup(args: argparse.Namespace, pytest_args: list[str], cases: list[str], durations: dict[str, float],
            s: _Setting) -> float | None:
    """``--warmup N``: the N shortest cases once in one process on the first device; its seconds, or None."""
    if args.warmup <= 0 or args.each:
        return None
    warm = Shard(-1, s.devices[0], sorted(cases, key=lambda c: (durations.get(c, 0.0), c))[: args.warmup])
    job = jobs.pytest_job(warm, pytest_args, s.shard_dir, s.pin, s.deadline, args.time_limit, args.grace,
                          s.compile_vars, "warmup")
    result = jobs.run_job(job)
    warmup_s = round(result.ended - result.started, 3)
    print(f"warm-up: {len(warm.cases)} case(s) on device {warm.device} in {warmup_s:.1f} s (exit "
          f"{result.code}, log {job.log}; not counted)", flush=True)
    return warmup_s


def _record(args: argparse.Namespace, pytest_args: list[str], resume, s: _Setting, shards: list[Shard], results,
            durations: dict[str, float], launcher: dict) -> int | None:
    """Merge the shards into one record (all runs of a resumed sweep), save it, say what it holds; the exit code
    when the sweep was stopped or is incomplete, else None (the shards' own codes decide)."""
    merged = merge(shards, s.shard_dir, results, launcher)
    left = {c for per_device in merged["sweep"]["not_run"].values() for c in per_device}
    merged["sweep"].update(pytest_args=pytest_args,
                           pending_durations={c: durations[c] for c in sorted(left) if c in durations})
    merged = sweep_resume.combine(resume.earlier if resume else None, merged,
                                  s.shard_dir.relative_to(s.work).as_posix())
    sweep_resume.save(s.work, merged)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.output, json.dumps(merged, indent=1))  # never half a record
    sweep = merged["sweep"]
    for device, t in sweep["timing"].items():
        print(timing_line(device, t, len(sweep["not_run"].get(device, {}))))
    counts = ", ".join(f"{n} {k}" for k, n in sorted(sweep["counts"].items()))
    lost = [m["sweep_device"] for m in sweep["shards"] if m["benchmark_json"].startswith("missing")]
    over = f" (run {len(sweep['runs'])} of the sweep; all runs merged)" if resume else ""
    print(f"merged {len(shards)} shard(s){over} into {args.output} in {launcher['wall_s']:.1f} s "
          f"(collection {launcher['collect_s']:.1f} s): {counts}; {len(merged['benchmarks'])} benchmark record(s)"
          + (f"; no pytest-benchmark JSON from device(s) {', '.join(lost)}" if lost else ""))
    if jobs.STOP.is_set():
        return _interrupted(f"{counts}; what ran is merged into {args.output}; continue with --resume {s.work}")
    if not sweep["complete"]:
        print(f"sweep incomplete: {counts}; see sweep.not_run in {args.output}", file=sys.stderr)
        return INCOMPLETE
    return None


def main(argv: list[str] | None = None) -> int:
    """``python -m sweep``: its exit status (2 for a usage error, before anything runs)."""
    return entry.run(build_parser, argv, expected=(SweepError, sweep_resume.ResumeRefused, EstimateError),
                     expected_status=2)


def _sweep(args: argparse.Namespace) -> int:
    launched = time.time()
    pytest_args = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    restore = lambda: None  # noqa: E731
    try:
        if args.estimate_one_gpu:
            print(estimate_report(args.estimate_one_gpu, args.alone))
            return 0
        if args.write_durations:
            print(plan.write_durations(args.write_durations, pytest_args, args.gpu_name)[1])
            return 0
        _refuse_bad_options(args, pytest_args)
        resume = None
        if args.resume:
            resume = sweep_resume.load(args.resume.resolve(), pytest_args)
            if resume.complete:
                runs = len(resume.earlier["sweep"].get("runs") or [None])
                print(f"sweep in {args.resume} is complete ({len(resume.earlier['sweep']['outcomes'])} case(s) "
                      f"over {runs} run(s)): nothing to resume")
                return 0
            pytest_args = resume.pytest_args
        restore = _stop_on_signals()  # from here a Ctrl-C only sets jobs.STOP: no KeyboardInterrupt inside an import
        s = _setting(args, resume, launched)
        cases, durations = [], {}
        if args.each:
            shards, shard_jobs = _each_jobs(args, s)
        else:
            planned = _pytest_jobs(args, pytest_args, resume, s)
            if planned is None:
                return _interrupted("before any shard started; no record written")
            cases, durations, shards, shard_jobs = planned
        if jobs.STOP.is_set():
            return _interrupted("before any shard started; no record written")
        collected = time.time()
        limit = ("" if s.deadline is None
                 else f"; time limit {args.time_limit:g} s ({s.deadline - collected:.0f} s left)")
        what = (f"run {resume.run} of the sweep in {s.work}: {len(cases)} case(s) not run before" if resume
                else f"collected in {collected - launched:.1f} s")
        print(f"{what}{limit}; shard files and logs in {s.shard_dir}", flush=True)
        for shard in shards:
            print(f"shard {shard.index} on device {shard.label}: {len(shard.cases) or 'one command'} case(s), "
                  f"{shard.estimate()}", flush=True)
        warmup_s = _warmup(args, pytest_args, cases, durations, s)
        if args.backend == "submitit":
            results = jobs.run_submitit(shard_jobs, s.work / "submitit", args.submitit_cluster, args.slurm_partition,
                                        args.timeout_min)
        else:
            results = jobs.run_local(shard_jobs)
        codes = [r.code for r in results]
        if args.each:
            if jobs.STOP.is_set():
                return _interrupted(f"every shard was stopped; their logs are in {s.work}")
            return max((0 if c == 5 else c) for c in codes)
        launcher = {"collect_s": round(collected - launched, 3), "wall_s": round(time.time() - launched, 3),
                    "time_limit_s": args.time_limit, "grace_s": args.grace if s.deadline is not None else None,
                    "stopped_by_signal": jobs.STOP.is_set(), "warmup_s": warmup_s, "shards_per_gpu": args.per_gpu,
                    "compile_threads": s.threads,
                    "compile_cache": None if s.cache is None else str(s.cache)}
        code = _record(args, pytest_args, resume, s, shards, results, durations, launcher)
        if code is not None:
            return code
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
