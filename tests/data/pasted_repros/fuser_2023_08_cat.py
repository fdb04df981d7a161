# Source: https://github.com/NVIDIA/Fuser/blob/b5ac58363c529d8ea65f3c4270051878585c124d/python_tests/test_python_frontend.py#L1667-L1698
# Committed by nvFuser developers: test_cat in python_tests/test_python_frontend.py (commit b5ac58363, 2023-08-09).
# Targets: nvfuser 0.0.x (August 2023).
# Extracted as a developer pastes it: the test function moved out of its class, dedented one level;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import torch.nn.functional as F
import torch._refs as refs
import torch._prims as prims

# Will only create the nvfuser module if CUDA is available
try:
    from nvfuser import (
        FusionCache,
        FusionDefinition,
        DataType,
        Tensor,
        version,
        compute_contiguity,
    )
    from nvfuser.pytorch_utils import torch_dtype_to_nvfuser_dtype
except ImportError:
    pass


def test_cat(self):
    inputs = [
        torch.randn(2, 4, device="cuda"),
        torch.randn(2, 3, device="cuda"),
        torch.randn(4, 4, device="cuda"),
        torch.randn(0, 4, device="cuda"),
    ]

    def fusion_func(fd: FusionDefinition):
        t0 = fd.from_pytorch(inputs[0])
        t1 = fd.from_pytorch(inputs[1])
        t2 = fd.from_pytorch(inputs[2])
        t3 = fd.from_pytorch(inputs[3])

        t3 = fd.ops.cat([t0, t1], 1)
        fd.add_output(t3)

        t4 = fd.ops.cat([t0, t2], 0)
        fd.add_output(t4)

        # torch.cat accepts empty tensors (size 0 in the concat dimension),
        # which do not affect the output.
        # The below fails with RuntimeError: mapped_id_resize != nullptr
        # INTERNAL ASSERT FAILED at
        # "/opt/pytorch/nvfuser/csrc/lower_index_compute.cpp":1306
        # t5 = fd.ops.cat([t0, t3], 0)
        # fd.add_output(t5)

    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)

    self.assertEqual(torch.cat([inputs[0], inputs[1]], dim=1), nvf_out[0])
    self.assertEqual(torch.cat([inputs[0], inputs[2]], dim=0), nvf_out[1])
