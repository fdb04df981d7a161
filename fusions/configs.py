"""Named workload configurations (shapes, head counts, eps, dtype), each with a tiny twin for CPU tests."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import torch


def unit_row_dims(shape) -> list[int]:
    """x's size-1 row dims but one where all are: nvFuser takes a size-1 dim for a broadcast dim, and a dw summed
    over one is scheduled as separate reductions instead of the one inner-outer kernel, so the norm fusions of a
    batch-1 step are defined, or squeezed, without them."""
    dims = [d for d in range(len(shape) - 1) if shape[d] == 1]
    return dims if len(dims) < len(shape) - 1 else dims[1:]


@dataclass(frozen=True)
class NormConfig:
    """x of ``shape`` (2-D rows x hidden, or 3-D batch x seq x hidden), normalised over the last dim."""

    name: str
    shape: tuple[int, ...]
    dtype: torch.dtype = torch.bfloat16
    eps: float = 1e-5
    bias: bool = True
    param_dtype: torch.dtype | None = None  # weight / bias (and dw / db) dtype when it differs from x's (fp32 params)
    round_normed: bool = False  # RMSNorm as Hugging Face's Llama: x * rstd rounded to x's dtype before the weight

    def __post_init__(self) -> None:
        if len(self.shape) not in (2, 3) or any(s < 1 for s in self.shape):
            raise ValueError(f"{self.name}: norm shape {self.shape} must be 2-D or 3-D with positive sizes")
        if self.eps <= 0:
            raise ValueError(f"{self.name}: eps must be positive, got {self.eps}")

    @property
    def hidden(self) -> int:
        return self.shape[-1]

    @property
    def rows(self) -> int:
        return math.prod(self.shape[:-1])

    @property
    def weight_dtype(self) -> torch.dtype:
        return self.param_dtype or self.dtype


@dataclass(frozen=True)
class RopeConfig:
    """litgpt attention geometry: qkv is (batch, T, (n_head + 2 n_query_groups) head_size).

    ``rounding`` (16-bit dtypes): "eager" rounds each RoPE product and their sum to the dtype, as eager PyTorch
    computes them (eager's bits: what segkit_ex's claims need); "fp32" computes in fp32 and rounds once at the
    output, as torch.compile and Thunder's nvFuser fusions do. The conversions cost: docs/design/rope_fwd.md."""

    name: str
    batch: int
    n_embd: int
    n_head: int
    n_query_groups: int
    head_size: int
    rope_n_elem: int
    block_size: int
    dtype: torch.dtype = torch.bfloat16
    #: keyed only when not the default: tunings stored before the field existed keep their signature (spec.signature)
    rounding: str = field(default="eager", metadata={"signature": "when_not_default"})

    def __post_init__(self) -> None:
        if self.rounding not in ROPE_ROUNDINGS:
            raise ValueError(f"{self.name}: rounding must be one of {ROPE_ROUNDINGS}, got {self.rounding!r}")
        if self.n_head * self.head_size != self.n_embd:
            raise ValueError(f"{self.name}: n_head {self.n_head} x head_size {self.head_size} != n_embd {self.n_embd}")
        if self.n_query_groups < 1 or self.n_head % self.n_query_groups:
            raise ValueError(f"{self.name}: n_query_groups {self.n_query_groups} must divide n_head {self.n_head}")
        if not 0 < self.rope_n_elem <= self.head_size or self.rope_n_elem % 2:
            raise ValueError(f"{self.name}: rope_n_elem {self.rope_n_elem} must be even and in (0, head_size {self.head_size}]")
        if self.batch < 1 or self.block_size < 1:
            raise ValueError(f"{self.name}: batch and block_size must be positive")

    @property
    def q_per_kv(self) -> int:
        return self.n_head // self.n_query_groups

    @property
    def qkv_width(self) -> int:
        return (self.n_head + 2 * self.n_query_groups) * self.head_size

    @property
    def T(self) -> int:
        return self.block_size


ROPE_ROUNDINGS = ("eager", "fp32")
AMAXES = ("row", "col", "all")
AMAX_VARIANTS = ("direct", "inner_outer", "inner_outer_rows", "two_stage")


@dataclass(frozen=True)
class ApplyRopeConfig:
    """RoPE on x of ``shape`` (B, H, T, n): the whole last dim rotated (a partial rotary passes its slice), cos and
    sin of shape (cos_batch, T, n) broadcast over H, in ``table_dtype`` (fp32 tables with 16-bit x are common)."""

    name: str
    shape: tuple[int, int, int, int]
    cos_batch: int = 1
    dtype: torch.dtype = torch.bfloat16
    table_dtype: torch.dtype | None = None
    out_dtype: torch.dtype | None = None  # y (and dy): x's dtype unless given (HF promotes bf16 q with fp32 tables)
    # x's (dy's) memory layout as nvFuser's stride_order where it arrives permuted (q from cuDNN's attention in
    # (B, T, H, n) order: (3, 1, 2, 0)), so that the fusion reads it in place; None: contiguous
    x_stride_order: tuple[int, int, int, int] | None = None

    def __post_init__(self) -> None:
        if len(self.shape) != 4 or any(s < 1 for s in self.shape) or self.shape[-1] % 2:
            raise ValueError(f"{self.name}: RoPE shape {self.shape} must be (B, H, T, n) with an even n")
        if self.x_stride_order is not None and sorted(self.x_stride_order) != [0, 1, 2, 3]:
            raise ValueError(f"{self.name}: x_stride_order {self.x_stride_order} must be a permutation of 0..3")
        if self.cos_batch not in (1, self.shape[0]):
            raise ValueError(f"{self.name}: cos batch {self.cos_batch} must be 1 or the batch {self.shape[0]}")

    @property
    def tables(self) -> torch.dtype:
        return self.table_dtype or self.dtype

    @property
    def out(self) -> torch.dtype:
        return self.out_dtype or self.dtype


def apply_rope_configs() -> dict[str, ApplyRopeConfig]:
    """litgpt-shaped q (B, n_head, T, rope_n_elem); tables fp32 as litgpt keeps them."""
    cfgs = [ApplyRopeConfig("Llama-3-8B_q", (1, 32, 4096, 128), table_dtype=torch.float32),
            # q (and dq) as segkit's cuDNN attention lays them out, (B, T, H, n) in memory: read in place
            ApplyRopeConfig("Llama-3-8B_q_bthd", (1, 32, 4096, 128), table_dtype=torch.float32,
                            x_stride_order=(3, 1, 2, 0)),
            ApplyRopeConfig("phi-2_q", (1, 32, 2048, 32), table_dtype=torch.float32),
            ApplyRopeConfig("hf-Llama-3-8B_q", (2, 32, 4096, 128), cos_batch=2),  # HF: tables per position_ids row
            # HF under autocast: bf16 q, fp32 tables, fp32 result
            ApplyRopeConfig("hf-Llama-3-8B_q_autocast", (2, 32, 4096, 128), 2, torch.bfloat16, torch.float32,
                            torch.float32),
            # the step table's small models (T=2048, batch 4): q and k of Llama-3.2-1B and Qwen3-0.6B
            *(ApplyRopeConfig(f"{model}_{part}", (4, heads, 2048, size), table_dtype=torch.float32)
              for model, size, parts in (("Llama-3.2-1B", 64, (("q", 32), ("k", 8))),
                                         ("Qwen3-0.6B", 128, (("q", 16), ("k", 8))))
              for part, heads in parts)]
    return with_tiny(cfgs, lambda c: replace(c, name=c.name + "_tiny", shape=(2, 3, 8, min(c.shape[-1], 16))))


@dataclass(frozen=True)
class AmaxConfig:
    """x of shape ``(batch, rows, cols)`` (``(rows, cols)`` when batch is 1); ``amaxes`` picks the outputs (row: over
    the last dim, col: over all leading dims, all: over everything) and ``variant`` the formulation
    (fusions/fp8_amax.py)."""

    name: str
    rows: int
    cols: int
    dtype: torch.dtype = torch.bfloat16
    batch: int = 1
    amaxes: tuple[str, ...] = AMAXES
    variant: str = "direct"
    block_rows: int = 128  # rows per partial column amax of the two_stage variant (its gcd with the row count)

    def __post_init__(self) -> None:
        if self.rows < 1 or self.cols < 1 or self.batch < 1:
            raise ValueError(f"{self.name}: rows, cols and batch must be positive")
        if not self.amaxes or any(a not in AMAXES for a in self.amaxes) or len(set(self.amaxes)) != len(self.amaxes):
            raise ValueError(f"{self.name}: amaxes {self.amaxes} must be distinct names out of {AMAXES}")
        if self.variant not in AMAX_VARIANTS:
            raise ValueError(f"{self.name}: variant {self.variant!r} is not one of {AMAX_VARIANTS}")

    @property
    def shape(self) -> tuple[int, ...]:
        return (self.batch, self.rows, self.cols) if self.batch > 1 else (self.rows, self.cols)

    @property
    def lead(self) -> int:
        """Rows of x seen as a matrix: every dim but the last."""
        return self.batch * self.rows


def with_tiny(configs: list, tiny) -> dict:
    """Name -> config for each config and its ``<name>_tiny`` twin built by ``tiny(cfg)``."""
    out = {}
    for cfg in configs:
        out[cfg.name] = cfg
        t = tiny(cfg)
        out[t.name] = t
    return out


def norm_configs(eps: float, bias: bool) -> dict[str, NormConfig]:
    cfgs = [
        NormConfig("nanogpt", (16, 128, 1600), eps=eps, bias=bias),
        NormConfig("mixorder_576000x384", (576000, 384), eps=eps, bias=bias),
        NormConfig("llama2_7b", (2, 4096, 4096), eps=eps, bias=bias),
        NormConfig("llama2_13b", (2, 4096, 5120), eps=eps, bias=bias),
        NormConfig("llama2_70b", (2, 4096, 8192), eps=eps, bias=bias),
        # the step table's small models (benchmarks/model_cases.py: T=2048, batch 4): their block norms and Qwen3's
        # per-head q / k norms (16 query heads, 8 key-value heads of 128), by name for ``segkit tune``
        NormConfig("llama3.2_1b", (4, 2048, 2048), eps=eps, bias=bias),
        NormConfig("qwen3_0.6b", (4, 2048, 1024), eps=eps, bias=bias),
        NormConfig("qwen3_0.6b_q", (4 * 2048 * 16, 128), eps=eps, bias=bias),
        NormConfig("qwen3_0.6b_k", (4 * 2048 * 8, 128), eps=eps, bias=bias),
    ]
    cfgs += [NormConfig(f"sweep_{r}x{h}", (r, h), eps=eps, bias=bias)
             for r in (4096, 16384, 65536) for h in (256, 1024, 4096, 8192, 16384)]

    def tiny(c: NormConfig) -> NormConfig:
        shape = (2, 8, 64) if len(c.shape) == 3 else (32, min(c.hidden, 96))
        return replace(c, name=c.name + "_tiny", shape=shape)

    return with_tiny(cfgs, tiny)


#: The shapes the residual add + norm and the backward from the output run at: the seed shape, Llama-3-8B's block
#: norm in the step table (batch 1, T=4096: ``sweep_4096x4096``'s shape, by its model's name), Qwen3-0.6B's, and
#: nanoGPT's (the pre-norm layer norm block)
ADD_NORM_SHAPES = {"mixorder_576000x384": "mixorder_576000x384", "llama3_8b": "sweep_4096x4096",
                   "qwen3_0.6b": "qwen3_0.6b", "nanogpt": "nanogpt"}


def block_norm_configs(eps: float, bias: bool) -> dict[str, NormConfig]:
    """``ADD_NORM_SHAPES`` out of ``norm_configs`` (each renamed where its model names it), with their tiny twins."""
    base = norm_configs(eps, bias)
    out = {}
    for name, source in ADD_NORM_SHAPES.items():
        out[name] = replace(base[source], name=name)
        out[name + "_tiny"] = replace(base[source + "_tiny"], name=name + "_tiny")
    return out


_LITGPT = {  # n_embd, n_head, n_query_groups, head_size, rope_n_elem, block_size
    "Llama-2-7b-hf": (4096, 32, 32, 128, 128, 4096),
    "Llama-2-13b-hf": (5120, 40, 40, 128, 128, 4096),
    "Llama-2-70b-hf": (8192, 64, 8, 128, 128, 4096),
    "Llama-3-8B": (4096, 32, 8, 128, 128, 8192),
    "Llama-3-70B": (8192, 64, 8, 128, 128, 8192),
    "Mistral-7B": (4096, 32, 8, 128, 128, 4096),
    "phi-2": (2560, 32, 32, 80, 32, 2048),
}


def rope_configs() -> dict[str, RopeConfig]:
    cfgs = [RopeConfig(f"{name}_bs{bs}", bs, *geom) for name, geom in _LITGPT.items() for bs in (1, 2)]

    def tiny(c: RopeConfig) -> RopeConfig:
        mha = c.n_query_groups == c.n_head
        groups = 4 if mha else 2
        n_head = groups * (1 if mha else min(c.q_per_kv, 4))
        head_size = 16 if c.rope_n_elem == c.head_size else 20
        rope = head_size if c.rope_n_elem == c.head_size else 8
        return replace(c, name=c.name + "_tiny", n_embd=n_head * head_size, n_head=n_head, n_query_groups=groups,
                       head_size=head_size, rope_n_elem=rope, block_size=16)

    return with_tiny(cfgs, tiny)


def amax_configs() -> dict[str, AmaxConfig]:
    cfgs = [AmaxConfig(f"{r}x{c}", r, c) for r, c in ((4096, 4096), (16384, 8192), (8192, 28672))]
    out = with_tiny(cfgs, lambda c: replace(c, name=c.name + "_tiny", rows=48, cols=80))
    seed = AmaxConfig("seed_12x34x56", 34, 56, batch=12)  # pytorch/pytorch#136267's 3-D example: already tiny
    return {**out, **with_tiny([seed], lambda c: replace(c, name=c.name + "_tiny"))}


QK_NORMS = ("head", "width")


@dataclass(frozen=True)
class QKNormRopeConfig:
    """QK-norm + RoPE from the q and k projections (B, T, n_head * head_dim) and (B, T, n_kv_heads * head_dim):
    RMSNorm with weight ``weight_offset + w``, then the head split to (B, heads, T, head_dim) and NeoX RoPE over the
    whole head. ``norm``: "head" normalises each head over head_dim (Qwen3, Gemma3: w of head_dim), "width" the
    whole projected width before the split (OLMo2: w of heads * head_dim). cos / sin are (cos_batch, T, head_dim)
    in ``table_dtype`` (Hugging Face: one table per position_ids row, in the model's dtype)."""

    name: str
    batch: int
    T: int
    n_head: int
    n_kv_heads: int
    head_dim: int
    dtype: torch.dtype = torch.bfloat16
    eps: float = 1e-6
    norm: str = "head"
    weight_offset: float = 0.0  # Gemma3: 1.0 (its weight is stored as w, applied as 1 + w)
    cos_batch: int = 1
    table_dtype: torch.dtype | None = None
    param_dtype: torch.dtype | None = None  # the norm weights' (and dw's) dtype when it differs from q's

    def __post_init__(self) -> None:
        if min(self.batch, self.T, self.n_head, self.n_kv_heads, self.head_dim) < 1 or self.head_dim % 2:
            raise ValueError(f"{self.name}: batch, T, heads must be positive and head_dim {self.head_dim} even")
        if self.norm not in QK_NORMS:
            raise ValueError(f"{self.name}: norm must be one of {QK_NORMS}, got {self.norm!r}")
        if self.cos_batch not in (1, self.batch):
            raise ValueError(f"{self.name}: cos batch {self.cos_batch} must be 1 or the batch {self.batch}")
        if self.eps <= 0:
            raise ValueError(f"{self.name}: eps must be positive, got {self.eps}")

    def heads(self, part: str) -> int:
        """The head count of ``part`` ("q" or "k")."""
        return self.n_head if part == "q" else self.n_kv_heads

    def weight_size(self, part: str) -> int:
        return self.head_dim if self.norm == "head" else self.heads(part) * self.head_dim

    @property
    def tables(self) -> torch.dtype:
        return self.table_dtype or self.dtype

    @property
    def weight_dtype(self) -> torch.dtype:
        return self.param_dtype or self.dtype


def qk_norm_rope_configs() -> dict[str, QKNormRopeConfig]:
    """The models' geometry and eps as litgpt's name_to_config lists them: Qwen3-0.6B (16 q heads, 8 kv heads of
    128; hidden 1024) at the step table's T=2048 batch 4 and at T=4096 batch 1, Qwen3-8B (32 / 8 of 128),
    Gemma-3-1b (4 / 1 of 256, weight 1 + w) and OLMo-2-1124-7B (32 / 32 of 128, the norm over the 4096-wide
    projection); bf16 tables, per batch row where batch > 1 as Hugging Face's rotary embedding returns them."""
    cfgs = [QKNormRopeConfig("Qwen3-0.6B", 4, 2048, 16, 8, 128, cos_batch=4),
            QKNormRopeConfig("Qwen3-0.6B_T4096", 1, 4096, 16, 8, 128, cos_batch=1),
            QKNormRopeConfig("Qwen3-8B", 1, 4096, 32, 8, 128, cos_batch=1),
            QKNormRopeConfig("Gemma3-1B", 4, 2048, 4, 1, 256, eps=1e-5, weight_offset=1.0, cos_batch=4),
            QKNormRopeConfig("OLMo2-7B", 1, 4096, 32, 32, 128, norm="width", cos_batch=1)]

    def tiny(c: QKNormRopeConfig) -> QKNormRopeConfig:
        kv = 1 if c.n_kv_heads == 1 else (2 if c.n_kv_heads < c.n_head else 4)
        return replace(c, name=c.name + "_tiny", batch=2, T=8, n_head=4, n_kv_heads=kv, head_dim=16,
                       cos_batch=1 if c.cos_batch == 1 else 2)

    return with_tiny(cfgs, tiny)
