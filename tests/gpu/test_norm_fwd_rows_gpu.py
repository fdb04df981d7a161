"""The norm forward's rows formulation on nvFuser: every candidate of ``segkit tune``'s quick grid at three of the
issue's forward shapes (bf16), and at 576000 x 384 the schedules the tuning table holds (the ones segkit_ex
runs), against the float64 reference within the specs' tolerances. A candidate nvFuser refuses fails naming its
schedule, so one run says which schedules compile and which are right. The grid is made for 132 SMs (H100 SXM
and H200 both have 132). The whole grid at 576000 x 384 (26 cases, about 400 s of the GPU suite) is what
``segkit tune`` validates before it times each candidate."""

from __future__ import annotations

import functools

import pytest
import torch

import fusions
import fusions.spec
from fusions.norm_fwd_rows import FWD_ROWS, FwdRows, FwdRowsSchedule, candidates
from segkit.compare import compare
from segkit.nvfuser.timing import cuda_profiler

pytestmark = pytest.mark.gpu

def _label(v):
    if not isinstance(v, FwdRowsSchedule):
        return str(v)
    return f"c{v.chunk}-v{v.vec}-t{v.tidx}-u{v.unroll}" + (f"-s{v.steps}" if v.steps != 1 else "")


GRID_SHAPES = ("sweep_16384x256", "sweep_65536x1024", "sweep_4096x8192")  # the last: rows of 128-512 threads
TUNED_SHAPE = "mixorder_576000x384"


def _tuned(name: str) -> list[FwdRowsSchedule]:
    """The forward rows schedules the committed tuning table holds for ``name`` at TUNED_SHAPE, any GPU."""
    signature = fusions.spec.signature(fusions.get(name).config(TUNED_SHAPE, torch.bfloat16))
    found = {FwdRowsSchedule(e.chunk, **e.schedule) for e in fusions.spec.tuning_table().entries()
             if e.spec == name and e.formulation == FWD_ROWS and e.signature == signature}
    return sorted(found, key=_label)


CASES = [(name, shape, s) for name in ("rmsnorm_fwd", "layernorm_fwd") for shape in GRID_SHAPES
         for s in candidates(fusions.get(name).config(shape, torch.bfloat16), 132)] + \
        [(name, TUNED_SHAPE, s) for name in ("rmsnorm_fwd", "layernorm_fwd") for s in _tuned(name)]


@functools.lru_cache(maxsize=1)  # one case's inputs and float64 reference at a time (1.8 GB at 576000 x 384)
def _case(name: str, shape: str) -> tuple[list[torch.Tensor], tuple]:
    spec = fusions.get(name)
    cfg = spec.config(shape, torch.bfloat16)
    inputs = spec.make_inputs(cfg, device="cuda")
    return list(inputs.values()), tuple(spec.reference(inputs, cfg))


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
    with cuda_profiler() as prof:
        run.execute(list(inputs.values()))
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    assert len(kernels) == 1, [e.name for e in kernels]
