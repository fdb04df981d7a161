# segkit fuzz finding f005: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 5.13; minimized from 3 to 3 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0: shape mismatch, reference [5, 14, 16, 5], output [1, 14, 16, 5]: MISMATCH
# Signature: mismatch:slice>broadcast>expand
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[False, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[1, 0, 2])
    tv1 = fd.ops.slice(tv0, start_indices=[79, 0, 0], end_indices=[93, 16, 5])
    tv2 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, False, False, False])
    tv3 = fd.ops.expand(tv2, shape=[5, 14, 16, 5])
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(20484, dtype=torch.bfloat16, device='cuda:0').as_strided((256, 16, 5), (16, 1, 4097)),
]
fd.execute(inputs)
