# segkit fuzz finding f034: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 29.39; minimized from 8 to 8 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/mutator.cpp:44, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:slice>cast>triu>cast>cast>broadcast>expand>add
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[1, 0])
    tv1 = fd.define_tensor(shape=[1, -1, -1], contiguity=[None, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    tv2 = fd.ops.slice(tv0, start_indices=[5, 12], end_indices=[6, 117])
    tv3 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv4 = fd.ops.triu(tv2, diagonal=-2)
    tv5 = fd.ops.cast(tv3, dtype=DataType.Half)
    tv6 = fd.ops.cast(tv4, dtype=DataType.Float)
    tv7 = fd.ops.broadcast(tv6, is_broadcast_dim=[False, False, True])
    tv8 = fd.ops.expand(tv7, shape=[1, 105, 4])
    tv9 = fd.ops.add(tv1, tv8)
    fd.add_output(tv9)
    fd.add_output(tv5)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(1024, dtype=torch.float16, device='cuda:0').as_strided((8, 128), (128, 1)),
    torch.randn(420, dtype=torch.float32, device='cuda:0').as_strided((1, 105, 4), (420, 4, 1)),
]
fd.execute(inputs)
