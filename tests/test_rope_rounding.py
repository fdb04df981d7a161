"""The qkv split + RoPE forward's two roundings on the reference interpreter: "eager" gives eager PyTorch's
16-bit bits (each product and the sum rounded), "fp32" rounds once at the output, as torch.compile and Thunder's
nvFuser compute, and is at least as close to the float64 reference."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import fusions
import segkit
from fusions import torch_models as tm


@pytest.mark.parametrize("name", ["Llama-2-13b-hf_bs2_tiny", "Llama-3-8B_bs2_tiny", "phi-2_bs1_tiny"])
def test_eager_rounding_gives_eagers_bits_and_fp32_is_no_further_from_float64(name):
    spec = fusions.get("qkv_split_rope_fwd")
    cfg = spec.config(name)
    inputs = spec.make_inputs(cfg, device="cpu")
    xs = list(inputs.values())
    eager = tm.qkv_split_rope(inputs["qkv"], inputs["cos"], inputs["sin"], cfg.n_head, cfg.n_query_groups,
                              cfg.head_size, cfg.rope_n_elem)
    exact = segkit.run_reference(spec.build(cfg), xs)
    fp32 = segkit.run_reference(spec.build(dataclasses.replace(cfg, rounding="fp32")), xs)
    want = spec.reference(inputs, cfg)
    assert all(torch.equal(a, e.contiguous()) for a, e in zip(exact, eager))
    assert not all(torch.equal(a, b) for a, b in zip(exact, fp32)), "the roundings must differ somewhere"
    for a, b, w in zip(exact, fp32, want):
        assert (b.double() - w).abs().max() <= (a.double() - w).abs().max()


def test_an_unknown_rounding_is_refused_with_the_choices():
    cfg = fusions.get("qkv_split_rope_fwd").config("Llama-3-8B_bs2_tiny")
    with pytest.raises(ValueError, match=r"rounding must be one of \('eager', 'fp32'\), got 'bf16'"):
        dataclasses.replace(cfg, rounding="bf16")
