# Source: https://github.com/NVIDIA/Fuser/blob/61394f8b3739b85beb07189ba18f3371a2637764/tests/python/test_python_frontend.py#L2723-L2739
# Committed by nvFuser developers: test_dynamic_reshape in tests/python/test_python_frontend.py (commit 61394f8b3, 2024-03-15).
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


def test_dynamic_reshape(self):
    def dynamic_reshape(fd: FusionDefinition) -> None:
        x = fd.define_tensor([-1, -1], [True, True])
        d0 = fd.ops.size(x, 0)
        d1 = fd.define_scalar(dtype=DataType.Int32)
        d2 = fd.define_scalar(dtype=DataType.Int32)
        new_shape = fd.define_vector([d0, d1, d2])
        y = fd.ops.reshape(x, new_shape)
        fd.add_output(y)

    x = torch.rand(3, 4, device="cuda")
    ys, _ = self.exec_nvfuser(dynamic_reshape, [x, 2, 2])
    self.assertEqual(len(ys), 1)
    y = ys[0]

    self.assertEqual(y.shape, torch.Size([3, 2, 2]))
    self.assertEqual(x.flatten(), y.flatten())
