# segkit fuzz finding f008: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 21.8; minimized from 8 to 4 ops in 3 s (17 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 0 (float32): NaN/Inf differ at 6 position(s), first [19, 0]: reference -11184811.0, output inf; non-finite: reference none, output 3 +inf, 3 -inf: MISMATCH
# Signature: mismatch:cast>welford>broadcast>div
# Steps: keep output 2; size 128 -> 64; size 64 -> 32
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[32, 3], contiguity=[True, True], dtype=DataType.Int, is_cpu=False, stride_order=[1, 0])
    tv1 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv2, tv3, tv4 = fd.ops.welford(tv1, dims=[1])
    tv5 = fd.ops.broadcast(tv2, is_broadcast_dim=[False, True])
    tv6 = fd.ops.div(tv1, tv5)
    fd.add_output(tv6)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.testing.make_tensor((96,), dtype=torch.int64, device='cuda:0').as_strided((32, 3), (3, 1)),
]
fd.execute(inputs)
