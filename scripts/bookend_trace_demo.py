"""Two bookend policies of the nanoGPT layer norm (Thunder-style), each under its own NVTX range (GPU host).

    segkit profile -o runA -- python scripts/bookend_trace_demo.py
    segkit trace compare runA/report.sqlite runB/report.sqlite --by kernel --plot cmp.png
"""

import sys

import torch

import fusions  # noqa: F401 (registers the experiment's named workloads)
import segkit
from segkit import trace
from segkit.bookend import bookend, run_plan
from segkit.cli import argtypes, entry
from segkit.cli.parser import Parser
from segkit.experiment import workloads


def build_parser() -> Parser:
    """REPS: how many timed runs per policy (default 20)."""
    parser = Parser(prog="scripts/bookend_trace_demo.py", description=__doc__.splitlines()[0])
    parser.add_argument("reps", type=argtypes.positive_int, nargs="?", default=20, help="timed runs per policy")
    parser.set_defaults(func=demo)
    return parser


def demo(args) -> int:
    reps = args.reps
    fd, inputs = next(iter(workloads(tiny=False, device="cuda").values()))
    for policy in ("outputs", "inputs+outputs"):
        plan = bookend(fd, policy)
        realized = plan.apply("segment_set")
        run_plan(realized, inputs, backend="nvfuser")  # compile outside the range
        torch.cuda.synchronize()
        for _ in range(reps):
            with trace.range(f"policy={policy}"):
                run_plan(realized, inputs, backend="nvfuser")
                torch.cuda.synchronize()
    print("done", segkit.__name__)
    return 0


if __name__ == "__main__":
    sys.exit(entry.run(build_parser, None))
