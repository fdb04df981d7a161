# segkit fuzz finding f020: crash under realization any
# Found by `segkit fuzz --seed 1` (target nvfuser), case 5.8; minimized from 6 to 3 ops in 28 s (6 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   worker died (exit code -11)
# Signature: crash:permute>reshape>cumsum
# Steps: keep output 0; cut at tv1
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[33, 128, 1], contiguity=[True, True, None], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.ops.permute(tv0, dims=[1, 0, 2])
    tv2 = fd.ops.reshape(tv1, new_shape=[4224])
    tv3 = fd.ops.cumsum(tv2, dim=0)
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(4224, dtype=torch.float32, device='cuda:0').as_strided((33, 128, 1), (128, 1, 1)),
]
fd.execute(inputs)
