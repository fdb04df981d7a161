# segkit fuzz finding f038: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 59.4; minimized from 4 to 3 ops in 13 s (25 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/device_lower/pass/expr_sort.cpp:1063, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:cummin>mul>ge
# Steps: keep output 1; size 8 -> 4; size 4 -> 2; size 2 -> 1
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[1, 1, 31, 1], contiguity=[None, None, True, None], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.ops.cummin(tv0, dim=2)
    tv2 = fd.ops.mul(tv0, tv1)
    tv3 = fd.ops.ge(tv2, 0.0)
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(31, dtype=torch.float32, device='cuda:0').as_strided((1, 1, 31, 1), (31, 31, 1, 1)),
]
fd.execute(inputs)
