"""``segkit check`` resolves its TARGET once into a ``Target`` and passes it down; with ``--policy`` it checks the
fusion and both realizations of the policy against one run of the reference interpreter. The counts are taken
while the real loaders and the real interpreter run (nothing answered for them)."""

from __future__ import annotations

import importlib
from collections import Counter

import pytest
import torch

import segkit
from segkit.dtypes import DataType
from segkit.frontend import FusionDefinition
from segkit_cli import targets
from segkit_cli.commands.check import check_target
from tests.cli_run import cli
from tests.conftest import ROOT

CHECK = importlib.import_module("segkit.check")  # the module (``segkit.check`` the attribute is the function)
WORKLOAD = "layernorm_fwd:nanogpt_tiny"
SCRIPT = str(ROOT / "tests" / "data" / "minimized" / "gqa_k_nvfuser.py")
POLICY_LABELS = ["nvFuser", "nvFuser, bookend outputs / segment_set", "nvFuser, bookend outputs / host"]


class Calls(Counter):
    """Calls by function name, and what each reference run returned."""

    def __init__(self) -> None:
        super().__init__()
        self.outputs: list = []


@pytest.fixture
def counted(monkeypatch) -> Calls:
    """How often the target's resolution, its loaders, its inputs and the reference interpreter ran; the real
    functions do the work."""
    counts = Calls()

    def spy(owner, name, keep=False):
        real = getattr(owner, name)

        def counting(*args, **kwargs):
            counts[name] += 1
            got = real(*args, **kwargs)
            if keep:
                counts.outputs.append(got)
            return got

        monkeypatch.setattr(owner, name, counting)

    spy(targets, "resolve")
    spy(targets, "load_script")
    spy(targets, "_workload_fusion")
    spy(targets.Target, "inputs")
    spy(CHECK, "run_reference", keep=True)
    return counts


@pytest.mark.parametrize("given", [WORKLOAD, SCRIPT], ids=["workload", "script"])
def test_check_resolves_its_target_once(counted, capsys, given):
    code, out, err = cli(capsys, ["check", given, "--policy", "outputs"])
    assert counted["resolve"] == 1 and counted["load_script"] + counted["_workload_fusion"] == 1
    assert counted["load_script" if given == SCRIPT else "_workload_fusion"] == 1
    if not segkit.nvfuser_available():
        assert code == 1 and "needs a CUDA device and nvfuser_direct" in err  # resolved, then refused
        assert counted["inputs"] == counted["run_reference"] == 0
    else:
        assert counted["inputs"] == counted["run_reference"] == 1
        heads = [line for line in out.splitlines() if line and not line.startswith(" ")]  # one per report
        assert [h.split(" vs reference")[0].split(": ERROR")[0] for h in heads] == POLICY_LABELS


def test_a_bad_target_is_named_before_a_missing_nvfuser(counted, capsys):
    code, _, err = cli(capsys, ["check", "layernorm_fwd:nosuchconfig", "--policy", "outputs"])
    assert code == 2 and "has no config 'nosuchconfig'" in err and counted["resolve"] == 1


def test_a_target_knows_what_it_is_and_makes_its_inputs_on_a_device():
    workload, script = targets.resolve(WORKLOAD), targets.resolve(SCRIPT)
    assert (workload.kind, workload.config, workload.repro) == ("workload", "nanogpt_tiny", None)
    assert (script.kind, script.spec) == ("script", None) and script.fd is script.repro.fd
    for target in (workload, script):
        inputs = target.inputs("cpu")
        assert len(inputs) == len(target.fd.fusion.inputs)
        assert all(x.device.type == "cpu" for x in inputs if isinstance(x, torch.Tensor))


def test_policy_checks_three_reports_against_one_reference_run(counted):
    target = targets.resolve(WORKLOAD)
    reports = check_target(target, "cpu", "outputs", {})
    assert [r.label for r in reports] == POLICY_LABELS
    assert counted["inputs"] == 1 and counted["run_reference"] == 1
    (refs,) = counted.outputs  # the interpreter's real outputs: finite, one per fusion output
    assert len(refs) == len(target.fd.fusion.outputs) and all(torch.isfinite(r).all() for r in refs)
    if not segkit.nvfuser_available():
        assert all("nvfuser" in r.error.lower() for r in reports)  # the nvFuser side is a finding, not a crash


def test_the_shared_reference_gives_the_reports_one_check_per_report_gives(counted):
    target = targets.resolve(WORKLOAD)
    inputs = target.inputs("cpu")
    shared = CHECK.check_policy(target.fd, inputs, "outputs")
    assert counted["run_reference"] == 1
    one_by_one = [segkit.check(target.fd, inputs)] + [
        segkit.check(target.fd, inputs, policy="outputs", realization=r) for r in ("segment_set", "host")]
    assert counted["run_reference"] == 1 + 3  # what --policy cost before: one reference run per report
    assert [str(r) for r in shared] == [str(r) for r in one_by_one]
    assert [r.label for r in CHECK.check_policy(target.fd, inputs)] == ["nvFuser"]  # no policy: one report
    assert counted["run_reference"] == 5


def test_a_fusion_that_writes_its_input_leaves_the_callers_tensor_alone(counted):
    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.Float)
        fd.add_output(fd.ops.add(t0, 1.0), alias_input=t0)
    x = torch.zeros(8)
    reports = CHECK.check_policy(fd, [x], "outputs")
    assert len(reports) == 3 and counted["run_reference"] == 1
    assert torch.equal(x, torch.zeros(8))  # the reference wrote into its own copy
