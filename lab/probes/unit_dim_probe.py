"""Issue 37 probe: segkit's norm fusions defined at x's 3-D shape with batch 1, (1, T, C), against the same rows as
(T, C) (thunder_exec.calls.runner_shape): kernels per call and their summed time, per spec, on this GPU.
A size-1 dim is a broadcast dim to nvFuser; the backward's dw sums over it.

    python lab/probes/unit_dim_probe.py [--rows 4096] [--hidden 4096]
"""

from __future__ import annotations

import argparse
import functools

import torch

import fusions
from fusions.configs import NormConfig
from fusions.runner import runner
from segkit.nvfuser.timing import cuda_profiler


def kernels(call, reps: int = 10) -> tuple[int, float]:
    """(kernels per call, summed kernel us per call) over ``reps`` calls under torch.profiler."""
    call()
    torch.cuda.synchronize()
    with cuda_profiler() as prof:
        for _ in range(reps):
            call()
        torch.cuda.synchronize()
    ev = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return len(ev) // reps, sum(e.device_time for e in ev) / reps


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=4096)
    p.add_argument("--hidden", type=int, default=4096)
    args = p.parse_args()
    print(f"GPU {torch.cuda.get_device_name()}; rows {args.rows}, hidden {args.hidden}, bf16, bookend outputs")
    for name in ("rmsnorm_bwd", "layernorm_bwd", "rmsnorm_fwd", "layernorm_fwd"):
        spec = fusions.get(name)
        flat = NormConfig("probe", (args.rows, args.hidden), torch.bfloat16, 1e-5, name.startswith("layernorm"))
        inp = spec.make_inputs(flat, device="cuda")
        for shape in ((args.rows, args.hidden), (1, args.rows, args.hidden)):
            cfg = NormConfig("probe", shape, torch.bfloat16, 1e-5, name.startswith("layernorm"))
            run = runner(name, cfg, "outputs")
            rows = shape[:-1]
            tensors = [t.reshape(shape) if k in ("x", "dy") else t.reshape(rows) if k in ("mean", "rstd") else t
                       for k, t in inp.items()]
            outs = run(tensors)
            want = runner(name, flat, "outputs")(list(inp.values()))
            same = all(torch.equal(o.reshape(w.shape), w) for o, w in zip(outs, want))
            n, us = kernels(functools.partial(run, tensors))
            print(f"{name:14s} x {shape!s:20s} {n} kernel(s) {us:8.1f} us  outputs equal to (rows, hidden)'s: {same}")


if __name__ == "__main__":
    main()
