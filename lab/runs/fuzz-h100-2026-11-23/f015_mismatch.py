# segkit fuzz finding f015: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 31.11; minimized from 8 to 2 ops in 2 s (5 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float32): rel err 1.63e+07 (tol 1e-05), max abs 4.79e+06 at [0]: MISMATCH
# Signature: mismatch:var>cat
# Steps: keep output 1; cut at tv4
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[127], contiguity=[None], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    tv1 = fd.define_tensor(shape=[127], contiguity=[None], dtype=DataType.Float, is_cpu=False)
    tv2 = fd.ops.var(tv0, dims=[0], correction=0, keepdim=True)
    tv3 = fd.ops.cat([tv2, tv1], dim=0)
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(1, dtype=torch.float32, device='cuda:0').as_strided((127,), (0,)),
    torch.randn(1, dtype=torch.float32, device='cuda:0').as_strided((127,), (0,)),
]
fd.execute(inputs)
