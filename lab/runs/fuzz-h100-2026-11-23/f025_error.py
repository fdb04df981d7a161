# segkit fuzz finding f025: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 10.23; minimized from 7 to 7 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Error from segmentation group 0: Expected value->value() == concrete_value . Tried to bind to a constant value: 4 as 1
# Signature: error:cast>sum>broadcast>slice>expand>broadcast>permute
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Half, is_cpu=False, stride_order=[0, 1])
    tv1 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv2 = fd.ops.sum(tv1, dims=[0])
    tv3 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, False])
    tv4 = fd.ops.slice(tv3, start_indices=[0, 1], end_indices=[1, 32])
    tv5 = fd.ops.expand(tv4, shape=[4, 31])
    tv6 = fd.ops.broadcast(tv5, is_broadcast_dim=[True, False, False])
    tv7 = fd.ops.permute(tv6, dims=[0, 2, 1])
    fd.add_output(tv7)
    fd.add_output(tv7)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(160, dtype=torch.float16, device='cuda:0').as_strided((5, 32), (1, 5)),
]
fd.execute(inputs)
