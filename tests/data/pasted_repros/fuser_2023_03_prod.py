# Source: https://github.com/NVIDIA/Fuser/blob/831821f3ae20eb0d32dad6cb3677bef99e9bc7ff/python_tests/test_python_frontend.py#L1360-L1389
# Committed by nvFuser developers: test_prod in python_tests/test_python_frontend.py (commit 831821f3a, 2023-03-12).
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


def test_prod(self) :
    inputs = [
        torch.ones(2, 4, 8, device='cuda'),
    ]

    def fusion_func(fd: FusionDefinition) :
        t0 = fd.from_pytorch(inputs[0])

        t1 = fd.ops.prod(t0, DataType.Float)
        t2 = fd.ops.prod(t0, 1, False, DataType.Float)
        t3 = fd.ops.prod(t0, 1, True, DataType.Float)
        t4 = fd.ops.prod(t0, [-1], False, DataType.Float)

        fd.add_output(t1)
        fd.add_output(t2)
        fd.add_output(t3)
        fd.add_output(t4)

    nvf_out, _ = self.exec_nvfuser(fusion_func, inputs)

    eager_outs = [
        torch.prod(inputs[0], dtype=torch.float32),
        torch.prod(inputs[0], 1, False, dtype=torch.float32),
        torch.prod(inputs[0], 1, True, dtype=torch.float32),
        torch.prod(inputs[0], -1, False, dtype=torch.float32),
    ]
    assert len(nvf_out) == len(eager_outs)

    for n, e in zip(nvf_out, eager_outs):
        self.assertEqual(n, e)
