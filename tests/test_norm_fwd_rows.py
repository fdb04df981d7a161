"""The norm forward's rows formulation (fusions/norm_fwd_rows.py) on the CPU: its recorded fusion on the reference
interpreter against the specs' float64 references, its parameters as the tuning table keeps them and where segkit
picks it up, its refusals, and the candidates ``segkit tune`` offers. On nvFuser:
tests/gpu/test_norm_fwd_rows_gpu.py."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

import fusions
from fusions import formulations
from fusions.configs import NormConfig
from fusions.norm_fwd_rows import FWD_ROWS, FwdRows, FwdRowsSchedule, candidates
from fusions.norm_tune import FWD_ROWS_FIRST_HIDDEN, fwd_candidates
from fusions.runner import staged_for
from fusions.tune import realize, space
from segkit.compare import compare
from segkit.errors import SegkitError
from segkit.tuning import TuningTable
from segkit.tuning.search import Candidate

GPU = "NVIDIA Test GPU"


def _check(spec_name: str, cfg: NormConfig, sched: FwdRowsSchedule, outputs=None) -> list[torch.Tensor]:
    spec = fusions.get(spec_name)
    inputs = spec.make_inputs(cfg, seed=3)
    outs = FwdRows(spec_name, cfg, sched, outputs).run(list(inputs.values()))
    refs = list(spec.reference(inputs, cfg))
    refs = [refs[i] for i in outputs] if outputs is not None else refs
    assert [tuple(o.shape) for o in outs] == [tuple(r.shape) for r in refs]
    diffs = compare(refs, outs)
    assert all(d.ok for d in diffs), diffs
    return outs


@pytest.mark.parametrize("spec_name", ["rmsnorm_fwd", "layernorm_fwd"])
@pytest.mark.parametrize("shape, dtype, sched", [
    ((32, 96), torch.bfloat16, FwdRowsSchedule(4, vec=8)),                       # one vector per thread
    ((48, 128), torch.float16, FwdRowsSchedule(8, vec=4, tidx=8, unroll=2)),     # a loop over the row, 2 rows each
    ((2, 8, 64), torch.bfloat16, FwdRowsSchedule(16, vec=8, tidx=4, unroll=4)),  # 3-D x: a host view
    ((24, 40), torch.float32, FwdRowsSchedule(6, vec=4, unroll=3)),
    ((64, 96), torch.bfloat16, FwdRowsSchedule(32, vec=8, tidx=4, unroll=2, steps=4)),  # 4 row groups per CTA
])
def test_the_recorded_forward_matches_the_float64_reference(spec_name, shape, dtype, sched):
    cfg = NormConfig("t", shape, dtype, eps=1e-5, bias=spec_name == "layernorm_fwd")
    outs = _check(spec_name, cfg, sched)
    assert len(outs) == (3 if spec_name == "layernorm_fwd" else 2)


@pytest.mark.parametrize("spec_name, variant", [
    ("layernorm_fwd", dict(bias=False)), ("layernorm_fwd", dict(param_dtype=torch.float32)),
    ("rmsnorm_fwd", dict(param_dtype=torch.float32)), ("rmsnorm_fwd", dict(round_normed=True)),  # HF Llama's
])
def test_variants_and_inference_match(spec_name, variant):
    cfg = NormConfig("t", (16, 64), torch.bfloat16, eps=1e-6, bias=spec_name == "layernorm_fwd")
    cfg = replace(cfg, **variant)
    _check(spec_name, cfg, FwdRowsSchedule(4, vec=4, tidx=8))
    (y,) = _check(spec_name, cfg, FwdRowsSchedule(4, vec=4, tidx=8), outputs=(0,))  # inference: y alone
    assert y.shape == (16, 64)


def test_the_fusion_is_the_builders_at_the_2d_twin():
    cfg = fusions.get("layernorm_fwd").config("nanogpt_tiny")  # (2, 8, 64)
    run = FwdRows("layernorm_fwd", cfg, FwdRowsSchedule(4, vec=8))
    fusion = run.recorded().fusion
    assert [tuple(v.shape) for v in fusion.inputs] == [(16, 64), (64,), (64,)]
    assert [tuple(v.shape) for v in fusion.outputs] == [(16, 64), (16,), (16,)]
    assert sum(op.name == "sum" for op in fusion.ops) == 2  # the builder's two-pass statistics, not a copy


@pytest.mark.parametrize("sched, dtype, message", [
    (FwdRowsSchedule(7), torch.bfloat16, "chunk 7 does not divide the 576000 rows"),
    (FwdRowsSchedule(8, unroll=3), torch.bfloat16, "unroll 3 x steps 1 does not divide chunk 8"),
    (FwdRowsSchedule(8, unroll=2, steps=3), torch.bfloat16, "unroll 2 x steps 3 does not divide chunk 8"),
    (FwdRowsSchedule(4, vec=8, tidx=32), torch.bfloat16, "vec 8 x 32 threads do not divide hidden 384"),
    (FwdRowsSchedule(4, vec=5), torch.bfloat16, "vec 5 x 76 threads do not divide hidden 384"),
    (FwdRowsSchedule(4, vec=8), torch.float32, "vec 8 x 4 bytes exceeds a 16-byte vector access"),
    (FwdRowsSchedule(64, vec=8), torch.bfloat16, "48 x 64 threads exceed a CTA's 1024"),
    (FwdRowsSchedule(4, vec=2, tidx=2), torch.bfloat16, "192 x 1 elements per thread exceed 64 registers"),
    (FwdRowsSchedule(4, vec=0), torch.bfloat16, "must be positive"),
])
def test_bad_schedules_name_the_parameter(sched, dtype, message):
    cfg = fusions.get("rmsnorm_fwd").config("mixorder_576000x384", dtype)
    with pytest.raises(SegkitError, match=message) as e:
        FwdRows("rmsnorm_fwd", cfg, sched)
    assert "forward rows schedule" in str(e.value) and "mixorder_576000x384" in str(e.value)


def test_the_formulation_is_refused_where_it_means_nothing():
    bwd = fusions.get("rmsnorm_bwd").config("nanogpt_tiny")
    with pytest.raises(SegkitError, match="fwd_rows formulation is for rmsnorm_fwd and layernorm_fwd, not rmsnorm_bwd"):
        formulations.realize("rmsnorm_bwd", bwd, Candidate(FWD_ROWS, 4, schedule={"vec": 8}))
    with pytest.raises(SegkitError, match=r"unknown parameters \['rows'\]"):
        FwdRowsSchedule.from_dict(4, {"rows": 2})
    with pytest.raises(SegkitError, match="FwdRowsSchedule needs a schedule"):
        formulations.realize("rmsnorm_fwd", fusions.get("rmsnorm_fwd").config("nanogpt_tiny"), Candidate(FWD_ROWS, 4))


@pytest.mark.parametrize("spec_name", ["rmsnorm_fwd", "layernorm_fwd"])
def test_the_tuning_table_keeps_a_forward_schedule_and_segkit_runs_it(tmp_path, spec_name):
    spec = fusions.get(spec_name)
    cfg = spec.config("nanogpt_tiny", torch.bfloat16)
    sched = FwdRowsSchedule(8, vec=4, tidx=8, unroll=2)
    entry = spec.entry(cfg, GPU, formulation=FWD_ROWS, chunk=8, schedule=sched.to_dict(), us=1.0)
    TuningTable([entry]).save(tmp_path / "t.json")
    table = TuningTable.load(tmp_path / "t.json")
    back = table.lookup(GPU, spec_name, entry.signature)
    assert back == entry and "fwd_rows chunk 8" in back.describe() and "unroll=2" in back.describe()
    staged = staged_for(spec_name, cfg, GPU, table)
    assert isinstance(staged, FwdRows) and staged.schedule == sched
    inputs = spec.make_inputs(cfg)
    assert all(d.ok for d in compare(spec.reference(inputs, cfg), staged.run(list(inputs.values()))))
    # inference (y alone, what segkit_ex and the benchmarks ask the runner for): the schedule with one output
    infer = staged_for(spec_name, cfg, GPU, table, outputs=(0,))
    assert isinstance(infer, FwdRows) and infer.outputs == (0,) and infer.schedule == sched
    (y,) = infer.run(list(inputs.values()))
    assert compare([spec.reference(inputs, cfg)[0]], [y])[0].ok
    # the builder itself is untouched by the entry: its fusion and nvFuser tuning stay the define's
    assert spec.build(cfg, gpu=GPU, table=table).nv_tuning == (spec.tuning(cfg) if spec.tuning else None)


def test_tune_offers_the_hand_schedules_first_at_a_narrow_hidden_last_at_a_wide_one():
    spec = fusions.get("rmsnorm_fwd")
    cfg = spec.config("mixorder_576000x384", torch.bfloat16)
    cands = space("rmsnorm_fwd", cfg, spec.tuning(cfg), 132)
    by_hand = [c for c in cands if c.formulation == FWD_ROWS]
    overrides = [c for c in cands if c.tuning is not None and c.tuning.scheduler == "inner_persistent" and not c.origin]
    assert by_hand and overrides and cands.index(by_hand[-1]) < cands.index(overrides[0])
    assert any(c.tuning.enable_options == ("ws_normalization",) for c in cands if c.tuning)
    quick = candidates(cfg, 132)
    assert all(FwdRows("rmsnorm_fwd", cfg, s) for s in quick)  # each passes check()
    assert {s.tidx for s in quick} == {None, 16, 32} and {s.unroll for s in quick} == {1, 2, 4}
    assert {(s.vec, s.unroll) for s in quick if s.tidx is None} >= {(8, 2), (8, 4)}  # 16-byte vectors, 2 or 4 rows
    assert all(cfg.rows // s.chunk >= 132 for s in quick)
    stepped = [s for s in candidates(cfg, 132, quick=False) if s.steps > 1]  # persistent-like: fewer CTAs
    assert {s.steps for s in quick} == {1} and {s.steps for s in stepped} == {8}
    assert all(s.chunk == s.steps * s.rows_y() * s.unroll and cfg.rows // s.chunk >= 132 for s in stepped)
    assert len(candidates(cfg, 132, quick=False)) > 4 * len(quick)
    assert len(fwd_candidates(cfg, 132, quick=False).overrides) > len(fwd_candidates(cfg, 132).overrides)
    wide = spec.config("sweep_65536x4096", torch.bfloat16)
    assert wide.hidden > FWD_ROWS_FIRST_HIDDEN
    cands = space("rmsnorm_fwd", wide, spec.tuning(wide), 132, quick=False)
    first = next(i for i, c in enumerate(cands) if c.formulation == FWD_ROWS)
    assert first > 0 and all(c.formulation == FWD_ROWS for c in cands[first:])
    small = spec.config("sweep_4096x256", torch.float32)
    runner = realize(None, Candidate(FWD_ROWS, 16, schedule=FwdRowsSchedule(16, vec=4, tidx=32).to_dict()),
                     "rmsnorm_fwd", small)
    inputs = spec.make_inputs(small)
    assert all(d.ok for d in compare(spec.reference(inputs, small), runner.run(list(inputs.values()), "reference")))


def test_a_formulation_without_an_output_subset_leaves_inference_to_the_builder():
    from fusions.norm_bwd_rows import ROWS
    from fusions.rows_schedule import RowsSchedule

    spec = fusions.get("layernorm_bwd")
    cfg = spec.config("nanogpt_tiny", torch.bfloat16)
    table = TuningTable([spec.entry(cfg, GPU, formulation=ROWS, chunk=16, schedule=RowsSchedule(16).to_dict())])
    assert staged_for("layernorm_bwd", cfg, GPU, table) is not None
    assert staged_for("layernorm_bwd", cfg, GPU, table, outputs=(0,)) is None
