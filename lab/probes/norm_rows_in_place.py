"""The per-head q / k RMSNorm backward of Qwen3-0.6B (B 4, T 2048, hs 128; q 16 heads, k 8) with x in the layout the
model hands over (q.view(B, T, nh, hs).transpose(1, 2): memory in (b, t, h) order) and dy contiguous in
(B, nh, T, hs): kernel time per call (cold L2, median of 30, every kernel of the call summed) of

* the rows schedule reading both in place (the strided stage 1),
* the rows schedule after torch copies x into row order (what segkit_ex ran before),
* nvFuser's default fused backward after the same copy.

The schedules are the small-norms tuning's winners on an H200 (lab/runs/h200x2-2026-11-29-small-norms-tune).

    python lab/probes/norm_rows_in_place.py
"""

import torch

import fusions
from fusions.norm_bwd_rows import RowsScheduled
from fusions.rows_schedule import RowsSchedule
from segkit.compare import compare
from segkit.nvfuser.run import compiled
from segkit.nvfuser.timing import kernel_breakdown

CASES = (("qwen3_0.6b_q", 16, RowsSchedule(64, rows=4, vec=8)), ("qwen3_0.6b_k", 8, RowsSchedule(32, rows=2, vec=4)))
B, T, hs = 4, 2048, 128


def main() -> None:
    spec = fusions.get("rmsnorm_bwd")
    print(f"GPU {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| config | rows in place us | copy + rows us | copy + nvFuser default us | kernels in place / copied |")
    print("|---|---|---|---|---|")
    for name, nh, sched in CASES:
        cfg = spec.config(name)
        flat = spec.make_inputs(cfg, device="cuda")
        x, dy, rstd, w = flat.values()
        given = [x.view(B, nh, T, hs).transpose(1, 2).contiguous().transpose(1, 2), dy.view(B, nh, T, hs),
                 rstd.view(B, nh, T), w]
        run = RowsScheduled(cfg, sched, layer_norm=False)
        assert run.strided_views(given) is not None
        fused = compiled(spec.build(cfg))
        ok = all(d.ok for d in compare(spec.reference(flat, cfg), [run.execute(given)[0].reshape(cfg.shape),
                                                                   run.execute(given)[1]]))

        def copied_default():
            return fused.execute([given[0].reshape(cfg.shape), dy, rstd, w])

        times = {label: kernel_breakdown(fn) for label, fn in (
            ("in_place", lambda: run.execute(given)),
            ("copied", lambda: run.execute([t.contiguous() for t in given])),
            ("default", copied_default))}
        us = {k: sum(t.us for t in v) for k, v in times.items()}
        print(f"| {name} {cfg.shape} (ok={ok}) | {us['in_place']:.1f} | {us['copied']:.1f} | {us['default']:.1f} | "
              f"{len(times['in_place'])} / {len(times['copied'])} |")


if __name__ == "__main__":
    main()
