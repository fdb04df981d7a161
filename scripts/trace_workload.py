"""A small GPU workload under two NVTX ranges: an nvFuser fusion and eager PyTorch (trace fixtures, GPU host).

    nsys profile --trace=cuda,nvtx -o report python scripts/trace_workload.py
    python -m segkit.trace.torch_run trace.json scripts/trace_workload.py
"""

import torch
import torch.nn.functional as F

import fusions
import segkit
from segkit import trace

spec = fusions.get("layernorm_fwd")
fd = spec.build("nanogpt")
inputs = list(spec.make_inputs("nanogpt", device="cuda").values())
x, w, b = inputs
segkit.run_nvfuser(fd, inputs, profile=False)  # compile outside the ranges
F.layer_norm(x, (x.shape[-1],), w, b)
torch.cuda.synchronize()
for _ in range(3):
    with trace.range("nvfuser:layernorm_fwd"):
        segkit.run_nvfuser(fd, inputs, profile=False)
        torch.cuda.synchronize()
    with trace.range("eager:layer_norm"):
        F.layer_norm(x, (x.shape[-1],), w, b)
        torch.cuda.synchronize()
