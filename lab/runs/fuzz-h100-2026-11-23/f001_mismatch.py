# segkit fuzz finding f001: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 0.2; minimized from 4 to 3 ops in 3 s (22 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float32): NaN/Inf differ at 4 position(s), first [0, 0]: reference inf, output nan; non-finite: reference 4 +inf, output 4 nan: MISMATCH
# Signature: mismatch:var_mean>broadcast>div
# Steps: keep output 0; size 32 -> 16; size 16 -> 8; size 8 -> 4; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 2], contiguity=[None, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv1, tv2 = fd.ops.var_mean(tv0, dims=[0])
    tv3 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, False])
    tv4 = fd.ops.div(tv0, tv3)
    fd.add_output(tv4)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(1, dtype=torch.float32, device='cuda:0').as_strided((2, 2), (0, 0)),
]
fd.execute(inputs)
