"""The norm forward's rows formulation on nvFuser: every candidate of ``segkit tune``'s quick grid at the issue's
forward shapes (bf16), against the float64 reference within the specs' tolerances. A candidate nvFuser refuses
fails naming its schedule, so one run says which schedules compile and which are right. The grid is made for
132 SMs (H100 SXM and H200 both have 132)."""

from __future__ import annotations

import functools

import pytest
import torch

import fusions
from fusions.norm_fwd_rows import FwdRows, FwdRowsSchedule, candidates
from segkit.compare import compare

pytestmark = pytest.mark.gpu

SHAPES = ("mixorder_576000x384", "sweep_16384x256", "sweep_65536x1024")
CASES = [(name, shape, s) for name in ("rmsnorm_fwd", "layernorm_fwd") for shape in SHAPES
         for s in candidates(fusions.get(name).config(shape, torch.bfloat16), 132)]


@functools.lru_cache(maxsize=1)  # one case's inputs and float64 reference at a time (1.8 GB at 576000 x 384)
def _case(name: str, shape: str) -> tuple[list[torch.Tensor], tuple]:
    spec = fusions.get(name)
    cfg = spec.config(shape, torch.bfloat16)
    inputs = spec.make_inputs(cfg, device="cuda")
    return list(inputs.values()), tuple(spec.reference(inputs, cfg))


def _label(v):
    return f"c{v.chunk}-v{v.vec}-t{v.tidx}-u{v.unroll}" if isinstance(v, FwdRowsSchedule) else str(v)


@pytest.mark.parametrize("name, shape, sched", CASES, ids=_label)
def test_every_quick_candidate_is_right(name, shape, sched, record):
    cfg = fusions.get(name).config(shape, torch.bfloat16)
    args, refs = _case(name, shape)
    run = FwdRows(name, cfg, sched)
    outs = run.execute(args)  # compiles (a refusal is a SegkitError naming the schedule)
    diffs = compare(refs, outs)
    record({"test": "norm_fwd_rows", "spec": name, "shape": shape, "schedule": sched.describe(),
            "ok": all(d.ok for d in diffs), "max_rel_err": max(d.rel_err for d in diffs)})
    assert all(d.ok for d in diffs), f"{sched.describe()}: {[str(d) for d in diffs if not d.ok]}"
    junk = [torch.full_like(o, float("nan")) for o in outs]  # the next outputs' blocks in the caching allocator
    del junk  # hold NaN, not this run's answers: a kernel reading an output before writing it shows
    again = run.execute(args)  # the compiled kernel, launched again: same answer
    assert all(d.ok for d in compare(refs, again)), f"{sched.describe()}, launched again on NaN-filled outputs"
    assert all(torch.equal(a, b) for a, b in zip(outs, again))


@pytest.mark.fresh_process  # torch.profiler takes CUPTI
def test_the_inference_variant_and_a_3d_input_run_one_kernel():
    spec = fusions.get("rmsnorm_fwd")
    cfg = spec.config("llama2_7b", torch.bfloat16)  # (2, 4096, 4096): x as a 2-D view, y back as 3-D
    inputs = spec.make_inputs(cfg, device="cuda")
    run = FwdRows("rmsnorm_fwd", cfg, FwdRowsSchedule(2, vec=8, tidx=128), outputs=(0,))
    (y,) = run.execute(list(inputs.values()))
    ref = spec.reference(inputs, cfg)[0]
    assert y.shape == cfg.shape and all(d.ok for d in compare([ref], [y]))
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        run.execute(list(inputs.values()))
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    assert len(kernels) == 1, [e.name for e in kernels]
