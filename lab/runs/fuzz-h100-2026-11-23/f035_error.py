# segkit fuzz finding f035: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 42.49; minimized from 5 to 3 ops in 3 s (21 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Error from segmentation group 0:  INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/runtime/executor_utils.cpp:511, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:cast>min>linear
# Steps: keep output 1; size 64 -> 32; size 32 -> 16; size 16 -> 8; size 8 -> 4; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 2, 3, 2], contiguity=[True, None, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[0, 2, 3, 1])
    tv1 = fd.define_tensor(shape=[2, 3], contiguity=[False, False], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv2 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv3 = fd.ops.min(tv2, dims=[3])
    tv4 = fd.ops.linear(tv3, tv1)
    fd.add_output(tv4)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(12, dtype=torch.bfloat16, device='cuda:0').as_strided((2, 2, 3, 2), (1, 0, 4, 2)),
    torch.randn(12, dtype=torch.float32, device='cuda:0').as_strided((2, 3), (7, 2)),
]
fd.execute(inputs)
