# Source: https://github.com/NVIDIA/Fuser/blob/61394f8b3739b85beb07189ba18f3371a2637764/tests/python/test_python_frontend.py#L1880-L1923
# Committed by nvFuser developers: test_pad_cache in tests/python/test_python_frontend.py (commit 61394f8b3, 2024-03-15).
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


def test_pad_cache(self):
    """Test that using different pad widths causes a cache miss.

    cf. https://github.com/NVIDIA/Fuser/pull/10#pullrequestreview-1352667557
    """
    inputs = [
        torch.testing.make_tensor((2, 3), dtype=torch.float32, device="cuda"),
    ]

    def fusion_func_pad1(fd: FusionDefinition):
        t0 = fd.from_pytorch(inputs[0])
        t1 = fd.ops.pad(t0, [1, 1])
        fd.add_output(t1)

    nvf_out1, _ = self.exec_nvfuser(
        fusion_func_pad1, inputs, new_fusion_expected=True
    )
    _ = self.exec_nvfuser(fusion_func_pad1, inputs, new_fusion_expected=False)

    def fusion_func_pad2(fd: FusionDefinition):
        t0 = fd.from_pytorch(inputs[0])
        t1 = fd.ops.pad(t0, [2, 2])
        fd.add_output(t1)

    nvf_out2, _ = self.exec_nvfuser(
        fusion_func_pad2, inputs, new_fusion_expected=True
    )

    def fusion_func_pad3(fd: FusionDefinition):
        t0 = fd.from_pytorch(inputs[0])
        fill_val = fd.define_scalar(2.0)
        t1 = fd.ops.pad(t0, [1, 1], fill_val)
        fd.add_output(t1)

    nvf_out3, _ = self.exec_nvfuser(
        fusion_func_pad3, inputs, new_fusion_expected=True
    )
    _ = self.exec_nvfuser(fusion_func_pad3, inputs, new_fusion_expected=False)

    self.assertEqual(F.pad(inputs[0], [1, 1]), nvf_out1[0])
    # Erroneous cache miss would use kernel 1 instead of 2
    self.assertEqual(F.pad(inputs[0], [2, 2]), nvf_out2[0])
    # Erroneous cache hit based on fill value would use kernel1
    self.assertEqual(F.pad(inputs[0], [1, 1], "constant", 2.0), nvf_out3[0])
