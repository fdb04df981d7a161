# CUDA devices:
#  0: NVIDIA H200
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 64, 256], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[256], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv3 = fd.ops.mul(tv2, tv2)
    tv4 = fd.ops.sum(tv3, dims=[2], dtype=DataType.Float)
    tv5 = fd.ops.broadcast(tv4, is_broadcast_dim=[False, False, True])
    tv6 = fd.ops.cast(tv5, dtype=DataType.Float)
    c35 = fd.ops.reciprocal(256.000)
    tv7 = fd.ops.mul(tv6, c35)
    tv8 = fd.ops.add(tv7, 1.00000e-06)
    tv9 = fd.ops.rsqrt(tv8)
    tv10 = fd.ops.expand(tv9, shape=[2, 64, 256])
    tv11 = fd.ops.mul(tv2, tv10)
    tv12 = fd.ops.cast(tv1, dtype=DataType.Float)
    tv13 = fd.ops.broadcast(tv12, is_broadcast_dim=[True, True, False])
    tv14 = fd.ops.expand(tv13, shape=[2, 64, 256])
    tv15 = fd.ops.mul(tv11, tv14)
    tv16 = fd.ops.cast(tv15, dtype=DataType.BFloat16)
    fd.add_output(tv9)
    fd.add_output(tv16)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((2, 64, 256), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
