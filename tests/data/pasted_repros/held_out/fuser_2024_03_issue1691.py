# Source: https://github.com/NVIDIA/Fuser/blob/61394f8b3739b85beb07189ba18f3371a2637764/tests/python/test_python_frontend.py#L3350-L3389
# Committed by nvFuser developers: test_issue1691 in tests/python/test_python_frontend.py (commit 61394f8b3, 2024-03-15).
# Targets: nvfuser 0.1.x (March 2024).
# Extracted as a developer pastes it: the test function moved out of its class, dedented one level;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import torch.nn.functional as F
import torch._refs as refs
import torch._prims as prims

from nvfuser import (
    FusionCache,
    FusionDefinition,
    DataType,
    Tensor,
    version,
    compute_contiguity,
    compute_tensor_descriptor,
)
from nvfuser.pytorch_utils import torch_dtype_to_nvfuser_dtype


def test_issue1691(self):
    inputs = [
        torch.randn((12,), dtype=torch.float32, device="cuda:0").as_strided(
            (1, 3, 4), (12, 4, 1)
        ),
        torch.randn((12,), dtype=torch.float32, device="cuda:0").as_strided(
            (4, 3), (3, 1)
        ),
    ]

    def fusion_func(fd: FusionDefinition) -> None:
        T0 = fd.define_tensor(
            shape=[1, -1, -1],
            contiguity=[None, True, True],
            dtype=DataType.Float,
            is_cpu=False,
            stride_order=[2, 1, 0],
        )
        T1 = fd.define_tensor(
            shape=[-1, -1],
            contiguity=[True, True],
            dtype=DataType.Float,
            is_cpu=False,
            stride_order=[1, 0],
        )
        T2 = fd.ops.sum(T1, dims=[1], keepdim=False, dtype=DataType.Null)  # 1D
        T3 = fd.ops.sum(T0, dims=[1, 0], keepdim=False, dtype=DataType.Null)  # 1D
        S4 = fd.define_scalar(4, dtype=DataType.Int)
        V5 = fd.define_vector([S4], dtype=DataType.Int)
        T6 = fd.ops.reshape(T2, new_shape=V5)
        S7 = fd.define_scalar(4, dtype=DataType.Int)
        V8 = fd.define_vector([S7], dtype=DataType.Int)
        T9 = fd.ops.reshape(T3, new_shape=V8)
        T10 = fd.ops.mul(T6, T9)
        T11 = fd.ops.sum(T10, dims=[0], keepdim=False, dtype=DataType.Null)
        fd.add_output(T11)

    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)
    torch_ref = (inputs[0].sum(dim=[0, 1]) * inputs[1].sum(dim=1)).sum(dim=0)
    self.assertEqual(nvf_out[0], torch_ref)
