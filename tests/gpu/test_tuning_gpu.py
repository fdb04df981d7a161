"""The norm tunings on nvFuser: right against float64, the overrides really applied, one kernel."""

from __future__ import annotations

import pytest
import torch

import fusions
import segkit
from segkit.compare import diff
from segkit.nvfuser.run import compiled
from segkit.nvfuser.timing import cuda_profiler
from segkit.tuning import TuningTable
from segkit.nvfuser.tuned import TunedFusion

pytestmark = pytest.mark.gpu

TUNED = [(n, c) for n in ("rmsnorm_bwd", "layernorm_bwd")
         for c in ("mixorder_576000x384", "sweep_65536x1024", "sweep_4096x256")]
TUNED += [("rmsnorm_fwd", "mixorder_576000x384")]


@pytest.mark.parametrize("name, cfg_name", TUNED)
def test_tuned_norm_is_right(name, cfg_name):
    spec = fusions.get(name)
    cfg = spec.config(cfg_name)
    inputs = spec.make_inputs(cfg, device="cuda")
    fd = spec.build(cfg, table=TuningTable())  # the builder's rule, whatever the table says for this GPU
    run = segkit.run_nvfuser(fd, list(inputs.values()), profile=False)
    for i, (r, o) in enumerate(zip(spec.reference(inputs, cfg), run.outputs)):
        assert diff(i, r, o).ok, str(diff(i, r, o))
    nvfd = compiled(fd)
    assert isinstance(nvfd, TunedFusion)
    t = nvfd.tuning
    if t.scheduler:
        ((_, params),) = nvfd._manual.values()
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        if t.blocks_per_sm is not None:
            assert params.lparams.gdimy == t.blocks_per_sm * sms
        if t.vectorize is not None:
            assert params.unroll_factor_inner_reduction == t.vectorize
        if t.maxrregcount is not None:
            assert params.cparams.maxrregcount == t.maxrregcount
        if t.rows_per_block is not None:
            assert params.multiple_reds_per_blk and params.lparams.bdimy == t.rows_per_block
    if t.split:  # one nvFuser definition per output group, each with only its outputs
        args = list(inputs.values())
        assert [len(p.execute(args)) for p in nvfd.parts()] == [len(g) for g in t.split]


@pytest.mark.fresh_process
@pytest.mark.parametrize("name", ["rmsnorm_bwd", "layernorm_bwd", "rmsnorm_fwd"])
def test_manual_schedule_is_one_kernel(name):
    spec = fusions.get(name)
    cfg = spec.config("mixorder_576000x384")
    args = list(spec.make_inputs(cfg, device="cuda").values())
    nvfd = compiled(spec.build(cfg, table=TuningTable()))
    nvfd.execute(args)
    torch.cuda.synchronize()
    with cuda_profiler() as prof:
        nvfd.execute(args)
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    fused = [n for n in names if "Fill" not in n and not n.startswith(("Memcpy", "Memset"))]  # not the sync-buffer zeroing
    assert len(fused) == 1, names
