# Source: https://github.com/NVIDIA/Fuser/blob/61394f8b3739b85beb07189ba18f3371a2637764/tests/python/test_python_frontend.py#L3017-L3046
# Committed by nvFuser developers: test_issue1310 in tests/python/test_python_frontend.py (commit 61394f8b3, 2024-03-15).
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


def test_issue1310(self):
    inputs = [torch.randn((16, 128, 768), dtype=torch.bfloat16, device="cuda:0")]

    def fusion_func(fd: FusionDefinition) -> None:
        T3 = fd.define_tensor(
            shape=[-1, -1, -1],
            contiguity=[True, True, True],
            dtype=DataType.BFloat16,
            is_cpu=False,
        )
        T14 = fd.ops.cast(
            T3, dtype=DataType.Float
        )  # NOTE that RHS is same, but the result is assigned to different variables
        T15 = fd.ops.cast(
            T3, dtype=DataType.Float
        )  # NOTE that RHS is same, but the result is assigned to different variables
        T16 = fd.ops.sum(T15, dims=[0, 1], keepdim=False, dtype=DataType.Null)
        T20 = fd.ops.sum(T14, dims=[0, 1], keepdim=False, dtype=DataType.Null)
        T31 = fd.ops.sum(T14, dims=[2], keepdim=False, dtype=DataType.Null)
        fd.add_output(T16)
        fd.add_output(T20)
        fd.add_output(T31)

    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)
    t14 = inputs[0].type(torch.float32)
    t16 = t14.sum([0, 1])
    t31 = t14.sum([2])
    self.assertEqual(nvf_out[0], t16)
    self.assertEqual(nvf_out[1], t16)  # T16 == T20
    self.assertEqual(nvf_out[2], t31)
