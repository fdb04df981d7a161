"""Fusion regions and the cuts between them in Thunder execution traces, with what each cut costs.

A *region* is a fusion executor's call (``nvFusionN``, ``TorchCompileN``, ``CUDAGraphN``). A *cut* is any other
call that takes a tensor a region produced or produces one a region takes: those tensors cross memory (written by
one kernel, read by the next) only because the call is not inside the region. The gain of fusing a cut is
estimated as the bytes it forces through memory at copy bandwidth, plus a launch per kernel it adds, plus its host
call (``CostModel``). segkit's own symbols (``segkit_*``, its attention excepted) are the fusible cuts, the ones
an estimated fused step subtracts; matmuls, attention and collectives are not fusible (nvFuser does not generate
them in Thunder's default set-up) and get no gain; any other call is listed with its gain, not counted.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field, fields, is_dataclass

from segkit.args import NonNegative, Positive, checked
from segkit.errors import SegkitError, UsageError
from segkit.regions.measure import CallTiming
from segkit.regions.parse import Call, ExecTrace, TensorType, parse_trace
from segkit.results import validate

#: Fusion executors' region names: ``<prefix><counter>`` -> the executor.
REGION_EXECUTORS = {"nvFusion": "nvFuser", "TorchCompile": "torch.compile", "CUDAGraph": "CUDA graph"}
_REGION = re.compile(rf"(?P<prefix>{'|'.join(REGION_EXECUTORS)})\d+")

#: Calls that are not fusible, matched on the callee's last name (lower case): (pattern, reason).
NOT_FUSIBLE = (
    (re.compile(r".*(scaled_dot_product|sdpa|flash_attn|attention).*"),
     "attention kernel (SDPA / cuDNN / flash): nvFuser does not generate it"),
    (re.compile(r"(.*_)?(linear|matmul|mm|bmm|addmm|baddbmm)(_\d+)?"),
     "matmul (cuBLAS): Thunder keeps matmuls out of nvFusion regions by default (nv_enable_linear / nv_enable_matmul)"),
    (re.compile(r".*embedding.*"), "embedding gather: Thunder runs it in torch by default (nv_enable_embedding)"),
    (re.compile(r".*(all_reduce|all_gather|reduce_scatter).*|(torch_)?(broadcast|wait|send|recv)"),
     "communication: not a kernel a fusion can hold"),
)
FUSIBLE_PREFIX = "segkit_"
#: Calls that only view their first argument (no kernel, no bytes): a tensor crosses them unchanged, so a region's
#: output viewed and then taken by a cut crosses that cut.
VIEW_OPS = frozenset({"reshape", "view", "view_as", "permute", "transpose", "t", "unsqueeze", "squeeze", "flatten",
                      "unflatten", "movedim", "expand", "expand_as", "detach",
                      "torch_prims_reshape_impl"})

#: Per-GPU copy bandwidth (bytes/s, read + write counted) the estimates divide bytes by: this one and the cut cost
#: model's (thunder_exec.decide.cut_cost).
GPU_BANDWIDTH = {"h100": 3.0e12, "h200": 4.25e12}
#: A cut's kernels and host time (us) per call where neither the command line nor a profile gives them.
DEFAULT_KERNELS, DEFAULT_HOST_US = 1, 20.0


class RegionsError(SegkitError, ValueError):
    """Traces with nothing to analyse (no fusion region), naming the file."""


@dataclass(frozen=True)
class CostModel:
    """What a cut costs: ``bandwidth`` bytes/s for each byte written or read, ``launch_us`` per kernel it adds,
    ``host_us`` for its host call (zero it where the GPU, not the host, bounds the step) and ``kernels_per_cut``
    kernels per call. Parameters, not measurements; None (host time, kernels): the profile's measurement of the
    call where one is given (segkit.regions.measure), else DEFAULT_HOST_US / DEFAULT_KERNELS."""

    gpu: str
    bandwidth: float
    launch_us: float = 4.0
    host_us: float | None = None
    kernels_per_cut: int | None = None

    def call_cost(self, timing: CallTiming | None) -> tuple[float, float]:
        """(kernels, host us) of a cut's call: the given parameter, else ``timing``'s, else the default."""
        kernels = self.kernels_per_cut if self.kernels_per_cut is not None else (
            timing.kernels if timing else DEFAULT_KERNELS)
        host = self.host_us if self.host_us is not None else (timing.host_us if timing else DEFAULT_HOST_US)
        return kernels, host

    def gain_us(self, nbytes: int, kernels: float, host_us: float) -> float:
        return nbytes / self.bandwidth * 1e6 + kernels * self.launch_us + host_us


@checked
def cost_model(gpu: str, bandwidth_tbs: Positive | None = None, **params) -> CostModel:
    """The cost model for ``gpu`` ("h100", "h200", or any name containing one: "NVIDIA H200"); another GPU needs
    ``bandwidth_tbs`` (TB/s). ``params``: CostModel's other fields."""
    known = [k for k in GPU_BANDWIDTH if k in gpu.lower()]
    if bandwidth_tbs is not None:
        return CostModel(gpu, bandwidth_tbs * 1e12, **params)
    if not known:
        raise UsageError(f"--gpu {gpu!r}: no copy bandwidth known for it (known: "
                         f"{', '.join(GPU_BANDWIDTH)}): give it in TB/s (--bandwidth, bandwidth_tbs=)")
    return CostModel(gpu, GPU_BANDWIDTH[known[0]], **params)


@dataclass(frozen=True)
class Tensor:
    name: str
    type: TensorType | None

    @property
    def nbytes(self) -> int | None:
        return None if self.type is None else self.type.nbytes

    def label(self) -> str:
        return f"{self.name} {self.type}" if self.type else f"{self.name} (type not printed)"


@dataclass(frozen=True)
class Region:
    """A fusion region: its name, executor, the ops printed under it, the tensors it reads and writes."""

    trace: str
    line: int
    name: str
    executor: str
    ops: tuple[str, ...]
    inputs: tuple[Tensor, ...]
    outputs: tuple[Tensor, ...]


@dataclass(frozen=True)
class Crossing:
    """A tensor crossing a cut: ``into`` the cut from ``region`` or out of the cut into it. ``saved_bytes``: what
    fusing the cut saves, the read of the far side, and the write too when nothing else (another call, the
    trace's return) needs the tensor in memory; None when the trace does not print its type."""

    tensor: Tensor
    into_cut: bool
    region: str
    saved_bytes: int | None


@dataclass(frozen=True)
class Cut:
    """A non-fusion call between regions. ``kind``: "fusible" (segkit's symbols), "not fusible" (``reason``) or
    "other"; ``gain_us`` None when not fusible; ``measured``: what a profile measured for the call, if given."""

    trace: str
    line: int
    symbol: str
    kind: str
    reason: str
    before: str | None
    after: str | None
    crossings: tuple[Crossing, ...]
    kernels: float
    host_us: float
    gain_us: float | None
    source: str | None
    measured: CallTiming | None = None

    @property
    def saved_bytes(self) -> int:
        return sum(c.saved_bytes or 0 for c in self.crossings)

    @property
    def unknown(self) -> list[str]:
        """Crossing tensors whose size the trace does not print (their bytes are left out)."""
        return [c.tensor.name for c in self.crossings if c.saved_bytes is None]


@dataclass(frozen=True)
class TraceRegions:
    label: str
    function: str
    regions: tuple[Region, ...]
    cuts: tuple[Cut, ...]


@dataclass(frozen=True)
class RegionsReport:
    """Every trace's regions and cuts under one cost model, and the measured step (ms) if given."""

    model: CostModel
    traces: tuple[TraceRegions, ...]
    step_ms: float | None = None
    notes: tuple[str, ...] = field(default=())
    profiled: bool = False

    @property
    def cuts(self) -> list[Cut]:
        return [c for t in self.traces for c in t.cuts]

    @property
    def fusible_gain_us(self) -> float:
        return sum(c.gain_us for c in self.cuts if c.kind == "fusible")

    @property
    def fused_step_ms(self) -> float | None:
        """The measured step minus the gains of the fusible cuts."""
        return None if self.step_ms is None else self.step_ms - self.fusible_gain_us / 1000

    def invariants(self) -> list[str]:
        """What the inputs rule out (segkit.results): a fused step estimate below zero or above the measured step
        (the gains are never negative), or gains larger than the step they are taken from."""
        out = []
        if self.step_ms is not None:
            fused = self.fused_step_ms
            if fused < 0:
                out.append(f"estimated fused step {fused:.3f} ms is negative: the fusible cuts' gains "
                           f"({self.fusible_gain_us / 1000:.3f} ms) exceed the measured step ({self.step_ms:.3f} ms); "
                           "the cost model over-counts here (check --bandwidth, --host-us, --kernels-per-cut)")
            elif fused > self.step_ms:
                out.append(f"estimated fused step {fused:.3f} ms is above the measured step {self.step_ms:.3f} ms")
        return out

    def to_dict(self) -> dict:
        """Plain data for JSON: tensor types as Thunder prints them, bytes and gains beside."""
        d = _plain(self)
        d["fusible_gain_us"] = self.fusible_gain_us
        d["fused_step_ms"] = self.fused_step_ms
        return d


def _plain(x):
    """``x`` (dataclasses, tuples, TensorTypes) as JSON-ready data; a Tensor and a Cut carry their bytes too."""
    if isinstance(x, TensorType):
        return str(x)
    if is_dataclass(x):
        d = {f.name: _plain(getattr(x, f.name)) for f in fields(x)}
        if isinstance(x, Tensor):
            d["nbytes"] = x.nbytes
        if isinstance(x, Cut):
            d["saved_bytes"] = x.saved_bytes
        return d
    if isinstance(x, (tuple, list)):
        return [_plain(v) for v in x]
    return x


def _classify(callee: str) -> tuple[str, str]:
    """A kernel nvFuser does not generate is not fusible, segkit's own too (segkit_cudnn_sdpa_fwd); segkit's
    other symbols are."""
    name = callee.rsplit(".", 1)[-1]
    for pattern, reason in NOT_FUSIBLE:
        if pattern.fullmatch(name.lower()):
            return "not fusible", reason
    if name.startswith(FUSIBLE_PREFIX):
        return "fusible", "segkit symbol: an opaque call where a translator would put it inside the region"
    return "other", "not claimed by the fusion executor"


def _region_name(callee: str) -> str | None:
    m = _REGION.fullmatch(callee)
    return REGION_EXECUTORS[m["prefix"]] if m else None


@dataclass(frozen=True)
class _Flow:
    """Which call makes and which calls take each tensor of a trace, seen through views (a view's output counts
    as the tensor it views); ``calls``: the trace's calls, views left out."""

    calls: tuple[Call, ...]
    views: dict[str, str]
    producer: dict[str, Call]
    consumers: dict[str, list[Call]]
    returned: frozenset[str]

    @classmethod
    def of(cls, trace: ExecTrace) -> _Flow:
        views = {c.outputs[0]: c.args[0] for c in trace.calls
                 if c.callee.rsplit(".", 1)[-1] in VIEW_OPS and len(c.outputs) == 1 and c.args}

        def root(name: str) -> str:
            while name in views:
                name = views[name]
            return name

        calls = tuple(c for c in trace.calls if not (len(c.outputs) == 1 and c.outputs[0] in views))
        producer: dict[str, Call] = {}
        consumers: dict[str, list[Call]] = defaultdict(list)
        for call in calls:
            for n in dict.fromkeys(root(a) for a in call.args):
                consumers[n].append(call)
            for n in call.outputs:
                producer[n] = call
        return cls(calls, views, producer, dict(consumers), frozenset(root(n) for n in trace.returned))

    def root(self, name: str) -> str:
        while name in self.views:
            name = self.views[name]
        return name

    def args(self, call: Call) -> list[str]:
        return list(dict.fromkeys(self.root(a) for a in call.args))

    def needed_elsewhere(self, name: str, user: Call) -> bool:
        """Whether ``name`` must be in memory for someone besides ``user`` (another call, the trace's return)."""
        return name in self.returned or any(c is not user for c in self.consumers.get(name, ()))


def _crossings(call: Call, flow: _Flow, tensor) -> list[Crossing]:
    """The tensors crossing ``call``: those it takes from a region, and those it makes for one (counted once, for
    the first region taking it: one region absorbs the cut, the others still read the tensor)."""
    def crossing(name: str, into_cut: bool, region: Call, user: Call) -> Crossing:
        t = tensor(name)
        times = 1 if flow.needed_elsewhere(name, user) else 2  # the read, and the write when nothing else needs it
        return Crossing(t, into_cut, region.callee, None if t.nbytes is None else times * t.nbytes)

    out = [crossing(n, True, flow.producer[n], call) for n in flow.args(call)
           if n in flow.producer and _region_name(flow.producer[n].callee)]
    for n in call.outputs:
        dst = next((c for c in flow.consumers.get(n, ()) if _region_name(c.callee)), None)
        if dst is not None:
            out.append(crossing(n, False, dst, dst))
    return out


def analyze_trace(trace: ExecTrace, model: CostModel, types: dict[str, TensorType] | None = None,
                  timings: dict[str, CallTiming] | None = None) -> TraceRegions:
    """The regions and cuts of one trace. ``types``: tensor types from companion traces (the forward's saved
    tensors in the backward), used where this trace prints none; ``timings``: a profile's, by call line."""
    def tensor(name: str) -> Tensor:
        return Tensor(name, trace.types.get(name) or (types or {}).get(name))

    flow = _Flow.of(trace)
    region_calls = [c for c in flow.calls if _region_name(c.callee)]
    regions = tuple(Region(trace.label, c.line, c.callee, _region_name(c.callee), c.ops,
                           tuple(tensor(n) for n in dict.fromkeys(c.args)
                                 if n in flow.producer or n in trace.types or n in trace.params),
                           tuple(tensor(n) for n in c.outputs)) for c in region_calls)
    cuts = []
    for call in flow.calls:
        crossings = [] if _region_name(call.callee) else _crossings(call, flow, tensor)
        if not crossings:
            continue
        kind, reason = _classify(call.callee)
        saved = sum(c.saved_bytes or 0 for c in crossings)
        timing = (timings or {}).get(call.text)
        kernels, host_us = model.call_cost(timing)
        gain = model.gain_us(saved, kernels, host_us) if kind != "not fusible" else None
        cuts.append(Cut(trace.label, call.line, call.callee, kind, reason,
                        next((r.callee for r in reversed(region_calls) if r.line < call.line), None),
                        next((r.callee for r in region_calls if r.line > call.line), None),
                        tuple(crossings), kernels, host_us, gain, call.source, timing))
    return TraceRegions(trace.label, trace.function, regions, tuple(cuts))


@checked
def analyze(sources: list[tuple[str, str]], model: CostModel, step_ms: NonNegative | None = None,
            timings: dict[str, CallTiming] | None = None) -> RegionsReport:
    """The report for ``sources``, (label, trace text) pairs of one program (its forward and backward traces share
    tensor names); ``timings``: a profile of it (segkit.regions.measure). None of the traces holding a fusion
    region is a RegionsError."""
    seen: dict[str, str] = {}
    for label, text in sources:
        if text in seen:
            raise RegionsError(f"{label} is the same trace as {seen[text]}, given twice: its cuts would be counted "
                               "twice; give each trace once")
        seen[text] = label
    traces = [parse_trace(text, label) for label, text in sources]
    types: dict[str, TensorType] = {}
    for t in traces:
        for name, ty in t.types.items():
            types.setdefault(name, ty)
    analysed = tuple(analyze_trace(t, model, types, timings) for t in traces)
    if not any(t.regions for t in analysed):
        names = ", ".join(label for label, _ in sources)
        raise RegionsError(f"{names}: no fusion region (no call named {' / '.join(p + 'N' for p in REGION_EXECUTORS)}):"
                           " is this the final execution trace, thunder.last_traces(jfn)[-1]?")
    notes = []
    unknown = sorted({n for t in analysed for c in t.cuts for n in c.unknown})
    if unknown:
        notes.append(f"{len(unknown)} crossing tensor(s) without a printed type, their bytes left out: "
                     f"{', '.join(unknown[:10])}{' ...' if len(unknown) > 10 else ''} (save the traces with "
                     "thunder_exec.trace_capture.save_traces to get every type)")
    if timings is not None:
        cuts = [c for t in analysed for c in t.cuts]
        missing = [f"{c.symbol} (line {c.line})" for c in cuts if c.measured is None]
        notes.append(f"profile: {len(cuts) - len(missing)} of {len(cuts)} cut(s) measured"
                     + (f"; not in it: {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''} (profile the "
                        "jitted function with thunder_exec.trace_capture.CallRanges)" if missing else ""))
    return validate(RegionsReport(model, analysed, step_ms, tuple(notes), timings is not None), "regions")
