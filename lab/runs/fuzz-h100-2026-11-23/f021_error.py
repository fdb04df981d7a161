# segkit fuzz finding f021: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 0.22; minimized from 4 to 1 ops in 12 s (11 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Error from segmentation group 0:  INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/expr_evaluator.cpp:156, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:cumprod
# Steps: keep output 0; cut at tv2; size 16 -> 8; size 8 -> 4; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 2, 2, 15], contiguity=[True, None, True, True], dtype=DataType.Double, is_cpu=False)
    tv1 = fd.ops.cumprod(tv0, dim=0)
    fd.add_output(tv1)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(60, dtype=torch.float64, device='cuda:0').as_strided((2, 2, 2, 15), (30, 0, 15, 1)),
]
fd.execute(inputs)
