"""The fuzz loop on nvFuser: the differential run sees the known wrong result, and a short campaign runs."""

from __future__ import annotations

import pytest

import segkit
from segkit.fuzz import fuzz, run_case, target
from tests.conftest import DATA

pytestmark = pytest.mark.gpu


def test_run_case_sees_the_known_gqa_mismatch():
    repro = segkit.load_repro(DATA / "minimized" / "gqa_k_nvfuser.py")
    res = run_case(target("nvfuser"), repro.fd, repro.make_inputs("cuda"), ["plain"])
    assert res.status == "failed" and res.verdicts[0].status == "mismatch", res


def test_short_campaign_in_a_worker_process(tmp_path):
    s = fuzz("nvfuser", tmp_path, max_cases=6, seed=1, workers=1, progress=False, log=lambda m: None)
    assert s.cases == 6 and s.statuses.get("invalid", 0) == 0 and "gpu" in s.env
    assert (tmp_path / "index.json").exists() and (tmp_path / "summary.md").exists()
