"""``segkit regions FWD_TRACE [BWD_TRACE ...]``: why a Thunder program was cut between fusion regions, and what
each cut costs: every region, every non-fusion call between regions with the tensors crossing it, the bytes they
force through memory, its kernels and host time, and the estimated gain of fusing it; with ``--step-ms``, the
estimated step once segkit's symbols are fused. Text, ``--format json``, and ``--html`` with the region picture.

The traces are the Python source Thunder prints for a compiled function's final forward and backward execution
traces (``thunder_exec.trace_capture.save_traces`` writes them, every tensor's type included).
"""

from __future__ import annotations

import argparse
import html
from pathlib import Path

from segkit_cli import argtypes
from segkit_cli.parser import messages

GPU_HELP = ("the GPU the traces ran on: h100, h200, or its full name (its copy bandwidth sizes the estimate; "
            "another GPU needs --bandwidth)")


def register(sub) -> None:
    p = sub.add_parser("regions", help="Thunder's fusion regions and the cuts between them: bytes, kernels, gain")
    p.add_argument("traces", nargs="+", type=argtypes.existing_file, metavar="TRACE",
                   help="saved Thunder execution traces of one program: forward, then backward")
    p.add_argument("--gpu", type=argtypes.name, help=GPU_HELP + " (default: the profile's GPU, else h100)")
    p.add_argument("--bandwidth", type=argtypes.positive_float, metavar="TBS", help="copy bandwidth in TB/s")
    p.add_argument("--launch-us", type=argtypes.nonnegative_float, default=4.0, help="cost of a kernel launch (us)")
    p.add_argument("--host-us", type=argtypes.nonnegative_float, help="host time of a cut's call (us); 0 where the "
                   "GPU bounds the step (default: measured in --profile, else 20)")
    p.add_argument("--kernels-per-cut", type=argtypes.count, help="kernels each cut's call launches (default: "
                   "measured in --profile, else 1)")
    p.add_argument("--profile", type=argtypes.trace_file, help="a profile of the jitted function with "
                   "thunder_exec.trace_capture.CallRanges (torch.profiler .json / .json.gz, or nsys): each cut's "
                   "kernels and host time measured")
    p.add_argument("--step-ms", type=argtypes.positive_float, help="the measured step time: prints the estimated "
                   "fused step (measured minus the gains of segkit's fusible cuts)")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--html", type=argtypes.output_file, metavar="OUT.html", help="also write an HTML page with the "
                   "region picture")
    p.set_defaults(func=run)


def _read(path: Path) -> str:
    from segkit.regions import TraceFormatError

    try:
        return path.read_text()
    except UnicodeDecodeError as e:
        raise TraceFormatError(f"{path}: not a text file ({e.reason} at byte {e.start}): not a Thunder trace") from None


def run(args: argparse.Namespace) -> int:
    import json

    from segkit.regions import analyze, cost_model
    from segkit.regions.render import format_text

    from segkit.errors import UsageError

    seen = [p.resolve() for p in args.traces]
    if len(set(seen)) < len(seen):  # the same trace twice would count its cuts twice
        twice = next(p for p, r in zip(args.traces, seen) if seen.count(r) > 1)
        raise UsageError(f"TRACE {twice} is given twice: give each trace of the program once (forward, then backward)")
    timings, gpu = None, args.gpu
    if args.profile:
        from segkit.regions.measure import call_timings
        from segkit.trace import load

        profile = load(args.profile)
        timings, gpu = call_timings(profile), gpu or profile.gpu
    model = cost_model(gpu or "h100", args.bandwidth, launch_us=args.launch_us, host_us=args.host_us,
                       kernels_per_cut=args.kernels_per_cut)
    report = analyze([(str(p), _read(p)) for p in args.traces], model, args.step_ms, timings)
    print(json.dumps(report.to_dict(), indent=1) if args.format == "json" else format_text(report))
    if args.html:
        args.html.write_text(page(report))
        print(f"wrote {args.html}", file=messages(args))
    return 0


def page(report) -> str:
    """One self-contained HTML page: the summary, and per trace the region strip and its table."""
    from segkit.regions.render import HEADERS, KIND_COLOURS, REGION_COLOUR, rows, summary, svg_strip
    from segkit_cli.commands.report import _CSS, _table

    legend = " ".join(f"<span style='background:{c};color:white;padding:1px 6px'>{html.escape(k)}</span>"
                      for k, c in [("region", REGION_COLOUR), *(("cut: " + k, c) for k, c in KIND_COLOURS.items())])
    parts = ["<h1>segkit regions</h1>", "<ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in summary(report))
             + "</ul>", f"<p>{legend} &mdash; widths grow with bytes; hover a box for its ops and tensors.</p>"]
    for t in report.traces:
        title = f"{html.escape(t.label)} ({html.escape(t.function)}): {len(t.regions)} region(s), {len(t.cuts)} cut(s)"
        parts += [f"<h2>{title}</h2>", svg_strip(t), _table(HEADERS, rows(t))]
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>segkit regions</title><style>{_CSS}</style>"
            f"</head><body>{''.join(parts)}</body></html>\n")
