# segkit fuzz finding f003: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 3.25; minimized from 4 to 1 ops in 1 s (3 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float32): NaN/Inf differ at 1 position(s), first [0]: reference 0.0, output nan; non-finite: reference none, output 1 nan: MISMATCH
# Signature: mismatch:var_mean
# Steps: keep output 0; cut at tv1
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[31], contiguity=[None], dtype=DataType.Float, is_cpu=False)
    tv1, tv2 = fd.ops.var_mean(tv0, dims=[0], keepdim=True)
    fd.add_output(tv1)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(1, dtype=torch.float32, device='cuda:0').as_strided((31,), (0,)),
]
fd.execute(inputs)
