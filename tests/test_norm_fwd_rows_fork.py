"""What the norm forward's rows formulation hands nvFuser: no output that the fusion's own ops also read. On an
H200, every schedule with more than a warp per row read rstd (and the mean) back from the global output buffer
that one thread per row had just written, with no barrier: nvFuser's broadcast of such an output is a plain
global read (fusions/norm_fwd_rows.py ``fork_read_outputs``). The builder's fusion has such outputs; the
formulation's must not, and must compute the same numbers."""

from __future__ import annotations

import pytest
import torch

import fusions
from fusions.configs import NormConfig
from fusions.norm_fwd_rows import FwdRows, FwdRowsSchedule, outputs_read_inside
from segkit.frontend import FusionDefinition
from segkit.interp import run_reference


def _builder_fusion(spec_name, cfg):
    with FusionDefinition() as fd:
        fusions.get(spec_name).define(fd, cfg)
    return fd.fusion


@pytest.mark.parametrize("spec_name, shape, bias, read", [
    ("rmsnorm_fwd", (64, 384), False, 1),     # rstd
    ("layernorm_fwd", (64, 384), True, 2),    # mean, rstd
    ("layernorm_fwd", (2, 32, 256), False, 2),  # 3-D x: the formulation records its 2-D twin
])
def test_no_output_is_read_inside_the_kernel_and_the_numbers_are_the_builders(spec_name, shape, bias, read):
    spec = fusions.get(spec_name)
    cfg = NormConfig("t", shape, torch.bfloat16, eps=1e-5, bias=bias)
    flat = NormConfig("t", (cfg.rows, cfg.hidden), torch.bfloat16, eps=1e-5, bias=bias)
    builder = _builder_fusion(spec_name, flat)
    assert len(outputs_read_inside(builder)) == read  # what the check finds in what the kernel used to get
    run = FwdRows(spec_name, cfg, FwdRowsSchedule(4, vec=8))
    kernel = run.recorded().fusion
    assert outputs_read_inside(kernel) == []
    assert [o.shape for o in kernel.outputs] == [o.shape for o in builder.outputs]
    inputs = list(spec.make_inputs(cfg, seed=5).values())
    args = [inputs[0].reshape(cfg.rows, cfg.hidden), *inputs[1:]]
    for a, b in zip(run_reference(builder, args), run_reference(kernel, args)):
        assert torch.equal(a, b)


def test_the_inference_variant_has_nothing_to_fork():
    cfg = fusions.get("rmsnorm_fwd").config("nanogpt_tiny", torch.bfloat16)
    kernel = FwdRows("rmsnorm_fwd", cfg, FwdRowsSchedule(4, vec=8), outputs=(0,)).recorded().fusion
    assert len(kernel.outputs) == 1 and not any(op.name == "set" for op in kernel.ops)
