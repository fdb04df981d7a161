"""FusionDefinition builders for segkit's workloads, with named configs and float64 references.

    spec = fusions.get("layernorm_bwd")
    fd = spec.build("nanogpt_tiny")            # recorded segkit fusion
    inputs = spec.make_inputs("nanogpt_tiny")  # name -> tensor, in define order
"""

from __future__ import annotations

from fusions import (
    fp8_amax,
    layernorm_bwd,
    layernorm_fwd,
    qkv_split_rope_bwd,
    qkv_split_rope_fwd,
    rmsnorm_bwd,
    rmsnorm_fwd,
    rope_bwd,
    rope_fwd,
)
from fusions.spec import FusionSpec
from segkit import workloads
from segkit.errors import UnknownNameError

_SPECS: dict[str, FusionSpec] = {
    m.SPEC.name: workloads.register(m.SPEC)
    for m in (layernorm_fwd, rmsnorm_fwd, layernorm_bwd, rmsnorm_bwd, qkv_split_rope_fwd, qkv_split_rope_bwd, fp8_amax,
              rope_fwd, rope_bwd)
}


def names() -> list[str]:
    return list(_SPECS)


def get(name: str) -> FusionSpec:
    try:
        return _SPECS[name]
    except KeyError:
        raise UnknownNameError(f"no fusion spec {name!r}; known: {', '.join(_SPECS)}") from None


# formulations of two fusions: per-chunk partials, then their reduction (the norm backward's two-stage and rows,
# the fp8 amax's tiles, in floats or in bf16 bits, and its rows on bits then one CTA), or the grouped-query RoPE
# backward's sums, then RoPE's adjoint of them in one cat
STAGED = ("two_stage", "rows", "tiles", "bit_tiles", "bits", "sums_then_cat")


def staged(spec_name: str, cfg, formulation: str, chunk: int, tuning=None, bookend: str = "none"):
    """The two-fusion formulation ``formulation`` (one of ``STAGED``) of ``spec_name`` as the tuning table or a
    ``segkit tune`` candidate names it: something with ``run(inputs, backend)`` and ``execute(inputs)``."""
    if formulation == "rows":
        from fusions.norm_bwd_rows import rows_scheduled

        return rows_scheduled(spec_name, cfg, chunk, tuning)
    if formulation in ("tiles", "bit_tiles"):
        from fusions.fp8_amax_tiles import amax_tiles

        return amax_tiles(spec_name, cfg, chunk, tuning, formulation)
    if formulation == "bits":
        from fusions.fp8_amax_bits import amax_bits

        return amax_bits(spec_name, cfg)
    if formulation == "sums_then_cat":
        from fusions.rope_bwd_sums_then_cat import sums_then_cat

        return sums_then_cat(spec_name, cfg)
    if formulation == "two_stage":
        from fusions.norm_bwd_two_stage import two_stage

        return two_stage(spec_name, cfg, chunk).tuned(tuning, bookend)
    raise ValueError(f"{formulation!r} is not a two-fusion formulation; known: {', '.join(STAGED)}")


__all__ = ["STAGED", "FusionSpec", "get", "names", "staged"]
