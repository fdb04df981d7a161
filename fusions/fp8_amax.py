"""float8 scaling statistics: amax of |x| per row, per column and over all, in fp32 (one read of x)."""

from __future__ import annotations

import torch

from fusions.configs import AmaxConfig, amax_configs
from fusions.spec import FusionSpec, dt, nv_dtype, randn


def define(fd, cfg: AmaxConfig) -> None:
    x = fd.define_tensor(shape=[cfg.rows, cfg.cols], contiguity=[True, True], dtype=dt(fd, nv_dtype(cfg.dtype).name))
    a = fd.ops.abs(fd.ops.cast(x, dtype=dt(fd, "Float")))
    fd.add_output(fd.ops.max(a, dims=[1]))
    fd.add_output(fd.ops.max(a, dims=[0]))
    fd.add_output(fd.ops.max(a, dims=[0, 1]))


def inputs(cfg: AmaxConfig, device: str, gen: torch.Generator) -> dict[str, torch.Tensor]:
    return {"x": randn((cfg.rows, cfg.cols), gen, cfg.dtype, scale=3.0)}


def reference(inp: dict, cfg: AmaxConfig) -> tuple:
    a = inp["x"].to(torch.float64).abs()
    return a.max(dim=1).values, a.max(dim=0).values, a.max()


SPEC = FusionSpec("fp8_amax", amax_configs(), define, inputs, reference, ("row_amax", "col_amax", "amax"), __doc__)
