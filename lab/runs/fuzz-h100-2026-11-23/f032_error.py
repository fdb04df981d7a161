# segkit fuzz finding f032: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 26.35; minimized from 3 to 1 ops in 0 s (7 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/type.h:1078, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:reshape
# Steps: cut at tv4; size 32 -> 16; size 16 -> 8; size 8 -> 4; size 4 -> 2; size 2 -> 1
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[31, 1, 1, 1], contiguity=[None, None, None, None], dtype=DataType.Index, is_cpu=False)
    tv1 = fd.ops.reshape(tv0, new_shape=[1, 31, 1, 1, 1])
    fd.add_output(tv1)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.testing.make_tensor((1,), dtype=torch.int64, device='cuda:0').as_strided((31, 1, 1, 1), (0, 1, 1, 1)),
]
fd.execute(inputs)
