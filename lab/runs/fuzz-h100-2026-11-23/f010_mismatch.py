# segkit fuzz finding f010: mismatch under realization inputs+outputs/segment_set
# Found by `segkit fuzz --seed 1` (target nvfuser), case 22.40; minimized from 3 to 3 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float32): rel err 1.40e+00 (tol 1e-05), max abs 5.2 at [15237]: MISMATCH
# Signature: mismatch:reshape>reshape>reshape
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1, 32, -1], contiguity=[True, True, None, False], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.ops.reshape(tv0, new_shape=[72, 32, 16])
    tv2 = fd.ops.reshape(tv1, new_shape=[2304, 16])
    tv3 = fd.ops.reshape(tv2, new_shape=[36864])
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(2303, dtype=torch.float32, device='cuda:0').as_strided((9, 8, 32, 16), (256, 32, 0, 2)),
]
fd.execute(inputs)
