"""Cold-L2 timing of one GPU call: the L2 flush the benchmarks and ``segkit tune`` share, and CUDA-event time."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

import torch

L2_FLUSH_BYTES = 512 * 1024 * 1024  # larger than any current GPU's L2 (H100/H200: 50 MiB)
_flush_buffer: list[torch.Tensor] = []


def flush_l2() -> None:
    """Write a buffer larger than L2, then read it back: L2 ends holding clean lines of that buffer.

    The write alone leaves L2 full of dirty lines, and the timed kernel then pays their write-back to DRAM,
    traffic its bytes floor does not count (H200, benchmarks/results/h200-2026-11-23-final/timer_bias.log:
    RMSNorm forward 4096 x 4096 18.6 us after the write alone, 16.2 us after write + read, floor 16.0 us;
    a host wait after the write does not help, so L2 does not clean itself)."""
    if not _flush_buffer:  # one buffer, kept (clear_flush_buffer frees it)
        _flush_buffer.append(torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.float32, device="cuda"))
    _flush_buffer[0].zero_()
    _flush_buffer[0].sum()


def clear_flush_buffer() -> None:
    _flush_buffer.clear()


def event_us(fn: Callable[[], Any], reps: int = 15) -> float:
    """Median time (us) of one call between two CUDA events, L2 flushed before each: launch gaps included,
    unlike benchmarks.harness.kernel_us (kernels only); what ``segkit tune`` times and the earlier exploration
    logs were made with."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        flush_l2()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)
