# segkit fuzz finding f018: mismatch under realization inputs+outputs/segment_set
# Found by `segkit fuzz --seed 1` (target nvfuser), case 56.39; minimized from 2 to 2 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float16): NaN/Inf differ at 22 position(s), first [300, 0]: reference -1.53125, output nan; non-finite: reference none, output 22 nan: MISMATCH
# Signature: mismatch:reshape>reshape
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1, 5, 1], contiguity=[True, True, None, None], dtype=DataType.Half, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.ops.reshape(tv0, new_shape=[256, 5, 1])
    tv2 = fd.ops.reshape(tv1, new_shape=[1280, 1])
    fd.add_output(tv2)
    fd.add_output(tv2)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(256, dtype=torch.float16, device='cuda:0').as_strided((128, 2, 5, 1), (2, 1, 0, 1)),
]
fd.execute(inputs)
