# segkit fuzz finding f016: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 36.9; minimized from 2 to 1 ops in 0 s (4 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0: shape mismatch, reference [1], output [2]: MISMATCH
# Signature: mismatch:min
# Steps: cut at tv1; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2], contiguity=[None], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.ops.min(tv0, dims=[0], keepdim=True)
    fd.add_output(tv1)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(1, dtype=torch.float32, device='cuda:0').as_strided((2,), (0,)),
]
fd.execute(inputs)
