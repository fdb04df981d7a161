"""Compare two traces the way PR reviews do: per range, then kernel by kernel with what changed flagged."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field, replace

from segkit.errors import UsageError
from segkit.trace.model import Range, Trace
from segkit.trace.report import format_tables, notes_table, range_summary


@dataclass
class KernelStats:
    key: str
    durations_ns: list[int]
    grid: tuple | None
    block: tuple | None
    registers: int | None

    @property
    def median_ns(self) -> float:
        return float(statistics.median(self.durations_ns))

    @property
    def spread(self) -> float:
        """Relative spread of this kernel's own durations, (max - min) / median."""
        m = self.median_ns
        return (max(self.durations_ns) - min(self.durations_ns)) / m if m else 0.0


def kernel_stats(ranges: list[Range]) -> list[KernelStats]:
    """Per kernel name (nvFuser's fusion ids stripped), in order of first launch within the range."""
    stats: dict[str, KernelStats] = {}
    for r in ranges:
        for k in r.kernels:
            s = stats.setdefault(k.key, KernelStats(k.key, [], k.grid, k.block, k.registers_per_thread))
            s.durations_ns.append(k.duration_ns)
    return list(stats.values())


@dataclass
class KernelChange:
    a: KernelStats | None
    b: KernelStats | None
    flags: list[str] = field(default_factory=list)

    def row(self) -> dict:
        def us(s):
            return None if s is None else round(s.median_ns / 1e3, 2)

        return {"kernel A": self.a.key if self.a else "-", "kernel B": self.b.key if self.b else "-",
                "A us": us(self.a), "B us": us(self.b),
                "B/A": round(self.b.median_ns / self.a.median_ns, 3) if self.a and self.b and self.a.median_ns else None,
                "A grid/block/regs": _cfg(self.a), "B grid/block/regs": _cfg(self.b), "changed": ", ".join(self.flags)}


def _cfg(s: KernelStats | None) -> str:
    if s is None:
        return "-"
    return f"{list(s.grid) if s.grid else '-'} {list(s.block) if s.block else '-'} {s.registers}"


def match_kernels(a: list[KernelStats], b: list[KernelStats], min_spread: float = 0.05) -> list[KernelChange]:
    """Match by name, then the rest by order; flag added/gone kernels, launch-config and register changes,
    and slowdowns larger than the runs' own spread (at least ``min_spread``)."""
    b_left = list(b)
    pairs: list[tuple[KernelStats | None, KernelStats | None]] = []
    unmatched_a = []
    for s in a:
        same = next((t for t in b_left if t.key == s.key), None)
        if same is not None:
            b_left.remove(same)
            pairs.append((s, same))
        else:
            unmatched_a.append(s)
    for s in unmatched_a:  # names differ (e.g. another scheduler): pair by order
        pairs.append((s, b_left.pop(0) if b_left else None))
    pairs += [(None, t) for t in b_left]
    changes = []
    for x, y in pairs:
        c = KernelChange(x, y)
        if x is None:
            c.flags.append("added")
        elif y is None:
            c.flags.append("gone")
        else:
            if x.key != y.key:
                c.flags.append("renamed")
            if x.grid != y.grid:
                c.flags.append("grid changed")
            if x.block != y.block:
                c.flags.append("block changed")
            if x.registers != y.registers:
                c.flags.append("registers changed")
            tol = max(min_spread, x.spread, y.spread)
            if y.median_ns > x.median_ns * (1 + tol):
                c.flags.append(f"slower by {100 * (y.median_ns / x.median_ns - 1):.0f}%")
            elif y.median_ns < x.median_ns * (1 - tol):
                c.flags.append(f"faster by {100 * (1 - y.median_ns / x.median_ns):.0f}%")
        changes.append(c)
    return changes


def shared_user_ranges(a: Trace, b: Trace) -> list[str]:
    """User ranges of A, then those only B has."""
    na = a.user_range_names()
    return na + [n for n in b.user_range_names() if n not in na]


def compare_ranges(a: Trace, b: Trace, names: list[str] | None = None) -> list[dict]:
    rows = []
    names = names or shared_user_ranges(a, b)
    for n in names:
        ra, rb = a.ranges_named(n), b.ranges_named(n)
        sa = range_summary(ra) if ra else None
        sb = range_summary(rb) if rb else None

        def g(s, key):
            return None if s is None else round(s[key], 2)

        ka, kb = g(sa, "kernel_us_median"), g(sb, "kernel_us_median")
        rows.append({"range": n, "A kernels": g(sa, "kernels_per_instance"), "B kernels": g(sb, "kernels_per_instance"),
                     "A kernel us": ka, "B kernel us": kb, "kernel B/A": round(kb / ka, 3) if ka and kb else None,
                     "A wall us": g(sa, "wall_us_median"), "B wall us": g(sb, "wall_us_median")})
    return rows


WHOLE = "(whole trace)"


def whole_trace(t: Trace) -> Trace:
    """``t`` with one range, WHOLE, holding every kernel: what a trace without user ranges (a plain torch.profiler
    step) is compared by."""
    if not t.kernels:
        return t
    start, end = min(k.start_ns for k in t.kernels), max(k.start_ns + k.duration_ns for k in t.kernels)
    return replace(t, ranges=[Range(WHOLE, start, end, kernels=list(t.kernels))])


def compare_tables(a: Trace, b: Trace, by: str = "range", only: str | None = None) -> dict[str, list[dict]]:
    """Side by side per range (``ranges``) and, with ``by="kernel"``, each range's kernels matched (``kernels``,
    one row per kernel pair with its range); ``notes``: what either trace lacked. Two traces without a user range
    in common are compared whole (one range, WHOLE)."""
    if only is not None and not (a.ranges_named(only) or b.ranges_named(only)):
        raise UsageError(f"no range named {only!r} in either trace; ranges: "
                         f"{', '.join(shared_user_ranges(a, b)[:20]) or 'none'}")
    shared = [n for n in shared_user_ranges(a, b) if a.ranges_named(n) and b.ranges_named(n)]
    if only is None and not shared:
        a, b = whole_trace(a), whole_trace(b)
        shared = [WHOLE] if a.ranges and b.ranges else []
    tables = {"ranges": compare_ranges(a, b, [only] if only else shared or None)}
    if by == "kernel":
        names = [only] if only else shared
        tables["kernels"] = [{"range": n, **c.row()} for n in names
                             for c in match_kernels(kernel_stats(a.ranges_named(n)), kernel_stats(b.ranges_named(n)))]
    tables["notes"] = notes_table(a, b)
    return tables


def compare(a: Trace, b: Trace, by: str = "range", fmt: str = "table", only: str | None = None) -> str:
    """``compare_tables`` formatted (see segkit.trace.report.format_tables)."""
    return format_tables(compare_tables(a, b, by, only), fmt, title=f"A = {a.describe()}\nB = {b.describe()}")
