"""The models of the step table (benchmarks/model_step.py): each case a declared record, built by its kind's builder
into one module whose forward returns a scalar loss, the inputs of that forward, and which of them take a grad.

litgpt's package ``__init__`` imports lightning and more; on a host with only litgpt's wheel (and PyYAML) the
model and config modules are imported without it (``import_litgpt``). The Hugging Face model is driven through its
own modules as ``LlamaModel.forward`` drives them: Thunder 0.2.6 cannot trace the output-capturing wrapper that
transformers 5 puts around the model's forward, nor the ``enable_gqa`` argument of its sdpa path (``_sdpa_repeat_kv``
expands k and v first, as transformers does where that argument is unavailable).

The "litgpt" kind is transformer blocks with a synthetic loss; "litgpt-gpt" is litgpt's ``GPT`` whole (embedding,
every block, final norm, LM head) with the cross-entropy loss litgpt's pretraining takes of its logits
(``chunked_cross_entropy``, a copy: litgpt/utils.py imports lightning), compiled with the model as one function. Its
``chunk_size`` is the case's: 0 (one cross-entropy over all rows) is what litgpt's recipe for compiling the step
(``extensions/thunder/pretrain.py``, ``forward_and_loss``, for Thunder and torch.compile alike) passes; 128, the
default of ``litgpt pretrain``, splits the logits into 128-row chunks, each its own cross-entropy in the trace.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field

import torch


@dataclass(frozen=True)
class Case:
    """One model of the table. ``kind`` picks the builder (``BUILDERS``); ``config`` is the litgpt config name or
    the Hugging Face config's widths; ``batch`` the step's batch (litgpt kinds); ``variants`` names variants that
    are not in the table by default (``Variant.default``) but that this case runs when ``--variants`` names none;
    ``cost_s`` is a rough wall time of all variants on one GPU, used only to balance ``--shard`` (compile dominates
    it); ``chunk_size`` is the "litgpt-gpt" loss's (``chunked_cross_entropy``); a case not ``default`` runs only
    where ``--case`` names it."""

    name: str
    kind: str
    config: str
    T: int
    overrides: dict = field(default_factory=dict, hash=False)
    note: str = ""
    cost_s: float = 300.0
    batch: int = 1
    variants: tuple[str, ...] = ()
    chunk_size: int = 128
    default: bool = True


@dataclass
class Built:
    """A case made real: ``model(*inputs)`` is the scalar loss; ``grad_inputs`` are the inputs whose grads count."""

    model: torch.nn.Module
    inputs: tuple
    grad_inputs: tuple[torch.Tensor, ...]
    label: str


# Hugging Face LlamaConfig at Llama-3-8B's widths (meta-llama/Meta-Llama-3-8B's config.json)
HF_LLAMA3_8B = dict(hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8,
                    vocab_size=128256, rms_norm_eps=1e-5, rope_theta=500000.0)

CASES = [
    Case("llama3-8b-x1", "litgpt", "Llama-3-8B", 4096, dict(n_layer=1), cost_s=420),
    Case("llama3-8b-x2", "litgpt", "Llama-3-8B", 4096, dict(n_layer=2), cost_s=560),
    Case("pythia-1b-x2", "litgpt", "pythia-1b", 2048, dict(n_layer=2), cost_s=300),
    Case("qwen3-8b-x1", "litgpt", "Qwen3-8B", 4096, dict(n_layer=1), note="q/k RMSNorm per head", cost_s=450),
    Case("mistral-7b-x1", "litgpt", "Mistral-7B-v0.1", 4096, dict(n_layer=1, sliding_window_size=None),
         note="sliding window off (4096 = T, same math): stock Thunder 0.2.6 fails on litgpt's sliding-window "
              "mask on CUDA (grad_forward_sdpa: Expected all inputs to have same batch_size)", cost_s=420),
    Case("hf-llama-x2", "hf-llama", "Llama-3-8B widths", 2048, dict(num_hidden_layers=2, **HF_LLAMA3_8B),
         note="transformers LlamaForCausalLM, no weights, driven through its modules (sdpa with k/v expanded)",
         cost_s=500),
    # the small-model end, where norms and RoPE are a larger share of the step; torch.compile's CUDA graphs too
    Case("llama3.2-1b-x2", "litgpt", "Llama-3.2-1B", 2048, dict(n_layer=2), batch=4, variants=("compile-graphs",),
         cost_s=360),
    Case("qwen3-0.6b-x2", "litgpt", "Qwen3-0.6B", 2048, dict(n_layer=2), batch=4, variants=("compile-graphs",),
         note="q/k RMSNorm per head", cost_s=360),
    Case("llama3.2-1b-gpt", "litgpt-gpt", "Llama-3.2-1B", 2048, batch=4, variants=("compile-graphs",), chunk_size=0,
         note="the whole model as litgpt's GPT runs it (embedding, all its blocks, final norm, LM head) and the "
              "cross-entropy on token ids, jitted together as litgpt's recipe for a compiled step does "
              "(extensions/thunder/pretrain.py: chunked_cross_entropy with chunk_size=0)", cost_s=900),
    Case("llama3.2-1b-gpt-chunked", "litgpt-gpt", "Llama-3.2-1B", 2048, batch=4, chunk_size=128, default=False,
         note="as llama3.2-1b-gpt, with litgpt pretrain's default loss chunks (64 cross-entropies of 128 rows) "
              "inside the jitted function: the most a tracing compiler's first step has to take", cost_s=1500),
]


def import_litgpt():
    """litgpt.model and litgpt.config; without lightning installed, skipping litgpt/__init__ and the checkpoint
    converter model.py imports a helper from (unused for building and training a model)."""
    try:
        return importlib.import_module("litgpt.model"), importlib.import_module("litgpt.config")
    except ImportError:
        pass
    for name in [n for n in sys.modules if n == "litgpt" or n.startswith("litgpt.")]:
        del sys.modules[name]
    spec = importlib.util.find_spec("litgpt")
    package = types.ModuleType("litgpt")
    package.__path__ = list(spec.submodule_search_locations)
    sys.modules["litgpt"] = package
    scripts = types.ModuleType("litgpt.scripts")
    scripts.__path__ = []
    converter = types.ModuleType("litgpt.scripts.convert_hf_checkpoint")

    def qkv_reassemble(*args, **kwargs):
        raise RuntimeError("litgpt's checkpoint converter is not available on this host")

    converter.qkv_reassemble = qkv_reassemble
    sys.modules.update({"litgpt.scripts": scripts, "litgpt.scripts.convert_hf_checkpoint": converter})
    return importlib.import_module("litgpt.model"), importlib.import_module("litgpt.config")


def mean_sin(y: torch.Tensor) -> torch.Tensor:
    """mean(sin(y)) in fp32: a loss whose grad (cos y) reaches every element. Not mean(y^2): right after an RMSNorm
    of unit weight that is constant, and every grad before the norm would be rounding noise. No ``detach``: Thunder
    0.2.6 runs ``torch.detach`` outside its nvFuser regions and still differentiates the detached branch (a full
    fp32 grad written, then dropped by ``detach_vjp``), a cost of the loss that no model's step has."""
    return y.float().sin().mean()


class Blocks(torch.nn.Module):
    """litgpt's transformer blocks as GPT runs them (rope tables fp32, (1, T, n)), and a scalar loss."""

    def __init__(self, model_mod, cfg) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(model_mod.Block(cfg, i) for i in range(cfg.n_layer))
        self.norm = cfg.norm_class(cfg.n_embd, eps=cfg.norm_eps)

    def forward(self, x, cos, sin):
        for block in self.blocks:
            x = block(x, cos, sin)
        return mean_sin(self.norm(x))


def build_litgpt(case: Case, device: str, dtype: torch.dtype) -> Built:
    model_mod, config_mod = import_litgpt()
    cfg = config_mod.Config.from_name(case.config, block_size=case.T, **case.overrides)
    torch.manual_seed(0)
    with torch.device(device):
        model = Blocks(model_mod, cfg).to(dtype)
    cos, sin = rope_tables(model_mod, cfg, case.T, device)
    x = torch.randn(case.batch, case.T, cfg.n_embd, device=device, dtype=dtype, requires_grad=True)
    return Built(model, (x, cos[None], sin[None]), (x,), _label(case, f"{case.config} x{cfg.n_layer}"))


def rope_tables(model_mod, cfg, T: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin (T, rope_n_elem), fp32, as litgpt's GPT builds them for ``cfg`` (its rope base, e.g. 500000 for
    Llama 3, and its RoPE adjustments): ``GPT.rope_cache`` itself, on the config and length alone."""
    return model_mod.GPT.rope_cache(types.SimpleNamespace(config=cfg, max_seq_length=T), device=torch.device(device))


def _label(case: Case, model: str) -> str:
    """The row's label: the model, T, and the batch where it is not 1."""
    return f"{model} T={case.T}" + (f" bs{case.batch}" if case.batch != 1 else "")


def chunked_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, chunk_size: int = 128,
                          ignore_index: int = -100) -> torch.Tensor:
    """The loss litgpt's pretraining computes (litgpt.utils.chunked_cross_entropy, 0.5.13, on unchunked logits), in
    its op sequence (split rows into ``chunk_size``, per-token cross-entropy, cat, sum, over the targets counted;
    ``chunk_size`` 0: one cross-entropy, mean over the targets counted), so a trace of it is what a litgpt user's
    trace holds. Written here: litgpt.utils imports lightning, which the GPU host lacks."""
    rows, labels = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
    if chunk_size == 0:
        return torch.nn.functional.cross_entropy(rows, labels, ignore_index=ignore_index)
    per_token = torch.cat([torch.nn.functional.cross_entropy(x, t, ignore_index=ignore_index, reduction="none")
                           for x, t in zip(rows.split(chunk_size), labels.split(chunk_size))])
    return per_token.sum() / (labels != ignore_index).sum().clamp(min=1)


class GPTLoss(torch.nn.Module):
    """litgpt's ``GPT`` whole and litgpt's pretraining loss on its logits, split into ``chunk_size`` rows (0: none)."""

    def __init__(self, gpt: torch.nn.Module, chunk_size: int = 128) -> None:
        super().__init__()
        self.gpt = gpt
        self.chunk_size = chunk_size

    def forward(self, idx, targets):
        return chunked_cross_entropy(self.gpt(idx), targets, self.chunk_size)


def build_litgpt_gpt(case: Case, device: str, dtype: torch.dtype) -> Built:
    """litgpt's ``GPT`` in ``dtype``, its rope cache rebuilt in fp32 after the cast (litgpt builds it in fp32, and
    the blocks cases take it so), on token ids and next-token targets drawn from seed 0; no input takes a grad."""
    model_mod, config_mod = import_litgpt()
    cfg = config_mod.Config.from_name(case.config, block_size=case.T, **case.overrides)
    torch.manual_seed(0)
    with torch.device(device):
        gpt = model_mod.GPT(cfg).to(dtype)
    gpt.max_seq_length = case.T
    gpt.reset_parameters()  # the rope cache alone: cos and sin fp32 again
    tokens = torch.randint(0, cfg.vocab_size, (case.batch, case.T + 1), device=device)
    idx, targets = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    loss = "loss" if case.chunk_size == 0 else f"loss in {case.chunk_size}-row chunks"
    return Built(GPTLoss(gpt, case.chunk_size), (idx, targets), (),
                 _label(case, f"{case.config} GPT x{cfg.n_layer} + {loss}"))


def _sdpa_repeat_kv(module, query, key, value, attention_mask, dropout=0.0, scaling=None, is_causal=None, **kwargs):
    """transformers' sdpa attention without ``enable_gqa`` (which Thunder 0.2.6's sdpa lacks): k and v expanded to
    the query heads first, causal, no mask (the step has no padding)."""
    from transformers.integrations.sdpa_attention import repeat_kv

    if attention_mask is not None:
        raise ValueError("the step table's sdpa attention takes no attention mask (causal only)")
    key, value = repeat_kv(key, module.num_key_value_groups), repeat_kv(value, module.num_key_value_groups)
    out = torch.nn.functional.scaled_dot_product_attention(query, key, value, dropout_p=dropout, scale=scaling,
                                                           is_causal=query.shape[2] > 1)
    return out.transpose(1, 2).contiguous(), None


class HFCausalLMLoss(torch.nn.Module):
    """A Hugging Face ``*ForCausalLM``'s modules driven as ``LlamaModel.forward`` drives them, and a scalar loss."""

    def __init__(self, lm: torch.nn.Module) -> None:
        super().__init__()
        self.lm = lm

    def forward(self, idx):
        inner = self.lm.model
        h = inner.embed_tokens(idx)
        position_ids = torch.arange(idx.shape[1], device=idx.device)[None]
        cos_sin = inner.rotary_emb(h, position_ids=position_ids)
        for layer in inner.layers:
            h = layer(h, attention_mask=None, position_embeddings=cos_sin, position_ids=position_ids)
            h = h[0] if isinstance(h, tuple) else h
        return mean_sin(self.lm.lm_head(inner.norm(h)))


def build_hf_llama(case: Case, device: str, dtype: torch.dtype) -> Built:
    import transformers

    transformers.AttentionInterface.register("sdpa_repeat_kv", _sdpa_repeat_kv)
    cfg = transformers.LlamaConfig(max_position_embeddings=case.T, use_cache=False, **case.overrides)
    cfg._attn_implementation = "sdpa_repeat_kv"
    torch.manual_seed(0)
    with torch.device(device):
        model = HFCausalLMLoss(transformers.LlamaForCausalLM(cfg)).to(dtype)
    idx = torch.randint(0, cfg.vocab_size, (1, case.T), device=device)
    return Built(model, (idx,), (), f"HF LlamaForCausalLM ({case.config}) x{cfg.num_hidden_layers} T={case.T}")


BUILDERS: dict[str, Callable[[Case, str, torch.dtype], Built]] = {
    "litgpt": build_litgpt, "litgpt-gpt": build_litgpt_gpt, "hf-llama": build_hf_llama}


def build(case: Case, device: str, dtype: torch.dtype = torch.bfloat16) -> Built:
    """``case`` on ``device`` in ``dtype``, its weights drawn from seed 0."""
    if case.kind not in BUILDERS:
        raise ValueError(f"case {case.name!r}: unknown kind {case.kind!r}; known: {sorted(BUILDERS)}")
    return BUILDERS[case.kind](case, device, dtype)


def select(names: list[str] | None) -> list[Case]:
    """The cases named (every ``default`` one when ``names`` is empty), in table order; an unknown name is an error
    naming the known."""
    known = {c.name: c for c in CASES}
    unknown = [n for n in names or () if n not in known]
    if unknown:
        raise SystemExit(f"model_step: unknown case {', '.join(unknown)}; known: {', '.join(known)}")
    return [c for c in CASES if c.name in names] if names else [c for c in CASES if c.default]


def shard(cases: list[Case], index: int, count: int) -> list[Case]:
    """Shard ``index`` of ``count``: cases longest first (``cost_s``) onto the least loaded shard, in table order."""
    loads, owner = [0.0] * count, {}
    for c in sorted(cases, key=lambda c: -c.cost_s):
        i = loads.index(min(loads))
        loads[i] += c.cost_s
        owner[c.name] = i
    return [c for c in cases if owner[c.name] == index]
