# Minimized by `segkit minimize` from rope_llama3_8b_fwd_nvFusion0.py (48 ops) to 5 ops in 14 s (51 nvFuser checks).
# On NVIDIA H200, nvfuser_direct 0.2.36+git7e04d26, torch 2.11.0+cu130:
#   nvFuser vs reference interpreter: MISMATCH
#     output 0 (bfloat16): rel err 1.67e+00 (tol 1e-02), max abs 10.9 at [0, 22, 7, 21]: MISMATCH
# Steps: keep output 2; cut at tv25; cut at tv7; cut at tv5; remove cast -> tv9; remove add -> tv7; size 256 -> 128; size 128 -> 64; size 64 -> 32; size 2 -> 1
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[1, 32, 32, 32], contiguity=[None, None, True, True], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.define_tensor(shape=[1, 8, 1, 32, 32], contiguity=[None, True, None, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.ops.expand(tv1, shape=[1, 8, 4, 32, 32])
    tv3 = fd.ops.reshape(tv2, new_shape=[1, 32, 32, 32])
    tv4 = fd.ops.cast(tv3, dtype=DataType.Float)
    tv5 = fd.ops.mul(tv4, tv0)
    tv6 = fd.ops.cast(tv5, dtype=DataType.BFloat16)
    fd.add_output(tv6)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(1024, dtype=torch.float32, device='cuda:0').as_strided((1, 32, 32, 32), (32768, 0, 32, 1)),
    torch.randn(8192, dtype=torch.bfloat16, device='cuda:0').as_strided((1, 8, 1, 32, 32), (8192, 1024, 1024, 32, 1)),
]
fd.execute(inputs)
