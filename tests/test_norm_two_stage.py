"""The two-stage (per-chunk partials, then their sum) norm backward against the float64 reference; the rows
formulation's own checks are in test_norm_rows.py."""

from __future__ import annotations

import pytest
import torch

import fusions
from fusions.norm_bwd_rows import RowsScheduled
from fusions.rows_schedule import RowsSchedule
from fusions.norm_bwd_two_stage import chunk_for, two_stage
from segkit.compare import compare
from segkit.errors import SegkitError


@pytest.mark.parametrize("formulation", ["two_stage", "rows"])
@pytest.mark.parametrize("name", ["rmsnorm_bwd", "layernorm_bwd"])
@pytest.mark.parametrize("cfg, dtype, chunk", [("mixorder_576000x384_tiny", torch.bfloat16, 4),
                                               ("mixorder_576000x384_tiny", torch.float32, 1),
                                               ("nanogpt_tiny", torch.bfloat16, 16),
                                               ("sweep_4096x1024_tiny", torch.float32, 32),
                                               ("sweep_4096x256", torch.float32, 64)])
def test_two_stage_matches_the_float64_reference(formulation, name, cfg, dtype, chunk):
    """Both two-stage formulations: nvFuser's schedules (two_stage) and the hand-written one (rows, whose
    schedule does not change the math the interpreter runs)."""
    spec = fusions.get(name)
    c = spec.config(cfg, dtype)
    inputs = spec.make_inputs(c)
    staged = two_stage(name, c, chunk) if formulation == "two_stage" else \
        RowsScheduled(c, RowsSchedule(chunk, rows=2 if chunk % 2 == 0 else 1, vec=1), name == "layernorm_bwd")
    outs = staged.run(list(inputs.values()))
    refs = spec.reference(inputs, c)
    assert [tuple(o.shape) for o in outs] == [tuple(r.shape) for r in refs]
    assert [o.dtype for o in outs] == [dtype] * len(refs)
    assert all(d.ok for d in compare(refs, outs)), compare(refs, outs)


def test_stage1_writes_fp32_partials_per_chunk():
    c = fusions.get("layernorm_bwd").config("mixorder_576000x384_tiny")
    ts = two_stage("layernorm_bwd", c, 8)
    stage1 = ts.stages[0].fusion
    assert ts.partials == c.rows // 8
    assert [tuple(v.shape) for v in stage1.outputs[1:]] == [(c.rows // 8, c.hidden)] * 2
    assert all(v.dtype.name == "Float" for v in stage1.outputs[1:])


def test_the_sum_is_deterministic_run_to_run():
    spec = fusions.get("rmsnorm_bwd")
    c = spec.config("mixorder_576000x384_tiny")
    args = list(spec.make_inputs(c).values())
    ts = two_stage("rmsnorm_bwd", c, 4)
    assert all(torch.equal(a, b) for a, b in zip(ts.run(args), ts.run(args)))


def test_chunk_must_divide_the_rows():
    c = fusions.get("rmsnorm_bwd").config("mixorder_576000x384_tiny")
    with pytest.raises(SegkitError, match="chunk 5 does not divide the 32 rows"):
        two_stage("rmsnorm_bwd", c, 5)
    with pytest.raises(SegkitError, match="not rmsnorm_fwd"):
        two_stage("rmsnorm_fwd", c, 4)


def test_chunk_for_the_partials_wanted():
    assert chunk_for(576000, 132) == 4500  # 128 partials: the smallest divisor giving at most 132
    assert chunk_for(576000, 576000) == 1
    assert 576000 // chunk_for(576000, 1056) <= 1056


@pytest.mark.parametrize("joint", ["cat", "stack"])
@pytest.mark.parametrize("cfg, dtype", [("nanogpt_tiny", torch.bfloat16), ("sweep_4096x1024_tiny", torch.float32)])
def test_layer_norm_stage2_in_one_sum_gives_dw_and_db(joint, cfg, dtype):
    """Stage 2 of the layer norm as one sum of both partials (one output, viewed as dw and db): the same values
    as the fused builder's reference, and a recorded fusion with one reduction where the default has two."""
    spec = fusions.get("layernorm_bwd")
    c = spec.config(cfg, dtype)
    inputs = spec.make_inputs(c)
    staged = RowsScheduled(c, RowsSchedule(16, rows=2, vec=1), True, joint=joint)
    outs = staged.run(list(inputs.values()))
    refs = spec.reference(inputs, c)
    assert [tuple(o.shape) for o in outs] == [tuple(r.shape) for r in refs]
    assert all(d.ok for d in compare(refs, outs)), compare(refs, outs)
    sums = lambda s: sum(op.name == "sum" for op in s.recorded()[1].fusion.ops)  # noqa: E731
    assert sums(staged) == 1 and sums(RowsScheduled(c, RowsSchedule(16, rows=2, vec=1), True)) == 2


def test_stage2_joint_is_checked():
    with pytest.raises(SegkitError, match="stage 2 joint must be one of"):
        RowsScheduled(fusions.get("layernorm_bwd").config("nanogpt_tiny"), RowsSchedule(16, rows=2, vec=1), True,
                      joint="bogus").recorded()
