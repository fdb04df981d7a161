"""RoPE on a permuted x (q and dq from segkit's cuDNN attention are (B, T, H, n) in memory): a config with
``x_stride_order`` defines the fusion input in that layout, and the runner hands such a tensor over in place
(no copy) with exactly the numbers of the contiguous path; a tensor in another layout is laid out first. On CPU
the fusions run on the reference interpreter; under thunder.jit the run-time layout picks the runner."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

import fusions
import thunder
import thunder_exec
from fusions.configs import ApplyRopeConfig
from fusions.runner import RUNNERS, runner
from segkit.layout import dense_stride_order, laid_out

BTHD = (3, 1, 2, 0)  # nvFuser's stride_order of a (B, H, T, n) tensor stored (B, T, H, n)


def _permuted(shape, gen) -> torch.Tensor:
    B, H, T, n = shape
    return torch.randn(B, T, H, n, generator=gen, dtype=torch.bfloat16).transpose(1, 2)


def test_layout_helpers():
    x = _permuted((2, 3, 8, 16), torch.Generator().manual_seed(0))
    assert dense_stride_order(x.shape, x.stride()) == BTHD
    assert laid_out(x, BTHD) is x
    y = laid_out(x.contiguous(), BTHD)
    assert torch.equal(y, x) and y.stride() == x.stride()
    assert dense_stride_order((4, 5), (10, 1)) is None  # a row gap
    assert dense_stride_order((4, 5), (0, 1)) is None  # broadcast
    with pytest.raises(ValueError, match="x_stride_order \\(0, 0, 1, 2\\) must be a permutation"):
        ApplyRopeConfig("bad", (1, 2, 3, 4), x_stride_order=(0, 0, 1, 2))


@pytest.mark.parametrize("spec_name", ["rope_fwd", "rope_bwd"])
def test_a_permuted_x_is_read_in_place_with_the_contiguous_paths_numbers(spec_name, monkeypatch):
    spec = fusions.get(spec_name)
    cfg = spec.config("Llama-3-8B_q_bthd_tiny")
    assert cfg.x_stride_order == BTHD
    inputs = spec.make_inputs(cfg)
    x, cos, sin = inputs.values()
    assert dense_stride_order(x.shape, x.stride()) == BTHD  # the spec's own inputs come in the layout
    permuted = runner(spec_name, cfg, "none")
    assert permuted.layouts == (BTHD, None, None)
    copies = []
    real_contiguous = torch.Tensor.contiguous
    monkeypatch.setattr(torch.Tensor, "contiguous",
                        lambda t, *a, **k: copies.append(t.shape) or real_contiguous(t, *a, **k))
    (got,) = permuted([x, cos, sin])
    assert not copies, f"the runner copied inputs of shapes {copies}"
    monkeypatch.undo()
    (want,) = runner(spec_name, replace(cfg, x_stride_order=None), "none")([x.contiguous(), cos, sin])
    assert torch.equal(got, want)
    (again,) = permuted([x.contiguous(), cos, sin])  # another layout: laid out first, same numbers
    assert torch.equal(again, want)


def test_thunder_picks_the_runner_by_the_run_time_layout():
    """Under thunder.jit (opaque, CPU), q that is a transpose of (B, T, H, n) reaches segkit's RoPE in place:
    a runner with that layout is made, and the values and grads are eager's."""
    from litgpt.model import apply_rope, build_rope_cache

    gen = torch.Generator().manual_seed(1)
    base = torch.randn(2, 8, 4, 16, generator=gen, dtype=torch.bfloat16, requires_grad=True)
    cos, sin = (t[None] for t in build_rope_cache(8, 16))

    def f(base):
        return apply_rope(base.transpose(1, 2), cos, sin).float().sin().sum()

    thunder_exec.clear_caches()
    jf = thunder.jit(f, executors=thunder_exec.executors(), segkit_fuse="opaque")
    loss = jf(base)
    (g,) = torch.autograd.grad(loss, [base])
    want_loss = f(base)
    (want_g,) = torch.autograd.grad(want_loss, [base])
    assert torch.equal(loss, want_loss)
    torch.testing.assert_close(g, want_g, rtol=0, atol=2e-2)
    layouts = {r.cfg.x_stride_order for r in RUNNERS.values() if r.spec_name.startswith("rope_")}
    assert BTHD in layouts, layouts
