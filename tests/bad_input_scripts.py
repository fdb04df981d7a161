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

# issue 76's classes left from the earlier held-out sets: a fusion function that never returns, a CUDA stream on a
# machine without a GPU, an op given an operand it does not take, a misspelled keyword (each line 7 of its script)
_HEAD = """\
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    T0 = fd.define_tensor(shape=[4, 8], contiguity=[True, True], dtype=DataType.Float, is_cpu=False)
    T1 = fd.define_scalar(2.0, dtype=DataType.Double)
"""
_TAIL = """
with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [torch.randn((4, 8), dtype=torch.float32, device='cuda:0')]
fd.execute(inputs)
"""
LOOPING_FUSION = _HEAD + "    while True:\n        T1 = fd.ops.neg(T0)\n    fd.add_output(T1)\n" + _TAIL
CUDA_STREAM = _HEAD + "    fd.add_output(fd.ops.neg(T0))\n" + _TAIL.replace(
    "inputs = [", "stream = torch.cuda.Stream()\nwith torch.cuda.stream(stream):\n    inputs = [")
MATMUL_OF_A_SCALAR = _HEAD + "    fd.add_output(fd.ops.matmul(T0, T1))\n" + _TAIL
MISSPELLED_KEYWORD = _HEAD + "    fd.add_output(fd.ops.sum(T0, dims=[1], keepdimm=False, dtype=DataType.Float))\n" + _TAIL
