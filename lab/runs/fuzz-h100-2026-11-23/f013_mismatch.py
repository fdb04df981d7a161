# segkit fuzz finding f013: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 27.28; minimized from 1 to 1 ops in 1 s (5 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float32): rel err 4.75e+00 (tol 1e-05), max abs 4.75 at [0]: MISMATCH
# Signature: mismatch:var
# Steps: size 16 -> 8; size 8 -> 4; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 2], contiguity=[None, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv1 = fd.ops.var(tv0, dims=[0], correction=0)
    fd.add_output(tv1)
    fd.add_output(tv1)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(2, dtype=torch.float32, device='cuda:0').as_strided((2, 2), (0, 1)),
]
fd.execute(inputs)
