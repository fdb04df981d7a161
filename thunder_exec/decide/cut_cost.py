"""Keep a claimed norm / RoPE call as segkit's opaque, hand-scheduled kernel, or fuse it into Thunder's nvFuser
region? A cut of a region pays only where segkit's tuned schedule beats nvFuser's default by more than the cut
costs:

  gain = default_us - us                 (the tuning table's entry for the spec, config and GPU)
  cut  = 2 * crossing bytes / copy bandwidth   (each tensor crossing the cut written, then read back)
         + extra kernels * kernel_us + host_us

Where the step itself was measured both ways (thunder_exec.decide.evidence: the spec fused, then opaque), that
measurement decides instead, per step: opaque where the cut saved more kernel time than the host time it added to
the step (timed in the step table's paired passes; a record without that timing weighs one call's estimate,
``CutPolicy.host_us``).

Before either, whether to claim the call at all: ``call_declines`` finds step evidence (claim_evidence.json)
that Thunder's own decomposition of the call ran faster than segkit's claim; "auto" then leaves it to Thunder.

``decide`` is a pure function of the spec, config, GPU name, tuning table, step evidence and ``CutPolicy`` (the
constants, a parameter): no evidence and no tuning entry (or no gain) means fused. Each Choice of
``segkit_fuse="auto"`` quotes its ``CutDecision.describe()``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace

import fusions
from fusions.spec import signature, tuning_table
from segkit.frontend import FusionDefinition
from segkit.regions import GPU_BANDWIDTH
from segkit.tuning import TuningTable
import thunder_exec.decide.evidence as _evidence  # the module; ``evidence`` is decide()'s table
from thunder_exec.decide.evidence import ClaimEvidence, CutEvidence, EvidenceTable

OPAQUE, FUSED, THUNDER = "opaque", "fused", "thunder"


@dataclass(frozen=True)
class CutPolicy:
    """What one cut of an nvFusion region costs, as parameters (to be calibrated on a measured step; these are
    starting values, not measurements of this code).

    ``copy_bandwidth``: bytes per second a device copy moves, read and write counted, per GPU (matched as a
    substring of the GPU's name); a GPU not listed gets ``fallback_gpu``'s. ``extra_kernels``: kernels the cut
    adds (the region split in two). ``kernel_us``: launch and ramp of one more kernel. ``host_us``: host time of
    one more call (Thunder runs the opaque symbol and the two halves of the region as separate calls)."""

    copy_bandwidth: tuple[tuple[str, float], ...] = tuple((gpu.upper(), bw) for gpu, bw in GPU_BANDWIDTH.items())
    fallback_gpu: str = "H100"
    extra_kernels: int = 1
    kernel_us: float = 2.0
    host_us: float = 8.0

    def bandwidth(self, gpu: str | None) -> tuple[str, float]:
        """(the GPU it is counted as, its copy bandwidth in bytes/s) for the GPU named ``gpu``."""
        for name, bw in self.copy_bandwidth:
            if gpu is not None and name in gpu:
                return name, bw
        return self.fallback_gpu, dict(self.copy_bandwidth)[self.fallback_gpu]


@dataclass(frozen=True)
class CutDecision:
    """The decision for one symbol call and the numbers behind it (times in microseconds)."""

    spec: str
    signature: str
    gpu: str | None
    decision: str  # OPAQUE | FUSED
    why: str
    crossing_bytes: int  # the fusion's inputs and outputs: what crosses the cut
    counted_as: str  # the GPU whose copy bandwidth was used
    bandwidth: float  # bytes/s
    memory_us: float  # the crossing bytes written and read back at copy bandwidth
    kernels_us: float
    host_us: float
    us: float | None = None  # segkit's tuned time (the tuning table's entry), None without one
    default_us: float | None = None  # nvFuser's default, same run
    measured: CutEvidence | None = None  # the step measured both ways: it decided

    @property
    def cut_us(self) -> float:
        return self.memory_us + self.kernels_us + self.host_us

    @property
    def gain_us(self) -> float | None:
        """How much segkit's tuned schedule beats nvFuser's default (None: no measured entry)."""
        return None if self.us is None or self.default_us is None else self.default_us - self.us

    def describe(self) -> str:
        if self.measured is not None:
            host = "timed" if self.measured.host_us is not None else "estimated"
            return (f"{self.spec} {self.signature} on {self.gpu}: {self.decision} ({self.why}); "
                    f"{self.measured.describe()}: gain {self.measured.gain_us:.1f} us vs host {self.host_us:.1f} us "
                    f"({host})")
        gain = ("no tuning entry" if self.gain_us is None else
                f"tuned {self.us:.1f} us vs nvFuser default {self.default_us:.1f} us: gain {self.gain_us:.1f} us")
        cut = (f"cut {self.cut_us:.1f} us = {self.crossing_bytes / 1e6:.2f} MB x2 at "
               f"{self.bandwidth / 1e12:.2f} TB/s ({self.counted_as}) {self.memory_us:.1f} us + kernels "
               f"{self.kernels_us:.1f} us + host {self.host_us:.1f} us")
        return f"{self.spec} {self.signature} on {self.gpu or 'no GPU'}: {self.decision} ({self.why}); {gain}; {cut}"


@functools.lru_cache(maxsize=256)
def crossing_bytes(spec_name: str, cfg) -> int:
    """Bytes of the spec's fusion inputs and outputs for ``cfg`` (recorded once per config; ``cache_clear()``)."""
    with FusionDefinition() as fd:
        fusions.get(spec_name).define(fd, cfg)
    f = fd.fusion
    return sum(math.prod(v.shape) * v.dtype.itemsize for v in (*f.inputs, *f.outputs) if v.shape is not None)


def _measured_entry(table: TuningTable | None, gpu: str | None, spec_name: str, sig: str):
    """The tuning entry of the call in ``table`` (default: the committed one) with both segkit's time and nvFuser's
    default measured, else None."""
    entry = (table if table is not None else tuning_table()).lookup(gpu, spec_name, sig)
    return None if entry is None or entry.us is None or entry.default_us is None else entry


def decide(spec_name: str, cfg, gpu: str | None, table: TuningTable | None = None,
           policy: CutPolicy = CutPolicy(), evidence: EvidenceTable | None = None) -> CutDecision:
    """Opaque (keep segkit's cut) or fused (into Thunder's nvFuser region) for one call of ``spec_name`` with
    ``cfg`` on the GPU named ``gpu``, from ``evidence`` (default: the committed step measurements) where it has
    the call, else from ``table`` (default: the committed tuning table) and ``policy``."""
    sig = signature(cfg)
    evidence = evidence if evidence is not None else _evidence.committed()
    measured = evidence.lookup(gpu, spec_name, sig)
    nbytes = crossing_bytes(spec_name, cfg)
    counted_as, bw = policy.bandwidth(gpu)
    costs = dict(crossing_bytes=nbytes, counted_as=counted_as, bandwidth=bw, memory_us=2 * nbytes / bw * 1e6,
                 kernels_us=policy.extra_kernels * policy.kernel_us, host_us=policy.host_us)
    base = dict(spec=spec_name, signature=sig, gpu=gpu)
    if measured is not None:
        timed = measured.host_us is not None
        costs["host_us"] = measured.host_us if timed else policy.host_us
        opaque = measured.gain_us > costs["host_us"]
        host = "the host time it added to the step" if timed else "its call's estimated host time"
        return CutDecision(**base, decision=OPAQUE if opaque else FUSED, measured=measured, **costs,
                           why=f"measured in a step: the cut saved {'more' if opaque else 'less'} kernel time than "
                               f"{host}")
    entry = _measured_entry(table, gpu, spec_name, sig)
    if entry is None:
        return CutDecision(**base, decision=FUSED, why="no measured tuning entry", **costs)
    d = CutDecision(**base, decision=FUSED, why="the cut costs more than the tuned kernel gains", us=entry.us,
                    default_us=entry.default_us, **costs)
    return replace(d, decision=OPAQUE, why="the tuned kernel gains more than the cut costs") if d.gain_us > d.cut_us \
        else d


def decide_alone(spec_name: str, cfg, gpu: str | None, table: TuningTable | None = None,
                 policy: CutPolicy = CutPolicy()) -> CutDecision:
    """The decision for a call that nvFuser's fusion pass left alone in its region: running it opaque cuts
    nothing (no bytes cross, no kernel or call is added: one call replaces another), so segkit's kernel runs
    where ``table`` (default: the committed tuning table) measured it faster than nvFuser's default, and the call
    stays fused otherwise (no entry: the same fusion, scheduled by nvFuser either way)."""
    counted_as, bw = policy.bandwidth(gpu)
    d = CutDecision(spec=spec_name, signature=signature(cfg), gpu=gpu, decision=FUSED, crossing_bytes=0,
                    counted_as=counted_as, bandwidth=bw, memory_us=0.0, kernels_us=0.0, host_us=0.0,
                    why="alone in its nvFuser region, no measured tuning entry")
    entry = _measured_entry(table, gpu, spec_name, d.signature)
    if entry is None:
        return d
    d = replace(d, us=entry.us, default_us=entry.default_us,
                why="alone in its nvFuser region, nvFuser's default no slower than the tuned kernel")
    return replace(d, decision=OPAQUE, why="alone in its nvFuser region: nothing to cut, the tuned kernel is "
                   "faster") if d.gain_us > 0 else d


def call_declines(calls, gpu: str | None, claims: EvidenceTable | None = None, table: TuningTable | None = None,
                  evidence: EvidenceTable | None = None) -> tuple[str, ClaimEvidence] | None:
    """For one claimed call, its (spec, config) pairs (forward, then backward) on the GPU named ``gpu``: the first
    spec whose step evidence in ``claims`` (default: the committed claim evidence) shows Thunder's own
    decomposition faster than segkit's claim, with its record; None where none does, or where any spec of the call
    that has a record would now run otherwise than its step measured it (``claimed_as`` against ``decide``'s
    decision from ``table`` and ``evidence``, e.g. opaque on a tuning entry found since): that step measured
    another claim of the call."""
    claims = claims if claims is not None else _evidence.committed_claims()
    found = None
    for spec_name, cfg in calls:
        record = claims.lookup(gpu, spec_name, signature(cfg))
        if record is None:
            continue
        if decide(spec_name, cfg, gpu, table, evidence=evidence).decision != record.claimed_as:
            return None
        if found is None and record.gain_us > 0:
            found = (spec_name, record)
    return found
