"""Where a step's time goes, by kind of work: matrix multiplies, attention, nvFuser's memory-bound kernels, the other
memory-bound kernels (Inductor's Triton, Thunder's torch executor, eager PyTorch), the GPU's idle time between the
step's kernels and the host's lead-in before its first kernel.

A kernel's kind is read from its name (``CATEGORIES``, first match wins: cuDNN's and FlashAttention's SDPA kernels
are attention even where their names say wgmma). A profile whose steps are ranges named ``step`` (the step table's
timed steps and profiles) is cut into those steps, each with its lead-in (from the range's start on the host to its
first kernel); a profile without them is refused, or, asked for (``whole``), one step, its span from the first kernel
to the last, lead-in unknown. Each kind is summed per
step; the table gives the median over the steps.

    step = lead-in + (kernels' busy time + idle between them)
"""

from __future__ import annotations

import bisect
import re
import statistics
from dataclasses import dataclass
from typing import Annotated

from segkit.args import Is, checked
from segkit.trace.idle import STEP_RANGE, kernel_gaps
from segkit.trace.model import Kernel, Trace, TraceError

#: (kind, name pattern), in the order they are tried; the last kind takes every kernel the others do not.
CATEGORIES: tuple[tuple[str, re.Pattern | None], ...] = (
    ("attention", re.compile(r"sdpa|flash|fmha|attention|attn|cudnn", re.I)),
    ("gemm", re.compile(r"nvjet|gemm|cutlass|cublas|xmma|wgmma|matmul", re.I)),
    ("nvfuser memory-bound", re.compile(r"nvfuser", re.I)),
    ("other memory-bound", None),
)
KINDS = tuple(k for k, _ in CATEGORIES)
MEMORY_BOUND = ("nvfuser memory-bound", "other memory-bound")


#: The profiles ``breakdown_tables`` puts side by side: at least one (label, Trace).
Labelled = Annotated[list[tuple[str, Trace]], Is(bool, "a non-empty list of (label, Trace)")]


def kind(name: str) -> str:
    """The kind of a kernel by its name (``CATEGORIES``)."""
    for k, pattern in CATEGORIES:
        if pattern is None or pattern.search(name):
            return k
    raise AssertionError("the last category takes every name")


@dataclass(frozen=True)
class Step:
    """One step: its kernels, the host's start of it (None: not recorded) and the GPU's first and last moments."""

    kernels: tuple[Kernel, ...]
    host_start_ns: int | None

    @property
    def first_ns(self) -> int:
        return min(k.start_ns for k in self.kernels)

    @property
    def last_ns(self) -> int:
        return max(k.end_ns for k in self.kernels)

    def busy_ns(self) -> int:
        """Time at least one kernel runs (kernels overlapping on several streams counted once): the span less its
        gaps."""
        return self.last_ns - self.first_ns - sum(g.idle_ns for g in kernel_gaps(self.kernels))

    def lead_in_ns(self) -> int | None:
        return None if self.host_start_ns is None else self.first_ns - self.host_start_ns


class StepRangeError(TraceError):
    """A profile whose step ranges are missing or hold no kernels: there are no steps to read."""


@checked
def steps(trace: Trace, step: str = STEP_RANGE, whole: bool = False) -> list[Step]:
    """The trace's steps: each range named ``step`` with the kernels launched (by the launch call's time; a kernel
    without one, by its start) while it was open, from any thread (autograd's engine launches a compiled backward,
    Inductor's, from its own thread while the step's thread waits in ``backward()``: a range's own kernels, those
    of its thread, miss it). A profile without such ranges, or with one that launched no kernel, is refused
    (StepRangeError): a whole process read as one step puts its start-up, compiles and idle into "the step".
    ``whole``: a profile without step ranges is one step, its span from the first kernel to the last.

    One sort of the kernels by launch time, then a binary search per range: linear in the profile's size."""
    ranges = sorted(trace.ranges_named(step), key=lambda r: r.start_ns)
    if not ranges:
        if whole:
            return [Step(tuple(trace.kernels), None)] if trace.kernels else []
        names = ", ".join(trace.range_names()[:10]) or "none"
        raise StepRangeError(f"{trace.source}: no range named {step!r}, so no step to read (its ranges: {names}); "
                             f"mark each step with segkit.trace.range({step!r}) (benchmarks/model_step.py does), "
                             "name the range the steps are in, or read the whole profile as one step (--whole)")
    by_launch = sorted(trace.kernels, key=lambda k: k.launched_ns)
    times = [k.launched_ns for k in by_launch]
    got = [Step(tuple(by_launch[bisect.bisect_left(times, r.start_ns):bisect.bisect_right(times, r.end_ns)]),
                r.start_ns) for r in ranges]
    empty = [i for i, s in enumerate(got) if not s.kernels]
    if empty:
        raise StepRangeError(f"{trace.source}: {len(empty)} of {len(ranges)} range(s) named {step!r} launched no "
                             f"kernel (the first, step {empty[0] + 1}, opens at {ranges[empty[0]].start_ns} ns): the "
                             "profile lacks those steps' GPU work (was CUDA traced in the process that ran them?)")
    return got


def _median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else 0.0


@checked
def per_step(trace: Trace, step: str = STEP_RANGE, whole: bool = False) -> dict[str, float | int | None]:
    """Median per step (``steps``): us and kernel count of each kind, memory-bound us (both memory-bound kinds),
    busy, idle, lead-in and step us; ``steps``: how many steps were read."""
    got = steps(trace, step, whole)
    kinds = [[kind(x.name) for x in s.kernels] for s in got]  # each kernel classified once
    busy = [s.busy_ns() for s in got]
    out: dict[str, float | int | None] = {"steps": len(got)}
    for k in KINDS:
        out[f"{k} us"] = _median([sum(x.duration_ns for x, kx in zip(s.kernels, ks) if kx == k) / 1e3
                                  for s, ks in zip(got, kinds)])
        out[f"{k} kernels"] = _median([ks.count(k) for ks in kinds])
    out["memory-bound us"] = _median([sum(x.duration_ns for x, kx in zip(s.kernels, ks) if kx in MEMORY_BOUND) / 1e3
                                      for s, ks in zip(got, kinds)])
    out["busy us"] = _median([b / 1e3 for b in busy])
    out["idle us"] = _median([(s.last_ns - s.first_ns - b) / 1e3 for s, b in zip(got, busy)])
    leads = [s.lead_in_ns() for s in got]
    out["lead-in us"] = _median([x / 1e3 for x in leads]) if got and None not in leads else None
    out["step us"] = _median([(s.last_ns - (s.host_start_ns if s.host_start_ns is not None else s.first_ns)) / 1e3
                              for s in got])
    return out


@checked
def breakdown_tables(traces: Labelled, step: str = STEP_RANGE, whole: bool = False) -> dict[str, list[dict]]:
    """``breakdown``: one row per kind (and memory-bound, idle, lead-in, step), one column of us per step per
    trace, with the kernel count and, from the second trace on, the ratio to the first trace's."""
    cols = [(label, per_step(t, step, whole)) for label, t in traces]
    rows = []
    for what in (*KINDS, "memory-bound", "busy", "idle", "lead-in", "step"):
        row: dict = {"per step": what}
        base = cols[0][1].get(f"{what} us")
        for i, (label, c) in enumerate(cols):  # every row has every column (None where it does not apply)
            us = c.get(f"{what} us")
            row[f"{label} us"] = None if us is None else round(us, 1)
            row[f"{label} kernels"] = c[f"{what} kernels"] if what in KINDS else None
            if i:
                row[f"{label} / {cols[0][0]}"] = round(us / base, 3) if us is not None and base else None
        rows.append(row)
    return {"breakdown": rows}
