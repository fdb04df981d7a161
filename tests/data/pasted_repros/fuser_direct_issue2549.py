# Source: https://github.com/NVIDIA/Fuser/blob/81c4b22fd750d377d69e24928c32233162f6b2bd/tests/python/direct/test_repro.py#L1458-L1481
# Committed by nvFuser developers: test_issue2549 in tests/python/direct/test_repro.py (commit 81c4b22fd, 2026-04-03).
# Targets: nvfuser_direct (2026).
# Extracted as a developer pastes it: the test function;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import pytest
from nvfuser_direct import FusionDefinition, DataType

# Use smaller range for torch.testing.make_tensor for nvfuser_direct.validate
LOW_VAL = -2
HIGH_VAL = 2


def test_issue2549(nvfuser_direct_test):
    """
    Test for issue 2549 - tests broadcast_in_dim and division operations.

    This test verifies that broadcast_in_dim operations work correctly
    with division operations, particularly when broadcasting tensors
    with different shapes.
    """
    a = torch.ones(4, 1, dtype=torch.double, device="cuda")
    b = torch.ones(4, 4, dtype=torch.double, device="cuda")

    def fusion_func(fd: FusionDefinition) -> None:
        T0 = fd.define_tensor(
            sizes=a.shape, strides=a.stride(), dtype=DataType.Double, is_cpu=False
        )
        T1 = fd.define_tensor(
            sizes=b.shape, strides=b.stride(), dtype=DataType.Double, is_cpu=False
        )
        T2 = fd.ops.broadcast_in_dim(T0, shape=[4, 4], broadcast_dims=[0, 1])
        T3 = fd.ops.div(T1, T2)
        fd.add_output(T3)

    nvf_out, _ = nvfuser_direct_test.exec_nvfuser(fusion_func, [a, b])
    nvfuser_direct_test.assertEqual(nvf_out[0], b / a)
