# Source: https://github.com/NVIDIA/Fuser/blob/61394f8b3739b85beb07189ba18f3371a2637764/tests/python/test_python_frontend.py#L2851-L2877
# Committed by nvFuser developers: test_sum_sliced_reshape_to_broadcast in tests/python/test_python_frontend.py (commit 61394f8b3, 2024-03-15).
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


def test_sum_sliced_reshape_to_broadcast(self):
    inputs = [torch.randn((24, 128, 25, 32), dtype=torch.float32, device="cuda:0")]

    def fusion_func(fd: FusionDefinition) -> None:
        T18 = fd.define_tensor(
            shape=[-1, -1, -1, -1],
            contiguity=[True, True, True, True],
            dtype=DataType.Float,
            is_cpu=False,
        )
        S91 = fd.define_scalar(12, dtype=DataType.Int)
        S92 = fd.define_scalar(128, dtype=DataType.Int)
        S93 = fd.define_scalar(25, dtype=DataType.Int)
        S94 = fd.define_scalar(32, dtype=DataType.Int)
        S95 = fd.define_scalar(2, dtype=DataType.Int)
        V96 = fd.define_vector([S91, S92, S93, S94, S95], dtype=DataType.Int)
        T97 = fd.ops.reshape(T18, new_shape=V96)
        T98 = fd.ops.slice(
            T97,
            start_indices=[0, 0, 0, 0, 0],
            end_indices=[12, 128, 25, 32, 1],
            strides=[1, 1, 1, 1, 1],
        )
        T89 = fd.ops.sum(T98, dims=[4], keepdim=False, dtype=DataType.Null)
        fd.add_output(T89)

    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)
