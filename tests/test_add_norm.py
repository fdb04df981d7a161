"""The residual add + norm fusions (fusions/add_*norm_*.py) on the reference interpreter against float64 torch
autograd of the eager block (fusions.torch_models), their bytes floors, and the benchmark's eager cases on CPU."""

from __future__ import annotations

import pytest
import torch

import fusions
import segkit
from benchmarks import add_norm
from benchmarks.harness import check_outputs
from fusions import torch_models as tm
from fusions.spec import randn
from segkit.compare import diff

NEW_SPECS = ["add_rmsnorm_fwd", "add_rmsnorm_bwd", "add_layernorm_fwd", "add_layernorm_bwd",
             "rmsnorm_bwd_from_output", "layernorm_bwd_from_output"]


def _interp(name: str, cfg, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    return segkit.run_reference(fusions.get(name).build(cfg), inputs)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("cfg_name", ["mixorder_576000x384_tiny", "nanogpt_tiny"])
@pytest.mark.parametrize("kind", ["rmsnorm", "layernorm"])
def test_forward_then_backward_match_autograd_of_the_eager_block(kind, cfg_name, dtype):
    """The forward fusion's h and statistics fed to the backward fusion give the grads torch autograd gives the
    eager ``h = x + residual; y = norm(h)`` in float64: dx for x and for the residual alike, dw (, db)."""
    fwd, bwd = fusions.get(f"add_{kind}_fwd"), fusions.get(f"add_{kind}_bwd")
    cfg = fwd.config(cfg_name, dtype)
    inp = fwd.make_inputs(cfg)
    outs = _interp(f"add_{kind}_fwd", cfg, list(inp.values()))
    y, h, stats = outs[0], outs[1], outs[2:]
    gen = torch.Generator().manual_seed(1)
    dy, dh = randn(cfg.shape, gen, dtype), randn(cfg.shape, gen, dtype)
    grads = _interp(f"add_{kind}_bwd", cfg, [h, dy, dh, *stats, inp["weight"]])

    leaves = {k: v.detach().double().requires_grad_(True) for k, v in inp.items()}
    if kind == "rmsnorm":
        y64, h64 = tm.add_rms_norm(leaves["x"], leaves["residual"], leaves["weight"], cfg.eps)
    else:
        y64, h64 = tm.add_layer_norm(leaves["x"], leaves["residual"], leaves["weight"], leaves["bias"], cfg.eps)
    want = dict(zip(leaves, torch.autograd.grad((y64, h64), list(leaves.values()), (dy.double(), dh.double()))))
    checks = [("y", y64, y), ("h", h64, h), ("dx", want["x"], grads[0]), ("dresidual", want["residual"], grads[0]),
              ("dw", want["weight"], grads[1])] + ([("db", want["bias"], grads[2])] if kind == "layernorm" else [])
    for i, (what, ref, got) in enumerate(checks):
        d = diff(i, ref.detach(), got)
        assert d.ok, f"{what}: {d}"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("name", NEW_SPECS)
def test_bytes_floor_is_each_input_read_and_each_output_written_once(name, dtype):
    spec = fusions.get(name)
    cfg = spec.config("nanogpt_tiny", dtype)
    inputs = spec.make_inputs(cfg)
    outs = _interp(name, cfg, list(inputs.values()))
    moved = sum(t.numel() * t.element_size() for t in [*inputs.values(), *outs])
    assert spec.bytes_floor(cfg) == moved


def test_block_norm_configs_are_the_named_model_shapes():
    configs = fusions.get("add_rmsnorm_bwd").configs
    assert configs["mixorder_576000x384"].shape == (576000, 384)
    assert configs["llama3_8b"].shape == (4096, 4096)  # Llama-3-8B x1 at T=4096, as the step table runs it
    assert configs["qwen3_0.6b"].shape == (4, 2048, 1024)
    assert fusions.get("add_layernorm_fwd").configs["nanogpt"].bias
    assert not fusions.get("add_rmsnorm_fwd").configs["nanogpt"].bias


@pytest.mark.parametrize("kind", ["rmsnorm", "layernorm"])
def test_benchmark_eager_cases_pass_their_own_check_on_cpu(kind):
    """The benchmark's eager rival (the function torch.compile compiles too), forward and backward, as the harness
    checks it before timing: y and h; dx, dw (, db) and dresidual against the spec's float64 references."""
    for direction in ("fwd", "bwd"):
        spec = fusions.get(add_norm.spec_name(kind, direction))
        cfg = spec.config("qwen3_0.6b_tiny")
        inputs = spec.make_inputs(cfg)
        refs = spec.reference(inputs, cfg)
        if direction == "fwd":
            prepared = add_norm.forward(kind, cfg, "eager", inputs)
            refs, names = refs[:2], spec.outputs[:2]
        else:
            prepared = add_norm.backward(kind, cfg, "eager", inputs)
            refs, names = (*refs, refs[0]), (*spec.outputs, "dresidual")
            assert len(prepared.fn()) == len(refs)
        assert check_outputs(prepared, refs, names) < 1e-2


def test_benchmark_names_a_bad_case():
    with pytest.raises(ValueError, match="kind must be one of .* got 'rms', 'fwd'"):
        add_norm.spec_name("rms", "fwd")


def test_add_rmsnorm_with_hugging_face_rounding_computes_what_the_decoder_layer_does():
    """``round_normed`` (Hugging Face's LlamaRMSNorm: x * rstd rounded to bf16 before the weight) carries into
    the residual add + RMSNorm forward: y and h as the decoder layer's eager bf16 code computes them."""
    from dataclasses import replace

    spec = fusions.get("add_rmsnorm_fwd")
    cfg = replace(spec.config("llama3_8b_tiny"), round_normed=True)
    inp = spec.make_inputs(cfg)
    y, h, _ = _interp("add_rmsnorm_fwd", cfg, list(inp.values()))
    residual = inp["residual"] + inp["x"]  # hidden_states = residual + hidden_states
    hs = residual.float()
    hs = hs * torch.rsqrt(hs.pow(2).mean(-1, keepdim=True) + cfg.eps)
    want = inp["weight"] * hs.to(torch.bfloat16)
    assert torch.equal(h, residual)
    torch.testing.assert_close(y, want, rtol=0, atol=0)
