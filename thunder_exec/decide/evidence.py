"""The step evidence segkit_ex decides by, and its one loader: three committed per-GPU tables beside this file,
each record a step measured two ways with the run it came from.

* ``CutEvidence`` (cut_evidence.json): a spec's calls fused into Thunder's regions against opaque. The cost model
  (thunder_exec.decide.cut_cost) weighs segkit's tuned kernel against nvFuser's default schedule of the same
  fusion *alone*; inside Thunder's region the fused op can cost far more than alone, which no standalone tuning
  sees. litgpt >= 0.5.5's RoPE backward is the case in point: Thunder's region joins it with the backward of the
  qkv split, a cat, and nvFuser lowers a cat by computing every piece for every output element:

      dq --rope_bwd--+
      dk --sum--rope_bwd--+--cat--> dqkv      one resize kernel: each element computes all three pieces
      dv --sum------------+

  Opaque, the two RoPE adjoints run as segkit's own kernels and the region keeps the sums and the cat: what the cut
  saves in one kernel it can pay in others (an input copied to the layout the opaque call wants, a kernel more).
  So a step profiled twice, the spec fused and the spec opaque, everything else the same, decides from the
  memory-bound kernel time of the two steps (every kernel but the matmuls and attention, which both run alike):
  opaque where fused_us - opaque_us exceeds the host time the cut adds to a step. Both are per step: ``host_us`` is
  that host time as the step table timed it (opaque's host ms minus fused's, the median over its paired passes:
  the extra calls, and the region halves Thunder runs on either side of each); a record without it falls back on
  the cost model's estimate of one call (CutPolicy.host_us).
* ``ClaimEvidence`` (claim_evidence.json): the same measurement with the call claimed (as "auto" ran it) against
  the call left to Thunder (``segkit_fuse`` "thunder"). A claim can lose outright: on small models Thunder's own
  decomposition of a norm or RoPE, fused by nvFuser with its neighbours, ran faster than either of segkit's forms
  (the lab's index has the runs); "auto" declines the call there.
* ``GroupedEvidence`` (gqa_evidence.json): a step with grouped-query attention grouped on cuDNN against repeated,
  per GPU and group size (``segkit_gqa`` "auto", thunder_exec.gqa).

``python -m benchmarks.cut_evidence`` writes the first two kinds from the step table's profiles (``RUN --fused A
--opaque B``, ``RUN --claimed A --declined B``; ``STEP_JSON --fused A --opaque B --host-only --write`` adds the
host timing to a record); each names its source. It writes no record for a difference within the run's A/A
control (stock Thunder against itself compiled again), nor where the paired steps contradict the kernel sums (the
side with less kernel time slower in 8 of 10 passes: a host-bound step pays a cut's host time); the step table's
profiles hold 5 steps, and the sums are medians. ``committed_table(kind)`` reads a committed table once.
"""

from __future__ import annotations

import functools
import json
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path

from segkit.errors import TuningTableError

EVIDENCE_PATH = Path(__file__).with_name("cut_evidence.json")
CLAIMS_PATH = Path(__file__).with_name("claim_evidence.json")
GQA_PATH = Path(__file__).with_name("gqa_evidence.json")


@dataclass(frozen=True)
class CutEvidence:
    """One spec's calls of one signature in one step, fused against opaque (times in microseconds)."""

    gpu: str
    spec: str
    signature: str
    fused_us: float  # memory-bound kernel time of one step, the spec fused into Thunder's regions
    opaque_us: float  # the same step, the spec's calls opaque
    case: str  # the step table's case (benchmarks/model_cases.py)
    source: str  # where the two profiles are, and which variants they are
    measured: str  # date and versions
    host_us: float | None = None  # host time per step the cut adds (opaque's minus fused's); None: not timed
    host_source: str | None = None  # the run and variants it was timed in, and over how many paired passes

    @property
    def gain_us(self) -> float:
        """What cutting saves in the step's kernel time (negative: fusing is better)."""
        return self.fused_us - self.opaque_us

    def describe(self) -> str:
        host = "" if self.host_us is None else f"; host {self.host_us:+.1f} us per step opaque ({self.host_source})"
        return (f"measured in the {self.case} step ({self.source}): memory-bound kernels {self.fused_us:.1f} us "
                f"fused, {self.opaque_us:.1f} us opaque{host}")


@dataclass(frozen=True)
class ClaimEvidence:
    """One spec's calls of one signature in one step, claimed by segkit_ex against left to Thunder's own
    decomposition (times in microseconds)."""

    gpu: str
    spec: str
    signature: str
    claimed_us: float  # memory-bound kernel time of one step, the spec's calls claimed (as ``claimed_as``)
    declined_us: float  # the same step, the calls left to Thunder (segkit_fuse "thunder")
    claimed_as: str  # how the claimed calls ran: "fused" | "opaque"
    case: str
    source: str
    measured: str

    @property
    def gain_us(self) -> float:
        """What declining saves in the step's kernel time (negative: the claim is better)."""
        return self.claimed_us - self.declined_us

    def describe(self) -> str:
        return (f"measured in the {self.case} step ({self.source}): memory-bound kernels {self.claimed_us:.1f} us "
                f"claimed ({self.claimed_as}), {self.declined_us:.1f} us left to Thunder")


class EvidenceTable:
    """Step evidence (``record_type``: CutEvidence) per ``key`` (GPU, spec, signature); a later record replaces an
    earlier one."""

    record_type = CutEvidence

    def __init__(self, records=()) -> None:
        self._items: dict[tuple, CutEvidence] = {}
        for r in records:
            self.put(r)

    @staticmethod
    def key(record) -> tuple:
        """What a record is kept under."""
        return (record.gpu, record.spec, record.signature)

    def put(self, record: CutEvidence) -> None:
        self._items[self.key(record)] = record

    def lookup(self, gpu: str | None, spec: str, signature: str) -> CutEvidence | None:
        return None if gpu is None else self._items.get((gpu, spec, signature))

    def records(self) -> list[CutEvidence]:
        return sorted(self._items.values(), key=self.key)

    @classmethod
    def load(cls, path: str | Path) -> EvidenceTable:
        """The records of ``path`` (none where it does not exist); a malformed file, or a record ``put`` refuses,
        is a TuningTableError naming it and the record at fault."""
        path = Path(path)
        if not path.exists():
            return cls()
        try:
            raw = json.loads(path.read_text())["records"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise TuningTableError(f"{path}: not a step evidence file ({e})") from None
        names = {f.name for f in fields(cls.record_type)}
        required = {f.name for f in fields(cls.record_type) if f.default is MISSING}
        out = cls()
        for i, d in enumerate(raw):
            if not isinstance(d, dict) or not required <= set(d) <= names:
                optional = f" (plus any of {sorted(names - required)})" if names - required else ""
                raise TuningTableError(f"{path}: record {i} must have exactly the fields {sorted(required)}{optional}, "
                                       f"got {sorted(d) if isinstance(d, dict) else type(d).__name__}")
            try:
                out.put(cls.record_type(**d))
            except TuningTableError as e:
                raise TuningTableError(f"{path}: record {i}: {e}") from None
        return out

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"records": [asdict(r) for r in self.records()]}, indent=1) + "\n")


class ClaimTable(EvidenceTable):
    """ClaimEvidence per (GPU, spec, signature)."""

    record_type = ClaimEvidence


@dataclass(frozen=True)
class GroupedEvidence:
    """One step measured with grouped-query attention grouped and repeated, side by side in one process."""

    gpu: str
    group: int  # q heads per k / v head
    grouped: bool  # the verdict: the grouped call was faster
    case: str  # the step table's case (benchmarks/model_cases.py)
    variants: str
    grouped_ms: float
    repeated_ms: float
    paired: str
    source: str
    measured: str


class GroupedTable(EvidenceTable):
    """GroupedEvidence per (GPU, group size); two records of one key with different verdicts are refused."""

    record_type = GroupedEvidence

    @staticmethod
    def key(record) -> tuple:
        return (record.gpu, record.group)

    def put(self, record: GroupedEvidence) -> None:
        earlier = self._items.get(self.key(record))
        if earlier is not None and earlier.grouped != record.grouped:
            raise TuningTableError(f"{record.case} says grouped={record.grouped} on {record.gpu} at group "
                                   f"{record.group}, {earlier.case} the opposite")
        self._items[self.key(record)] = record

    def grouped(self, gpu: str | None, group: int) -> bool:
        """The grouped call, where a step on ``gpu`` measured it faster at this group size; the repeats elsewhere."""
        record = None if gpu is None else self._items.get((gpu, group))
        return record is not None and record.grouped


#: The committed tables: kind -> (file beside this module, its table type).
COMMITTED = {"cut": (EVIDENCE_PATH, EvidenceTable), "claim": (CLAIMS_PATH, ClaimTable),
             "gqa": (GQA_PATH, GroupedTable)}


@functools.lru_cache(maxsize=None)
def committed_table(kind: str) -> EvidenceTable:
    """The committed table of ``kind`` (COMMITTED), read once (``committed_table.cache_clear()`` to read again)."""
    if kind not in COMMITTED:
        raise ValueError(f"no committed evidence {kind!r}; known: {', '.join(COMMITTED)}")
    path, table = COMMITTED[kind]
    return table.load(path)


def committed() -> EvidenceTable:
    """cut_evidence.json: the cuts measured in a step."""
    return committed_table("cut")


def committed_claims() -> ClaimTable:
    """claim_evidence.json: the claims measured in a step against Thunder's own."""
    return committed_table("claim")


def committed_grouped() -> GroupedTable:
    """gqa_evidence.json: grouped-query attention measured grouped against repeated."""
    return committed_table("gqa")
