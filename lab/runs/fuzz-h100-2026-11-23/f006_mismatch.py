# segkit fuzz finding f006: mismatch under realization outputs/segment_set
# Found by `segkit fuzz --seed 1` (target nvfuser), case 9.14; minimized from 3 to 3 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float32): NaN/Inf differ at 38440 position(s), first [0, 31]: reference nan, output -1.7912567853927612; non-finite: reference 39680 nan, output 1240 nan: MISMATCH
# Signature: mismatch:acosh>reshape>reshape
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1, 32, -1], contiguity=[True, True, None, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 3, 1, 0])
    tv1 = fd.ops.acosh(tv0)
    tv2 = fd.ops.reshape(tv1, new_shape=[48, 32, 31])
    tv3 = fd.ops.reshape(tv2, new_shape=[48, 992])
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(1488, dtype=torch.float32, device='cuda:0').as_strided((3, 16, 32, 31), (31, 93, 0, 1)),
]
fd.execute(inputs)
