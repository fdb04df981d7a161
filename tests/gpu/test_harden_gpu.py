"""Issue 19 on nvFuser: identical outputs holding -Inf and NaN compare equal through segkit.check, the
check hook's comparison and `segkit check`/`segkit bookend` (log(0) and 0/0 on an all-zero input); the
legacy `dtype=DataType.Null` reductions replay; `--dtype-tol` is validated before anything runs."""

from __future__ import annotations

import pytest
import torch

import segkit
from segkit_cli.main import main as cli_main
from tests.bad_input_scripts import LOG_ZERO, SOFTMAX

pytestmark = pytest.mark.gpu


def test_check_with_inf_and_nan_on_nvfuser(record):
    repro = segkit.load_repro(LOG_ZERO)
    inputs = repro.make_inputs("cuda")
    report = segkit.check(repro.fd, inputs)
    record({"test": "harden_check_inf_nan", "report": str(report)})
    assert report.ok, str(report)
    assert "32 -inf" in str(report) and "32 nan" in str(report)
    for policy in ("outputs", "inputs+outputs"):
        for realization in ("segment_set", "host"):
            r = segkit.check(repro.fd, inputs, policy=policy, realization=realization)
            assert r.ok, str(r)


def test_legacy_softmax_with_dtype_null_runs_on_nvfuser():
    repro = segkit.load_repro(SOFTMAX)
    x = repro.make_inputs("cuda")
    assert segkit.check(repro.fd, x).ok
    torch.testing.assert_close(segkit.run_nvfuser(repro.fd, x).outputs[0], torch.softmax(x[0], dim=1))


def test_cli_check_and_bookend_with_inf_and_nan(tmp_path, capsys):
    script = tmp_path / "log_zero.py"
    script.write_text(LOG_ZERO)
    assert cli_main(["check", str(script), "--dtype-tol", "fp32=1e-5", "--policy", "inputs+outputs"]) == 0
    assert cli_main(["bookend", str(script), "--policy", "inputs+outputs", "--realize", "host"]) == 0
    assert cli_main(["check", str(script), "--dtype-tol", "bf16=abc"]) == 2
    out = capsys.readouterr().out
    assert "MISMATCH" not in out and "WRONG" not in out
