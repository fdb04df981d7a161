"""The rows formulation of the norm backward (fusions/norm_bwd_rows.py): its parameters as the tuning table keeps
them and where segkit picks it up (its math against the float64 reference: test_norm_two_stage.py), and the same
schedule's fp8 amax formulation against the reference."""

from __future__ import annotations

import warnings

import pytest
import torch

import fusions
from fusions import formulations
from fusions.configs import NormConfig
from fusions.norm_bwd_rows import ROWS, RowsScheduled, candidates
from fusions.rows_schedule import RowsSchedule
from segkit.compare import compare
from segkit.errors import SegkitError
from fusions.tune import realize, space
from segkit.tuning import NvTuning, TableEntry, TuningTable, tuning_from_dict
from segkit.tuning.search import Candidate
from fusions.runner import staged_for

GPU = "NVIDIA Test GPU"


def test_stage1_takes_host_views_and_writes_one_partial_per_cta():
    c = fusions.get("layernorm_bwd").config("mixorder_576000x384_tiny")
    run = RowsScheduled(c, RowsSchedule(8, rows=2, vec=8), layer_norm=True)
    first, _ = run.recorded()
    P = c.rows // 8
    assert [tuple(v.shape) for v in first.fusion.inputs[:4]] == [(P, 8, c.hidden)] * 2 + [(P, 8)] * 2
    assert not any(op.name == "reshape" for op in first.fusion.ops)  # nothing for a hand schedule to carry
    assert [tuple(v.shape) for v in first.fusion.outputs] == [(P, 8, c.hidden), (P, c.hidden), (P, c.hidden)]


@pytest.mark.parametrize("sched, message", [
    (RowsSchedule(7), "chunk 7 does not divide the 576000 rows"),
    (RowsSchedule(576, rows=5), "rows 5 does not divide chunk 576"),
    (RowsSchedule(576, vec=8, tidx=32), "vec 8 x 32 threads do not divide hidden 384"),
    (RowsSchedule(576, rows=32, vec=8), "48 x 32 threads exceed a CTA's 1024"),
])
def test_bad_schedules_name_the_parameter(sched, message):
    cfg = fusions.get("rmsnorm_bwd").config("mixorder_576000x384", torch.bfloat16)
    with pytest.raises(SegkitError, match=message):
        RowsScheduled(cfg, sched, layer_norm=False)


def test_candidates_all_fit_and_cover_warp_rows():
    cfg = fusions.get("rmsnorm_bwd").config("mixorder_576000x384", torch.bfloat16)
    quick = candidates(cfg, 132)
    assert quick and all(RowsScheduled(cfg, s, False) for s in quick)  # each passes check()
    assert {s.tidx for s in quick} == {None, 32}
    warp = [s.tidx == 32 for s in quick]
    assert warp == sorted(warp, reverse=True) and len({s.chunk for s in quick if s.tidx}) >= 2  # warp rows first
    assert all(4 * 132 * 0.7 <= cfg.rows // s.chunk <= 16 * 132 * 1.3 for s in quick)
    assert len(candidates(cfg, 132, quick=False)) > len(quick)
    # the H100 layer norm winner at this shape (fusions/tunings.json, 2026-11-26) is in the quick set
    assert RowsSchedule(720, rows=4, vec=4, tidx=32) in quick
    tiny = fusions.get("rmsnorm_bwd").config("mixorder_576000x384_tiny")
    assert candidates(tiny, 132) == []  # too few rows for one CTA per SM: not offered


def test_the_tuning_table_keeps_a_rows_schedule_and_segkit_runs_it(tmp_path):
    spec = fusions.get("layernorm_bwd")
    cfg = spec.config("nanogpt_tiny", torch.bfloat16)
    sched = RowsSchedule(16, rows=2, vec=4, tidx=8)
    entry = spec.entry(cfg, GPU, formulation=ROWS, chunk=16, schedule=sched.to_dict(), us=1.0)
    table = TuningTable([entry])
    table.save(tmp_path / "t.json")
    back = TuningTable.load(tmp_path / "t.json").lookup(GPU, "layernorm_bwd", entry.signature)
    assert back == entry and "rows chunk 16" in back.describe() and "tidx=8" in back.describe()
    staged = staged_for("layernorm_bwd", cfg, GPU, TuningTable.load(tmp_path / "t.json"))
    assert staged.schedule == sched
    inputs = spec.make_inputs(cfg)
    assert all(d.ok for d in compare(spec.reference(inputs, cfg), staged.run(list(inputs.values()))))


def test_a_rows_schedule_is_refused_where_it_means_nothing():
    with pytest.raises(TypeError, match="threads_per_row"):  # nvFuser's knobs only: a hand schedule is no NvTuning
        NvTuning("x", scheduler="inner_outer_persistent", threads_per_row=32)
    with pytest.raises(ValueError, match="unknown NvTuning fields"):
        tuning_from_dict({"why": "x", "scheduler": "rows", "threads_per_row": 32})
    with pytest.raises(SegkitError, match="RowsSchedule needs a schedule"):
        formulations.realize("rmsnorm_bwd", fusions.get("rmsnorm_bwd").config("nanogpt_tiny"), Candidate(ROWS, 16))
    with pytest.raises(SegkitError, match=r"unknown parameters \['threads_per_row'\]"):
        RowsSchedule.from_dict(16, {"threads_per_row": 32})
    with pytest.raises(SegkitError, match="not rmsnorm_fwd"):
        formulations.realize("rmsnorm_fwd", fusions.get("rmsnorm_bwd").config("nanogpt_tiny"),
                             Candidate(ROWS, 16, schedule=RowsSchedule(16).to_dict()))


def test_tune_offers_rows_first_at_a_narrow_hidden_last_at_a_wide_one_and_realizes_them():
    spec = fusions.get("rmsnorm_bwd")
    cfg = spec.config("mixorder_576000x384", torch.bfloat16)
    cands = space("rmsnorm_bwd", cfg, spec.tuning(cfg), 132)
    rows = [c for c in cands if c.formulation == ROWS]
    assert rows and cands.index(rows[0]) < cands.index(next(c for c in cands if c.formulation == "two_stage"))
    assert all(c.bookend == "none" and "rows chunk" in c.label() for c in rows)
    wide = spec.config("sweep_65536x4096", torch.bfloat16)  # where the rows schedule is slowest: last
    cands = space("rmsnorm_bwd", wide, spec.tuning(wide), 132, cut_policies=("none", "inputs+outputs"))
    first_rows = next(i for i, c in enumerate(cands) if c.formulation == ROWS)
    assert first_rows > 0 and all(c.formulation == ROWS for c in cands[first_rows:])
    small = spec.config("sweep_4096x256", torch.float32)
    sched = RowsSchedule(64, rows=2, vec=8)
    runner = realize(None, Candidate(ROWS, 64, schedule=sched.to_dict()), "rmsnorm_bwd", small)
    inputs = spec.make_inputs(small)
    assert all(d.ok for d in compare(spec.reference(inputs, small), runner.run(list(inputs.values()), "reference")))
    back = TableEntry.from_dict(spec.entry(small, GPU, formulation=ROWS, chunk=64,
                                           schedule=RowsSchedule(64).to_dict()).to_dict())
    assert back.tuning is None and RowsSchedule.from_dict(back.chunk, back.schedule) == RowsSchedule(64)


@pytest.mark.parametrize("config, amaxes, chunk", [("4096x4096_tiny", ("row", "col", "all"), 12),
                                                   ("seed_12x34x56_tiny", ("all", "col"), 34),
                                                   ("seed_12x34x56_tiny", ("col", "row"), 6)])
def test_fp8_amax_rows_matches_the_float64_reference(config, amaxes, chunk):
    from dataclasses import replace

    from fusions.fp8_amax_rows import AmaxRows

    spec = fusions.get("fp8_amax")
    cfg = replace(spec.config(config), amaxes=amaxes)
    inputs = spec.make_inputs(cfg)
    outs = AmaxRows(cfg, RowsSchedule(chunk, rows=2, vec=4 if cfg.cols % 8 else 8)).run(list(inputs.values()))
    refs = spec.reference(inputs, cfg)
    assert [tuple(o.shape) for o in outs] == [tuple(r.shape) for r in refs]
    assert all(d.ok for d in compare(refs, outs)), compare(refs, outs)


def test_fp8_amax_rows_needs_a_column_amax_and_a_fitting_schedule():
    from dataclasses import replace

    from fusions.fp8_amax_rows import AmaxRows, candidates

    spec = fusions.get("fp8_amax")
    with pytest.raises(SegkitError, match="is for a column amax.*reads x once there"):
        AmaxRows(replace(spec.config("4096x4096"), amaxes=("row", "all")), RowsSchedule(32))
    with pytest.raises(SegkitError, match="chunk 7 does not divide the 4096 rows"):
        AmaxRows(spec.config("4096x4096"), RowsSchedule(7))
    big = spec.config("8192x28672")
    assert all(big.cols // s.threads(big.cols) <= 64 for s in candidates(big, 132))  # column accumulators per thread


@pytest.mark.parametrize("gpu", ["NVIDIA H100 80GB HBM3", "NVIDIA H200"])
@pytest.mark.parametrize("name", ["layernorm_bwd", "rmsnorm_bwd"])
def test_segkit_ex_run_time_config_of_a_model_finds_the_committed_rows_schedule(name, gpu):
    """The config segkit_ex builds for a model's norm (a litgpt block of width 384 on 1125 x 512 tokens, bf16:
    not the builder's mixorder config, another name and row shape) finds the committed table's rows schedule
    of its GPU, the one the GPU test of that model then runs."""
    from fusions.configs import NormConfig

    cfg = NormConfig("thunder", (1125, 512, 384), torch.bfloat16, 1e-5, name == "layernorm_bwd")
    entry = fusions.get(name).table_entry(cfg, gpu)
    staged = staged_for(name, cfg, gpu)
    assert entry is not None and entry.formulation == ROWS
    assert isinstance(staged, RowsScheduled) and staged.schedule == RowsSchedule.from_dict(entry.chunk, entry.schedule)


def _per_head(spec_name: str, layout: str):
    """A per-head norm's backward inputs as a model hands them over: x = q.view(B, T, nh, hs).transpose(1, 2)
    (memory in (b, t, h) order) and dy contiguous in (B, nh, T, hs), with the same values at (rows, hs) for the
    float64 reference. ``layout`` "transposed" or "contiguous" (x's memory order)."""
    B, nh, T, hs = 2, 3, 16, 32
    spec = fusions.get(spec_name)
    cfg = NormConfig("per_head", (B * nh * T, hs), torch.float32, 1e-6, False)
    flat = spec.make_inputs(cfg)
    names = list(flat)
    x = flat[names[0]].view(B, nh, T, hs)
    if layout == "transposed":
        x = x.transpose(1, 2).contiguous().transpose(1, 2)  # same values, memory (b, t, h)
    given = [x, flat[names[1]].view(B, nh, T, hs)]
    given += [flat[n].view(B, nh, T) for n in names[2:-1]] + [flat[names[-1]]]
    return spec, cfg, flat, given


@pytest.mark.parametrize("spec_name", ["rmsnorm_bwd", "layernorm_bwd"])
@pytest.mark.parametrize("layout, chunk", [("transposed", 8), ("transposed", 6), ("contiguous", 8)])
def test_rows_not_in_memory_order_are_read_in_place_and_match_the_float64_reference(spec_name, layout, chunk):
    """The rows of a per-head norm (q / k norms) come in two memory orders; stage 1 reads each tensor in its own
    layout (chunk dividing T), or copies (chunk 6 does not divide T = 16), and every way matches the reference."""
    spec, cfg, flat, given = _per_head(spec_name, layout)
    run = RowsScheduled(cfg, RowsSchedule(chunk, rows=2, vec=4), spec_name == "layernorm_bwd")
    views = run.strided_views(given)
    assert (views is not None) == (layout == "transposed" and chunk == 8)
    if views is not None:
        s1, _ = run.recorded(tuple((tuple(v.shape), tuple(v.stride())) for v in views))
        assert tuple(s1.fusion.inputs[0].shape) == (2, 3, 2, 8, 32)  # (B, nh, T / chunk, chunk, hs)
        assert s1.fusion.inputs[0].stride_order != s1.fusion.inputs[1].stride_order  # each in its own layout
        assert not any(op.name == "reshape" for op in s1.fusion.ops)
    outs = run.run(given)
    assert tuple(outs[0].shape) == (2, 3, 16, 32)
    refs = list(spec.reference(flat, cfg))
    got = [outs[0].reshape(cfg.shape), *outs[1:]]
    assert all(d.ok for d in compare(refs, got)), compare(refs, got)


def test_a_strided_stage1_names_what_does_not_fit():
    cfg = NormConfig("per_head", (96, 32), torch.float32, 1e-6, False)
    run = RowsScheduled(cfg, RowsSchedule(8, rows=2, vec=4), layer_norm=False)
    wrong = (((2, 3, 2, 8, 32), (1536, 32, 768, 96, 1)), ((2, 3, 2, 8, 16), (768, 256, 128, 16, 1)),
             ((2, 3, 2, 8), (48, 16, 8, 1)))
    with pytest.raises(SegkitError, match=r"strided input of shape \(2, 3, 2, 8, 16\) where \(2, 3, 2, 8, 32\)"):
        run.recorded(wrong)
    few = (((2, 2, 2, 8, 32), (1024, 32, 512, 64, 1)),) * 2 + (((2, 2, 2, 8), (32, 16, 8, 1)),)
    with pytest.raises(SegkitError, match="leading dims \\(2, 2, 2\\) of the strided x make 8 chunks, not the 12"):
        run.recorded(few)


def test_a_formulation_that_cannot_run_here_is_dropped_with_one_warning():
    """The runner's chosen formulation failing (here the rows schedule on a machine without nvFuser: its stage 1
    cannot be built) costs one warning naming the spec, the config, the schedule and the error; the runner drops
    it and its callers run the spec's own fusion (None from ``_staged``), without warning again."""
    from fusions.runner import FormulationFallbackWarning, SpecRunner, fusion_for

    spec = fusions.get("rmsnorm_bwd")
    cfg = spec.config("nanogpt_tiny", torch.bfloat16)
    run = SpecRunner("rmsnorm_bwd", cfg, "none", False, fusion_for("rmsnorm_bwd", cfg, "none"),
                     staged=RowsScheduled(cfg, RowsSchedule(16, rows=2, vec=4), layer_norm=False))
    args = list(spec.make_inputs(cfg).values())
    with pytest.warns(FormulationFallbackWarning) as said:
        assert run._staged(args) is None
    assert len(said) == 1
    message = str(said[0].message)
    assert "rmsnorm_bwd at nanogpt_tiny" in message and "rows schedule (16 rows per CTA" in message
    assert "failed (NvFuserUnavailableError: nvfuser_direct is not importable" in message and run.health.dropped
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run._staged(args) is None  # dropped: no second attempt, no second warning
