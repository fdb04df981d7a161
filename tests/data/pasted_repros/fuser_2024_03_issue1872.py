# Source: https://github.com/NVIDIA/Fuser/blob/61394f8b3739b85beb07189ba18f3371a2637764/tests/python/test_python_frontend.py#L3413-L3426
# Committed by nvFuser developers: test_issue1872 in tests/python/test_python_frontend.py (commit 61394f8b3, 2024-03-15).
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


def test_issue1872(self):
    def fusion_func(fd: FusionDefinition) -> None:
        S0 = fd.define_scalar(1.00000, dtype=DataType.Double)
        S1 = fd.define_scalar(5, dtype=DataType.Int)
        V2 = fd.define_vector([S1], dtype=DataType.Int)
        T3 = fd.ops.full(shape=V2, fill_value=S0, dtype=DataType.Float)
        T4 = fd.ops.slice(T3, start_indices=[0], end_indices=[2], strides=[1])
        T5 = fd.ops.cast(T4, dtype=DataType.Half)
        T6 = fd.ops.slice(T3, start_indices=[2], end_indices=[5], strides=[1])
        T7 = fd.ops.cast(T6, dtype=DataType.Half)
        fd.add_output(T5)
        fd.add_output(T7)

    self.exec_nvfuser(fusion_func, [])
