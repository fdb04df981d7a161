# Source: https://github.com/NVIDIA/Fuser/blob/81c4b22fd750d377d69e24928c32233162f6b2bd/tests/python/direct/test_repro.py#L1242-L1285
# Committed by nvFuser developers: test_issue2354 in tests/python/direct/test_repro.py (commit 81c4b22fd, 2026-04-03).
# Targets: nvfuser_direct (2026).
# Extracted as a developer pastes it: the test function;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import pytest
from nvfuser_direct import FusionDefinition, DataType

# Use smaller range for torch.testing.make_tensor for nvfuser_direct.validate
LOW_VAL = -2
HIGH_VAL = 2


def test_issue2354(nvfuser_direct_test):
    """
    Test for issue 2354 - tests complex operations with linear and mul operations.

    This test verifies that complex operations work correctly with:
    - Linear operations with different shapes
    - Mul operations with different shapes
    - Proper handling of tensor shapes and operations
    """
    inputs = [
        torch.randn((8, 4), dtype=torch.float32, device="cuda:0"),
        torch.randn(
            (
                6,
                2,
                4,
            ),
            dtype=torch.float32,
            device="cuda:0",
        ),
    ]

    def fusion_func(fd: FusionDefinition):
        T0 = fd.define_tensor(
            shape=[-1, -1],
            contiguity=[True, True],
            dtype=DataType.Float,
            is_cpu=False,
            stride_order=[1, 0],
        )
        T1 = fd.define_tensor(
            shape=[-1, -1, -1],
            contiguity=[True, True, True],
            dtype=DataType.Float,
            is_cpu=False,
            stride_order=[2, 1, 0],
        )
        T2 = fd.ops.linear(T1, T0)
        S3 = fd.define_scalar(1.41421, dtype=DataType.Double)
        T4 = fd.ops.mul(T2, S3)
        fd.add_output(T2)
        fd.add_output(T4)

    nvfuser_direct_test.exec_nvfuser(fusion_func, inputs, validate_results=True)
