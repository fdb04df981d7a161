"""segkit_ex under ThunderFX (``thunder.dynamo.thunderfx(fn, executors=thunder_exec.executors())``): the norm and
RoPE regions of the graphs TorchDynamo hands Thunder are claimed as thunder.jit claims the functions they were
inlined from, computed as eager computes them, and left to Thunder with a note where they are not the library's.

Pieces compile in a few seconds each; whole Hugging Face models (as shipped, their own forward) run with
``-m models``, next to stock thunderfx's error on the same step.
"""

from __future__ import annotations

import contextlib
import functools

import pytest
import torch
import torch.nn.functional as F

import thunder
import thunder_exec
from tests import model_zoo
from thunder.dynamo import thunderfx
from thunder_exec import claim_count, fx_claims


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    """Each test compiles afresh (dynamo stops recompiling a code object after a few set-ups)."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def claims(cm) -> tuple[int, int, int, int]:
    """(norms fw, norms bw, RoPEs fw, RoPEs bw) claimed by segkit_ex per executed call of every Thunder subgraph
    since compiled (thunder_exec.claim_count; q and k count one RoPE each)."""
    c = claim_count.claims(cm)
    return c["norm_fw"], c["norm_bw"], c["rope_fw"], c["rope_bw"]


def notes(cm) -> str:
    """The first (interpreted) trace of every Thunder subgraph, where segkit_ex's notes are."""
    return "\n".join(str(thunder.last_traces(f)[0]) for f in claim_count.thunder_functions(cm))


def _outputs(out) -> list[torch.Tensor]:
    return list(out) if isinstance(out, tuple) else [out]


def fx_step(fn, args, leaves, tol: float, executors=None):
    """``fn(*args)`` and the leaves' grads under thunderfx and eager: dtypes, shapes and values agree (``tol``
    relative to the largest eager value); the thunderfx callable for its traces."""
    cm = thunderfx(fn, executors=thunder_exec.executors() if executors is None else executors)
    got = []
    for f in (cm, fn):
        for t in leaves:
            t.grad = None
        outs = _outputs(f(*args))
        gen = torch.Generator().manual_seed(1)
        torch.autograd.backward(outs, [torch.randn(o.shape, generator=gen).to(o.dtype) for o in outs])
        got.append((outs, [t.grad.clone() for t in leaves]))
    (outs, grads), (want, want_grads) = got
    for g, w in zip(outs + grads, want + want_grads):
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        g, w = g.detach().float(), w.detach().float()
        assert (g - w).abs().max() <= tol * max(1.0, w.abs().max()), (g - w).abs().max()
    return cm


def _param(n, shift=1.0, dtype=torch.float32, seed=2):
    w = torch.randn(n, generator=torch.Generator().manual_seed(seed)).mul(0.3).add(shift)
    return torch.nn.Parameter(w.to(dtype))


def _x(*shape, dtype=torch.float32, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed)).to(dtype).requires_grad_(True)


def test_pattern_functions_with_the_library_literals_are_the_library_functions():
    """Each pattern function, called with the literals its ``wants`` names, computes the library's own function
    bit for bit (bf16, where every cast and rounding shows): what a region falls back to is the library's code."""
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RMSNorm
    from transformers.models.llama import modeling_llama as llama
    from transformers.models.olmo2 import modeling_olmo2 as olmo2
    from transformers.models.phi3 import modeling_phi3 as phi3
    from thunder_exec import fx_patterns

    def literals(pattern, *tensors):
        return [{**pattern.wants(*tensors), "eps": 1e-6, "unsqueeze_dim": 1}[n] for n in pattern.literal_names]

    by_name = {p.fn.__name__: p for p in fx_patterns.PATTERNS}
    x, w = _x(2, 5, 32, dtype=torch.bfloat16), _param(32, dtype=torch.bfloat16)
    for name, module in (("llama_rms_norm", llama.LlamaRMSNorm(32)), ("olmo2_rms_norm", olmo2.Olmo2RMSNorm(32)),
                         ("gemma_rms_norm", Gemma3RMSNorm(32))):
        module = module.bfloat16()
        module.weight = w
        pattern = by_name[name]
        assert torch.equal(pattern.fn(x, w, *literals(pattern, x, w)), module(x)), name
    angle = torch.arange(5.0)[None, :, None] * torch.rand(1, 1, 16, generator=torch.Generator().manual_seed(3))
    cos, sin = angle.cos().bfloat16(), angle.sin().bfloat16()
    q, k = _x(2, 4, 5, 16, dtype=torch.bfloat16, seed=1), _x(2, 2, 5, 16, dtype=torch.bfloat16, seed=2)
    for name, fn, c, s in (("llama_rope", llama.apply_rotary_pos_emb, cos, sin),
                           ("olmo2_rope", olmo2.apply_rotary_pos_emb, cos.float(), sin.float()),
                           ("partial_rope", phi3.apply_rotary_pos_emb, cos[..., :8], sin[..., :8])):
        pattern = by_name[name]
        got, want = pattern.fn(q, k, c, s, *literals(pattern, q, k, c, s)), fn(q, k, c, s)
        assert all(torch.equal(g, h) and g.dtype == h.dtype for g, h in zip(got, want)), name


def test_rms_norm_op_is_claimed():
    """nn.RMSNorm and F.rms_norm reach dynamo's graph as ``torch.rms_norm``, which Thunder 0.2.6 does not map (its
    splitter hands it to Inductor): mapped, segkit_ex claims both, forward and backward."""
    norm = torch.nn.RMSNorm(64, eps=1e-5)
    norm.weight = _param(64)
    w = _param(64, seed=3)
    x = _x(2, 8, 64)
    cm = fx_step(lambda x: F.rms_norm(norm(x), (64,), w, 1e-6), [x], [x, norm.weight, w], 1e-5)
    assert claims(cm) == (2, 2, 0, 0)


def test_hugging_face_norm_regions_are_claimed():
    """Llama's RMSNorm (x.to(fp32) ... weight * h.to(dtype)), OLMo2's (multiply, then cast) and Gemma 3's
    ((1 + weight) in fp32, type_as), inlined by dynamo: each one matched in the graph and claimed."""
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RMSNorm
    from transformers.models.llama.modeling_llama import LlamaRMSNorm
    from transformers.models.olmo2.modeling_olmo2 import Olmo2RMSNorm

    norms = [LlamaRMSNorm(32, eps=1e-6), Olmo2RMSNorm(32, eps=1e-5), Gemma3RMSNorm(32, eps=1e-6)]
    for i, (norm, shift) in enumerate(zip(norms, (1.0, 1.0, 0.0))):
        norm.weight = _param(32, shift=shift, seed=i)
    x = _x(2, 5, 32)
    cm = fx_step(lambda x: norms[2](norms[1](norms[0](x)) * 2), [x], [x, *(n.weight for n in norms)], 1e-5)
    assert claims(cm) == (3, 3, 0, 0)


def test_hugging_face_rope_regions_are_claimed():
    """Llama's apply_rotary_pos_emb (fp32), OLMo2's (bf16 q/k with fp32 tables, cast back to bf16) and Phi-3's
    partial rotary (first 8 of 16 columns, an fp32 result): q and k of each claimed, dtypes as eager's."""
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_rope
    from transformers.models.olmo2.modeling_olmo2 import apply_rotary_pos_emb as olmo2_rope
    from transformers.models.phi3.modeling_phi3 import apply_rotary_pos_emb as phi3_rope

    angle = torch.arange(5.0)[None, :, None] * torch.rand(1, 1, 16, generator=torch.Generator().manual_seed(3))
    cos, sin = angle.cos(), angle.sin()
    q, k = _x(2, 4, 5, 16, seed=1), _x(2, 2, 5, 16, seed=2)
    qb, kb = _x(2, 4, 5, 16, dtype=torch.bfloat16, seed=3), _x(2, 2, 5, 16, dtype=torch.bfloat16, seed=4)

    def fn(q, k, qb, kb):
        return (*llama_rope(q, k, cos, sin), *olmo2_rope(qb, kb, cos, sin), *phi3_rope(qb, kb, cos[..., :8], sin[..., :8]))

    cm = fx_step(fn, [q, k, qb, kb], [q, k, qb, kb], 2e-2)
    assert claims(cm) == (0, 0, 6, 6)
    assert [t.dtype for t in cm(q, k, qb, kb)] == [torch.float32] * 2 + [torch.bfloat16] * 2 + [torch.float32] * 2


def _litgpt_literals(pattern, *tensors) -> list:
    return [{"eps": 1e-6, "dim": -1, **pattern.wants(*tensors)}[n] for n in pattern.literal_names]


def test_litgpt_pattern_functions_are_litgpt_functions():
    """litgpt's RMSNorm (with and without ``add_unit_offset``) and apply_rope (4-D x, 3-D tables), as their
    pattern functions called with the literals ``wants`` names: litgpt's own results, bit for bit in bf16."""
    from litgpt.model import RMSNorm, apply_rope
    from thunder_exec import fx_patterns

    by_name = {p.fn.__name__: p for p in fx_patterns.PATTERNS}
    x, w = _x(2, 5, 32, dtype=torch.bfloat16), _param(32, dtype=torch.bfloat16)
    for name, unit_offset in (("litgpt_rms_norm", False), ("litgpt_unit_offset_rms_norm", True)):
        module = RMSNorm(32, add_unit_offset=unit_offset).bfloat16()
        module.weight = w
        pattern = by_name[name]
        assert torch.equal(pattern.fn(x, w, *_litgpt_literals(pattern, x, w)), module(x)), name
    angle = torch.arange(5.0)[None, :, None] * torch.rand(1, 1, 16, generator=torch.Generator().manual_seed(3))
    cos, sin = angle.cos().bfloat16(), angle.sin().bfloat16()
    q = _x(2, 4, 5, 16, dtype=torch.bfloat16, seed=1)
    pattern = by_name["litgpt_rope"]
    got, want = pattern.fn(q, cos, sin, *_litgpt_literals(pattern, q, cos, sin)), apply_rope(q, cos, sin)
    assert torch.equal(got, want) and got.dtype == want.dtype


def test_litgpt_norm_and_rope_regions_are_claimed():
    """litgpt's RMSNorm (plain and Gemma's unit offset) and apply_rope on q and k as litgpt's attention calls it
    (4-D, the rotary slice, 3-D tables), inlined by dynamo: each matched and claimed, forward and backward; a norm
    over another dim is left to Thunder with litgpt's note."""
    from litgpt.model import RMSNorm, apply_rope

    norms = [RMSNorm(32, eps=1e-5), RMSNorm(32, add_unit_offset=True)]
    for i, norm in enumerate(norms):
        norm.weight = _param(32, shift=1.0 - i, seed=i)
    x = _x(2, 5, 32)
    cm = fx_step(lambda x: norms[1](norms[0](x) * 2), [x], [x, *(n.weight for n in norms)], 1e-5)
    assert claims(cm) == (2, 2, 0, 0)

    angle = torch.arange(5.0)[None, :, None] * torch.rand(1, 1, 8, generator=torch.Generator().manual_seed(3))
    cos, sin = angle.cos(), angle.sin()
    q, k = _x(2, 4, 5, 16, seed=1), _x(2, 2, 5, 16, seed=2)

    def fn(q, k):
        return (torch.cat((apply_rope(q[..., :8], cos, sin), q[..., 8:]), dim=-1),
                torch.cat((apply_rope(k[..., :8], cos, sin), k[..., 8:]), dim=-1))

    cm = fx_step(fn, [q, k], [q, k], 1e-5)
    assert claims(cm) == (0, 0, 2, 2)

    torch._dynamo.reset()
    other = RMSNorm(5, dim=1)
    other.weight = _param(5)
    cm = fx_step(lambda x: other(x.transpose(1, 2)), [x], [x, other.weight], 1e-5)
    assert claims(cm) == (0, 0, 0, 0)
    assert "segkit_ex left litgpt RMSNorm to Thunder: normalizes dim 1" in notes(cm)


def _litgpt_loss_with_breaks(model):
    """litgpt's ``GPT.forward`` driven block by block with a graph break before each (what a print, a hook or a
    data-dependent branch in the loop does): dynamo records one block graph, which every block calls."""
    def loss(idx):
        cos, sin = model.cos[:idx.shape[1]].unsqueeze(0), model.sin[:idx.shape[1]].unsqueeze(0)
        x = model.transformer.wte(idx)
        for block in model.transformer.h:
            torch._dynamo.graph_break()
            x = block(x, cos, sin)
        logits = model.lm_head(model.transformer.ln_f(x))
        return (logits * logits.detach().sin()).mean()
    return loss


@functools.cache
def _litgpt_jit_claims() -> tuple[int, int, int, int]:
    r = model_zoo.claim_report("Llama-3.2-1B", "fp32", thunder_exec.executors(), claim_count.NORM_FW,
                               claim_count.NORM_BW, claim_count.ROPE_FW, claim_count.ROPE_BW, n_layer=2)
    assert not r.error, r
    return r.norms_fw, r.norms_bw, r.ropes_fw, r.ropes_bw


@pytest.mark.parametrize("breaks", [False, True], ids=["one graph", "a block graph per block"])
def test_litgpt_model_claims_what_thunder_jit_claims(breaks):
    """A 2-layer litgpt Llama-3.2-1B (64 wide, fp32) under thunderfx: every norm and RoPE call thunder.jit claims
    (5 norms, q and k of 2 attentions) claimed forward and backward, counted per executed call, where the whole
    step is one graph and where one block graph runs for both blocks (its trace shows 3 norms and 2 RoPEs); loss
    and grads within 1e-5 of eager."""
    model = model_zoo.build("Llama-3.2-1B", n_layer=2)
    idx = torch.randint(0, model_zoo.VOCAB, (model_zoo.BATCH, model_zoo.T), generator=torch.Generator().manual_seed(1))
    step = _litgpt_loss_with_breaks(model) if breaks else model_zoo._Loss(model)
    cm = thunderfx(step, executors=thunder_exec.executors())
    results = []
    for f in (cm, step):
        model.zero_grad(set_to_none=True)
        loss = f(idx)
        loss.backward()
        results.append([loss.detach(), *(p.grad.clone() for p in model.parameters())])
    err = max(((g - w).abs().max() / max(1.0, w.abs().max())).item() for g, w in zip(*results))
    assert err <= 1e-5, err
    assert claims(cm) == _litgpt_jit_claims() == (5, 5, 4, 4), notes(cm)
    once = claim_count.claims(cm, since={f: n - 1 for f, n in claim_count.calls(cm).items()})
    assert list(once.values()) == ([3, 3, 2, 2] if breaks else [5, 5, 4, 4])


class _NotLlamasNorm(torch.nn.Module):
    """Spelled as Llama's RMSNorm op for op, but the mean runs over dim 1: the pattern matches, the library's
    function it stands for does not."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = _param(32)

    def forward(self, x):
        h = x.to(torch.float32)
        variance = h.pow(2).mean(1, keepdim=True)
        h = h * torch.rsqrt(variance + 1e-6)
        return self.weight * h.to(x.dtype)


def test_a_region_segkit_does_not_compute_is_left_to_thunder_with_a_note():
    """A matched region whose literals are not the library's (a mean over dim 1), and one whose dtypes segkit's
    norm does not take (bf16 x, fp32 weight: Qwen3's q/k norms under autocast), run as written, with the note."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    other = _NotLlamasNorm()
    x = _x(2, 5, 32)
    cm = fx_step(other, [x], [x, other.weight], 1e-5)
    assert claims(cm) == (0, 0, 0, 0)
    assert ("segkit_ex left ThunderFX region llama_rms_norm to Thunder: dim is 1 where llama's code has -1"
            in notes(cm))

    torch._dynamo.reset()
    norm = LlamaRMSNorm(32)
    norm.weight = _param(32)
    xb = _x(2, 5, 32, dtype=torch.bfloat16)
    cm = fx_step(norm, [xb], [xb, norm.weight], 1e-2)
    assert claims(cm) == (0, 0, 0, 0)
    assert "segkit_ex left Hugging Face RMSNorm to Thunder: weight dtype float32 with input dtype bfloat16" in notes(cm)


def test_without_segkit_ex_the_graph_is_not_rewritten():
    """Stock executors: Thunder interprets dynamo's graph as it is (no rewrite, no note, no segkit symbol)."""
    from transformers.models.llama.modeling_llama import LlamaRMSNorm

    norm = LlamaRMSNorm(32)
    x = _x(2, 5, 32)
    fx_claims.clear_cache()
    cm = fx_step(norm, [x], [x, norm.weight], 1e-5, executors=thunder.get_default_executors())
    assert claims(cm) == (0, 0, 0, 0) and "segkit_ex" not in notes(cm)
    assert fx_claims._claiming_forward.cache_info().currsize == 0


# --------------------------------------------------------------------------- whole models, as shipped
# name -> (config class, model class, config overrides); Gemma 2 needs a sliding window for its own forward
FX_MODELS = {
    "hf-llama": ("LlamaConfig", "LlamaForCausalLM", {}),
    "hf-qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(head_dim=16)),
    "hf-mistral": ("MistralConfig", "MistralForCausalLM", dict(head_dim=16)),
    "hf-gemma": ("GemmaConfig", "GemmaForCausalLM", dict(head_dim=16)),
    "hf-gemma2": ("Gemma2Config", "Gemma2ForCausalLM", dict(head_dim=16, sliding_window=16)),
    "hf-olmo2": ("Olmo2Config", "Olmo2ForCausalLM", {}),
    "hf-phi3": ("Phi3Config", "Phi3ForCausalLM", dict(pad_token_id=0, partial_rotary_factor=0.5)),
    "hf-gpt-neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", dict(rotary_pct=0.25)),
}
# Left to Thunder on purpose, as under thunder.jit (the note is in the trace): (model, set-up) -> norms claimed.
# Qwen3's q/k norms under autocast (bf16 q/k, fp32 weight).
FX_LEFT_TO_THUNDER = {("hf-qwen3", "autocast"): 3}


def build(name: str, setup: str) -> torch.nn.Module:
    import transformers

    config_class, model_class, overrides = FX_MODELS[name]
    torch.manual_seed(0)
    cfg = getattr(transformers, config_class)(
        vocab_size=model_zoo.VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=1, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=model_zoo.T, use_cache=False, **overrides)
    cfg._attn_implementation = "eager"  # as tests/model_zoo: Thunder 0.2.6's sdpa lacks enable_gqa
    model = model_zoo._perturb(getattr(transformers, model_class)(cfg))
    return model.to(torch.bfloat16) if setup == "bf16" else model


def _calls(model, idx) -> tuple[int, int]:
    """Norm modules and attention modules the model's own forward calls (counted with hooks, eager)."""
    counts = {"norm": 0, "attn": 0}
    hooks = []
    for m in model.modules():
        name = type(m).__name__
        kind = "norm" if name.endswith(("RMSNorm", "LayerNorm")) else "attn" if name.endswith("Attention") else None
        if kind:
            hooks.append(m.register_forward_hook(lambda *_, kind=kind: counts.__setitem__(kind, counts[kind] + 1)))
    with torch.no_grad():
        model(idx)
    for h in hooks:
        h.remove()
    return counts["norm"], counts["attn"]


def model_step(name: str, setup: str, executors) -> tuple[tuple[int, int, int, int], float, tuple[int, int], str]:
    """One training step of the model as shipped (``model(idx).logits``, under bf16 autocast for "autocast") under
    thunderfx: (claims, max relative error of logits and grads against eager, eager (norm, attention) calls, the
    forward traces' text)."""
    model = build(name, setup)
    context = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if setup == "autocast" else contextlib.nullcontext
    idx = torch.randint(0, model_zoo.VOCAB, (model_zoo.BATCH, model_zoo.T), generator=torch.Generator().manual_seed(1))
    calls = _calls(model, idx)
    results = []
    cm = thunderfx(model, executors=executors)
    for f in (cm, model):
        model.zero_grad(set_to_none=True)
        with context():
            logits = f(idx).logits.float()
        (logits * logits.detach().sin()).mean().backward()
        results.append([logits.detach(), *(p.grad.float() for p in model.parameters())])
    err = max(((g - w).abs().max() / max(1.0, w.abs().max())).item() for g, w in zip(*results))
    return claims(cm), err, calls, notes(cm)


def test_llama_for_causal_lm_as_shipped():
    """The tiny LlamaForCausalLM's own forward (which thunder.jit cannot trace in transformers 5): its 3 norms and
    the RoPE of its attention claimed forward and backward, as close to eager as fp32 allows."""
    got, err, (norms, attentions), _ = model_step("hf-llama", "fp32", thunder_exec.executors())
    assert (norms, attentions) == (3, 1)
    assert got == (3, 3, 2, 2)
    assert err <= 1e-5


@pytest.mark.models
@pytest.mark.parametrize("setup", model_zoo.SETUPS)
@pytest.mark.parametrize("name", list(FX_MODELS))
def test_fx_model_matrix(name, setup):
    """Every norm and RoPE'd attention of the model claimed (but where thunder.jit leaves them to Thunder too), and
    logits + grads as close to eager as stock thunderfx's."""
    got, err, (norms, attentions), text = model_step(name, setup, thunder_exec.executors())
    torch._dynamo.reset()
    _, stock_err, _, _ = model_step(name, setup, thunder.get_default_executors())
    want_norms = FX_LEFT_TO_THUNDER.get((name, setup), norms)
    assert got == (want_norms, want_norms, 2 * attentions, 2 * attentions), text
    assert err <= max(2 * stock_err, 1e-5 if setup == "fp32" else 1e-2), (err, stock_err)
