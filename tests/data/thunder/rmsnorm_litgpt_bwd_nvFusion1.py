# CUDA devices:
#  0: NVIDIA H200
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[256], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[2, 64, 256], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[2, 64, 256], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.define_tensor(shape=[2, 64, 1], contiguity=[True, True, None], dtype=DataType.Float, is_cpu=False)
    tv9 = fd.ops.cast(tv2, dtype=DataType.Float)
    tv19 = fd.ops.expand(tv3, shape=[2, 64, 256])
    tv22 = fd.ops.mul(tv9, tv19)
    tv5 = fd.ops.cast(tv1, dtype=DataType.Float)
    tv24 = fd.ops.mul(tv22, tv5)
    tv28 = fd.ops.sum(tv24, dims=[0, 1], dtype=DataType.Float)
    tv31 = fd.ops.cast(tv28, dtype=DataType.BFloat16)
    tv4 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv6 = fd.ops.broadcast(tv4, is_broadcast_dim=[True, True, False])
    tv7 = fd.ops.expand(tv6, shape=[2, 64, 256])
    tv8 = fd.ops.mul(tv7, tv5)
    tv26 = fd.ops.mul(tv19, tv8)
    tv10 = fd.ops.mul(tv9, tv8)
    tv11 = fd.ops.sum(tv10, dims=[2], dtype=DataType.Float)
    tv12 = fd.ops.broadcast(tv11, is_broadcast_dim=[False, False, True])
    tv13 = fd.ops.cast(tv12, dtype=DataType.Float)
    tv15 = fd.ops.mul(-0.500000, tv13)
    tv14 = fd.ops.pow(tv3, 3.00000)
    tv16 = fd.ops.mul(tv15, tv14)
    c86 = fd.ops.reciprocal(256.000)
    tv17 = fd.ops.mul(tv16, c86)
    tv18 = fd.ops.squeeze(tv17, dims=[2])
    tv20 = fd.ops.broadcast(tv18, is_broadcast_dim=[False, False, True])
    tv21 = fd.ops.cast(tv20, dtype=DataType.Float)
    tv23 = fd.ops.expand(tv21, shape=[2, 64, 256])
    tv25 = fd.ops.mul(tv9, tv23)
    tv27 = fd.ops.add(tv26, tv25)
    tv29 = fd.ops.add(tv27, tv25)
    tv30 = fd.ops.cast(tv29, dtype=DataType.BFloat16)
    fd.add_output(tv31)
    fd.add_output(tv30)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((256,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 64, 256), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 64, 256), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 64, 1), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
