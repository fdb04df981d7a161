# segkit fuzz finding f027: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 16.11; minimized from 5 to 5 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Expected new_id->getIterType() == IterType::Broadcast . Squeezed IterDomain iS19{i1} must concretize to IterType::Broadcast but found iS19{i1}
# Signature: error:stride_order>broadcast>expand>sum>reshape
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1, -1, -1], contiguity=[True, True, True, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0, 3])
    tv1 = fd.ops.stride_order(tv0, stride_order=[2, 3, 1, 0])
    tv2 = fd.ops.broadcast(tv1, is_broadcast_dim=[False, False, True, False, False])
    tv3 = fd.ops.expand(tv2, shape=[7, 5, 5, 33, 7])
    tv4 = fd.ops.sum(tv2, dims=[0])
    tv5 = fd.ops.reshape(tv4, new_shape=[5, 33, 7])
    fd.add_output(tv5)
    fd.add_output(tv3)
    fd.add_output(tv5)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(8085, dtype=torch.float32, device='cuda:0').as_strided((7, 5, 33, 7), (165, 33, 1, 1155)),
]
fd.execute(inputs)
