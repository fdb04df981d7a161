# Source: https://github.com/NVIDIA/Fuser/blob/61394f8b3739b85beb07189ba18f3371a2637764/tests/python/test_python_frontend.py#L2834-L2847
# Committed by nvFuser developers: test_mark_alias_pass in tests/python/test_python_frontend.py (commit 61394f8b3, 2024-03-15).
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


def test_mark_alias_pass(self):
    def reshape(fd: FusionDefinition) -> None:
        x = fd.define_tensor(
            [2, 3, 4], contiguity=[True, True, True], dtype=DataType.Float
        )
        y = fd.ops.reshape(x, [2, 12])
        fd.add_output(y)

    x = torch.rand(2, 3, 4, device="cuda")
    ys, _ = self.exec_nvfuser(reshape, [x])
    self.assertEqual(len(ys), 1)
    y = ys[0]

    self.assertEqual(y.data_ptr(), x.data_ptr())
