"""Grouped-query attention under segkit_ex (thunder_exec.gqa) on the CPU: which calls become
``segkit_grouped_sdpa`` on the unrepeated k / v (``segkit_gqa=True``), which stay Thunder's SDPA, what "auto"
chooses from the evidence file, and that either way the numbers and grads are eager's. On the CPU the grouped
symbol is not claimed (cuDNN is CUDA's), so it runs as its decomposition; tests/gpu/test_attention_gpu.py checks
the cuDNN side."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F
import thunder

import thunder_exec
from segkit.errors import TuningTableError
from tests import model_zoo
from thunder_exec.decide import evidence
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


def _first_trace_calls(fn, inputs, executors, **options):
    jf = thunder.jit(fn, executors=executors, **options)
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
    trace = _first_trace_calls(litgpt_style, _qkv(), thunder_exec.executors(), segkit_gqa=True)
    assert _grouped_args(trace) == [(HKV, HKV)]
    assert "scaled_dot_product_attention" not in _symbols(trace)


@pytest.mark.parametrize("option", [False, "auto", None])
def test_repeats_kept_when_asked_or_without_evidence(option):
    """False keeps them; so does "auto" (the default) here: no step measured grouped calls on a CPU."""
    options = {} if option is None else {"segkit_gqa": option}
    trace = _first_trace_calls(litgpt_style, _qkv(), thunder_exec.executors(), **options)
    assert _grouped_args(trace) == [] and "scaled_dot_product_attention" in _symbols(trace)


@pytest.mark.parametrize("bad", ["no", 1, "True"])
def test_a_bad_segkit_gqa_is_named(bad):
    with pytest.raises(ValueError, match=r"segkit_gqa must be one of \('auto', True, False\), got"):
        thunder.jit(litgpt_style, executors=thunder_exec.executors(), segkit_gqa=bad)(*_qkv())


def test_auto_follows_the_committed_evidence():
    """The H200 steps measured group size 2 faster grouped (Qwen3-0.6B) and 4 faster repeated (Llama-3-8B,
    Llama-3.2-1B); a GPU or a group size no step measured keeps the repeats."""
    table = evidence.committed_grouped()
    assert table.grouped("NVIDIA H200", 2) is True
    assert table.grouped("NVIDIA H200", 4) is False
    assert table.grouped("NVIDIA H100 80GB HBM3", 2) is False
    assert table.grouped("NVIDIA H200", 8) is False
    assert table.grouped(None, 2) is False


def test_evidence_file_errors_name_the_file_and_record(tmp_path):
    record = json.loads(evidence.GQA_PATH.read_text())["records"][0]
    bad = tmp_path / "missing_field.json"
    bad.write_text(json.dumps({"records": [{k: v for k, v in record.items() if k != "paired"}]}))
    with pytest.raises(TuningTableError, match=r"missing_field.json: record 0 must have exactly the fields"):
        evidence.GroupedTable.load(bad)
    split = tmp_path / "split.json"
    split.write_text(json.dumps({"records": [record, {**record, "grouped": not record["grouped"], "case": "x"}]}))
    with pytest.raises(TuningTableError, match=r"split.json: record 1: x says grouped=.*qwen3-0.6b-x2 the opposite"):
        evidence.GroupedTable.load(split)
    assert not evidence.GroupedTable.load(tmp_path / "absent.json").grouped("NVIDIA H200", 2)


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
    trace = _first_trace_calls(fn, inputs, thunder_exec.executors(), segkit_gqa=True)
    assert bool(_grouped_args(trace)) == grouped, _symbols(trace)


def _enable_gqa(q, k, v, mask=None):
    return F.scaled_dot_product_attention(q, k, v, mask, is_causal=mask is None, enable_gqa=True)


def test_enable_gqa_runs_under_segkit_ex():
    """Thunder 0.2.6's SDPA does not take enable_gqa; with segkit_ex it is the grouped symbol (no mask, grouping
    chosen) or the repeats then Thunder's SDPA (a mask, or the repeats chosen)."""
    with pytest.raises(TypeError, match="enable_gqa"):
        thunder.jit(_enable_gqa)(*_qkv())
    ex = thunder_exec.executors()
    assert _grouped_args(_first_trace_calls(_enable_gqa, _qkv(), ex, segkit_gqa=True)) == [(HKV, HKV)]
    repeated = _first_trace_calls(_enable_gqa, _qkv(), ex)
    assert _grouped_args(repeated) == [] and "scaled_dot_product_attention" in _symbols(repeated)
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    masked = _first_trace_calls(lambda q, k, v: _enable_gqa(q, k, v, mask), _qkv(), ex, segkit_gqa=True)
    assert _grouped_args(masked) == [] and "scaled_dot_product_attention" in _symbols(masked)


def test_enable_gqa_with_heads_that_do_not_divide_is_named():
    with pytest.raises(ValueError, match=r"enable_gqa=True.*divides q's.*q \(2, 4, 8, 16\), k \(2, 3, 8, 16\)"):
        thunder.jit(_enable_gqa, executors=thunder_exec.executors())(*_qkv(HQ, 3))


def test_unedited_litgpt_qwen3_attention_is_grouped():
    """litgpt's GPT (Qwen3-0.6B's structure, tiny: 4 q heads, 2 k / v heads): one grouped call per layer, loss and
    grads as eager's."""
    pytest.importorskip("litgpt")
    model = model_zoo.build("Qwen3-0.6B")
    torch.manual_seed(0)
    idx = torch.randint(0, model_zoo.VOCAB, (model_zoo.BATCH, model_zoo.T))
    jf = thunder.jit(model, executors=thunder_exec.executors(), segkit_gqa=True)
    got = model_zoo.loss_fn(jf, idx)
    got.backward()
    got_grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    want = model_zoo.loss_fn(model, idx)
    want.backward()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    for g, p in zip(got_grads, model.parameters()):
        torch.testing.assert_close(g, p.grad, rtol=1e-5, atol=1e-5)
    assert _grouped_args(thunder.last_traces(jf)[0]) == [(2, 2)] * len(model.transformer.h)


def test_transformers_own_sdpa_attention_runs():
    """transformers' ``sdpa_attention_forward`` passes ``enable_gqa=True`` for grouped k / v without a mask: stock
    Thunder 0.2.6 rejects it, segkit_ex runs it as eager does (grouped where chosen, else repeats)."""
    import types

    sdpa = pytest.importorskip("transformers.integrations.sdpa_attention")
    module = types.SimpleNamespace(num_key_value_groups=HQ // HKV, is_causal=True, training=False)

    def attend(q, k, v):
        return sdpa.sdpa_attention_forward(module, q, k, v, None, scaling=0.25)[0]

    if not sdpa.use_gqa_in_sdpa(None, _qkv()[1]):
        pytest.skip("this transformers repeats k / v itself")
    with pytest.raises(TypeError, match="enable_gqa"):
        thunder.jit(attend)(*_qkv())
    for option in (True, "auto"):
        trace = _first_trace_calls(attend, _qkv(), thunder_exec.executors(), segkit_gqa=option)
        assert _grouped_args(trace) == ([(HKV, HKV)] if option is True else [])
