"""A fusion's nvFuser tuning is declared on the IR (``Fusion.tuning``) and every rewrite carries it: bookend
(segment_set and host plan), keep_outputs, the minimizer, the executor's fusion cache."""

from __future__ import annotations

import pytest
import torch

import fusions
from segkit import DataType, FusionDefinition
from segkit.bookend import bookend
from segkit.interp import random_inputs, run_reference
from segkit.minimize import minimize, rebuild
from segkit.tuning import NvTuning

WS = NvTuning("test", enable_options=("ws_normalization",))
SPLIT = NvTuning("test", split=((0,), (1,)))


def _boundary_views(tuning: NvTuning):
    """x -> reshape (prologue view) -> sum (output 0) and mul -> permute (epilogue view, output 1)."""
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[2, 3, 4], contiguity=[True] * 3, dtype=DataType.Float)
        a = fd.ops.reshape(x, new_shape=[6, 4])
        fd.add_output(fd.ops.sum(a, dims=[1]))
        fd.add_output(fd.ops.permute(fd.ops.mul(a, 2.0), dims=[1, 0]))
    fd.nv_tuning = tuning
    return fd


def test_the_builder_declares_its_tuning_on_the_ir():
    fd = fusions.get("rmsnorm_bwd").build("mixorder_576000x384")
    assert fd.fusion.tuning is fd.nv_tuning and fd.nv_tuning.scheduler == "inner_outer_persistent"


@pytest.mark.parametrize("policy", ["outputs", "inputs+outputs"])
@pytest.mark.parametrize("tuning", [WS, SPLIT], ids=["options", "split"])
def test_tuning_survives_bookend_segment_sets(policy, tuning):
    plan = bookend(_boundary_views(tuning), policy)
    assert plan.cuts
    assert plan.apply("segment_set").nv_tuning == tuning


@pytest.mark.parametrize("policy", ["outputs", "inputs+outputs"])
def test_tuning_survives_the_host_plan_core(policy):
    fd = _boundary_views(SPLIT)
    host = bookend(fd, policy).apply("host")
    args = random_inputs(fd.fusion)
    core = host.core_fusion(_core_args(host, args))
    assert len(core.fusion.ops) < len(fd.fusion.ops)
    # core outputs: the mul (the permute runs on the host), then the sum; each in its own group as before
    assert [o.definition.name for o in core.fusion.outputs] == ["mul", "sum"]
    assert core.nv_tuning.split == ((1,), (0,))
    assert all(torch.equal(a, b) for a, b in zip(host.run(args), run_reference(fd, args)))


def _core_args(host, args):
    from segkit.interp import Interpreter

    it = Interpreter(host.plan.fusion, args)
    for op in host.prologue:
        it.run_op(op)
    return [it.value_of(v) for v in host.core_inputs]


def test_host_core_keeps_options_tuning_as_is():
    fd = _boundary_views(WS)
    host = bookend(fd, "inputs+outputs").apply("host")
    assert host.core_fusion(_core_args(host, random_inputs(fd.fusion))).nv_tuning == WS


def test_keep_outputs_maps_a_split_onto_the_kept_outputs():
    fd = fusions.get("layernorm_bwd").build("sweep_16384x256")
    assert fd.nv_tuning.split == ((0,), (1, 2))
    assert fd.fusion.keep_outputs([0, 2]).tuning.split == ((0,), (1,))
    assert fd.fusion.keep_outputs([2, 0]).tuning.split == ((1,), (0,))
    assert fd.fusion.keep_outputs([1, 2]).tuning is None  # one group left: one fusion, nvFuser's defaults
    manual = fusions.get("layernorm_bwd").build("mixorder_576000x384")
    assert manual.fusion.keep_outputs([0]).tuning == manual.nv_tuning


def test_a_split_that_cannot_be_mapped_is_an_error():
    with pytest.raises(ValueError, match="does not map onto"):
        SPLIT.for_outputs([[0, 1]])


def test_tuning_survives_the_minimizer():
    fd = fusions.get("rmsnorm_bwd").build("nanogpt")
    fd.nv_tuning = NvTuning("test", scheduler="inner_outer_persistent", vectorize=4)
    assert rebuild(fd, sizes={768: 384}).nv_tuning == fd.nv_tuning
    result = minimize(fd, lambda cand: any(op.name == "sum" for op in cand.fusion.ops), log=lambda _: None,
                      max_seconds=20)
    assert result.steps and result.fd.nv_tuning == fd.nv_tuning


def test_minimizer_drops_a_split_group_with_its_outputs():
    fd = fusions.get("rmsnorm_bwd").build("sweep_4096x256")
    assert rebuild(fd, outputs=[1]).nv_tuning is None
    assert rebuild(fd, outputs=[1, 0]).nv_tuning.split == ((1,), (0,))


@pytest.mark.parametrize("policy", ["outputs", "inputs+outputs"])
def test_executor_fusions_keep_the_builders_tuning(policy):
    from fusions.runner import fusion_for

    spec = fusions.get("rmsnorm_bwd")
    cfg = spec.config("mixorder_576000x384")
    assert fusion_for("rmsnorm_bwd", cfg, policy).nv_tuning == spec.tuning(cfg)


def test_bookend_table_rows_fit_the_headers():
    from segkit.experiment import HEADERS, Measurement

    ok = Measurement("v", True, 1e-3, ["pointwise"], 1, 5.0, 20.0, 1, 8.0, None, "no capture: x")
    wrong = Measurement("w", False, 1.0, [], 0, 0.0, 0.0, 0)
    assert len(ok.row()) == len(wrong.row()) == len(HEADERS)
    assert ok.row()[HEADERS.index("graph replay us")] == "no capture: x"
    assert ok.row()[HEADERS.index("async host us/call")] == "8.0"


def test_compiled_is_made_once_per_definition_and_reached_from_its_fusion():
    """segkit.nvfuser.run.compiled keeps what it makes in the definition's declared ``nvfuser`` field; the IR a pass
    holds (a Fusion) reaches the same object through the definition that recorded it (a tuned fusion needs
    no nvFuser to be wrapped, so this runs on the CPU)."""
    from segkit.nvfuser.run import compiled
    from segkit.nvfuser.tuned import TunedFusion

    fd = _boundary_views(WS)
    assert fd.nvfuser is None
    made = compiled(fd)
    assert isinstance(made, TunedFusion) and made.tuning is WS
    assert fd.nvfuser is made and compiled(fd) is made and compiled(fd.fusion) is made


def test_what_compiled_makes_is_one_declared_type():
    """Both ways segkit runs a fusion on nvFuser are a ``segkit.nvfuser.runnable.NvProgram``, so run_nvfuser and
    segment_groups read declared properties instead of probing (no nvFuser needed to build either here)."""
    from segkit.nvfuser.run import KernelInfo, PlainFusion, segment_groups
    from segkit.nvfuser.runnable import NvProgram
    from segkit.nvfuser.tuned import TunedFusion

    manual = TunedFusion(_boundary_views(None), NvTuning("test", scheduler="reduction"))
    split = TunedFusion(_boundary_views(None), SPLIT)
    never_run = PlainFusion(object())  # an nvFuser definition before its first execute has no executor cache
    for program in (manual, split, never_run):
        assert isinstance(program, NvProgram)
    assert (manual.profilable, manual.groups, manual.fec) == (False, ["reduction"], None)
    assert (never_run.profilable, never_run.groups, never_run.fec, never_run.parts()) == (True, [], None, [])
    assert segment_groups(manual, []) == ["reduction"]
    assert segment_groups(never_run, [KernelInfo("k", "pointwise", 0.1)]) == ["pointwise"]
    assert segment_groups(never_run, []) == ["expr_eval"]
