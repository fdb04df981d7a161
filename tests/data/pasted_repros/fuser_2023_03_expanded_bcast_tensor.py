# Source: https://github.com/NVIDIA/Fuser/blob/831821f3ae20eb0d32dad6cb3677bef99e9bc7ff/python_tests/test_python_frontend.py#L1414-L1432
# Committed by nvFuser developers: test_expanded_bcast_tensor in python_tests/test_python_frontend.py (commit 831821f3a, 2023-03-12).
# Targets: the nvfuser package split out of PyTorch (March 2023).
# Extracted as a developer pastes it: the test function moved out of its class, dedented one level;
# the module's import lines for the names it uses are kept above it; nothing else changed.
import torch
import torch._refs as refs
import torch._prims as prims

# Will only create the nvfuser module if CUDA is available
try:
    from nvfuser import FusionCache, FusionDefinition, DataType, version, compute_contiguity
    from nvfuser.pytorch_utils import torch_dtype_to_nvfuser_dtype
except ImportError:
    pass


def test_expanded_bcast_tensor(self) :
    inputs = [
        torch.tensor(1.5, device="cuda"),
        torch.randn(5, 5, 5, device='cuda'),
        torch.randint(0, 1, (5, 5), device="cuda").bool().unsqueeze(-1).expand(5, 5, 5),
    ]

    def fusion_func(fd : FusionDefinition) -> None :
        T0 = fd.from_pytorch(inputs[0])
        T1 = fd.from_pytorch(inputs[1])
        T2 = fd.from_pytorch(inputs[2])
        T3 = fd.ops.add(T0, T1)
        T4 = fd.ops.add(T2, T3)
        fd.add_output(T4)

    eager_out = inputs[0] + inputs[1] + inputs[2]

    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)
    self.assertEqual(eager_out, nvf_out[0])
