"""Benchmark cases: which configs each suite sweeps, their inputs and float64 references (cached per case),
and the bytes each workload must move at least (the floor the bandwidth column is measured against)."""

from __future__ import annotations

import functools

import torch

import fusions
from benchmarks.executors import EXECUTORS

SWEEP = [f"sweep_{r}x{h}" for r in (4096, 16384, 65536) for h in (256, 1024, 4096, 8192, 16384)]
NORM_SHAPES = SWEEP + ["mixorder_576000x384", "llama2_7b", "llama2_13b", "llama2_70b"]
FP32_SHAPES = ["sweep_16384x4096", "mixorder_576000x384", "llama2_13b"]
TWO_STAGE_SHAPES = ["mixorder_576000x384", "sweep_65536x1024", "sweep_65536x4096"]  # rows >= 64k: partials pay off
ROPE_SHAPES = [c for c in fusions.get("qkv_split_rope_fwd").configs if not c.endswith("_tiny")]
ADD_NORM_SHAPES = [c for c in fusions.get("add_rmsnorm_fwd").configs if not c.endswith("_tiny")]
QK_NORM_ROPE_SHAPES = [c for c in fusions.get("qk_norm_rope_fwd").configs if not c.endswith("_tiny")]
AMAX_SHAPES = [c for c in fusions.get("fp8_amax").configs if not c.endswith("_tiny")]


def cases(shapes: list[str], extra: dict[str, list] | None = None, fp32: list[str] | None = None,
          executors: tuple[str, ...] = EXECUTORS) -> list:
    """(shape, dtype, *extra, executor) tuples, executor varying fastest so cached inputs are reused."""
    out = []
    for shape in shapes:
        for dtype in [torch.bfloat16] + ([torch.float32] if fp32 and shape in fp32 else []):
            for combo in _product(extra or {}):
                out += [(shape, dtype, *combo, ex) for ex in executors]
    return out


def _product(extra: dict[str, list]) -> list[tuple]:
    combos = [()]
    for values in extra.values():
        combos = [c + (v,) for c in combos for v in values]
    return combos


@functools.lru_cache(maxsize=1)
def case_data(spec_name: str, shape: str, dtype: torch.dtype):
    """(config, inputs on the GPU, float64 references); one case kept at a time (the big ones are GBs)."""
    torch.cuda.empty_cache()
    spec = fusions.get(spec_name)
    cfg = spec.config(shape, dtype)
    inputs = spec.make_inputs(cfg, device="cuda")
    return cfg, inputs, spec.reference(inputs, cfg), spec.outputs


def norm_bytes(kind: str, direction: str, cfg) -> int:
    """The floor of the ``kind`` ("rmsnorm" / "layernorm") norm's ``direction`` ("fwd" / "bwd"; the forward as
    the forward suite runs it, without autograd): its spec's ``bytes_floor``."""
    return fusions.get(f"{kind}_{'bwd' if direction == 'bwd' else 'fwd'}").bytes_floor(cfg)


def add_norm_bytes(kind: str, direction: str, cfg) -> int:
    """The floor of the residual add + ``kind`` norm's ``direction`` ("fwd": the training forward, statistics
    written; "bwd"): its spec's ``bytes_floor``."""
    return fusions.get(f"add_{kind}_{direction}").bytes_floor(cfg)


def rope_bytes(cfg, mode: str) -> int:
    """The floor of the qkv split + RoPE ``mode`` ("forward" / "backward"): its spec's ``bytes_floor``."""
    return fusions.get("qkv_split_rope_bwd" if mode == "backward" else "qkv_split_rope_fwd").bytes_floor(cfg)


def qk_norm_rope_bytes(cfg, mode: str) -> int:
    """The floor of QK-norm + RoPE's ``mode`` ("forward" / "backward"): its spec's ``bytes_floor``."""
    return fusions.get("qk_norm_rope_bwd" if mode == "backward" else "qk_norm_rope_fwd").bytes_floor(cfg)


def amax_bytes(cfg) -> int:
    """The floor of the fp8 amax statistics: fusions' fp8_amax ``bytes_floor``."""
    return fusions.get("fp8_amax").bytes_floor(cfg)
