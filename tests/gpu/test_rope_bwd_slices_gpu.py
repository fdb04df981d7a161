"""The qkv split + RoPE backward written into slices of dqkv (fusions/qkv_rope_bwd_slices.py) on nvFuser, at the
real shapes of a multi-head (Llama-2-13b bs2) and a grouped-query (Llama-3-70B bs2) config: each variant against
the spec's float64 reference, and the in-place writes costing no copy kernel."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

import fusions
from fusions.qkv_rope_bwd_slices import ORDERS, VARIANTS, SlicedRopeBwd
from segkit.compare import diff
from segkit.timing import kernel_breakdown, nvfuser_scheduler

pytestmark = pytest.mark.gpu

SPEC = fusions.get("qkv_split_rope_bwd")
CONFIGS = ("Llama-2-13b-hf_bs2", "Llama-3-70B_bs2")


def _case(config: str):
    torch.cuda.empty_cache()
    cfg = SPEC.config(config)
    inputs = SPEC.make_inputs(cfg, device="cuda")
    return cfg, inputs


@pytest.mark.parametrize("order", list(ORDERS))
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("config", CONFIGS)
def test_variant_matches_the_float64_reference(config, variant, order, record):
    """In the variants' own order (nvFuser keeps the views' layout) and in dqkv's (the replay's fallback)."""
    cfg, inputs = _case(config)
    outs = SlicedRopeBwd(cfg, replace(VARIANTS[variant], order=order)).execute(list(inputs.values()))
    refs = SPEC.reference(inputs, cfg)
    diffs = [diff(i, r, o) for i, (r, o) in enumerate(zip(refs, outs))]
    record({"test": "rope_bwd_slices", "config": config, "variant": variant, "order": order,
            "rel_err": [d.rel_err for d in diffs]})
    assert len(outs) == 1 and outs[0].shape == (cfg.batch, cfg.T, cfg.qkv_width)
    assert all(d.ok for d in diffs), [str(d) for d in diffs]


@pytest.mark.fresh_process
@pytest.mark.parametrize("variant", ["slices_halves", "slices_heads"])
def test_multi_head_variant_is_one_kernel_writing_in_place(variant, record):
    """Multi-head, full rotary: one fusion of pointwise work into aliased views of dqkv. No broadcast op is in it,
    so nvFuser's SegmentInplaceUpdate pass must not add a copy kernel per aliased output: one kernel a call."""
    cfg, inputs = _case("Llama-2-13b-hf_bs2")
    run = SlicedRopeBwd(cfg, VARIANTS[variant])
    args = list(inputs.values())
    kernels = kernel_breakdown(lambda: run.execute(args), reps=3)
    record({"test": "rope_bwd_slices_kernels", "variant": variant, "kernels": [k.name for k in kernels],
            "us": [k.us for k in kernels]})
    assert len(kernels) == 1, [(nvfuser_scheduler(k.name), k.us) for k in kernels]
