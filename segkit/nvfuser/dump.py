"""nvFuser's own segmentation text, parsed into data: the segmented-fusion dump and the segmenter log.

Both formats are printed by nvFuser's csrc/fusion_segmenter.cpp (0.2.36):

* the segmented fusion (``NVFUSER_DUMP=segmented_fusion``, and ``get_most_recent_scheduled_ir()`` of a
  segmented run): ``groups:`` (``scheduler{expr names}``), ``edges:`` (``e{ g -> g(tensor) }``) and per group
  ``g{(scheduler)`` / ``group id: N`` / ``inputs:`` / ``outputs:`` / its exprs, each followed by ``(expr name)``;
* the segmenter log (``NVFUSER_DUMP=segmenter_logging``): ``***Runtime***: Try to schedule fusion
  un-segmented:``, then for each merge the segmenter tries ``**Segmenter** Considering fusion:`` with the
  candidate's exprs, one ``Scheduler _<name>_ ***rejected*** because : <reason>`` per scheduler that refused
  and ``***Accepted*** as: <name>`` for the one that took it.

Tensors print as ``T<name>_<memory>_<dtype>[<domain>]``; exprs print their outputs first, at column 0.
Whatever a parser does not recognise stays in the ``raw`` text kept beside the data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TENSOR = re.compile(r"\b(T\d+)_([a-z])_(\w+?)\[")
_OUT_AT_COL0 = re.compile(r"^(T\d+)_[a-z]_\w+?\[")
_EXPR_NAME = re.compile(r"^\((\d+)\)\s*$")
_OP_NAME = re.compile(r"^\s*=\s*([A-Za-z_][\w:.]*)\s*\(")
REJECT = re.compile(r"^Scheduler _(\w+?)_ \*\*\*rejected\*\*\* because : ?(.*)$")
_ACCEPT = re.compile(r"^\*\*\*Accepted\*\*\* as: (\w+)")

#: nvFuser's printed dtype -> bytes per element
DTYPE_BYTES = {"float": 4, "double": 8, "__half": 2, "__bfloat": 2, "int64_t": 8, "int": 4, "int32_t": 4,
               "bool": 1, "__e4m3": 1, "__e5m2": 1, "__e8m0": 1, "std::complex<float>": 8,
               "std::complex<double>": 16}


@dataclass
class NvTensor:
    """A tensor as nvFuser printed it: its name (``T12``), memory type letter and dtype."""

    name: str
    memory: str
    dtype: str

    @property
    def itemsize(self) -> int:
        return DTYPE_BYTES.get(self.dtype, 0)


def tensors_in(text: str) -> list[NvTensor]:
    """Every tensor named in ``text``, first mention of each, in order."""
    seen, out = set(), []
    for m in _TENSOR.finditer(text):
        if m.group(1) not in seen:
            seen.add(m.group(1))
            out.append(NvTensor(m.group(1), m.group(2), m.group(3)))
    return out


@dataclass
class NvExpr:
    """One expr of a group: its expr name (number), op as printed, output tensor names, raw text."""

    name: int
    op: str
    outputs: list[str]
    text: str


@dataclass
class NvGroup:
    """One segment as nvFuser printed it (position = topological order of the dump)."""

    group_id: int
    scheduler: str
    inputs: list[NvTensor] = field(default_factory=list)
    outputs: list[NvTensor] = field(default_factory=list)
    exprs: list[NvExpr] = field(default_factory=list)


@dataclass
class NvEdge:
    src: int  # positions in the groups list
    dst: int
    tensor: NvTensor


@dataclass
class NvSegmentation:
    groups: list[NvGroup]
    edges: list[NvEdge]
    raw: str


def _section(lines: list[str], start: str, stop: str) -> list[str]:
    i = next(i for i, line in enumerate(lines) if line.strip() == start)
    j = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == stop)
    return lines[i + 1 : j]


def parse_segmented_fusion(text: str) -> NvSegmentation | None:
    """The last segmented-fusion dump in ``text`` (None when there is none: an unsegmented kernel's IR)."""
    start = text.rfind("Segmented_Fusion{")
    if start < 0:
        return None
    end = text.find("} //Segmented_Fusion", start)
    body = text[start : end if end >= 0 else len(text)]
    lines = body.splitlines()
    summary = [line.strip() for line in _section(lines, "groups:", "edges:") if line.strip()]
    edge_lines = [line.strip() for line in _section(lines, "edges:", "group details:") if line.strip()]
    details = body[body.index("group details:") :]
    groups = [_parse_group(block) for block in re.split(r"(?m)^g\{", details)[1:]]
    if len(groups) != len(summary):
        raise ValueError(f"segmented fusion dump lists {len(summary)} groups but details {len(groups)}")
    by_exprs = {_summary_key(s): i for i, s in enumerate(summary)}
    edges = []
    for line in edge_lines:
        m = re.match(r"e\{ (.+?\}(?: \(merged\))?) -> (.+?\}(?: \(merged\))?)\((.*)\) \}$", line)
        if m is None:
            continue
        (tensor,) = tensors_in(m.group(3))[:1] or [NvTensor(m.group(3), "", "")]
        edges.append(NvEdge(by_exprs[_summary_key(m.group(1))], by_exprs[_summary_key(m.group(2))], tensor))
    return NvSegmentation(groups, edges, text[start : end + len("} //Segmented_Fusion") if end >= 0 else len(text)])


def _summary_key(group: str) -> str:
    return group.replace(" (merged)", "").strip()


def _parse_group(block: str) -> NvGroup:
    lines = block.splitlines()
    head = lines[0]
    sched = head[head.index("(") + 1 : head.index(")")] if head.startswith("(") else "none"
    group_id = int(next(line.split(":")[1] for line in lines if line.startswith("group id:")))
    group = NvGroup(group_id, sched)
    mode, expr_lines = None, []
    for line in lines[1:]:
        if line.startswith("inputs:"):
            mode = "in"
        elif line.startswith("outputs:"):
            mode = "out"
        elif mode in ("in", "out") and line.startswith("  "):
            found = tensors_in(line)
            (group.inputs if mode == "in" else group.outputs).extend(found)
        elif mode in ("in", "out") and not line.strip():
            mode = "exprs"
        elif mode == "exprs":
            m = _EXPR_NAME.match(line)
            if m:
                text = "\n".join(expr_lines).strip("\n")
                op = next((o.group(1) for o in map(_OP_NAME.match, expr_lines) if o), "?")
                outs = [o.group(1) for o in map(_OUT_AT_COL0.match, expr_lines) if o]
                group.exprs.append(NvExpr(int(m.group(1)), op, outs, text))
                expr_lines = []
            elif line.strip() != "}":
                expr_lines.append(line)
    return group


@dataclass
class Attempt:
    """One scheduling attempt of the segmenter log: the whole fusion (``kind="unsegmented"``) or a merge of
    candidate groups (``"merge"``); which tensors it covered, who refused and why, who accepted."""

    kind: str
    fusion_text: str = ""
    rejected: list[tuple[str, str]] = field(default_factory=list)
    accepted: str | None = None
    raw: str = ""

    @property
    def outputs(self) -> list[str]:
        """Tensors computed inside the candidate (expr outputs, printed at column 0)."""
        return [m.group(1) for m in map(_OUT_AT_COL0.match, self.fusion_text.splitlines()) if m]

    @property
    def has_segment_set(self) -> bool:
        return "SegmenterSet" in self.fusion_text

    def why(self) -> str:
        """One line: accepted by X, or each scheduler's refusal."""
        if self.accepted:
            return f"accepted as {self.accepted}"
        if self.rejected:
            return "; ".join(f"{s}: {r}" for s, r in self.rejected)
        if self.has_segment_set:
            return "a segment_set lies inside the candidate (nvFuser never merges across one)"
        return "no scheduler accepted it (nvFuser logged no reason)"


def parse_segmenter_log(text: str) -> list[Attempt]:
    """Every attempt in a ``segmenter_logging`` dump, in order (the raw lines of each kept)."""
    attempts: list[Attempt] = []
    cur: Attempt | None = None
    raw: list[str] = []
    in_fusion = False

    def close():
        if cur is not None:
            cur.raw = "\n".join(raw).strip("\n")
            attempts.append(cur)

    for line in text.splitlines():
        if "***Runtime***: Try to schedule fusion un-segmented" in line or "**Segmenter** Considering fusion:" in line:
            close()
            cur, raw = Attempt("unsegmented" if "***Runtime***" in line else "merge"), [line]
            in_fusion = cur.kind == "merge"
            continue
        if "***Runtime***" in line:  # "Try to schedule fusion segmented" / "Has segment hints"
            close()
            cur, raw, in_fusion = None, [], False
            continue
        if cur is None:
            continue
        raw.append(line)
        if m := REJECT.match(line):
            in_fusion = False
            cur.rejected.append((m.group(1), m.group(2).strip()))
        elif m := _ACCEPT.match(line):
            in_fusion = False
            cur.accepted = m.group(1)
        elif in_fusion:
            cur.fusion_text += line + "\n"
        elif cur.rejected and line.strip():  # a reason printed over several lines
            s, r = cur.rejected[-1]
            cur.rejected[-1] = (s, f"{r} {line.strip()}".strip())
    close()
    return attempts
