"""What a profile measured for each call of a Thunder trace: the ranges ``thunder_exec.trace_capture.CallRanges``
puts around every call (named by the call's printed line) in a segkit Trace (torch.profiler or nsys), as medians
over the steps profiled."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass


@dataclass(frozen=True)
class CallTiming:
    """One call's medians over its ``instances`` in a profile: kernels launched inside its range, their GPU time,
    and the range's host wall time (the call's Python, launches included)."""

    instances: int
    kernels: float
    kernel_us: float
    host_us: float


def call_timings(trace) -> dict[str, CallTiming]:
    """Range name -> CallTiming for every range of ``trace`` (a segkit.trace.Trace)."""
    by_name = defaultdict(list)
    for r in trace.ranges:
        by_name[r.name].append(r)
    return {name: CallTiming(len(rs), statistics.median(len(r.kernels) for r in rs),
                             statistics.median(r.kernel_ns for r in rs) / 1e3,
                             statistics.median(r.wall_ns for r in rs) / 1e3) for name, rs in by_name.items()}
