# segkit fuzz finding f036: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 52.8; minimized from 5 to 1 ops in 1 s (11 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/id_model/id_model.cpp:686, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:welford
# Steps: keep output 1; cut at tv2; size 256 -> 128; size 128 -> 64; size 64 -> 32; size 32 -> 16; size 16 -> 8; size 8 -> 4; size 4 -> 2; size 2 -> 1
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[1, 7, 1, 7], contiguity=[None, True, None, None], dtype=DataType.Float, is_cpu=False)
    tv1, tv2, tv3 = fd.ops.welford(tv0, dims=[2])
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(7, dtype=torch.float32, device='cuda:0').as_strided((1, 7, 1, 7), (7, 1, 1, 0)),
]
fd.execute(inputs)
