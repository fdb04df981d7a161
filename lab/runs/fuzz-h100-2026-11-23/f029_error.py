# segkit fuzz finding f029: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 19.15; minimized from 7 to 7 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Error from segmentation group 2:  INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/interval_analysis.cpp:630, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:slice>cast>var_mean>broadcast>div>pad>permute
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, 1, -1], contiguity=[True, None, True], dtype=DataType.Half, is_cpu=False, stride_order=[2, 1, 0])
    tv1 = fd.ops.slice(tv0, start_indices=[11, 0, 0], end_indices=[19, 1, 4])
    tv2 = fd.ops.cast(tv1, dtype=DataType.Float)
    tv3, tv4 = fd.ops.var_mean(tv2, dims=[2], correction=0)
    tv5 = fd.ops.broadcast(tv3, is_broadcast_dim=[False, False, True])
    tv6 = fd.ops.div(tv2, tv5)
    tv7 = fd.ops.pad(tv6, pad_widths=[3, 0], value=0.0)
    tv8 = fd.ops.permute(tv7, dims=[0, 2, 1])
    fd.add_output(tv8)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(132, dtype=torch.float16, device='cuda:0').as_strided((33, 1, 4), (4, 4, 1)),
]
fd.execute(inputs)
