"""The nvFuser tunings the norm builders keep: which configs get which, and the parameter override."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

import fusions
from segkit.tuning import NvTuning
from segkit.nvfuser.tuned import override


@pytest.mark.parametrize("name", ["rmsnorm_bwd", "layernorm_bwd"])
def test_narrow_rows_get_the_manual_schedule(name):
    t = fusions.get(name).build("mixorder_576000x384").nv_tuning
    assert (t.scheduler, t.vectorize, t.maxrregcount, t.blocks_per_sm) == ("inner_outer_persistent", 4, 40, 16)


@pytest.mark.parametrize("name", ["rmsnorm_bwd", "layernorm_bwd"])
@pytest.mark.parametrize("cfg", ["sweep_65536x1024", "sweep_16384x16384", "sweep_4096x1024"])
def test_ws_normalization_where_it_was_faster(name, cfg):
    assert fusions.get(name).build(cfg).nv_tuning.enable_options == ("ws_normalization",)


@pytest.mark.parametrize("cfg", ["sweep_16384x4096", "sweep_4096x4096", "llama2_13b", "nanogpt"])
def test_default_heuristics_elsewhere(cfg):
    assert fusions.get("rmsnorm_bwd").build(cfg).nv_tuning is None


def test_layer_norm_only_rule_for_many_wide_rows():
    assert fusions.get("layernorm_bwd").build("sweep_65536x4096").nv_tuning is not None
    assert fusions.get("rmsnorm_bwd").build("sweep_65536x4096").nv_tuning is None


def test_fp32_keeps_the_default():
    assert fusions.get("rmsnorm_bwd").build("mixorder_576000x384", torch.float32).nv_tuning is None
    assert fusions.get("rmsnorm_fwd").build("mixorder_576000x384", torch.float32).nv_tuning is None


def test_rmsnorm_forward_at_hidden_384_gets_several_rows_per_block():
    t = fusions.get("rmsnorm_fwd").build("mixorder_576000x384").nv_tuning
    assert (t.scheduler, t.rows_per_block) == ("inner_persistent", 4)


@pytest.mark.parametrize("name, cfg", [("layernorm_fwd", "mixorder_576000x384")]  # kernel faster, call not
                         + [(n, c) for n in ("rmsnorm_fwd", "layernorm_fwd")
                            for c in ("sweep_65536x256", "sweep_4096x256", "nanogpt", "sweep_65536x1024", "llama2_13b")])
def test_forward_keeps_the_default_elsewhere(name, cfg):
    assert fusions.get(name).build(cfg).nv_tuning is None


def test_inference_keeps_the_forward_tuning():
    from fusions.runner import fusion_for

    cfg = fusions.get("rmsnorm_fwd").config("mixorder_576000x384")
    y_only = fusion_for("rmsnorm_fwd", cfg, "none", outputs=(0,))
    assert len(y_only.fusion.outputs) == 1 and y_only.nv_tuning.rows_per_block == 4


def _params(vect=8, bdimx=48, gdimy=1056, tmp_vect=4, outer_vect=2, regs=128):
    return SimpleNamespace(unroll_factor_inner_reduction=vect, vectorize_inner_reduction=True,
                           batches_per_block_inner_reduction=1, pad_inner_reduction_to_warp=False,
                           vectorization_factor_tmp_gmem_write=tmp_vect, vectorization_factor_outer=outer_vect,
                           lparams=SimpleNamespace(bdimx=bdimx, gdimy=gdimy), cparams=SimpleNamespace(maxrregcount=regs))


def test_override_keeps_elements_per_block_and_sizes_the_grid_to_the_device():
    p = _params()
    override(p, NvTuning("t", scheduler="inner_outer_persistent", vectorize=4, maxrregcount=40, blocks_per_sm=16), 132)
    assert (p.unroll_factor_inner_reduction, p.lparams.bdimx) == (4, 96)  # 384 elements per row either way
    assert p.vectorization_factor_tmp_gmem_write <= 4 and p.vectorization_factor_outer <= 4
    assert (p.lparams.gdimy, p.cparams.maxrregcount) == (16 * 132, 40)


def test_override_puts_several_rows_in_a_block():
    p = _params()
    p.multiple_reds_per_blk, p.lparams.bdimy = False, 1
    override(p, NvTuning("t", scheduler="inner_persistent", rows_per_block=4), 132)
    assert (p.multiple_reds_per_blk, p.lparams.bdimy, p.lparams.bdimx) == (True, 4, 48)


def test_override_halves_the_block_for_a_doubled_persistent_batch():
    p = _params()
    override(p, NvTuning("t", scheduler="inner_outer_persistent", vectorize=4, persistent_batch=2), 132)
    assert (p.unroll_factor_inner_reduction, p.batches_per_block_inner_reduction, p.lparams.bdimx) == (4, 2, 48)
    p = _params()
    p.pad_inner_reduction_to_warp = True
    override(p, NvTuning("t", scheduler="inner_outer_persistent", persistent_batch=3), 132)
    assert (p.batches_per_block_inner_reduction, p.lparams.bdimx) == (3, 32)  # 16 threads padded to a warp


def test_override_leaves_unset_parameters_alone():
    p = _params()
    override(p, NvTuning("t", scheduler="inner_outer_persistent", maxrregcount=64), 132)
    assert (p.unroll_factor_inner_reduction, p.lparams.bdimx, p.lparams.gdimy, p.cparams.maxrregcount) == (8, 48, 1056, 64)


def test_tuning_must_be_one_kind():
    with pytest.raises(ValueError, match="need a scheduler"):
        NvTuning("t", vectorize=4)
    with pytest.raises(ValueError, match="choose one of"):
        NvTuning("t", enable_options=("ws_normalization",), scheduler="inner_outer_persistent")
    with pytest.raises(ValueError, match="choose one of"):
        NvTuning("t", enable_options=("ws_normalization",), split=((0,), (1,)))


def test_rows_per_block_is_refused_where_it_races():
    with pytest.raises(ValueError, match="inner_persistent scheduler, not inner_outer_persistent"):
        NvTuning("t", scheduler="inner_outer_persistent", rows_per_block=2)


@pytest.mark.parametrize("name, groups", [("rmsnorm_bwd", ((0,), (1,))), ("layernorm_bwd", ((0,), (1, 2)))])
def test_hidden_256_splits_dx_from_the_weight_gradients(name, groups):
    assert fusions.get(name).build("sweep_16384x256").nv_tuning.split == groups
    assert fusions.get(name).build("sweep_16384x256", torch.float32).nv_tuning is None


def test_split_parts_compute_what_the_whole_fusion_computes():
    from segkit.interp import as_fusion, run_reference

    spec = fusions.get("layernorm_bwd")
    cfg = spec.config("sweep_4096x256")
    args = list(spec.make_inputs(cfg, device="cpu").values())
    fusion = as_fusion(spec.build(cfg))
    whole = run_reference(fusion, args)
    dx_part, w_part = fusion.keep_outputs([0]), fusion.keep_outputs([1, 2])
    assert len(dx_part.ops) < len(fusion.ops) and len(w_part.ops) < len(fusion.ops)
    got = run_reference(dx_part, args) + run_reference(w_part, args)
    assert all(torch.equal(a, b) for a, b in zip(whole, got))


def test_split_must_cover_each_output_once():
    from segkit.nvfuser.tuned import TunedFusion

    fd = fusions.get("rmsnorm_bwd").build("sweep_4096x256")
    with pytest.raises(ValueError, match="each of the fusion's 2 outputs once"):
        TunedFusion(fd, NvTuning("t", split=((0,), (0, 1))))
    with pytest.raises(IndexError, match="out of range"):
        fusions.get("rmsnorm_bwd").build("sweep_4096x256").fusion.keep_outputs([2])

