# segkit fuzz finding f011: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 26.11; minimized from 4 to 1 ops in 1 s (6 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0: shape mismatch, reference [3], output [1]: MISMATCH
# Signature: mismatch:sum
# Steps: cut at tv3; size 16 -> 8; size 8 -> 4; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 3], contiguity=[True, None], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.ops.sum(tv0, dims=[0])
    fd.add_output(tv1)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(2, dtype=torch.float32, device='cuda:0').as_strided((2, 3), (1, 0)),
]
fd.execute(inputs)
