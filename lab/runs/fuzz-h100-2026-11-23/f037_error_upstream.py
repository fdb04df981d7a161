# segkit fuzz finding f037: error under realization inputs+outputs/segment_set
# Found by `segkit fuzz --seed 1` (target nvfuser), case 54.38; minimized from 4 to 4 ops in 0 s (0 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/runtime/fusion_kernel_runtime.cpp:476, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:set>reshape>reshape>reshape
# Steps: none
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
# The fusion below is what nvFuser ran under inputs+outputs/segment_set: segkit.bookend's segment_set ops written out.
# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected
# values, which segkit's reference interpreter computed for these exact inputs.
import math
import sys

import torch
from nvfuser_direct import FusionDefinition, DataType

DEVICE = 'cuda:0'


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[1, 4, -1, 128], contiguity=[None, None, True, None], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.ops.set(tv0)
    tv2 = fd.ops.segment_set(tv1)
    tv3 = fd.ops.reshape(tv2, new_shape=[4, 128, 128])
    tv4 = fd.ops.segment_set(tv3)
    tv5 = fd.ops.reshape(tv4, new_shape=[512, 128])
    tv6 = fd.ops.reshape(tv2, new_shape=[1, 1, 4, 128, 128])
    fd.add_output(tv6)
    fd.add_output(tv4)
    fd.add_output(tv5)


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


inputs = [strided(128, (1, 4, 128, 128), (128, 0, 1, 0), torch.float32)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (1, 1, 4, 128, 128), 'tol': 1e-05, 'max_abs': 3.4105026721954346, 'points': {(0, 0, 0, 0, 0): -1.1258398294448853, (0, 0, 0, 102, 51): -0.22824178636074066, (0, 0, 1, 76, 102): -1.0669803619384766, (0, 0, 2, 51, 25): 0.17784371972084045, (0, 0, 3, 25, 76): -0.5854975581169128, (0, 0, 3, 127, 127): 1.3872952461242676}, 'sum': 3436.782294422388, 'abs sum': 53381.871779590845, 'weighted sum': 107.80449862321188}, {'shape': (4, 128, 128), 'tol': 1e-05, 'max_abs': 3.4105026721954346, 'points': {(0, 0, 0): -1.1258398294448853, (0, 102, 51): -0.22824178636074066, (1, 76, 102): -1.0669803619384766, (2, 51, 25): 0.17784371972084045, (3, 25, 76): -0.5854975581169128, (3, 127, 127): 1.3872952461242676}, 'sum': 3436.782294422388, 'abs sum': 53381.871779590845, 'weighted sum': 107.80449862321188}, {'shape': (512, 128), 'tol': 1e-05, 'max_abs': 3.4105026721954346, 'points': {(0, 0): -1.1258398294448853, (102, 51): -0.22824178636074066, (204, 102): -1.0669803619384766, (307, 25): 0.17784371972084045, (409, 76): -0.5854975581169128, (511, 127): 1.3872952461242676}, 'sum': 3436.782294422388, 'abs sum': 53381.871779590845, 'weighted sum': 107.80449862321188}]

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
