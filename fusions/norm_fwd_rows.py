"""Norm forward with a hand-written nvFuser schedule (the formulation "fwd_rows"): several rows per CTA, one warp
(or ``tidx`` threads) per row, vector loads and stores of up to 16 bytes, the row kept in registers between its
reductions and its normalization, the weight (and bias) loaded once per thread, and the reductions over hidden
done serially per thread, then across TIDx.

The fusion is the builder's own (``define`` of rmsnorm_fwd / layernorm_fwd, looked up by name) recorded at the
config's 2-D twin (rows x hidden: a 3-D x is a host view), so the reference interpreter runs the same math the
kernel runs; only the schedule is written here. The loop nest of y (and of every tensor, by propagation)::

    [rows, hidden] -> [rows / chunk  (BIDx), (steps (serial, one row group after another),)
                       chunk / steps / unroll (TIDy), unroll (serial, loaded together),
                       (hidden / vec / tidx (serial),) tidx (TIDx), vec (vectorized)]

``steps`` > 1 makes the CTAs persistent-like: fewer, each walking ``steps`` groups of rows in turn, a few CTAs per
SM instead of tens of thousands of short ones (576000 x 384 at 8 rows per CTA launches 72000).

nvFuser's inner-persistent heuristic puts one or two rows in a 48-96 thread block at hidden 384 (issue 38);
which chunk / tidx / vec / unroll pays differs by GPU and shape: ``segkit tune`` measures ``candidates`` below
and keeps the winner in the tuning table.

Host side: the kernel is compiled once into a KernelExecutor and launched with ``KernelExecutor.run`` directly.
That call re-derives its launch parameters and output sizes on every call (nvfuser_direct gives its arguments no
cache id, which is what lets ``fd.execute``'s FusionExecutorCache keep them per input signature); the probe
``lab/probes/fwd_host_probe.py`` measures what that costs against ``fd.execute``. nvfuser_direct 0.2.36 offers no
way around it from Python: no binding sets a cache id or passes preallocated outputs to ``KernelExecutor.run``
(python/python_direct/runtime.cpp), and ``FusionExecutorCache(auto_schedule=False)`` runs the pre-segmenter passes,
whose ``DecomposeReshardingsPass`` resets the loop domain of a reduction with split serial axes (the hand
schedule). What is left is replaying the launch from a CUDA graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from fusions.configs import NormConfig
from fusions.formulations import Formulation, register
from fusions.hand_staged import HandSchedule
from segkit.errors import SegkitError, error_summary
from segkit.frontend import FusionDefinition
from segkit.interp import run_reference
from segkit.nvfuser.runnable import RunsOnBoth

FWD_ROWS = "fwd_rows"  # the formulation's name in the tuning table
NORM_FWD = ("rmsnorm_fwd", "layernorm_fwd")
VECTOR_BYTES = 16  # the widest load / store a thread issues
MAX_PER_THREAD = 64  # x elements a thread keeps in registers (hidden / tidx x unroll) before it spills


@dataclass(frozen=True)
class FwdRowsSchedule(HandSchedule):
    """``chunk`` rows per CTA, in ``steps`` groups one after another, of which each thread row (TIDy) holds
    ``unroll`` (loaded together), ``vec`` hidden elements per vectorized access, ``tidx`` threads per row (None:
    hidden / vec, one vector each; fewer, e.g. one warp, loop over the rest of the row)."""

    chunk: int
    vec: int = 8
    tidx: int | None = None
    unroll: int = 1
    steps: int = 1

    def threads(self, hidden: int) -> int:
        return self.tidx or hidden // self.vec

    def rows_y(self) -> int:
        return self.chunk // self.unroll // self.steps

    def check(self, rows: int, hidden: int, itemsize: int, what: str) -> None:
        """That the schedule fits ``rows`` x ``hidden`` of ``itemsize``-byte elements (``what``: for the message)."""
        problems = []
        if min(self.chunk, self.vec, self.unroll, self.steps, self.tidx or 1) < 1:
            problems.append("chunk, vec, tidx, unroll and steps must be positive")
        elif self.chunk % (self.unroll * self.steps):
            problems.append(f"unroll {self.unroll} x steps {self.steps} does not divide chunk {self.chunk}")
        elif rows % self.chunk:
            problems.append(f"chunk {self.chunk} does not divide the {rows} rows")
        if self.vec >= 1 and (hidden % self.vec or hidden % (self.vec * self.threads(hidden))):
            problems.append(f"vec {self.vec} x {self.threads(hidden)} threads do not divide hidden {hidden}")
        if self.vec * itemsize > VECTOR_BYTES:
            problems.append(f"vec {self.vec} x {itemsize} bytes exceeds a {VECTOR_BYTES}-byte vector access")
        if not problems and self.threads(hidden) * self.rows_y() > 1024:
            problems.append(f"{self.threads(hidden)} x {self.rows_y()} threads exceed a CTA's 1024")
        if not problems and hidden // self.threads(hidden) * self.unroll > MAX_PER_THREAD:
            problems.append(f"{hidden // self.threads(hidden)} x {self.unroll} elements per thread exceed "
                            f"{MAX_PER_THREAD} registers")
        if problems:
            raise SegkitError(f"{self.describe()} for {what}: " + "; ".join(problems))

    def describe(self) -> str:
        per_row = f", {self.tidx} threads per row" if self.tidx else ""
        unroll = f", {self.unroll} rows per thread" if self.unroll != 1 else ""
        steps = f", in {self.steps} steps" if self.steps != 1 else ""
        return f"forward rows schedule ({self.chunk} rows per CTA{steps}, vec {self.vec}{per_row}{unroll})"


def flat(cfg: NormConfig) -> NormConfig:
    """The config's 2-D twin (rows x hidden): the shape the schedule is written for."""
    return cfg if len(cfg.shape) == 2 else replace(cfg, shape=(cfg.rows, cfg.hidden))


@dataclass
class FwdRows(RunsOnBoth):
    """The forward of ``spec_name`` (rmsnorm_fwd or layernorm_fwd) at ``cfg`` as one hand-scheduled kernel;
    ``outputs``: only those of the spec's outputs (inference: ``(0,)``, y alone)."""

    spec_name: str
    cfg: NormConfig
    schedule: FwdRowsSchedule
    outputs: tuple[int, ...] | None = None
    _kernel: Any = field(default=None, init=False, repr=False)  # the scheduled nvFuser definition, compiled

    def __post_init__(self) -> None:
        if self.spec_name not in NORM_FWD:
            raise SegkitError(f"the {FWD_ROWS} formulation is for {' and '.join(NORM_FWD)}, not {self.spec_name}")
        self.schedule.check(self.cfg.rows, self.cfg.hidden, self.cfg.dtype.itemsize,
                            f"{self.cfg.name} {self.cfg.shape}")

    def describe(self) -> str:
        return self.schedule.describe()

    def with_outputs(self, outputs: tuple[int, ...]) -> FwdRows:
        """The same schedule computing only ``outputs`` (the runner's inference path: y alone)."""
        return FwdRows(self.spec_name, self.cfg, self.schedule, outputs)

    def recorded(self) -> FusionDefinition:
        """The builder's fusion at the 2-D twin (with only ``outputs``), each output its ops also read (the
        statistics) forked into a copy (``fork_read_outputs``): what both backends run."""
        from segkit import workloads

        with FusionDefinition() as fd:
            workloads.get(self.spec_name).define(fd, flat(self.cfg))
        if self.outputs is not None:
            fd = FusionDefinition.from_fusion(fd.fusion.keep_outputs(self.outputs))
        fork_read_outputs(fd)
        return fd

    def _args(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        x = inputs[0]
        return [x if x.dim() == 2 else x.reshape(self.cfg.rows, self.cfg.hidden), *inputs[1:]]

    def _shaped(self, outs: list[torch.Tensor]) -> list[torch.Tensor]:
        """The outputs in the config's shape (views: y as x, the statistics as x without its last dim)."""
        if len(self.cfg.shape) == 2:
            return outs
        return [o.view(self.cfg.shape if o.dim() == 2 else self.cfg.shape[:-1]) for o in outs]

    def on_reference(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        return self._shaped(run_reference(self.recorded(), self._args(inputs)))

    def execute(self, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        args = self._args(inputs)
        if self._kernel is None:
            self._kernel = compile_kernel(self.recorded(), self.schedule, self.cfg, args)
        return self._shaped(self._kernel.ke.run(args))  # its KernelExecutor, past manual_execute's checks


def outputs_read_inside(fusion: Any) -> list:
    """The outputs of a recorded fusion (segkit IR) that its own ops also read."""
    return [v for v in fusion.outputs if fusion.uses(v)]


def fork_read_outputs(fd: FusionDefinition) -> None:
    """Make each output that ``fd``'s ops also read a copy (``set``) of the value they read, as nvFuser's own
    schedulers do (cacheAndForkOutputs). Left as it is, such an output (rstd, the mean) lives in global memory,
    written by the one thread per row that holds the block reduction's result, and nvFuser lowers the broadcast
    that reads it for the normalization to a plain global read by every thread of the row with no barrier
    before it (its thread predicates assume a RAW sync that its sync analysis does not insert for a broadcast
    consumer): rows wider than a warp read whatever the buffer held before. Forked, the kernel broadcasts the
    statistic from registers through shared memory and only writes the output."""
    for v in outputs_read_inside(fd.fusion):
        fd.fusion.replace_output(v, fd.ops.set(v))


def compile_kernel(recorded: Any, s: FwdRowsSchedule, cfg: NormConfig, args: list[torch.Tensor]):
    """The recorded 2-D forward of ``cfg`` as an nvFuser definition scheduled by ``s``, its KernelExecutor
    (``.ke``) compiled for ``args``. A schedule nvFuser refuses is a SegkitError naming it."""
    from segkit.nvfuser.run import to_nvfuser

    try:
        nvfd = to_nvfuser(recorded)
        schedule_fwd(nvfd, s, cfg.hidden, s.vec * cfg.weight_dtype.itemsize <= VECTOR_BYTES)
        nvfd.manual_execute(args)  # compiles the KernelExecutor (and runs it once)
    except SegkitError:
        raise
    except Exception as e:
        raise SegkitError(f"nvFuser refused the {s.describe()} for {cfg.name} {cfg.shape}: "
                          f"{error_summary(e, 240)}") from None
    return nvfd


def schedule_fwd(nvfd: Any, s: FwdRowsSchedule, hidden: int, vector_params: bool) -> None:
    """Apply the loop nest of the module docstring to a translated 2-D norm forward (``vector_params``: the
    weight and bias loads vectorized too, where ``vec`` of their dtype fits one vector access)."""
    import nvfuser_direct as nvf

    read = [str(v) for v in nvfd.fusion.outputs() if v.is_tensor() and v.uses()]
    if read:
        raise SegkitError(f"the {FWD_ROWS} schedule needs a fusion whose outputs its ops do not read; "
                          f"{', '.join(read)} are read inside: fork them first (fork_read_outputs)")
    guard = nvf.FusionGuard(nvfd.fusion)  # the IR built below (splits, caches, rfactors) needs an active fusion
    try:
        _schedule(nvfd.fusion, s, hidden, vector_params, nvf.ParallelType, nvf.schedule)
    finally:
        del guard


def _schedule(fusion, s: FwdRowsSchedule, hidden: int, vector_params: bool, PT, sched) -> None:
    ins = [v for v in fusion.inputs() if v.is_tensor()]
    rows_outs = [v for v in fusion.outputs() if v.is_tensor() and len(v.get_logical_domain()) == 2]  # y
    loads = [t.cache_after() for t in ins]
    for t in rows_outs:
        t.cache_before()
    ref = rows_outs[0]

    # [R, H] -> [R/chunk, (S,) chunk/S/U, U, (H/V/T,) T, V]: BIDx, (serial row groups,) TIDy, serial (in
    # registers), (serial,) TIDx, vectorized
    ref.split(1, s.vec)
    looped = s.threads(hidden) * s.vec < hidden
    if looped:
        ref.split(1, s.tidx)
    ref.split(0, s.unroll)
    ref.split(0, s.rows_y())
    stepped = s.steps > 1
    if stepped:
        ref.split(0, s.steps)
    sched.transform_like(ref)

    y_axis = 2 if stepped else 1  # TIDy; the serial hidden loop (looped) sits two axes after it
    for tv in _reductions(fusion):  # the sums over hidden: serial per thread (vector, loop), then across TIDx
        n = len(tv.get_loop_domain())
        tv.rfactor([y_axis + 2, n - 1] if looped else [n - 1])

    ref.axis(0).parallelize(PT.grid_x)
    ref.axis(y_axis).parallelize(PT.block_y)
    ref.axis(y_axis + (3 if looped else 2)).parallelize(PT.block_x)
    sched.parallelize_like(ref)
    for tv in loads + rows_outs:  # x, y; the weight (and bias) where vec of their dtype fits a vector access
        if len(tv.get_logical_domain()) == 2 or vector_params:
            tv.axis(-1).parallelize(PT.vectorize)
    x_load = next(t for t in loads if len(t.get_logical_domain()) == 2)
    if s.unroll > 1:  # the thread's rows all loaded before their reductions: computed outside the serial row axis
        sched.inline_at(ref, y_axis + 1, True, [x_load])
        sched.inline_most([v for v in fusion.vals() if v.is_tensor() and v is not x_load])
    else:
        sched.inline_most()


def _reductions(fusion) -> list:
    return [v for v in fusion.vals() if v.is_tensor() and any(i.is_reduction() for i in v.get_logical_domain())]


def candidates(cfg: NormConfig, sm_count: int, quick: bool = True) -> list[FwdRowsSchedule]:
    """The schedules ``segkit tune`` tries at ``cfg`` on a GPU of ``sm_count`` SMs, each fitting it (``check``) and
    giving every SM a CTA: quick, 16-byte and 8-byte vectors, one warp or one vector per thread per row, 4 or 8
    thread rows per CTA, one or two rows per thread, half a warp per row with 16-byte vectors (4 to 16 thread
    rows, one or two rows per thread), more bytes in flight per thread where the whole row is one vector per
    thread (16-byte vectors, 2 or 4 rows per thread: a bandwidth-bound narrow row wants them), 128 to 512 threads
    per row, one or two rows per CTA, for rows too wide for one vector per thread; without ``quick`` a wider grid
    (vectors down to 4 bytes, 16 to 256 threads per row, 1 to 16 thread rows, up to 4 rows per thread, 1 or 8
    steps). Steps are not in the quick grid: measured on the narrow-row winners, every step count lost to one step
    (the results README of the steps probe)."""
    V = VECTOR_BYTES // cfg.dtype.itemsize
    if quick:
        grid = [(v, t, y, u, 1) for u in (1, 2) for t in (32, None) for y in (4, 8) for v in (V, V // 2)
                if u == 1 or y == 4] + [(V, 16, 8, 1, 1)]  # half a warp per row, 16-byte vectors (hidden 384)
        grid += [(V, 16, y, u, 1) for y, u in ((4, 2), (8, 2), (16, 1))]  # its neighbours: more rows per CTA
        grid += [(V, None, y, u, 1) for y, u in ((8, 2), (2, 4), (4, 4))]  # 2 or 4 rows of 16-byte vectors each
        grid += [(V, t, y, 1, 1) for t in (128, 256, 512) for y in (1, 2)]  # wide rows: 4-16 warps per row
    else:
        grid = [(v, t, y, u, st) for u in (1, 2, 4) for t in (32, 16, 64, 128, 256, None) for y in (1, 2, 4, 8, 16)
                for v in (V, V // 2, V // 4) for st in (1, 8)]
    out: list[FwdRowsSchedule] = []
    for v, t, y, u, st in grid:
        if v < 1 or (t is not None and t * v >= cfg.hidden):  # no loop over the row: the one-vector schedule
            continue
        s = FwdRowsSchedule(y * u * st, vec=v, tidx=t, unroll=u, steps=st)
        try:
            s.check(cfg.rows, cfg.hidden, cfg.dtype.itemsize, cfg.name)
        except SegkitError:
            continue
        if cfg.rows // s.chunk >= sm_count and s not in out:
            out.append(s)
    return out


def fwd_rows(spec_name: str, cfg: NormConfig, how: Any) -> FwdRows:
    """The forward rows formulation of ``spec_name`` as the tuning table keeps it (``how``: an entry or a
    candidate)."""
    return FwdRows(spec_name, cfg, FwdRowsSchedule.from_dict(how.chunk, how.schedule))


register(Formulation(FWD_ROWS, NORM_FWD, fwd_rows))
