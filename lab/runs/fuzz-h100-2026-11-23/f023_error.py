# segkit fuzz finding f023: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 8.6; minimized from 3 to 2 ops in 1 s (11 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/ops/arith.cpp:2601, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:cumprod>cat
# Steps: cut at tv2; size 16 -> 8; size 8 -> 4; size 4 -> 2; size 2 -> 1
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[3, 1, 1, 3], contiguity=[True, None, None, True], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.define_tensor(shape=[3, 1, 1, 3], contiguity=[True, None, None, None], dtype=DataType.Float, is_cpu=False)
    tv2 = fd.ops.cumprod(tv1, dim=3)
    tv3 = fd.ops.cat([tv2, tv0], dim=1)
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(9, dtype=torch.float32, device='cuda:0').as_strided((3, 1, 1, 3), (3, 3, 3, 1)),
    torch.randn(3, dtype=torch.float32, device='cuda:0').as_strided((3, 1, 1, 3), (1, 1, 1, 0)),
]
fd.execute(inputs)
