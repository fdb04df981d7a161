# segkit fuzz finding f040: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 65.8; minimized from 5 to 2 ops in 1 s (8 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/compute_at_map.cpp:1239, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:cat>fmod
# Steps: keep output 2; cut at tv2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[1], contiguity=[None], dtype=DataType.Float, is_cpu=False, stride_order=[0])
    tv1 = fd.define_tensor(shape=[1], contiguity=[None], dtype=DataType.Float, is_cpu=False)
    tv2 = fd.ops.cat([tv1, tv0], dim=0)
    tv3 = fd.ops.fmod(tv2, tv1)
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(1, dtype=torch.float32, device='cuda:0').as_strided((1,), (1,)),
    torch.randn(1, dtype=torch.float32, device='cuda:0').as_strided((1,), (1,)),
]
fd.execute(inputs)
