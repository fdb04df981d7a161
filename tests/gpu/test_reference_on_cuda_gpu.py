"""The reference interpreter is device-agnostic: every op sample of tests/op_samples.py, run on the reference
with its tensors on the GPU, gives what it gives on the CPU (random ops judged by shape, dtype, range and
moments). The fuzzer and `segkit check` run the reference on the inputs' device; a literal operand left on the
CPU beside a CUDA tensor (gcd refuses it) lost every such fuzz case as "the reference cannot run it"."""

from __future__ import annotations

import pytest
import torch

import segkit
from tests.op_samples import SAMPLES, build_fusion

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("op", sorted(SAMPLES))
def test_reference_on_cuda_matches_reference_on_cpu(op):
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA device")
    spec = SAMPLES[op]
    samples = [s for dt in spec.dtypes for s in spec.make(dt)]
    fd, inputs = build_fusion(samples)
    # 0-d tensors stay where they are: nvFuser takes a CPU scalar tensor beside CUDA ones
    cuda = [x.cuda() if isinstance(x, torch.Tensor) and x.ndim > 0 else x for x in inputs]
    try:
        outs = segkit.run_reference(fd, cuda)
    except Exception as e:  # noqa: BLE001 - the failure is the finding; name it
        pytest.fail(f"{op}: the reference cannot run on CUDA inputs: {e}")
    if any(isinstance(x, torch.Tensor) and x.is_cuda for x in cuda):  # else (creation ops alone) it runs on the CPU
        assert all(o.device.type == "cuda" for o in outs if o.ndim > 0), [o.device for o in outs]
    report = segkit.check_outputs(fd, inputs, [o.cpu() for o in outs], label="reference on CUDA")
    assert report.ok, str(report)
