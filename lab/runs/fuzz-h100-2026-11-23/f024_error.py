# segkit fuzz finding f024: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 8.35; minimized from 1 to 1 ops in 0 s (5 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Expected input_domain.back()->isBroadcast() == weight_domain.back()->isBroadcast() . K should be broadcast in both inputs and weights, or neither.
# Signature: error:linear
# Steps: size 8 -> 4; size 4 -> 2
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[5, 2], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv1 = fd.define_tensor(shape=[2, 2], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv2 = fd.ops.linear(tv0, tv1)
    fd.add_output(tv2)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(10, dtype=torch.float32, device='cuda:0').as_strided((5, 2), (2, 1)),
    torch.randn(2, dtype=torch.float32, device='cuda:0').as_strided((2, 2), (1, 0)),
]
fd.execute(inputs)
