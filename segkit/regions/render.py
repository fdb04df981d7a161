"""A RegionsReport as a text table and as an SVG strip (regions as boxes, cuts between them, sized by bytes)."""

from __future__ import annotations

import html
import math

from tabulate import tabulate

from segkit.regions.analysis import DEFAULT_HOST_US, DEFAULT_KERNELS, Cut, Region, RegionsReport, TraceRegions

HEADERS = ["line", "region / cut", "symbol", "crossing tensors", "bytes", "kernels", "host us (m: measured)",
           "gain us"]
KIND_COLOURS = {"fusible": "#e8710a", "not fusible": "#9aa0a6", "other": "#9334e6"}
REGION_COLOUR = "#4285f4"


def _human_bytes(n: float) -> str:
    from segkit.segments import human_bytes

    return human_bytes(n)


def _io_bytes(r: Region) -> int:
    return sum(t.nbytes or 0 for t in (*r.inputs, *r.outputs))


def _crossings(cut: Cut) -> str:
    parts = [f"{c.tensor.label()} {'<-' if c.into_cut else '->'} {c.region}" for c in cut.crossings]
    return "\n".join(parts)


def in_order(trace: TraceRegions) -> list[Region | Cut]:
    """The trace's regions and cuts in the order they run."""
    return sorted([*trace.regions, *trace.cuts], key=lambda x: x.line)


def rows(trace: TraceRegions) -> list[list]:
    """One table row per region and cut of ``trace``, in order (HEADERS)."""
    out = []
    for item in in_order(trace):
        if isinstance(item, Region):
            ios = (f"in {', '.join(t.name for t in item.inputs) or '-'}\n"
                   f"out {', '.join(t.name for t in item.outputs) or '-'}")
            out.append([item.line, "region", f"{item.name} ({item.executor}, {len(item.ops)} ops)", ios,
                        _human_bytes(_io_bytes(item)), "", "", ""])
        else:
            gain = "-" if item.gain_us is None else f"{item.gain_us:.1f}"
            out.append([item.line, f"cut ({item.kind})", item.symbol, _crossings(item), _human_bytes(item.saved_bytes),
                        f"{item.kernels:g}", f"{item.host_us:.1f}" + ("" if item.measured is None else " (m)"), gain])
    return out


def summary(report: RegionsReport) -> list[str]:
    """The lines under the tables: cost model, totals, the estimated fused step, reasons, notes."""
    m = report.model
    cuts = report.cuts
    fusible = [c for c in cuts if c.kind == "fusible"]
    per_call = (f"{_given(m.kernels_per_cut, DEFAULT_KERNELS, report.profiled)} kernel(s) and "
                f"{_given(m.host_us, DEFAULT_HOST_US, report.profiled)} us host time per cut call")
    lines = [(f"cost model: {m.gpu}, {m.bandwidth / 1e12:.2f} TB/s copy bandwidth (bytes = reads + writes fusing "
              f"saves), {m.launch_us:.1f} us per kernel launch, {per_call}"),
             (f"{sum(len(t.regions) for t in report.traces)} region(s), {len(cuts)} cut(s): {len(fusible)} fusible "
              f"(segkit's symbols) gaining {report.fusible_gain_us:.1f} us per step, "
              f"{sum(c.kind == 'not fusible' for c in cuts)} not fusible, {sum(c.kind == 'other' for c in cuts)} other")]
    if report.step_ms is not None:
        lines.append(f"measured step {report.step_ms:.3f} ms -> estimated fused step {report.fused_step_ms:.3f} ms "
                     "(measured minus the gains of the fusible cuts)")
    groups: dict[tuple[str, str], list[str]] = {}
    for c in cuts:
        if c.kind != "fusible":
            groups.setdefault((c.kind, c.reason), []).append(c.symbol)
    for (kind, reason), symbols in groups.items():
        lines.append(f"{kind}: {', '.join(sorted(set(symbols)))} ({len(symbols)} call(s)): {reason}")
    lines += [f"note: {n}" for n in report.notes]
    return lines


def _given(value, default, profiled: bool) -> str:
    """A per-call parameter as the summary states it: given, measured (the default where the profile lacks the
    call), or the default."""
    if value is not None:
        return f"{value:g}"
    return f"measured (else {default:g})" if profiled else f"{default:g}"


def format_text(report: RegionsReport) -> str:
    parts = []
    for t in report.traces:
        parts.append(f"{t.label} ({t.function}): {len(t.regions)} region(s), {len(t.cuts)} cut(s)")
        parts.append(tabulate(rows(t), headers=HEADERS, tablefmt="simple") if t.regions or t.cuts else "  none")
        parts.append("")
    return "\n".join(parts + summary(report))


def svg_strip(trace: TraceRegions, width: int = 1200) -> str:
    """``trace`` as an SVG strip: regions as blue boxes, cuts as bars coloured by kind, both as wide as the square
    root of their bytes allow (a region's inputs + outputs, a cut's saved bytes); hover shows the details.
    Wraps onto new rows at ``width`` pixels."""
    items = in_order(trace)
    region_max = max([_io_bytes(r) for r in trace.regions] + [1])
    cut_max = max([c.saved_bytes for c in trace.cuts] + [1])
    height, gap, x, y, shapes = 36, 4, 0, 0, []
    for item in items:
        if isinstance(item, Region):
            w = 24 + 96 * math.sqrt(_io_bytes(item) / region_max)
            colour, label = REGION_COLOUR, item.name
            tip = f"{item.name} ({item.executor}), line {item.line}: {len(item.ops)} ops\n" + "\n".join(item.ops[:30])
        else:
            w = 6 + 40 * math.sqrt(item.saved_bytes / cut_max)
            colour, label = KIND_COLOURS[item.kind], ""
            gain = "no gain (not fusible)" if item.gain_us is None else f"gain {item.gain_us:.1f} us"
            tip = (f"{item.symbol} ({item.kind}), line {item.line}: {_human_bytes(item.saved_bytes)} through memory, "
                   f"{gain}\n{_crossings(item)}\n{item.reason}")
        if x + w > width and x > 0:
            x, y = 0, y + height + gap
        text = (f'<text x="{x + 3:.0f}" y="{y + 22}" font-size="10" fill="white">{html.escape(label)}</text>'
                if label and w > 7 * len(label) else "")
        shapes.append(f'<g><title>{html.escape(tip)}</title><rect x="{x:.1f}" y="{y}" width="{w:.1f}" '
                      f'height="{height}" fill="{colour}" rx="3"/>{text}</g>')
        x += w + gap
    total = y + height
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{total}" '
            f'viewBox="0 0 {width} {total}">{"".join(shapes)}</svg>')
