"""The folder tree is the layering: segkit/ imports no other project package, fusions/ only segkit, segkit_cli/
nothing from thunder_exec or benchmarks, thunder_exec/ no benchmarks, sweep/ only segkit; no import cycle between
project modules; no module of the product packages (the libraries, sweep, benchmarks) over 700 lines.

Inside segkit/ the modules keep an order too (``SEGKIT_ORDER``, lowest first): the IR and its data, the recording
frontend and reference interpreter, the nvFuser backend (segkit/nvfuser/), then the passes and tools over it
(bookend, check, segments, tune's search, fuzz, trace, regions ...). No import points from a group to one above it.

The lab (lab/: dated runs, explorations, probes, campaign bars, drivers) sits above the product: it may import
anything, and no product package, product driver or test imports it or reads a file under it (a string naming
``lab/...``, ``lab.x`` or ``"lab"`` in code; docstrings and comments may cite it). No file under benchmarks/ has a
dated name, and nothing outside lab/ cites a dated run folder at its old place (benchmarks' results folder).

Imports are read with ``ast`` from every file, module level and function-local, relative ones resolved, and an
``importlib.import_module("name")`` call with a literal name counts too. ``from pkg import name`` reaches
``pkg/__init__`` and, when ``name`` is a submodule, ``pkg.name`` as well (the stricter reading: it runs both).
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections import defaultdict, deque
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGES = ("segkit", "fusions", "segkit_cli", "thunder_exec", "sweep", "benchmarks")  # the product
LIBRARIES = ("segkit", "fusions", "segkit_cli", "thunder_exec")
CAPPED = (*LIBRARIES, "sweep", "benchmarks")  # the packages whose modules keep under MAX_LINES
LAB = "lab"  # above the product: imports anything; not scanned (its imports are free), only forbidden below it
MAX_LINES = 700
# The project packages each package may import (itself included): each layer only those below it. None the lab.
MAY_IMPORT = {
    "segkit": {"segkit"},
    "fusions": {"segkit", "fusions"},
    "segkit_cli": {"segkit", "fusions", "segkit_cli"},
    "thunder_exec": {"segkit", "fusions", "segkit_cli", "thunder_exec"},
    "sweep": {"segkit", "sweep"},
    "benchmarks": set(PACKAGES),
}
NOT_MODULES = {"__pycache__"}
# segkit's inner order, lowest first: a module may import its own group and those below it, none above. An entry is
# a module ("segkit" is the package's __init__, which imports nothing) or "pkg.*" (the package and all under it);
# a module no entry names belongs to the last group, above the backend.
SEGKIT_ORDER = (
    ("data", ("segkit", "segkit.errors", "segkit.dtypes", "segkit.ir", "segkit.args", "segkit.limits",
              "segkit.layout", "segkit.files", "segkit.results", "segkit.registry", "segkit.workloads",
              "segkit.output_dirs", "segkit.interrupts", "segkit.compare", "segkit.ops.*", "segkit.tuning",
              "segkit.tuning.table")),
    ("reference", ("segkit.interp", "segkit.replay", "segkit.printing", "segkit.frontend", "segkit.repro.*")),
    ("backend", ("segkit.nvfuser.*",)),
    ("above the backend", ()),  # alias, bookend, check, segments, tuning.search, fuzz, trace, regions, ...
)
# Product drivers and test folders scanned for lab imports and reads beside the packages (tests/data: recorded inputs).
TESTS = ("tests",)
SCRIPTS = ("scripts", "examples")
NOT_SCANNED = {"data", "__pycache__"}


@dataclass(frozen=True)
class Import:
    """One import statement's edge: ``source`` module reaches ``target`` (a project module, or the dotted name
    when no file of the tree has it) at ``line``."""

    source: str
    target: str
    line: int

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} (line {self.line})"


def _package(module: str) -> str:
    return module.split(".")[0]


@dataclass(frozen=True)
class ImportGraph:
    """The project modules of one tree (dotted name -> file) and every import between them."""

    files: dict[str, Path]
    imports: tuple[Import, ...]

    @property
    def packages(self) -> set[str]:
        return {_package(m) for m in self.files}

    def violations(self) -> list[Import]:
        """Imports of a project package the importing package's layer may not use (MAY_IMPORT)."""
        return [i for i in self.imports if _package(i.target) not in MAY_IMPORT[_package(i.source)]]

    def cycles(self) -> list[tuple[list[str], list[Import]]]:
        """Each strongly connected group of modules (sorted names) with one cycle through it, as its imports."""
        edges: dict[str, dict[str, Import]] = defaultdict(dict)
        for i in self.imports:
            if i.target in self.files and i.target != i.source:
                edges[i.source].setdefault(i.target, i)
        return [(group, _cycle_through(group, edges)) for group in _strongly_connected(self.files, edges)
                if len(group) > 1]

    def too_long(self, packages=CAPPED, limit: int = MAX_LINES) -> dict[str, int]:
        """Modules of ``packages`` longer than ``limit`` lines, with their length."""
        lengths = {m: len(p.read_text().splitlines()) for m, p in self.files.items() if _package(m) in packages}
        return {m: n for m, n in sorted(lengths.items()) if n > limit}


def segkit_group(module: str) -> int:
    """The index in SEGKIT_ORDER of a segkit module's group (the last group for a module no entry names)."""
    for n, (_, entries) in enumerate(SEGKIT_ORDER):
        for entry in entries:
            if module == entry.removesuffix(".*") or (entry.endswith(".*") and module.startswith(entry[:-1])):
                return n
    return len(SEGKIT_ORDER) - 1


def upward(graph: ImportGraph) -> list[Import]:
    """Imports between segkit modules that point from a group of SEGKIT_ORDER to one above it."""
    return [i for i in graph.imports if _package(i.source) == _package(i.target) == "segkit"
            and segkit_group(i.target) > segkit_group(i.source)]


def _strongly_connected(nodes, edges: dict[str, dict[str, Import]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit to meet)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, {}))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            for nxt in successors:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, {})))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    groups.append(sorted(group))
    return groups


def _cycle_through(group: list[str], edges: dict[str, dict[str, Import]]) -> list[Import]:
    """A shortest cycle from the group's first module back to itself, inside the group."""
    start, members = group[0], set(group)
    came_from: dict[str, Import] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt, imp in sorted(edges.get(node, {}).items()):
            if nxt not in members or nxt in came_from:
                continue
            came_from[nxt] = imp
            if nxt == start:
                path = [imp]
                while path[0].source != start:
                    path.insert(0, came_from[path[0].source])
                return path
            queue.append(nxt)
    raise AssertionError(f"no cycle through {group}")  # a strongly connected group always has one


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _reached(name: str, files: dict[str, Path]) -> str:
    """The project module an import of ``name`` runs: ``name`` itself or the nearest package above it that
    has a file (``from pkg.mod import f`` runs pkg.mod); ``name`` when none has."""
    probe = name
    while probe and probe not in files:
        probe = probe.rpartition(".")[0]
    return probe or name


def _literal_import_module(node: ast.Call) -> str | None:
    """``name`` of ``importlib.import_module("name")`` / ``import_module("name")`` / ``__import__("name")``."""
    fn = node.func
    called = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else None
    if called not in ("import_module", "__import__") or not node.args:
        return None
    arg = node.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and not arg.value.startswith("."):
        return arg.value
    return None


def _imported_names(node: ast.AST, module: str, is_package: bool, files: dict[str, Path]) -> list[str]:
    """The dotted module names one AST node imports (none for a node that is not an import)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        if node.level:
            package = module.split(".") if is_package else module.split(".")[:-1]
            base = ".".join(package[:len(package) - (node.level - 1)] + ([node.module] if node.module else []))
        else:
            base = node.module or ""
        if not base:
            return [a.name for a in node.names]
        return [base] + [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in files]
    if isinstance(node, ast.Call):
        name = _literal_import_module(node)
        return [name] if name else []
    return []


def scan(root: Path, packages=PACKAGES) -> ImportGraph:
    """Every .py file of ``packages`` under ``root`` (those that exist) and the project imports in each."""
    files: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            if not NOT_MODULES & set(path.relative_to(root).parts):
                files[module_name(root, path)] = path
    imports = []
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for name in _imported_names(node, module, is_package, files):
                target = _reached(name, files)
                if _package(target) in (*PACKAGES, LAB) and target != module:
                    imports.append(Import(module, target, node.lineno))
    return ImportGraph(files, tuple(sorted(set(imports), key=lambda i: (i.source, i.line, i.target))))


@pytest.fixture(scope="module")
def graph() -> ImportGraph:
    found = scan(ROOT)
    missing = set(PACKAGES) - found.packages
    assert not missing, f"the scanner found no module of {sorted(missing)} under {ROOT}"
    return found


@pytest.mark.parametrize("package", PACKAGES)
def test_each_package_imports_only_the_layers_below_it(graph, package):
    bad = [i for i in graph.violations() if _package(i.source) == package]
    allowed = ", ".join(sorted(MAY_IMPORT[package]))
    assert not bad, f"{package} may import only {allowed} among the project packages:\n" + "\n".join(
        f"  {graph.files[i.source].relative_to(ROOT)}:{i.line} imports {i.target}" for i in bad)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(graph, package):
    cycles = [(group, path) for group, path in graph.cycles() if any(_package(m) == package for m in group)]
    assert not cycles, f"import cycles through {package}:\n" + "\n".join(
        f"  {' -> '.join([path[0].source] + [f'{i.target} (line {i.line} of {i.source})' for i in path])}; "
        f"all of {', '.join(group)} reach each other" for group, path in cycles)


@pytest.mark.parametrize("package", CAPPED)
def test_no_module_over_the_line_limit(graph, package):
    assert not graph.too_long((package,)), f"modules over {MAX_LINES} lines: {graph.too_long((package,))}"


def test_no_segkit_import_points_up_its_inner_order(graph):
    bad = upward(graph)
    names = [name for name, _ in SEGKIT_ORDER]
    assert not bad, f"segkit's inner order is {' < '.join(names)} (SEGKIT_ORDER); these import a group above:\n" + \
        "\n".join(f"  {graph.files[i.source].relative_to(ROOT)}:{i.line} ({names[segkit_group(i.source)]}) imports "
                  f"{i.target} ({names[segkit_group(i.target)]})" for i in bad)


def test_every_segkit_order_entry_names_a_module(graph):
    stale = [e for _, entries in SEGKIT_ORDER for e in entries if e.removesuffix(".*") not in graph.files]
    assert not stale, f"SEGKIT_ORDER names modules that do not exist: {stale}"


def _plant(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_scanner_finds_a_planted_violation_cycle_and_long_module(tmp_path):
    _plant(tmp_path, {
        "segkit/__init__.py": "",
        # function-local relative import of a sibling, and a core module importing a workload package
        "segkit/a.py": "def f():\n    from .b import g\n    return g\n\n\ndef h():\n    import fusions.spec\n",
        # `from pkg import submodule` reaches the submodule (and pkg/__init__): closes a <-> b
        "segkit/b.py": "from segkit import a\n\n\ndef g():\n    return a\n",
        "segkit/long.py": "x = 1\n" * (MAX_LINES + 1),
        "segkit/sub/__init__.py": "",
        "segkit/sub/c.py": "from ..b import g  # resolved against segkit/sub: segkit.b\n",
        "fusions/__init__.py": "from segkit import b  # allowed: fusions sits on segkit\n",
        "fusions/spec.py": "import importlib\n\nimportlib.import_module('thunder_exec.x')\n",
        "thunder_exec/__init__.py": "from . import x\n",
        "thunder_exec/x.py": "from benchmarks.tool import run  # no such module: reaches benchmarks/__init__\n",
        "benchmarks/__init__.py": "",
        "benchmarks/long.py": "x = 1\n" * (MAX_LINES + 1),  # the cap holds beyond the libraries
    })
    g = scan(tmp_path)
    assert set(g.files) == {"segkit", "segkit.a", "segkit.b", "segkit.long", "segkit.sub", "segkit.sub.c", "fusions",
                            "fusions.spec", "thunder_exec", "thunder_exec.x", "benchmarks", "benchmarks.long"}
    assert [str(i) for i in g.violations()] == [
        "fusions.spec -> thunder_exec.x (line 3)",   # a literal import_module counts
        "segkit.a -> fusions.spec (line 7)",         # a function-local import counts
        "thunder_exec.x -> benchmarks (line 1)",
    ]
    assert [(group, [str(i) for i in path]) for group, path in g.cycles()] == [
        (["segkit.a", "segkit.b"], ["segkit.a -> segkit.b (line 2)", "segkit.b -> segkit.a (line 1)"])]
    assert g.too_long() == {"benchmarks.long": MAX_LINES + 1, "segkit.long": MAX_LINES + 1}
    assert Import("thunder_exec", "thunder_exec.x", 1) in g.imports  # `from . import x` in a package's __init__
    assert Import("segkit.sub.c", "segkit.b", 1) in g.imports


def test_the_inner_order_flags_a_planted_arrow_back_up(tmp_path):
    _plant(tmp_path, {
        "segkit/__init__.py": "",
        "segkit/ir.py": "",
        "segkit/frontend.py": "from segkit.nvfuser.runnable import NvProgram  # reference -> backend: up\n",
        "segkit/nvfuser/__init__.py": "",
        "segkit/nvfuser/runnable.py": "",
        "segkit/nvfuser/run.py": "from segkit.ir import Op  # down: fine\n\n\ndef f():\n    from segkit import bookend\n",
        "segkit/bookend.py": "from segkit.nvfuser.run import f  # above the backend -> backend: fine\n",
        "segkit/tuning/__init__.py": "",
        "segkit/tuning/search.py": "from segkit.bookend import f  # an unnamed module is above the backend\n",
    })
    g = scan(tmp_path, ("segkit",))
    assert [segkit_group(m) for m in ("segkit", "segkit.frontend", "segkit.nvfuser", "segkit.nvfuser.run",
                                      "segkit.tuning", "segkit.tuning.search")] == [0, 1, 2, 2, 0, 3]
    assert [str(i) for i in upward(g)] == [
        "segkit.frontend -> segkit.nvfuser.runnable (line 1)",
        "segkit.nvfuser.run -> segkit.bookend (line 5)",  # function-local, and a group above
    ]


# ---- the lab above the product --------------------------------------------------------------------------------

# A string in code that names a path or module under lab/: "lab" alone (ROOT / "lab"), "lab/...", "lab.x".
LAB_TEXT = re.compile(r"(?<![\w.-])lab(?:$|/|\.(?=[A-Za-z_]))")
# This file names the lab to forbid it (and plants trees that break the rules); it is the one not scanned.
RULE_FILE = Path(__file__).resolve()


def _product_and_test_sources(root: Path) -> list[Path]:
    """The Python files of the product packages, the product drivers (scripts/) and the tests (not tests/data)."""
    found = []
    for top in (*PACKAGES, *SCRIPTS, *TESTS):
        for path in sorted((root / top).rglob("*.py")):
            if not NOT_SCANNED & set(path.relative_to(root / top).parts) and path.resolve() != RULE_FILE:
                found.append(path)
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that stand alone as statements (docstrings and the like): they cite, not read."""
    return {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
            and isinstance(n.value.value, str)}


def lab_uses(root: Path) -> list[str]:
    """Every import of the lab and every string in code naming a path under it, in the product's and the tests'
    Python files and in the product's shell drivers (not in their comments), as 'file:line: what'."""
    found = []
    for path in _product_and_test_sources(root):
        rel = path.relative_to(root)
        module = module_name(root, path)
        tree = ast.parse(path.read_text(), str(path))
        cited = _docstrings(tree) | {id(n.args[0]) for n in ast.walk(tree) if isinstance(n, ast.Call)
                                     and _literal_import_module(n)}  # an import, found as one
        for node in ast.walk(tree):
            for name in _imported_names(node, module, path.name == "__init__.py", {}):
                if _package(name) == LAB:
                    found.append(f"{rel}:{node.lineno}: imports {name}")
            if (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in cited
                    and LAB_TEXT.search(node.value)):
                found.append(f"{rel}:{node.lineno}: reads {node.value!r}")
    for top in SCRIPTS:
        for path in sorted((root / top).rglob("*.sh")):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                code = re.sub(r"(^|\s)#.*", "", line)
                if LAB_TEXT.search(code):
                    found.append(f"{path.relative_to(root)}:{n}: runs {code.strip()!r}")
    return found


def tracked_files(root: Path) -> list[Path]:
    """The files git tracks under ``root`` (a checkout); every file but .git and virtual environments elsewhere."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True, timeout=60).stdout
        return [root / p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired):
        skip = {".git", ".venv", "__pycache__"}
        return [p for p in sorted(root.rglob("*")) if p.is_file() and not skip & set(p.relative_to(root).parts)]


DATED = re.compile(r"\d{4}-\d\d-\d\d")
# Where dated runs used to live (benchmarks' results folder), and a dated run folder cited relative to it.
OLD_RUNS = "benchmarks" + "/results/"
DATED_RUN = re.compile(r"(?<![\w/.-])results/[^\s`'\")]*" + DATED.pattern)


def dated_under_benchmarks(root: Path) -> list[str]:
    return [str(p.relative_to(root)) for p in tracked_files(root)
            if p.relative_to(root).parts[0] == "benchmarks" and DATED.search(str(p.relative_to(root)))]


def run_citations(root: Path) -> list[str]:
    """Lines of tracked text files outside lab/ that cite a dated run folder's old place, as 'file:line'."""
    found = []
    for path in tracked_files(root):
        rel = path.relative_to(root)
        if rel.parts[0] == LAB or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        try:
            text = data.decode()
        except UnicodeDecodeError:
            continue
        found += [f"{rel}:{n}" for n, line in enumerate(text.splitlines(), 1)
                  if OLD_RUNS in line or DATED_RUN.search(line)]
    return found


def test_no_product_package_driver_or_test_imports_or_reads_the_lab():
    found = lab_uses(ROOT)
    assert not found, "the lab sits above the product; the product and the tests may not import or read it " \
        "(a test's input is a trimmed copy under tests/data/):\n  " + "\n  ".join(found)


def test_no_dated_file_under_benchmarks():
    dated = dated_under_benchmarks(ROOT)
    assert not dated, "dated runs live under lab/runs/, not benchmarks/:\n  " + "\n  ".join(dated)


def test_nothing_outside_the_lab_cites_a_dated_run_folder():
    found = run_citations(ROOT)
    assert not found, f"dated runs live under lab/runs/<name>; cite them there, not as {OLD_RUNS}<name>:\n  " + \
        "\n  ".join(found)


def test_the_lab_rules_fail_on_a_planted_tree(tmp_path):
    lab_run = "lab/" + "runs/r/x.json"
    _plant(tmp_path, {
        "lab/__init__.py": "",
        "lab/explore/x.py": "import segkit\nimport benchmarks.harness  # the lab may import anything\n",
        "segkit/__init__.py": '"""Cites lab/runs/r in a docstring: allowed."""\n',
        "segkit/a.py": "def f():\n    from lab.explore import x  # a library importing the lab\n    return x\n",
        "sweep/__init__.py": "import importlib\n\nimportlib.import_module('lab.campaigns.targets')\n",
        "benchmarks/__init__.py": "",
        "benchmarks/data/run-2026-01-02.json": "{}\n",
        "benchmarks/README.md": f"see {OLD_RUNS}h100-2026-01-02/ and `{'results/' + 'h200-2026-01-03'}/`\n",
        "tests/test_a.py": "from tests.conftest import ROOT\n\nRUN = ROOT / 'lab' / 'runs'  # reads the lab\n",
        "tests/gpu/test_b_gpu.py": f"# a comment citing {lab_run} is fine\nPATH = '{lab_run}'\n",
        "tests/test_c.py": "import lab.campaigns.targets\n",
        "tests/data/recorded.py": "import lab  # a recorded input, not a test module\n",
        "scripts/gpu/d.sh": f"# python {lab_run} (a comment)\npython -m lab.campaigns.big_shapes --table x  # runs\n",
        "scripts/gpu/ok.sh": "python -m sweep --gpus all  # label.x, collab/ and lab_notes are not the lab\n",
        lab_run: f"{OLD_RUNS}r: the lab may cite anything\n",
        "README.md": "A lab/runs/r citation is fine; label.x too.\n",
    })
    assert [str(i) for i in scan(tmp_path).violations()] == [
        "segkit.a -> lab.explore (line 2)",
        "sweep -> lab.campaigns.targets (line 3)",
    ]
    assert lab_uses(tmp_path) == [
        "segkit/a.py:2: imports lab.explore",
        "sweep/__init__.py:3: imports lab.campaigns.targets",
        "tests/gpu/test_b_gpu.py:2: reads 'lab/runs/r/x.json'",
        "tests/test_a.py:3: reads 'lab'",
        "tests/test_c.py:1: imports lab.campaigns.targets",
        "scripts/gpu/d.sh:2: runs 'python -m lab.campaigns.big_shapes --table x'",
    ]
    assert dated_under_benchmarks(tmp_path) == ["benchmarks/data/run-2026-01-02.json"]
    assert run_citations(tmp_path) == ["benchmarks/README.md:1"]
