"""Why was my fusion segmented: nvFuser's segments mapped back to the user's ops, what each costs, why
neighbours were not merged, and one runnable repro per segment.

``analyze(fd, inputs)`` replays a recorded fusion into nvFuser (keeping which nvFuser tensor each segkit
value became), runs it, and reads the segmented fusion nvFuser printed (``get_most_recent_scheduled_ir``).
Each nvFuser expr's outputs name segkit values, so each segment gets the segkit ops (and their source
lines) it holds. Kernels are timed with the benchmarks' cold-L2 timer (segkit.nvfuser.timing) and matched to
segments by the group id in their names. The segmenter's reasons come from a child process that runs the
fusion's nvfuser_direct repro under ``NVFUSER_DUMP=segmenter_logging,segmented_fusion`` (nvFuser reads its
dump options once, from the environment). Without a GPU, ``describe_cpu`` gives what is known without
one: the IR, meta-op chains, and the bookend plan.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from segkit.alias import meta_ops
from segkit.bookend import bookend, sub_fusion
from segkit.compare import OutputDiff, compare
from segkit.interp import Interpreter, as_fusion
from segkit.ir import Fusion, Op, Value
from segkit.nvfuser.dump import REJECT as _REJECT_LINE
from segkit.nvfuser.dump import Attempt, NvSegmentation, parse_segmented_fusion, parse_segmenter_log, tensors_in

_TV_NAME = re.compile(r"^(T\d+)_")


# --------------------------------------------------------------------------- what is known without a GPU
def meta_chains(fusion: Fusion) -> list[list[Op]]:
    """Maximal chains of meta (view) ops: each op's input comes from the previous meta op of the chain."""
    meta = [op for op in fusion.ops if op.name in meta_ops()]
    is_meta = {id(op) for op in meta}
    chains, placed = [], set()
    for op in meta:
        src = op.inputs[0].definition if op.inputs else None
        if src is not None and id(src) in is_meta:
            continue  # not a chain head
        stack, chain = [op], []
        while stack:
            cur = stack.pop(0)
            if id(cur) in placed:
                continue
            placed.add(id(cur))
            chain.append(cur)
            stack += [u for o in cur.outputs for u in fusion.uses(o) if id(u) in is_meta and u.inputs[0] is o]
        chains.append(chain)
    return chains


def describe_chain(chain: Sequence[Op]) -> str:
    """A chain as its paths from the head tensor to each end (a chain forks where a view feeds several)."""
    users = {id(op): [u for u in chain if u.inputs and u.inputs[0] is op.outputs[0]] for op in chain}

    def paths(op: Op) -> list[str]:
        step = f"{op.name} {op.outputs[0].name}"
        return [f"{step} -> {rest}" for u in users[id(op)] for rest in paths(u)] or [step]

    head = chain[0].inputs[0].name if chain[0].inputs else "?"
    return "\n".join(f"{head} -> {p}" for p in paths(chain[0]))


def cut_pieces(fusion: Fusion, cuts: Sequence[Any] = ()) -> list[list[Op]]:
    """Ops grouped into the pieces the bookend ``cuts`` leave (connected through values, cut edges removed):
    what can be said about segments without nvFuser. Every op lands in exactly one piece (printed as a "region":
    not one of Thunder's fusion regions)."""
    cut_edges = {(id(c.tensor), id(u)) for c in cuts for u in c.users}
    parent = {id(op): id(op) for op in fusion.ops}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for op in fusion.ops:
        for v in op.inputs:
            if v.definition is not None and (id(v), id(op)) not in cut_edges:
                parent[find(id(op))] = find(id(v.definition))
    groups: dict[int, list[Op]] = {}
    for op in fusion.ops:
        groups.setdefault(find(id(op)), []).append(op)
    return list(groups.values())


def describe_cpu(fd: Any) -> str:
    """The IR, meta-op chains and the bookend plans: what can be known without a GPU."""
    from segkit.printing import format_fusion

    fusion = as_fusion(fd)
    lines = ["fusion:", format_fusion(fusion), "", "meta-op (view) chains:"]
    chains = meta_chains(fusion)
    lines += [f"  {line}" for c in chains for line in describe_chain(c).splitlines()] or ["  none"]
    for policy in ("outputs", "inputs+outputs"):
        plan = bookend(fd, policy)
        lines += ["", f"bookend plan ({policy}{', what nvFuser does' if policy == 'outputs' else ''}):", plan.describe()]
        lines.append(f"  -> {len(cut_pieces(fusion, plan.cuts))} region(s) once cut")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the GPU analysis
@dataclass
class TensorUse:
    """A tensor crossing a segment boundary: segkit's name (nvFuser's when nvFuser made it), nvFuser's name,
    its concrete shape and dtype, and the bytes it occupies in global memory (broadcast dims stored once)."""

    name: str
    nv_name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int

    def label(self) -> str:
        return f"{self.name} {'x'.join(map(str, self.shape)) or 'scalar'} {self.dtype}"


@dataclass
class KernelRow:
    name: str
    us: float


@dataclass
class Segment:
    index: int  # topological position (nvFuser's dump order)
    group_id: int  # nvFuser's group id (the _g<id> of its kernels' names)
    scheduler: str
    ops: list[int]  # indices into fusion.ops
    nv_only: list[str] = field(default_factory=list)  # exprs nvFuser added (no segkit op behind them)
    inputs: list[TensorUse] = field(default_factory=list)
    outputs: list[TensorUse] = field(default_factory=list)
    kernels: list[KernelRow] = field(default_factory=list)

    @property
    def kernel_us(self) -> float:
        return sum(k.us for k in self.kernels)

    @property
    def io_bytes(self) -> int:
        return sum(t.nbytes for t in self.inputs) + sum(t.nbytes for t in self.outputs)


@dataclass
class Edge:
    src: int
    dst: int
    tensor: TensorUse
    why_not_merged: str = ""

    @property
    def nbytes(self) -> int:
        """Written by ``src`` and read back by ``dst``: twice the tensor through global memory."""
        return 2 * self.tensor.nbytes


@dataclass
class SegmentsReport:
    """Everything ``segkit segments`` says about one fusion on one GPU."""

    fd: Any
    segments: list[Segment]
    edges: list[Edge]
    floor_bytes: int  # fusion inputs read once + outputs written once
    wall_us: float
    device: str
    unsegmented_why: str = ""
    attempts: list[Attempt] = field(default_factory=list)
    raw_log: str = ""  # the child's NVFUSER_DUMP=segmenter_logging,segmented_fusion output, as printed
    notes: list[str] = field(default_factory=list)
    value_names: dict[int, str] = field(default_factory=dict)  # id(Value) -> nvFuser tensor name
    shapes: dict[int, tuple[int, ...]] = field(default_factory=dict)  # id(Value) -> concrete shape of this run
    nvfd: Any = field(default=None, repr=False)  # the nvFuser definition that ran (compiled for these inputs)

    @property
    def fusion(self) -> Fusion:
        return as_fusion(self.fd)

    @property
    def kernel_us(self) -> float:
        return sum(s.kernel_us for s in self.segments)

    @property
    def segmented_bytes(self) -> int:
        return sum(s.io_bytes for s in self.segments)

    @property
    def segmentation_cost_bytes(self) -> int:
        """Global-memory traffic the segments move above the unsegmented floor."""
        return self.segmented_bytes - self.floor_bytes

    def segment_of(self) -> dict[int, int]:
        """op index -> the first segment holding it (an op nvFuser recomputes in several shows in the first)."""
        out: dict[int, int] = {}
        for s in self.segments:
            for i in s.ops:
                out.setdefault(i, s.index)
        return out


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB"):
        if abs(n) < 1024:
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.2f} GiB"


def op_label(op: Op) -> str:
    outs = ", ".join(o.name for o in op.outputs)
    return f"{outs} = {op.name}({', '.join(v.name for v in op.inputs if not v.literal)})"


def site_line(op: Op) -> str:
    """``file:line`` of the user's call that recorded the op (shortened to the file name)."""
    if not op.site or op.site.startswith("inserted"):
        return op.site
    where, _, src = op.site.partition(": ")
    path, _, line = where.rpartition(":")
    return f"{Path(path).name}:{line}" + (f"  {src}" if src else "")


def _stored_bytes(v: Value, t: Any) -> int:
    if not isinstance(t, torch.Tensor):
        return 0
    n = 1
    for d, size in enumerate(t.shape):
        broadcast = v.broadcast[d] if v.is_tensor and d < len(v.broadcast) else False
        if not broadcast and (t.dim() == 0 or t.stride(d) != 0):
            n *= size
    return n * t.element_size()


def _dtype_name(t: Any) -> str:
    return str(t.dtype).removeprefix("torch.") if isinstance(t, torch.Tensor) else type(t).__name__


def analyze(fd: Any, inputs: Sequence[Any], *, reps: int = 20, log: bool = True) -> SegmentsReport:
    """Run ``fd`` on nvFuser and say how it was segmented (see module docstring). Needs a CUDA device and
    nvfuser_direct, and must not share its process with nvFuser's own profiler (both use CUPTI)."""
    from segkit.nvfuser.run import to_nvfuser
    from segkit.nvfuser.timing import kernel_breakdown, nvfuser_scheduler, wall_us

    fusion = as_fusion(fd)
    inputs = list(inputs)
    notes = []
    if getattr(fd, "nv_tuning", None) is not None:
        notes.append(f"the fusion carries an nvFuser tuning ({fd.nv_tuning}); shown: nvFuser's default scheduling")
    vmap: dict[int, Any] = {}
    nvfd = to_nvfuser(fd, vmap)
    names: dict[str, Value] = {}
    value_names: dict[int, str] = {}
    for v in fusion.values:
        if v.is_tensor and id(v) in vmap and (m := _TV_NAME.match(str(vmap[id(v)]))):
            names.setdefault(m.group(1), v)  # a no-op (cast to its own dtype) returns its input: keep the first
            value_names[id(v)] = m.group(1)
    nvfd.execute(inputs)
    nvseg = parse_segmented_fusion(nvfd.fec.get_most_recent_scheduled_ir())
    interp = Interpreter(fusion, inputs)
    interp.run()
    env = interp.env

    kernels = kernel_breakdown(lambda: nvfd.execute(inputs), reps) if reps else []
    wall = wall_us(lambda: nvfd.execute(inputs), max(reps, 1))
    attempts, raw_log = [], ""
    if log:
        raw_log = segmenter_log(fd, inputs)
        attempts = parse_segmenter_log(raw_log)
    if nvseg is None:  # one kernel (or one no-op segment): nvFuser prints no segmented dump for it
        sched = next((a.accepted for a in attempts if a.kind == "unsegmented" and a.accepted), None)
        sched = sched or (nvfuser_scheduler(kernels[0].name) if kernels else None) or "expr_eval"
        segments = [Segment(0, 0, sched, list(range(len(fusion.ops))))]
        _fill_io_unsegmented(segments[0], fusion, env)
        edges = []
    else:
        segments, edges = _map_segments(nvseg, fusion, names, env)
    for k in kernels:
        seg = next((s for s in segments if s.group_id == k.group), segments[0] if len(segments) == 1 else None)
        if seg is None:
            notes.append(f"kernel {k.name} names no segment of this run")
            continue
        seg.kernels.append(KernelRow(k.name, k.us))
    floor = sum(_stored_bytes(v, env.get(id(v))) for v in fusion.inputs if v.is_tensor)
    floor += sum(_stored_bytes(v, env.get(id(v))) for v in dict.fromkeys(fusion.outputs))
    report = SegmentsReport(fd, segments, edges, floor, wall, torch.cuda.get_device_name(), attempts=attempts,
                            raw_log=raw_log, notes=notes, value_names=value_names,
                            shapes={k: tuple(t.shape) for k, t in env.items() if isinstance(t, torch.Tensor)},
                            nvfd=nvfd)
    _explain(report, env)
    return report


def _fill_io_unsegmented(seg: Segment, fusion: Fusion, env: dict) -> None:
    seg.inputs = [_use(v, v.name, env) for v in fusion.inputs if v.is_tensor]
    seg.outputs = [_use(v, v.name, env) for v in dict.fromkeys(fusion.outputs)]


def _use(v: Value, nv_name: str, env: dict, dtype: str | None = None, itemsize: int | None = None) -> TensorUse:
    t = env.get(id(v))
    nbytes = _stored_bytes(v, t)
    if itemsize and isinstance(t, torch.Tensor):
        nbytes = nbytes // t.element_size() * itemsize
    return TensorUse(v.name, nv_name, tuple(t.shape) if isinstance(t, torch.Tensor) else (), dtype or _dtype_name(t),
                     nbytes)


_NV_DTYPES = {"float": "float32", "__bfloat": "bfloat16", "__half": "float16", "double": "float64",
              "int64_t": "int64", "int": "int32", "bool": "bool"}


def _map_segments(nvseg: NvSegmentation, fusion: Fusion, names: dict[str, Value], env: dict):
    op_index = {id(op): i for i, op in enumerate(fusion.ops)}
    producer: dict[str, Value] = dict(names)  # nvFuser tensor -> the segkit value that gives its shape
    for g in nvseg.groups:  # tensors nvFuser made (casts on edges, segment_sets): shape of their expr's input
        for e in g.exprs:
            ins = [t.name for t in tensors_in(e.text) if t.name not in e.outputs]
            src = next((producer[n] for n in ins if n in producer), None)
            for o in e.outputs:
                if o not in producer and src is not None:
                    producer[o] = src
    segments = []
    for pos, g in enumerate(nvseg.groups):
        seg = Segment(pos, g.group_id, g.scheduler, [])
        for e in g.exprs:
            mapped = [names[o] for o in e.outputs if o in names]
            ops = {op_index[id(v.definition)] for v in mapped if v.definition is not None}
            seg.ops += sorted(i for i in ops if i not in seg.ops)
            if not mapped:
                seg.nv_only.append(f"{', '.join(e.outputs)} = {e.op}")
        segments.append(seg)
    _place_unmapped(fusion, segments)
    for seg, g in zip(segments, nvseg.groups):
        seg.inputs = [_nv_use(t, producer, names, env) for t in g.inputs]
        seg.outputs = [_nv_use(t, producer, names, env) for t in g.outputs]
    edges = [Edge(e.src, e.dst, _nv_use(e.tensor, producer, names, env)) for e in nvseg.edges]
    return segments, edges


def _nv_use(t, producer: dict[str, Value], names: dict[str, Value], env: dict) -> TensorUse:
    v = producer.get(t.name)
    if v is None:
        return TensorUse(t.name, t.name, (), _NV_DTYPES.get(t.dtype, t.dtype), 0)
    use = _use(v, t.name, env, _NV_DTYPES.get(t.dtype, t.dtype), t.itemsize or None)
    if t.name not in names:
        use.name = f"{t.name} (nvFuser's, from {v.name})"
    return use


def _place_unmapped(fusion: Fusion, segments: list[Segment]) -> None:
    """Ops no nvFuser expr names (scalar arithmetic, ops a pre-segmentation pass folded away) go with their
    consumers' segments (all of them: each recomputes), else with their producer's, else the first."""
    where: dict[int, set[int]] = {}
    for s in segments:
        for i in s.ops:
            where.setdefault(i, set()).add(s.index)
    index = {id(op): i for i, op in enumerate(fusion.ops)}
    for i in reversed(range(len(fusion.ops))):
        if i in where:
            continue
        op = fusion.ops[i]
        segs = {s for o in op.outputs for u in fusion.uses(o) for s in where.get(index[id(u)], ())}
        if segs:
            where[i] = segs
    for i, op in enumerate(fusion.ops):
        if i not in where:
            segs = {s for v in op.inputs if v.definition is not None for s in where.get(index[id(v.definition)], ())}
            where[i] = segs or {0}
    for s in segments:
        s.ops = sorted(i for i, segs in where.items() if s.index in segs)


def _explain(report: SegmentsReport, env: dict) -> None:
    """Attach the segmenter's reasons: why not one kernel, and for each edge why its ends stayed apart (from
    the log; for a pair the log never tried, nvFuser's schedulers asked about the two together)."""
    unseg = next((a for a in report.attempts if a.kind == "unsegmented"), None)
    if unseg is not None:
        report.unsegmented_why = unseg.why()
    value_seg: dict[str, set[int]] = {}
    fusion = report.fusion
    for s in report.segments:
        for i in s.ops:
            for o in fusion.ops[i].outputs:
                if id(o) in report.value_names:
                    value_seg.setdefault(report.value_names[id(o)], set()).add(s.index)
    said: dict[tuple[int, int], str] = {}
    for e in report.edges:
        if (e.src, e.dst) not in said:
            tried = [a for a in report.attempts if a.kind == "merge" and not a.accepted
                     and {e.src, e.dst} <= {s for t in a.outputs for s in value_seg.get(t, ())}]
            said[e.src, e.dst] = (f"segmenter log: {tried[-1].why()}" if tried
                                  else recheck_pair(report, e.src, e.dst, env))
        e.why_not_merged = said[e.src, e.dst]


#: nvFuser's schedulers in the order it proposes them (scheduler_types.h), matmul and expr_eval left out
SCHEDULERS = ("no_op", "reduction", "resize", "transpose", "pointwise", "inner_persistent", "outer_persistent",
              "inner_outer_persistent")


def recheck_pair(report: SegmentsReport, a: int, b: int, env: dict) -> str:
    """Ask each nvFuser scheduler (``nvfuser_direct.schedule.can_schedule``, which returns its own reject
    message) whether it takes segments ``a`` and ``b`` as one fusion; what each said, in one line."""
    from segkit.nvfuser.run import nvfuser_module, to_nvfuser

    fusion = report.fusion
    ops = [fusion.ops[i] for i in sorted(set(report.segments[a].ops) | set(report.segments[b].ops))]
    reads, gives = boundary(fusion, ops)
    args = [env[id(v)] if id(v) in env else v.value for v in reads]
    try:
        nvf = nvfuser_module()
        nvfd = to_nvfuser(sub_fusion(fusion, ops, reads, gives, args))
        said = []
        for name in SCHEDULERS:
            ok, msg = nvf.schedule.can_schedule(nvfd.fusion, getattr(nvf.SchedulerType, name), args)
            if ok:
                return f"re-check (can_schedule): {name} accepts the pair as one fusion; the segmenter did not try it"
            found = [f"{m.group(1)}: {m.group(2).strip()}" for m in map(_REJECT_LINE.match, msg.splitlines()) if m]
            said += found or [f"{name}: {msg.strip() or 'refused without a message'}"]
        return "re-check (can_schedule): " + "; ".join(said)
    except Exception as e:  # a re-check is extra information: say why it is missing instead of failing
        return f"not tried as a pair in the log; re-check failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"


def segmenter_log(fd: Any, inputs: Sequence[Any], timeout: float = 300) -> str:
    """nvFuser's segmenter log and segmented-fusion dump for this fusion and these input shapes, from a
    child process running its nvfuser_direct repro (nvFuser reads NVFUSER_DUMP once per process)."""
    from segkit.printing import emit_repro

    src = emit_repro(fd, [x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs])
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "fusion_repro.py"
        script.write_text(src)
        env = {**os.environ, "NVFUSER_DUMP": "segmenter_logging,segmented_fusion"}
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=timeout)
    if proc.returncode != 0:
        return f"(the repro failed in its own process, exit {proc.returncode})\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc.stdout


# --------------------------------------------------------------------------- one repro per segment
def boundary(fusion: Fusion, ops: Sequence[Op]) -> tuple[list[Value], list[Value]]:
    """What a piece of the fusion made of ``ops`` reads from outside (fusion inputs, other pieces' values)
    and what it must give back (fusion outputs, values read outside it)."""
    produced = {id(o) for op in ops for o in op.outputs}
    inside = {id(op) for op in ops}
    reads: list[Value] = []
    for op in ops:
        for v in op.inputs:
            known_scalar = not v.is_tensor and v.value is not None  # a constant of the piece, not an input
            if (id(v) not in produced and v not in reads and not known_scalar
                    and (v.definition is not None or v in fusion.inputs)):
                reads.append(v)
    gives = [o for op in ops for o in op.outputs if o.is_tensor and (
        o in fusion.outputs or any(id(u) not in inside for u in fusion.uses(o)))]
    return reads, gives


@dataclass
class SegmentRepro:
    segment: int
    path: Path
    fd: Any
    inputs: list[Any]


def segment_repros(report: SegmentsReport, inputs: Sequence[Any], out_dir: str | Path) -> list[SegmentRepro]:
    """Write one runnable nvfuser_direct script per segment: its ops alone, its inputs made as the segment
    sees them (shapes, strides and dtypes of the tensors it reads)."""
    from segkit.printing import emit_repro

    fusion = report.fusion
    interp = Interpreter(fusion, list(inputs))
    interp.run()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for seg in report.segments:
        ops = [fusion.ops[i] for i in seg.ops]
        if not ops:
            continue
        seg_inputs, seg_outputs = boundary(fusion, ops)
        if not seg_outputs:
            continue
        # the CPU copies the script is written from decide the piece's input layouts: a copy of a stride-0
        # (expanded) CUDA tensor is materialized, as nvFuser materializes a segment's input
        args = [a.cpu() if isinstance(a, torch.Tensor) else a for a in (interp.value_of(v) for v in seg_inputs)]
        sub = sub_fusion(fusion, ops, seg_inputs, seg_outputs, args)
        path = out_dir / f"segment{seg.index}_{seg.scheduler}.py"
        header = (f"# Segment {seg.index} of {len(report.segments)} (nvFuser group {seg.group_id}, {seg.scheduler}), "
                  f"written by `segkit segments --emit-dir`: ops {', '.join(op_label(o) for o in ops)[:300]}\n")
        path.write_text(header + emit_repro(sub, args))
        written.append(SegmentRepro(seg.index, path, sub, args))
    return written


def check_repro_script(path: str | Path) -> list[OutputDiff]:
    """Run an emitted nvfuser_direct script as written (its own inputs) and compare its outputs with the
    reference interpreter's on the same inputs."""
    from segkit.interp import run_reference
    from segkit.repro import load_repro

    path = Path(path)
    namespace: dict[str, Any] = {"__name__": "__segment_repro__"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    nvfd, inputs = namespace["fd"], namespace["inputs"]
    outs = nvfd.execute(inputs)
    refs = run_reference(load_repro(path).fd, inputs)
    return compare(refs, outs)


# --------------------------------------------------------------------------- text
def format_report(report: SegmentsReport) -> str:
    from tabulate import tabulate

    fusion = report.fusion
    hb = human_bytes
    lines = [f"{len(report.segments)} segment(s) on {report.device}; kernel time {report.kernel_us:.1f} us (cold L2), "
             f"host wall {report.wall_us:.1f} us per call"]
    if report.unsegmented_why:
        lines.append(f"why not one kernel (segmenter log): {report.unsegmented_why}")
    rows = []
    for s in report.segments:
        rows.append([s.index, s.group_id, s.scheduler, len(s.ops), len(s.kernels), f"{s.kernel_us:.1f}",
                     f"{100 * s.kernel_us / report.wall_us:.0f}%" if report.wall_us else "-",
                     hb(sum(t.nbytes for t in s.inputs)), hb(sum(t.nbytes for t in s.outputs))])
    lines.append(tabulate(rows, headers=["seg", "group", "scheduler", "ops", "kernels", "kernel us",
                                         "of host wall", "in", "out"]))
    for s in report.segments:
        lines.append(f"\nsegment {s.index} ({s.scheduler}, nvFuser group {s.group_id}):")
        lines += [f"  in  {t.label()}  {hb(t.nbytes)}" for t in s.inputs]
        lines += [f"  out {t.label()}  {hb(t.nbytes)}" for t in s.outputs]
        for i in s.ops:
            op = fusion.ops[i]
            lines.append(f"  op  {op_label(op):50s} {site_line(op)}")
        lines += [f"  nvFuser's own: {x}" for x in s.nv_only]
        lines += [f"  kernel {k.name}  {k.us:.1f} us" for k in s.kernels]
    if report.edges:
        lines.append("\nedges (intermediates through global memory):")
        for e in report.edges:
            lines.append(f"  {e.src} -> {e.dst}: {e.tensor.label()}  {hb(e.nbytes)} written+read; "
                         f"not merged: {e.why_not_merged}")
    lines.append(f"\nunsegmented floor {hb(report.floor_bytes)}; segments move {hb(report.segmented_bytes)}: "
                 f"segmentation cost {hb(report.segmentation_cost_bytes)}")
    lines += [f"note: {n}" for n in report.notes]
    return "\n".join(lines)


# --------------------------------------------------------------------------- pictures
def gpu_picture(report: SegmentsReport, title: str = ""):
    """The fusion with nvFuser's segments as clusters (an op nvFuser recomputes in several is drawn in the
    first), concrete shapes on the edges, and the segment_sets of the outputs bookend plan (nvFuser's own)."""
    from segkit.graph import Cluster, picture

    first = report.segment_of()
    clusters = [Cluster(f"segment {s.index}: {s.scheduler}" + (f", {s.kernel_us:.1f} us" if s.kernels else ", no kernel"),
                        [i for i in s.ops if first[i] == s.index]) for s in report.segments]
    cuts = bookend(report.fd, "outputs").cuts  # where nvFuser's own mark-aliases pass puts segment_sets
    return picture(report.fd, clusters, cuts, title=title, shapes=report.shapes)


def plan_picture(fd: Any, cuts: Sequence[Any] = (), title: str = ""):
    """The fusion with the regions bookend ``cuts`` leave as clusters, the cuts drawn (no GPU needed)."""
    from segkit.graph import Cluster, picture

    fusion = as_fusion(fd)
    index = {id(op): i for i, op in enumerate(fusion.ops)}
    clusters = []
    for k, ops in enumerate(cut_pieces(fusion, cuts)):
        kind = "view ops only" if all(op.name in meta_ops() for op in ops) else "compute"
        clusters.append(Cluster(f"region {k} ({kind})", [index[id(op)] for op in ops]))
    return picture(fd, clusters, cuts, title=title)
