"""lab/campaigns/big_shapes.py: the >= 32M-element norm backward search that issue 21's second bar reads."""

import json

import pytest

import fusions
from lab.campaigns import big_shapes


def test_cases_are_every_norm_backward_config_of_32m_elements():
    got = big_shapes.cases()
    for spec in big_shapes.SPECS:
        big = {n for n, c in fusions.get(spec).configs.items() if not n.endswith("_tiny") and c.rows * c.hidden >= 1 << 25}
        assert {n for s, n in got if s == spec} == big
        assert "sweep_4096x8192" in big and "sweep_65536x256" not in big  # 32M exactly in, 16M out


def test_reference_search_checks_every_candidate_and_logs_each_trial(tmp_path, capsys):
    log = tmp_path / "big.jsonl"
    assert big_shapes.main(["--reference", "--cases", "layernorm_bwd:sweep_4096x8192", "--jsonl", str(log)]) == 0
    (rec,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert rec["config"] == "sweep_4096x8192" and rec["shape"] == [4096, 8192]
    assert len(rec["trials"]) > 1 and all(t["ok"] for t in rec["trials"])
    assert "layernorm_bwd:sweep_4096x8192" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [(["--cases", "softmax:x"], "is not SPEC:CONFIG"),
                                            (["--shard", "2/2"], "I in 0..N-1"),
                                            (["--specs", "rmsnorm_fwd,softmax_fwd"], "--specs: softmax_fwd")])
def test_bad_arguments_say_what_is_wrong(argv, message, capsys):
    with pytest.raises(SystemExit):
        big_shapes.main(["--reference", *argv])
    assert message in capsys.readouterr().err


def test_table_mode_reads_earlier_logs(tmp_path, capsys):
    log = tmp_path / "big.jsonl"
    big_shapes.main(["--reference", "--cases", "rmsnorm_bwd:sweep_4096x8192", "--jsonl", str(log)])
    capsys.readouterr()
    assert big_shapes.main(["--table", str(log)]) == 0
    out = capsys.readouterr().out
    assert "rmsnorm_bwd:sweep_4096x8192" in out and "reference" in out


def test_table_keeps_the_later_record_of_a_case_run_twice():
    first = {"spec": "layernorm_bwd", "config": "llama2_7b", "gpu": "G", "winner_us": 80.9}
    other_gpu, rerun = dict(first, gpu="H", winner_us=70.0), dict(first, winner_us=75.0)
    assert big_shapes.latest([first, other_gpu, rerun]) == [rerun, other_gpu]


def test_time_limit_names_the_cases_left(capsys):
    assert big_shapes.main(["--reference", "--time-limit", "-1", "--cases",
                            "rmsnorm_bwd:sweep_4096x8192,layernorm_bwd:llama2_70b"]) == 0
    assert "not run: rmsnorm_bwd:sweep_4096x8192, layernorm_bwd:llama2_70b" in capsys.readouterr().out


def test_forward_campaign_covers_every_forward_sweep_shape_and_its_floor_is_the_forwards():
    """``--specs rmsnorm_fwd,layernorm_fwd --min-elements 0``: issue 38's forward sweep shapes, all of them; a
    forward case's floor is the forward spec's bytes (x read, y written), not the backward's."""
    got = big_shapes.cases(("rmsnorm_fwd", "layernorm_fwd"), 0)
    for spec in ("rmsnorm_fwd", "layernorm_fwd"):
        sweep = {n for n in fusions.get(spec).configs if n.startswith("sweep_") and not n.endswith("_tiny")}
        assert sweep and sweep <= {n for s, n in got if s == spec}
    cfg = fusions.get("rmsnorm_fwd").config("sweep_4096x8192", None)
    rec, _ = big_shapes.search_case("rmsnorm_fwd", "sweep_4096x8192", 1000.0, None, reference=True)
    assert rec["floor_us"] == round(fusions.get("rmsnorm_fwd").bytes_floor(cfg) / 1000.0 / 1e3, 2)
    assert rec["floor_us"] < round(fusions.get("rmsnorm_bwd").bytes_floor(cfg) / 1000.0 / 1e3, 2)


def test_wide_rows_get_the_wide_budget():
    assert big_shapes.budget_for("rmsnorm_fwd", "sweep_4096x1024", 15.0, 8.0) == 15.0
    assert big_shapes.budget_for("rmsnorm_fwd", "sweep_4096x4096", 15.0, 8.0) == 8.0
    assert big_shapes.budget_for("rmsnorm_fwd", "sweep_4096x4096", 15.0, None) == 15.0


def test_a_case_the_table_holds_for_this_gpu_is_tuned_already_and_only_there():
    """A resumed campaign (``--skip-tuned``) leaves out what the table holds for this GPU, by the case's sizes and
    bf16: another GPU's winner, or another dtype's, does not count."""
    from segkit.tuning import TableEntry, TuningTable

    entry = TableEntry(gpu="G", spec="rmsnorm_fwd", config="sweep_4096x1024", signature="4096x1024 bfloat16",
                       formulation="fwd_rows", chunk=8, bookend="none", us=1.0)
    table = TuningTable([entry])
    assert big_shapes.tuned_already(table, "G", "rmsnorm_fwd", "sweep_4096x1024")
    assert not big_shapes.tuned_already(table, "H", "rmsnorm_fwd", "sweep_4096x1024")
    assert not big_shapes.tuned_already(table, "G", "layernorm_fwd", "sweep_4096x1024")
    assert not big_shapes.tuned_already(table, "G", "rmsnorm_fwd", "sweep_16384x1024")


def test_skip_tuned_needs_the_table_it_skips_by(capsys):
    with pytest.raises(SystemExit):
        big_shapes.main(["--cases", "rmsnorm_fwd:sweep_4096x1024", "--skip-tuned"])
    assert "--skip-tuned skips the cases --out already holds" in capsys.readouterr().err
