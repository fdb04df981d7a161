# segkit fuzz finding f007: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 10.13; minimized from 4 to 1 ops in 1 s (5 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0: shape mismatch, reference [5, 1, 1, 3], output [1, 1, 1, 3]: MISMATCH
# Signature: mismatch:prod
# Steps: cut at tv3; size 8 -> 4; size 4 -> 2; size 2 -> 1
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[5, 1, 1, 3, 17], contiguity=[None, None, None, True, True], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.ops.prod(tv0, dims=[4])
    fd.add_output(tv1)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(51, dtype=torch.float32, device='cuda:0').as_strided((5, 1, 1, 3, 17), (0, 51, 51, 17, 1)),
]
fd.execute(inputs)
