"""Plots of two traces: a kernel timeline per range (one lane per trace) and per-range kernel time A vs B."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from segkit.trace.model import Trace, TraceError  # noqa: E402


def plot_compare(a: Trace, b: Trace, out: Path, ranges: list[str] | None = None) -> Path:
    names = ranges or [n for n in a.user_range_names() if b.ranges_named(n)]
    if not names:
        raise TraceError(f"{a.source} and {b.source} share no range name: nothing to plot")
    for n in names:
        if not (a.ranges_named(n) and b.ranges_named(n)):
            raise TraceError(f"range {n!r} is not in both traces: nothing to plot side by side")
    fig, (tl, bars) = plt.subplots(2, 1, figsize=(12, 3 + 0.9 * len(names) + 3), height_ratios=[len(names) + 1, 3])
    colors = {"A": "tab:blue", "B": "tab:orange"}
    labels = []
    for i, n in enumerate(names):
        for j, (tag, t) in enumerate((("A", a), ("B", b))):
            r = t.ranges_named(n)[-1]  # last (steady-state) instance, times relative to the range start
            y = 2 * i + j
            tl.broken_barh([((k.start_ns - r.start_ns) / 1e3, k.duration_ns / 1e3) for k in r.kernels], (y - 0.4, 0.8),
                           color=colors[tag])
            labels.append((y, f"{tag}: {n}"))
    tl.set_yticks([y for y, _ in labels], [s for _, s in labels], fontsize=8)
    tl.set_xlabel("us since range start (last instance)")
    tl.set_title("kernels per range")
    x = range(len(names))
    ka = [sum(r.kernel_ns for r in a.ranges_named(n)) / len(a.ranges_named(n)) / 1e3 for n in names]
    kb = [sum(r.kernel_ns for r in b.ranges_named(n)) / len(b.ranges_named(n)) / 1e3 for n in names]
    bars.bar([i - 0.2 for i in x], ka, 0.4, label="A", color=colors["A"])
    bars.bar([i + 0.2 for i in x], kb, 0.4, label="B", color=colors["B"])
    bars.set_xticks(list(x), names, fontsize=8)
    bars.set_ylabel("kernel us per instance")
    bars.legend([f"A: {_label(a.source)}", f"B: {_label(b.source)}"])
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _label(source: str) -> str:
    """The report's folder and name: two runs are usually the same file name in two folders."""
    p = Path(source)
    return f"{p.parent.name}/{p.name}" if p.parent.name else p.name


def plot_kernels(rows: list[dict], a: Trace, b: Trace, out: Path, top: int = 40) -> Path:
    """Kernel time A vs B, one pair of bars per matched kernel (``rows``: segkit.trace.diff.compare_tables' kernel
    table), the ``top`` longest by the larger of the two; what comparing by kernel plots, ranges in common or not.
    Rows of aligned launches (segkit.trace.launches, a "#" column): the ``top`` that changed most, in step order."""
    if not rows:
        raise TraceError(f"{a.source} and {b.source}: no kernels in either: nothing to plot")
    launches = "#" in rows[0]
    if launches:
        rows = sorted(sorted(rows, key=lambda r: -abs(r["delta us"]))[:top], key=lambda r: r["#"])
    else:
        rows = sorted(rows, key=lambda r: -max(r["A us"] or 0, r["B us"] or 0))[:top]
    labels = [_kernel_label(r) for r in rows]
    fig, ax = plt.subplots(figsize=(12, 1.5 + 0.32 * len(rows)))
    y = range(len(rows))
    ax.barh([i - 0.2 for i in y], [r["A us"] or 0 for r in rows], 0.4, color="tab:blue",
            label=f"A: {_label(a.source)}")
    ax.barh([i + 0.2 for i in y], [r["B us"] or 0 for r in rows], 0.4, color="tab:orange",
            label=f"B: {_label(b.source)}")
    ax.set_yticks(list(y), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("kernel us (one launch)" if launches else "median kernel us")
    ax.set_title(f"launches A vs B ({len(rows)} most changed, in step order)" if launches
                 else f"kernels A vs B ({len(rows)} longest)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def _kernel_label(row: dict) -> str:
    a, b = row["kernel A"], row["kernel B"]
    name = a if a == b or b == "-" else b if a == "-" else f"{a} / {b}"
    name = name if len(name) <= 60 else name[:57] + "..."
    name = f"#{row['#']} {name}" if "#" in row else name
    return f"{name} [{row['changed']}]" if row.get("changed") else name
