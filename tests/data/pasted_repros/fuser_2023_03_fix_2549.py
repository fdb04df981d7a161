# Source: https://github.com/NVIDIA/Fuser/blob/831821f3ae20eb0d32dad6cb3677bef99e9bc7ff/python_tests/test_python_frontend.py#L1434-L1449
# Committed by nvFuser developers: test_fix_2549 in python_tests/test_python_frontend.py (commit 831821f3a, 2023-03-12).
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


def test_fix_2549(self):
    a = torch.ones(4, 1, dtype=torch.double, device='cuda')
    b = torch.ones(4, 4, dtype=torch.double, device='cuda')

    def nvfuser_fusion_id(fd : FusionDefinition) -> None :
        T0 = fd.define_tensor(sizes=a.shape, strides=a.stride(), dtype=DataType.Double, is_cpu=False)
        T1 = fd.define_tensor(sizes=b.shape, strides=b.stride(), dtype=DataType.Double, is_cpu=False)
        T2 = fd.ops.broadcast_in_dim(T0, output_shape=[4, 4], broadcast_dims=[0, 1])
        T3 = fd.ops.div(T1, T2)
        fd.add_output(T3)

    with FusionDefinition() as fd:
        nvfuser_fusion_id(fd)

    out = fd.execute([a, b])
    self.assertEqual(out[0], b / a)
