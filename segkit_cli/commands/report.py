"""``segkit report TARGET``: one self-contained HTML page for an experiment (no network needed to view it).

The page holds the picture (PNG as a data URI), the segment table with each segment's ops and source lines,
the edges and the segmentation cost, the bookend variants measured side by side, the trace's kernel table,
and nvFuser's raw segmenter log. On a machine without a GPU it shows what is known without one (the IR,
meta-op chains, the bookend plans checked on the reference interpreter) and says what was not measured.
"""

from __future__ import annotations

import argparse
import base64
import html
import tempfile
from pathlib import Path
from typing import Any

from segkit_cli import argtypes, targets
from segkit_cli.commands.segments import TARGET_HELP

_CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 2em; color: #222; max-width: 1400px; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.6em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f0f3f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f6f8fa; padding: 0.8em; font-size: 0.8em; overflow-x: auto; max-height: 40em; }
.note { color: #8a5a00; } .bad { color: #b00020; font-weight: bold; } .ok { color: #137333; }
img { max-width: 100%; border: 1px solid #ddd; }
"""


def register(sub) -> None:
    p = sub.add_parser("report", help="one self-contained HTML page: picture, segments, bookend variants, kernels")
    p.add_argument("target", type=argtypes.script_or_spec, help=TARGET_HELP)
    targets.add_fusion_option(p)
    p.add_argument("-o", "--output", default="report.html", type=argtypes.output_file)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    out = Path(args.output)
    out.write_text(build(args.target, args.fusion))
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB)")
    return 0


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    def cell(x):
        cls = ' class="num"' if isinstance(x, (int, float)) else ""
        text = f"{x:.1f}" if isinstance(x, float) else str(x)
        return f"<td{cls}>{html.escape(text).replace(chr(10), '<br>')}</td>"

    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(cell(x) for x in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _image(pictures) -> str:
    from segkit.graph import save

    with tempfile.TemporaryDirectory() as tmp:
        paths = save(pictures, Path(tmp) / "fusion")
        png = base64.b64encode(paths["png"].read_bytes()).decode()
        dot = paths["dot"].read_text()
    return (f'<img alt="fusion graph" src="data:image/png;base64,{png}">'
            f"<details><summary>DOT text</summary><pre>{html.escape(dot)}</pre></details>")


def build(target: str, fusion: str | None = None) -> str:
    """The page for ``target`` (a repro script or a fusions spec NAME:CONFIG; ``fusion``: which fusion of a
    script that builds several)."""
    parts = [f"<h1>segkit report: {html.escape(target)}</h1>"]
    parts += _gpu_sections(target, fusion) if targets.nvfuser_available() else _cpu_sections(target, fusion)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>segkit report: {html.escape(target)}</title>"
            f"<style>{_CSS}</style></head><body>{''.join(parts)}</body></html>\n")


def _fusion_sections(fd) -> list[str]:
    from segkit.printing import format_fusion
    from segkit.segments import describe_chain, meta_chains

    fusion = fd.fusion
    chains = [describe_chain(c) for c in meta_chains(fusion)]
    return ["<h2>Meta-op (view) chains</h2>", "<pre>" + html.escape("\n".join(chains) or "none") + "</pre>",
            "<details><summary>Fusion IR</summary><pre>" + html.escape(format_fusion(fusion)) + "</pre></details>"]


def _cpu_sections(target: str, fusion: str | None) -> list[str]:
    from segkit.bookend import bookend, run_plan
    from segkit.compare import compare
    from segkit.experiment import VARIANTS
    from segkit.interp import run_reference
    from segkit.segments import cut_pieces, plan_picture

    fd, inputs = targets.load_target(target, "cpu", fusion)
    parts = ["<p class='note'>No CUDA device or nvfuser_direct on this machine: nvFuser's segments, kernel times "
             "and the trace are <b>not measured</b>. Shown: what is known without a GPU.</p>"]
    plan = bookend(fd, "outputs")
    parts += ["<h2>Picture: regions of the outputs bookend plan (what nvFuser's own pass cuts)</h2>",
              _image(plan_picture(fd, plan.cuts, f"{target}: outputs plan"))]
    parts += _fusion_sections(fd)
    want = run_reference(fd, inputs)
    rows = []
    for label, policy, ops, realization in VARIANTS[1:]:
        p = bookend(fd, policy, ops)
        good = all(d.ok for d in compare(want, run_plan(p, inputs, realization=realization)))
        rows.append([label, len(p.cuts), ", ".join(c.tensor.name for c in p.cuts) or "-",
                     len(cut_pieces(fd.fusion, p.cuts)), "ok" if good else "MISMATCH", "not measured (no GPU)"])
    parts += ["<h2>Bookend variants</h2>",
              _table(["variant", "segment_sets", "cut after", "regions", "reference check (cpu)", "kernel time"], rows),
              "<h2>Trace kernel table</h2><p class='note'>not measured (no GPU)</p>"]
    return parts


def _gpu_sections(target: str, fusion: str | None) -> list[str]:
    from segkit.experiment import HEADERS, run_experiment
    from segkit.segments import analyze, gpu_picture, human_bytes, op_label, site_line
    from segkit.trace import capture
    from segkit.trace.report import gpu_trace_rows

    fd, inputs = targets.load_target(target, "cuda", fusion)
    rep = analyze(fd, inputs)
    hb = human_bytes
    fusion = fd.fusion
    parts = [f"<p>{len(rep.segments)} segment(s) on {html.escape(rep.device)}: kernel time {rep.kernel_us:.1f} us "
             f"(cold L2), host wall {rep.wall_us:.1f} us per call. Unsegmented floor {hb(rep.floor_bytes)}; "
             f"segments move {hb(rep.segmented_bytes)}; <b>segmentation cost "
             f"{hb(rep.segmentation_cost_bytes)}</b> (bytes above the floor).</p>"]
    if rep.unsegmented_why:
        parts.append(f"<p>Why not one kernel (nvFuser's segmenter): {html.escape(rep.unsegmented_why)}</p>")
    parts += ["<h2>Picture: nvFuser's segments</h2>", _image(gpu_picture(rep, target))]
    rows = []
    for s in rep.segments:
        ops = "\n".join(f"{op_label(fusion.ops[i])}   {site_line(fusion.ops[i])}" for i in s.ops)
        ios = "\n".join([f"in  {t.label()} ({hb(t.nbytes)})" for t in s.inputs] +
                        [f"out {t.label()} ({hb(t.nbytes)})" for t in s.outputs])
        rows.append([s.index, s.scheduler, ops + ("\nnvFuser's own: " + ", ".join(s.nv_only) if s.nv_only else ""),
                     ios, "\n".join(k.name for k in s.kernels) or "none", s.kernel_us,
                     f"{100 * s.kernel_us / rep.wall_us:.0f}%" if rep.wall_us else "-"])
    parts += ["<h2>Segments</h2>",
              _table(["seg", "scheduler", "ops (source line)", "inputs / outputs", "kernels", "kernel us", "of host wall"], rows)]
    if rep.edges:
        parts += ["<h2>Edges through global memory</h2>",
                  _table(["from", "to", "tensor", "written + read", "why not merged (nvFuser's segmenter)"],
                         [[e.src, e.dst, e.tensor.label(), hb(e.nbytes), e.why_not_merged] for e in rep.edges])]
    parts += _fusion_sections(fd)
    measured = run_experiment(fd, inputs, reps=20, cold_l2=True)
    parts += ["<h2>Bookend variants (cold-L2 kernel time)</h2>", _table(HEADERS, [m.row() for m in measured])]
    nvfd = rep.nvfd
    nvfd.execute(inputs)
    with capture() as cap:
        nvfd.execute(inputs)
    rows = gpu_trace_rows(cap.trace)
    parts += ["<h2>Trace kernel table (one call, torch.profiler)</h2>",
              _table(list(rows[0]) if rows else ["kernels"], [list(r.values()) for r in rows])]
    for n in rep.notes:
        parts.append(f"<p class='note'>note: {html.escape(n)}</p>")
    parts.append("<h2>nvFuser's segmenter log (raw)</h2><details><summary>show</summary><pre>"
                 + html.escape(rep.raw_log[-200_000:]) + "</pre></details>")
    return parts
