# segkit fuzz finding f042: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 78.4; minimized from 4 to 3 ops in 1 s (8 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0: shape mismatch, reference [7, 127], output [7, 1]: MISMATCH
# Signature: mismatch:max>broadcast>squeeze
# Steps: keep output 0; size 16 -> 8; size 8 -> 4; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[7, 127, 2], contiguity=[True, None, False], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    tv1 = fd.ops.max(tv0, dims=[2])
    tv2 = fd.ops.broadcast(tv1, is_broadcast_dim=[False, False, True])
    tv3 = fd.ops.squeeze(tv2, dims=[2])
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(27, dtype=torch.float32, device='cuda:0').as_strided((7, 127, 2), (4, 0, 2)),
]
fd.execute(inputs)
