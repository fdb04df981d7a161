# CUDA devices:
#  0: NVIDIA H200
# torch version: 2.11.0+cu130
# cuda version: 13.0
import torch
from nvfuser_direct import FusionDefinition, DataType
def nvfuser_fusion(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[64, 256], contiguity=[True, True], dtype=DataType.BFloat16, is_cpu=False)
    tv1 = fd.ops.cast(tv0, dtype=DataType.Float)
    tv2 = fd.ops.abs(tv1)
    tv3 = fd.ops.max(tv2, dims=[1])
    tv4 = fd.ops.max(tv2, dims=[0])
    tv5 = fd.ops.max(tv2, dims=[0, 1])
    fd.add_output(tv3)
    fd.add_output(tv4)
    fd.add_output(tv5)
with FusionDefinition() as fd:
    nvfuser_fusion(fd)

inputs = [
    torch.testing.make_tensor((64, 256), dtype=torch.bfloat16, device='cuda:0'),
]
fd.execute(inputs)
