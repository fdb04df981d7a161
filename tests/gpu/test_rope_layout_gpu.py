"""RoPE on a permuted x on nvFuser: the fusion defined with x's (B, T, H, n) layout reads it in place and gives
the contiguous fusion's numbers, forward and backward, at the Llama-3-8B q shape of the step table."""

from __future__ import annotations

from dataclasses import replace

import pytest
import torch

import fusions
from fusions.runner import runner
from segkit.compare import diff
from segkit.nvfuser.timing import KernelTimer

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("spec_name", ["rope_fwd", "rope_bwd"])
def test_permuted_x_on_nvfuser(spec_name):
    spec = fusions.get(spec_name)
    cfg = spec.config("Llama-3-8B_q_bthd")
    inputs = spec.make_inputs(cfg, device="cuda")
    x, cos, sin = inputs.values()
    assert not x.is_contiguous()
    permuted, plain = runner(spec_name, cfg, "none"), runner(spec_name, replace(cfg, x_stride_order=None), "none")
    (got,) = permuted([x, cos, sin])
    (want,) = plain([x.contiguous(), cos, sin])
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    (ref,) = spec.reference(inputs, cfg)
    assert diff(0, ref, got).ok
    timer = KernelTimer()
    for run, args in ((plain, [x.contiguous(), cos, sin]), (permuted, [x, cos, sin])):
        timer()
        run(args)
        timer()
    assert timer.kernel_counts[1] == timer.kernel_counts[0], f"permuted x: kernels {timer.last}"
