# segkit fuzz finding f019: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 57.6; minimized from 2 to 2 ops in 6 s (16 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float32): rel err 1.00e+00 (tol 1e-05), max abs 0.234 at [0]: MISMATCH
# Signature: mismatch:max>var_mean
# Steps: size 256 -> 128; size 128 -> 64; size 64 -> 32; size 32 -> 16; size 16 -> 8; size 8 -> 4
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 4, 4], contiguity=[True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    tv1 = fd.ops.max(tv0, dims=[0, 2])
    tv2, tv3 = fd.ops.var_mean(tv1, dims=[0], correction=0, keepdim=True)
    fd.add_output(tv2)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(32, dtype=torch.float32, device='cuda:0').as_strided((2, 4, 4), (16, 4, 1)),
]
fd.execute(inputs)
