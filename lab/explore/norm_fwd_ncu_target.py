"""A target for Nsight Compute: a few calls of one executor's norm forward (y alone, bf16) at one config, as the
forward suite sets it up (benchmarks/executors.py), so ncu can profile one of its kernels.

    ncu --section SpeedOfLight --section Occupancy ... -k regex:nvfuser --launch-skip 3 --launch-count 1 \\
        python lab/explore/norm_fwd_ncu_target.py rmsnorm segkit [CONFIG]
    (torch.compile's kernels: -k regex:triton ... rmsnorm torch.compile)
"""
import sys

import torch

from benchmarks import workloads
from benchmarks.executors import norm_forward

kind, executor = sys.argv[1], sys.argv[2]
config = sys.argv[3] if len(sys.argv) > 3 else "mixorder_576000x384"
cfg, inputs, _, _ = workloads.case_data(f"{kind}_fwd", config, torch.bfloat16)
prepared = norm_forward(kind, cfg, executor, inputs)
for _ in range(5):
    prepared.fn()
torch.cuda.synchronize()
