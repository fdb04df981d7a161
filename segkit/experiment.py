"""The bookend experiment (NVIDIA/Fuser PR #2815): policies x realizations, measured side by side.

Every variant is validated against the reference interpreter on the same
inputs before anything about it is reported; a wrong variant is reported as
wrong, with no timing. Kernel time is the sum of nvFuser's profiled kernel
times for one call (median of several calls; L2 is not flushed here: this
compares segmentations, the benchmarks measure cold-L2 kernel time; ``cold_l2=True``
times with the benchmarks' cold-L2 timer instead, as ``segkit report`` does). Host wall
time is per synchronised call, median over repetitions.

Two more host columns show the cost as a training step sees it: "async host" is
the CPU time per call when calls are launched back to back without a sync (the
CPU running ahead of the GPU; a call costs its host path, not its kernels), and
"graph replay" is the wall per synchronised replay of the call captured in a CUDA
graph (``graph_replay``: the host plan's views and nvFuser's launches captured
once, replayed with no host work), checked against the reference like the call.
"""

from __future__ import annotations

import gc
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from segkit.bookend import HostPlan, bookend
from segkit.compare import compare
from segkit.interp import random_inputs, run_reference
from segkit.nvfuser.run import KernelInfo, compiled, profile_call, run_nvfuser, segment_groups
from segkit.nvfuser.timing import async_host_us, kernel_breakdown, nvfuser_scheduler, wall_us

#: (label, policy, ops filter, realization); None policy = nvFuser's own pass on the unmodified fusion.
VARIANTS = [
    ("nvFuser default", None, None, None),
    ("outputs / segment_set", "outputs", None, "segment_set"),
    ("outputs / host", "outputs", None, "host"),
    ("inputs+outputs / segment_set", "inputs+outputs", None, "segment_set"),
    ("inputs+outputs / host", "inputs+outputs", None, "host"),
    ("{slice,squeeze} / segment_set", "inputs+outputs", {"slice", "squeeze"}, "segment_set"),
    ("{slice,squeeze} / host", "inputs+outputs", {"slice", "squeeze"}, "host"),
]


@dataclass
class Measurement:
    variant: str
    ok: bool
    max_rel_err: float
    groups: list[str]
    kernels: int
    kernel_us: float
    wall_us: float
    cuts: int
    async_us: float | None = None
    graph_us: float | None = None
    graph_note: str = ""  # why there is no graph replay time (capture failed, replay wrong)

    def row(self) -> list:
        if not self.ok:
            return [self.variant, "WRONG", f"{self.max_rel_err:.1e}", "-", "-", "-", "-", "-", "-", self.cuts]
        graph = f"{self.graph_us:.1f}" if self.graph_us is not None else (self.graph_note or "-")
        return [self.variant, "ok", f"{self.max_rel_err:.1e}", f"{len(self.groups)}: {' '.join(self.groups)}",
                self.kernels, f"{self.kernel_us:.1f}", f"{self.wall_us:.1f}",
                "-" if self.async_us is None else f"{self.async_us:.1f}", graph, self.cuts]


HEADERS = ["variant", "check", "max rel err", "segments", "kernels", "kernel us", "host wall us/call",
           "async host us/call", "graph replay us", "segment_sets"]


def graph_replay(call: Callable[[], Any], warmup: int = 3) -> tuple[Callable[[], None], Any]:
    """``call`` captured in a CUDA graph: (replay, the captured outputs, which each replay rewrites). Warm-up runs
    on a side stream first (compilation and allocations happen outside the capture)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(warmup):
            call()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    gc.collect()
    gc.disable()  # a collection inside the capture can free nvFuser state that syncs the device: the process aborts
    try:
        with torch.cuda.graph(graph):
            outs = call()
    finally:
        gc.enable()
    return graph.replay, outs


def graph_wall_us(call: Callable[[], Any], refs: Sequence[torch.Tensor], reps: int) -> tuple[float | None, str]:
    """Wall per synchronised replay of ``call`` captured in a CUDA graph, after checking a replay's outputs
    against ``refs``; (None, why) when it cannot be captured or replays wrong."""
    try:
        replay, outs = graph_replay(call)
    except Exception as e:  # e.g. a path that synchronises or allocates on the host during capture
        return None, f"no capture: {(str(e).strip().splitlines() or [type(e).__name__])[0][:60]}"
    replay()  # capture ran no kernel: the outputs hold what this replay computed (or garbage)
    torch.cuda.synchronize()
    if not all(d.ok for d in compare(refs, list(outs))):
        return None, "replay WRONG"
    return wall_us(replay, reps), ""


def measure_variant(fd: Any, inputs: Sequence[Any], label: str, policy: str | None, ops, realization: str | None,
                    refs: Sequence[torch.Tensor], reps: int = 50, cold_l2: bool = False,
                    graphs: bool = True) -> Measurement:
    """Run one variant on nvFuser: check it, then profile its kernels (``cold_l2``: kernel time from the
    benchmarks' cold-L2 timer, sum of per-kernel medians, instead of nvFuser's profiler) and time its host
    path (synchronised, asynchronous, and as a CUDA-graph replay unless ``graphs`` is off)."""
    if policy is None:
        target, cuts = fd, 0
    else:
        plan = bookend(fd, policy, ops)
        target, cuts = plan.apply(realization), len(plan.cuts)
    if isinstance(target, HostPlan):
        call = lambda: target.run(inputs, "nvfuser", check=False)  # noqa: E731
    else:
        call = lambda: run_nvfuser(target, inputs, profile=False).outputs  # noqa: E731
    outs = call()  # compiles
    diffs = compare(refs, outs)
    worst = max((d.rel_err for d in diffs), default=0.0)
    if not all(d.ok for d in diffs):
        return Measurement(label, False, worst, [], 0, 0.0, 0.0, cuts)
    if cold_l2:  # the benchmarks' timer (torch.profiler): not in a process that used nvFuser's profiler
        timed = kernel_breakdown(call, reps=10)
        kernels = [KernelInfo(k.name, nvfuser_scheduler(k.name) or "", k.us * 1e-3) for k in timed]
        kernel_us = sum(k.us for k in timed)
    else:
        profiled = [profile_call(call)[1] for _ in range(5)]
        kernels = profiled[-1]
        kernel_us = statistics.median(sum(k.time_ms for k in ks) for ks in profiled) * 1e3
    groups = _host_groups(target, kernels) if isinstance(target, HostPlan) else segment_groups(compiled(target), kernels)
    graph_us, note = graph_wall_us(call, refs, reps) if graphs else (None, "")
    return Measurement(label, True, worst, groups, len(kernels), kernel_us, wall_us(call, reps), cuts,
                       async_host_us(call), graph_us, note)


def _host_groups(host: HostPlan, kernels) -> list[str]:
    cores = list(host._cores.values())
    groups = ["host views"] if host.prologue or host.epilogue else []
    if cores:
        groups += segment_groups(compiled(cores[-1]), kernels)
    return groups


def run_experiment(fd: Any, inputs: Sequence[Any], variants=VARIANTS, reps: int = 50,
                   cold_l2: bool = False, graphs: bool = True) -> list[Measurement]:
    refs = run_reference(fd, inputs)
    return [measure_variant(fd, inputs, label, policy, ops, realization, refs, reps, cold_l2, graphs)
            for label, policy, ops, realization in variants]


def nanogpt_layernorm_thunder(fd, shape=(16, 128, 1600)) -> None:
    """nanoGPT's layer norm forward as Thunder emits it: weight and bias enter through broadcast + expand."""
    from segkit.dtypes import DataType

    n = len(shape)
    x = fd.define_tensor(shape=list(shape), contiguity=[True] * n, dtype=DataType.BFloat16)
    w, b = (fd.define_tensor(shape=[shape[-1]], contiguity=[True], dtype=DataType.BFloat16) for _ in range(2))
    wb, bb = (fd.ops.cast(fd.ops.expand(fd.ops.broadcast(t, is_broadcast_dim=[True] * (n - 1) + [False]),
                                        shape=list(shape)), dtype=DataType.Float) for t in (w, b))
    xf = fd.ops.cast(x, dtype=DataType.Float)
    var, mean = fd.ops.var_mean(xf, dims=[n - 1], correction=0, keepdim=False)
    per_row = [False] * (n - 1) + [True]
    mean_b = fd.ops.expand(fd.ops.broadcast(mean, is_broadcast_dim=per_row), shape=list(shape))
    rstd = fd.ops.rsqrt(fd.ops.add(var, 1e-5))
    rstd_b = fd.ops.expand(fd.ops.broadcast(rstd, is_broadcast_dim=per_row), shape=list(shape))
    y = fd.ops.add(fd.ops.mul(fd.ops.mul(fd.ops.sub(xf, mean_b), rstd_b), wb), bb)
    fd.add_output(fd.ops.cast(y, dtype=DataType.BFloat16))


def workloads(tiny: bool, device: str, scripts: Sequence[str] = ()) -> dict[str, tuple[Any, list]]:
    """The experiment's fusions and inputs (tiny twins on CPU), plus any repro ``scripts`` given (e.g. a
    region captured from Thunder: tests/data/thunder/rope_llama3_8b_fwd_nvFusion0.py). The named workloads
    resolve through ``segkit.workloads``: import the package that registers them (``fusions``) first."""
    from pathlib import Path

    from segkit.frontend import FusionDefinition
    from segkit.repro import load_repro
    from segkit.workloads import get

    out = {}
    shape = (2, 8, 64) if tiny else (16, 128, 1600)
    with FusionDefinition() as fd:
        nanogpt_layernorm_thunder(fd, shape)
    out[f"nanoGPT layer norm fwd, Thunder-style ({'x'.join(map(str, shape))} bf16)"] = (fd, random_inputs(fd, device))
    suffix = "_tiny" if tiny else ""
    for label, name, cfg in [("qkv split + RoPE fwd", "qkv_split_rope_fwd", "Llama-2-13b-hf_bs2"),
                             ("qkv split + RoPE bwd", "qkv_split_rope_bwd", "Llama-3-70B_bs1")]:
        spec = get(name)
        c = spec.config(cfg + suffix)
        out[f"{label}, {c.name} T={c.T}"] = (spec.build(c), list(spec.make_inputs(c, device=device).values()))
    for script in scripts:
        repro = load_repro(Path(script))
        out[f"{Path(script).name} (repro script)"] = (repro.fd, repro.make_inputs(device))
    return out
