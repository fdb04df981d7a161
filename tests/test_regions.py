"""``segkit regions``: fusion regions and the cuts between them in Thunder's execution traces.

The traces are Thunder's own: made here on CPU, where Thunder's torch.compile executor makes ``TorchCompileN``
regions and segkit_ex's norm symbol cuts them; and a tiny litgpt Llama's, saved by ``save_traces`` (committed
under tests/data/thunder_traces). Expected bytes come from the tensors' shapes, computed in the test.
"""

from __future__ import annotations

import json

import pytest
import thunder
import torch
import torch.nn.functional as F

import thunder_exec
from segkit.regions import TraceFormatError, analyze, cost_model, parse_trace, parse_type
from segkit.regions.measure import CallTiming, call_timings
from segkit.regions.parse import call_key
from segkit.trace import capture
from segkit_cli.main import main
from tests.conftest import DATA, H100_STEP
from thunder_exec.trace_capture import CallRanges, regions, save_traces

LLAMA = [DATA / "thunder_traces" / f"litgpt_llama_tiny_cpu.{k}.py" for k in ("fwd", "bwd")]
HIDDEN = 64
X_SHAPE = (2, 8, HIDDEN)
# a cost model with values no default has, so a gain computed from the wrong parameter shows
MODEL = cost_model("test gpu", bandwidth_tbs=0.001, launch_us=3.0, host_us=7.0)


def _norm_matmul(x, r, w, wl):
    h = x + r
    y = F.rms_norm(h, (HIDDEN,), w)
    return torch.relu(y @ wl) + h


@pytest.fixture(scope="module")
def jitted():
    """A residual add, an RMSNorm and a matmul jitted with segkit_ex before Thunder's torch.compile executor, and
    its inputs. The traces are made with the call Thunder's jit makes first (get_computation_and_inputs), without
    running them: running would cost Inductor's first compile (~10 s on CPU), which the traces do not depend on."""
    from thunder.executors.torch_compile import torch_compile_ex

    torch.manual_seed(0)
    args = (torch.randn(X_SHAPE, requires_grad=True), torch.randn(X_SHAPE), torch.rand(HIDDEN, requires_grad=True),
            torch.randn(HIDDEN, HIDDEN, requires_grad=True))
    jf = thunder.jit(_norm_matmul, executors=[thunder_exec.segkit_ex, torch_compile_ex,
                                              *thunder.get_default_executors()])
    thunder.compile_data(jf)._get_computation_and_inputs(*args)
    return jf, args


def test_cpu_trace_names_the_norm_cut_its_tensors_and_bytes(jitted):
    jf, (x, r, _, _) = jitted
    report = regions(jf, model=MODEL, step_ms=2.0)
    fwd, bwd = report.traces
    assert [len(fwd.regions), len(bwd.regions)] == [2, 2]  # the norm splits each of forward and backward in two
    assert all(reg.executor == "torch.compile" for t in report.traces for reg in t.regions)
    (cut,) = fwd.cuts
    assert (cut.symbol, cut.kind, cut.before, cut.after) == ("segkit_rms_norm_fwd", "fusible", fwd.regions[0].name,
                                                             fwd.regions[1].name)
    h_bytes = (x + r).numel() * 4  # f32
    assert [(c.into_cut, c.tensor.nbytes) for c in cut.crossings] == [(True, h_bytes), (False, h_bytes)]
    # h and y are both saved for the backward: fusing saves their reads only
    assert cut.saved_bytes == 2 * h_bytes
    (bcut,) = bwd.cuts
    assert bcut.symbol == "segkit_rms_norm_bwd" and [c.tensor.nbytes for c in bcut.crossings] == [h_bytes, h_bytes]
    # dy and dx live only to cross the cut: their writes go too
    assert bcut.saved_bytes == 4 * h_bytes
    assert bcut.gain_us == pytest.approx(4 * h_bytes / 1e9 * 1e6 + 3.0 + 7.0)
    assert report.fused_step_ms == pytest.approx(2.0 - (cut.gain_us + bcut.gain_us) / 1000)


def test_saved_traces_carry_every_type_and_the_cli_reads_them(jitted, tmp_path, capsys):
    jf, _ = jitted
    fwd, bwd = save_traces(jf, tmp_path / "saved", "step")
    assert main(["regions", str(fwd), str(bwd), "--gpu", "test gpu", "--bandwidth", "0.001", "--launch-us", "3",
                 "--host-us", "7", "--format", "json"]) == 0
    got = json.loads(capsys.readouterr().out)
    want = regions(jf, model=MODEL).to_dict()
    assert [len(t["cuts"]) for t in got["traces"]] == [1, 1]
    assert [c["saved_bytes"] for t in got["traces"] for c in t["cuts"]] == \
        [c["saved_bytes"] for t in want["traces"] for c in t["cuts"]]
    assert got["fusible_gain_us"] == pytest.approx(want["fusible_gain_us"]) and not got["notes"]
    # the plain printed backward trace has no type for the norm backward's dx (a call with several outputs)
    plain = analyze([("bwd", str(thunder.last_backward_traces(jf)[-1]))], MODEL)
    assert plain.cuts[0].unknown and "without a printed type" in plain.notes[0]


def test_committed_llama_traces_text_json_html(tmp_path, capsys):
    assert main(["regions", *map(str, LLAMA), "--gpu", "h200", "--step-ms", "10", "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    cuts = [c for t in report["traces"] for c in t["cuts"]]
    # one layer: norm_1, norm_2 and ln_f; RoPE on q and k; forward and backward of each
    assert sorted(c["symbol"] for c in cuts) == sorted(["segkit_rms_norm_fwd"] * 3 + ["segkit_rms_norm_bwd"] * 3
                                                       + ["segkit_rope_fwd"] * 2 + ["segkit_rope_bwd"] * 2)
    assert all(c["kind"] == "fusible" and c["gain_us"] > 0 for c in cuts)
    norm_bytes = 2 * 16 * 64 * 4  # batch 2, T 16, n_embd 64, f32
    norm_fwd = [c for c in cuts if c["symbol"] == "segkit_rms_norm_fwd"]
    assert all(x["tensor"]["nbytes"] == norm_bytes for c in norm_fwd for x in c["crossings"])
    assert report["fused_step_ms"] == pytest.approx(10 - sum(c["gain_us"] for c in cuts) / 1000)

    out = tmp_path / "regions.html"
    assert main(["regions", *map(str, LLAMA), "--gpu", "h100", "--html", str(out)]) == 0
    text = capsys.readouterr().out
    assert "segkit_rope_bwd" in text and "cost model: h100, 3.00 TB/s" in text
    page = out.read_text()
    assert page.count("<svg") == 2 and page.count("segkit_rms_norm_fwd") >= 3 and "TorchCompile12" in page


# The shape of a GPU trace (nvFusion regions, a torch view, a cuBLAS linear), as Thunder prints one in
# https://github.com/Lightning-AI/lightning-thunder/issues/1646, with a segkit symbol cutting it.
GPU_TRACE = '''\
# Constructed by Delete Last Used (took 0 milliseconds)
import torch
from thunder.executors.torchex import no_autocast

@torch.no_grad()
@no_autocast
def computation(x, t_norm_weight, t_qkv_weight):
  # x: "cuda:0 bf16[1, 4096, 4096]"
  # t_norm_weight: "cuda:0 bf16[4096]"
  # t_qkv_weight: "cuda:0 bf16[6144, 4096]"
  [t0] = nvFusion0(x)
    # t0 = prims.mul(x, 2.0)  # t0: "cuda:0 bf16[1, 4096, 4096]"
  t1 = torch.reshape(t0, (4096, 4096))  # t1: "cuda:0 bf16[4096, 4096]"
    # t1 = ltorch.reshape(t0, (4096, 4096))  # t1: "cuda:0 bf16[4096, 4096]"
  # /models/llama.py:12: \t    y = self.norm(x)
  (t2, t3) = segkit_rms_norm_fwd(t1, t_norm_weight, 1e-05, False, 'outputs', False)
  t4 = torch.nn.functional.linear(t2, t_qkv_weight, None)  # t4: "cuda:0 bf16[4096, 6144]"
  [t5] = nvFusion1(t4, t0)
    # t5 = prims.add(t4, t0)  # t5: "cuda:0 bf16[4096, 6144]"
  return {'output': (t5,), 'flat_args': [x, t_norm_weight, t_qkv_weight], 'flat_output': (t5,)}, ((t3,), ())
# t2: "cuda:0 bf16[4096, 4096]"
# t3: "cuda:0 f32[4096]"
'''


def test_gpu_trace_nvfusion_views_and_a_linear():
    report = analyze([("fwd", GPU_TRACE)], cost_model("NVIDIA H200", launch_us=0, host_us=0), step_ms=10.0)
    (t,) = report.traces
    assert [(r.name, r.executor) for r in t.regions] == [("nvFusion0", "nvFuser"), ("nvFusion1", "nvFuser")]
    norm, linear = t.cuts
    act = 4096 * 4096 * 2
    # t0 reaches the norm through a view and is also read by nvFusion1: only the norm's read is saved
    assert (norm.symbol, norm.saved_bytes, norm.source) == ("segkit_rms_norm_fwd", act, "llama.py:12: y = self.norm(x)")
    assert norm.gain_us == pytest.approx(act / 4.25e12 * 1e6)
    assert linear.kind == "not fusible" and "matmul" in linear.reason and linear.gain_us is None
    assert linear.saved_bytes == 2 * 4096 * 6144 * 2  # written by the linear, read by nvFusion1, nothing else
    assert report.fused_step_ms == pytest.approx(10.0 - norm.gain_us / 1000)


def test_type_strings():
    assert parse_type("cuda:0 bf16[1, 4096, 4096]").nbytes == 2 * 4096 * 4096
    assert parse_type("cuda:0 f8_e4m3fn[16, 32]").nbytes == 16 * 32
    assert parse_type("cuda:0 f4_e2m1fn_x2[16, 32]").nbytes == 16 * 32 // 2
    assert parse_type("cpu b8[3]").nbytes == 3 and parse_type("cpu f32[]").nbytes == 4
    assert parse_type("Collection") is None


@pytest.mark.parametrize("content, message", [
    ("def f(:\n", "bad.py:1: not Python source"),
    ("x = 1\n", "bad.py: no function definition: not a Thunder execution trace"),
    ("def computation(x):\n  t0 = torch.relu(x)\n  return t0\n", "bad.py: no fusion region"),
    (bytes(range(256)), "bad.py: not a text file"),
])
def test_bad_trace_is_one_line_naming_the_file(tmp_path, capsys, content, message):
    bad = tmp_path / "bad.py"
    bad.write_bytes(content if isinstance(content, bytes) else content.encode())
    assert main(["regions", str(bad)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err and "Traceback" not in err


def test_unknown_gpu_needs_a_bandwidth(capsys):
    assert main(["regions", str(LLAMA[0]), "--gpu", "a100"]) == 2
    assert "--gpu 'a100': no copy bandwidth known" in capsys.readouterr().err
    with pytest.raises(TraceFormatError, match="fwd:1: not Python"):
        analyze([("fwd", "[[[")], MODEL)


def test_call_ranges_name_each_call_as_the_saved_trace_prints_it(tmp_path, capsys):
    """A real torch.profiler run of a function jitted with CallRanges: every call of the saved forward and backward
    traces has its range, found by the line the trace prints; the command line reads the profile."""
    torch.manual_seed(0)
    args = (torch.randn(X_SHAPE, requires_grad=True), torch.randn(X_SHAPE), torch.rand(HIDDEN, requires_grad=True),
            torch.randn(HIDDEN, HIDDEN, requires_grad=True))
    jf = thunder.jit(_norm_matmul, executors=thunder_exec.executors(), transforms=[CallRanges()])
    jf(*args).sum().backward()
    with capture(str(tmp_path / "profile.json")) as cap:
        for _ in range(2):
            jf(*args).sum().backward()
    timings = call_timings(cap.trace)
    calls = [c for p in save_traces(jf, tmp_path) for c in parse_trace(p.read_text(), str(p)).calls if c.outputs]
    assert {"segkit_rms_norm_fwd", "segkit_rms_norm_bwd"} <= {c.callee for c in calls}
    assert all(timings[c.text].instances == 2 and timings[c.text].host_us > 0 for c in calls)
    # a profile of another program measures none of the Llama's cuts, and says so
    assert main(["regions", *map(str, LLAMA), "--profile", str(tmp_path / "profile.json")]) == 0
    out = capsys.readouterr().out
    assert "profile: 0 of 10 cut(s) measured" in out and "measured (else 1) kernel(s)" in out


def test_profile_timings_replace_the_defaults_unless_given(jitted):
    jf, _ = jitted
    fwd = thunder.last_traces(jf)[-1]
    (line,) = [b.python(indent=0)[0] for b in fwd.bound_symbols if b.sym.name == "segkit_rms_norm_fwd"]
    timings = {call_key(line): CallTiming(instances=5, kernels=3, kernel_us=50.0, host_us=11.0)}
    measured = regions(jf, model=cost_model("h100")).traces[0].cuts[0]
    for model, kernels, host in [(cost_model("h100"), 3, 11.0), (cost_model("h100", host_us=0.0), 3, 0.0)]:
        report = analyze([("fwd", str(fwd))], model, timings=timings)
        (cut,) = report.traces[0].cuts
        assert (cut.kernels, cut.host_us, cut.measured) == (kernels, host, timings[call_key(line)])
        assert cut.gain_us == pytest.approx(cut.saved_bytes / 3.0e12 * 1e6 + kernels * 4.0 + host)
        assert report.notes[-1] == "profile: 1 of 1 cut(s) measured"
    # without a profile: one kernel and 20 us per call
    assert (measured.kernels, measured.host_us, measured.measured) == (1, 20.0, None)


def test_gpu_step_trace_attention_is_not_a_fusible_cut():
    """The Llama-3-8B step's traces from an H100 (segkit_fuse="opaque", saved by the step table): segkit's cuDNN
    attention symbols are cuts nvFuser cannot absorb, so they count as not fusible and gain nothing; segkit's norm
    and RoPE symbols are the fusible cuts; every nvFusion call of the files is a region."""
    paths = [H100_STEP / "traces" / "llama3-8b-x1" / "segkit-opaque" / f"trace.{k}.py" for k in ("fwd", "bwd")]
    texts = [p.read_text() for p in paths]
    report = analyze(list(zip(("fwd", "bwd"), texts)), cost_model("h100"), step_ms=10.29)
    cuts = [c for t in report.traces for c in t.cuts]
    kind = {}
    for c in cuts:
        kind.setdefault(c.symbol.rsplit(".", 1)[-1], set()).add(c.kind)
    assert kind["segkit_cudnn_sdpa_fwd"] == kind["segkit_cudnn_sdpa_bwd"] == {"not fusible"}
    assert all(c.gain_us is None for c in cuts if "sdpa" in c.symbol)
    for name in ("segkit_rms_norm_fwd", "segkit_rms_norm_bwd", "segkit_rope_fwd", "segkit_rope_bwd"):
        assert kind[name] == {"fusible"}, (name, kind.get(name))
    calls = [sum(1 for line in text.splitlines() if line.lstrip().startswith(("(", "t", "[")) and "= nvFusion" in line)
             for text in texts]
    assert [len(t.regions) for t in report.traces] == calls and min(calls) > 0
    assert report.fused_step_ms == pytest.approx(10.29 - sum(c.gain_us for c in cuts if c.kind == "fusible") / 1e3)
