"""One Trace model for nsys reports and torch.profiler traces: kernels, NVTX ranges, API calls."""

from __future__ import annotations

import heapq
import math
import re
import statistics
from dataclasses import dataclass, field

from segkit.errors import SegkitError


class TraceError(SegkitError):
    """A file that cannot be read as a trace, with what is wrong."""


@dataclass
class Kernel:
    name: str
    start_ns: int
    duration_ns: int
    demangled: str = ""
    stream: int | None = None
    grid: tuple[int, int, int] | None = None
    block: tuple[int, int, int] | None = None
    registers_per_thread: int | None = None
    static_smem: int | None = None
    dynamic_smem: int | None = None
    correlation_id: int | None = None
    launch_ns: int | None = None  # start of the API call that launched it
    thread: int | None = None  # thread of that API call

    @property
    def end_ns(self) -> int:
        return self.start_ns + self.duration_ns

    @property
    def launched_ns(self) -> int:
        """When it was launched: its launch call's start, or its own start where the trace has no launch call."""
        return self.start_ns if self.launch_ns is None else self.launch_ns

    @property
    def key(self) -> str:
        """A name both recorders agree on: no namespace, template arguments, parameters, nor nvFuser's
        per-fusion suffix (f<fusion>_c<cache>_r<runtime>_g<group>)."""
        return short_name(self.name)


_NVF_SUFFIX = re.compile(r"_f\d+_c\d+_r\d+_g\d+$")


def short_name(name: str) -> str:
    """``void at::native::(anonymous namespace)::k<float>(int)`` -> ``k``; ``nvf::nvfuser_pointwise_f0_c1_r0_g2`` -> ``nvfuser_pointwise``."""
    n = name.removeprefix("void ").replace("(anonymous namespace)", "")
    n = n.split("(", 1)[0]
    depth, out = 0, []
    for ch in n:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    return _NVF_SUFFIX.sub("", "".join(out).split("::")[-1].strip()) or name


@dataclass
class ApiCall:
    name: str
    start_ns: int
    end_ns: int
    correlation_id: int | None = None
    thread: int | None = None


@dataclass
class Range:
    """An NVTX push/pop range (or a torch.profiler record_function range) and the kernels it launched."""

    name: str
    start_ns: int
    end_ns: int
    depth: int = 0
    thread: int | None = None
    kernels: list[Kernel] = field(default_factory=list)
    domain: str | None = None

    @property
    def wall_ns(self) -> int:
        return self.end_ns - self.start_ns

    @property
    def kernel_ns(self) -> int:
        return sum(k.duration_ns for k in self.kernels)

    def contains(self, t: int) -> bool:
        return self.start_ns <= t <= self.end_ns


@dataclass
class Trace:
    source: str
    kind: str  # "nsys" | "torch"
    kernels: list[Kernel]
    ranges: list[Range]
    api: list[ApiCall]
    gpu: str | None = None
    missing: list[str] = field(default_factory=list)  # what the file lacked, said plainly

    def describe(self) -> str:
        """One line: the file, its kind and GPU, how many kernels and ranges."""
        return (f"{self.source} ({self.kind}{', ' + self.gpu if self.gpu else ''}): "
                f"{len(self.kernels)} kernels, {len(self.ranges)} ranges")

    def ranges_named(self, name: str) -> list[Range]:
        return [r for r in self.ranges if r.name == name]

    def range_names(self) -> list[str]:
        """Distinct range names in order of first appearance."""
        seen: dict[str, None] = {}
        for r in sorted(self.ranges, key=lambda r: r.start_ns):
            seen.setdefault(r.name, None)
        return list(seen)

    def user_range_names(self) -> list[str]:
        """The ranges a user marked: those in segkit's NVTX domain when there are any; otherwise top-level
        ranges that launched kernels, leaving out C++-scoped names (nvFuser's own ranges: ``Class::method``)."""
        if any(r.domain == USER_DOMAIN for r in self.ranges):
            chosen = {r.name for r in self.ranges if r.domain == USER_DOMAIN}
        else:
            chosen = {r.name for r in self.ranges if r.depth == 0 and r.kernels and "::" not in r.name}
        return [n for n in self.range_names() if n in chosen]


#: The largest time, duration, size or count a trace field may hold: nsys stores them as signed 64-bit integers.
MAX_FIELD = 2**63 - 1


def to_int(value, what: str, optional: bool = True, signed: bool = False) -> int | None:
    """A trace field as an int (floats and numeric text accepted); a field of another type, not finite, negative
    (unless ``signed``: times, durations, sizes, counts and ids are not) or beyond 64 bits is a TraceError naming it,
    so a malformed file fails where it is read, not later in a table (a kernel of -3 ns summed as time) or as an
    overflow."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise TraceError(f"{what}: expected a number, got {type(value).__name__} {value!r:.40}")
    try:
        number = float(value) if not isinstance(value, int) else value
    except ValueError:
        raise TraceError(f"{what}: expected a number, got {value!r:.40}") from None
    if not math.isfinite(number):
        raise TraceError(f"{what}: expected a finite number, got {value!r:.40}: the file is damaged")
    return in_range(int(number), what, signed)


def in_range(n: int, what: str, signed: bool = False) -> int:
    """``n`` if it is a time, size or count a trace can hold (``to_int``), else a TraceError naming ``what``."""
    if not signed and n < 0:
        raise TraceError(f"{what}: {n} is negative (a time, duration, size or count is not): the file is damaged")
    if abs(n) > MAX_FIELD:
        raise TraceError(f"{what}: {n:.3g} does not fit in 64 bits (no real trace holds it): the file is damaged")
    return n


def to_xyz(value, what: str) -> tuple[int, int, int] | None:
    """A grid or block: three ints, or None when absent."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or len(value) != 3:
        raise TraceError(f"{what}: expected three numbers [x, y, z], got {value!r:.40}")
    return tuple(to_int(v, what, optional=False) for v in value)


#: The NVTX domain segkit.trace.range records into.
USER_DOMAIN = "segkit"


def attach_kernels(ranges: list[Range], kernels: list[Kernel], missing: list[str]) -> None:
    """Give each range the kernels launched inside it: by the launch call's time on the range's thread,
    or by the kernel's own start when the launch call is unknown (and say so). Each range's kernels keep
    the order of ``kernels``.

    A sweep, linear in the trace but for sorting (profiles hold tens of thousands of ranges and kernels): per
    thread, the ranges and the kernels that may fall in them are visited by time, and the ranges open at a
    kernel's time (a heap by end) are exactly those containing it. A kernel of a known thread is looked up
    among that thread's ranges and the thread-less ones; a kernel of none, among every thread's."""
    fallback = any(k.launch_ns is None for k in kernels)
    by_thread: dict = {}
    for r in ranges:
        by_thread.setdefault(r.thread, []).append(r)
    queries: dict = {thread: [] for thread in by_thread}  # thread -> [(time, kernel index)]
    for i, k in enumerate(kernels):
        t, thread = (k.start_ns, None) if k.launch_ns is None else (k.launch_ns, k.thread)
        for group in (by_thread if thread is None else (thread, None)):
            if group in queries:
                queries[group].append((t, i))
    found: dict[int, list[int]] = {}  # id(range) -> indices of its kernels
    for group, members in by_thread.items():
        for r, i in _stab(members, queries[group]):
            found.setdefault(id(r), []).append(i)
    for r in ranges:
        r.kernels.extend(kernels[i] for i in sorted(found.get(id(r), ())))
    if fallback and kernels:
        missing.append("some kernels have no launch call: they were placed in ranges by their GPU start time")


def _stab(ranges: list[Range], points: list[tuple[int, int]]):
    """(range, point id) for every point (time, id) inside a range (ends included), by a sweep over time."""
    ranges = sorted(ranges, key=lambda r: r.start_ns)
    open_: list[tuple[int, int, Range]] = []  # (end, tie-break, range): a heap of the ranges started so far
    nxt = 0
    for t, i in sorted(points):
        while nxt < len(ranges) and ranges[nxt].start_ns <= t:
            heapq.heappush(open_, (ranges[nxt].end_ns, nxt, ranges[nxt]))
            nxt += 1
        while open_ and open_[0][0] < t:
            heapq.heappop(open_)
        for _, _, r in open_:
            yield r, i


def set_depths(ranges: list[Range]) -> None:
    """Nesting depth of each range among the ranges of its thread."""
    by_thread: dict = {}
    for r in sorted(ranges, key=lambda r: (r.start_ns, -r.end_ns)):
        stack = by_thread.setdefault(r.thread, [])
        while stack and stack[-1].end_ns < r.start_ns:
            stack.pop()
        r.depth = len(stack)
        stack.append(r)


def median_ns(values: list[int]) -> float:
    return float(statistics.median(values)) if values else 0.0
