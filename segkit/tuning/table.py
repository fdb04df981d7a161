"""Scheduler choices a fusion builder keeps for nvFuser where the default heuristics fall short, and the tuning
table that keeps ``segkit tune``'s winners per GPU model.

A builder returns an ``NvTuning`` for the configs it was measured on (its ``why`` says what it bought);
``segkit.nvfuser.run.compiled`` then runs the fusion through ``TunedFusion`` (segkit.nvfuser.tuned) instead of a plain
``fd.execute``. Three kinds:

* ``enable_options``: nvFuser options passed to ``fd.execute`` (e.g. ``ws_normalization``, nvFuser's
  warp-specialized TMA normalization scheduler);
* ``scheduler`` with overrides: the whole fusion is scheduled by that scheduler with nvFuser's own heuristics,
  a few parameters replaced, and run through a KernelExecutor (``manual_execute``), compiled once per input
  signature. A manual schedule skips what nvFuser's segmenter does first (e.g. turning a Welford ``var_mean``
  into two passes), so a tuned builder writes that itself. It also costs host time per call that
  ``fd.execute``'s input-signature cache saves, so it pays only where the kernel gains more;
* ``split``: the outputs in groups, each group its own nvFuser fusion (the ops it needs, the same inputs) with
  default heuristics, run back to back. The later parts read the inputs again: it pays where those reads hit L2
  and the fused schedule is poor (norm backward at hidden 256).

Only overrides nvFuser's scheduler supports without extra constraints are offered: vectorization of the inner
reduction, register-persistent batch (same elements per block row), register cap, blocks per SM (the
inner-outer kernel is cooperative, so gdimy must fit on the device at once) and rows per block for the inner
persistent scheduler. Several rows per block are refused for the inner-outer scheduler: there they race on
shared memory (the reason nvFuser's own heuristic pins bdimy to 1, its PR 3423).

A workload's hand-written schedule of its own formulation is no NvTuning: a table entry keeps it in its
``schedule`` field, parameters by name, which the workload reads back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

import torch

from segkit.errors import TuningTableError

REUSE = "reuse"  # the builder's fusion as segkit.reuse_reductions rewrites it (wider reductions read narrower ones)


@dataclass(frozen=True)
class NvTuning:
    why: str
    enable_options: tuple[str, ...] = ()
    scheduler: str | None = None
    vectorize: int | None = None
    maxrregcount: int | None = None
    blocks_per_sm: int | None = None
    rows_per_block: int | None = None
    split: tuple[tuple[int, ...], ...] = ()
    persistent_batch: int | None = None  # register-persistent batch per thread (same elements per block row)

    def __post_init__(self) -> None:
        overrides = (self.vectorize, self.maxrregcount, self.blocks_per_sm, self.rows_per_block, self.persistent_batch)
        if self.scheduler is None and any(o is not None for o in overrides):
            raise ValueError("NvTuning: vectorize / maxrregcount / blocks_per_sm / rows_per_block / persistent_batch "
                             "need a scheduler to override")
        if self.rows_per_block is not None and self.scheduler != "inner_persistent":
            raise ValueError(f"NvTuning: rows_per_block applies to the inner_persistent scheduler, not "
                             f"{self.scheduler} (several rows per inner-outer block race on shared memory)")
        if sum(map(bool, (self.scheduler, self.enable_options, self.split))) > 1:
            raise ValueError("NvTuning: choose one of enable_options, a manual scheduler or a split")

    def for_outputs(self, served: Sequence[Sequence[int]]) -> NvTuning | None:
        """This tuning for a rewritten fusion whose output j computes the old outputs ``served[j]`` (keep_outputs,
        the minimizer, a host plan's core). Only a split names outputs: its groups are mapped onto the new
        outputs; a split left with one group is one fusion on nvFuser's defaults (None)."""
        if not self.split:
            return self
        groups = [tuple(j for j, old in enumerate(served) if set(old) & set(g)) for g in self.split]
        groups = [g for g in groups if g]
        flat = sorted(j for g in groups for j in g)
        if flat != list(range(len(served))):
            raise ValueError(f"NvTuning split {self.split} does not map onto the rewritten fusion's outputs "
                             f"(old outputs per new output: {[list(o) for o in served]})")
        return replace(self, split=tuple(groups)) if len(groups) > 1 else None

    def describe(self) -> str:
        if self.split:
            return "split into fusions with outputs " + " | ".join(",".join(map(str, g)) for g in self.split)
        if self.scheduler is None:
            return f"fd.execute with {', '.join(self.enable_options)}"
        parts = [f"{k}={v}" for k in ("vectorize", "maxrregcount", "blocks_per_sm", "rows_per_block", "persistent_batch")
                 if (v := getattr(self, k)) is not None]
        return f"manual {self.scheduler} ({', '.join(parts)})"


_FIELDS = tuple(f.name for f in fields(NvTuning))  # every field, so none is dropped on the way to the table


def tuning_to_dict(tuning: NvTuning | None) -> dict | None:
    """The JSON form of a tuning (tuples as lists), for the tuning table."""
    if tuning is None:
        return None
    return {k: v for k in _FIELDS if (v := getattr(tuning, k)) not in (None, ())}


def tuning_from_dict(d: dict | None) -> NvTuning | None:
    if d is None:
        return None
    unknown = set(d) - set(_FIELDS)
    if unknown:
        raise ValueError(f"tuning table: unknown NvTuning fields {sorted(unknown)}; known: {list(_FIELDS)}")
    return NvTuning(**{k: tuple(tuple(g) for g in v) if k == "split" else tuple(v) if k == "enable_options" else v
                       for k, v in d.items()})


def formulation_label(formulation: str, chunk: int | None) -> str:
    """"NAME chunk N" for a formulation in chunks (a workload's: partials per chunk of rows, then their reduction),
    else its name."""
    return f"{formulation} chunk {chunk}" if chunk is not None else formulation


def describe_schedule(schedule: dict) -> str:
    """A workload's hand-written schedule, as the table keeps it (its parameters by name)."""
    return "schedule " + ", ".join(f"{k}={v}" for k, v in schedule.items())


@dataclass(frozen=True)
class TableEntry:
    """The winner of ``segkit tune`` for one spec and config (sizes and dtype) on one GPU model, with what it
    bought."""

    gpu: str
    spec: str
    config: str  # the config's name, for people
    signature: str  # what a config is matched by: its sizes and dtype (fusions.spec.signature), not its name
    formulation: str = "fused"  # REUSE, or a workload's own (fusions.formulations: e.g. partials, then a reduction)
    chunk: int | None = None
    tuning: NvTuning | None = None  # nvFuser's heuristic knobs, for a fusion nvFuser schedules
    bookend: str = "none"
    us: float | None = None  # the winner's time, cold L2, in ``metric``
    default_us: float | None = None  # nvFuser's defaults, same timer, same run
    rule_us: float | None = None  # the builder's hand-picked rule, same timer, same run (None: no rule, or wrong)
    measured: str = ""  # date and versions of the run
    metric: str = "kernel"  # "kernel": summed kernel time (CUPTI), what the benchmarks report and tune ranks by;
    #                          "events": CUDA events around one call (host gaps included; entries before kernel ranking)
    call_us: float | None = None  # the winner's time between CUDA events around one call (launch and host gaps in)
    schedule: dict | None = None  # a hand-written schedule of the formulation, opaque here: its parameters by name

    def key(self) -> tuple[str, str, str]:
        return self.gpu, self.spec, self.signature

    def describe(self) -> str:
        how = self.tuning.describe() if self.tuning else describe_schedule(self.schedule) if self.schedule \
            else "nvFuser defaults"
        label = formulation_label(self.formulation, self.chunk) if self.formulation != "fused" else ""
        form = f"{label}, " if label else ""
        bought = (f": {self.default_us:.1f} -> {self.us:.1f} us ({self.default_us / self.us:.2f}x)"
                  if self.us and self.default_us else "")
        rule = f"; the builder's rule {self.rule_us:.1f} us" if self.rule_us else ""
        call = f"; {self.call_us:.1f} us per call between events" if self.call_us else ""
        metric = {"kernel": "kernel time", "events": "event time"}.get(self.metric, self.metric)
        return f"{form}{how}, bookend {self.bookend}{bought}{rule} ({metric}{call})"

    def to_dict(self) -> dict:
        d = {k: getattr(self, k) for k in ("gpu", "spec", "config", "signature", "formulation", "chunk", "bookend",
                                           "us", "default_us", "rule_us", "measured", "metric", "call_us")}
        d["tuning"] = tuning_to_dict(self.tuning)
        if self.schedule is not None:
            d["schedule"] = dict(self.schedule)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> TableEntry:
        if not isinstance(d, dict):
            raise TypeError(f"an entry must be an object, got {type(d).__name__}")
        unknown = sorted(set(d) - {f.name for f in fields(cls)})
        missing = sorted({"gpu", "spec", "config", "signature"} - set(d))
        if unknown or missing:
            what = [f"unknown fields {unknown}"] * bool(unknown) + [f"missing {missing}"] * bool(missing)
            raise TypeError(f"entry {d.get('spec', '?')}/{d.get('config', '?')}: {', '.join(what)}")
        # an entry written before tune ranked by kernel time says nothing of its metric: it was event time
        return cls(**{"metric": "events", **d, "tuning": tuning_from_dict(d.get("tuning"))})


class TuningTable:
    """Tuning winners per GPU model (a committed JSON file): builders and segkit_ex look their config up at
    run time; a GPU model with no entry keeps the builder's own rule (or nvFuser's defaults)."""

    def __init__(self, entries: Sequence[TableEntry] = ()) -> None:
        self._entries = {e.key(): e for e in entries}

    @classmethod
    def load(cls, path, must_exist: bool = False) -> TuningTable:
        """The table saved at ``path``; a missing file is an empty table unless ``must_exist`` (a table to merge
        from, or one a user named). An empty, unreadable or malformed file is a TuningTableError (a ValueError)
        naming it."""
        import json
        from pathlib import Path

        path = Path(path)
        if not path.exists():
            if must_exist:
                raise TuningTableError(f"tuning table {path}: no such file")
            return cls()
        try:
            text = path.read_text()
        except (OSError, UnicodeDecodeError) as e:
            raise TuningTableError(f"tuning table {path} cannot be read: {getattr(e, 'strerror', None) or e}") from None
        if not text.strip():
            raise TuningTableError(f"tuning table {path} is empty (not even {{\"entries\": []}})")
        try:
            data = json.loads(text)
            return cls([TableEntry.from_dict(d) for d in data["entries"]])
        except (ValueError, KeyError, TypeError) as e:
            raise TuningTableError(f"tuning table {path} is malformed: {type(e).__name__}: {e}") from None

    def save(self, path) -> None:
        import json

        from segkit.files import write_text_atomic

        entries = [self._entries[k].to_dict() for k in sorted(self._entries)]
        write_text_atomic(path, json.dumps({"entries": entries}, indent=1) + "\n")  # never half a table

    def put(self, entry: TableEntry) -> None:
        self._entries[entry.key()] = entry

    def merge(self, other: TuningTable) -> None:
        """``other``'s entries replace this table's (a newer run supersedes an older one)."""
        for e in other.entries():
            self.put(e)

    @classmethod
    def fastest_of(cls, tables: Sequence[tuple[str, TuningTable]]) -> tuple[TuningTable, dict]:
        """One table from the outputs of one search split over processes or GPUs (``segkit tune --shard``):
        per (GPU, spec, config) the entry with the lowest kernel time, and which named table it came from.
        Entries timed with different metrics are not compared: that is an error."""
        best: dict[tuple[str, str, str], tuple[str, TableEntry]] = {}
        for name, table in tables:
            for e in table.entries():
                held = best.get(e.key())
                if held is not None and held[1].metric != e.metric:
                    raise ValueError(f"{e.spec} {e.signature} on {e.gpu}: {held[0]} holds {held[1].metric} time, "
                                     f"{name} {e.metric} time; they do not compare")
                if held is None or (e.us is not None and (held[1].us is None or e.us < held[1].us)):
                    best[e.key()] = (name, e)
        return cls([e for _, e in best.values()]), {k: name for k, (name, _) in best.items()}

    def lookup(self, gpu: str | None, spec: str, signature: str) -> TableEntry | None:
        if gpu is None:
            return None
        return self._entries.get((gpu, spec, signature))

    def entries(self) -> list[TableEntry]:
        return list(self._entries.values())

    def gpus(self) -> list[str]:
        return sorted({e.gpu for e in self._entries.values()})


def gpu_model() -> str | None:
    """The CUDA device's model name (the tuning table's key), or None without a GPU."""
    return torch.cuda.get_device_name() if torch.cuda.is_available() else None
