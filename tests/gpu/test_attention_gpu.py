"""segkit_ex's cuDNN attention on the GPU host: litgpt's attention (causal, q / k / v of one head count) runs on
segkit_cudnn_sdpa_fwd / _bwd, with outputs and grads as close to eager as Thunder's FlashAttention path is; the
compile option ``segkit_attention="thunder"`` gives Thunder's own choice back."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import thunder
import thunder_exec
from segkit.nvfuser.timing import cuda_profiler
from segkit.tuning.table import gpu_model
from thunder_exec.decide import evidence
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


def _litgpt_attention(qkv, cos, sin, heads=8):
    """litgpt's CausalSelfAttention between its two linears: split, heads, RoPE, SDPA, heads back."""
    from litgpt.model import apply_rope

    B, T, C3 = qkv.shape
    D = C3 // (3 * heads)
    q, k, v = (t.view(B, T, heads, D).transpose(1, 2) for t in qkv.split(C3 // 3, dim=-1))
    y = F.scaled_dot_product_attention(apply_rope(q, cos, sin), apply_rope(k, cos, sin), v, is_causal=True)
    return y.transpose(1, 2).reshape(B, T, C3 // 3)


def _copy_kernels(fn, *args, dy):
    """Names of the copy kernels (ATen's ``copy_``, not nvFuser's) of one forward + backward."""
    fn(*args).backward(dy)  # compile first
    torch.cuda.synchronize()
    with cuda_profiler() as prof:
        fn(*args).backward(dy)
        torch.cuda.synchronize()
    return [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA
            and "copy" in e.name.lower() and "nvfuser" not in e.name.lower()]


@pytest.mark.fresh_process  # torch.profiler takes CUPTI
def test_query_in_bthd_order_saves_the_copies_of_y_and_dy():
    """With q in (B, T, H, D) memory order ("cudnn") cuDNN's y needs no copy to become (B, T, C), nor dy to reach
    y's layout: the step runs fewer ATen copies than with q as Thunder leaves it, and the same numbers."""
    pytest.importorskip("litgpt")
    torch.manual_seed(0)
    B, T, H, D = 1, 1024, 8, 128
    qkv = torch.randn(B, T, 3 * H * D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    angles = torch.rand(T, D, device="cuda") * 6.28
    cos, sin = angles.cos().to(torch.bfloat16)[None], angles.sin().to(torch.bfloat16)[None]  # litgpt's (1, T, D)
    dy = torch.randn(B, T, H * D, device="cuda", dtype=torch.bfloat16)
    copies, grads = {}, {}
    for option in ("cudnn", "cudnn-as-is"):
        jf = thunder.jit(_litgpt_attention, executors=thunder_exec.executors(), segkit_attention=option)
        copies[option] = _copy_kernels(jf, qkv, cos, sin, dy=dy)
        qkv.grad = None
        jf(qkv, cos, sin).backward(dy)
        grads[option] = qkv.grad.clone()
        qkv.grad = None
        assert "segkit_cudnn_sdpa_bwd" in _symbols(thunder.last_backward_traces(jf)[-1])
    assert len(copies["cudnn"]) < len(copies["cudnn-as-is"]), copies
    # another cuDNN kernel may sum in another order: equal to bf16 rounding of the largest grad
    scale = grads["cudnn-as-is"].abs().max().item()
    torch.testing.assert_close(grads["cudnn"], grads["cudnn-as-is"], rtol=2 ** -7, atol=scale * 2 ** -7)


def _names_within(trace) -> list[str]:
    """Every symbol name of ``trace``, inside fusion regions too."""
    names, todo = [], list(trace.bound_symbols)
    while todo:
        b = todo.pop()
        names.append(b.sym.name)
        todo.extend(b.subsymbols)
    return names


def _grouped_attend(q, k, v):
    """litgpt's grouped-query attention: k / v repeated to q's heads, then SDPA."""
    r = q.shape[1] // k.shape[1]
    return _attend(q, k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1))


def test_grouped_attention_runs_on_cudnn_unrepeated():
    """8 q heads on 2 k / v heads: cuDNN's forward and backward get k / v unrepeated (dk / dv come back with 2 heads),
    nothing repeats k / v or sums their grads, and outputs and grads are as close to float64 as eager's, which
    repeats them."""
    torch.manual_seed(0)
    B, T, D = 2, 512, 128
    q = torch.randn(B, T, 8, D, device="cuda", dtype=torch.bfloat16).transpose(1, 2).requires_grad_(True)
    k, v = (torch.randn(B, 2, T, D, device="cuda", dtype=torch.bfloat16).requires_grad_(True) for _ in range(2))
    inputs = [q, k, v]
    dy = torch.randn(B, T, 8, D, device="cuda", dtype=torch.bfloat16)
    y64, g64 = _grads(lambda *a: _grouped_attend(*(t.double() for t in a)), inputs, dy.double())
    jf = thunder.jit(_grouped_attend, executors=thunder_exec.executors(), segkit_gqa=True)
    y, g = _grads(jf, inputs, dy)
    ye, ge = _grads(_grouped_attend, inputs, dy)
    fw, bw = thunder.last_traces(jf)[-1], thunder.last_backward_traces(jf)[-1]
    fwd = [b for b in fw.bound_symbols if b.sym.name == "segkit_cudnn_sdpa_fwd"]
    bwd = [b for b in bw.bound_symbols if b.sym.name == "segkit_cudnn_sdpa_bwd"]
    assert [tuple(b.args[1].shape) for b in fwd] == [(B, 2, T, D)]
    assert [tuple(b.output[1].shape) for b in bwd] == [(B, 2, T, D)]
    assert not {"repeat_interleave", "sum"} & set(_names_within(fw) + _names_within(bw))
    for got, eager, want in zip([y, *g], [ye, *ge], [y64, *g64]):
        scale = want.abs().max()
        assert (got - want).abs().max() <= (eager - want).abs().max() + scale * 2 ** -8


@pytest.mark.parametrize("kv_heads", [4, 2])  # groups of 2 and of 4 q heads
def test_auto_groups_where_a_step_measured_it_faster(kv_heads):
    """segkit_gqa's default: cuDNN gets k / v unrepeated where thunder_exec/decide/gqa_evidence.json has this GPU and
    group size measured faster grouped, repeated to q's 8 heads elsewhere; the numbers are eager's either way."""
    torch.manual_seed(0)
    B, T, D = 1, 256, 64
    q = torch.randn(B, 8, T, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(B, kv_heads, T, D, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in "kv")
    jf = thunder.jit(_grouped_attend, executors=thunder_exec.executors())
    dy = torch.randn(B, T, 8, D, device="cuda", dtype=torch.bfloat16)
    y, g = _grads(jf, [q, k, v], dy)
    ye, ge = _grads(_grouped_attend, [q, k, v], dy)
    fwd = [b for b in thunder.last_traces(jf)[-1].bound_symbols if b.sym.name == "segkit_cudnn_sdpa_fwd"]
    grouped = evidence.committed_grouped().grouped(gpu_model(), 8 // kv_heads)
    assert [b.args[1].shape[1] for b in fwd] == [kv_heads if grouped else 8]
    for got, eager in zip([y, *g], [ye, *ge]):
        torch.testing.assert_close(got, eager, rtol=2 ** -7, atol=eager.abs().max().item() * 2 ** -7)
