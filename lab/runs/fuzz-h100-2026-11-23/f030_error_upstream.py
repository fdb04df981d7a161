# segkit fuzz finding f030: error under realization outputs/host
# Found by `segkit fuzz --seed 1` (target nvfuser), case 20.33; minimized from 3 to 3 ops in 2 s (14 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/device_lower/validation.cpp:1559, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:select>permute>reshape
# Steps: size 32 -> 16
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
# The fusion below is what nvFuser ran under outputs/host: the core fusion, its inputs the host views of the script's inputs.
# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected
# values, which segkit's reference interpreter computed for these exact inputs.
import math
import sys

import torch
from nvfuser_direct import FusionDefinition, DataType

DEVICE = 'cuda:0'


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[16, 4, 16, 17], contiguity=[True, None, True, True], dtype=DataType.Int32, is_cpu=False, stride_order=[3, 2, 1, 0])
    c0 = fd.define_scalar(15, dtype=DataType.Int)
    tv1 = fd.ops.select(tv0, c0, dim=3)
    tv2 = fd.ops.reshape(tv0, new_shape=[64, 16, 17])
    fd.add_output(tv2)
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


inputs = [strided(4352, (16, 4, 16, 17), (272, 0, 17, 1), torch.int32)]
# the host-side views (bookended meta ops) the core fusion reads
inputs = [inputs[0].as_strided((16, 4, 16, 17), (272, 0, 17, 1), 0)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (64, 16, 17), 'tol': 1e-12, 'max_abs': 8.0, 'points': {(0, 0, 0): -1.0, (12, 12, 13): -7.0, (25, 9, 9): 6.0, (38, 6, 6): 0.0, (51, 3, 2): -4.0, (63, 15, 16): -2.0}, 'sum': -388.0, 'abs sum': 72828.0, 'weighted sum': -702.4063882346182}, {'shape': (16, 4, 16), 'tol': 1e-12, 'max_abs': 8.0, 'points': {(0, 0, 0): -1.0, (3, 0, 12): 7.0, (6, 1, 9): 6.0, (9, 2, 5): -3.0, (12, 3, 2): 6.0, (15, 3, 15): -5.0}, 'sum': -364.0, 'abs sum': 4420.0, 'weighted sum': -19.843597262952102}]

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
