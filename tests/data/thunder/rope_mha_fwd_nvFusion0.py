# CUDA devices:
#  0: NVIDIA H200
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 32, 192], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[32, 16], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[32, 16], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.ops.reshape(tv0, new_shape=[2, 32, 4, 3, 16])
    tv4 = fd.ops.permute(tv3, dims=[0, 2, 3, 1, 4])
    tv7 = fd.ops.slice(tv4, start_indices=[0, 0, 2, 0, 0], end_indices=[2, 4, 3, 32, 16], strides=[1, 1, 1, 1, 1], manual_normalization=True)
    tv10 = fd.ops.squeeze(tv7, dims=[2])
    tv5 = fd.ops.slice(tv4, start_indices=[0, 0, 0, 0, 0], end_indices=[2, 4, 1, 32, 16], strides=[1, 1, 1, 1, 1], manual_normalization=True)
    tv8 = fd.ops.squeeze(tv5, dims=[2])
    tv21 = fd.ops.cast(tv8, dtype=DataType.Float)
    tv19 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, True, False, False])
    tv20 = fd.ops.expand(tv19, shape=[2, 4, 32, 16])
    tv22 = fd.ops.cast(tv20, dtype=DataType.Float)
    tv23 = fd.ops.mul(tv21, tv22)
    tv12 = fd.ops.slice(tv8, start_indices=[0, 0, 0, 8], end_indices=[2, 4, 32, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv13 = fd.ops.cast(tv12, dtype=DataType.Float)
    tv14 = fd.ops.neg(tv13)
    tv15 = fd.ops.cast(tv14, dtype=DataType.BFloat16)
    c250 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv16 = fd.ops.pad(tv15, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=c250)
    tv11 = fd.ops.slice(tv8, start_indices=[0, 0, 0, 0], end_indices=[2, 4, 32, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    c248 = fd.ops.add(0, 8)
    c263 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv17 = fd.ops.pad(tv11, pad_widths=[c248, 0, 0, 0, 0, 0, 0, 0], value=c263)
    tv18 = fd.ops.cat([tv16, tv17], dim=3, manual_padding=True)
    tv26 = fd.ops.cast(tv18, dtype=DataType.Float)
    tv24 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, True, False, False])
    tv25 = fd.ops.expand(tv24, shape=[2, 4, 32, 16])
    tv27 = fd.ops.cast(tv25, dtype=DataType.Float)
    tv28 = fd.ops.mul(tv26, tv27)
    tv29 = fd.ops.add(tv23, tv28)
    tv30 = fd.ops.cast(tv29, dtype=DataType.BFloat16)
    tv46 = fd.ops.cast(tv30, dtype=DataType.BFloat16)
    tv6 = fd.ops.slice(tv4, start_indices=[0, 0, 1, 0, 0], end_indices=[2, 4, 2, 32, 16], strides=[1, 1, 1, 1, 1], manual_normalization=True)
    tv9 = fd.ops.squeeze(tv6, dims=[2])
    tv39 = fd.ops.cast(tv9, dtype=DataType.Float)
    tv40 = fd.ops.mul(tv39, tv22)
    tv32 = fd.ops.slice(tv9, start_indices=[0, 0, 0, 8], end_indices=[2, 4, 32, 16], strides=[1, 1, 1, 1], manual_normalization=True)
    tv33 = fd.ops.cast(tv32, dtype=DataType.Float)
    tv34 = fd.ops.neg(tv33)
    tv35 = fd.ops.cast(tv34, dtype=DataType.BFloat16)
    c455 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv36 = fd.ops.pad(tv35, pad_widths=[0, 8, 0, 0, 0, 0, 0, 0], value=c455)
    tv31 = fd.ops.slice(tv9, start_indices=[0, 0, 0, 0], end_indices=[2, 4, 32, 8], strides=[1, 1, 1, 1], manual_normalization=True)
    c453 = fd.ops.add(0, 8)
    c468 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv37 = fd.ops.pad(tv31, pad_widths=[c453, 0, 0, 0, 0, 0, 0, 0], value=c468)
    tv38 = fd.ops.cat([tv36, tv37], dim=3, manual_padding=True)
    tv41 = fd.ops.cast(tv38, dtype=DataType.Float)
    tv42 = fd.ops.mul(tv41, tv27)
    tv43 = fd.ops.add(tv40, tv42)
    tv44 = fd.ops.cast(tv43, dtype=DataType.BFloat16)
    tv48 = fd.ops.cast(tv44, dtype=DataType.BFloat16)
    fd.add_output(tv10)
    fd.add_output(tv46)
    fd.add_output(tv48)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((2, 32, 192), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((32, 16), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((32, 16), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
