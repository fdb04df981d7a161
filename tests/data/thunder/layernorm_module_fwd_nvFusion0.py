# CUDA devices:
#  0: NVIDIA H200
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 64, 256], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[256], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[256], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv4, tv5, tv6 = fd.ops.welford(tv3, dims=[2])
    tv10 = fd.ops.broadcast(tv4, is_broadcast_dim=[False, False, True])
    tv11 = fd.ops.cast(tv10, dtype=DataType.Float)
    tv14 = fd.ops.expand(tv11, shape=[2, 64, 256])
    tv15 = fd.ops.sub(tv3, tv14)
    c19 = fd.ops.cast(256, dtype=DataType.Double)
    c21 = fd.ops.mul(1.00000, c19)
    c25 = fd.ops.cast(0, dtype=DataType.Double)
    c27 = fd.ops.sub(c21, c25)
    c29 = fd.ops.cast(0, dtype=DataType.Double)
    c31 = fd.ops.ge(c27, c29)
    c33 = fd.ops.cast(0, dtype=DataType.Double)
    c35 = fd.ops.where(c31, c27, c33)
    c41 = fd.ops.reciprocal(c35)
    tv7 = fd.ops.mul(tv5, c41)
    tv8 = fd.ops.broadcast(tv7, is_broadcast_dim=[False, False, True])
    tv9 = fd.ops.cast(tv8, dtype=DataType.Float)
    tv12 = fd.ops.add(tv9, 1.00000e-05)
    tv13 = fd.ops.rsqrt(tv12)
    tv16 = fd.ops.expand(tv13, shape=[2, 64, 256])
    tv17 = fd.ops.mul(tv15, tv16)
    tv18 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, True, False])
    tv19 = fd.ops.expand(tv18, shape=[2, 64, 256])
    tv20 = fd.ops.cast(tv19, dtype=DataType.Float)
    tv21 = fd.ops.mul(tv17, tv20)
    tv22 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, True, False])
    tv23 = fd.ops.expand(tv22, shape=[2, 64, 256])
    tv24 = fd.ops.cast(tv23, dtype=DataType.Float)
    tv25 = fd.ops.add(tv21, tv24)
    tv26 = fd.ops.cast(tv25, dtype=DataType.BFloat16)
    fd.add_output(tv4)
    fd.add_output(tv13)
    fd.add_output(tv26)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((2, 64, 256), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
