# segkit fuzz finding f033: error under realization plain
# Found by `segkit fuzz --seed 1` (target nvfuser), case 27.4; minimized from 3 to 3 ops in 2 s (7 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   RuntimeError: INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/runtime/fusion_kernel_runtime.cpp:476, please report a bug with repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. 
# Signature: error:pad>welford>expand
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
    tv0 = fd.define_tensor(shape=[8, 1, 5, 3], contiguity=[None, None, True, None], dtype=DataType.Float, is_cpu=False, stride_order=[3, 2, 1, 0])
    tv1 = fd.ops.pad(tv0, pad_widths=[1, 2])
    tv2, tv3, tv4 = fd.ops.welford(tv1, dims=[0, 3])
    tv5 = fd.ops.expand(tv0, shape=[8, 3, 5, 3])
    fd.add_output(tv5)
    fd.add_output(tv1)
    fd.add_output(tv2)


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


inputs = [strided(5, (8, 1, 5, 3), (0, 5, 1, 0), torch.float32)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (8, 3, 5, 3), 'tol': 1e-05, 'max_abs': 2.1787893772125244, 'points': {(0, 0, 0, 0): 1.5409960746765137, (1, 1, 3, 2): 0.5684312582015991, (3, 0, 2, 2): -2.1787893772125244, (4, 2, 1, 2): -0.293428897857666, (6, 1, 0, 2): 1.5409960746765137, (7, 2, 4, 2): -1.0845223665237427}, 'sum': -104.20655822753906, 'abs sum': 407.9640941619873, 'weighted sum': -5.281683414427346}, {'shape': (8, 1, 5, 6), 'tol': 1e-05, 'max_abs': 2.1787893772125244, 'points': {(0, 0, 0, 0): 0.0, (1, 0, 2, 5): 0.0, (3, 0, 0, 5): 0.0, (4, 0, 3, 5): 0.0, (6, 0, 1, 5): 0.0, (7, 0, 4, 5): 0.0}, 'sum': -34.73551940917969, 'abs sum': 135.9880313873291, 'weighted sum': -5.143712877728449}, {'shape': (1, 5), 'tol': 1e-05, 'max_abs': 1.0893946886062622, 'points': {(0, 0): 0.7704980373382568, (0, 1): -0.146714448928833, (0, 2): -1.0893946886062622, (0, 3): 0.28421562910079956, (0, 4): -0.5422611832618713}, 'sum': -0.7236566543579102, 'abs sum': 2.833083987236023, 'weighted sum': -1.097294181585312}]

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
