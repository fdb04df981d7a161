# Source: https://github.com/NVIDIA/Fuser/blob/b5ac58363c529d8ea65f3c4270051878585c124d/python_tests/test_python_frontend.py#L2408-L2421
# Committed by nvFuser developers: test_input_scalar in python_tests/test_python_frontend.py (commit b5ac58363, 2023-08-09).
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


def test_input_scalar(self):
    inputs = [
        torch.randn((3,), dtype=torch.float32, device="cuda:0"),
        0.1,
    ]

    def fusion_func(fd: FusionDefinition) -> None:
        T0 = fd.from_pytorch(inputs[0])
        S1 = fd.define_scalar()
        T1 = fd.ops.mul(T0, S1)
        fd.add_output(T1)

    # Just test that this executes, not that it's correct
    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)
