"""GPU test helpers: a place to record what nvFuser did (segments, kernels) for the closing notes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

@pytest.fixture
def record():
    """Record a dict of what nvFuser did: one JSON line appended to $SEGKIT_RECORD, if set."""

    def write(entry: dict) -> None:
        path = os.environ.get("SEGKIT_RECORD")
        if path:
            with Path(path).open("a") as f:
                f.write(json.dumps(entry) + "\n")

    return write


@pytest.fixture(autouse=True)
def _free_gpu_memory():
    yield
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
