"""Repro scripts the bad-input tests (CPU and GPU) share: a legacy softmax whose reductions say
``dtype=DataType.Null`` (as nvFuser's printer writes them), and log(0) / 0/0 on an all-zero input."""

SOFTMAX = """\
import torch
from nvfuser import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[8, 16], contiguity=[True, True], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    T1 = fd.ops.max(T0, dims=[1], keepdim=False, dtype=DataType.Null)
    T2 = fd.ops.broadcast_in_dim(T1, shape=[8, 1], broadcast_dims=[0])
    T3 = fd.ops.sub(T0, T2)
    T4 = fd.ops.exp(T3)
    T5 = fd.ops.sum(T4, dims=[1], keepdim=False, dtype=DataType.Null)
    T6 = fd.ops.broadcast_in_dim(T5, shape=[8, 1], broadcast_dims=[0])
    T7 = fd.ops.div(T4, T6)
    fd.add_output(T7)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn((8, 16), dtype=torch.float32, device='cuda:0'),
]
fd.execute(inputs)
"""

# log(0) = -inf and 0/0 = NaN on an all-zero input, with a permute to bookend
LOG_ZERO = """\
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.ops.log(T0)
    T2 = fd.ops.div(T0, T0)
    T3 = fd.ops.permute(T1, dims=[1, 0])
    fd.add_output(T3)
    fd.add_output(T2)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.zeros((4, 8), dtype=torch.float32, device='cuda:0'),
]
"""
