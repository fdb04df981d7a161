# segkit fuzz finding f039: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 62.6; minimized from 5 to 5 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Expected id->extent()->isConstScalar() && id->extent()->evaluate().as<int64_t>() == 1 . Can not squeeze dimension(s) with size != 1.
# Signature: error:slice>max>sum>sub>sum
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, -1, -1], contiguity=[True, False, True], dtype=DataType.Float, is_cpu=False, stride_order=[2, 1, 0])
    tv1 = fd.ops.slice(tv0, start_indices=[6, 29, 0], end_indices=[61, 30, 5])
    tv2 = fd.ops.max(tv1, dims=[2])
    tv3 = fd.ops.sum(tv2, dims=[0, 1], keepdim=True)
    tv4 = fd.ops.sub(tv2, tv3)
    tv5 = fd.ops.sum(tv4, dims=[0])
    fd.add_output(tv5)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(12671, dtype=torch.float32, device='cuda:0').as_strided((64, 33, 5), (198, 6, 1)),
]
fd.execute(inputs)
