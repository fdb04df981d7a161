"""Shared fixtures: paths to recorded data, and skipping GPU tests where they cannot run."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
# A GPU run's saved Thunder traces and torch.profiler profiles of the Llama-3-8B step (H100), trimmed to what
# tests read.
H100_STEP = DATA / "step_h100"
H200_STEP = DATA / "step_h200"
THUNDER_FIXTURES = sorted((DATA / "thunder").glob("*.py"))
SHARED_EXAMPLE = ROOT.parent / "shared" / "examples" / "nanogpt_layernorm_legacy_nvfuser.py"


def pytest_collection_modifyitems(config, items):
    from segkit.nvfuser.run import nvfuser_available

    if nvfuser_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA device and nvfuser_direct (run on the GPU host: pytest -m gpu)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def shared_example() -> Path:
    if not SHARED_EXAMPLE.exists():
        pytest.skip(f"the shared example is not beside this checkout ({SHARED_EXAMPLE.name})")
    return SHARED_EXAMPLE
