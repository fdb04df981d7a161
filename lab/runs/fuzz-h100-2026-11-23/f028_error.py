# segkit fuzz finding f028: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 16.17; minimized from 6 to 3 ops in 5 s (28 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Error from segmentation group 1: Expected (stride)==(0) . Found 1 vs 0. Expecting an expanded dimension on dimension 0
# Signature: error:mul>permute>lt
# Steps: keep output 0; cut at tv1; remove neg -> tv2; size 128 -> 64; size 64 -> 32; size 32 -> 16; size 16 -> 8; size 8 -> 4; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 1], contiguity=[None, None], dtype=DataType.Double, is_cpu=False)
    tv1 = fd.ops.mul(tv0, tv0)
    tv2 = fd.ops.permute(tv1, dims=[1, 0])
    tv3 = fd.ops.lt(tv1, tv2)
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(1, dtype=torch.float64, device='cuda:0').as_strided((2, 1), (0, 1)),
]
fd.execute(inputs)
