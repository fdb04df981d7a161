"""``segkit demo``: every bundled workload, validated; then the bookend experiment.

On a CPU machine each workload's tiny config runs through the reference interpreter and is checked against
its float64 reference, and the bookend plans of the experiment (``segkit.experiment``) are shown and
validated with the interpreter. With a CUDA device and nvfuser_direct, the headline configs run on nvFuser
(segments, kernels, kernel time) and the experiment is measured.
"""

from __future__ import annotations

import argparse

from segkit_cli import targets

#: The config each workload shows on a GPU (the tiny twin is used on CPU).
HEADLINE = {
    "layernorm_fwd": "nanogpt",
    "rmsnorm_fwd": "llama2_13b",
    "layernorm_bwd": "nanogpt",
    "rmsnorm_bwd": "sweep_16384x4096",
    "qkv_split_rope_fwd": "Llama-2-13b-hf_bs2",
    "qkv_split_rope_bwd": "Llama-3-8B_bs1",
    "qk_norm_rope_fwd": "Qwen3-0.6B",
    "qk_norm_rope_bwd": "Qwen3-0.6B",
    "fp8_amax": "4096x4096",
}


def register(sub) -> None:
    p = sub.add_parser("demo", help="the main job: the bundled fusions on the reference (and nvFuser on a GPU)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace | None = None) -> int:
    import torch
    from tabulate import tabulate

    gpu = targets.nvfuser_available()
    backend = "nvFuser " + torch.cuda.get_device_name() if gpu else "reference interpreter (CPU; no CUDA/nvfuser_direct)"
    print(f"segkit demo: workloads on {backend}, checked against float64 references\n")
    rows = [_row(name, cfg, gpu) for name, cfg in HEADLINE.items()]
    print(tabulate(rows, headers=["workload", "config", "ops", "segments", "kernels", "kernel us", "rel err", "check"]))
    ok = all(r[-1] == "ok" for r in rows)
    return 0 if bookend_section(gpu) and ok else 1


def _row(name: str, cfg_name: str, gpu: bool) -> list:
    from segkit.compare import compare
    from segkit.interp import run_reference
    from segkit.nvfuser.run import run_nvfuser

    spec = targets.workload(name)
    cfg = spec.config(cfg_name if gpu else cfg_name + "_tiny")
    fd = spec.build(cfg)
    inputs = spec.make_inputs(cfg, device="cuda" if gpu else "cpu")
    refs = spec.reference(inputs, cfg)
    if gpu:
        run = run_nvfuser(fd, list(inputs.values()))
        outs, segs, kernels = run.outputs, f"{run.segments} {'/'.join(run.groups)}", run.kernel_count
        ktime = f"{sum(k.time_ms for k in run.kernels) * 1e3:.1f}"
    else:
        outs, segs, kernels, ktime = run_reference(fd, list(inputs.values())), "-", "-", "-"
    worst = max(compare(refs, outs), key=lambda d: d.rel_err / d.tol)
    return [name, cfg.name, len(fd.fusion.ops), segs, kernels, ktime, f"{worst.rel_err:.1e}", "ok" if worst.ok else "MISMATCH"]


def bookend_section(gpu: bool) -> bool:
    """The bookend experiment: measured on a GPU, planned and validated on CPU."""
    import fusions  # noqa: F401 (registers the experiment's workloads)
    from tabulate import tabulate

    from segkit.bookend import bookend, run_plan
    from segkit.compare import compare
    from segkit.experiment import HEADERS, VARIANTS, run_experiment, workloads
    from segkit.interp import run_reference

    print("\nbookend experiment (NVIDIA/Fuser PR #2815): policies x realizations" + ("" if gpu else ", tiny, CPU"))
    ok = True
    for label, (fd, inputs) in workloads(tiny=not gpu, device="cuda" if gpu else "cpu").items():
        print(f"\n{label}")
        if gpu:
            rows = [m.row() for m in run_experiment(fd, inputs)]
            print(tabulate(rows, headers=HEADERS))
            continue
        want = run_reference(fd, inputs)
        rows = []
        for name, policy, ops, realization in VARIANTS[1:]:
            plan = bookend(fd, policy, ops)
            got = run_plan(plan, inputs, realization=realization)
            good = all(d.ok for d in compare(want, got))
            ok &= good
            cut = ", ".join(t.name for t in plan.segment_sets) or "-"
            rows.append([name, len(plan.cuts), cut, len(plan.prologue) + len(plan.epilogue), "ok" if good else "MISMATCH"])
        print(tabulate(rows, headers=["variant", "segment_sets", "cut after", "host view ops", "reference check"]))
    return ok
