"""GPU test helpers: a place to record what nvFuser did (segments, kernels) for the closing notes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

_RECORDS: list[dict] = []


@pytest.fixture
def record():
    """Append a dict to the run's record (written to $SEGKIT_RECORD as JSON at the end)."""
    return _RECORDS.append


@pytest.fixture(autouse=True)
def _free_gpu_memory():
    yield
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def pytest_sessionfinish(session, exitstatus):
    path = os.environ.get("SEGKIT_RECORD")
    if path and _RECORDS:
        Path(path).write_text(json.dumps(_RECORDS, indent=1))
