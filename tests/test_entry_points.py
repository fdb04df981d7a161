"""Every command line of the repository is built through one layer, ``segkit.cli`` (issue 76 item 1): the entry
points are FOUND (each module of the product packages and scripts/ with an ``if __name__ == "__main__":`` block,
a package's ``__main__.py`` by the module it runs), IMPORTED, and their parsers walked. An entry point fails here
when it has no ``build_parser()`` giving a ``segkit.cli.parser.Parser`` (subcommands included), when its ``main``
does not run through ``segkit.cli.entry.run`` (or, for ``segkit``, the contracts), when an option's type carries no
contract (``segkit.cli.argtypes``), or when an option that speaks of a file or directory is not a declared input
or output. Nothing in the repository builds an ``argparse.ArgumentParser`` but the layer itself.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import re
from pathlib import Path

import pytest

from segkit.cli import argtypes, contracts
from segkit.cli.parser import Parser
from tests.conftest import ROOT

SCANNED = ("segkit", "segkit_cli", "fusions", "thunder_exec", "sweep", "benchmarks", "scripts", "examples")
#: Entry points that are no command line of the user's, each with why.
INTERNAL = {"segkit/trace/torch_run.py": "the child process `segkit profile` starts, its arguments checked there"}
FLAGS = (argparse._HelpAction, argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._StoreConstAction,
         argparse._VersionAction, argparse._SubParsersAction)
_PATHLIKE = re.compile(r"\b(file|files|directory|dir|path|paths|write|writes|written|STEM|OUT|DIR|FILE|"
                       r"[A-Za-z_]+\.(json|jsonl|md|html|png|py|csv|txt|sqlite))\b(?!')")
_OPTION = re.compile(r"--[\w-]+")


def _files():
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "__pycache__" not in path.parts and not path.relative_to(ROOT).parts[1:2] == ("data",):
                yield path


def _is_main_block(node: ast.stmt) -> bool:
    return (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"
            and any(isinstance(c, ast.Constant) and c.value == "__main__" for c in node.test.comparators))


def _module_of(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)


def entry_points() -> dict[str, Path]:
    """module name -> file of every entry point found in the tree (a package's __main__.py: the module whose
    ``main`` it runs)."""
    found = {}
    for path in _files():
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text())
        if path.name == "__main__.py":
            runs = [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                    and any(a.name == "main" for a in n.names)]
            assert runs, f"{rel}: a __main__.py that runs no module's main"
            found[runs[0]] = ROOT / Path(*runs[0].split(".")).with_suffix(".py")
        elif any(_is_main_block(n) for n in tree.body) and rel not in INTERNAL:
            found[_module_of(path)] = path
    return found


ENTRY_POINTS = entry_points()


def _load(module: str, path: Path):
    if module.startswith(("scripts.", "examples.")):  # scripts and examples are files run by path, not packages
        spec = importlib.util.spec_from_file_location(f"_entry_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    return importlib.import_module(module)


def _options(parser: argparse.ArgumentParser):
    return [a for a in parser._actions if not isinstance(a, FLAGS) and (a.option_strings or a.nargs != 0)]


def _all_parsers(parser: argparse.ArgumentParser, words: tuple[str, ...] = ()):
    """``parser`` and every subcommand's parser under it (the levels between included: their options count)."""
    yield words, parser
    sub = contracts.subparsers_of(parser)
    for word, p in (sub.choices.items() if sub is not None else ()):
        yield from _all_parsers(p, words + (word,))


def problems(parser: argparse.ArgumentParser, name: str) -> list[str]:
    """What in ``parser`` (all its subcommands) skips the layer: a parser not built as a segkit.cli Parser, an
    option whose type has no contract, a path-like option that is no declared input or output."""
    bad = []
    for words, leaf in _all_parsers(parser):
        where = " ".join((name, *words))
        if not isinstance(leaf, Parser):
            bad.append(f"{where}: a {type(leaf).__name__}, not a segkit.cli.parser.Parser")
        for a in _options(leaf):
            if a.nargs == argparse.REMAINDER and a.type is None:
                continue  # another program's arguments (after --), passed through
            if a.choices is not None and a.type is None:
                continue  # argparse refuses a value outside the choices
            contract = argtypes.contract_of(a.type)
            if contract is None:
                bad.append(f"{where} {contracts.flag(a)}: type {getattr(a.type, '__name__', a.type)} has no contract")
                continue
            said = _OPTION.sub("", " ".join(str(x) for x in (a.dest, a.metavar, a.help) if x)).replace("_", " ")
            if contract.role == "value" and _PATHLIKE.search(said):
                bad.append(f"{where} {contracts.flag(a)}: speaks of a path but is no declared input or output")
    return bad


def test_the_entry_points_are_found():
    """The walk finds the tools a contributor and the gate run (a renamed or lost one shows here)."""
    for module in ("segkit_cli.main", "benchmarks.gate", "benchmarks.summarize", "benchmarks.report",
                   "benchmarks.cut_evidence", "benchmarks.model_step", "sweep.launch"):
        assert module in ENTRY_POINTS, sorted(ENTRY_POINTS)


@pytest.mark.parametrize("module", sorted(ENTRY_POINTS))
def test_every_entry_point_is_built_through_the_layer(module):
    mod = _load(module, ENTRY_POINTS[module])
    assert callable(getattr(mod, "build_parser", None)), f"{module}: no build_parser() (build it on segkit.cli)"
    parser = mod.build_parser()
    assert isinstance(parser, Parser), f"{module}: build_parser() gives a {type(parser).__name__}"
    assert not problems(parser, module), problems(parser, module)
    source = ENTRY_POINTS[module].read_text()
    assert "entry.run(" in source or "contracts.check(" in source, \
        f"{module}: its main does not run through segkit.cli.entry.run (checks, one-line errors, Ctrl-C)"


def test_nothing_builds_an_argparse_parser_but_the_layer():
    bad = []
    for path in _files():
        rel = str(path.relative_to(ROOT))
        if rel.startswith("segkit/cli/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) \
                    == "ArgumentParser":
                bad.append(f"{rel}:{node.lineno}")
    assert not bad, f"argparse parsers built outside segkit.cli (use segkit.cli.parser.Parser): {bad}"


def test_the_walk_fails_on_an_option_or_a_parser_that_skips_the_layer():
    """The check itself: an untyped path option, a plain int, an argparse subparser each fail it."""
    p = Parser(prog="tool")
    p.add_argument("--out", help="the file it writes")
    p.add_argument("--n", type=int)
    p.add_argument("--name", type=argtypes.name, help="where the table file goes")
    sub = p.add_subparsers(dest="cmd", parser_class=argparse.ArgumentParser)
    sub.add_parser("plain")
    got = problems(p, "tool")
    assert any("--out: type None has no contract" in g for g in got), got
    assert any("--n: type int has no contract" in g for g in got), got
    assert any("--name: speaks of a path" in g for g in got), got
    assert any("tool plain: a ArgumentParser" in g for g in got), got
    good = Parser(prog="tool")
    good.add_argument("--out", type=argtypes.output_file, help="the file it writes")
    assert problems(good, "tool") == []


def test_no_entry_point_reads_sys_argv_itself():
    """A script that reads ``sys.argv`` skips every check (types, inputs and outputs): only segkit's own runners
    of a user's script set it."""
    allowed = {"segkit/repro/script.py", "segkit/cli/entry.py", "segkit_cli/main.py", *INTERNAL}
    bad = []
    for path in _files():
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and \
                    node.value.attr == "argv" and getattr(node.value.value, "id", None) == "sys" and rel not in allowed:
                bad.append(f"{rel}:{node.lineno}")
    assert not bad, f"reads sys.argv[...] itself (build a parser on segkit.cli): {bad}"

