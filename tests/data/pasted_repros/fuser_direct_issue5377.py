# Source: https://github.com/NVIDIA/Fuser/blob/81c4b22fd750d377d69e24928c32233162f6b2bd/tests/python/direct/test_repro.py#L4591-L4831
# Committed by nvFuser developers: test_issue5377 in tests/python/direct/test_repro.py (commit 81c4b22fd, 2026-04-03).
# Targets: nvfuser_direct (2026).
# Extracted as a developer pastes it: the test function;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import pytest
from nvfuser_direct import FusionDefinition, DataType

# Use smaller range for torch.testing.make_tensor for nvfuser_direct.validate
LOW_VAL = -2
HIGH_VAL = 2


def test_issue5377(nvfuser_direct_test):
    """
    Repro for issue 5377, where a traversal for vectorize validation
    failed to find an allocation ID that corresponds to a vectorized
    ID.
    """

    def nvfuser_fusion(fd: FusionDefinition) -> None:
        tv0 = fd.define_tensor(
            shape=[1, 16],
            contiguity=[None, True],
            dtype=DataType.BFloat16,
            is_cpu=False,
        )
        tv1 = fd.define_tensor(
            shape=[1, 16],
            contiguity=[None, True],
            dtype=DataType.BFloat16,
            is_cpu=False,
        )
        tv2 = fd.define_tensor(
            shape=[1, 5120],
            contiguity=[None, True],
            dtype=DataType.BFloat16,
            is_cpu=False,
        )
        tv3 = fd.define_tensor(
            shape=[16, 5120, 16384],
            contiguity=[True, True, True],
            dtype=DataType.BFloat16,
            is_cpu=False,
        )
        tv4 = fd.define_tensor(
            shape=[16, 8192, 5120],
            contiguity=[True, True, True],
            dtype=DataType.BFloat16,
            is_cpu=False,
        )
        tv5 = fd.define_tensor(
            shape=[8192, 5120],
            contiguity=[True, True],
            dtype=DataType.BFloat16,
            is_cpu=False,
        )
        tv6 = fd.define_tensor(
            shape=[8192, 5120],
            contiguity=[True, True],
            dtype=DataType.BFloat16,
            is_cpu=False,
        )
        tv7 = fd.define_tensor(
            shape=[5120, 8192],
            contiguity=[True, True],
            dtype=DataType.BFloat16,
            is_cpu=False,
        )
        tv41 = fd.ops.linear(tv2, tv5)
        tv42 = fd.ops.cast(tv41, dtype=DataType.Float)
        tv43 = fd.ops.neg(tv42)
        tv44 = fd.ops.exp(tv43)
        tv45 = fd.ops.add(1.00000, tv44)
        tv46 = fd.ops.reciprocal(tv45)
        tv47 = fd.ops.mul(tv42, tv46)
        tv48 = fd.ops.linear(tv2, tv6)
        tv49 = fd.ops.cast(tv48, dtype=DataType.Float)
        tv50 = fd.ops.mul(tv47, tv49)
        tv51 = fd.ops.cast(tv50, dtype=DataType.BFloat16)
        tv52 = fd.ops.linear(tv51, tv7)
        tv15 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, False, True, False])
        tv16 = fd.ops.expand(tv15, shape=[16, 1, 1, 5120])
        tv17 = fd.ops.squeeze(tv16, dims=[1, 2])
        tv22 = fd.ops.cast(tv17, dtype=DataType.Float)
        tv8 = fd.ops.cast(tv0, dtype=DataType.BFloat16)
        tv9 = fd.ops.cast(tv8, dtype=DataType.Float)
        tv10 = fd.ops.neg(tv9)
        tv11 = fd.ops.exp(tv10)
        tv12 = fd.ops.add(1.00000, tv11)
        tv13 = fd.ops.reciprocal(tv12)
        tv14 = fd.ops.cast(tv13, dtype=DataType.BFloat16)
        tv18 = fd.ops.squeeze(tv14, dims=[0])
        tv19 = fd.ops.broadcast(tv18, is_broadcast_dim=[False, True])
        tv20 = fd.ops.cast(tv19, dtype=DataType.BFloat16)
        tv21 = fd.ops.expand(tv20, shape=[16, 5120])
        tv23 = fd.ops.cast(tv21, dtype=DataType.Float)
        tv24 = fd.ops.mul(tv22, tv23)
        tv25 = fd.ops.cast(tv24, dtype=DataType.BFloat16)
        tv26 = fd.ops.broadcast(tv25, is_broadcast_dim=[False, True, False])
        tv27 = fd.ops.matmul(tv26, tv3)
        tv29 = fd.ops.slice(
            tv27,
            start_indices=[0, 0, 8192],
            end_indices=[16, 1, 16384],
            strides=[1, 1, 1],
            manual_normalization=True,
        )
        tv36 = fd.ops.cast(tv29, dtype=DataType.Float)
        tv28 = fd.ops.slice(
            tv27,
            start_indices=[0, 0, 0],
            end_indices=[16, 1, 8192],
            strides=[1, 1, 1],
            manual_normalization=True,
        )
        tv30 = fd.ops.cast(tv28, dtype=DataType.Float)
        tv31 = fd.ops.neg(tv30)
        tv32 = fd.ops.exp(tv31)
        tv33 = fd.ops.add(1.00000, tv32)
        tv34 = fd.ops.reciprocal(tv33)
        tv35 = fd.ops.mul(tv30, tv34)
        tv37 = fd.ops.mul(tv36, tv35)
        tv38 = fd.ops.cast(tv37, dtype=DataType.BFloat16)
        tv39 = fd.ops.matmul(tv38, tv4)
        tv40 = fd.ops.squeeze(tv39, dims=[1])
        tv53 = fd.ops.broadcast(tv40, is_broadcast_dim=[False, True, False])
        tv54 = fd.ops.cast(tv53, dtype=DataType.Float)
        tv55 = fd.ops.sum(tv54, dims=[0], dtype=DataType.Float)
        tv56 = fd.ops.cast(tv55, dtype=DataType.BFloat16)
        fd.add_output(tv8, tv1)
        fd.add_output(tv52)
        fd.add_output(tv56)

    inputs = [
        torch.testing.make_tensor((1, 16), dtype=torch.bfloat16, device="cuda:0"),
        torch.testing.make_tensor((1, 16), dtype=torch.bfloat16, device="cuda:0"),
        torch.testing.make_tensor((1, 5120), dtype=torch.bfloat16, device="cuda:0"),
        torch.testing.make_tensor(
            (16, 5120, 16384), dtype=torch.bfloat16, device="cuda:0"
        ),
        torch.testing.make_tensor(
            (16, 8192, 5120), dtype=torch.bfloat16, device="cuda:0"
        ),
        torch.testing.make_tensor((8192, 5120), dtype=torch.bfloat16, device="cuda:0"),
        torch.testing.make_tensor((8192, 5120), dtype=torch.bfloat16, device="cuda:0"),
        torch.testing.make_tensor((5120, 8192), dtype=torch.bfloat16, device="cuda:0"),
    ]

    nvfuser_direct_test.exec_nvfuser(nvfuser_fusion, inputs, validate_results=True)

    # https://github.com/NVIDIA/Fuser/issues/5346
    def test_register_aliasing_bug(nvfuser_direct_test):
        def nvfuser_fusion(fd: FusionDefinition, dim0, dim1) -> None:
            T0 = fd.define_tensor(
                shape=[dim1],
                contiguity=[True],
                dtype=DataType.Float,
                is_cpu=False,
                stride_order=[0],
            )
            T1 = fd.define_tensor(
                shape=[1, dim0, dim1],
                contiguity=[None, True, True],
                dtype=DataType.Float,
                is_cpu=False,
                stride_order=[2, 1, 0],
            )
            T2 = fd.define_tensor(
                shape=[1, dim0, dim1],
                contiguity=[None, True, True],
                dtype=DataType.Float,
                is_cpu=False,
                stride_order=[2, 1, 0],
            )
            T3 = fd.define_tensor(
                shape=[1, dim0, 1],
                contiguity=[None, True, None],
                dtype=DataType.Float,
                is_cpu=False,
                stride_order=[2, 1, 0],
            )
            T8 = fd.ops.broadcast_in_dim(T0, shape=[1, dim0, dim1], broadcast_dims=[2])
            T9 = fd.ops.mul(T8, T1)
            T10 = fd.ops.mul(T2, T9)
            T11 = fd.ops.sum(T10, dims=[0, 2], keepdim=False, dtype=DataType.Null)
            T16 = fd.ops.broadcast_in_dim(T11, shape=[1, dim0, 1], broadcast_dims=[1])
            S17 = fd.define_scalar(3.00000, dtype=DataType.Double)
            T18 = fd.ops.pow(T3, S17)
            S19 = fd.define_scalar(-0.500000, dtype=DataType.Double)
            T20 = fd.ops.mul(S19, T16)
            T21 = fd.ops.mul(T20, T18)
            S22 = fd.define_scalar(dim1, dtype=DataType.Double)
            S23 = fd.ops.reciprocal(S22)
            T24 = fd.ops.mul(T21, S23)
            T25 = fd.ops.sum(T24, dims=[0, 2], keepdim=False, dtype=DataType.Null)
            T29 = fd.ops.broadcast_in_dim(T25, shape=[1, dim0], broadcast_dims=[1])
            T34 = fd.ops.broadcast_in_dim(
                T29, shape=[1, dim0, 1], broadcast_dims=[0, 1]
            )
            T39 = fd.ops.broadcast_in_dim(
                T3, shape=[1, dim0, dim1], broadcast_dims=[0, 1, 2]
            )
            T44 = fd.ops.broadcast_in_dim(
                T34, shape=[1, dim0, dim1], broadcast_dims=[0, 1, 2]
            )
            T45 = fd.ops.mul(T2, T39)
            T46 = fd.ops.mul(T2, T44)
            T47 = fd.ops.mul(T39, T9)
            T48 = fd.ops.mul(T45, T1)
            T49 = fd.ops.add(T47, T46)
            T50 = fd.ops.add(T49, T46)
            T51 = fd.ops.sum(T48, dims=[0, 1], keepdim=False, dtype=DataType.Null)
            T55 = fd.ops.reshape(T50, new_shape=[dim0, dim1])
            fd.add_output(T50)
            fd.add_output(T55)
            fd.add_output(T51)

        dim0 = 2048
        dim1 = 32
        with FusionDefinition() as fd:
            nvfuser_fusion(fd, dim0, dim1)

        inputs = [
            torch.testing.make_tensor(
                (dim1,),
                dtype=torch.float32,
                device="cuda:0",
                low=LOW_VAL,
                high=HIGH_VAL,
            ),
            torch.testing.make_tensor(
                (1, dim0, dim1),
                dtype=torch.float32,
                device="cuda:0",
                low=LOW_VAL,
                high=HIGH_VAL,
            ),
            torch.testing.make_tensor(
                (1, dim0, dim1),
                dtype=torch.float32,
                device="cuda:0",
                low=LOW_VAL,
                high=HIGH_VAL,
            ),
            torch.testing.make_tensor(
                (1, dim0, 1),
                dtype=torch.float32,
                device="cuda:0",
                low=LOW_VAL,
                high=HIGH_VAL,
            ),
        ]
        nvfuser_direct_test.exec_nvfuser(nvfuser_fusion, inputs, validate_results=True)
