"""What the norm exploration scripts share: a workload on the GPU with its bytes floor, the spec's fusion
on nvFuser (optionally only some of its outputs), and the closeness check against the default schedule."""
import torch
import nvfuser_direct as nvf
from nvfuser_direct import schedule

import fusions
from benchmarks.harness import copy_bandwidth_gbs
from benchmarks.workloads import norm_bytes

GBS = copy_bandwidth_gbs()
print(f"copy bw {GBS:.0f} GB/s", flush=True)


def norm_case(kind: str, direction: str, shape: str):
    """(spec, bf16 config, inputs on the GPU, bytes floor in us at the measured copy bandwidth)."""
    spec = fusions.get(f"{kind}_{direction}")
    cfg = spec.config(shape, torch.bfloat16)
    inputs = list(spec.make_inputs(cfg, device="cuda").values())
    return spec, cfg, inputs, norm_bytes(kind, direction, cfg) / GBS / 1e3


def build(spec, cfg, keep=None):
    """The spec's fusion on nvFuser; with ``keep``, only those output indices are outputs."""
    with nvf.FusionDefinition() as fd:
        if keep is None:
            spec.define(fd, cfg)
        else:
            outputs, add = [], fd.add_output
            fd.add_output = outputs.append
            spec.define(fd, cfg)
            for i in keep:
                add(outputs[i])
    return fd


def schedule_manually(spec, cfg, inputs, scheduler, tweak, keep=None):
    """The spec's fusion (``keep`` as in ``build``) scheduled by ``scheduler`` with nvFuser's own heuristic
    parameters, ``tweak(params)`` applied first: (fd, params), ready for ``fd.manual_execute(inputs, params)``."""
    fd = build(spec, cfg, keep)
    params = schedule.compute_heuristics(fd.fusion, scheduler, inputs)
    tweak(params)
    schedule.schedule(fd.fusion, scheduler, params)
    return fd, params


def close(a, b) -> bool:
    return all(torch.allclose(x.float(), y.float(), rtol=2e-2, atol=2e-2) for x, y in zip(a, b))


def reporter(kind: str, shape: str, floor_us: float):
    """The exploration scripts' result line: kernel time, the bytes floor's share of it, the check, details."""
    def report(tag, us, ok=True, extra=""):
        print(f"RES {kind:9s} {shape:20s} {tag:26s} {us:8.2f} us  {100 * floor_us / us:5.1f}% floor  ok={ok} {extra}",
              flush=True)
    return report
