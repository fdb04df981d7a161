# CUDA devices:
#  0: NVIDIA H200
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 4, 32, 16], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[2, 4, 32, 16], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[32, 16], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.define_tensor(shape=[32, 16], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv4 = fd.define_tensor(shape=[2, 4, 32, 16], contiguity=[True, True, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[3, 1, 2, 0])
    c521 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv42 = fd.ops.full(shape=[2, 4, 32, 0], fill_value=c521, dtype=DataType.BFloat16)
    tv44 = fd.ops.pad(tv42, pad_widths=[0, 16, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv45 = fd.ops.cast(tv44, dtype=DataType.Float)
    tv19 = fd.ops.broadcast(tv3, is_broadcast_dim=[True, True, False, False])
    tv20 = fd.ops.expand(tv19, shape=[2, 4, 32, 16])
    tv23 = fd.ops.cast(tv20, dtype=DataType.Float)
    tv6 = fd.ops.cast(tv1, dtype=DataType.BFloat16)
    tv8 = fd.ops.cast(tv6, dtype=DataType.Float)
    tv28 = fd.ops.mul(tv23, tv8)
    tv9 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, True, False, False])
    tv10 = fd.ops.expand(tv9, shape=[2, 4, 32, 16])
    tv11 = fd.ops.cast(tv10, dtype=DataType.Float)
    tv13 = fd.ops.mul(tv11, tv8)
    tv15 = fd.ops.cast(tv13, dtype=DataType.BFloat16)
    tv17 = fd.ops.slice(tv15, start_indices=[0, 0, 0, 0], end_indices=[2, 4, 32, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    tv21 = fd.ops.cast(tv17, dtype=DataType.Float)
    tv24 = fd.ops.neg(tv21)
    tv27 = fd.ops.cast(tv24, dtype=DataType.BFloat16)
    tv30 = fd.ops.pad(tv27, pad_widths=[8, 0, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv32 = fd.ops.cast(tv30, dtype=DataType.Float)
    tv36 = fd.ops.add(tv28, tv32)
    tv35 = fd.ops.slice(tv15, start_indices=[0, 0, 0, 8], end_indices=[2, 4, 32, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv38 = fd.ops.pad(tv35, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv40 = fd.ops.cast(tv38, dtype=DataType.Float)
    tv43 = fd.ops.add(tv36, tv40)
    tv47 = fd.ops.add(tv45, tv43)
    tv49 = fd.ops.cast(tv47, dtype=DataType.BFloat16)
    tv52 = fd.ops.broadcast(tv49, is_broadcast_dim=[False, False, True, False, False])
    c623 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv53 = fd.ops.pad(tv52, pad_widths=[0, 0, 0, 0, 0, 2, 0, 0, 0, 0], value=c623)
    tv5 = fd.ops.cast(tv0, dtype=DataType.BFloat16)
    tv7 = fd.ops.cast(tv5, dtype=DataType.Float)
    tv26 = fd.ops.mul(tv23, tv7)
    tv12 = fd.ops.mul(tv11, tv7)
    tv14 = fd.ops.cast(tv12, dtype=DataType.BFloat16)
    tv16 = fd.ops.slice(tv14, start_indices=[0, 0, 0, 0], end_indices=[2, 4, 32, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    tv18 = fd.ops.cast(tv16, dtype=DataType.Float)
    tv22 = fd.ops.neg(tv18)
    tv25 = fd.ops.cast(tv22, dtype=DataType.BFloat16)
    tv29 = fd.ops.pad(tv25, pad_widths=[8, 0, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv31 = fd.ops.cast(tv29, dtype=DataType.Float)
    tv34 = fd.ops.add(tv26, tv31)
    tv33 = fd.ops.slice(tv14, start_indices=[0, 0, 0, 8], end_indices=[2, 4, 32, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv37 = fd.ops.pad(tv33, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=0.00000)
    tv39 = fd.ops.cast(tv37, dtype=DataType.Float)
    tv41 = fd.ops.add(tv34, tv39)
    tv46 = fd.ops.add(tv45, tv41)
    tv48 = fd.ops.cast(tv46, dtype=DataType.BFloat16)
    tv51 = fd.ops.broadcast(tv48, is_broadcast_dim=[False, False, True, False, False])
    c621 = fd.ops.add(0, 1)
    c638 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv54 = fd.ops.pad(tv51, pad_widths=[0, 0, 0, 0, c621, 1, 0, 0, 0, 0], value=c638)
    tv50 = fd.ops.broadcast(tv4, is_broadcast_dim=[False, False, True, False, False])
    c636 = fd.ops.add(c621, 1)
    c656 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv55 = fd.ops.pad(tv50, pad_widths=[0, 0, 0, 0, c636, 0, 0, 0, 0, 0], value=c656)
    tv56 = fd.ops.cat([tv53, tv54, tv55], dim=2, manual_padding=True)
    tv57 = fd.ops.permute(tv56, dims=[0, 3, 1, 2, 4])
    tv58 = fd.ops.reshape(tv57, new_shape=[2, 32, 192])
    fd.add_output(tv58)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((2, 4, 32, 16), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((2, 4, 32, 16), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((32, 16), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((32, 16), dtype=torch.bfloat16, device='cuda:0'),
    torch.randn(4096, dtype=torch.bfloat16, device='cuda:0').as_strided((2, 4, 32, 16), (2048, 16, 64, 1)),
]
fd.execute(inputs)
