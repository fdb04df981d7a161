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
