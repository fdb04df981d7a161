# segkit fuzz finding f041: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 67.10; minimized from 7 to 3 ops in 1 s (7 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Expected squeeze_expanded || !id->hasExpandedExtent() . Refusing to squeeze expanded IterDomain bS0{1 ex 33}. To force removal of this axis, use squeeze_expanded=true.
# Signature: error:broadcast>max>div
# Steps: keep output 0; cut at tv3
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[33, 1, 3], contiguity=[None, None, True], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.ops.broadcast(tv0, is_broadcast_dim=[False, False, False, True])
    tv2 = fd.ops.max(tv1, dims=[0, 1, 2, 3], keepdim=True)
    tv3 = fd.ops.div(tv1, tv2)
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(3, dtype=torch.float32, device='cuda:0').as_strided((33, 1, 3), (0, 3, 1)),
]
fd.execute(inputs)
