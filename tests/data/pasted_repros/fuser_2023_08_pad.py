# Source: https://github.com/NVIDIA/Fuser/blob/b5ac58363c529d8ea65f3c4270051878585c124d/python_tests/test_python_frontend.py#L1586-L1620
# Committed by nvFuser developers: test_pad in python_tests/test_python_frontend.py (commit b5ac58363, 2023-08-09).
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


def test_pad(self):
    inputs = [
        torch.testing.make_tensor((2, 3), dtype=torch.float32, device="cuda"),
    ]

    def fusion_func(fd: FusionDefinition):
        t0 = fd.from_pytorch(inputs[0])

        t1 = fd.ops.pad(t0, [1, 1, 1, 1])
        fd.add_output(t1)

        # zero padding in some dims
        t2 = fd.ops.pad(t0, [0, 0, 2, 3])
        fd.add_output(t2)

        # zero padding in all dims
        t3 = fd.ops.pad(t0, [0, 0, 0, 0])
        fd.add_output(t3)

        # no padding provided in first dim
        t4 = fd.ops.pad(t0, [2, 3])
        fd.add_output(t4)

        # test padding with a value other than 0
        fill_val = fd.define_scalar(2.0)
        t5 = fd.ops.pad(t0, [2, 3], fill_val)
        fd.add_output(t5)

    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)

    self.assertEqual(F.pad(inputs[0], [1, 1, 1, 1]), nvf_out[0])
    self.assertEqual(F.pad(inputs[0], [0, 0, 2, 3]), nvf_out[1])
    self.assertEqual(F.pad(inputs[0], [0, 0, 0, 0]), nvf_out[2])
    self.assertEqual(F.pad(inputs[0], [2, 3]), nvf_out[3])
    self.assertEqual(F.pad(inputs[0], [2, 3], "constant", 2.0), nvf_out[4])
