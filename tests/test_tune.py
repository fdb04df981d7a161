"""segkit tune without a GPU: the candidates, their validation on the reference interpreter (a wrong one is
rejected), the winner and the tuning table keyed by GPU model that builders and segkit_ex read."""

from __future__ import annotations

import pytest
import torch

import fusions
from fusions.norm_bwd_two_stage import two_stage
from segkit import FusionDefinition
from segkit_cli.main import main as cli_main
from fusions.tune import realizer, space, tune_spec
from segkit.tuning import NvTuning, TableEntry, TuningTable
from segkit.tuning.search import Candidate, Timing, Trial, TuneResult, distance, search, shard, validate


def test_space_starts_with_the_baselines_and_offers_each_kind():
    spec = fusions.get("layernorm_bwd")
    cfg = spec.config("mixorder_576000x384")
    rule = spec.tuning(cfg)
    cands = space("layernorm_bwd", cfg, rule, sm_count=132, cut_policies=("none", "inputs+outputs"))
    assert [c.origin for c in cands[:2]] == ["nvFuser defaults", "builder rule"] and cands[1].tuning == rule
    plain = [c for c in cands if c.bookend == "none" and c.formulation == "fused" and c.tuning is not None]
    assert sum(c.tuning.describe() == rule.describe() for c in plain) == 1  # the hand rule once, not twice
    assert any(c.tuning.enable_options == ("ws_normalization",) for c in plain)
    two = [c for c in cands if c.formulation == "two_stage"]
    assert {576000 // c.chunk for c in two} == {128, 512, 9000}  # <= 1 and 4 partials per SM, chunks of 64
    assert {c.bookend for c in two} == {"none", "inputs+outputs"}
    assert len(cands) == len(set(cands))


def test_reference_search_validates_every_candidate_for_real():
    result = tune_spec("layernorm_bwd", "mixorder_576000x384", reference=True, log=lambda _: None)
    assert result.config == "mixorder_576000x384" and len(result.trials) >= 10
    assert all(t.ok and t.note.startswith("max rel err") and t.us is None for t in result.trials)
    assert any(t.candidate.formulation == "two_stage" for t in result.trials)


def _wrong_two_stage(cfg):
    """A two-stage candidate whose second stage averages the partials instead of summing them."""
    staged = two_stage("rmsnorm_bwd", cfg, 4)
    f32 = staged.stages[1].fusion.inputs[0].dtype
    with FusionDefinition() as fd:
        p = fd.define_tensor(shape=[cfg.rows // 4, cfg.hidden], contiguity=[True, True], dtype=f32)
        fd.add_output(fd.ops.cast(fd.ops.mean(p, dims=[0]), dtype=staged.stages[1].fusion.outputs[0].dtype))
    staged.stages = (staged.stages[0], fd)
    return staged


def test_validation_rejects_a_wrong_candidate():
    spec = fusions.get("rmsnorm_bwd")
    cfg = spec.config("mixorder_576000x384_tiny")
    inputs = spec.make_inputs(cfg)
    refs = spec.reference(inputs, cfg)
    ok, note = validate(_wrong_two_stage(cfg), list(inputs.values()), refs, "reference")
    assert not ok and note.startswith("WRONG") and "output 1" in note
    assert validate(two_stage("rmsnorm_bwd", cfg, 4), list(inputs.values()), refs, "reference")[0]


class _RaisesNvFuserAssert:
    """A candidate whose run fails with an nvFuser internal assert in its two-line form: a generic first line,
    the reason on the second (here the text of nvFuser's cooperative-launch occupancy check)."""

    def run(self, inputs, backend):
        raise RuntimeError(
            "INTERNAL ASSERT FAILED at /workspace/Fuser/csrc/runtime/executor.cpp:1343, please report a bug with "
            "repro script to NVFuser at https://github.com/NVIDIA/Fuser/issues. \nWanted to launch a cooperative "
            "kernel, however the number of blocks is greater than what can be resident on the GPU at once. Need: "
            "2112 (1 * 2112 * 1) but limited to 12 * 132\nException raised from validateCooperativeLaunch")


def test_a_failed_candidate_says_why_not_only_where():
    spec = fusions.get("rmsnorm_bwd")
    cfg = spec.config("mixorder_576000x384_tiny")
    inputs = spec.make_inputs(cfg)
    ok, note = validate(_RaisesNvFuserAssert(), list(inputs.values()), spec.reference(inputs, cfg), "reference")
    assert not ok and note.startswith("failed: RuntimeError: INTERNAL ASSERT at runtime/executor.cpp:1343: Wanted to "
                                      "launch a cooperative kernel") and "please report" not in note


def test_a_candidate_that_does_not_record_is_rejected_untimed():
    spec = fusions.get("rmsnorm_bwd")
    cfg = spec.config("mixorder_576000x384_tiny")
    inputs = spec.make_inputs(cfg)
    trials = search(spec.build(cfg), list(inputs.values()), spec.reference(inputs, cfg),
                    [Candidate("two_stage", 5)], "reference", realizer("rmsnorm_bwd", cfg),
                    timer=lambda call: Timing(1.0, 1.0))
    assert not trials[0].ok and "does not divide" in trials[0].note and trials[0].us is None


def test_the_fastest_valid_candidate_wins_and_records_what_it_bought():
    rule = NvTuning("hand", scheduler="inner_outer_persistent", vectorize=4)
    result = TuneResult("rmsnorm_bwd", "mixorder_576000x384", "576000x384 bfloat16", [
        Trial(Candidate(origin="nvFuser defaults"), True, "", 500.0),
        Trial(Candidate(tuning=rule, origin="builder rule"), True, "", 450.0),
        Trial(Candidate("two_stage", 4500), True, "", 400.0),
        Trial(Candidate(tuning=NvTuning("x", enable_options=("ws_normalization",))), False, "WRONG"),
    ])
    e = result.entry("NVIDIA H100 80GB HBM3")
    assert (e.formulation, e.chunk, e.us, e.default_us, e.rule_us) == ("two_stage", 4500, 400.0, 500.0, 450.0)
    assert "500.0 -> 400.0 us (1.25x); the builder's rule 450.0 us" in e.describe()


def test_a_gain_within_noise_keeps_nvfusers_defaults():
    result = TuneResult("rmsnorm_bwd", "c", "s", [
        Trial(Candidate(origin="nvFuser defaults"), True, "", 500.0),
        Trial(Candidate(tuning=NvTuning("x", enable_options=("ws_normalization",))), True, "", 495.0)])
    assert result.winner.candidate.origin == "nvFuser defaults" and result.entry("G").tuning is None


def test_table_round_trip_and_lookup_by_gpu_model(tmp_path):
    tuned = NvTuning("tuned", scheduler="inner_outer_persistent", vectorize=2, blocks_per_sm=8)
    rms, ln = fusions.get("rmsnorm_bwd"), fusions.get("layernorm_bwd")
    table = TuningTable([
        rms.entry("mixorder_576000x384", "GPU A", tuning=tuned, us=1.0, default_us=2.0),
        rms.entry("mixorder_576000x384", "GPU B"),  # nvFuser's defaults won
        ln.entry("mixorder_576000x384", "GPU A", formulation="two_stage", chunk=4500),
        ln.entry("nanogpt", "GPU A", tuning=NvTuning("s", split=((0,), (1, 2)))),
    ])
    table.save(tmp_path / "t.json")
    back = TuningTable.load(tmp_path / "t.json")
    assert sorted(e.to_dict().items().__repr__() for e in back.entries()) == \
        sorted(e.to_dict().items().__repr__() for e in table.entries())
    assert back.gpus() == ["GPU A", "GPU B"]
    spec = fusions.get("rmsnorm_bwd")
    assert spec.build("mixorder_576000x384", gpu="GPU A", table=back).nv_tuning == tuned
    assert spec.build("mixorder_576000x384", gpu="GPU B", table=back).nv_tuning is None
    assert spec.build("mixorder_576000x384", gpu="GPU C", table=back).nv_tuning == spec.tuning(
        spec.config("mixorder_576000x384"))  # no entry: the builder's rule
    assert spec.build("mixorder_576000x384", torch.float32, gpu="GPU A", table=back).nv_tuning is None
    assert fusions.get("layernorm_bwd").build("nanogpt", gpu="GPU A", table=back).nv_tuning.split == ((0,), (1, 2))


def test_executor_runs_the_two_stage_formulation_the_table_chose():
    from fusions.runner import staged_for

    spec = fusions.get("layernorm_bwd")
    table = TuningTable([spec.entry("mixorder_576000x384_tiny", "GPU A", formulation="two_stage", chunk=8)])
    cfg = spec.config("mixorder_576000x384_tiny")
    staged = staged_for("layernorm_bwd", cfg, "GPU A", table)
    assert staged.chunk == 8 and staged_for("layernorm_bwd", cfg, "GPU B", table) is None
    inputs = spec.make_inputs(cfg)
    from segkit.compare import compare

    assert all(d.ok for d in compare(spec.reference(inputs, cfg), staged.run(list(inputs.values()))))


def test_the_builders_read_the_table_named_by_the_environment(tmp_path, monkeypatch):
    from fusions.spec import tuning_table

    tuned = NvTuning("env", enable_options=("ws_normalization",))
    TuningTable([fusions.get("rmsnorm_bwd").entry("nanogpt", "GPU E", tuning=tuned)]).save(tmp_path / "t.json")
    monkeypatch.setenv("SEGKIT_TUNING_TABLE", str(tmp_path / "t.json"))
    tuning_table.cache_clear()
    try:
        assert fusions.get("rmsnorm_bwd").build("nanogpt", gpu="GPU E").nv_tuning == tuned
    finally:
        monkeypatch.delenv("SEGKIT_TUNING_TABLE")
        tuning_table.cache_clear()
    assert fusions.get("rmsnorm_bwd").build("nanogpt", gpu="GPU E").nv_tuning is None


def test_run_time_configs_find_the_entry_of_the_same_sizes():
    """segkit_ex names its configs "thunder" and may shape rows as batch x seq: matched by rows x hidden, dtype."""
    from dataclasses import replace

    spec = fusions.get("rmsnorm_bwd")
    table = TuningTable([spec.entry("mixorder_576000x384", "GPU A", formulation="two_stage", chunk=4500)])
    cfg = spec.config("mixorder_576000x384")
    assert spec.table_entry(replace(cfg, name="thunder", shape=(1000, 576, 384)), "GPU A", table).chunk == 4500
    assert spec.table_entry(replace(cfg, name="thunder", dtype=torch.float16), "GPU A", table) is None
    assert spec.table_entry(replace(cfg, name="thunder", shape=(576000, 512)), "GPU A", table) is None


def test_malformed_table_names_the_file(tmp_path):
    (tmp_path / "bad.json").write_text('{"entries": [{"gpu": "A"}]}')
    with pytest.raises(ValueError, match="bad.json is malformed"):
        TuningTable.load(tmp_path / "bad.json")
    (tmp_path / "bad2.json").write_text('{"entries": [{"gpu": "A", "spec": "s", "config": "c", "signature": "d", '
                                        '"tuning": {"why": "w", "bogus": 1}}]}')
    with pytest.raises(ValueError, match="unknown NvTuning fields"):
        TuningTable.load(tmp_path / "bad2.json")


def test_cli_tune_reference_and_gpu_requirement(capsys):
    assert cli_main(["tune", "rmsnorm_fwd:mixorder_576000x384", "--reference"]) == 0
    out = capsys.readouterr().out
    assert "builder rule" in out and "candidates match the reference" in out
    if not torch.cuda.is_available():
        assert cli_main(["tune", "rmsnorm_fwd:mixorder_576000x384"]) == 1  # a failure, not a usage error
        assert "needs a CUDA device" in capsys.readouterr().err


@pytest.mark.parametrize("cfg", ["Llama-3-70B_bs1_tiny", "Llama-2-13b-hf_bs2_tiny"])
def test_rope_backward_sliced_sum_formulation_matches_the_reference(cfg):
    spec = fusions.get("qkv_split_rope_bwd")
    c = spec.config(cfg)
    inputs = spec.make_inputs(c)
    fd = spec.build(c, formulation="sliced_sum")
    from segkit.compare import compare
    from segkit.interp import run_reference

    assert all(d.ok for d in compare(spec.reference(inputs, c), run_reference(fd, list(inputs.values()))))
    assert not any(op.name == "sum" for op in fd.fusion.ops)  # no reduction left to segment on


def test_the_table_picks_a_named_formulation_for_its_gpu():
    spec = fusions.get("qkv_split_rope_bwd")
    table = TuningTable([spec.entry("Llama-3-70B_bs1_tiny", "GPU A", formulation="sliced_sum")])
    ops = lambda gpu: {op.name for op in spec.build("Llama-3-70B_bs1_tiny", gpu=gpu, table=table).fusion.ops}  # noqa: E731
    assert "sum" not in ops("GPU A") and "sum" in ops("GPU B")
    with pytest.raises(KeyError, match="no formulation 'bogus'"):
        spec.build("Llama-3-70B_bs1_tiny", formulation="bogus")


def test_a_search_past_its_budget_lists_the_rest_as_not_tried():
    spec = fusions.get("rmsnorm_bwd")
    cfg = spec.config("mixorder_576000x384_tiny")
    inputs = spec.make_inputs(cfg)
    trials = search(spec.build(cfg), list(inputs.values()), spec.reference(inputs, cfg),
                    [Candidate(), Candidate("two_stage", 4)], "reference", realizer("rmsnorm_bwd", cfg),
                    budget_s=-1.0)
    assert trials[0].ok and not trials[1].ok and "budget" in trials[1].note


def test_tune_a_repro_script_on_the_reference(capsys):
    from pathlib import Path

    script = Path(__file__).parent / "data" / "minimized" / "gqa_k_nvfuser.py"
    assert cli_main(["tune", str(script), "--reference"]) == 0
    out = capsys.readouterr().out
    assert "nvFuser defaults" in out and "candidates match the reference" in out


def test_merge_adds_a_runs_winners_to_the_committed_table(tmp_path, monkeypatch, capsys):
    import fusions.spec

    committed = tmp_path / "tunings.json"
    spec = fusions.get("rmsnorm_bwd")
    TuningTable([spec.entry("nanogpt", "GPU A")]).save(committed)
    run = tmp_path / "run.json"
    TuningTable([spec.entry("nanogpt", "GPU B", formulation="two_stage", chunk=16),
                 spec.entry("nanogpt", "GPU A", tuning=NvTuning("w", enable_options=("ws_normalization",)))]).save(run)
    monkeypatch.setattr(fusions.spec, "TABLE_PATH", committed)
    assert cli_main(["tune", "--merge", str(run)]) == 0
    merged = TuningTable.load(committed)
    assert merged.gpus() == ["GPU A", "GPU B"] and len(merged.entries()) == 2
    assert spec.table_entry("nanogpt", "GPU A", merged).tuning.enable_options == ("ws_normalization",)  # newer wins


def _norm_bwd_tiny():
    spec = fusions.get("rmsnorm_bwd")
    cfg = spec.config("mixorder_576000x384_tiny")
    inputs = spec.make_inputs(cfg)
    return spec, cfg, list(inputs.values()), spec.reference(inputs, cfg)


def test_kernel_time_ranks_and_event_time_is_kept_beside_it():
    """The H200 case: events (host gaps in) favour ws_normalization, kernels favour the manual rule."""
    spec, cfg, inputs, refs = _norm_bwd_tiny()
    rule = spec.tuning(spec.config("mixorder_576000x384"))
    ws = NvTuning("t", enable_options=("ws_normalization",))
    cands = [Candidate(origin="nvFuser defaults"), Candidate(tuning=rule, origin="builder rule"), Candidate(tuning=ws)]
    times = iter([Timing(890.0, 891.0), Timing(636.0, 848.5), Timing(750.5, 756.6)])
    trials = search(spec.build(cfg), inputs, refs, cands, "reference", realizer("rmsnorm_bwd", cfg),
                    timer=lambda call: next(times))
    assert all(t.ok and t.seconds is not None and t.seconds >= 0 for t in trials)
    result = TuneResult("rmsnorm_bwd", "mixorder_576000x384", "576000x384 bfloat16", trials)
    assert result.winner.candidate.origin == "builder rule"
    e = result.entry("NVIDIA H200")
    assert (e.metric, e.us, e.call_us, e.default_us, e.rule_us) == ("kernel", 636.0, 848.5, 890.0, 636.0)
    assert "(kernel time; 848.5 us per call between events)" in e.describe()
    assert [r[3:] for r in result.rows()] == [["890.0", "891.0"], ["636.0", "848.5"], ["750.5", "756.6"]]


def test_entries_from_before_kernel_ranking_load_as_event_time(tmp_path):
    old = {"gpu": "G", "spec": "rmsnorm_bwd", "config": "c", "signature": "s", "us": 526.27, "default_us": 723.52,
           "rule_us": 526.27, "measured": "2026-11-23", "tuning": None}
    e = TableEntry.from_dict(old)
    assert e.metric == "events" and e.call_us is None and "(event time)" in e.describe()
    new = TableEntry("G", "rmsnorm_bwd", "c", "s2", us=1.0, call_us=2.0)
    table = TuningTable([e, new])
    table.save(tmp_path / "t.json")
    back = {x.signature: x for x in TuningTable.load(tmp_path / "t.json").entries()}
    assert (back["s"].metric, back["s2"].metric, back["s2"].call_us) == ("events", "kernel", 2.0)


def test_the_committed_table_has_both_gpus_and_each_winner_matches_or_beats_the_hand_rule():
    from fusions.spec import TABLE_PATH

    entries = TuningTable.load(TABLE_PATH).entries()
    norm = [e for e in entries if e.spec in ("rmsnorm_bwd", "layernorm_bwd")]
    assert {e.gpu for e in norm} >= {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}
    for e in norm:  # ranked by kernel time, in the same run as nvFuser's defaults and the builder's rule
        assert e.metric == "kernel" and e.us <= e.default_us, e.describe()
        assert e.rule_us is None or e.us <= e.rule_us, e.describe()  # None: the builder has no rule there
    # every winner ranked by kernel time (the last events-timed entry, H100 Llama-3-70B RoPE backward, searched again)
    assert [(e.gpu, e.spec, e.config) for e in entries if e.metric != "kernel"] == []


def test_overrides_nearest_the_rule_come_first_in_the_full_grid():
    spec = fusions.get("layernorm_bwd")
    cfg = spec.config("mixorder_576000x384")
    rule = spec.tuning(cfg)
    grid = [c.tuning for c in space("layernorm_bwd", cfg, rule, quick=False)
            if c.bookend == "none" and c.tuning is not None and c.tuning.scheduler == "inner_outer_persistent"
            and not c.origin]
    dists = [distance(t, rule) for t in grid]
    assert len(grid) == 53 and dists == sorted(dists) and dists[0] == 1 and dists[-1] > 1
    assert distance(rule, rule) == 0 and rule not in grid


def test_shards_partition_the_grid_and_each_times_the_baselines():
    spec = fusions.get("rmsnorm_bwd")
    cfg = spec.config("mixorder_576000x384")
    cands = space("rmsnorm_bwd", cfg, spec.tuning(cfg), quick=False, cut_policies=("none", "inputs+outputs"))
    shards = [shard(cands, i, 3) for i in range(3)]
    baselines = [c for c in cands if c.origin]
    assert len(baselines) == 2 and all(s[:2] == baselines for s in shards)
    rest = [c for s in shards for c in s[2:]]
    assert sorted(map(repr, rest)) == sorted(repr(c) for c in cands if not c.origin) and len(rest) == len(set(rest))
    with pytest.raises(Exception, match="0..2"):
        shard(cands, 3, 3)


def test_a_cut_search_says_what_the_rest_would_need():
    spec, cfg, inputs, refs = _norm_bwd_tiny()
    cands = [Candidate(origin="nvFuser defaults")] + [Candidate(tuning=NvTuning("t", enable_options=(o,)))
                                                      for o in ("ws_normalization", "a", "b")]
    trials = search(spec.build(cfg), inputs, refs, cands, "reference", realizer("rmsnorm_bwd", cfg), budget_s=0.0)
    result = TuneResult("rmsnorm_bwd", "c", "s", trials)
    assert [t.seconds is None for t in trials] == [False, True, True, True]
    hint = result.budget_hint()
    assert hint.startswith("3 candidates not tried") and "--shard" in hint
    assert TuneResult("rmsnorm_bwd", "c", "s", trials[:1]).budget_hint() is None


def test_merging_shards_keeps_the_least_kernel_time_and_names_its_file(tmp_path, capsys):
    def table(us, metric="kernel", sig="576000x384 bfloat16"):
        return TuningTable([TableEntry("G", "rmsnorm_bwd", "mixorder_576000x384", sig, us=us, metric=metric)])

    merged, source = TuningTable.fastest_of([("a.json", table(500.0)), ("b.json", table(441.0)),
                                             ("c.json", table(470.0)), ("d.json", table(9.0, sig="other"))])
    assert {e.signature: e.us for e in merged.entries()} == {"576000x384 bfloat16": 441.0, "other": 9.0}
    assert source[("G", "rmsnorm_bwd", "576000x384 bfloat16")] == "b.json"
    with pytest.raises(ValueError, match="do not compare"):
        TuningTable.fastest_of([("a.json", table(500.0)), ("old.json", table(400.0, metric="events"))])
    for name, us in (("s0.json", 500.0), ("s1.json", 441.0)):
        table(us).save(tmp_path / name)
    out = tmp_path / "merged.json"
    assert cli_main(["tune", "--merge", str(tmp_path / "s0.json"), str(tmp_path / "s1.json"), "--out", str(out)]) == 0
    assert [e.us for e in TuningTable.load(out).entries()] == [441.0]
    assert "s1.json" in capsys.readouterr().out


@pytest.mark.parametrize("bad", ["2/2", "x/2", "1"])
def test_a_bad_shard_is_named(bad, capsys):
    assert cli_main(["tune", "rmsnorm_bwd:mixorder_576000x384", "--reference", "--shard", bad]) == 2
    assert f"argument --shard: {bad!r}: expected I/N" in capsys.readouterr().err


def test_the_reuse_pass_is_a_candidate_where_it_rewrites_and_passes_the_reference():
    from segkit.tuning import REUSE
    from segkit.tuning.search import rewrites

    result = tune_spec("fp8_amax", "4096x4096", reference=True, log=lambda _: None)
    reused = [t for t in result.trials if t.candidate.formulation == REUSE]
    assert len(reused) == 1 and reused[0].ok and reused[0].note.startswith("max rel err")
    norm = fusions.get("rmsnorm_bwd")
    assert rewrites(norm.build("mixorder_576000x384_tiny")) == []  # nothing nested to reuse: no candidate


def test_a_reuse_entry_makes_the_builder_read_x_fewer_times_and_stay_right():
    from segkit.compare import compare
    from segkit.interp import run_reference
    from segkit.reuse import full_size_reductions
    from segkit.tuning import REUSE

    spec = fusions.get("fp8_amax")
    cfg = spec.config("16384x8192_tiny")
    table = TuningTable([spec.entry(cfg, "GPU A", formulation=REUSE)])
    reused, plain = (spec.build(cfg, gpu=gpu, table=table) for gpu in ("GPU A", "GPU B"))
    assert sum(full_size_reductions(reused).values()) < sum(full_size_reductions(plain).values())
    inputs = spec.make_inputs(cfg)
    assert all(d.ok for d in compare(spec.reference(inputs, cfg), run_reference(reused, list(inputs.values()))))


def test_tune_offers_the_reuse_pass_on_a_thunder_captured_fp8_region():
    """A repro script Thunder wrote for its nvFusion region (rowwise, columnwise and tensorwise amax of one x): the
    search tries the reuse pass on it, and the rewritten fusion passes the interpreter's reference."""
    from pathlib import Path

    from segkit.tuning import REUSE
    from segkit.tuning.search import tune_script

    script = Path(__file__).parent / "data" / "thunder" / "fp8_amax_fwd_nvFusion0.py"
    result = tune_script(str(script), reference=True, log=lambda _: None)
    (reused,) = [t for t in result.trials if t.candidate.formulation == REUSE]
    assert reused.ok and reused.note.startswith("max rel err"), reused.note


def test_the_search_starts_from_the_builder_as_written_not_the_tables_choice(tmp_path, monkeypatch):
    """With a table that already chose the reuse pass on this GPU, the search still times the builder as written
    as its baseline and offers the pass as a candidate (else the pass's fusion would be labelled "fused" and a
    winner written back as "fused" would drop it)."""
    import fusions.spec
    from fusions.spec import tuning_table
    from segkit.reuse import full_size_reductions
    from segkit.tuning import REUSE

    spec = fusions.get("fp8_amax")
    TuningTable([spec.entry("4096x4096_tiny", "GPU R", formulation=REUSE)]).save(tmp_path / "t.json")
    monkeypatch.setenv("SEGKIT_TUNING_TABLE", str(tmp_path / "t.json"))
    monkeypatch.setattr(fusions.spec, "gpu_model", lambda: "GPU R")
    tuning_table.cache_clear()
    try:
        # the table is in effect: the builder builds the pass's fusion on this GPU
        assert full_size_reductions(spec.build("4096x4096_tiny")) != \
            full_size_reductions(spec.build("4096x4096_tiny", table=TuningTable([])))
        result = tune_spec("fp8_amax", "4096x4096", reference=True, log=lambda _: None)
    finally:
        monkeypatch.delenv("SEGKIT_TUNING_TABLE")
        tuning_table.cache_clear()
    assert any(t.candidate.formulation == REUSE and t.ok for t in result.trials)
