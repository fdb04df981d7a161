# Source: https://github.com/NVIDIA/Fuser/blob/81c4b22fd750d377d69e24928c32233162f6b2bd/tests/python/direct/test_repro.py#L1529-L1578
# Committed by nvFuser developers: test_issue2664_repro2 in tests/python/direct/test_repro.py (commit 81c4b22fd, 2026-04-03).
# Targets: nvfuser_direct (2026).
# Extracted as a developer pastes it: the test function;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import pytest
from nvfuser_direct import FusionDefinition, DataType

# Use smaller range for torch.testing.make_tensor for nvfuser_direct.validate
LOW_VAL = -2
HIGH_VAL = 2


def test_issue2664_repro2(nvfuser_direct_test):
    """
    Test for issue 2664 - tests broadcast in dim and inplace update.

    Migrated from `test_inplace_post_bcast` in legacy test_pointwise.py

    Example 2 for Issue 2664:
    T2 is broadcasted and used in mul/add compute. It is also summed (T8) and used to inplace update T2.
    In this case, the aliased tensor (T8) is a consumer of the bcast op.
    """

    def fusion_func(fd: FusionDefinition) -> None:
        T1 = fd.define_tensor(
            shape=[-1],
            contiguity=[True],
            dtype=DataType.Float,
            is_cpu=False,
            stride_order=[0],
        )
        T2 = fd.define_tensor(
            shape=[], contiguity=[], dtype=DataType.Float, is_cpu=False
        )
        S5 = fd.define_scalar(4194304, dtype=DataType.Int)
        T7 = fd.ops.broadcast_in_dim(T2, shape=[S5], broadcast_dims=[])
        T8 = fd.ops.sum(T7, dims=[0], keepdim=False)
        T9 = fd.ops.mul(T1, T7)
        T10 = fd.ops.add(T1, T7)
        fd.add_output(T8, T2)
        fd.add_output(T9)
        fd.add_output(T10)

    inputs = [
        torch.randn((4194304,), dtype=torch.float32, device="cuda:0").as_strided(
            (4194304,), (1,)
        ),
        torch.randn((1,), dtype=torch.float32, device="cuda:0").as_strided((), ()),
    ]

    # Reference out = T8 (aliased to inputs[-1]), T9, T10
    ref_out = [
        inputs[-1] * inputs[0].size(0),
        inputs[-1] * inputs[0],
        inputs[0] + inputs[1],
    ]

    out, _ = nvfuser_direct_test.exec_nvfuser(fusion_func, inputs)

    nvfuser_direct_test.assertEqual(inputs[-1], ref_out[0])
    nvfuser_direct_test.assertEqual(out[0], ref_out[1])
    nvfuser_direct_test.assertEqual(out[1], ref_out[2])
