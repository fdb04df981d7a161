# segkit fuzz finding f037: error under realization inputs+outputs/segment_set
# Found by `segkit fuzz --seed 1` (target nvfuser), case 54.38; minimized from 4 to 4 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/runtime/fusion_kernel_runtime.cpp:476, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:set>reshape>reshape>reshape
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[1, 4, -1, 128], contiguity=[None, None, True, None], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.ops.set(tv0)
    tv2 = fd.ops.reshape(tv1, new_shape=[4, 128, 128])
    tv3 = fd.ops.reshape(tv2, new_shape=[512, 128])
    tv4 = fd.ops.reshape(tv1, new_shape=[1, 1, 4, 128, 128])
    fd.add_output(tv4)
    fd.add_output(tv2)
    fd.add_output(tv3)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(128, dtype=torch.float32, device='cuda:0').as_strided((1, 4, 128, 128), (128, 0, 1, 0)),
]
fd.execute(inputs)
