"""What the step table (benchmarks/model_step.py) reads off a variant: step and host time, kernels of one
profiled step, a chrome trace, the bytes one forward saves for its backward, and from Thunder's last execution
traces the nvFusion regions and segkit's claims (per executed call: thunder_exec.claim_count)."""

from __future__ import annotations

import cProfile
import io
import pstats
import statistics
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import torch

from thunder_exec.claim_count import NORM_BW, NORM_FW, ROPE_BW, ROPE_FW  # noqa: F401  (the step table's names)


def trace_counts(fn) -> tuple[tuple[int, int], dict[str, int]]:
    """(nvFusion regions fw / bw, segkit claims) per executed call of the last forward and backward execution
    traces (thunder_exec.claim_count: a ThunderFX graph Dynamo reuses counts once per call) since ``fn`` was
    compiled: the step table asks after one step."""
    from thunder_exec import claim_count

    regions = claim_count.per_call(fn, lambda bsyms: sum(b.sym.name.startswith("nvFusion") for b in bsyms))
    return regions, claim_count.claims(fn)


def save_traces(fn, folder: Path) -> None:
    """The forward and backward execution traces: thunder_exec.trace_capture's saver where this tree has it, else
    text."""
    try:
        from thunder_exec.trace_capture import save_traces as saver
    except ImportError:
        import thunder

        folder.mkdir(parents=True, exist_ok=True)
        (folder / "forward.py").write_text(str(thunder.last_traces(fn)[-1]))
        (folder / "backward.py").write_text(str(thunder.last_backward_traces(fn)[-1]))
        return
    saver(fn, folder)


def saved_for_backward(forward: Callable[[], torch.Tensor], live: Iterable[torch.Tensor]) -> int:
    """Bytes one forward keeps for its backward: every storage autograd saves (``saved_tensors_hooks`` see eager's
    ops and the autograd functions of torch.compile and Thunder alike), each once, less those that live anyway
    (``live``: the model's parameters and buffers, the step's inputs). Each is counted at its size when the forward
    ends: a storage freed by then (FSDP2 frees the parameters it gathered, resizing them to nothing, and gathers them
    again for the backward) counts nothing. Sharded parameters (DTensors) count by their local shard. The backward
    then runs, freeing them."""
    kept = {_storage(t).data_ptr() for t in live if isinstance(t, torch.Tensor)}
    saved: dict[int, torch.UntypedStorage] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = _storage(t)
        saved.setdefault(storage.data_ptr(), storage)
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = forward()
    sizes = {ptr: s.nbytes() for ptr, s in saved.items()}
    saved.clear()  # holds no storage through the backward
    loss.backward()
    return sum(n for ptr, n in sizes.items() if ptr not in kept)


def _storage(t: torch.Tensor) -> torch.UntypedStorage:
    """``t``'s storage; a DTensor's local shard's (the wrapper has none of its own)."""
    return (t.to_local() if hasattr(t, "to_local") else t).untyped_storage()


def time_step(step: Callable[[], None], cuda: bool, steps: int = 1) -> tuple[float, float]:
    """(step ms, host ms) of one step: CUDA events around it (wall clock on CPU), and the host time to issue it.
    ``steps`` > 1: that many steps issued back to back between the events, per step, as a training loop runs them:
    the host issues the next step while the GPU still runs this one, so the time from a step's start to its first
    kernel (Thunder's prologue, Dynamo's guards) hides behind the previous step's kernels, where a lone step pays it.
    Each step runs in a ``step`` range (``segkit.trace.range``: NVTX and torch.profiler), so a profile of the step
    table (``segkit profile -- python benchmarks/model_step.py ...``) holds its timed steps for ``segkit trace
    breakdown``, and nothing else as a step."""
    from segkit.trace.idle import STEP_RANGE
    from segkit.trace.record import range as trace_range

    if cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
    t0 = time.perf_counter()
    for _ in range(steps):
        with trace_range(STEP_RANGE):
            step()
    host = (time.perf_counter() - t0) * 1e3 / steps
    if not cuda:
        return host, host
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / steps, host


def time_steps(step: Callable[[], None], iters: int, warmup: int, cuda: bool,
               steps: int = 1) -> tuple[float, float | None]:
    """(step ms, host ms): the medians of ``iters`` timings (``time_step``, of ``steps`` steps each) after
    ``warmup`` steps; host ms is None on CPU."""
    for _ in range(warmup):
        step()
    if cuda:
        torch.cuda.synchronize()
    times, hosts = zip(*(time_step(step, cuda, steps) for _ in range(iters)))
    return statistics.median(times), statistics.median(hosts) if cuda else None


def kernels_per_step(step: Callable[[], None]) -> int:
    from segkit.nvfuser.timing import KernelTimer

    timer = KernelTimer()
    timer()
    step()
    timer()
    return timer.kernel_counts[-1]


PROFILED_STEPS = 5  # the breakdown is each kind's median over these: one step's sums move with nothing changed


def profile(step: Callable[[], None], path: Path, steps: int = PROFILED_STEPS) -> None:
    """``steps`` steps under torch.profiler, back to back, each in its own step range, their chrome trace at
    ``path`` (gzipped when it ends in .gz); ``segkit trace breakdown`` takes each kind's median over them, and
    ``compare --by launch`` the first. A first step runs under the profiler's warm-up and is not kept: the profiler
    allocates its activity buffers inside the first launch it sees, which makes that launch hundreds of us long,
    none of it the step's."""
    from segkit.nvfuser.timing import cuda_profiler
    from segkit.trace.idle import STEP_RANGE
    from segkit.trace.record import range as trace_range

    path.parent.mkdir(parents=True, exist_ok=True)
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with cuda_profiler(activities, schedule=torch.profiler.schedule(wait=0, warmup=1, active=steps),
                       on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        for _ in range(1 + steps):
            with trace_range(STEP_RANGE):  # segkit trace idle / breakdown: the step and its lead-in
                step()
            torch.cuda.synchronize()
            prof.step()


def step_breakdown(path: Path) -> dict[str, float]:
    """Where a profiled step's time goes (``segkit trace breakdown`` on ``path``): us per step of attention, GEMMs,
    nvFuser's and the other memory-bound kernels, their sum, idle and the host's lead-in (the step table's
    ``breakdown`` column; the issue-54 bar reads its memory-bound sum)."""
    from segkit.trace import load
    from segkit.trace.breakdown import per_step

    got = per_step(load(path))
    return {key.removesuffix(" us").replace(" ", "_").replace("-", "_"): round(v, 1)
            for key, v in got.items() if key.endswith(" us") and v is not None}


def host_profile(step: Callable[[], None], path: Path, steps: int = 10, top: int = 40) -> None:
    """Where the host's time to issue a step goes: ``steps`` steps under cProfile, issued back to back, the ``top``
    functions by own time and by cumulative time, per step, as text at ``path``. cProfile slows Python-heavy code
    alike in every variant, so compare variants, not absolute times."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        step()
    prof.disable()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text)
    total_ms = stats.total_tt * 1e3 / steps
    text.write(f"host profile: {steps} steps back to back, {total_ms:.2f} ms per step under cProfile "
               f"(times below are over all {steps} steps)\n")
    for key in ("tottime", "cumulative"):
        text.write(f"\n== by {key}\n")
        stats.sort_stats(key).print_stats(top)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.getvalue())
