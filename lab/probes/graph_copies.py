"""The copies Thunder's CUDA graphs make per step, and what thunder_exec's fix of its runner saves, per variant.

Why: on Qwen3-0.6B x2 with CUDA graphs, Thunder + segkit_ex issued more ``copy_`` per step than stock Thunder
(cProfile; the lab run h200-2026-11-30-graphs-host-profile has the counts), in the host-bound turn from the forward
graph to the backward graph. Thunder's runner copies an argument whenever it is not the very tensor object it captured, static
inputs included, and a saved view is detached into a new object at every step: copies onto the same memory.

What it does, one process, per variant: compiles the step, then (1) lists every ``aten.copy_`` of one step with the
fix (thunder_exec.compat.install_cudagraph_alias_fix) and without it (Thunder's own method put back), and (2) times
PASSES passes of two lone steps each, one with the fix and one without, in alternating order (CUDA events around the
step, and the host's time to issue it): the medians and the paired ratio without / with.

Usage (repo root, GPU): python lab/probes/graph_copies.py CASE [VARIANTS] [PASSES]   (default segkit-graphs, 20)
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))


class CopyLog(TorchDispatchMode):
    """Every ``aten.copy_`` under it: shape, MiB, and whether the source is the destination's memory."""

    def __init__(self):
        super().__init__()
        self.copies: list[tuple] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten.copy_.default:
            dst, src = args[0], args[1]
            self.copies.append((tuple(dst.shape), dst.numel() * dst.element_size() / 2**20,
                                dst.data_ptr() == src.data_ptr()))
        return func(*args, **(kwargs or {}))


def main() -> None:
    from thunder.transforms import cudagraph

    import thunder_exec
    from benchmarks.model_cases import CASES, build
    from benchmarks.model_step import VARIANTS, make

    case_name = sys.argv[1]
    variants = (sys.argv[2] if len(sys.argv) > 2 else "segkit-graphs").split(",")
    passes = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    thunder_exec.install()
    fixed = cudagraph.CUDAGraphRunner.call_cuda_graph
    methods = {"with fix": fixed, "without": fixed.thunder_original}
    case = next(c for c in CASES if c.name == case_name)
    for name in variants:
        variant = next(v for v in VARIANTS if v.name == name)
        built = build(case, "cuda")
        jm = make(variant, built.model, "cuda")

        def step() -> None:
            for t in (*built.model.parameters(), *built.grad_inputs):
                t.grad = None
            jm(*built.inputs).backward()

        for _ in range(4):
            step()
        for label, method in methods.items():
            cudagraph.CUDAGraphRunner.call_cuda_graph = method
            step()
            with CopyLog() as log:
                step()
            onto = [c for c in log.copies if c[2]]
            print(f"{case_name} | {name} | {label}: {len(log.copies)} copies per step "
                  f"({sum(c[1] for c in log.copies):.1f} MiB), {len(onto)} onto their own memory "
                  f"({sum(c[1] for c in onto):.1f} MiB): {[c[0] for c in onto]}")
        times = {label: ([], []) for label in methods}
        for i in range(passes):
            for label in (list(methods) if i % 2 == 0 else list(methods)[::-1]):
                cudagraph.CUDAGraphRunner.call_cuda_graph = methods[label]
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                t0 = time.perf_counter()
                start.record()
                step()
                end.record()
                host = time.perf_counter() - t0
                torch.cuda.synchronize()
                times[label][0].append(start.elapsed_time(end))
                times[label][1].append(host * 1e3)
        cudagraph.CUDAGraphRunner.call_cuda_graph = fixed
        (ms_f, host_f), (ms_o, host_o) = times["with fix"], times["without"]
        ratios = [o / f for o, f in zip(ms_o, ms_f)]
        print(f"{case_name} | {name} | lone step ms with fix {statistics.median(ms_f):.3f}, without "
              f"{statistics.median(ms_o):.3f}; paired without / with {statistics.median(ratios):.3f}x, with fix "
              f"faster in {sum(r > 1 for r in ratios)}/{passes}; host ms {statistics.median(host_f):.3f} vs "
              f"{statistics.median(host_o):.3f}")


if __name__ == "__main__":
    main()
