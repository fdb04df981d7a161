# segkit fuzz finding f026: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 10.41; minimized from 3 to 2 ops in 0 s (9 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Expected orig_domain_a.back()->isBroadcast() == orig_domain_b.at(b_kpos)->isBroadcast() . K should be broadcast in both A and B, or neither.
# Signature: error:matmul>reshape
# Steps: cut at tv2; size 8 -> 4; size 4 -> 2; size 2 -> 1
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[17, 3], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv1 = fd.define_tensor(shape=[7, 64, 1, 17], contiguity=[True, True, None, None], dtype=DataType.Float, is_cpu=False)
    tv2 = fd.ops.matmul(tv1, tv0)
    tv3 = fd.ops.reshape(tv2, new_shape=[448, 1, 3])
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(51, dtype=torch.float32, device='cuda:0').as_strided((17, 3), (3, 1)),
    torch.randn(448, dtype=torch.float32, device='cuda:0').as_strided((7, 64, 1, 17), (64, 1, 1, 0)),
]
fd.execute(inputs)
