# Source: https://github.com/NVIDIA/Fuser/blob/831821f3ae20eb0d32dad6cb3677bef99e9bc7ff/python_tests/test_python_frontend.py#L447-L468
# Committed by nvFuser developers: test_tensor_sizes in python_tests/test_python_frontend.py (commit 831821f3a, 2023-03-12).
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


def test_tensor_sizes(self):
    inputs = [
        torch.randn(2, 3, 4, device="cuda"),
        torch.randn(4, device="cuda"),
    ]

    def fusion_func(fd: FusionDefinition):
        t0 = fd.from_pytorch(inputs[0])
        t1 = fd.from_pytorch(inputs[1])

        t0_sizes = fd.ops.tensor_sizes(t0)

        t1_b = fd.ops.broadcast_in_dim(t1, t0_sizes, [2])
        t2 = fd.ops.sub(t0, t1_b)

        fd.add_output(t2)

    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)
    eager_out = refs.sub(
        inputs[0], prims.broadcast_in_dim(inputs[1], inputs[0].size(), [2])
    )
    self.assertEqual(eager_out, nvf_out[0])
