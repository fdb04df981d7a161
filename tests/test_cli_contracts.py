"""The command line's contracts (issue 53; docs/cli.md, "Contracts"), held over EVERY subcommand by walking the
parsers, so that a new command or option that skips one fails here:

1. output safety: every path option is a declared input or output; no output is an input (resolved, links
   included), no output directory rewrites an input in it, and an output directory is new, empty or segkit's own;
2. every option goes through a validated argument type (``segkit_cli.argtypes``);
3. with ``--format json|csv`` stdout holds only the data;
4. the options an error message suggests exist on the command that shows it, and every command that takes a
   repro script takes ``--fusion``.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import json
import os
import re
from pathlib import Path

import pytest

from segkit.output_dirs import MARKER
from segkit_cli import argtypes, contracts
from segkit_cli.main import build_parser, main
from tests.cli_run import cli as _cli, one_line as _line
from tests.bad_input_scripts import SOFTMAX
from tests.conftest import DATA, ROOT

LEAVES = contracts.leaf_parsers(build_parser())
FLAGS = (argparse._HelpAction, argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._StoreConstAction,
         argparse._VersionAction, argparse._SubParsersAction)
#: Arguments that are not segkit's to validate: the command `segkit profile` runs, given after "--".
PASSTHROUGH = {(("profile",), "cmd")}
TORCH_TRACE = DATA / "traces" / "workload_torch.json.gz"
THUNDER = sorted((DATA / "thunder_traces").glob("*.py"))


def _id(words) -> str:
    return " ".join(words)


def _options(parser):
    return [a for a in parser._actions if not isinstance(a, FLAGS) and (a.option_strings or a.nargs != 0)]






# --------------------------------------------------------------------------- 2. every option validated
@pytest.mark.parametrize("words", LEAVES, ids=_id)
def test_every_option_goes_through_a_validated_type(words):
    parser = LEAVES[words]
    bad = []
    for a in _options(parser):
        if (words, a.dest) in PASSTHROUGH or (a.choices is not None and a.type is None):
            continue  # argparse itself refuses a value outside the choices
        if argtypes.contract_of(a.type) is None:
            bad.append(f"{contracts.flag(a)} (type={getattr(a.type, '__name__', a.type)})")
    assert not bad, f"segkit {_id(words)}: options without a segkit_cli.argtypes type: {', '.join(bad)}"


_PATHLIKE = re.compile(r"\b(file|files|directory|dir|path|paths|write|writes|written|STEM|OUT|DIR|FILE|TABLE|"
                       r"[A-Za-z]+\.(json|html|png|py|csv))\b")


@pytest.mark.parametrize("words", LEAVES, ids=_id)
def test_a_path_valued_option_is_a_declared_input_or_output(words):
    """An option whose name, metavar or help speaks of a file or directory has an input or output type."""
    bad = []
    for a in _options(LEAVES[words]):
        contract = argtypes.contract_of(a.type)
        said = " ".join(str(x) for x in (a.dest, a.metavar, a.help) if x)
        if (words, a.dest) not in PASSTHROUGH and (contract is None or contract.role == "value") and \
                _PATHLIKE.search(said.replace("_", " ")):
            bad.append(contracts.flag(a))
    assert not bad, f"segkit {_id(words)}: path-like options not declared input or output: {bad}"


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e400", "", "x"])
def test_numbers_refuse_what_would_silently_change_a_listing(capsys, value):
    got, _, err = _cli(capsys, ["trace", "idle", TORCH_TRACE, "--top", value])
    assert got == 2 and "argument --top" in _line(err)
    got, _, err = _cli(capsys, ["trace", "idle", TORCH_TRACE, "--min-us", value])
    assert got == 2 and "argument --min-us" in _line(err)


@pytest.mark.parametrize("argv", [["trace", "show", TORCH_TRACE, "--range", ""],
                                  ["trace", "idle", TORCH_TRACE, "--step", ""],
                                  ["repro", DATA / "minimized" / "gqa_k_nvfuser.py", "--fusion", ""],
                                  ["regions", *THUNDER, "--gpu", "h100\nh200"]], ids=["range", "step", "fusion", "gpu"])
def test_names_are_not_empty_and_one_line(capsys, argv):
    got, _, err = _cli(capsys, argv)
    assert got == 2 and "argument --" in _line(err)


@pytest.mark.parametrize("argv, code, words", [
    (["trace", "idle", TORCH_TRACE, "--step", "nosuch"], 2, "--step 'nosuch': no range named so"),
    (["regions", THUNDER[0], THUNDER[0]], 2, "is given twice"),
    (["fuzz", "--replay", "{tmp}", "-o", "{tmp}/x"], 2, "--replay runs no campaign: leave out --output"),
    (["fuzz", "--emit", "{tmp}/s.py", "--minutes", "1", "--resume"], 2, "leave out --minutes, --resume"),
    (["fuzz", "--fusion", "f", "--max-cases", "1"], 2, "--fusion goes with --emit"),
    (["fuzz", "--replay", "{tmp}", "--target", "reference"], 1, "index.json: the findings index is not JSON"),
    (["tune", "rmsnorm_fwd:nanogpt", "--reference", "--fusion", "f"], 2, "--fusion f: picks a fusion of a repro"),
    (["tune", "--merge", "{tmp}/s.py", "--fusion", "f"], 2, "leave out --fusion"),
], ids=["idle-step", "regions-twice", "replay-o", "emit-campaign", "fusion-no-emit", "replay-bad-index",
        "tune-spec-fusion", "merge-fusion"])
def test_no_option_is_silently_ignored_or_counted_twice(tmp_path, capsys, argv, code, words):
    (tmp_path / "s.py").write_text(SOFTMAX)
    (tmp_path / "index.json").write_text("{nope")
    got, _, err = _cli(capsys, [str(a).format(tmp=tmp_path) for a in argv])
    assert got == code and words in _line(err), err


# --------------------------------------------------------------------------- 1. output safety
def _actions(parser, role):
    return [a for a in _options(parser) if (c := argtypes.contract_of(a.type)) is not None and c.role == role]


def _sample(contract, path: Path) -> Path:
    """Put a valid input of ``contract``'s kind at ``path``."""
    if contract.kind == "dir":
        path.mkdir(parents=True, exist_ok=True)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SOFTMAX)
    return path


def _accepts(argtype, path: Path) -> bool:
    try:
        argtype(str(path))
        return True
    except argparse.ArgumentTypeError:
        return False


def _argv(words, parser, tmp: Path, given: dict) -> list[str]:
    """``segkit WORDS`` with ``given`` ({action: value}) and every other required argument filled with a sample."""
    argv = [*words]
    for k, a in enumerate(_options(parser)):
        if a in given:
            value = given[a]
        elif a.nargs == argparse.REMAINDER:
            continue
        elif a.required or (not a.option_strings and a.nargs not in ("?", "*", argparse.REMAINDER)):
            c = argtypes.contract_of(a.type)
            suffix = ".json" if a.type is argtypes.trace_file else ".py"
            value = _sample(c, tmp / f"other{k}{'' if c.kind == 'dir' else suffix}") if c.role == "input" else \
                tmp / f"out{k}"
            if a.type is argtypes.trace_file:  # a trace is read by its bytes: an empty chrome trace
                value.write_text('{"traceEvents": []}')
        else:
            continue
        argv += [*(a.option_strings[:1]), str(value)]
    return argv


PAIRS = [(w, o, i) for w, p in LEAVES.items() for o in _actions(p, "output") for i in _actions(p, "input")
         if argtypes.contract_of(o.type).kind != "dir" and argtypes.contract_of(i.type).kind == "file"]


@pytest.mark.parametrize("words, out, inp", PAIRS,
                         ids=[f"{_id(w)} {contracts.flag(o)}={contracts.flag(i)}" for w, o, i in PAIRS])
def test_an_output_that_is_an_input_is_refused_before_anything_runs(tmp_path, capsys, words, out, inp):
    """Each output file option of each command, given the path of each of its input options: exit 2, one line
    naming both, the input untouched."""
    contract = argtypes.contract_of(out.type)
    for suffix in (".json", ".py", ".png"):  # a name both types accept (a trace must end in .json, a plot in .png)
        value = tmp_path / ("clash" if contract.kind == "stem" else f"clash{suffix}")
        shared = contract.written(value)[0]  # a stem: the first picture it draws
        _sample(argtypes.contract_of(inp.type), shared)
        if _accepts(inp.type, shared) and _accepts(out.type, value):
            break
        shared.unlink()
    else:
        pytest.skip("no name is both a valid input and a valid output here")
    before = shared.read_bytes()
    got, stdout, err = _cli(capsys, _argv(words, LEAVES[words], tmp_path, {out: value, inp: shared}))
    line = _line(err)
    assert got == 2 and contracts.flag(out) in line and contracts.flag(inp) in line and "is the input" in line, line
    assert shared.read_bytes() == before and stdout == ""


OUT_DIRS = [(w, o) for w, p in LEAVES.items() for o in _actions(p, "output")
            if argtypes.contract_of(o.type).kind == "dir"]


@pytest.mark.parametrize("words, out", OUT_DIRS, ids=[f"{_id(w)} {contracts.flag(o)}" for w, o in OUT_DIRS])
def test_an_output_directory_holding_the_users_files_is_refused(tmp_path, capsys, words, out):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "summary.md").write_text("my notes")
    (mine / "f001_mytest.py").write_text("my test")
    got, stdout, err = _cli(capsys, _argv(words, LEAVES[words], tmp_path, {out: mine}))
    line = _line(err)
    assert got == 2 and contracts.flag(out) in line and "give a new or empty directory" in line
    assert sorted(p.name for p in mine.iterdir()) == ["f001_mytest.py", "summary.md"]
    assert (mine / "summary.md").read_text() == "my notes" and stdout == ""


def test_fuzz_on_a_folder_of_the_users_own_files_keeps_them(tmp_path, capsys, monkeypatch):
    """The issue's case: -o on a folder with the user's summary.md and f001_mytest.py, no campaign."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "summary.md").write_text("my notes")
    (mine / "f001_mytest.py").write_text("my test")
    campaign = ["--target", "reference", "--workers", "0", "--max-cases", "1", "--quiet"]
    got, _, err = _cli(capsys, ["fuzz", "-o", mine, *campaign])
    assert got == 2 and "holds files segkit did not write (f001_mytest.py, summary.md" in _line(err)
    assert (mine / "summary.md").read_text() == "my notes" and (mine / "f001_mytest.py").read_text() == "my test"
    monkeypatch.chdir(tmp_path)  # the default -o, findings, is held to the same rule (by the campaign itself)
    mine.rename(tmp_path / "findings")
    got, _, err = _cli(capsys, ["fuzz", *campaign])
    assert got == 2 and "holds files segkit did not write" in _line(err)
    assert (tmp_path / "findings" / "f001_mytest.py").read_text() == "my test"


def test_regions_html_over_its_profile_is_refused(tmp_path, capsys):
    profile = tmp_path / "p.json.gz"
    profile.write_bytes(TORCH_TRACE.read_bytes())
    got, out, err = _cli(capsys, ["regions", *THUNDER, "--profile", profile, "--html", profile])
    assert got == 2 and "--html" in _line(err) and "--profile" in _line(err) and out == ""
    assert profile.read_bytes() == TORCH_TRACE.read_bytes()


def test_links_to_an_input_are_the_input(tmp_path, capsys):
    script = tmp_path / "s.py"
    script.write_text(SOFTMAX)
    (tmp_path / "soft").symlink_to(script)
    os.link(script, tmp_path / "hard.py")
    for out in ("soft", "hard.py", "sub/../s.py"):
        (tmp_path / "sub").mkdir(exist_ok=True)
        got, _, err = _cli(capsys, ["report", script, "-o", tmp_path / out])
        assert got == 2 and "is the input TARGET" in _line(err)
    script.rename(tmp_path / "s.svg")  # a script named like a picture the stem draws
    got, _, err = _cli(capsys, ["segments", tmp_path / "s.svg", "--plot", tmp_path / "s"])
    assert got == 2 and "--plot" in _line(err) and "s.svg" in _line(err)


def test_an_output_directory_does_not_rewrite_an_input_in_it(tmp_path, capsys):
    camp = tmp_path / "camp"
    camp.mkdir()
    (camp / MARKER).write_text("written by segkit fuzz\n")
    (camp / "f001_mismatch.py").write_text(SOFTMAX)
    got, _, err = _cli(capsys, ["fuzz", "--emit", camp / "f001_mismatch.py", "-o", camp])
    assert got == 2 and "would rewrite the input --emit" in _line(err)
    # a directory's own names only: CSV tables beside the trace they come from are fine
    run = tmp_path / "run"
    run.mkdir()
    (run / MARKER).write_text("written by segkit profile\n")
    (run / "trace.json.gz").write_bytes(TORCH_TRACE.read_bytes())
    got, out, err = _cli(capsys, ["trace", "show", run / "trace.json.gz", "--format", "csv", "--csv-dir", run])
    assert got == 0 and (run / "kernels.csv").exists() and out == ""


def test_an_output_directory_segkit_makes_is_marked_and_can_be_written_again(tmp_path, capsys):
    out = tmp_path / "tables" / "sub"
    argv = ["trace", "show", TORCH_TRACE, "--format", "csv", "--csv-dir", out]
    assert _cli(capsys, argv)[0] == 0
    assert (out / MARKER).read_text() == "written by segkit trace show\n" and (out / "kernels.csv").exists()
    assert _cli(capsys, argv)[0] == 0  # its own directory
    # a command that fails leaves no directory behind
    got, _, err = _cli(capsys, ["trace", "show", TORCH_TRACE, "--csv-dir", tmp_path / "new" / "d"])
    assert got == 2 and "--csv-dir goes with --format csv" in _line(err) and not (tmp_path / "new").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    got, _, _ = _cli(capsys, ["trace", "show", TORCH_TRACE, "--csv-dir", empty])
    assert got == 2 and not any(empty.iterdir())  # an empty directory of the user's stays as it was


def test_a_campaign_directory_is_marked_and_resumes_with_or_without_the_marker(tmp_path, capsys):
    out = tmp_path / "findings"
    campaign = ["fuzz", "-o", out, "--target", "reference", "--workers", "0", "--max-cases", "1", "--quiet"]
    assert _cli(capsys, campaign)[0] == 0 and (out / MARKER).exists()
    (out / MARKER).unlink()  # a campaign written before the marker existed: its index.json marks it
    (out / "f009_mynotes.py").write_text("mine")  # a user's file in it: not a name a finding gets
    assert _cli(capsys, [*campaign, "--resume"])[0] == 0
    assert (out / MARKER).exists() and (out / "f009_mynotes.py").read_text() == "mine"
    assert json.loads((out / "index.json").read_text())["cases"] == 2


# --------------------------------------------------------------------------- 3. pure machine-readable output
#: A real small input for every command that has --format (or --json): argv after the command's words, with
#: {tmp} for a scratch directory. Every output option is given too, so its message is seen.
MACHINE = {
    ("trace", "show"): [TORCH_TRACE],
    ("trace", "compare"): [TORCH_TRACE, TORCH_TRACE, "--plot", "{tmp}/cmp.png"],
    ("trace", "idle"): [TORCH_TRACE, "--min-us", "0"],
    ("trace", "breakdown"): [TORCH_TRACE, TORCH_TRACE, "--whole"],
    ("regions",): [*THUNDER, "--profile", TORCH_TRACE, "--html", "{tmp}/r.html", "--step-ms", "5"],
}


def _formats(parser) -> list[str]:
    for a in parser._actions:
        if a.dest == "format":
            return [f for f in a.choices if f in ("json", "csv")]
        if "--json" in a.option_strings:
            return ["--json"]
    return []


MACHINE_CASES = [(w, f) for w, p in LEAVES.items() for f in _formats(p)]


def test_every_command_with_machine_output_has_a_real_input():
    missing = {w for w, _ in MACHINE_CASES} - set(MACHINE)
    assert not missing, f"add a real small input to MACHINE for: {sorted(missing)}"


@pytest.mark.parametrize("words, fmt", MACHINE_CASES, ids=[f"{_id(w)} {f}" for w, f in MACHINE_CASES])
def test_machine_readable_stdout_is_only_the_data(tmp_path, capfd, words, fmt):
    argv = [*words, *(str(a).format(tmp=tmp_path) for a in MACHINE[words])]
    argv += [fmt] if fmt == "--json" else ["--format", fmt]
    assert main(argv) == 0
    out, err = capfd.readouterr()
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(out)))
        assert rows and len({len(r) for r in rows}) == 1, out[-500:]
    else:
        json.loads(out)
    if any("{tmp}" in str(a) for a in MACHINE[words]):
        assert "wrote" in err or "plot" in err  # the message went to stderr


# --------------------------------------------------------------------------- 4. advice that works
SCRIPT_TYPES = (argtypes.script, argtypes.script_or_spec)


@pytest.mark.parametrize("words", LEAVES, ids=_id)
def test_every_command_taking_a_repro_script_takes_fusion(words):
    parser = LEAVES[words]
    if any(a.type in SCRIPT_TYPES for a in parser._actions):
        assert "--fusion" in parser._option_string_actions, f"segkit {_id(words)} takes a script but no --fusion"


def test_a_script_with_two_fusions_can_be_chosen_on_every_command_that_takes_one(tmp_path, capsys):
    two = tmp_path / "two.py"
    two.write_text(SOFTMAX.replace("with FusionDefinition() as fd:\n    nvfuser_fusion_id0(fd)\n", "")
                   .replace("fd.execute(inputs)\n", "") + "\ndef second(fd):\n"
                   "    t = fd.define_tensor(shape=[8, 16], contiguity=[True, True], dtype=DataType.Float)\n"
                   "    fd.add_output(fd.ops.exp(t))\n")
    got, _, err = _cli(capsys, ["repro", two])
    line = _line(err)
    assert got == 1 and "--fusion NAME" in line
    for argv in (["repro", two], ["reuse", two], ["segments", two], ["report", two, "-o", tmp_path / "r.html"],
                 ["tune", two, "--reference", "--budget", "1"], ["fuzz", "--emit", two]):
        got, _, err = _cli(capsys, [*argv, "--fusion", "second"])
        assert got == 0, err


_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
#: Options of other programs that messages name (nsys, the sweep tool).
FOREIGN = {"--type", "--trace", "--force-overwrite", "--print-gpu-trace", "--each"}
#: The modules outside segkit_cli.commands whose messages suggest options, and which commands show them ("script":
#: every command that takes a repro script). A new message suggesting an option in another module needs a row.
ADVICE = {
    "segkit/repro/load.py": "script", "segkit_cli/targets.py": "script",
    "segkit/fuzz/campaign.py": [("fuzz",)], "segkit/fuzz/targets.py": [("fuzz",)],
    "segkit/tuning/search.py": [("tune",)], "segkit/tuning/table.py": [("tune",)], "fusions/tune.py": [("tune",)],
    "fusions/spec.py": [("tune",)], "segkit/regions/analysis.py": [("regions",)],
    "segkit/trace/breakdown.py": [("trace", "breakdown"), ("trace", "compare")],
    "segkit/trace/report.py": [("trace", "show"), ("trace", "compare"), ("trace", "idle"), ("trace", "breakdown")],
    "segkit/trace/record.py": [("profile",)], "segkit/segments.py": [("segments",)],
    "segkit/cli/argtypes.py": [("bookend",)], "segkit_cli/main.py": [()],
    # the layer suggests --force only on a command that has it (Parser.add_force), --help on any
    "segkit/cli/parser.py": [], "segkit/cli/contracts.py": [],
}


def _suggested(path: Path) -> set[str]:
    """The options the strings of a module name (docstrings left out)."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return {o for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in docs for o in _OPTION.findall(n.value)} - FOREIGN


def _has(words: tuple[str, ...], option: str) -> bool:
    top = build_parser()
    return option in top._option_string_actions or option == "--help" or (
        words in LEAVES and option in LEAVES[words]._option_string_actions)


@pytest.mark.parametrize("module", sorted((ROOT / "segkit_cli" / "commands").glob("[!_]*.py")), ids=lambda p: p.stem)
def test_options_a_command_suggests_exist_on_it(module):
    mine = [w for w in LEAVES if w[0] == module.stem]
    bad = [o for o in _suggested(module) if not any(_has(w, o) for w in mine)]
    assert not bad, f"segkit {module.stem}'s messages suggest options it does not have: {bad}"


def test_options_the_library_suggests_exist_on_the_commands_that_show_them():
    scripts = [w for w, p in LEAVES.items() if any(a.type in SCRIPT_TYPES for a in p._actions)]
    bad, unregistered = [], []
    for path in [*sorted((ROOT / "segkit").rglob("*.py")), *sorted((ROOT / "fusions").rglob("*.py")),
                 *(ROOT / "segkit_cli").glob("*.py")]:
        rel = str(path.relative_to(ROOT))
        options = _suggested(path)
        if not options:
            continue
        if rel not in ADVICE:
            unregistered.append(f"{rel}: {sorted(options)}")
            continue
        shown_by = scripts if ADVICE[rel] == "script" else ADVICE[rel]
        bad += [f"{rel}: {o} (segkit {_id(w)})" for o in options for w in shown_by if not _has(w, o)]
    assert not unregistered, f"messages suggest options; say in ADVICE which commands show them: {unregistered}"
    assert not bad, f"suggested options the command does not have: {bad}"
