# segkit fuzz finding f033: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 27.4; minimized from 3 to 3 ops in 2 s (7 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/runtime/fusion_kernel_runtime.cpp:476, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:pad>welford>expand
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
import torch
from nvfuser_direct import FusionDefinition, DataType

def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[8, 1, 5, 3], contiguity=[None, None, True, None], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.ops.pad(tv0, pad_widths=[1, 2])
    tv2, tv3, tv4 = fd.ops.welford(tv1, dims=[0, 3])
    tv5 = fd.ops.expand(tv0, shape=[8, 3, 5, 3])
    fd.add_output(tv5)
    fd.add_output(tv1)
    fd.add_output(tv2)

with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

inputs = [
    torch.randn(5, dtype=torch.float32, device='cuda:0').as_strided((8, 1, 5, 3), (0, 5, 1, 0)),
]
fd.execute(inputs)
