"""segkit_ex under ThunderFX (``thunder.dynamo.thunderfx(fn, executors=thunder_exec.executors())``): the norm and
RoPE regions of the graphs TorchDynamo hands Thunder are claimed as thunder.jit claims the functions they were
inlined from, computed as eager computes them, and left to Thunder with a note where they are not the library's.

Pieces compile in a few seconds each; whole Hugging Face models (as shipped, their own forward) run with
``-m models``, next to stock thunderfx's error on the same step.
"""

from __future__ import annotations

import contextlib

import pytest
import torch
import torch.nn.functional as F

import thunder
import thunder_exec
from tests import model_zoo
from tests.test_thunder_exec_models import NORM_BW, NORM_FW, ROPE_BW, ROPE_FW
from thunder.dynamo import thunderfx
from thunder_exec import fx_claims


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    """Each test compiles afresh (dynamo stops recompiling a code object after a few set-ups)."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _traces(cm) -> tuple[list, list]:
    """Forward and backward execution traces of every Thunder-compiled subgraph of a thunderfx callable."""
    fns = [f for info in cm._backend.subgraph_infos for f in info.thunder_compiled_fns]
    return ([thunder.last_traces(f)[-1] for f in fns],
            [t[-1] for f in fns if (t := thunder.last_backward_traces(f))])


def claims(cm) -> tuple[int, int, int, int]:
    """(norms fw, norms bw, RoPEs fw, RoPEs bw) claimed by segkit_ex over all Thunder subgraphs (q and k count one
    RoPE each)."""
    fw, bw = _traces(cm)

    def n(traces, names):
        return sum(model_zoo.count_symbols(t, names) for t in traces)
    return n(fw, NORM_FW), n(bw, NORM_BW), n(fw, ROPE_FW), n(bw, ROPE_BW)


def notes(cm) -> str:
    """The first (interpreted) trace of every Thunder subgraph, where segkit_ex's notes are."""
    fns = [f for info in cm._backend.subgraph_infos for f in info.thunder_compiled_fns]
    return "\n".join(str(thunder.last_traces(f)[0]) for f in fns)


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
