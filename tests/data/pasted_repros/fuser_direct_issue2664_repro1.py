# Source: https://github.com/NVIDIA/Fuser/blob/81c4b22fd750d377d69e24928c32233162f6b2bd/tests/python/direct/test_repro.py#L1484-L1526
# Committed by nvFuser developers: test_issue2664_repro1 in tests/python/direct/test_repro.py (commit 81c4b22fd, 2026-04-03).
# Targets: nvfuser_direct (2026).
# Extracted as a developer pastes it: the test function;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import pytest
from nvfuser_direct import FusionDefinition, DataType

# Use smaller range for torch.testing.make_tensor for nvfuser_direct.validate
LOW_VAL = -2
HIGH_VAL = 2


def test_issue2664_repro1(nvfuser_direct_test):
    """
    Test for issue 2664 - tests broadcast in dim and inplace update.

    Migrated from `test_inplace_issue2664` in legacy test_pointwise.py

    Example 1: Repro from https://github.com/NVIDIA/Fuser/issues/2664
    T4 (scalar) is broadcasted and used in mul computation. It is also used to update T2 inplace.
    This causes a RW race. In this case, the aliased tensor is a producer of bcast op.
    """

    def nvfuser_fusion_id0(fd: FusionDefinition) -> None:
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
        S3 = fd.define_scalar(1.00000, dtype=DataType.Double)
        T4 = fd.ops.add(T2, S3)
        S5 = fd.define_scalar(4194304, dtype=DataType.Int)
        T7 = fd.ops.broadcast_in_dim(T4, shape=[S5], broadcast_dims=[])
        T8 = fd.ops.mul(T1, T7)
        fd.add_output(T4, T2)
        fd.add_output(T8)

    inputs = [
        torch.randn((4194304,), dtype=torch.float32, device="cuda:0").as_strided(
            (4194304,), (1,)
        ),
        torch.randn((1,), dtype=torch.float32, device="cuda:0").as_strided((), ()),
    ]
    # Reference out = T4 (aliased to inputs[-1]), T8
    ref_out = [inputs[-1] + 1.0, (inputs[-1] + 1.0) * inputs[0]]

    out, _ = nvfuser_direct_test.exec_nvfuser(nvfuser_fusion_id0, inputs)

    torch.testing.assert_close(inputs[-1], ref_out[0])
    torch.testing.assert_close(out[0], ref_out[1])
