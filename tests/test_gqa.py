"""Grouped-query attention under segkit_ex (thunder_exec.gqa) on the CPU: which calls become
``segkit_grouped_sdpa`` on the unrepeated k / v, which stay Thunder's SDPA, and that either way the numbers and
grads are eager's. On the CPU the grouped symbol is not claimed (cuDNN is CUDA's), so it runs as its
decomposition; tests/gpu/test_attention_gpu.py checks the cuDNN side."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
import thunder

import thunder_exec
from tests import model_zoo
from tests.test_thunder_exec import _symbols

B, HQ, HKV, T, D = 2, 4, 2, 8, 16


def _qkv(hq=HQ, hkv=HKV):
    torch.manual_seed(0)
    return [torch.randn(B, h, T, D, requires_grad=True) for h in (hq, hkv, hkv)]


def _grads(fn, inputs):
    for t in inputs:
        t.grad = None
    y = fn(*inputs)
    y.backward(torch.cos(torch.arange(y.numel(), dtype=y.dtype)).view_as(y))
    return [y.detach(), *(t.grad.clone() for t in inputs)]


def _first_trace_calls(fn, inputs, executors):
    jf = thunder.jit(fn, executors=executors)
    got = _grads(jf, inputs)
    want = _grads(fn, inputs)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)
    return thunder.last_traces(jf)[0]


def _grouped_args(trace):
    """(k heads, v heads) of each segkit_grouped_sdpa call of ``trace``."""
    return [(b.args[1].shape[1], b.args[2].shape[1]) for b in trace.bound_symbols if b.sym.name == "segkit_grouped_sdpa"]


def litgpt_style(q, k, v):
    r = q.shape[1] // k.shape[1]
    return F.scaled_dot_product_attention(q, k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1),
                                          is_causal=True, scale=0.2)


def test_litgpt_repeats_reach_the_grouped_symbol_unrepeated():
    trace = _first_trace_calls(litgpt_style, _qkv(), thunder_exec.executors())
    assert _grouped_args(trace) == [(HKV, HKV)]
    assert "scaled_dot_product_attention" not in _symbols(trace)


def test_segkit_gqa_false_keeps_the_repeats():
    jf = thunder.jit(litgpt_style, executors=thunder_exec.executors(), segkit_gqa=False)
    torch.testing.assert_close(jf(*_qkv()), litgpt_style(*_qkv()))
    trace = thunder.last_traces(jf)[0]
    assert _grouped_args(trace) == [] and "scaled_dot_product_attention" in _symbols(trace)
    with pytest.raises(ValueError, match="segkit_gqa must be True or False, got 'no'"):
        thunder.jit(litgpt_style, executors=thunder_exec.executors(), segkit_gqa="no")(*_qkv())


def test_without_segkit_ex_thunders_own_sdpa_runs():
    trace = _first_trace_calls(litgpt_style, _qkv(), [])
    assert _grouped_args(trace) == [] and "scaled_dot_product_attention" in _symbols(trace)


def _repeat_dim_minus_3(q, k, v):
    return F.scaled_dot_product_attention(q, k.repeat_interleave(2, -3), v.repeat_interleave(2, -3))


def _repeat_on_time(q, k, v):  # one k / v head of half the length, repeated along T, broadcast over q's 2 heads
    return F.scaled_dot_product_attention(q, k.repeat_interleave(2, dim=2), v.repeat_interleave(2, dim=2))


def _repeat_k_only(q, k, v):
    return F.scaled_dot_product_attention(q, k.repeat_interleave(2, dim=1), torch.cat([v, v], dim=1))


def _with_mask(q, k, v):
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    return F.scaled_dot_product_attention(q, k.repeat_interleave(2, dim=1), v.repeat_interleave(2, dim=1), mask)


@pytest.mark.parametrize("fn, shapes, grouped", [
    (_repeat_dim_minus_3, None, True),
    (_repeat_on_time, [(B, 2, T, D), (B, 1, T // 2, D), (B, 1, T // 2, D)], False),
    (_repeat_k_only, None, False),
    (_with_mask, None, False),
])
def test_what_becomes_grouped(fn, shapes, grouped):
    torch.manual_seed(0)
    inputs = ([torch.randn(*s, requires_grad=True) for s in shapes] if shapes else _qkv())
    trace = _first_trace_calls(fn, inputs, thunder_exec.executors())
    assert bool(_grouped_args(trace)) == grouped, _symbols(trace)


def _enable_gqa(q, k, v, mask=None):
    return F.scaled_dot_product_attention(q, k, v, mask, is_causal=mask is None, enable_gqa=True)


def test_enable_gqa_runs_under_segkit_ex():
    """Thunder 0.2.6's SDPA does not take enable_gqa; with segkit_ex it is the grouped symbol (no mask) or the
    repeats then Thunder's SDPA (a mask)."""
    with pytest.raises(TypeError, match="enable_gqa"):
        thunder.jit(_enable_gqa)(*_qkv())
    assert _grouped_args(_first_trace_calls(_enable_gqa, _qkv(), thunder_exec.executors())) == [(HKV, HKV)]
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    masked = _first_trace_calls(lambda q, k, v: _enable_gqa(q, k, v, mask), _qkv(), thunder_exec.executors())
    assert _grouped_args(masked) == [] and "scaled_dot_product_attention" in _symbols(masked)


def test_enable_gqa_with_heads_that_do_not_divide_is_named():
    with pytest.raises(ValueError, match=r"enable_gqa=True.*divides q's.*q \(2, 4, 8, 16\), k \(2, 3, 8, 16\)"):
        thunder.jit(_enable_gqa, executors=thunder_exec.executors())(*_qkv(HQ, 3))


def test_unedited_litgpt_qwen3_attention_is_grouped():
    """litgpt's GPT (Qwen3-0.6B's structure, tiny: 4 q heads, 2 k / v heads): one grouped call per layer, loss and
    grads as eager's."""
    pytest.importorskip("litgpt")
    r = model_zoo.claim_report("Qwen3-0.6B", "fp32", thunder_exec.executors(), set(), set(), set(), set())
    assert not r.error and r.loss_err <= 1e-5 and r.grad_err <= 1e-5, r
    model = model_zoo.build("Qwen3-0.6B")
    idx = torch.randint(0, model_zoo.VOCAB, (model_zoo.BATCH, model_zoo.T))
    jf = thunder.jit(model, executors=thunder_exec.executors())
    jf(idx)
    layers = len(model.transformer.h)
    assert _grouped_args(thunder.last_traces(jf)[0]) == [(2, 2)] * layers
