"""lab/campaigns/step_controls.json: the step table's controls load as variants (benchmarks/model_step.py
--variants-from), each segkit_fuse option parses, and the per-shape pair differs from its claimed twin only at
Qwen3-0.6B's q / k norm shapes (the step table's batch 4, T=2048: 16 and 8 heads of 128).

    python -m pytest lab/campaigns
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.model_step import VARIANTS, load_variants

CONTROLS = Path(__file__).with_name("step_controls.json")


def test_every_control_loads_parses_and_redefines_no_product_variant():
    from thunder_exec.decide import FusePolicy

    controls = load_variants(CONTROLS)
    assert controls and not {v.name for v in controls} & {v.name for v in VARIANTS}
    assert not any(v.default for v in controls)  # run only where --variants names them
    policies = {v.name: FusePolicy.parse(v.fuse_option) for v in controls if v.segkit}
    claimed, qk = policies["segkit-norms-claimed"], policies["segkit-qk-norms-thunder"]
    for spec in ("rmsnorm_fwd", "rmsnorm_bwd"):
        assert claimed.mode(spec, "8192x1024") == qk.mode(spec, "8192x1024") == "fused"
        for rows in (4 * 2048 * 16, 4 * 2048 * 8):
            assert (claimed.mode(spec, f"{rows}x128"), qk.mode(spec, f"{rows}x128")) == ("fused", "thunder")
