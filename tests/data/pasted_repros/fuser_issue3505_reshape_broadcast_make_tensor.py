# Source: https://github.com/NVIDIA/Fuser/issues/3505 (comment by jjsjann123, "A smaller repro")
# Thread date: 2024-12-02; targets: nvfuser 0.2.23+gitc154e90, torch 2.6.0a0 (stated in the script).
# Pasted as in the thread; nothing changed.
# CUDA devices:
#  0: NVIDIA A100 80GB PCIe
# torch version: 2.6.0a0+git45ed7c1
# cuda version: 12.8
# nvfuser version: 0.2.23+gitc154e90
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[1, 2048, 512], contiguity=[None, True, True], dtype=DataType.BFloat16, is_cpu=False, stride_order=[2, 1, 0])
    T6 = fd.ops.reshape(T0, new_shape=[1, 2048, 8, 64])
    T7 = fd.ops.permute(T6, dims=[0, 2, 1, 3])
    T14 = fd.ops.broadcast_in_dim(T7, shape=[1, 8, 1, 2048, 64], broadcast_dims=[0, 1, 3, 4])
    T21 = fd.ops.broadcast_in_dim(T14, shape=[1, 8, 4, 2048, 64], broadcast_dims=[0, 1, 2, 3, 4])
    T27 = fd.ops.reshape(T21, new_shape=[1, 32, 2048, 64])
    fd.add_output(T7)
    fd.add_output(T27)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.testing.make_tensor((1, 2048, 512), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
