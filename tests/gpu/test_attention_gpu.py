"""segkit_ex's cuDNN attention on the GPU host: litgpt's attention (causal, q / k / v of one head count) runs on
segkit_cudnn_sdpa_fwd / _bwd, with outputs and grads as close to eager as Thunder's FlashAttention path is; the
compile option ``segkit_attention="thunder"`` gives Thunder's own choice back."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import thunder
import thunder_exec
from tests.test_thunder_exec import _symbols

pytestmark = pytest.mark.gpu


def _attend(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.1).transpose(1, 2)


def _inputs(B=2, H=8, T=512, D=128):
    torch.manual_seed(0)
    # litgpt's layout: (B, T, H, D) transposed to (B, H, T, D)
    return [torch.randn(B, T, H, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2).requires_grad_(True)
            for _ in range(3)]


def _grads(fn, inputs, dy):
    for t in inputs:
        t.grad = None
    y = fn(*inputs)
    y.backward(dy)
    return y.detach().float(), [t.grad.float() for t in inputs]


@pytest.mark.parametrize("option", ["cudnn", "thunder"])
def test_attention_matches_eager(option):
    inputs = _inputs()
    dy = torch.randn(2, 512, 8, 128, device="cuda", dtype=torch.bfloat16)
    y64, g64 = _grads(lambda *a: _attend(*(t.double() for t in a)), inputs, dy.double())
    jf = thunder.jit(_attend, executors=thunder_exec.executors(), segkit_attention=option)
    y, g = _grads(jf, inputs, dy)
    ye, ge = _grads(_attend, inputs, dy)
    names = _symbols(thunder.last_traces(jf)[-1]) | _symbols(thunder.last_backward_traces(jf)[-1])
    assert ("segkit_cudnn_sdpa_fwd" in names and "segkit_cudnn_sdpa_bwd" in names) == (option == "cudnn"), names
    # no further from the float64 result than eager's bf16 attention, with a bf16 ulp of slack
    for got, eager, want in zip([y, *g], [ye, *ge], [y64, *g64]):
        scale = want.abs().max()
        assert (got - want).abs().max() <= (eager - want).abs().max() + scale * 2 ** -8
