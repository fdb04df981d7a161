# segkit fuzz finding f044: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 87.15; minimized from 8 to 2 ops in 1 s (6 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0: shape mismatch, reference [1, 17], output [127, 17]: MISMATCH
# Signature: mismatch:broadcast>max
# Steps: keep output 2; cut at tv3
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[127, 17], contiguity=[None, True], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.ops.broadcast(tv0, is_broadcast_dim=[False, True, False])
    tv2 = fd.ops.max(tv1, dims=[0])
    fd.add_output(tv2)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(17, dtype=torch.float32, device='cuda:0').as_strided((127, 17), (0, 1)),
]
fd.execute(inputs)
