"""The cold-L2 timers the benchmarks use, shared with the analyses (segments, report) and ``segkit tune``.

``KernelTimer`` starts torch.profiler (CUDA activity) on its first call and, on the second, returns the
summed device time of the kernels launched in between. Before each timed call a buffer larger than L2 is
written and read back (``flush_l2``), so every kernel starts from cold L2 with no dirty lines to write back.
torch.profiler and nvFuser's own profiler cannot share CUPTI in one process: whichever runs first keeps it
(``claim_cupti`` makes the other one an error instead of no kernels or an exited process).
"""

from __future__ import annotations

import re
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

L2_FLUSH_BYTES = 512 * 1024 * 1024  # larger than any current GPU's L2
_flush_buffer: list[torch.Tensor] = []


def flush_l2() -> None:
    """Write a buffer larger than L2, then read it back: L2 ends holding clean lines of that buffer.

    The write alone leaves L2 full of dirty lines, and the timed kernel then pays their write-back to DRAM,
    traffic its bytes floor does not count."""
    if not _flush_buffer:  # one buffer, kept (clear_flush_buffer frees it)
        _flush_buffer.append(torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.float32, device="cuda"))
    _flush_buffer[0].zero_()
    _flush_buffer[0].sum()


def clear_flush_buffer() -> None:
    _flush_buffer.clear()


def event_us(fn: Callable[[], Any], reps: int = 15) -> float:
    """Median time (us) of one call between two CUDA events, L2 flushed before each: launch gaps included,
    unlike ``kernel_us`` (kernels only). ``segkit tune`` shows it beside the kernel time it ranks by; the
    earlier exploration logs and the tuning table's "events" entries were made with it."""
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


#: the profiler that subscribed to CUPTI first in this process. It keeps the subscription for the life of the
#: process: torch.profiler then sees no kernel of a call made after nvFuser's profiler ran, and nvFuser's
#: profiler exits the whole process (CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) after torch.profiler ran.
_cupti_owner: list[str] = []


def claim_cupti(profiler: str) -> None:
    """Take CUPTI for ``profiler`` ("torch.profiler" or "nvFuser's profiler"), or raise if the other one has it."""
    if not _cupti_owner:
        _cupti_owner.append(profiler)
    elif _cupti_owner[0] != profiler:
        raise RuntimeError(f"{profiler} cannot profile this call: {_cupti_owner[0]} took CUPTI earlier in this "
                           "process, and the two cannot share it (torch.profiler would see no kernel, nvFuser's "
                           "profiler would exit the process); profile in a separate process")


def _is_kernel(event) -> bool:
    return event.device_type == torch.autograd.DeviceType.CUDA and not event.name.startswith(("Memcpy", "Memset"))


def cuda_profiler(activities: Sequence[Any] | None = None, **kwargs: Any) -> torch.profiler.profile:
    """``torch.profiler.profile`` (CUDA activity unless ``activities`` says otherwise), CUPTI claimed first when it
    records CUDA: the one way segkit, its benchmarks and its GPU tests start torch.profiler, so that nvFuser's
    profiler later in the process raises instead of exiting the process."""
    activities = list(activities or [torch.profiler.ProfilerActivity.CUDA])
    if torch.profiler.ProfilerActivity.CUDA in activities:
        claim_cupti("torch.profiler")
    return torch.profiler.profile(activities=activities, **kwargs)


class KernelTimer:
    """A pytest-benchmark timer whose durations are the kernel time of the timed call, in seconds.
    ``last`` holds (name, microseconds) of each kernel of the last timed call, in launch order."""

    def __init__(self) -> None:
        self._prof = None
        self.kernel_counts: list[int] = []
        self.last: list[tuple[str, float]] = []

    def __call__(self) -> float:
        if self._prof is None:
            self._prof = cuda_profiler()
            torch.cuda.synchronize()
            self._prof.__enter__()
            return 0.0
        torch.cuda.synchronize()
        prof, self._prof = self._prof, None
        prof.__exit__(None, None, None)
        kernels = sorted((e for e in prof.events() if _is_kernel(e)), key=lambda e: e.time_range.start)
        self.kernel_counts.append(len(kernels))
        self.last = [(e.name, e.time_range.elapsed_us()) for e in kernels]
        return sum(us for _, us in self.last) * 1e-6


def kernel_us(fn: Callable[[], Any], reps: int = 30, flush: Callable[[], Any] | None = None) -> float:
    """Median summed kernel time (us) of one call with L2 flushed before each (``flush``, default
    ``flush_l2``): the benchmarks' timer outside pytest-benchmark."""
    flush = flush or flush_l2
    fn()
    timer = KernelTimer()
    times = []
    for _ in range(reps):
        flush()
        timer()
        fn()
        times.append(timer() * 1e6)
    if not any(times):
        _check_profiler_sees_kernels()
    return statistics.median(times)


def _check_profiler_sees_kernels() -> None:
    """A call timed at no kernel at all is either kernel-free or unseen: tell the two apart with a kernel of our
    own, so that a profiler that sees nothing (CUPTI taken earlier in this process by a profiler ``claim_cupti``
    does not know of, e.g. nvFuser's started outside segkit) is an error instead of a 0 us time that would win
    every comparison."""
    timer = KernelTimer()
    probe = torch.zeros(1, device="cuda")
    timer()
    probe.add_(1)
    timer()
    if not timer.last:
        raise RuntimeError("torch.profiler sees no CUDA kernel in this process (did nvFuser's profiler, "
                           "segkit.nvfuser.run.profile_call, run here first? The two cannot share CUPTI): "
                           "no kernel time")


def wall_us(call: Callable[[], Any], reps: int, setup: Callable[[], Any] | None = None) -> float:
    """Host wall time per synchronised call, median over ``reps`` (``setup`` runs untimed before each)."""
    times = []
    for _ in range(reps):
        if setup is not None:
            setup()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        call()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


def async_host_us(call: Callable[[], Any], calls: int = 50) -> float:
    """CPU time per call with ``calls`` launched back to back and one sync at the end (the CPU ahead of the GPU,
    as in a training step): what the host path costs when the kernels do not block it."""
    call()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        call()
    host = time.perf_counter() - t0
    torch.cuda.synchronize()
    return host / calls * 1e6


@dataclass
class KernelTime:
    """One kernel of a timed call: its name, median time (cold L2) and nvFuser's segment (group) id."""

    name: str
    us: float
    group: int | None = None


_NVF_KERNEL = re.compile(r"nvfuser_(\w+?)_f\d+_c\d+_r\d+_g(\d+)")


def nvfuser_group(kernel_name: str) -> int | None:
    """The segment (group) id nvFuser put in a kernel's name (``nvfuser_<scheduler>_f<f>_c<c>_r<r>_g<group>``)."""
    m = _NVF_KERNEL.search(kernel_name)
    return int(m.group(2)) if m else None


def nvfuser_scheduler(kernel_name: str) -> str | None:
    """The scheduler nvFuser put in a kernel's name."""
    m = _NVF_KERNEL.search(kernel_name)
    return m.group(1) if m else None


def kernel_breakdown(fn: Callable[[], Any], reps: int = 30, flush: Callable[[], Any] | None = None) -> list[KernelTime]:
    """Each kernel of one call of ``fn`` (launch order) with its median time over ``reps`` cold-L2 calls
    (the repetitions that launched the most common list of kernels; an error when no list is a majority)."""
    flush = flush or flush_l2
    fn()
    timer = KernelTimer()
    runs: list[list[tuple[str, float]]] = []
    for _ in range(reps):
        flush()
        timer()
        fn()
        timer()
        runs.append(timer.last)
    lists = Counter(tuple(n for n, _ in r) for r in runs)
    names, count = lists.most_common(1)[0]
    if count * 2 <= len(runs):
        raise RuntimeError(f"the call launched different kernels from one repetition to the next: {list(lists)[:3]}")
    runs = [r for r in runs if tuple(n for n, _ in r) == names]
    return [KernelTime(name, statistics.median(r[i][1] for r in runs), nvfuser_group(name)) for i, name in enumerate(names)]
