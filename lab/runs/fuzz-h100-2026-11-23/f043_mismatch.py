# segkit fuzz finding f043: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 83.37; minimized from 4 to 3 ops in 3 s (12 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float64): rel err 7.82e-08 (tol 1e-10), max abs 9.54e-07 at [4, 3, 3]: MISMATCH
# Signature: mismatch:cast>linear>cast
# Steps: remove matmul -> tv5; size 16 -> 8
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[17, 8, 8], contiguity=[True, False, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0, 1, 2])
    tv1 = fd.define_tensor(shape=[8, 8], contiguity=[False, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv2 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv3 = fd.ops.linear(tv2, tv1)
    tv4 = fd.ops.cast(tv3, dtype=DataType.Double)
    fd.add_output(tv4)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(1151, dtype=torch.bfloat16, device='cuda:0').as_strided((17, 8, 8), (1, 18, 144)),
    torch.randn(71, dtype=torch.float32, device='cuda:0').as_strided((8, 8), (9, 1)),
]
fd.execute(inputs)
