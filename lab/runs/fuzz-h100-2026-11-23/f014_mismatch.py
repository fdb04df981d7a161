# segkit fuzz finding f014: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 29.4; minimized from 5 to 2 ops in 8 s (28 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float32): NaN/Inf differ at 1 position(s), first [0, 0]: reference nan, output 0.0; non-finite: reference 1 nan, output none: MISMATCH
# Signature: mismatch:welford>var_mean
# Steps: cut at tv2; size 32 -> 16; size 16 -> 8; size 8 -> 4; size 4 -> 2; size 2 -> 1; remove sub -> tv6
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[17, 1, 1], contiguity=[True, None, None], dtype=DataType.Float, is_cpu=False)
    tv1, tv2, tv3 = fd.ops.welford(tv0, dims=[0])
    tv4, tv5 = fd.ops.var_mean(tv2, dims=[0, 1], keepdim=True)
    fd.add_output(tv4)
    fd.add_output(tv2)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(17, dtype=torch.float32, device='cuda:0').as_strided((17, 1, 1), (1, 1, 1)),
]
fd.execute(inputs)
