"""Benchmark harness: cold-L2 kernel time through pytest-benchmark's timer, host wall time, a correctness gate.

pytest-benchmark times ``fn`` between two calls of its timer. ``KernelTimer``
starts torch.profiler (CUDA activity) on the first call and, on the second,
returns the summed device time of the kernels launched in between, so the
statistics pytest-benchmark prints and saves are kernel time per call. Each
round's untimed setup runs the round's own preparation (e.g. the forward pass
before a timed backward) and then writes and reads back a buffer larger than L2.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch

from benchmarks.gate import is_ours
from sweep import plugin as sweep_plugin
from sweep.machine import KEY, machine_block
from segkit.compare import diff
from segkit.nvfuser.timing import (  # noqa: F401  (the benchmarks' timers, shared with segkit's analyses)
    L2_FLUSH_BYTES, KernelTimer, event_us, flush_l2, kernel_us, wall_us)


def copy_bandwidth_gbs(nbytes: int = 1 << 30, reps: int = 20) -> float:
    """Device-to-device copy bandwidth (read + write counted), median of ``reps`` copies."""
    src = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        dst.copy_(src)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return 2 * nbytes / statistics.median(times) / 1e9


@dataclass
class Prepared:
    """One executor on one workload: the timed call, its untimed per-round setup, its outputs to check."""

    fn: Callable[[], Any]
    setup: Callable[[], None] = lambda: None
    outputs: Callable[[], Sequence[torch.Tensor]] | None = None
    info: dict = field(default_factory=dict)


def check_outputs(prepared: Prepared, refs: Sequence[torch.Tensor], names: Sequence[str]) -> float:
    """Fail the benchmark (never report it) when the executor computes the wrong thing; return the worst rel err."""
    prepared.setup()
    got = prepared.outputs() if prepared.outputs else prepared.fn()
    got = got if isinstance(got, (list, tuple)) else (got,)
    worst = 0.0
    for i, (r, g) in enumerate(zip(refs, got)):
        if g is None:
            continue
        d = diff(i, r, g.reshape(r.shape) if g.numel() == r.numel() else g)
        if not d.ok:
            pytest.fail(f"wrong result, not benchmarked: {names[i]} {d}")
        worst = max(worst, d.rel_err)
    return worst


def run(benchmark, prepared: Prepared, refs: Sequence[torch.Tensor], names: Sequence[str], nbytes: int,
        copy_gbs: float, rounds: int = 20) -> None:
    """Check, then time kernels (cold L2) with pytest-benchmark, then record the extra columns."""
    try:
        rel = check_outputs(prepared, refs, names)
    except pytest.fail.Exception as e:  # the log says why the case has no result (the gate reads it)
        _log(benchmark, error=str(e).splitlines()[0])
        if is_ours(benchmark.params.get("executor", "")):
            raise
        # a rival's wrong result is a finding about the rival, shown in the run (and the gate's record), not a
        # failure of segkit's benchmark run
        pytest.xfail(f"rival {benchmark.params['executor']}: {str(e).splitlines()[0]}")
    timer = KernelTimer()
    benchmark._timer = timer  # pytest-benchmark calls it before and after each timed call

    def setup():
        prepared.setup()
        flush_l2()

    sweep_plugin.timing_starts()  # what came before (building, compiling, the check) is this case's preparation
    benchmark.pedantic(prepared.fn, setup=setup, rounds=rounds, warmup_rounds=2, iterations=1)
    kernel_s = benchmark.stats.stats.median
    gbs = nbytes / kernel_s / 1e9 if kernel_s > 0 else 0.0
    benchmark.extra_info.update({
        "kernel_us_median": kernel_s * 1e6, "kernels": statistics.median(timer.kernel_counts[-rounds:]),
        "bytes": nbytes, "gbs": gbs, "pct_of_copy_bw": 100 * gbs / copy_gbs, "copy_gbs": copy_gbs,
        "wall_us_median": wall_us(prepared.fn, 20, prepared.setup), "max_rel_err": rel, **prepared.info,
    })
    _log(benchmark)


def _log(benchmark, error: str | None = None) -> None:
    """Append the result to $SEGKIT_BENCH_LOG (JSON lines) as it lands: a run cut short keeps what it measured.
    Each line carries the machine block, so a file of lines from several runs still says where each came from; a
    case that failed its validation is a line with its ``error`` and no result."""
    path = os.environ.get("SEGKIT_BENCH_LOG")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"name": benchmark.name, "params": {k: str(v) for k, v in benchmark.params.items()},
                                "extra_info": benchmark.extra_info, **({"error": error} if error else {}),
                                KEY: machine_block(benchmark.extra_info.get("copy_gbs"))}) + "\n")
