# Source: https://github.com/NVIDIA/Fuser/blob/831821f3ae20eb0d32dad6cb3677bef99e9bc7ff/python_tests/test_python_frontend.py#L678-L702
# Committed by nvFuser developers: test_alias_output_to_input in python_tests/test_python_frontend.py (commit 831821f3a, 2023-03-12).
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


def test_alias_output_to_input(self):
    inputs = [
        torch.ones(4, 4, device="cuda"),
    ]

    def fusion_func(fd: FusionDefinition):
        t0 = fd.from_pytorch(inputs[0])
        s0 = fd.define_constant(1.0)
        s1 = fd.define_constant(2.0)
        s2 = fd.define_constant(3.0)
        t1 = fd.ops.add(t0, s0)
        t2 = fd.ops.add(t0, s1)
        t3 = fd.ops.add(t2, s2)
        fd.add_output(t1)
        fd.add_output(t2, alias_input=t0)
        fd.add_output(t3)

    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)

    eager_out1 = torch.add(torch.ones(4, 4, device="cuda"), 1.0)
    eager_out2 = torch.add(torch.ones(4, 4, device="cuda"), 2.0)
    eager_out3 = torch.add(eager_out2, 3.0)
    self.assertEqual(eager_out1, nvf_out[0])
    self.assertEqual(eager_out2, inputs[0])
    self.assertEqual(eager_out3, nvf_out[1])
