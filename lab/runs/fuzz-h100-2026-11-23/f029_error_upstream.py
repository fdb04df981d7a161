# segkit fuzz finding f029: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 19.15; minimized from 7 to 7 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: Error from segmentation group 2:  INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/interval_analysis.cpp:630, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:slice>cast>var_mean>broadcast>div>pad>permute
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected
# values, which segkit's reference interpreter computed for these exact inputs.
import math
import sys

import torch
from nvfuser_direct import FusionDefinition, DataType

DEVICE = 'cuda:0'


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[-1, 1, -1], contiguity=[True, None, True], dtype=DataType.Half, is_cpu=False, stride_order=[2, 1, 0])
    tv1 = fd.ops.slice(tv0, start_indices=[11, 0, 0], end_indices=[19, 1, 4])
    tv2 = fd.ops.cast(tv1, dtype=DataType.Float)
    tv3, tv4 = fd.ops.var_mean(tv2, dims=[2], correction=0)
    tv5 = fd.ops.broadcast(tv3, is_broadcast_dim=[False, False, True])
    tv6 = fd.ops.div(tv2, tv5)
    tv7 = fd.ops.pad(tv6, pad_widths=[3, 0], value=0.0)
    tv8 = fd.ops.permute(tv7, dims=[0, 2, 1])
    fd.add_output(tv8)


with FusionDefinition() as fd:
    nvfuser_fusion_id0(fd)

_gen = torch.Generator().manual_seed(0)


def strided(storage, shape, strides, dtype):
    """Inputs drawn exactly as segkit's repro loader draws them (CPU generator, seed 0, in order)."""
    if dtype.is_floating_point:
        base = torch.randn(storage, generator=_gen, dtype=torch.float32).to(dtype)
    elif dtype == torch.bool:
        base = torch.randint(0, 2, (storage,), generator=_gen).bool()
    else:
        base = torch.randint(-8, 9, (storage,), generator=_gen).to(dtype)
    return base.to(DEVICE).as_strided(shape, strides)


inputs = [strided(132, (33, 1, 4), (4, 4, 1), torch.float16)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (8, 7, 1), 'tol': 1e-05, 'max_abs': 6.917079448699951, 'points': {(0, 0, 0): 0.0, (1, 4, 0): 1.8906179666519165, (3, 1, 0): 0.0, (4, 5, 0): 1.0513670444488525, (6, 2, 0): 0.0, (7, 6, 0): -2.1221914291381836}, 'sum': -6.2645121067762375, 'abs sum': 47.51998595893383, 'weighted sum': -10.482537999749184}]

def _close(got, want, tol, scale):
    if math.isnan(want):
        return math.isnan(got)
    return got == want or abs(got - want) <= tol * scale


bad = 0
for i, (out, want) in enumerate(zip(outputs, EXPECTED)):
    x = out.detach().to("cpu", torch.float64)
    if tuple(x.shape) != want["shape"]:
        print(f"MISMATCH output {i}: shape {tuple(x.shape)}, expected {want['shape']}")
        bad += 1
        continue
    scale = max(want["max_abs"], 1e-30)
    for index, value in want["points"].items():
        got = x[index].item()
        if not _close(got, value, want["tol"], scale):
            print(f"MISMATCH output {i} at {list(index)}: nvFuser {got!r}, expected {value!r}")
            bad += 1
    w = torch.linspace(-1, 1, x.numel(), dtype=torch.float64).reshape(x.shape)
    for name, got in (("sum", x.sum()), ("abs sum", x.abs().sum()), ("weighted sum", (x * w).sum())):
        if not _close(got.item(), want[name], want["tol"], max(want["abs sum"], 1e-30)):
            print(f"MISMATCH output {i} {name}: nvFuser {got.item()!r}, expected {want[name]!r}")
            bad += 1
print("nvFuser matches the expected values" if not bad else f"{bad} checks differ from the expected values")
sys.exit(1 if bad else 0)
