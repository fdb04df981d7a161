# Source: https://github.com/NVIDIA/Fuser/blob/81c4b22fd750d377d69e24928c32233162f6b2bd/tests/python/direct/test_repro.py#L1738-L1758
# Committed by nvFuser developers: test_issue3192 in tests/python/direct/test_repro.py (commit 81c4b22fd, 2026-04-03).
# Targets: nvfuser_direct (2026).
# Extracted as a developer pastes it: the test function;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import pytest
from nvfuser_direct import FusionDefinition, DataType

# Use smaller range for torch.testing.make_tensor for nvfuser_direct.validate
LOW_VAL = -2
HIGH_VAL = 2


def test_issue3192(nvfuser_direct_test):
    """
    Test for issue 3192 - tests squeeze and slice operations.

    This test verifies that squeeze and slice operations work correctly with:
    - Squeeze operation with two dimensions
    - Slice operation with one dimension
    - Negation operation
    """

    def fusion_func(fd: FusionDefinition):
        inp = fd.define_tensor([1, 1, 2], contiguity=True)
        out = fd.ops.squeeze(inp, [0, 1])
        out = fd.ops.slice(out, [1], [2])
        fd.add_output(out)

    in_tensor = torch.randn(1, 1, 2, device="cuda")
    out_tensors, _ = nvfuser_direct_test.exec_nvfuser(fusion_func, [in_tensor])
    nvfuser_direct_test.assertEqual(
        out_tensors[0], in_tensor.squeeze([0, 1])[1:2], rtol=0, atol=0
    )
