# segkit fuzz finding f017: mismatch under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 55.8; minimized from 3 to 3 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   output 1: shape mismatch, reference [1, 8, 256, 7], output [1, 1, 256, 7]: MISMATCH
# Signature: mismatch:slice>expand>permute
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
    tv0 = fd.define_tensor(shape=[2, 1, -1, -1], contiguity=[None, None, False, True], dtype=DataType.Double, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.define_tensor(shape=[-1, 1], contiguity=[True, None], dtype=DataType.Float, is_cpu=False, stride_order=[1, 0])
    tv2 = fd.ops.slice(tv0, start_indices=[1, 0, 0, 0], end_indices=[2, 1, 256, 7])
    tv3 = fd.ops.expand(tv2, shape=[1, 8, 256, 7])
    tv4 = fd.ops.permute(tv1, dims=[1, 0])
    fd.add_output(tv4)
    fd.add_output(tv3)


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


inputs = [strided(2047, (2, 1, 256, 7), (0, 2048, 8, 1), torch.float64), strided(8, (8, 1), (1, 1), torch.float32)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (1, 8), 'tol': 1e-05, 'max_abs': 2.3815226554870605, 'points': {(0, 0): 2.115062713623047, (0, 1): 0.004688918590545654, (0, 2): -0.3487146198749542, (0, 4): -1.2600313425064087, (0, 5): 0.5031471252441406, (0, 7): 0.429098904132843}, 'sum': 3.8641657158732414, 'abs sum': 7.081657640635967, 'weighted sum': 0.19122636424643674}, {'shape': (1, 8, 256, 7), 'tol': 1e-10, 'max_abs': 4.1014933586120605, 'points': {(0, 0, 0, 0): -1.1258398294448853, (0, 1, 153, 4): -1.9764143228530884, (0, 3, 51, 1): -1.2176920175552368, (0, 4, 204, 5): -2.2150771617889404, (0, 6, 102, 2): -1.1217594146728516, (0, 7, 255, 6): 0.4536174237728119}, 'sum': 315.9559662952088, 'abs sum': 11515.619610543828, 'weighted sum': -45.28252495349822}]

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
