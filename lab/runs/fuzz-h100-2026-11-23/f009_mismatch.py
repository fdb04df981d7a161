# segkit fuzz finding f009: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 20.47; minimized from 5 to 4 ops in 4 s (10 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float64): rel err 3.87e-07 (tol 1e-10), max abs 5.59e-09 at [0, 0, 0, 0, 0]: MISMATCH
# Signature: mismatch:var_mean>matmul>cast>broadcast
# Steps: remove maximum -> tv6; size 64 -> 32
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[32, 5, 17, 7], contiguity=[False, False, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[0, 3, 2, 1])
    tv1 = fd.define_tensor(shape=[1, 3], contiguity=[None, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv2, tv3 = fd.ops.var_mean(tv0, dims=[0, 1, 2, 3], correction=0, keepdim=True)
    tv4 = fd.ops.matmul(tv3, tv1)
    tv5 = fd.ops.cast(tv4, dtype=DataType.Double)
    tv6 = fd.ops.broadcast(tv5, is_broadcast_dim=[False, True, False, False, False])
    fd.add_output(tv6)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(19128, dtype=torch.float32, device='cuda:0').as_strided((32, 5, 17, 7), (1, 3826, 225, 32)),
    torch.randn(3, dtype=torch.float32, device='cuda:0').as_strided((1, 3), (3, 1)),
]
fd.execute(inputs)
