# segkit fuzz finding f020: crash under realization any
# Found by `segkit fuzz --seed 1` (target nvfuser), case 5.8; minimized from 6 to 3 ops in 28 s (6 checks).
# On nvfuser_direct 0.2.36+git7e04d26, gpu NVIDIA H100 80GB HBM3, torch 2.11.0+cu130:
#   worker died (exit code -11)
# Signature: crash:permute>reshape>cumsum
# Steps: keep output 0; cut at tv1
# Re-check: segkit fuzz --replay DIR; standalone script for an upstream issue: segkit fuzz --emit FILE
# Standalone (torch + nvfuser_direct only): exits 1 when nvFuser's outputs differ from the expected
# values, which segkit's reference interpreter computed for these exact inputs.
import math
import sys

import torch
from nvfuser_direct import FusionDefinition, DataType

DEVICE = 'cuda:0'


def nvfuser_fusion_id0(fd : FusionDefinition) -> None :
    tv0 = fd.define_tensor(shape=[33, 128, 1], contiguity=[True, True, None], dtype=DataType.Float, is_cpu=False)
    tv1 = fd.ops.permute(tv0, dims=[1, 0, 2])
    tv2 = fd.ops.reshape(tv1, new_shape=[4224])
    tv3 = fd.ops.cumsum(tv2, dim=0)
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


inputs = [strided(4224, (33, 128, 1), (128, 1, 1), torch.float32)]
outputs = fd.execute(inputs)

EXPECTED = [{'shape': (4224,), 'tol': 1e-05, 'max_abs': 50.9438362121582, 'points': {(0,): -1.1258398294448853, (844,): -13.815728187561035, (1689,): -11.118162155151367, (2533,): -19.070375442504883, (3378,): -34.15991973876953, (4223,): -47.4600944519043}, 'sum': -70241.09611948673, 'abs sum': 74848.08164551947, 'weighted sum': -15826.007441796859}]

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
