"""fusions/ on nvFuser, real configs: correct against float64, and segmented as intended."""

from __future__ import annotations

import pytest
import torch

import fusions
import segkit
from segkit.compare import diff

pytestmark = pytest.mark.gpu


def _real(name):
    return [c for c in fusions.get(name).configs if not c.endswith("_tiny")]


CASES = [(n, c, torch.bfloat16) for n in fusions.names() for c in _real(n)]
CASES += [(n, c, torch.float32) for n in fusions.names() for c in _real(n)
          if c in ("nanogpt", "llama2_7b", "sweep_16384x4096", "Llama-2-13b-hf_bs1", "Llama-3-8B_bs1", "4096x4096")]


def _run(name, cfg_name, dtype):
    spec = fusions.get(name)
    cfg = spec.config(cfg_name, dtype)
    inputs = spec.make_inputs(cfg, device="cuda")
    run = segkit.run_nvfuser(spec.build(cfg), list(inputs.values()))
    refs = spec.reference(inputs, cfg)
    diffs = [diff(i, r, o) for i, (r, o) in enumerate(zip(refs, run.outputs))]
    del inputs, refs
    return cfg, run, diffs


@pytest.mark.parametrize("name, cfg_name, dtype", CASES, ids=lambda x: str(x).removeprefix("torch."))
def test_spec_on_nvfuser(name, cfg_name, dtype, record):
    cfg, run, diffs = _run(name, cfg_name, dtype)
    record({"test": "spec", "spec": name, "config": cfg_name, "dtype": str(dtype), "groups": run.groups,
            "kernels": run.kernel_count, "kernel_us": sum(k.time_ms for k in run.kernels) * 1e3,
            "schedulers": [k.scheduler for k in run.kernels], "rel_err": [d.rel_err for d in diffs]})
    assert all(d.ok for d in diffs), [str(d) for d in diffs]
    if name in ("layernorm_bwd", "rmsnorm_bwd") and dtype == torch.bfloat16 and cfg.hidden <= 16384:
        assert run.kernel_count == 1, f"norm backward segmented: {run.groups}"
    if name == "qkv_split_rope_fwd":
        assert run.kernel_count <= 2, f"RoPE forward ran {run.kernel_count} kernels: {run.groups}"
