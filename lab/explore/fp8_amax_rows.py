"""Exploration behind fusions/fp8_amax_rows.py and fusions/fp8_amax_tiles.py: rowwise + columnwise + tensorwise
amax with x read once by a hand-written schedule (whole rows per CTA, or tiles), against segkit (as tuned for
this GPU), segkit + reuse and torch.compile with and without the seed's reuse FX pass, side by side in one
process; cold-L2 kernel time (CUPTI, per kernel), each candidate checked against the float64 reference and run
twice for identical bits before it is timed.

    python lab/explore/fp8_amax_rows.py [SHAPE ...] [--form tiles,rows] [--budget S]
"""
import argparse
import time
from dataclasses import replace

import torch

from benchmarks.executors import amax
from benchmarks.harness import copy_bandwidth_gbs, flush_l2, kernel_us
from benchmarks.workloads import amax_bytes, case_data
from fusions import fp8_amax_rows, fp8_amax_tiles
from segkit.compare import diff
from segkit.nvfuser.timing import kernel_breakdown

FORMS = {"rows": (fp8_amax_rows.AmaxRows, fp8_amax_rows.candidates),
         "tiles": (fp8_amax_tiles.AmaxTiles, fp8_amax_tiles.candidates)}

SMS = torch.cuda.get_device_properties(0).multi_processor_count


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("shapes", nargs="*", default=["4096x4096", "16384x8192", "8192x28672"])
    ap.add_argument("--budget", type=float, default=70.0, help="seconds of candidates per shape and form")
    ap.add_argument("--form", default="tiles,rows", help="comma-separated: tiles, rows")
    args = ap.parse_args()
    gbs = copy_bandwidth_gbs()
    print(f"{torch.cuda.get_device_name()} {SMS} SMs, copy {gbs:.0f} GB/s, torch {torch.__version__}", flush=True)
    table = []
    for shape in args.shapes:
        cfg, inputs, refs, _ = case_data("fp8_amax", shape, torch.bfloat16)
        cfg = replace(cfg, amaxes=("row", "col", "all"))
        floor_us = amax_bytes(cfg) / gbs / 1e3
        x = [inputs["x"]]

        def report(tag, us, extra=""):
            print(f"RES {shape:12s} {tag:66s} {us:8.1f} us  {100 * floor_us / us:5.1f}% floor {extra}", flush=True)
            table.append((shape, tag, us, 100 * floor_us / us))

        for ex in ("segkit", "segkit+reuse", "torch.compile", "torch.compile+reuse_fx"):
            p = amax(cfg, ex, inputs)
            report(ex, kernel_us(p.fn, 20))
        best = None
        for form in args.form.split(","):
            make, cands = FORMS[form]
            t_end = time.time() + args.budget
            for s in cands(cfg, SMS):
                if time.time() > t_end:
                    print(f"budget: stopped before {s}", flush=True)
                    break
                tag = f"{form} {s.describe().split('(', 1)[1].rstrip(')')}"
                try:
                    run = make(cfg, s)
                    out = run.execute(x)
                    bad = [str(d) for i, (r, g) in enumerate(zip(refs, out)) if not (d := diff(i, r, g)).ok]
                    same = all(torch.equal(a, b) for a, b in zip(out, run.execute(x)))
                    if bad or not same:
                        print(f"WRONG {shape} {tag}: {'; '.join(bad)} deterministic={same}", flush=True)
                        continue
                    ks = kernel_breakdown(lambda: run.execute(x), 20, flush=flush_l2)
                    us = sum(k.us for k in ks)
                except Exception as e:  # a candidate nvFuser refuses is a result too
                    msg = str(e).strip().splitlines()
                    print(f"FAIL {shape} {tag}: {type(e).__name__}: {msg[0] if msg else ''}", flush=True)
                    continue
                report(tag, us, f"kernels [{', '.join(f'{k.us:.1f}' for k in ks)}]")
                if best is None or us < best[1]:
                    best = (tag, us)
        if best:
            print(f"BEST {shape} {best[0]} {best[1]:.1f} us", flush=True)
    print("\nshape        candidate                                                          kernel us   % floor")
    for shape, tag, us, pct in table:
        print(f"{shape:12s} {tag:66s} {us:9.1f} {pct:8.1f}")


if __name__ == "__main__":
    main()
