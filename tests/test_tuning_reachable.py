"""Every tuning in the committed table is found again by its own config: a config field added to a spec (the RoPE
forward's ``rounding``) must not change the signature tunings are matched by, or every tuned formulation silently
falls back to the builder's default (the GPU gate caught the RoPE backward 1.5x slower so)."""

from __future__ import annotations

import dataclasses

import pytest

import fusions
from fusions.spec import signature, tuning_table

ENTRIES = tuning_table().entries()


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e.gpu}:{e.spec}:{e.config}")
def test_each_committed_tuning_is_found_by_its_config(entry):
    spec = fusions.get(entry.spec)
    if entry.config not in spec.configs:
        pytest.skip(f"{entry.config} is not a named config of {entry.spec} (a run-time shape)")
    cfg = spec.config(entry.config)
    if hasattr(cfg, "amaxes"):  # fp8: one named shape, a tuning per set of amaxes
        cfg = next((c for c in (dataclasses.replace(cfg, amaxes=a) for a in _amax_sets(entry))
                    if signature(c) == entry.signature), cfg)
    found = spec.table_entry(cfg, gpu=entry.gpu)
    assert found is not None and found.formulation == entry.formulation, (signature(cfg), entry.signature)


def _amax_sets(entry) -> list[tuple[str, ...]]:
    """The amax sets an fp8 tuning's signature may name (read from it: ``amaxes=('row', 'all')``)."""
    inside = entry.signature.split("amaxes=(", 1)[1].split(")", 1)[0]
    return [tuple(a.strip(" '") for a in inside.split(",") if a.strip(" '"))]


def test_a_non_default_rounding_is_its_own_signature():
    cfg = fusions.get("qkv_split_rope_fwd").config("Llama-3-8B_bs2")
    assert signature(dataclasses.replace(cfg, rounding="fp32")) != signature(cfg)
    assert "rounding" not in signature(cfg)
