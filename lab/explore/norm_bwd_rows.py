"""Exploration behind fusions/norm_bwd_rows.py: the hand-written rows schedule of the norm backward against
segkit's fused builder and torch.compile, side by side in one process, cold-L2 kernel time (CUPTI), each
candidate checked against the float64 reference and run twice for identical bits before it is timed.

    python lab/explore/norm_bwd_rows.py [rmsnorm|layernorm ...] [--shape NAME] [--grid quick|wide]
        [--where 's.tidx and s.rows >= 8'] [--joint none,cat,stack]

``--joint`` times each layer-norm candidate with each way of summing its two partials in stage 2
(norm_bwd_two_stage.JOINT: two sums, nvFuser's two kernels, or one sum of both), per-kernel times shown.
"""
import argparse
import time
import traceback

import torch

from benchmarks.executors import norm_backward
from benchmarks.harness import copy_bandwidth_gbs, flush_l2, kernel_us
from benchmarks.workloads import case_data, norm_bytes
from fusions.norm_bwd_rows import RowsScheduled, candidates
from segkit.compare import diff
from segkit.nvfuser.timing import kernel_breakdown

SMS = torch.cuda.get_device_properties(0).multi_processor_count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kinds", nargs="*", default=["rmsnorm", "layernorm"])
    ap.add_argument("--shape", default="mixorder_576000x384")
    ap.add_argument("--grid", default="quick", choices=("quick", "wide"))
    ap.add_argument("--budget", type=float, default=240.0, help="seconds of candidates per kind")
    ap.add_argument("--where", default="True", help="keep candidates s for which this holds, e.g. 's.rows >= 8'")
    ap.add_argument("--joint", default="none", help="layer norm's stage 2 sums, comma-separated: none, cat, stack")
    args = ap.parse_args()
    joints = [None if j == "none" else j for j in args.joint.split(",")]
    gbs = copy_bandwidth_gbs()
    print(f"{torch.cuda.get_device_name()} {SMS} SMs, copy {gbs:.0f} GB/s, torch {torch.__version__}", flush=True)
    table = []
    for kind in args.kinds:
        spec = f"{kind}_bwd"
        cfg, inputs, refs, _ = case_data(spec, args.shape, torch.bfloat16)
        floor_us = norm_bytes(kind, "bwd", cfg) / gbs / 1e3
        args_list = list(inputs.values())

        def report(tag, us, extra=""):
            line = f"RES {kind:9s} {args.shape:20s} {tag:44s} {us:8.1f} us  {100 * floor_us / us:5.1f}% floor {extra}"
            print(line, flush=True)
            table.append((kind, tag, us))

        for ex in ("segkit", "torch.compile"):
            p = norm_backward(kind, cfg, ex, inputs)
            report(ex, kernel_us(p.fn, 20, flush=lambda: (p.setup(), flush_l2())))
        best = None
        t_end = time.time() + args.budget
        for s, joint in [(s, j) for s in candidates(cfg, SMS, quick=args.grid == "quick") if eval(args.where, {"s": s})
                         for j in (joints if kind == "layernorm" else [None])]:
            if time.time() > t_end:
                print(f"budget: stopped before {s}", flush=True)
                break
            tag = f"rows chunk={s.chunk} r={s.rows} v={s.vec} t={s.tidx}" + (f" stage2={joint}" if joint else "")
            try:
                run = RowsScheduled(cfg, s, layer_norm=kind == "layernorm", joint=joint)
                t0 = time.time()
                out = run.execute(args_list)
                compile_s = time.time() - t0
                bad = [str(d) for i, (r, g) in enumerate(zip(refs, out)) if not (d := diff(i, r, g)).ok]
                again = run.execute(args_list)
                same = all(torch.equal(a, b) for a, b in zip(out, again))
                if bad or not same:
                    print(f"WRONG {tag}: {'; '.join(bad)} deterministic={same}", flush=True)
                    continue
                ks = kernel_breakdown(lambda: run.execute(args_list), 20)
                us = sum(k.us for k in ks)
                report(tag, us, f"compile {compile_s:.1f}s kernels [{', '.join(f'{k.us:.1f}' for k in ks)}]")
                if best is None or us < best[1]:
                    best = (tag, us)
            except Exception as e:  # a candidate nvFuser refuses is a result too
                msg = str(e).strip().splitlines()
                print(f"FAIL {tag}: {type(e).__name__}: {msg[0] if msg else ''}", flush=True)
                if best is None:
                    traceback.print_exc(limit=3)
        if best:
            print(f"BEST {kind} {best[0]} {best[1]:.1f} us", flush=True)
    print("\nkind       candidate                                      kernel us")
    for kind, tag, us in table:
        print(f"{kind:10s} {tag:46s} {us:9.1f}")


if __name__ == "__main__":
    main()
