"""Issue 36 on the GPU host: the pasted repro corpus checked against nvFuser, nvFuser's in-place and integer
division semantics as the reference now reproduces them, and the claims that must not change a model's numbers
(Hugging Face's bf16 RMSNorm rounding, RoPE rounding in bf16, the ThunderFX path) on CUDA."""

from __future__ import annotations

import pytest
import torch

import segkit
import thunder
import thunder_exec
from segkit.check import check
from tests import test_pasted_repros as corpus
from tests.test_claims_exact import ROPE_FW, _count

pytestmark = pytest.mark.gpu


def _runnable(folder):
    return [pytest.param(s, id=f"{folder.name}/{s.name}") for s in corpus._scripts(folder)
            if s.expects == "runs" and not s.heavy]


@pytest.mark.parametrize("script", _runnable(corpus.DATA) + _runnable(corpus.HELD_OUT))
def test_pasted_repro_agrees_with_nvfuser(script, record):
    """Every fusion of every accepted pasted script, on nvFuser against the reference (fresh inputs per side)."""
    for repro in corpus._repros(script.path):
        report = check(repro.fd, repro.make_inputs("cuda"))
        record({"test": "pasted_repro_gpu", "script": script.name, "fusion": getattr(repro, "name", None),
                "ok": report.ok, "worst": str(report.worst) if not report.ok else ""})
        assert report.ok, f"{script.name}: {report}"


def _in_place_fusion():
    with segkit.FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=segkit.DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=segkit.DataType.Float)
        t2 = fd.ops.add(t0, t1)
        fd.add_output(t2, alias_input=t0)  # t0 += t1, as Thunder's copy_ and optimizer steps write it
        fd.add_output(fd.ops.mul(t2, t1))
    return fd


def test_alias_input_writes_the_input_on_nvfuser_as_on_the_reference():
    fd = _in_place_fusion()
    a, b = torch.randn(64, 96, device="cuda"), torch.randn(64, 96, device="cuda")
    ref_a, nv_a, before = a.clone(), a.clone(), a.clone()
    ref_out = segkit.run_reference(fd, [ref_a, b])
    nv_out = segkit.run_nvfuser(fd, [nv_a, b], profile=False).outputs  # one execution
    torch.testing.assert_close(ref_a, a + b)
    torch.testing.assert_close(nv_a, ref_a)  # nvFuser wrote the input, and so did the reference
    assert len(nv_out) == len(ref_out) == 1
    torch.testing.assert_close(nv_out[0], ref_out[0])
    report = check(fd, [a, b])
    assert report.ok, report
    assert torch.equal(a, before)  # check gave each side its own copy: the caller's input is untouched


@pytest.mark.parametrize("dtype", [segkit.DataType.Int32, segkit.DataType.Int])
@pytest.mark.parametrize("op", ["div", "fmod", "remainder"])
def test_integer_division_by_zero_gives_nvfuser_values(op, dtype):
    """The reference's values for an integer divisor of 0 (positive, negative and zero dividends) are nvFuser's."""
    with segkit.FusionDefinition() as fd:
        a = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dtype)
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=dtype)
        fd.add_output(getattr(fd.ops, op)(a, b))
    td = torch.int32 if dtype == segkit.DataType.Int32 else torch.int64
    x = torch.tensor([7, -7, 0, 123456, -123456, 1, -1], dtype=td, device="cuda")
    zero = torch.zeros_like(x)
    want = segkit.run_reference(fd, [x.cpu(), zero.cpu()])[0]
    got = segkit.run_nvfuser(fd, [x, zero], profile=False).outputs[0]
    assert torch.equal(got.cpu(), want), (got.cpu().tolist(), want.tolist())


def _hf_llama_rms_norm(x, weight, eps):
    """Hugging Face's LlamaRMSNorm.forward, as written there: fp32 statistics, x * rstd rounded to x's dtype, then
    the weight product in the weight's dtype."""
    h = x.to(torch.float32)
    h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + eps)
    return weight * h.to(x.dtype)


def test_hf_llama_style_rmsnorm_rounding_on_nvfuser_keeps_eagers_bits():
    """segkit's RMSNorm fusion with Hugging Face's rounding (round_normed), on nvFuser at a real hidden size: equal
    to eager almost everywhere, and nowhere further than 2 bf16 eps of it; without the rounding option it is not
    (the issue's one-rounding bug). Why 2: fp32 sums in another order give an rstd one fp32 ulp off, which moves
    x * rstd across a bf16 rounding boundary; the weight product (|w| up to 2) then carries that ulp of the
    normed value into up to 2 eps of y. On CPU, rstd one or two fp32 ulps off gives 16-37 of these 8M elements
    beyond 1 eps and none beyond 2 (seed 0)."""
    from thunder_exec.norms import _rms_fwd_impl

    gen = torch.Generator(device="cuda").manual_seed(0)
    weight = (torch.randn(4096, device="cuda", generator=gen) * 0.3 + 1).bfloat16()
    x = (torch.randn(2, 1024, 4096, device="cuda", generator=gen) * 2).bfloat16()
    want = _hf_llama_rms_norm(x, weight, 1e-6)
    eps2 = 2 * torch.finfo(torch.bfloat16).eps * want.float().abs().clamp_min(torch.finfo(torch.bfloat16).tiny)
    same = {}
    for round_normed in (True, False):
        y, _ = _rms_fwd_impl(x, weight, 1e-6, round_normed, "outputs", False)
        assert y.dtype == torch.bfloat16
        same[round_normed] = (y == want).float().mean().item()
        if round_normed:
            assert ((y.float() - want.float()).abs() <= eps2).all()
    assert same[True] >= 0.999 and same[False] < same[True], same


def test_litgpt_apply_rope_in_bf16_claimed_with_eagers_bits_on_cuda():
    """litgpt's apply_rope with bf16 x and tables (eager rounds each product and the sum to bf16): claimed, and
    segkit's RoPE fusion rounds where eager does, so the bits are eager's."""
    litgpt_model = pytest.importorskip("litgpt.model")

    thunder_exec.executors()
    gen = torch.Generator(device="cuda").manual_seed(0)
    q = torch.randn(2, 32, 2048, 128, device="cuda", generator=gen).bfloat16()
    angle = torch.arange(2048.0, device="cuda")[None, :, None] * torch.rand(1, 1, 128, device="cuda", generator=gen)
    cos, sin = angle.cos().bfloat16(), angle.sin().bfloat16()
    jf = thunder.jit(litgpt_model.apply_rope, executors=thunder_exec.executors(), segkit_fuse="opaque")
    got, want = jf(q, cos, sin), litgpt_model.apply_rope(q, cos, sin)
    assert _count(jf, ROPE_FW) == 1
    assert got.dtype == want.dtype and torch.equal(got, want)


class _NormRopeBlock(torch.nn.Module):
    """Hugging Face's Llama norm and RoPE as a model calls them (the regions dynamo inlines into its graph)."""

    def __init__(self, hidden: int, heads: int):
        from transformers.models.llama import modeling_llama

        super().__init__()
        self.llama, self.heads = modeling_llama, heads
        self.norm = modeling_llama.LlamaRMSNorm(hidden)
        self.q = torch.nn.Linear(hidden, hidden, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q(self.norm(x)).view(b, t, self.heads, -1).transpose(1, 2)
        return self.llama.apply_rotary_pos_emb(q, q * 0.5, cos, sin)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_thunderfx_claims_hf_norm_and_rope_regions_on_cuda(dtype):
    """Under thunderfx on CUDA, Hugging Face's Llama norm and RoPE regions are claimed forward and backward, and
    outputs and grads are as close to eager as stock thunderfx's. (A whole tiny LlamaForCausalLM is not used here:
    with the host's transformers, stock thunderfx itself fails on it on CUDA, in the Inductor part of the split.)"""
    pytest.importorskip("transformers")
    from tests.test_thunderfx import claims
    from thunder.dynamo import thunderfx

    torch.manual_seed(0)
    block = _NormRopeBlock(512, 8).to(device="cuda", dtype=dtype)
    with torch.no_grad():
        block.norm.weight.normal_(1.0, 0.2)
    x = torch.randn(2, 256, 512, device="cuda", dtype=dtype, requires_grad=True)
    angle = torch.arange(256.0, device="cuda")[None, :, None] * torch.rand(1, 1, 64, device="cuda")
    cos, sin = angle.cos().to(dtype), angle.sin().to(dtype)
    leaves = [x, *block.parameters()]

    def step(f):
        for t in leaves:
            t.grad = None
        q, k = f(x, cos, sin)
        ((q.float() * q.detach().float().sin()).sum() + k.float().sum()).backward()
        return [q.detach().float(), k.detach().float(), *(t.grad.float() for t in leaves)]

    want = step(block)
    errs, got = [], None
    for executors, options in ((thunder_exec.executors(), {"segkit_fuse": "opaque"}),
                               (thunder.get_default_executors(), {})):
        torch._dynamo.reset()
        cm = thunderfx(block, executors=executors, **options)
        outs = step(cm)
        errs.append(max(((g - w).abs().max() / max(1.0, w.abs().max())).item() for g, w in zip(outs, want)))
        got = got or claims(cm)
    torch._dynamo.reset()
    assert got == (1, 1, 2, 2)
    assert errs[0] <= max(2 * errs[1], 1e-5 if dtype == torch.float32 else 1e-2), errs
