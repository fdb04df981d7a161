# segkit fuzz finding f017: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 55.8; minimized from 3 to 3 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 1: shape mismatch, reference [1, 8, 256, 7], output [1, 1, 256, 7]: MISMATCH
# Signature: mismatch:slice>expand>permute
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 1, -1, -1], contiguity=[None, None, False, True], dtype=DataType.Double, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv2 = fd.ops.slice(tv0, start_indices=[1, 0, 0, 0], end_indices=[2, 1, 256, 7])
    tv3 = fd.ops.expand(tv2, shape=[1, 8, 256, 7])
    tv4 = fd.ops.permute(tv1, dims=[1, 0])
    fd.add_output(tv4)
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(2047, dtype=torch.float64, device='cuda:0').as_strided((2, 1, 256, 7), (0, 2048, 8, 1)),
    torch.randn(8, dtype=torch.float32, device='cuda:0').as_strided((8, 1), (1, 1)),
]
fd.execute(inputs)
