"""The step table's machinery (benchmarks/model_step.py) on CPU: a tiny litgpt Llama (n_embd 64, 2 layers) under
eager and Thunder + segkit_ex on the reference interpreter (stock Thunder under the ``models`` marker), in fp32 so
that the grads can be held to eager closely; the JSON document, its merge, and the rows of a variant that fails or
a case past its limit."""

from __future__ import annotations

import importlib.metadata
import json

import pytest
import torch

from benchmarks import model_table
from benchmarks.model_cases import CASES, Case, select, shard
from benchmarks.model_step import VARIANTS, Options, main, run_case

TINY = Case("tiny-llama", "litgpt", "Llama-3-8B", 32,
            dict(n_layer=2, n_embd=64, n_head=4, n_query_groups=2, head_size=16, intermediate_size=96))
TINY_HF = Case("tiny-hf-llama", "hf-llama", "tiny", 16,
               dict(num_hidden_layers=2, hidden_size=64, intermediate_size=96, num_attention_heads=4,
                    num_key_value_heads=2, vocab_size=96))
RUN = ["eager", "segkit-opaque", "thunder-graphs"]  # stock Thunder's row: test_stock_thunder_row (models marker)


@pytest.fixture(scope="module")
def rows():
    variants = [v for v in VARIANTS if v.name in RUN]
    return run_case(TINY, variants, "cpu", Options(iters=1, warmup=0), dtype=torch.float32)


def test_rows_measure_each_variant(rows):
    """One row per variant in order; the ones that ran have a time and grads at fp32 distance from eager; segkit_ex
    claims both norms of each block, the final norm and q and k of each attention, forward and backward; columns
    that need a GPU stay empty."""
    by = {r.variant: r for r in rows}
    assert [r.variant for r in rows] == RUN
    for name in ("eager", "segkit-opaque"):
        r = by[name]
        assert r.ms > 0 and r.first_step_s > 0 and r.grad_err < 1e-4, r
        assert (r.host_ms, r.peak_gib, r.kernels) == (None, None, None), r
    assert by["eager"].grad_err == 0.0
    assert by["segkit-opaque"].claims == {"norm_fw": 5, "norm_bw": 5, "rope_fw": 4, "rope_bw": 4}
    assert by["segkit-opaque"].regions == (0, 0)  # no nvFuser on CPU
    assert by["segkit-opaque"].note == ""  # no segkit warning (fallback, unchecked or wrong result)
    for name in ("eager", "segkit-opaque"):  # a 2-block model at T=32 saves activations, well under a GiB
        assert 0 < by[name].saved_gib < 0.01, by[name]


class _MatmulRelu(torch.nn.Module):
    def __init__(self, checkpointed: bool = False) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(8, 24))
        self.checkpointed = checkpointed

    def body(self, x):
        return (x @ self.w).relu()

    def forward(self, x):
        y = torch.utils.checkpoint.checkpoint(self.body, x, use_reentrant=False) if self.checkpointed else self.body(x)
        return y.sum()


def test_saved_for_backward_counts_what_autograd_keeps_less_what_lives_anyway():
    """x @ w saves x for w's grad (an input: it lives anyway; w would be saved only for a grad of x), relu saves
    its 5 x 24 fp32 output: 480 bytes; recomputed in the backward (torch.utils.checkpoint), nothing is saved past
    the inputs."""
    from benchmarks.model_measure import saved_for_backward

    x = torch.randn(5, 8)
    plain, ckpt = _MatmulRelu(), _MatmulRelu(checkpointed=True)
    assert saved_for_backward(lambda: plain(x), [*plain.parameters(), x]) == 5 * 24 * 4
    assert plain.w.grad is not None  # the backward ran (and freed what was saved)
    assert saved_for_backward(lambda: plain(x), []) == 5 * 24 * 4 + 5 * 8 * 4  # x counted when not left out
    assert saved_for_backward(lambda: ckpt(x), [*ckpt.parameters(), x]) == 0


@pytest.mark.models  # another Thunder compile of the tiny model: ~10 s on the 2-core machine
def test_stock_thunder_row():
    (row,) = run_case(TINY, [v for v in VARIANTS if v.name == "thunder"], "cpu", Options(iters=1, warmup=0),
                      dtype=torch.float32)
    assert row.ms > 0 and row.grad_err < 1e-4 and row.note == "", row
    assert row.claims == {"norm_fw": 0, "norm_bw": 0, "rope_fw": 0, "rope_bw": 0} and row.regions == (0, 0)


def test_a_failing_variant_is_a_row(rows):
    graphs = rows[-1]
    assert graphs.variant == "thunder-graphs" and graphs.ms is None and graphs.grad_err is None
    assert graphs.note == "failed: ValueError: variant thunder-graphs: CUDA graphs need a CUDA device, not 'cpu'"


def test_json_machine_block_markdown_and_merge(rows, tmp_path):
    variants = [v for v in VARIANTS if v.name in RUN]
    opts = Options(iters=1, warmup=0)
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    # two runs, one per "GPU": the second run's rows listed first, as a later case of the table
    model_table.write(model_table.document(rows[1:], [TINY], variants, opts, "cpu"), None, str(second))
    model_table.write(model_table.document(rows[:1], [TINY], variants, opts, "cpu"), str(tmp_path / "a.md"),
                      str(first))
    doc = json.loads(first.read_text())
    assert {"gpu", "driver", "torch", "lightning-thunder", "nvfuser_direct", "litgpt", "transformers", "date",
            "commit"} <= set(doc["machine"])
    assert doc["machine"]["torch"] == importlib.metadata.version("torch") and doc["machine"]["gpu"] is None
    assert [r["variant"] for r in doc["rows"]] == ["eager"]
    merged = model_table.merge([second, first])
    assert sorted(r["variant"] for r in merged["rows"]) == sorted(RUN)
    assert merged["machine"] == json.loads(second.read_text())["machine"]
    table = model_table.markdown(merged)
    assert table.count("| Llama-3-8B x2 T=32 |") == len(RUN)
    segkit = next(line for line in table.splitlines() if "| segkit-opaque |" in line)
    assert "norms 5/5, RoPE 4/4" in segkit
    main(["--merge", str(first), str(second), "--json", str(tmp_path / "m.json")])
    assert len(json.loads((tmp_path / "m.json").read_text())["rows"]) == len(RUN)


def test_merge_refuses_a_file_that_is_not_a_run(tmp_path):
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps({"benchmarks": []}))
    with pytest.raises(SystemExit, match="other.json is not a model_step JSON file"):
        model_table.merge([bad])


def test_merge_reads_a_gzipped_run_and_refuses_bytes_that_are_not_one(tmp_path):
    """The lab keeps its step-table runs gzipped: ``--merge`` (and the lab's bars) reads them as they are, whatever the
    name says; a file of other bytes (a truncated .gz, binary data) is a one-line error naming it, not a
    UnicodeDecodeError."""
    import gzip

    from sweep.machine import KEY

    doc = {KEY: {"gpu": "Test GPU"}, "run": {}, "rows": [{"case": "pythia-1b-x2", "variant": "thunder", "ms": 5.0}]}
    packed = gzip.compress(json.dumps(doc).encode())
    (tmp_path / "run.json.gz").write_bytes(packed)
    assert model_table.merge([tmp_path / "run.json.gz"])["rows"] == doc["rows"]
    (tmp_path / "misnamed.json").write_bytes(packed)
    assert model_table.merge([tmp_path / "misnamed.json"])["rows"] == doc["rows"]
    (tmp_path / "binary.json").write_bytes(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(SystemExit, match="cannot read .*binary.json: not UTF-8 text"):
        model_table.merge([tmp_path / "binary.json"])
    (tmp_path / "cut.json.gz").write_bytes(packed[:20])
    with pytest.raises(SystemExit, match="cannot read .*cut.json.gz"):
        model_table.merge([tmp_path / "cut.json.gz"])


def test_case_past_its_limit_skips_its_variants():
    rows = run_case(TINY, VARIANTS[:2], "cpu", Options(iters=1, warmup=0, case_limit_s=0.0), dtype=torch.float32)
    assert [r.variant for r in rows] == ["eager", "compile"]
    assert all(r.ms is None and "past its 0 s limit" in r.note for r in rows)


def test_hf_llama_builds_and_runs_eagerly():
    (row,) = run_case(TINY_HF, VARIANTS[:1], "cpu", Options(iters=1, warmup=0), dtype=torch.float32)
    assert row.note == "" and row.ms > 0 and row.grad_err == 0.0, row
    assert row.label == "HF LlamaForCausalLM (tiny) x2 T=16"


def test_shards_cover_every_case_once():
    parts = [shard(CASES, i, 4) for i in range(4)]
    assert sorted(c.name for p in parts for c in p) == sorted(c.name for c in CASES)
    assert all(parts)


def test_bad_selections_are_one_line_errors():
    with pytest.raises(SystemExit, match="unknown case nope; known: llama3-8b-x1"):
        select(["nope"])
    with pytest.raises(SystemExit, match="--shard '4/4': I must be in 0..N-1"):
        model_table.parse_shard("4/4")
    assert main(["--variants", "fast", "--device", "cpu"]) == 1


def test_rounds_interleave_the_variants_step_by_step_and_take_the_median(monkeypatch):
    """--rounds 3: after each variant's first timing, two more rounds in which the variants alternate step by step
    (a warm-up step of each, then A B A B: each variant's compiled function kept alive); the step is the median of
    its three rounds, shown with its range, and every interleaved step is kept for the paired ratios."""
    import benchmarks.model_step as model_step

    calls = []
    real_step = model_step._step

    def recording_step(fn, built):
        calls.append(fn)
        real_step(fn, built)

    monkeypatch.setattr(model_step, "_step", recording_step)
    variants = [v for v in VARIANTS if v.name in ("eager", "segkit-opaque")]
    seen = []
    rows = run_case(TINY, variants, "cpu", Options(iters=2, warmup=0, rounds=3), dtype=torch.float32,
                    on_row=seen.append)
    assert seen[2:] == rows  # reported again, itself, after the rounds
    assert [(r.variant, r.note) for r in seen[:2]] == [(r.variant, model_step.ROUND_1_ONLY) for r in rows]
    for r in rows:
        assert len(r.ms_rounds) == 3 and r.ms == sorted(r.ms_rounds)[1], r
        assert len(r.ms_steps) == 4 and all(m > 0 for m in r.ms_steps), r  # 2 rounds x 2 passes
        assert r.host_steps == [] and r.host_ms is None  # no host time on CPU
    tail = calls[-12:]  # rounds 2 and 3: per round a warm-up step of each variant, then two passes (12 calls)
    a, b = tail[0], tail[1]
    assert a is not b and [f is a for f in tail] == [True, False, True, False, False, True,  # warm-up, A B, B A
                                                     True, False, True, False, False, True], \
        "each pass runs every variant once, one variant later than the last pass"
    doc = model_table.document(rows, [TINY], variants, Options(iters=2, warmup=0, rounds=3), "cpu")
    line = next(x for x in model_table.markdown(doc).splitlines() if "| eager |" in x)
    lo, hi = min(rows[0].ms_rounds), max(rows[0].ms_rounds)
    assert f"[{lo:.2f}-{hi:.2f}]" in line and "in each of 3 rounds" in model_table.markdown(doc)


def test_paired_ratio_follows_the_passes_not_the_medians():
    """A clock drift that slows both variants pass after pass leaves the paired ratio at the true one (1.25x, the
    row faster in every pass) where the ratio of medians of unpaired blocks could say anything; rows without the
    same passes fall back to the medians' ratio."""
    ref = [10.0 * (1 + 0.1 * i) for i in range(5)]
    row = [r / 1.25 for r in ref]
    assert model_table.paired_ratio(ref, row) == (pytest.approx(1.25), 5)
    assert model_table.paired_ratio(ref, row[:4]) is None and model_table.paired_ratio([], []) is None
    base = dict(case="c", label="c", regions=None, claims={}, host_ms=None, peak_gib=None, kernels=None,
                grad_err=None, first_step_s=None, note="", ms_rounds=[])
    rows = [dict(base, variant="compile", ms=12.0, ms_steps=ref), dict(base, variant="segkit-auto", ms=9.0,
                                                                        ms_steps=row),
            dict(base, variant="thunder", ms=10.0, ms_steps=[])]
    doc = {model_table.KEY: {}, "run": {"rounds": 3}, "rows": rows}
    md = model_table.markdown(doc)
    assert "| segkit-auto | 9.00 | 1.11x | 1.250x (5/5) |" in md, md  # Thunder ran no passes: the medians
    assert "| thunder | 10.00 | 1.00x | 1.20x |" in md, md


def test_loss_keeps_thunders_step_free_of_detach_and_its_grads_informative():
    """The cases' loss has no ``detach`` (Thunder would run it outside its regions and differentiate the detached
    branch anyway), and the grad it sends back through the final RMSNorm is signal, not rounding noise: x's grad in
    fp32 agrees with float64's to 1e-4 of its size."""
    import thunder

    from benchmarks.model_cases import build

    import copy

    built = build(TINY, "cpu", torch.float32)
    x64 = built.inputs[0].detach().double().requires_grad_(True)
    copy.deepcopy(built.model).double()(x64, *(t.double() for t in built.inputs[1:])).backward()
    jf = thunder.jit(built.model)
    jf(*built.inputs).backward()
    assert not any("detach" in str(t) for t in (thunder.last_traces(jf)[-1], thunder.last_backward_traces(jf)[-1]))
    want = x64.grad
    assert want.abs().max() > 0 and (built.inputs[0].grad.double() - want).abs().max() <= 1e-4 * want.abs().max()


def test_back_to_back_timing_issues_k_steps_per_timing_and_reports_per_step(monkeypatch):
    """``--back-to-back K``: every timing issues K steps before its closing event (no wait between them) and reports
    the time per step; the table says so."""
    from benchmarks import model_measure

    clock = iter(range(100))
    monkeypatch.setattr(model_measure.time, "perf_counter", lambda: float(next(clock)))
    issued = []
    ms, host = model_measure.time_step(lambda: issued.append(1), cuda=False, steps=4)
    assert len(issued) == 4 and ms == host == pytest.approx(1e3 / 4)  # one clock tick (1 s) over 4 steps
    rows = run_case(TINY, VARIANTS[:1], "cpu", Options(iters=1, warmup=0, back_to_back=3), dtype=torch.float32)
    doc = model_table.document(rows, [TINY], VARIANTS[:1], Options(iters=1, warmup=0, back_to_back=3), "cpu")
    assert doc["run"]["back_to_back"] == 3 and "around 3 steps issued back to back" in model_table.markdown(doc)


def test_host_profile_names_where_the_steps_host_time_goes(tmp_path):
    """``--host-profile DIR``: each variant's steps under cProfile, a text file per case and variant whose listing
    names the step's own functions (here the eager model's forward), per-step total first."""
    opts = Options(iters=1, warmup=0, host_profile=tmp_path)
    (row,) = run_case(TINY, VARIANTS[:1], "cpu", opts, dtype=torch.float32)
    assert row.ms > 0 and (row.host_ms, row.peak_gib, row.kernels) == (None, None, None)  # the GPU columns: GPU only
    (path,) = tmp_path.glob("*.txt")
    assert path.name == f"{TINY.name}-{VARIANTS[0].name}.txt"
    text = path.read_text()
    assert text.startswith("host profile: 10 steps back to back,") and "== by cumulative" in text
    assert "forward" in text and "backward" in text


def test_gpu_tests_of_the_step_table_have_cupti_to_themselves():
    """A GPU test that runs ``run_case`` counts kernels with torch.profiler, which cannot start in a process where
    nvFuser's profiler took CUPTI (an earlier test of its shard): the failure becomes the row's note, not the error
    the GPU conftest reruns fresh on, so each such test is marked ``fresh_process``."""
    import ast

    from tests.conftest import ROOT

    def fresh(node) -> bool:
        return any("fresh_process" in ast.unparse(d) for d in node.decorator_list)

    found = []
    for path in sorted((ROOT / "tests" / "gpu").glob("test_*.py")):
        tree = ast.parse(path.read_text())
        if not any(isinstance(n, ast.ImportFrom) and n.module == "benchmarks.model_step"
                   and any(a.name == "run_case" for a in n.names) for n in tree.body):
            continue
        module_fresh = any(isinstance(n, ast.Assign) and "pytestmark" in ast.unparse(n.targets[0])
                           and "fresh_process" in ast.unparse(n.value) for n in tree.body)
        for fn in (n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")):
            if any(isinstance(c, ast.Call) and ast.unparse(c.func) == "run_case" for c in ast.walk(fn)):
                found.append(f"{path.name}::{fn.name}")
                assert module_fresh or fresh(fn), f"{path.name}::{fn.name} runs run_case outside fresh_process"
    assert "test_liger_thunder_gpu.py::test_thunder_liger_runs_ligers_operators_with_grads_as_close_as_stock_thunders" \
        in found and "test_model_step_gpu.py::test_every_variant_runs_on_the_gpu" in found, found


def test_thunders_cudnn_executor_is_one_rivals_row_and_no_other_variants():
    """Thunder puts its cuDNN executor first whenever nvidia-cudnn-frontend imports; the table runs it only in the
    thunder-cudnn rival, so the other Thunder rows measure what a host without cudnn-frontend runs. Without the
    executor (this CPU host: cudnn-frontend needs CUDA's cuDNN) that row is skipped, naming the version to stage."""
    import thunder
    from thunder.extend import (OperatorExecutor, add_default_executor, deregister_executor, register_executor,
                                remove_default_executor)

    from benchmarks.model_step import CUDNN_FRONTEND, Unavailable, thunder_executors

    by = {v.name: v for v in VARIANTS}
    assert thunder.extend.get_executor("cudnn") is None
    with pytest.raises(Unavailable, match=f"cuDNN executor is not registered.*{CUDNN_FRONTEND}"):
        thunder_executors(by["thunder-cudnn"])
    # registered as cudnn-frontend's import registers it (an executor under that name, claiming nothing here)
    stand_in = register_executor(OperatorExecutor("cudnn", version="stand-in"))
    add_default_executor(stand_in)
    try:
        assert thunder.get_default_executors()[0] is stand_in  # what stock Thunder would now run first
        names = {v: [ex.name for ex in thunder_executors(by[v])] for v in ("thunder", "segkit-auto", "thunder-cudnn")}
    finally:
        remove_default_executor(stand_in)
        deregister_executor(stand_in)
    assert "cudnn" not in names["thunder"] and "cudnn" not in names["segkit-auto"]
    assert names["thunder-cudnn"] == ["cudnn", *names["thunder"]]
    assert names["segkit-auto"][0] == "segkit"


def test_later_rounds_keep_each_steps_host_ms_and_the_row_takes_the_median_of_its_rounds(monkeypatch):
    """On a GPU the interleaved rounds keep each step's host ms beside its step ms (``host_steps``, pass by pass),
    and the row's host ms becomes the median of its rounds' medians (round 1's from ``measure``), as its step ms."""
    import benchmarks.model_step as model_step
    from benchmarks.model_step import Row, _more_rounds

    timings = iter([(10.0, 3.0), (9.0, 2.0), (9.0, 4.0), (10.0, 5.0),     # round 2: a b, b a
                    (10.0, 6.0), (9.0, 1.0), (9.0, 1.5), (10.0, 8.0)])   # round 3: a b, b a
    monkeypatch.setattr(model_step, "time_step", lambda step, cuda, steps: next(timings))
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)
    rows = [Row("c", "c", "a", ms=10.0, host_ms=7.5), Row("c", "c", "b", ms=9.0, host_ms=0.5)]
    _more_rounds(rows, {"a": lambda: None, "b": lambda: None}, Options(iters=2, warmup=0, rounds=3), cuda=True)
    a, b = rows
    assert a.host_steps == [3.0, 5.0, 6.0, 8.0] and b.host_steps == [2.0, 4.0, 1.0, 1.5]
    assert a.host_ms == 7.0  # median of 7.5 (round 1), 4.0 and 7.0
    assert b.host_ms == 1.25  # median of 0.5, 3.0 and 1.25


def test_rounds_keep_apart_the_variants_that_crash_one_process_together(monkeypatch):
    """--rounds keeps every variant alive; a pair in ROUNDS_APART must not share the process: the later one is a
    skipped row naming the pair and the run that found it, the earlier one is timed over every round."""
    import benchmarks.model_step as model_step

    small = next(c for c in CASES if c.name == "qwen3-0.6b-x2")
    default = model_step.case_variants(small, [])
    names = [v.name for v in default]
    assert {"thunder-graphs", "compile-graphs"} <= set(names)  # the default table of a small case has the pair
    skip = model_step.rounds_apart(default, 2)
    assert list(skip) == ["thunder-graphs"] and "compile-graphs" in skip["thunder-graphs"]
    assert "kill the process" in skip["thunder-graphs"] and model_step.rounds_apart(default, 1) == {}

    monkeypatch.setattr(model_step, "ROUNDS_APART", {frozenset({"eager", "segkit-opaque"}): "they clash"})
    variants = [v for v in VARIANTS if v.name in ("eager", "segkit-opaque")]
    kept, skipped = run_case(TINY, variants, "cpu", Options(iters=1, warmup=0, rounds=2), dtype=torch.float32)
    assert len(kept.ms_rounds) == 2 and kept.ms is not None and not kept.note, kept
    assert skipped.ms is None and skipped.note.startswith("skipped:") and "eager" in skipped.note, skipped


def test_a_process_that_dies_in_the_rounds_keeps_round_1_in_its_json(monkeypatch, tmp_path):
    """--rounds reports each row after round 1 (noted as such) before the interleaved rounds, which keep every
    variant alive and can kill the process (two variants' CUDA graphs did): its JSON then holds round 1. Rows
    reported again after the rounds replace their round-1 copies, one row per variant."""
    import benchmarks.model_step as model_step

    monkeypatch.setattr(model_step, "select", lambda names: [TINY])
    out = tmp_path / "step.json"
    argv = ["--case", "tiny", "--variants", "eager,segkit-opaque", "--iters", "1", "--warmup", "0", "--rounds", "2",
            "--device", "cpu", "--json", str(out)]

    def dies(*args, **kwargs):
        raise RuntimeError("CUDA error: unspecified launch failure")

    with monkeypatch.context() as m:
        m.setattr(model_step, "_more_rounds", dies)
        assert main(argv) == 1  # one line, naming the error
    kept = json.loads(out.read_text())["rows"]
    assert [(r["variant"], r["note"]) for r in kept] == [("eager", model_step.ROUND_1_ONLY),
                                                         ("segkit-opaque", model_step.ROUND_1_ONLY)]
    assert all(r["ms"] > 0 for r in kept)
    main(argv)
    done = json.loads(out.read_text())["rows"]
    assert [r["variant"] for r in done] == ["eager", "segkit-opaque"] and not any(r["note"] for r in done)
    assert all(len(r["ms_rounds"]) == 2 for r in done)


def test_every_variants_fuse_option_is_a_policy_segkit_ex_takes():
    """Each variant's segkit_fuse parses (a typo in an op or a shape would otherwise surface on the GPU host, in
    the middle of a run)."""
    from thunder_exec.decide import FusePolicy

    policies = {v.name: FusePolicy.parse(v.fuse_option) for v in VARIANTS if v.segkit}
    assert {name: p.mode("rmsnorm_fwd", "8192x1024") for name, p in policies.items()
            if name in ("segkit-auto", "segkit-fused", "segkit-opaque")} == {
        "segkit-auto": "auto", "segkit-fused": "fused", "segkit-opaque": "opaque"}


def test_variants_from_a_table_file_are_nameable_and_a_bad_table_is_one_line(tmp_path, capsys):
    """A campaign's controls come from a table file (``--variants-from``): a per-shape ``segkit_fuse`` mapping
    loads as the option it names, the table's variants are listed and nameable in ``--variants``, never in the
    default table; a field Variant lacks, a variant without a label, one given twice or one that redefines a
    product variant is a one-line error naming the file."""
    from benchmarks.model_step import case_variants, load_variants
    from thunder_exec.decide import FusePolicy

    table = tmp_path / "controls.json"
    shape = "norm_fwd@131072x128"
    table.write_text(json.dumps({"variants": [
        {"name": "x-qk-thunder", "label": "auto, one shape left to Thunder", "default": False, "thunder": True,
         "segkit": True, "fuse": {"*": "auto", shape: "thunder"}, "why": "a control"}]}))
    (v,) = load_variants(table)
    assert v.fuse_option == {"*": "auto", shape: "thunder"} and not v.default
    policy = FusePolicy.parse(v.fuse_option)
    assert (policy.mode("rmsnorm_fwd", "131072x128"), policy.mode("rmsnorm_fwd", "8192x1024")) == ("thunder", "auto")
    main(["--list", "--variants-from", str(table)])
    assert "variant x-qk-thunder: auto, one shape left to Thunder" in capsys.readouterr().out
    assert "x-qk-thunder" not in [c.name for c in case_variants(TINY, [])]
    for entries, why in ([{"name": "a", "label": "A", "fuze": "auto"}], "unknown field fuze"),  \
                        ([{"name": "a"}], "needs a name and a label"), \
                        ([{"name": "a", "label": "A"}, {"name": "a", "label": "B"}], "variant a given twice"), \
                        ([{"name": "eager", "label": "E"}], "variant eager is already defined"):
        table.write_text(json.dumps({"variants": entries}))
        assert main(["--list", "--variants-from", str(table)]) == 1
        err = capsys.readouterr().err
        assert why in err and str(table) in err and err.count("\n") == 1, err


def test_claims_column_counts_decisions_per_shape_not_per_call():
    """The claims column's calls come from the traces; the opaque / left-to-Thunder lists are decisions, one per
    signature however many calls share it (a model's five norms of one shape are one decision), and say so."""
    counts = {"norm_fw": 5, "norm_bw": 5, "rope_fw": 4, "rope_bw": 4}
    cuts = [{"spec": "rope_bwd", "chosen": "opaque"}, {"spec": "rope_bwd", "chosen": "opaque"},
            {"spec": "rmsnorm_fwd", "chosen": "thunder"}, {"spec": "rope_fwd", "chosen": "fused"}]
    assert model_table._claims(counts, cuts) == ("norms 5/5, RoPE 4/4; opaque: rope_bwd (2 shapes); "
                                                 "left to Thunder: rmsnorm_fwd (1 shape)")


def test_a_stock_thunder_row_runs_none_of_segkits_patches(tmp_path):
    """A rival's row is the rival as its users run it: in a fresh process, building a case and running stock
    Thunder's variant installs Thunder's three narrow fixes and none of segkit_ex's lookasides, import hook or
    fusion pass (building a case once installed them all, for every variant); the row still runs, grads at fp32
    distance from eager. A segkit variant in the same process installs them after."""
    import subprocess
    import sys

    from tests.conftest import ROOT

    code = (
        "import torch, thunder_exec.patches as patches\n"
        "from tests.test_model_step import TINY\n"
        "from benchmarks.model_step import VARIANTS, Options, run_case\n"
        "(row,) = run_case(TINY, [v for v in VARIANTS if v.name == 'thunder'], 'cpu', Options(iters=1, warmup=0),"
        " dtype=torch.float32)\n"
        "print(row.ms > 0, row.grad_err < 1e-4, repr(row.note), patches.installed())\n"
        "(row,) = run_case(TINY, [v for v in VARIANTS if v.name == 'segkit-opaque'], 'cpu',"
        " Options(iters=1, warmup=0), dtype=torch.float32)\n"
        "print(row.claims['norm_fw'], patches.installed())\n")
    got = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert got.returncode == 0, got.stderr[-2000:]
    said = [line for line in got.stdout.splitlines() if "|" not in line]  # the rows' own lines left out
    assert said == ["True True '' False", "5 True"], got.stdout


@pytest.mark.models  # a third Thunder compile of the tiny model
def test_the_saves_output_row_saves_less_for_the_backward_with_the_same_grads(rows):
    """segkit-saves-output (segkit_norm_saves="output") against segkit-opaque's row: the 5 norms' inputs are not
    saved (tests/test_norm_saves_output.py counts them), the grads stay at fp32 distance from eager."""
    (row,) = run_case(TINY, [v for v in VARIANTS if v.name == "segkit-saves-output"], "cpu",
                      Options(iters=1, warmup=0), dtype=torch.float32)
    assert row.note == "" and row.grad_err < 1e-4, row
    assert row.saved_gib < next(r for r in rows if r.variant == "segkit-opaque").saved_gib, row
