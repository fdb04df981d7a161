"""thunder_exec.ReuseNvFusions on CPU: Thunder's fp8 amax trace (thunder.jit, run on CPU) with its ops grouped into
an nvFusion region whose definition is Thunder's own captured one (tests/data/thunder); the transformed trace
runs Thunder's region once per signature, then the rewritten fusion (reference interpreter here)."""

from __future__ import annotations

import pytest
import torch

import segkit
import thunder
import thunder_exec
from fusions import torch_models as tm
from tests.conftest import DATA
from thunder.core.trace import from_trace
from thunder.extend import FusionExecutor

CAPTURED = (DATA / "thunder" / "fp8_amax_fwd_nvFusion0.py").read_text()


class _Region:
    """What ReusedRegion uses of Thunder's FusionDefinitionWrapper: its name, its last-used definition's
    repro_script_for(inputs), and the call (here the captured definition on the reference interpreter)."""

    def __init__(self, script: str):
        self.name, self.last_used, self.calls, self.script = "nvFusion0", self, 0, script

    def repro_script_for(self, inputs):
        return self.script

    def __call__(self, *args):
        self.calls += 1
        return segkit.run_reference(segkit.load_repro(CAPTURED).fd, list(args))


def _fp8_trace_with_region(region: _Region, x: torch.Tensor):
    jm = thunder.jit(tm.fp8_amax)
    jm(x)
    trace = thunder.last_traces(jm)[-1]
    compute = [b for b in trace.bound_symbols if b.sym.name in ("to", "abs", "amax")]
    ret = trace.bound_symbols[-1]
    fusion = FusionExecutor("fake_nvfuser").register_temporary_operation(
        "nvFusion0", region, inputs=[compute[0].flat_args[0]], outputs=list(ret.args[0]), bsyms=compute)
    fused = from_trace(trace)
    fused.bound_symbols = [b for b in trace.bound_symbols if b.sym.name not in ("to", "abs", "amax", "python_del")]
    fused.bound_symbols.insert(len(fused.bound_symbols) - 1, fusion)
    return fused


@pytest.mark.parametrize("inner_outer", [None, "outer"])
def test_fp8_region_runs_rewritten_after_its_first_call(inner_outer):
    x = torch.randn(64, 256).bfloat16()
    region = _Region(CAPTURED)
    transform = thunder_exec.ReuseNvFusions(inner_outer=inner_outer)
    run = transform.transform_trace_post_optimization(_fp8_trace_with_region(region, x)).python_callable()
    want = tm.fp8_amax(x)
    for _ in range(3):
        got = run(x)
        assert all(torch.equal(g, w) for g, w in zip(got, want))
    assert region.calls == 1, "after the first call the rewritten fusion must run, not Thunder's region"
    (plan,) = transform.rewrites.plans.values()
    assert "max over dims [0, 1] now reads" in plan and ("one inner-outer pattern" in plan) == bool(inner_outer)


def test_region_segkit_cannot_record_keeps_thunders_fusion_with_a_warning():
    x = torch.randn(64, 256).bfloat16()
    region = _Region(CAPTURED.replace("fd.ops.abs(", "fd.ops.not_an_op("))
    run = thunder_exec.ReuseNvFusions().transform_trace_post_optimization(_fp8_trace_with_region(region, x))
    run = run.python_callable()
    with pytest.warns(thunder_exec.ReuseSkippedWarning, match="not_an_op"):
        run(x)
    got = run(x)
    assert region.calls == 2 and all(torch.equal(g, w) for g, w in zip(got, tm.fp8_amax(x)))
