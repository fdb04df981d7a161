"""Where the GPU waits: the gaps between a trace's kernels, and which of them the host caused.

A gap is host-bound when the next kernel's launch call started only after the GPU had run out of work: the host
was late, and CUDA graphs (or less host work) would close it. A gap whose kernel was launched before the GPU went
idle is the device's own (a dependency, a copy, a memset):

    GPU    [ kernel a ]...............idle...............[ kernel b ]
    host          launch a ....... (host work) ....... launch b          -> host-bound: lag = launch b - end of a

Each gap also names the longest API call that overlaps it: a launch that itself takes hundreds of us (a profiler's
activity buffer request inside the first launch of a capture does) is the host work, not the framework's Python.

A profile whose step is a named range (the step table's profiles: ``step``) also gives the step's lead-in: from the
range's start on the host to the first kernel on the GPU. A step timed by CUDA events starts with the GPU idle, so
the lead-in is in its time, and no gap between kernels shows it:

    host   [ step ........ launch k1 ... ]
    GPU                              [ k1 ][ k2 ] ...      lead-in = start of k1 - start of the step range
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from segkit.args import NonNegative, PositiveInt, checked
from segkit.trace.model import ApiCall, Kernel, Trace

STEP_RANGE = "step"  # the range a step table profile records each step in (benchmarks.model_measure.profile)


@dataclass(frozen=True)
class Gap:
    """The GPU idle between the end of ``after`` (the last of the work so far) and the start of ``before``."""

    after: Kernel
    before: Kernel
    idle_ns: int
    host_lag_ns: int | None  # launch of ``before`` minus the end of ``after``; None when the launch is unknown

    @property
    def host_bound(self) -> bool:
        return self.host_lag_ns is not None and self.host_lag_ns > 0


@checked
def gaps(trace: Trace) -> list[Gap]:
    """Every stretch with no kernel running, in time order (kernels on several streams counted as one busy span)."""
    return kernel_gaps(trace.kernels)


def kernel_gaps(kernels: Iterable[Kernel]) -> list[Gap]:
    """``gaps`` over any set of kernels (one step's)."""
    out: list[Gap] = []
    kernels = sorted(kernels, key=lambda k: k.start_ns)
    last = None  # the kernel that ends last among those started so far
    for k in kernels:
        if last is not None and k.start_ns > last.end_ns:
            lag = None if k.launch_ns is None else k.launch_ns - last.end_ns
            out.append(Gap(last, k, k.start_ns - last.end_ns, lag))
        if last is None or k.end_ns > last.end_ns:
            last = k
    return out


def longest_call(trace: Trace, gap: Gap) -> ApiCall | None:
    """The longest API call overlapping ``gap`` (a scan of every call: asked only for the gaps a table lists)."""
    calls = [c for c in trace.api if c.start_ns < gap.before.start_ns and c.end_ns > gap.after.end_ns]
    return max(calls, key=lambda c: c.end_ns - c.start_ns, default=None)


def _call_text(call: ApiCall | None) -> str | None:
    return None if call is None else f"{call.name} {(call.end_ns - call.start_ns) / 1e3:.1f} us"


def lead_in_ns(trace: Trace, step: str) -> int | None:
    """From the start of the last range named ``step`` to the first kernel that starts after it (None: no such
    range, or no kernel after it)."""
    ranges = trace.ranges_named(step)
    if not ranges:
        return None
    begin = max(r.start_ns for r in ranges)
    return min((k.start_ns - begin for k in trace.kernels if k.start_ns >= begin), default=None)


@checked
def idle_tables(trace: Trace, min_us: NonNegative = 10.0, top: PositiveInt = 20, step: str = STEP_RANGE) -> dict[str, list[dict]]:
    """``summary``: span, busy and idle time, how much of the idle the host caused, and the lead-in of the range
    named ``step`` where there is one; ``gaps``: the ``top`` longest gaps of at least ``min_us``, in time order,
    with the kernels around them."""
    if not trace.kernels:
        return {"summary": [], "gaps": []}
    all_gaps = gaps(trace)
    start = min(k.start_ns for k in trace.kernels)
    span = max(k.end_ns for k in trace.kernels) - start
    idle = sum(g.idle_ns for g in all_gaps)
    host = sum(g.idle_ns for g in all_gaps if g.host_bound)
    summary = [{"kernels": len(trace.kernels), "span us": round(span / 1e3, 1),
                "busy us": round((span - idle) / 1e3, 1), "idle us": round(idle / 1e3, 1),
                "host-bound idle us": round(host / 1e3, 1), "gaps": len(all_gaps),
                "host-bound gaps": sum(g.host_bound for g in all_gaps)}]
    if (lead := lead_in_ns(trace, step)) is not None:
        summary[0][f"lead-in us ({step!r} to first kernel)"] = round(lead / 1e3, 1)
    long = sorted((g for g in all_gaps if g.idle_ns >= min_us * 1e3), key=lambda g: -g.idle_ns)[:top]
    rows = [{"at us": round((g.after.end_ns - start) / 1e3, 1), "idle us": round(g.idle_ns / 1e3, 1),
             "host-bound": "yes" if g.host_bound else "no" if g.host_lag_ns is not None else "?",
             "launch lag us": None if g.host_lag_ns is None else round(g.host_lag_ns / 1e3, 1),
             "longest API call in it": _call_text(longest_call(trace, g)),
             "after": g.after.key, "before": g.before.key}
            for g in sorted(long, key=lambda g: g.after.end_ns)]
    return {"summary": summary, "gaps": rows}
