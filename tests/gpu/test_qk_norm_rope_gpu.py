"""QK-norm + RoPE on nvFuser (fusions/qk_norm_rope_fwd.py, qk_norm_rope_bwd.py, their per-half formulation): right
against float64 at Qwen3-0.6B's per-head and OLMo2-7B's whole-width norm, T cut to 1024; what nvFuser made of each
(segments, schedulers, kernels) recorded for the tuning and the benchmarks to read, not judged (times are the
benchmarks')."""

from __future__ import annotations

import dataclasses

import pytest
import torch

import fusions
import segkit
from segkit.compare import diff

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("formulation", [None, "sliced_inputs"])
@pytest.mark.parametrize("cfg_name", ["Qwen3-0.6B", "OLMo2-7B"])
@pytest.mark.parametrize("name", ["qk_norm_rope_fwd", "qk_norm_rope_bwd"])
def test_qk_norm_rope_on_nvfuser(name, cfg_name, formulation, record):
    spec = fusions.get(name)
    cfg = spec.config(cfg_name)
    cfg = dataclasses.replace(cfg, name=f"{cfg.name}_T1024", T=1024)
    inputs = spec.make_inputs(cfg, device="cuda")
    run = segkit.run_nvfuser(spec.build(cfg, formulation=formulation), list(inputs.values()))
    diffs = [diff(i, r, o) for i, (r, o) in enumerate(zip(spec.reference(inputs, cfg), run.outputs, strict=True))]
    record({"test": "qk_norm_rope", "spec": name, "config": cfg.name, "formulation": formulation or "define",
            "groups": run.groups, "kernels": run.kernel_count, "schedulers": [k.scheduler for k in run.kernels],
            "kernel_us": sum(k.time_ms for k in run.kernels) * 1e3, "rel_err": [d.rel_err for d in diffs]})
    assert all(d.ok for d in diffs), [str(d) for d in diffs]
    if name == "qk_norm_rope_fwd":  # rstd_q, rstd_k: fp32, as the backward reads them
        assert [o.dtype for o in run.outputs[2:]] == [torch.float32] * 2
