# segkit fuzz finding f002: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 0.24; minimized from 2 to 1 ops in 4 s (8 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float64): rel err 1.00e+00 (tol 1e-10), max abs 3.41 at [0, 14, 2, 3]: MISMATCH
# Signature: mismatch:triu
# Steps: cut at tv1; size 16 -> 8; size 8 -> 4
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[4, 15, 4, 4], contiguity=[True, True, None, True], dtype=DataType.Double, is_cpu=False)
    tv1 = fd.ops.triu(tv0, diagonal=2)
    fd.add_output(tv1)
    fd.add_output(tv1)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(240, dtype=torch.float64, device='cuda:0').as_strided((4, 15, 4, 4), (60, 4, 0, 1)),
]
fd.execute(inputs)
