# CUDA devices:
#  0: NVIDIA H200
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 64], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.define_tensor(shape=[256], contiguity=[True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[2, 64, 256], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.define_tensor(shape=[2, 64, 256], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv4 = fd.define_tensor(shape=[2, 64, 1], contiguity=[True, True, None], dtype=DataType.Float, is_cpu=False)
    tv47 = fd.ops.cast(tv2, dtype=DataType.Float)
    tv50 = fd.ops.sum(tv47, dims=[0, 1], dtype=DataType.Float)
    tv53 = fd.ops.cast(tv50, dtype=DataType.BFloat16)
    tv12 = fd.ops.cast(tv3, dtype=DataType.Float)
    tv5 = fd.ops.broadcast(tv0, is_broadcast_dim=[False, False, True])
    tv6 = fd.ops.cast(tv5, dtype=DataType.Float)
    tv11 = fd.ops.expand(tv6, shape=[2, 64, 256])
    tv14 = fd.ops.sub(tv12, tv11)
    tv17 = fd.ops.expand(tv4, shape=[2, 64, 256])
    tv44 = fd.ops.mul(tv14, tv17)
    tv9 = fd.ops.cast(tv2, dtype=DataType.Float)
    tv46 = fd.ops.mul(tv44, tv9)
    tv49 = fd.ops.sum(tv46, dims=[0, 1], dtype=DataType.Float)
    tv52 = fd.ops.cast(tv49, dtype=DataType.BFloat16)
    tv7 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, True, False])
    tv8 = fd.ops.expand(tv7, shape=[2, 64, 256])
    tv10 = fd.ops.cast(tv8, dtype=DataType.Float)
    tv13 = fd.ops.mul(tv10, tv9)
    tv18 = fd.ops.mul(tv17, tv13)
    tv21 = fd.ops.neg(tv18)
    tv25 = fd.ops.sum(tv21, dims=[2], dtype=DataType.Float)
    tv27 = fd.ops.broadcast(tv25, is_broadcast_dim=[False, False, True])
    tv28 = fd.ops.cast(tv27, dtype=DataType.Float)
    tv33 = fd.ops.squeeze(tv28, dims=[2])
    tv38 = fd.ops.broadcast(tv33, is_broadcast_dim=[False, False, True])
    tv39 = fd.ops.cast(tv38, dtype=DataType.Float)
    tv41 = fd.ops.expand(tv39, shape=[2, 64, 256])
    tv43 = fd.ops.mul(0.00390625, tv41)
    tv15 = fd.ops.mul(tv14, tv13)
    tv16 = fd.ops.sum(tv15, dims=[2], dtype=DataType.Float)
    tv19 = fd.ops.broadcast(tv16, is_broadcast_dim=[False, False, True])
    tv20 = fd.ops.cast(tv19, dtype=DataType.Float)
    tv23 = fd.ops.mul(-0.500000, tv20)
    tv22 = fd.ops.pow(tv4, 3.00000)
    tv24 = fd.ops.mul(tv23, tv22)
    tv26 = fd.ops.squeeze(tv24, dims=[2])
    tv31 = fd.ops.broadcast(tv26, is_broadcast_dim=[False, False, True])
    tv32 = fd.ops.cast(tv31, dtype=DataType.Float)
    tv35 = fd.ops.expand(tv32, shape=[2, 64, 256])
    tv37 = fd.ops.mul(2.00000, tv35)
    tv29 = fd.ops.broadcast(tv0, is_broadcast_dim=[False, False, True])
    tv30 = fd.ops.cast(tv29, dtype=DataType.Float)
    tv34 = fd.ops.expand(tv30, shape=[2, 64, 256])
    tv36 = fd.ops.sub(tv12, tv34)
    tv40 = fd.ops.mul(tv37, tv36)
    c189 = fd.ops.reciprocal(256.000)
    tv42 = fd.ops.mul(tv40, c189)
    tv45 = fd.ops.add(tv43, tv42)
    tv48 = fd.ops.add(tv18, tv45)
    tv51 = fd.ops.cast(tv48, dtype=DataType.BFloat16)
    fd.add_output(tv53)
    fd.add_output(tv52)
    fd.add_output(tv51)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((2, 64), dtype=torch.float32, device='cuda:0'),
    torch.testing.make_tensor((256,), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 64, 256), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 64, 256), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 64, 1), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
