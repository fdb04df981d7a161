# Source: https://github.com/NVIDIA/Fuser/blob/81c4b22fd750d377d69e24928c32233162f6b2bd/tests/python/direct/test_repro.py#L1707-L1735
# Committed by nvFuser developers: test_issue2853 in tests/python/direct/test_repro.py (commit 81c4b22fd, 2026-04-03).
# Targets: nvfuser_direct (2026).
# Extracted as a developer pastes it: the test function;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import pytest
from nvfuser_direct import FusionDefinition, DataType

# Use smaller range for torch.testing.make_tensor for nvfuser_direct.validate
LOW_VAL = -2
HIGH_VAL = 2


def test_issue2853(nvfuser_direct_test):
    """
    Test for issue 2853 - tests that an error is raised if there are segments
    with CPU outputs.

    See https://github.com/NVIDIA/Fuser/issues/2853.
    """
    inputs = [
        torch.tensor(2.0, device="cpu", dtype=torch.float),
        torch.randn(3, device="cuda", dtype=torch.float),
    ]

    def fusion_func(fd: FusionDefinition):
        tv0 = fd.from_pytorch(inputs[0])  # CPU scalar tensor
        tv1 = fd.from_pytorch(inputs[1])  # CUDA input
        s0 = fd.define_scalar(3.0)
        # CPU scalar only segment that should raise an error
        t2 = fd.ops.add(tv0, s0)  # Should be a CPU scalar tensor
        t3 = fd.ops.add(tv1, s0)
        fd.add_output(t2)
        fd.add_output(t3)

    with FusionDefinition() as fd:
        fusion_func(fd)

    with pytest.raises(
        RuntimeError, match="KernelExecutor does not support the Fusion provided."
    ):
        _ = fd.execute(inputs)
