"""Run a recorded fusion on nvFuser the way its ``NvTuning`` says: enable options, a manual schedule with
nvFuser's heuristics and a few parameters overridden, or a split into several fusions."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from segkit.interp import as_fusion
from segkit.nvfuser.replay import executor_cache, nvfuser_module, signature, to_nvfuser
from segkit.tuning.table import NvTuning


def override(params: Any, tuning: NvTuning, sm_count: int) -> None:
    """Replace the tuned heuristic parameters in place (nvFuser's ReductionParams) on a GPU of ``sm_count`` SMs."""
    lp = params.lparams
    if tuning.vectorize is not None and tuning.vectorize != params.unroll_factor_inner_reduction:
        old = params.unroll_factor_inner_reduction
        params.unroll_factor_inner_reduction = tuning.vectorize
        params.vectorize_inner_reduction = tuning.vectorize > 1
        params.vectorization_factor_tmp_gmem_write = min(params.vectorization_factor_tmp_gmem_write, tuning.vectorize)
        params.vectorization_factor_outer = min(params.vectorization_factor_outer, tuning.vectorize)
        lp.bdimx = math.ceil(lp.bdimx * old / tuning.vectorize)  # same elements per block
    if tuning.persistent_batch is not None and tuning.persistent_batch != params.batches_per_block_inner_reduction:
        per_row = lp.bdimx * params.batches_per_block_inner_reduction
        params.batches_per_block_inner_reduction = tuning.persistent_batch
        bdimx = math.ceil(per_row / tuning.persistent_batch)
        lp.bdimx = 32 * math.ceil(bdimx / 32) if params.pad_inner_reduction_to_warp else bdimx
    if tuning.blocks_per_sm is not None:
        lp.gdimy = tuning.blocks_per_sm * sm_count
    if tuning.rows_per_block is not None:
        params.multiple_reds_per_blk = tuning.rows_per_block > 1
        lp.bdimy = tuning.rows_per_block
    params.lparams = lp
    if tuning.maxrregcount is not None:
        cp = params.cparams
        cp.maxrregcount = tuning.maxrregcount
        params.cparams = cp


class TunedFusion:
    """Runs a recorded fusion on nvFuser the way its builder's ``NvTuning`` says (a
    ``segkit.nvfuser.runnable.NvProgram``)."""

    def __init__(self, fd: Any, tuning: NvTuning) -> None:
        self.recorded, self.tuning = fd, tuning
        self._plain = None
        self._manual: dict[tuple, tuple[Any, Any]] = {}
        self._parts: list[Any] | None = None
        if tuning.split:
            n = len(as_fusion(fd).outputs)
            if sorted(i for g in tuning.split for i in g) != list(range(n)):
                raise ValueError(f"NvTuning split {tuning.split} must name each of the fusion's {n} outputs once")

    @property
    def profilable(self) -> bool:
        """nvFuser's PythonProfiler follows FusionExecutorCache runs only, not a manual KernelExecutor."""
        return self.tuning.scheduler is None

    @property
    def groups(self) -> list[str]:
        """Scheduler of the one segment of a manual schedule (nvFuser's profiler does not see KernelExecutor runs)."""
        return [self.tuning.scheduler] if self.tuning.scheduler else []

    @property
    def fec(self):
        """The FusionExecutorCache of the enable_options path (None for a manual schedule or a split)."""
        return executor_cache(self._plain)

    def execute(self, inputs: Sequence[Any]) -> list[torch.Tensor]:
        inputs = list(inputs)
        if self.tuning.split:
            return self._execute_split(inputs)
        if self.tuning.scheduler is None:
            if self._plain is None:
                self._plain = to_nvfuser(self.recorded)
            return self._plain.execute(inputs, _enable_options=list(self.tuning.enable_options))
        key = signature(inputs)
        if key not in self._manual:
            self._manual[key] = self._schedule(to_nvfuser(self.recorded), inputs)
        nvfd, params = self._manual[key]
        return nvfd.manual_execute(inputs, params)

    def parts(self) -> list[Any]:
        """The nvFuser definitions of a split, one per output group (built on first use; [] without a split)."""
        if self._parts is None:
            self._parts = [to_nvfuser(as_fusion(self.recorded).keep_outputs(g)) for g in self.tuning.split]
        return self._parts

    def _execute_split(self, inputs: list) -> list[torch.Tensor]:
        outputs: list[Any] = [None] * sum(map(len, self.tuning.split))
        for group, part in zip(self.tuning.split, self.parts()):
            for i, t in zip(group, part.execute(inputs)):
                outputs[i] = t
        return outputs

    def _schedule(self, nvfd: Any, inputs: list) -> tuple[Any, Any]:
        nvf = nvfuser_module()
        try:
            kind = getattr(nvf.SchedulerType, self.tuning.scheduler)
            params = nvf.schedule.compute_heuristics(nvfd.fusion, kind, inputs)
        except Exception as e:  # nvFuser refuses: the builder's rule covers a fusion this scheduler cannot take
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise RuntimeError(f"tuned schedule {self.tuning.describe()} does not apply to this fusion "
                               f"(input shapes {[tuple(getattr(t, 'shape', ())) for t in inputs]}): {first}") from None
        device = next((t.device.index or 0 for t in inputs if isinstance(t, torch.Tensor) and t.is_cuda), 0)
        override(params, self.tuning, torch.cuda.get_device_properties(device).multi_processor_count)
        nvf.schedule.schedule(nvfd.fusion, kind, params)
        return nvfd, params
