# segkit fuzz finding f022: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 1.43; minimized from 2 to 1 ops in 1 s (9 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Error from segmentation group 0: unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.
# Signature: error:matmul
# Steps: keep output 1; size 64 -> 32; size 32 -> 16; size 16 -> 8; size 8 -> 4; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 5, 7, 17], contiguity=[None, False, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[3, 0, 2, 1])
    tv1 = fd.define_tensor(shape=[17, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv2 = fd.ops.matmul(tv0, tv1)
    fd.add_output(tv2)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(601, dtype=torch.float32, device='cuda:0').as_strided((2, 5, 7, 17), (0, 1, 86, 5)),
    torch.randn(17, dtype=torch.float32, device='cuda:0').as_strided((17, 1), (1, 1)),
]
fd.execute(inputs)
