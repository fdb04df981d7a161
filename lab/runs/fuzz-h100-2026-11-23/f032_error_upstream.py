# segkit fuzz finding f032: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 26.35; minimized from 3 to 1 ops in 0 s (7 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/type.h:1078, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:reshape
# Steps: cut at tv4; size 32 -> 16; size 16 -> 8; size 8 -> 4; size 4 -> 2; size 2 -> 1
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected
# values, which segkit's reference interpreter computed for these exact inputs.
import math
import sys

import torch
from nvfuser_direct import FusionDefinition, DataType

DEVICE = 'cuda:0'


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[31, 1, 1, 1], contiguity=[None, None, None, None], dtype=DataType.Index, is_cpu=False)
    tv1 = fd.ops.reshape(tv0, new_shape=[1, 31, 1, 1, 1])
    fd.add_output(tv1)


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


inputs = [strided(1, (31, 1, 1, 1), (0, 1, 1, 1), torch.int64)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (1, 31, 1, 1, 1), 'tol': 1e-12, 'max_abs': 1.0, 'points': {(0, 0, 0, 0, 0): -1.0, (0, 6, 0, 0, 0): -1.0, (0, 12, 0, 0, 0): -1.0, (0, 18, 0, 0, 0): -1.0, (0, 24, 0, 0, 0): -1.0, (0, 30, 0, 0, 0): -1.0}, 'sum': -31.0, 'abs sum': 31.0, 'weighted sum': 3.7470027081099033e-16}]

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
