"""FusionDefinition builders for segkit's workloads, with named configs and float64 references.

    spec = fusions.get("layernorm_bwd")
    fd = spec.build("nanogpt_tiny")            # recorded segkit fusion
    inputs = spec.make_inputs("nanogpt_tiny")  # name -> tensor, in define order

The specs: the norms (``rmsnorm_fwd`` / ``_bwd``, ``layernorm_fwd`` / ``_bwd``), the residual add + norm
(``add_rmsnorm_fwd`` / ``_bwd``, ``add_layernorm_fwd`` / ``_bwd``), the norm backward from its output
(``rmsnorm_bwd_from_output``, ``layernorm_bwd_from_output``), RoPE (``rope_fwd`` / ``_bwd``), litgpt's qkv split +
RoPE (``qkv_split_rope_fwd`` / ``_bwd``), QK-norm + RoPE (``qk_norm_rope_fwd`` / ``_bwd``: Qwen3, Gemma3, OLMo2) and
the fp8 amaxes (``fp8_amax``); ``names()`` lists them.
"""

from __future__ import annotations

from fusions import (
    add_layernorm_bwd,
    add_layernorm_fwd,
    add_rmsnorm_bwd,
    add_rmsnorm_fwd,
    fp8_amax,
    layernorm_bwd,
    layernorm_bwd_from_output,
    layernorm_fwd,
    qk_norm_rope_bwd,
    qk_norm_rope_fwd,
    qkv_split_rope_bwd,
    qkv_split_rope_fwd,
    rmsnorm_bwd,
    rmsnorm_bwd_from_output,
    rmsnorm_fwd,
    rope_bwd,
    rope_fwd,
)
# the multi-fusion formulations register themselves (fusions.formulations) on import
from fusions import (  # noqa: F401
    fp8_amax_bit_tiles, fp8_amax_bits, fp8_amax_tiles, norm_bwd_rows, norm_bwd_two_stage, rope_bwd_sums_then_cat)
from fusions import norm_fwd_rows  # noqa: F401  (the forward rows formulation)
from fusions import qkv_rope_bwd_slices  # noqa: F401
from fusions.spec import FusionSpec
from segkit import workloads
from segkit.args import checked
from segkit.errors import UnknownNameError

_SPECS: dict[str, FusionSpec] = {
    m.SPEC.name: workloads.register(m.SPEC)
    for m in (layernorm_fwd, rmsnorm_fwd, layernorm_bwd, rmsnorm_bwd, qkv_split_rope_fwd, qkv_split_rope_bwd, fp8_amax,
              rope_fwd, rope_bwd, add_rmsnorm_fwd, add_rmsnorm_bwd, add_layernorm_fwd, add_layernorm_bwd,
              rmsnorm_bwd_from_output, layernorm_bwd_from_output, qk_norm_rope_fwd, qk_norm_rope_bwd)
}


@checked
def names() -> list[str]:
    return list(_SPECS)


@checked
def get(name: str) -> FusionSpec:
    try:
        return _SPECS[name]
    except KeyError:
        raise UnknownNameError(f"no fusion spec {name!r}; known: {', '.join(_SPECS)}") from None


__all__ = ["FusionSpec", "get", "names"]
