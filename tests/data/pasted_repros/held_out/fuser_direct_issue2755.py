# Source: https://github.com/NVIDIA/Fuser/blob/81c4b22fd750d377d69e24928c32233162f6b2bd/tests/python/direct/test_repro.py#L1676-L1704
# Committed by nvFuser developers: test_issue2755 in tests/python/direct/test_repro.py (commit 81c4b22fd, 2026-04-03).
# Targets: nvfuser_direct (2026).
# Extracted as a developer pastes it: the test function;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import pytest
from nvfuser_direct import FusionDefinition, DataType

# Use smaller range for torch.testing.make_tensor for nvfuser_direct.validate
LOW_VAL = -2
HIGH_VAL = 2


def test_issue2755(nvfuser_direct_test):
    """
    Test for issue 2755 - tests slice operations with negation.

    This test verifies that slice operations work correctly with:
    - Basic tensor slicing with different start and end indices
    - Negation operations on sliced tensors
    - Multiple slice operations in sequence
    - Proper handling of tensor shapes and operations
    """

    def fusion_func(fd: FusionDefinition) -> None:
        t0 = fd.define_tensor(shape=[-1])
        t1 = fd.ops.slice(
            t0,
            start_indices=[0],
            end_indices=[5],
        )
        t2 = fd.ops.neg(t1)
        t3 = fd.ops.slice(
            t2,
            start_indices=[0],
            end_indices=[2],
        )
        t4 = fd.ops.neg(t3)
        fd.add_output(t4)

    inputs = [torch.randn((10,), dtype=torch.float32, device="cuda:0")]
    nvfuser_direct_test.exec_nvfuser(fusion_func, inputs, validate_results=True)
