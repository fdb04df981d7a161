"""The grouped-query RoPE backward as two fusions (fusions/rope_bwd_sums_then_cat.py), on the reference
interpreter: right against the float64 reference, and shaped the way nvFuser 0.2.36's resize scheduler needs
(no resize of an axis that a broadcast table reaches: every slice and the one cat on the last axis)."""

from dataclasses import replace

import pytest

import fusions
from fusions import formulations
from fusions.rope_bwd_sums_then_cat import SumsThenCat
from fusions.tune import space
from segkit.compare import compare
from segkit.errors import SegkitError
from segkit.interp import run_reference
from segkit.tuning import TableEntry, TuningTable
from segkit.tuning.search import Candidate

SPEC = fusions.get("qkv_split_rope_bwd")


def _partial():
    """No real grouped-query config has partial RoPE yet: its pass-through columns take their own pieces."""
    return replace(SPEC.config("Llama-3-70B_bs2_tiny"), name="gqa_partial_rope_tiny", rope_n_elem=8)


@pytest.mark.parametrize("config", ["Llama-3-70B_bs2_tiny", "Llama-3-8B_bs1_tiny", "Mistral-7B_bs2_tiny", "partial"])
def test_matches_the_float64_reference(config):
    cfg = SPEC.config(config) if config != "partial" else _partial()
    inputs = SPEC.make_inputs(cfg)
    outs = SumsThenCat(cfg).run(list(inputs.values()))
    refs = SPEC.reference(inputs, cfg)
    assert [tuple(o.shape) for o in outs] == [tuple(r.shape) for r in refs]
    assert all(d.ok for d in compare(refs, outs)), compare(refs, outs)


def test_stage_two_takes_views_of_dq_and_the_sums_not_copies():
    cfg = SPEC.config("Llama-3-70B_bs2_tiny")
    inputs = list(SPEC.make_inputs(cfg).values())
    run = SumsThenCat(cfg)
    (sums,) = run_reference(run.stages[0], run.stage1_args(inputs))
    args = run.stage2_args(inputs, sums)
    assert len(args) == cfg.q_per_kv + 4
    assert all(a.untyped_storage().data_ptr() == inputs[0].untyped_storage().data_ptr() for a in args[:cfg.q_per_kv])
    assert all(a.untyped_storage().data_ptr() == sums.untyped_storage().data_ptr()
               for a in args[cfg.q_per_kv:cfg.q_per_kv + 2])


@pytest.mark.parametrize("config", ["Llama-3-70B_bs2_tiny", "partial"])
def test_stage_one_is_one_sum_and_stage_two_resizes_only_the_last_axis(config):
    """Stage 1: one reduction over a cat of fusion inputs (what the reduction scheduler takes; two unconnected sums
    would be two kernels). Stage 2: no reduction; every slice of a fusion input and on its last axis; one cat,
    on the last axis; the tables broadcast over other axes only (a resized ID must not share a broadcast group
    with a broadcast ID)."""
    cfg = SPEC.config(config) if config != "partial" else _partial()
    first, second = (fd.fusion for fd in SumsThenCat(cfg).stages)
    assert [op.name for op in first.ops if op.name == "sum"] == ["sum"]
    (cat,) = [op for op in first.ops if op.name == "cat"]
    assert all(any(v is i for i in first.inputs) for v in cat.inputs)

    assert not any(op.name in ("sum", "max", "min", "pad") for op in second.ops)
    slices = [op for op in second.ops if op.name == "slice"]
    assert slices and all(any(op.args["arg"] is i for i in second.inputs) for op in slices)
    for op in slices:
        shape = op.args["arg"].shape
        moved = [d for d in range(len(shape)) if (op.args["start_indices"][d], op.args["end_indices"][d]) != (0, shape[d])]
        assert moved == [len(shape) - 1], op
    (cat,) = [op for op in second.ops if op.name == "cat"]
    assert cat.args["dim"] in (3, -1) and len(cat.output.shape) == 4
    assert all(not op.args["is_broadcast_dim"][-1] for op in second.ops if op.name == "broadcast")


def test_it_is_for_grouped_query_configs_and_the_rope_backward():
    with pytest.raises(SegkitError, match="one query per kv head"):
        SumsThenCat(SPEC.config("Llama-2-13b-hf_bs2_tiny"))
    with pytest.raises(SegkitError, match="sums_then_cat formulation is for qkv_split_rope_bwd, not rmsnorm_bwd"):
        formulations.realize("rmsnorm_bwd", SPEC.config("Llama-3-70B_bs2_tiny"), Candidate("sums_then_cat"))


def test_tune_offers_it_and_the_table_makes_segkit_ex_run_it():
    from fusions.runner import staged_for

    gqa, mha = SPEC.config("Llama-3-70B_bs2"), SPEC.config("Llama-2-13b-hf_bs2")
    assert any(c.formulation == "sums_then_cat" for c in space("qkv_split_rope_bwd", gqa, None, 132))
    assert not any(c.formulation == "sums_then_cat" for c in space("qkv_split_rope_bwd", mha, None, 132))
    entry = TableEntry.from_dict(SPEC.entry(gqa, "GPU X", formulation="sums_then_cat").to_dict())
    assert isinstance(staged_for("qkv_split_rope_bwd", gqa, "GPU X", TuningTable([entry])), SumsThenCat)
