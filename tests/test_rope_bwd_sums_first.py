"""The grouped-query RoPE backward as two fusions (fusions/rope_bwd_sums_first.py), on the reference interpreter:
right against the float64 reference, and shaped the way nvFuser's schedulers need (what the docstring says each
stage is for)."""

from dataclasses import replace

import pytest

import fusions
from fusions.rope_bwd_sums_first import SumsFirst
from segkit.compare import compare
from segkit.errors import SegkitError
from segkit.tune import space
from segkit.tuning import TableEntry, TuningTable

SPEC = fusions.get("qkv_split_rope_bwd")


@pytest.mark.parametrize("config", ["Llama-3-70B_bs2_tiny", "Llama-3-8B_bs1_tiny", "Mistral-7B_bs2_tiny", "partial"])
def test_sums_first_matches_the_float64_reference(config):
    """Every grouped-query tiny config, and one with partial RoPE (no real grouped-query config has it yet: the
    pass-through columns take their own path)."""
    cfg = SPEC.config(config) if config != "partial" else \
        replace(SPEC.config("Llama-3-70B_bs2_tiny"), name="gqa_partial_rope_tiny", rope_n_elem=8)
    inputs = SPEC.make_inputs(cfg)
    outs = SumsFirst(cfg).run(list(inputs.values()))
    refs = SPEC.reference(inputs, cfg)
    assert [tuple(o.shape) for o in outs] == [tuple(r.shape) for r in refs]
    assert all(d.ok for d in compare(refs, outs)), compare(refs, outs)


def test_stage_one_is_one_connected_sum_and_stage_two_slices_only_its_inputs():
    """Stage 1: one reduction (two unconnected sums would be two kernels), its cat of fusion inputs only (what the
    reduction scheduler takes). Stage 2: no reduction, every slice of a fusion input (what the resize and
    pointwise schedulers need)."""
    first, second = (fd.fusion for fd in SumsFirst(SPEC.config("Llama-3-70B_bs2_tiny")).stages)
    assert [op.name for op in first.ops if op.name == "sum"] == ["sum"]
    (cat,) = [op for op in first.ops if op.name == "cat"]
    assert all(any(v is i for i in first.inputs) for v in cat.inputs)
    assert not any(op.name == "sum" for op in second.ops)
    sliced = [op.inputs[0] for op in second.ops if op.name == "slice"]
    assert sliced and all(any(v is i for i in second.inputs) for v in sliced)


def test_sums_first_is_for_grouped_query_configs_and_the_rope_backward():
    with pytest.raises(SegkitError, match="one query per kv head"):
        SumsFirst(SPEC.config("Llama-2-13b-hf_bs2_tiny"))
    with pytest.raises(SegkitError, match="sums_first formulation is for qkv_split_rope_bwd, not rmsnorm_bwd"):
        fusions.staged("rmsnorm_bwd", SPEC.config("Llama-3-70B_bs2_tiny"), "sums_first", None)


def test_tune_offers_it_and_the_table_makes_segkit_ex_run_it():
    from thunder_exec.runtime import staged_for

    gqa, mha = SPEC.config("Llama-3-70B_bs2"), SPEC.config("Llama-2-13b-hf_bs2")
    assert any(c.formulation == "sums_first" for c in space("qkv_split_rope_bwd", gqa, None, 132))
    assert not any(c.formulation == "sums_first" for c in space("qkv_split_rope_bwd", mha, None, 132))
    entry = TableEntry.from_dict(SPEC.entry(gqa, "GPU X", formulation="sums_first").to_dict())
    assert isinstance(staged_for("qkv_split_rope_bwd", gqa, "GPU X", TuningTable([entry])), SumsFirst)
