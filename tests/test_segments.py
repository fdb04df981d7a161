"""segkit segments / report on CPU: the picture checked against the IR, the HTML page from a repro script
(and rendered in a real headless browser when one is installed), nvFuser's dump formats parsed, layering."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

import segkit
from segkit.alias import meta_ops
from segkit_cli.main import main
from segkit.graph import to_dot
from segkit.nvfuser.dump import parse_segmented_fusion, parse_segmenter_log
from segkit.segments import cut_pieces, meta_chains, plan_picture
from tests.conftest import DATA

ROPE = DATA / "thunder" / "rope_mha_fwd_nvFusion0.py"


def _clusters(dot: str) -> dict[str, list[str]]:
    """cluster label -> op node ids, read back from the DOT text."""
    out = {}
    for m in re.finditer(r'subgraph (cluster_\d+) \{(.*?)\n  \}', dot, re.S):
        out[m.group(1)] = re.findall(r'^\s+"(op\d+)" \[', m.group(2), re.M)
    return out


@pytest.mark.parametrize("policy", ["outputs", "inputs+outputs"])
def test_dot_holds_every_op_once_and_draws_every_cut(policy):
    fd = segkit.load_repro(ROPE).fd
    fusion = fd.fusion
    plan = segkit.bookend(fd, policy)
    assert plan.cuts, "the RoPE fixture has meta chains at its boundary: the plan must cut"
    dot = to_dot(plan_picture(fd, plan.cuts))
    clusters = _clusters(dot)
    placed = [n for ops in clusters.values() for n in ops]
    assert sorted(placed) == sorted(f"op{i}" for i in range(len(fusion.ops)))  # each op in exactly one cluster
    for i, op in enumerate(fusion.ops):
        kind = re.search(rf'"op{i}" \[.*kind=(\w+)', dot).group(1)
        assert kind == ("meta" if op.name in meta_ops() else "compute"), op
    node = {id(op): f"op{i}" for i, op in enumerate(fusion.ops)}
    cut_edges = set(re.findall(r'"(\w+)" -> "(\w+)" \[label="segment_set', dot))
    want = set()
    for c in plan.cuts:
        src = node[id(c.tensor.definition)] if c.tensor.definition is not None else f"in_{c.tensor.name}"
        want |= {(src, node[id(u)]) for u in c.users}
        if c.tensor in fusion.outputs:
            want.add((src, f"out_{c.tensor.name}"))
    assert cut_edges == want
    # a cut separates: the two ends of every cut edge to an op lie in different clusters
    cluster_of = {n: k for k, ops in clusters.items() for n in ops}
    for a, b in want:
        if a in cluster_of and b in cluster_of:
            assert cluster_of[a] != cluster_of[b], (a, b)


def test_regions_without_cuts_are_the_connected_pieces():
    fd = segkit.load_repro(ROPE).fd
    assert len(cut_pieces(fd.fusion)) == 1
    chains = meta_chains(fd.fusion)
    assert {op.name for c in chains for op in c} <= meta_ops()
    assert sum(len(c) for c in chains) == sum(op.name in meta_ops() for op in fd.fusion.ops)


def test_segments_without_gpu_prints_what_is_known_and_draws(tmp_path, capsys):
    if segkit.nvfuser_available():
        pytest.skip("this machine has a GPU: the GPU path is tested in tests/gpu/test_segments_gpu.py")
    assert main(["segments", str(ROPE), "--plot", str(tmp_path / "pic")]) == 0
    out = capsys.readouterr().out
    assert "no CUDA device" in out and "meta-op (view) chains" in out and "bookend plan (inputs+outputs" in out
    assert (tmp_path / "pic.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "pic.svg").read_text().lstrip().startswith("<?xml")
    assert "subgraph cluster_0" in (tmp_path / "pic.dot").read_text()


def test_bookend_plot_draws_before_and_after(tmp_path, capsys):
    assert main(["bookend", str(ROPE), "--policy", "inputs+outputs", "--plot", str(tmp_path / "plan")]) == 0
    dot = (tmp_path / "plan.dot").read_text()
    assert dot.count("digraph fusion") == 2 and "before: inputs+outputs plan" in dot and "after: segment_set" in dot
    assert (tmp_path / "plan.png").stat().st_size > 10_000


def _browser() -> str | None:
    return next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


def test_report_is_one_self_contained_page(tmp_path):
    if segkit.nvfuser_available():
        pytest.skip("GPU machine: this test checks the CPU report; the GPU one is made on the GPU host")
    page = tmp_path / "report.html"
    assert main(["report", str(ROPE), "-o", str(page)]) == 0
    text = page.read_text()
    assert 'src="data:image/png;base64,' in text
    assert not re.search(r'(src|href)="(https?:)?//', text), "the page must not load anything from the network"
    assert "not measured" in text and "Bookend variants" in text and "inputs+outputs / host" in text
    browser = _browser()
    if browser is None:
        pytest.skip("no headless browser (apt-get install -y chromium) to render the page")
    shot = tmp_path / "report.png"
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
                           "--window-size=1400,2200", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert shot.exists(), proc.stderr[-2000:]
    from PIL import Image

    img = Image.open(shot).convert("L")
    colors = img.getcolors(maxcolors=1 << 16) or []
    assert len(colors) > 20, "the screenshot is blank: the page did not render"


# nvFuser's print formats, written from csrc/fusion_segmenter.cpp (operator<< of SegmentedFusion,
# detailGroupPrint) and csrc/scheduler/debug_utils.h (canScheduleRejectReason) of nvFuser 0.2.36.
SEGMENTED = """\
Segmented_Fusion Dump: -- fusion segments:
Segmented_Fusion{ 
groups: 
  pointwise{1, 2}
  inner_persistent{3, 4}
edges: 
  e{ pointwise{1, 2} -> inner_persistent{3, 4}(T2_g_float[iS4{i0}, iS5{i2}]) }

group details:
g{(pointwise)
group id: 1
inputs:
  T0_g___bfloat[iS0{i0}, iS1{i2}] __bfloat
outputs:
  T2_g_float[iS4{i0}, iS5{i2}] float


T1_l_float[iS2{i0}, iS3{i2}]
   = __bfloat2float(T0_g___bfloat[iS0{i0}, iS1{i2}]);
(1)
T2_g_float[iS4{i0}, iS5{i2}]
   = T1_l_float[iS2{i0}, iS3{i2}]
   * double(2);
(2)
}

g{(inner_persistent)
group id: 0
inputs:
  T2_g_float[iS4{i0}, iS5{i2}] float
outputs:
  T4_g_float[iS8{i0}] float


T3_l_float[iS6{i0}, rS7{i2}]
   = reduction( T2_g_float[iS4{i0}, iS5{i2}], op = add, initial value = float(0), allreduce = false );
(3)
T4_g_float[iS8{i0}]
   = SegmenterSet( T3_l_float[iS6{i0}, rS7{i2}] )
(4)
}

} //Segmented_Fusion
"""

LOG = """\
***Runtime***: Try to schedule fusion un-segmented:

Scheduler _no_op_ ***rejected*** because : output has a non-zero size
Scheduler _reduction_ ***rejected*** because : need persistent buffers that reduction scheduler
doesn't handle
***Runtime***: Try to schedule fusion segmented:


**Segmenter** Considering fusion:
T1_l_float[iS2{i0}, iS3{i2}]
   = __bfloat2float(T0_g___bfloat[iS0{i0}, iS1{i2}]);
T3_l_float[iS6{i0}, rS7{i2}]
   = reduction( T2_g_float[iS4{i0}, iS5{i2}] );
Scheduler _pointwise_ ***rejected*** because : cannot find reference tensor
Scheduler _inner_persistent_ ***rejected*** because : mixed reduction and pointwise outputs

**Segmenter** Considering fusion:
T1_l_float[iS2{i0}, iS3{i2}]
   = __bfloat2float(T0_g___bfloat[iS0{i0}, iS1{i2}]);
***Accepted*** as: pointwise
"""


def test_segmented_fusion_dump_parses_into_groups_edges_and_exprs():
    seg = parse_segmented_fusion("kernel ir before\n" + SEGMENTED + "%kernel {\n}")
    assert [(g.group_id, g.scheduler) for g in seg.groups] == [(1, "pointwise"), (0, "inner_persistent")]
    assert [[e.outputs for e in g.exprs] for g in seg.groups] == [[["T1"], ["T2"]], [["T3"], ["T4"]]]
    assert [e.op for e in seg.groups[1].exprs] == ["reduction", "SegmenterSet"]
    assert [t.name for t in seg.groups[0].inputs] == ["T0"] and seg.groups[0].inputs[0].itemsize == 2
    assert [(e.src, e.dst, e.tensor.name, e.tensor.itemsize) for e in seg.edges] == [(0, 1, "T2", 4)]
    assert parse_segmented_fusion("%kernel { T0 }") is None


def test_segmenter_log_parses_attempts_with_reasons():
    attempts = parse_segmenter_log(LOG)
    assert [a.kind for a in attempts] == ["unsegmented", "merge", "merge"]
    assert attempts[0].rejected == [("no_op", "output has a non-zero size"),
                                    ("reduction", "need persistent buffers that reduction scheduler doesn't handle")]
    assert attempts[1].outputs == ["T1", "T3"] and attempts[1].accepted is None
    assert "inner_persistent: mixed reduction" in attempts[1].why()
    assert attempts[2].accepted == "pointwise" and attempts[2].why() == "accepted as pointwise"
    assert "Considering fusion" in attempts[1].raw


def test_segment_repros_reproduce_each_piece(tmp_path):
    """Per-segment repros cut along the bookend regions (the segmentation segkit predicts): each emitted
    script, loaded back, computes from the piece's inputs what the whole fusion computed there."""
    from segkit.segments import Segment, SegmentsReport, segment_repros

    repro = segkit.load_repro(ROPE)
    fd, inputs = repro.fd, repro.make_inputs("cpu")
    fusion = fd.fusion
    index = {id(op): i for i, op in enumerate(fusion.ops)}
    pieces = cut_pieces(fusion, segkit.bookend(fd, "inputs+outputs").cuts)
    segs = [Segment(k, k, "region", sorted(index[id(op)] for op in ops)) for k, ops in enumerate(pieces)]
    written = segment_repros(SegmentsReport(fd, segs, [], 0, 0.0, "cpu"), inputs, tmp_path)
    assert len(written) == sum(any(o.is_tensor for i in s.ops for o in fusion.ops[i].outputs) for s in segs) > 1
    _each_repro_computes_what_the_fusion_did(fusion, inputs, written)


def _each_repro_computes_what_the_fusion_did(fusion, inputs, written) -> None:
    """Each emitted script, loaded back, computes from its piece's inputs what the whole fusion computed there."""
    from segkit.compare import compare
    from segkit.interp import Interpreter

    whole = Interpreter(fusion, inputs)
    whole.run()
    for r in written:
        loaded = segkit.load_repro(r.path)
        got = segkit.run_reference(loaded.fd, r.inputs)
        want = [whole.value_of(fusion.value(v.name)) for v in r.fd.fusion.outputs]
        assert all(d.ok for d in compare(want, got)), r.path.name


def test_segment_repros_take_what_each_piece_receives_expanded_or_materialized(tmp_path):
    """One op per segment on Thunder's Llama-3-8B GQA region (expands of the k/v groups and of cos/sin, casts
    of them): a piece's input is declared by the tensor it receives, so an expand its producer materialized is a
    plain dim. The explorer used to stop half-way, refusing its own repro ("dim 0 is declared expanded")."""
    from segkit.segments import Segment, SegmentsReport, segment_repros

    repro = segkit.load_repro(DATA / "thunder" / "rope_llama3_8b_fwd_nvFusion0.py")
    fd, inputs = repro.fd, repro.make_inputs("cpu")
    fusion = fd.fusion
    index = {id(op): i for i, op in enumerate(fusion.ops)}
    group = list(range(len(fusion.ops)))  # one op per piece, but a cat(manual_padding) keeps its pads
    for i, op in enumerate(fusion.ops):
        if op.name == "cat":
            for v in op.inputs:
                group[index[id(v.definition)]] = i
    pieces = sorted({g: sorted(k for k in range(len(group)) if group[k] == g) for g in group}.values())
    segs = [Segment(k, k, "op", ops) for k, ops in enumerate(pieces)]
    written = segment_repros(SegmentsReport(fd, segs, [], 0, 0.0, "cpu"), inputs, tmp_path)
    assert len(written) == sum(any(fusion.ops[i].outputs[0].is_tensor for i in ops) for ops in pieces) > 30
    assert any(any(v.expanded) for r in written for v in r.fd.fusion.inputs), "no piece receives a stride-0 input"
    _each_repro_computes_what_the_fusion_did(fusion, inputs, written)
