# CUDA devices:
#  0: NVIDIA H200
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[2, 256, 6144], contiguity=[True, True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.define_tensor(shape=[256, 128], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv2 = fd.define_tensor(shape=[256, 128], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv3 = fd.ops.reshape(tv0, new_shape=[2, 256, 8, 6, 128])
    tv4 = fd.ops.permute(tv3, dims=[0, 2, 3, 1, 4])
    tv7 = fd.ops.slice(tv4, start_indices=[0, 0, 5, 0, 0], end_indices=[2, 8, 6, 256, 128], strides=[1, 1, 1, 1, 1], manual_normalization=True)
    tv9 = fd.ops.expand(tv7, shape=[2, 8, 4, 256, 128])
    tv12 = fd.ops.reshape(tv9, new_shape=[2, 32, 256, 128])
    tv5 = fd.ops.slice(tv4, start_indices=[0, 0, 0, 0, 0], end_indices=[2, 8, 4, 256, 128], strides=[1, 1, 1, 1, 1], manual_normalization=True)
    tv10 = fd.ops.reshape(tv5, new_shape=[2, 32, 256, 128])
    tv23 = fd.ops.cast(tv10, dtype=DataType.Float)
    tv21 = fd.ops.broadcast(tv1, is_broadcast_dim=[True, True, False, False])
    tv22 = fd.ops.expand(tv21, shape=[2, 32, 256, 128])
    tv24 = fd.ops.cast(tv22, dtype=DataType.Float)
    tv25 = fd.ops.mul(tv23, tv24)
    tv14 = fd.ops.slice(tv10, start_indices=[0, 0, 0, 64], end_indices=[2, 32, 256, 128], strides=[1, 1, 1, 1], manual_normalization=True)
    tv15 = fd.ops.cast(tv14, dtype=DataType.Float)
    tv16 = fd.ops.neg(tv15)
    tv17 = fd.ops.cast(tv16, dtype=DataType.BFloat16)
    c263 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv18 = fd.ops.pad(tv17, pad_widths=[0, 64, 0, 0, 0, 0, 0, 0], value=c263)
    tv13 = fd.ops.slice(tv10, start_indices=[0, 0, 0, 0], end_indices=[2, 32, 256, 64], strides=[1, 1, 1, 1], manual_normalization=True)
    c261 = fd.ops.add(0, 64)
    c276 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv19 = fd.ops.pad(tv13, pad_widths=[c261, 0, 0, 0, 0, 0, 0, 0], value=c276)
    tv20 = fd.ops.cat([tv18, tv19], dim=3, manual_padding=True)
    tv28 = fd.ops.cast(tv20, dtype=DataType.Float)
    tv26 = fd.ops.broadcast(tv2, is_broadcast_dim=[True, True, False, False])
    tv27 = fd.ops.expand(tv26, shape=[2, 32, 256, 128])
    tv29 = fd.ops.cast(tv27, dtype=DataType.Float)
    tv30 = fd.ops.mul(tv28, tv29)
    tv31 = fd.ops.add(tv25, tv30)
    tv32 = fd.ops.cast(tv31, dtype=DataType.BFloat16)
    tv48 = fd.ops.cast(tv32, dtype=DataType.BFloat16)
    tv6 = fd.ops.slice(tv4, start_indices=[0, 0, 4, 0, 0], end_indices=[2, 8, 5, 256, 128], strides=[1, 1, 1, 1, 1], manual_normalization=True)
    tv8 = fd.ops.expand(tv6, shape=[2, 8, 4, 256, 128])
    tv11 = fd.ops.reshape(tv8, new_shape=[2, 32, 256, 128])
    tv41 = fd.ops.cast(tv11, dtype=DataType.Float)
    tv42 = fd.ops.mul(tv41, tv24)
    tv34 = fd.ops.slice(tv11, start_indices=[0, 0, 0, 64], end_indices=[2, 32, 256, 128], strides=[1, 1, 1, 1], manual_normalization=True)
    tv35 = fd.ops.cast(tv34, dtype=DataType.Float)
    tv36 = fd.ops.neg(tv35)
    tv37 = fd.ops.cast(tv36, dtype=DataType.BFloat16)
    c468 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv38 = fd.ops.pad(tv37, pad_widths=[0, 64, 0, 0, 0, 0, 0, 0], value=c468)
    tv33 = fd.ops.slice(tv11, start_indices=[0, 0, 0, 0], end_indices=[2, 32, 256, 64], strides=[1, 1, 1, 1], manual_normalization=True)
    c466 = fd.ops.add(0, 64)
    c481 = fd.define_scalar(0.00000, dtype=DataType.BFloat16)
    tv39 = fd.ops.pad(tv33, pad_widths=[c466, 0, 0, 0, 0, 0, 0, 0], value=c481)
    tv40 = fd.ops.cat([tv38, tv39], dim=3, manual_padding=True)
    tv43 = fd.ops.cast(tv40, dtype=DataType.Float)
    tv44 = fd.ops.mul(tv43, tv29)
    tv45 = fd.ops.add(tv42, tv44)
    tv46 = fd.ops.cast(tv45, dtype=DataType.BFloat16)
    tv50 = fd.ops.cast(tv46, dtype=DataType.BFloat16)
    fd.add_output(tv12)
    fd.add_output(tv48)
    fd.add_output(tv50)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((2, 256, 6144), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((256, 128), dtype=torch.bfloat16, device='cuda:0'),
    torch.testing.make_tensor((256, 128), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
