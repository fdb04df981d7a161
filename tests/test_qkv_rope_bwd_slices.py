"""The qkv split + RoPE backward written into slices of dqkv (fusions/qkv_rope_bwd_slices.py), on the reference
interpreter: right against the spec's float64 reference and the builder, every element of dqkv written once, by
views (no copies), and shaped so nvFuser writes in place (no broadcast op, no cat of q, k and v)."""

from dataclasses import replace

import pytest
import torch

import fusions
from fusions import formulations
from fusions.qkv_rope_bwd_slices import ORDERS, VARIANTS, SlicedRopeBwd
from fusions.tune import space
from segkit.compare import compare
from segkit.errors import SegkitError
from segkit.interp import run_reference
from segkit.layout import alias_loses_layout
from segkit.tuning import TableEntry, TuningTable
from segkit.tuning.search import Candidate

SPEC = fusions.get("qkv_split_rope_bwd")
CONFIGS = ["Llama-2-13b-hf_bs2_tiny", "Llama-3-70B_bs2_tiny", "Llama-2-7b-hf_bs1_tiny", "phi-2_bs2_tiny", "gqa_partial"]


def _config(name: str):
    """Configs by name; ``gqa_partial``: no real grouped-query config has a partial rotary, its columns pass through."""
    if name == "gqa_partial":
        return replace(SPEC.config("Llama-3-70B_bs2_tiny"), name="gqa_partial_tiny", rope_n_elem=8)
    return SPEC.config(name)


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("config", CONFIGS)
def test_matches_the_float64_reference_and_the_builder(config, variant):
    """bf16 in and out, fp32 inside as the builder: within bf16 rounding of the float64 reference, and the very
    bits the builder's fusion gives on the same interpreter."""
    cfg = _config(config)
    inputs = SPEC.make_inputs(cfg)
    args = list(inputs.values())
    outs = SlicedRopeBwd(cfg, VARIANTS[variant]).run(args)
    refs = SPEC.reference(inputs, cfg)
    assert [(tuple(o.shape), o.dtype) for o in outs] == [((cfg.batch, cfg.T, cfg.qkv_width), torch.bfloat16)]
    assert all(d.ok for d in compare(refs, outs)), compare(refs, outs)
    (builder,) = run_reference(SPEC.build(cfg), args)
    assert torch.equal(outs[0], builder)


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("config", ["Llama-2-13b-hf_bs2_tiny", "gqa_partial"])
def test_the_outputs_tile_dqkv_and_every_input_is_a_view(config, variant):
    """Each element of dqkv lies in exactly one aliased output's view; the gradients' and tables' inputs are views of
    the caller's tensors, the outputs' views of the one dqkv."""
    cfg = _config(config)
    run = SlicedRopeBwd(cfg, VARIANTS[variant])
    args = list(SPEC.make_inputs(cfg).values())
    dqkv = torch.zeros(cfg.batch, cfg.T, cfg.n_query_groups, cfg.q_per_kv + 2, cfg.head_size)
    for fd, part in zip(run.parts, run.part_args(args, dqkv)):
        aliased = {id(i) for _, i in fd.fusion.aliases}
        assert not fd.fusion.outputs and aliased
        for spec, t in zip(fd.fusion.inputs, part):
            if id(spec) in aliased:
                assert t.untyped_storage().data_ptr() == dqkv.untyped_storage().data_ptr()
                t += 1
            else:
                assert any(t.untyped_storage().data_ptr() == a.untyped_storage().data_ptr() for a in args)
    assert torch.equal(dqkv, torch.ones_like(dqkv))


@pytest.mark.parametrize("config", ["Llama-2-13b-hf_bs2_tiny", "Llama-3-70B_bs2_tiny", "gqa_partial"])
def test_no_broadcast_op_and_no_cat_of_the_heads(config):
    """nvFuser moves the in-place write of an aliased output that a broadcast op reaches into a copy kernel
    (SegmentInplaceUpdate), so no part may hold one: the tables come in expanded. The halves variants hold no cat
    or slice at all; the heads variant one last-axis cat per group RoPE rotates, of its halves (and pass-through)."""
    cfg = _config(config)
    for name, variant in VARIANTS.items():
        ops = [op for fd in SlicedRopeBwd(cfg, variant).parts for op in fd.fusion.ops]
        names = {op.name for op in ops}
        assert not names & {"broadcast", "broadcast_in_dim", "expand", "permute", "reshape", "slice", "pad"}, name
        cats = [op for op in ops if op.name == "cat"]
        if not variant.whole_heads:
            assert not cats, name
            continue
        assert len(cats) == 2  # q's and k's heads; v's is one piece, only cast
        assert all(op.args["dim"] in (-1, op.output.ndim - 1) for op in cats)
        assert all(len(op.args["tensors"]) == (2 if cfg.rope_n_elem == cfg.head_size else 3) for op in cats)


def test_bad_inputs_are_named():
    cfg = SPEC.config("Llama-2-13b-hf_bs2_tiny")
    run = SlicedRopeBwd(cfg, VARIANTS["slices_halves"])
    dq, dk, dv, cos, sin = SPEC.make_inputs(cfg).values()
    with pytest.raises(SegkitError, match="takes dq, dk, dv, cos, sin; got 4 inputs"):
        run.run([dq, dk, dv, cos])
    with pytest.raises(SegkitError, match=r"dk must be a bfloat16 tensor of shape \[2, 4, 16, 16\], got float32"):
        run.run([dq, dk.float(), dv, cos, sin])
    with pytest.raises(SegkitError, match=r"sin must be a bfloat16 tensor of shape \[16, 16\], got bfloat16 \[16, 8\]"):
        run.run([dq, dk, dv, cos, sin[:, :8]])
    with pytest.raises(SegkitError, match="dv must be contiguous"):
        run.run([dq, dk, dv.transpose(2, 3).contiguous().transpose(2, 3), cos, sin])


def test_tune_offers_every_variant_and_the_table_makes_the_runner_use_it():
    from fusions.runner import staged_for

    for config in ("Llama-2-13b-hf_bs2", "Llama-3-70B_bs2"):
        cfg = SPEC.config(config)
        offered = [c.formulation for c in space("qkv_split_rope_bwd", cfg, None, 132)]
        assert all(v in offered for v in VARIANTS), offered
    cfg = SPEC.config("Llama-2-13b-hf_bs2")
    entry = TableEntry.from_dict(SPEC.entry(cfg, "GPU X", formulation="slices_heads").to_dict())
    chosen = staged_for("qkv_split_rope_bwd", cfg, "GPU X", TuningTable([entry]))
    assert isinstance(chosen, SlicedRopeBwd) and chosen.variant is VARIANTS["slices_heads"]
    with pytest.raises(SegkitError, match="slices_halves formulation is for qkv_split_rope_bwd, not rmsnorm_bwd"):
        formulations.realize("rmsnorm_bwd", cfg, Candidate("slices_halves"))


def test_tune_search_on_the_reference_validates_the_variants():
    """What ``segkit tune --reference`` runs: each variant realized from its candidate and judged by the reference."""
    from fusions.tune import realizer
    from segkit.tuning.search import search

    cfg = SPEC.config("Llama-3-70B_bs2_tiny")
    inputs = SPEC.make_inputs(cfg)
    trials = search(SPEC.build(cfg), list(inputs.values()), SPEC.reference(inputs, cfg),
                    [Candidate(v) for v in VARIANTS], "reference", realizer("qkv_split_rope_bwd", cfg), None,
                    lambda _: None, None)
    assert [t.candidate.formulation for t in trials] == list(VARIANTS)
    assert all(t.ok for t in trials), trials


@pytest.mark.parametrize("config", ["Llama-2-13b-hf_bs2", "Llama-3-70B_bs2", "phi-2_bs2_tiny", "gqa_partial"])
def test_nvfuser_keeps_the_layout_of_every_view_written(config):
    """nvFuser writes an output aliased to a row-major view with a non-contiguous dim as if it were dense (no
    allocation domain to replay: segkit.layout.alias_loses_layout). In the variants' (B, G, [Q,] T) order every
    view of dqkv is a real permutation, which nvFuser keeps; in dqkv's own (B, T, G) order every one loses it."""
    cfg = _config(config)
    for name, variant in VARIANTS.items():
        for order in ORDERS:
            run = SlicedRopeBwd(cfg, replace(variant, order=order))
            lost = [alias_loses_layout(i.contiguity, i.stride_order) for fd in run.parts for _, i in fd.fusion.aliases]
            assert lost and all(lost) if order == "btg" else not any(lost), (name, order, lost)


def _cast_chain_source(v):
    """The value a chain of casts ending at ``v`` starts from."""
    while v.definition is not None and v.definition.name == "cast":
        v = v.definition.inputs[0]
    return v


@pytest.mark.parametrize("config", ["Llama-2-13b-hf_bs2_tiny", "Llama-3-70B_bs2_tiny", "phi-2_bs2_tiny"])
def test_no_aliased_output_is_a_cast_round_trip_of_an_input(config):
    """nvFuser's ConsecutiveCastPass folds bf16 -> fp32 -> bf16 into the bf16 tensor itself; at an aliased output
    that leaves the output an input, never written. A piece only passed through is a set."""
    cfg = _config(config)
    for name, variant in VARIANTS.items():
        for fd in SlicedRopeBwd(cfg, variant).parts:
            inputs = {id(i) for i in fd.fusion.inputs}
            assert not any(id(_cast_chain_source(o)) in inputs for o, _ in fd.fusion.aliases), name


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("config", ["Llama-3-70B_bs2_tiny", "gqa_partial"])
def test_in_dqkvs_order_too_the_variants_match_the_builder(config, variant):
    """The (B, T, G) order GPU probes compare against: the same bits as the builder on the interpreter."""
    cfg = _config(config)
    args = list(SPEC.make_inputs(cfg).values())
    (builder,) = run_reference(SPEC.build(cfg), args)
    assert torch.equal(SlicedRopeBwd(cfg, replace(VARIANTS[variant], order="btg")).run(args)[0], builder)
