"""Real models, built tiny, and a count of the norm / RoPE regions segkit_ex claims in their Thunder traces.

The models are the libraries' own classes (litgpt ``Config.from_name`` + ``GPT``, transformers' Llama, Qwen3,
Gemma 2 and 3, OLMo2, Mistral, Phi-3, GPT-NeoX, nanochat, Mixtral, Qwen3-MoE and Nemotron ``*ForCausalLM``) and a
nanoGPT-style block; nothing is edited. ``claim_report`` runs one training step
under thunder.jit with segkit_ex and under eager, and reports how many norm calls and RoPE'd attention calls
the model makes (counted on the eager run with module hooks) next to how many segkit symbols the forward and
backward traces hold, and whether loss and grads match.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

import thunder

VOCAB, T, BATCH = 96, 16, 2

# litgpt config name -> overrides making it tiny but keeping its structure (GQA, partial rotary, q/k norms)
LITGPT = {
    "Llama-3.2-1B": dict(n_embd=64, n_head=4, n_query_groups=2, head_size=16, intermediate_size=96),
    "Mistral-7B-v0.1": dict(n_embd=64, n_head=4, n_query_groups=1, head_size=16, intermediate_size=96),
    "Qwen3-0.6B": dict(n_embd=64, n_head=4, n_query_groups=2, head_size=16, intermediate_size=96),
    "pythia-14m": dict(n_embd=64, n_head=4, n_query_groups=4, head_size=16, intermediate_size=128),
    "phi-2": dict(n_embd=64, n_head=4, n_query_groups=4, head_size=20, intermediate_size=128),
    "OLMo-1B-hf": dict(n_embd=64, n_head=4, n_query_groups=4, head_size=16, intermediate_size=96),
}
# Hugging Face families, tiny (1 layer, hidden 64, GQA): name -> (config class, model class, config overrides)
HF = {
    "hf-llama": ("LlamaConfig", "LlamaForCausalLM", {}),
    "hf-qwen3": ("Qwen3Config", "Qwen3ForCausalLM", dict(head_dim=16)),  # per-head q/k RMSNorm
    "hf-gemma2": ("Gemma2Config", "Gemma2ForCausalLM", dict(head_dim=16, sliding_window=None)),  # (1 + weight)
    "hf-olmo2": ("Olmo2Config", "Olmo2ForCausalLM", {}),  # multiply then cast; RoPE cast back
    "hf-mistral": ("MistralConfig", "MistralForCausalLM", dict(head_dim=16)),
    "hf-phi3": ("Phi3Config", "Phi3ForCausalLM", dict(pad_token_id=0, partial_rotary_factor=0.5)),  # partial rotary
    "hf-gpt-neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM", dict(rotary_pct=0.25)),  # LayerNorm + partial rotary
    # issue 36: families whose claims once changed the numbers, and their neighbours
    "hf-nanochat": ("NanoChatConfig", "NanoChatForCausalLM", {}),  # rotate_half flips the sign; weightless norm
    "hf-mixtral": ("MixtralConfig", "MixtralForCausalLM", dict(head_dim=16, num_local_experts=4,
                                                               num_experts_per_tok=2, experts_implementation="batched_mm")),
    "hf-qwen3-moe": ("Qwen3MoeConfig", "Qwen3MoeForCausalLM", dict(head_dim=16, num_experts=4, num_experts_per_tok=2,
                                                                  moe_intermediate_size=32,
                                                                  experts_implementation="batched_mm")),
    "hf-nemotron": ("NemotronConfig", "NemotronForCausalLM", dict(head_dim=16, partial_rotary_factor=0.5)),
    "hf-gemma3": ("Gemma3TextConfig", "Gemma3ForCausalLM", dict(head_dim=16, sliding_window=None)),
}
# Families added for issue 36, checked against stock Thunder (tests/test_claims_exact.py) rather than counted
# in the claim matrix (tests/test_thunder_exec_models.py), and that check's whole family list.
HF_AGAINST_STOCK = ("hf-nanochat", "hf-mixtral", "hf-qwen3-moe", "hf-nemotron", "hf-gemma3")
HF_ISSUE36 = (*HF_AGAINST_STOCK, "hf-llama", "hf-phi3", "hf-olmo2")
MODELS = [*LITGPT, *(h for h in HF if h not in HF_AGAINST_STOCK), "nanogpt"]
SETUPS = ["fp32", "bf16", "autocast"]

NORM_CLASSES = ("RMSNorm", "LayerNorm", "NanoLayerNorm", "LlamaRMSNorm", "Qwen3RMSNorm", "Gemma2RMSNorm",
                "Olmo2RMSNorm", "MistralRMSNorm", "Phi3RMSNorm", "NanoChatRMSNorm", "MixtralRMSNorm",
                "Qwen3MoeRMSNorm", "NemotronLayerNorm1P", "Gemma3RMSNorm")
ATTENTION_CLASSES = ("CausalSelfAttention", "LlamaAttention", "Qwen3Attention", "Gemma2Attention", "Olmo2Attention",
                     "MistralAttention", "Phi3Attention", "GPTNeoXAttention", "NanoChatAttention", "MixtralAttention",
                     "Qwen3MoeAttention", "NemotronAttention", "Gemma3Attention")


class NanoLayerNorm(nn.Module):
    """nanoGPT's LayerNorm: F.layer_norm with an optional bias."""

    def __init__(self, ndim: int, bias: bool) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None

    def forward(self, x):
        return F.layer_norm(x, self.weight.shape, self.weight, self.bias, 1e-5)


class NanoBlock(nn.Module):
    def __init__(self, n_embd: int, n_head: int, bias: bool) -> None:
        super().__init__()
        self.ln_1, self.ln_2 = NanoLayerNorm(n_embd, bias), NanoLayerNorm(n_embd, bias)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=bias)
        self.c_proj = nn.Linear(n_embd, n_embd, bias=bias)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd, bias=bias), nn.GELU(), nn.Linear(4 * n_embd, n_embd, bias=bias))
        self.n_head = n_head

    def forward(self, x):
        B, T_, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q, k, v = (t.view(B, T_, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(B, T_, C)
        x = x + self.c_proj(y)
        return x + self.mlp(self.ln_2(x))


class NanoGPT(nn.Module):
    """nanoGPT's GPT at tiny size: one block with biases, one without, the final norm with a bias."""

    def __init__(self, n_embd: int = 64, n_head: int = 4) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, n_embd), nn.Embedding(T, n_embd)
        self.blocks = nn.ModuleList([NanoBlock(n_embd, n_head, True), NanoBlock(n_embd, n_head, False)])
        self.ln_f = NanoLayerNorm(n_embd, True)
        self.lm_head = nn.Linear(n_embd, VOCAB, bias=False)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def _perturb(model: nn.Module) -> nn.Module:
    """Norm weights away from 1 (a norm with unit weight hides weight bugs); every parameter random."""
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * (0.3 if p.ndim == 1 else 1 / math.sqrt(p.shape[-1])))
            if p.ndim == 1 and "norm" in name or name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                p.add_(1.0)
    return model


def build(name: str, n_layer: int = 1) -> nn.Module:
    """The model ``name`` (a litgpt config name, an ``HF`` name or "nanogpt") at tiny size with ``n_layer``
    layers (litgpt and Hugging Face), fp32, CPU."""
    torch.manual_seed(0)
    if name in LITGPT:
        from litgpt import GPT, Config

        cfg = Config.from_name(name, n_layer=n_layer, block_size=T, padded_vocab_size=VOCAB, vocab_size=VOCAB,
                               **LITGPT[name])
        model = GPT(cfg)
    elif name in HF:
        import transformers

        config_class, model_class, overrides = HF[name]
        cfg = getattr(transformers, config_class)(
            vocab_size=VOCAB, hidden_size=64, intermediate_size=96, num_hidden_layers=n_layer, num_attention_heads=4,
            num_key_value_heads=2, max_position_embeddings=T,
            use_cache=False, **overrides)  # training; Thunder cannot trace HF's DynamicCache (its empty-cache cat)
        cfg._attn_implementation = "eager"  # Thunder 0.2.6's sdpa lacks enable_gqa, which HF's sdpa path passes
        model = getattr(transformers, model_class)(cfg)
    elif name == "nanogpt":
        model = NanoGPT()
    else:
        raise KeyError(f"unknown model {name!r}; known: {MODELS}")
    return _perturb(model)


def _hf_inner(model: nn.Module) -> nn.Module | None:
    """A Hugging Face *ForCausalLM's base model (GPT-NeoX names its parts its own way); None for other models."""
    for name in ("model", "gpt_neox"):
        if hasattr(model, name):
            return getattr(model, name)
    return None


def _hf_logits(model: nn.Module, idx: torch.Tensor) -> torch.Tensor:
    """A Hugging Face *ForCausalLM's own modules, driven as LlamaModel.forward drives them (Gemma's embedding
    scale and logit soft-capping are left out: they are neither norm nor RoPE): Thunder 0.2.6 cannot trace the
    output-capturing wrapper transformers 5 puts around the model's forward (a context variable set globally)."""
    inner = _hf_inner(model)
    h = (inner.embed_tokens if hasattr(inner, "embed_tokens") else inner.embed_in)(idx)
    position_ids = torch.arange(idx.shape[1], device=idx.device)[None]
    for layer in inner.layers:
        per_type = isinstance(getattr(inner.rotary_emb, "rope_type", None), dict)  # Gemma 3: a table per attention type
        kind = getattr(layer, "attention_type", None) if per_type else None
        cos_sin = (inner.rotary_emb(h, position_ids=position_ids, layer_type=kind) if kind is not None
                   else inner.rotary_emb(h, position_ids=position_ids))
        h = layer(h, attention_mask=None, position_embeddings=cos_sin, position_ids=position_ids)
        h = h[0] if isinstance(h, tuple) else h  # Nemotron's layer returns a tuple
    norm = inner.norm if hasattr(inner, "norm") else inner.final_layer_norm
    return (model.lm_head if hasattr(model, "lm_head") else model.embed_out)(norm(h))


def loss_fn(model: nn.Module, idx: torch.Tensor) -> torch.Tensor:
    """A loss that reaches every logit (not cross_entropy: on CPU Thunder hands that to torch.compile, which
    costs ~25 s of Inductor compile per model)."""
    logits = (_hf_logits(model, idx) if _hf_inner(model) is not None else model(idx)).float()
    return (logits * logits.detach().sin()).mean()


class _Loss(nn.Module):
    """Model + loss as one module, so thunder.jit sees (and differentiates) the whole step."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, idx):
        return loss_fn(self.model, idx)


@dataclass
class ClaimReport:
    model: str
    setup: str
    norms: int            # norm calls of the eager forward
    attentions: int       # attention calls applying RoPE
    norms_fw: int         # segkit norm forward symbols in the forward execution trace
    norms_bw: int         # segkit norm backward symbols in the backward execution trace
    ropes_fw: int         # segkit RoPE forward symbols (q and k count one each)
    ropes_bw: int
    loss_err: float       # |loss - eager loss|
    grad_err: float       # max over parameters of max |g - g_eager| / max(1, max |g_eager|)
    error: str = ""       # compile / run failure, if any
    notes: tuple[str, ...] = ()  # the trace's "segkit_ex left ... to Thunder: why" notes, once each

    @property
    def all_claimed(self) -> bool:
        return (not self.error and self.norms_fw == self.norms_bw == self.norms
                and self.ropes_fw == self.ropes_bw == 2 * self.attentions)


def _eager_counts(model: nn.Module, idx: torch.Tensor, rope: bool) -> tuple[int, int]:
    counts = {"norm": 0, "attn": 0}
    hooks = []
    for m in model.modules():
        kind = "norm" if type(m).__name__ in NORM_CLASSES else "attn" if type(m).__name__ in ATTENTION_CLASSES else None
        if kind:
            hooks.append(m.register_forward_hook(lambda *_, kind=kind: counts.__setitem__(kind, counts[kind] + 1)))
    with torch.no_grad():
        loss_fn(model, idx)
    for h in hooks:
        h.remove()
    return counts["norm"], counts["attn"] if rope else 0


def _grads(step: Callable, model: nn.Module, idx: torch.Tensor, context) -> tuple[torch.Tensor, list[torch.Tensor]]:
    model.zero_grad(set_to_none=True)
    with context():
        loss = step(idx)
    loss.backward()
    return loss.detach().float(), [p.grad.float() for p in model.parameters()]


def count_symbols(trace, names: set[str]) -> int:
    """Bound symbols of ``trace`` (top level) whose symbol name is in ``names``."""
    return sum(b.sym.name in names for b in trace.bound_symbols)


def claim_report(name: str, setup: str, executors: list, norm_fw: set[str], norm_bw: set[str], rope_fw: set[str],
                 rope_bw: set[str], n_layer: int = 1, **jit_options) -> ClaimReport:
    """One training step of ``name`` under ``setup`` ("fp32", "bf16", "autocast") jitted with ``executors``
    (executor objects or their names)."""
    model = build(name, n_layer)
    if setup == "bf16":
        model = model.to(torch.bfloat16)
    context = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if setup == "autocast" else contextlib.nullcontext
    idx = torch.randint(0, VOCAB, (BATCH, T), generator=torch.Generator().manual_seed(1))
    norms, attentions = _eager_counts(model, idx, rope=name != "nanogpt")
    step = _Loss(model)
    want_loss, want_grads = _grads(step, model, idx, context)
    jm = thunder.jit(step, executors=executors, **jit_options)
    try:
        loss, grads = _grads(jm, model, idx, context)
    except Exception as e:  # a set-up that fails to compile is a result the table reports
        return ClaimReport(name, setup, norms, attentions, 0, 0, 0, 0, math.nan, math.nan, f"{type(e).__name__}: {e}"[:300])
    fw, bw = thunder.last_traces(jm)[-1], thunder.last_backward_traces(jm)[-1]
    grad_err = max(((g - w).abs().max() / max(1.0, w.abs().max())).item() for g, w in zip(grads, want_grads))
    lines = (line.strip() for line in str(thunder.last_traces(jm)[0]).splitlines())
    notes = tuple(dict.fromkeys(line.removeprefix("# ") for line in lines if line.startswith("# segkit_ex left")))
    return ClaimReport(name, setup, norms, attentions, count_symbols(fw, norm_fw), count_symbols(bw, norm_bw),
                       count_symbols(fw, rope_fw), count_symbols(bw, rope_bw), (loss - want_loss).abs().item(), grad_err,
                       notes=notes)


def markdown(reports: list[ClaimReport]) -> str:
    rows = ["| model | set-up | norms claimed fw / bw of | RoPE'd attention claimed fw / bw of | loss err | grad err | error |",
            "|---|---|---|---|---|---|---|"]
    for r in reports:
        rows.append(f"| {r.model} | {r.setup} | {r.norms_fw} / {r.norms_bw} of {r.norms} | {r.ropes_fw // 2} / "
                    f"{r.ropes_bw // 2} of {r.attentions} | {r.loss_err:.1e} | {r.grad_err:.1e} | {r.error[:80]} |")
    n = sum(r.norms for r in reports)
    a = sum(r.attentions for r in reports)
    rows.append(f"\nnorm calls claimed fw+bw: {sum(r.norms_fw + r.norms_bw for r in reports)} of {2 * n}; "
                f"RoPE'd attention calls claimed fw+bw: {sum(r.ropes_fw + r.ropes_bw for r in reports) // 2} of {2 * a}")
    return "\n".join(rows)
