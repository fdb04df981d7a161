# Source: https://github.com/NVIDIA/Fuser/blob/b5ac58363c529d8ea65f3c4270051878585c124d/python_tests/test_python_frontend.py#L2487-L2506
# Committed by nvFuser developers: test_expand_to_zero in python_tests/test_python_frontend.py (commit b5ac58363, 2023-08-09).
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


def test_expand_to_zero(self):
    inputs = [
        # This is an actually empty tensor
        torch.zeros((1, 0), dtype=torch.float32, device="cuda:0"),
        # This one is not actually empty, but should appear to be empty due to expand
        torch.zeros((1, 1), dtype=torch.float32, device="cuda:0"),
    ]

    def fusion_func(fd: FusionDefinition) -> None:
        T0 = fd.from_pytorch(inputs[0])
        T1 = fd.from_pytorch(inputs[1])
        T2 = fd.ops.broadcast_in_dim(T0, output_shape=[0, 0], broadcast_dims=[0, 1])
        T3 = fd.ops.broadcast_in_dim(T1, output_shape=[0, 0], broadcast_dims=[0, 1])
        fd.add_output(T2)
        fd.add_output(T3)

    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)

    self.assertEqual(nvf_out[0].shape, (0, 0))
    self.assertEqual(nvf_out[1].shape, (0, 0))
