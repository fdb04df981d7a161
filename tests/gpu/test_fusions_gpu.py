"""fusions/ on nvFuser, real configs: correct against float64, and segmented as intended."""

from __future__ import annotations

import pytest
import torch

import fusions
import segkit
from segkit.compare import diff

pytestmark = pytest.mark.gpu


import os

#: Real configs run by default: every workload family, the extreme shapes, the headline models.
#: SEGKIT_GPU_FULL=1 runs every real config (each is a new nvFuser compile: about 10 minutes).
REPRESENTATIVE = {
    "nanogpt", "mixorder_576000x384", "llama2_13b", "sweep_4096x16384", "sweep_65536x256",
    "sweep_16384x4096", "sweep_65536x16384", "Llama-2-13b-hf_bs2", "Llama-2-70b-hf_bs1", "Llama-3-8B_bs1",
    "Llama-3-70B_bs2", "Mistral-7B_bs1", "phi-2_bs2", "4096x4096", "16384x8192", "8192x28672",
    "llama3_8b",  # the residual add + norm and the backward from the output at Llama-3-8B's block norm
    "Qwen3-0.6B", "OLMo2-7B",  # QK-norm + RoPE: the per-head and the whole-width norm
}


def _real(name):
    full = os.environ.get("SEGKIT_GPU_FULL") == "1"
    return [c for c in fusions.get(name).configs if not c.endswith("_tiny") and (full or c in REPRESENTATIVE)]


CASES = [(n, c, torch.bfloat16) for n in fusions.names() for c in _real(n)]
CASES += [(n, c, torch.float32) for n in fusions.names() for c in _real(n)
          if c in ("nanogpt", "llama2_7b", "sweep_16384x4096", "Llama-2-13b-hf_bs1", "Llama-3-8B_bs1", "4096x4096")]


#: specs whose bf16 fusion is one kernel of this scheduler at every representative config
ONE_KERNEL = {"add_rmsnorm_fwd": "inner_persistent", "add_layernorm_fwd": "inner_persistent",
              **dict.fromkeys(["add_rmsnorm_bwd", "add_layernorm_bwd", "rmsnorm_bwd_from_output",
                               "layernorm_bwd_from_output"], "inner_outer_persistent")}


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
        tuning = fusions.get(name).tuned(cfg)  # the tuning table's choice on this GPU, else the builder's rule
        if tuning and tuning.split:  # dx, then dw (+ db): one kernel each
            assert run.kernel_count == len(tuning.split), f"split norm backward: {run.groups}"
        else:
            if not (tuning and tuning.scheduler):  # a manual schedule runs outside nvFuser's profiler: test_tuning_gpu
                assert run.kernel_count == 1, f"norm backward segmented: {run.groups}"
            assert run.groups[0] == "inner_outer_persistent"
    if name in ONE_KERNEL and dtype == torch.bfloat16:
        # the residual's add (forward) and its gradient's (backward) in the norm's own kernel; the backward from
        # the output one kernel like the backward from x (untuned: nvFuser's heuristics)
        assert run.kernel_count == 1 and run.groups[0] == ONE_KERNEL[name], run.groups
    if name == "qkv_split_rope_fwd":
        # Multi-head, full-width RoPE (Llama-2): q and k roped as one slice, one resize kernel.
        # Partial RoPE (phi-2): one resize kernel each for q and k; v is a view (2 kernels).
        # Grouped-query configs return k and v of n_head heads: the reshape that merges the
        # expanded group dim cannot be a view, so v's copies take one pointwise kernel, and k is
        # roped by one kernel and copied by another (the builder's segment_set): 4 (measured on
        # H200, nvFuser 0.2.36; Thunder's own GQA fusion runs 3, and computes a wrong k).
        mha = cfg.n_query_groups == cfg.n_head
        limit = (1 if cfg.rope_n_elem == cfg.head_size else 2) if mha else 4
        assert run.kernel_count <= limit, f"RoPE forward ran {run.kernel_count} kernels: {run.groups}"
