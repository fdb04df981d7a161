"""Load a repro script without a GPU (printing a fusion back as a script is segkit.printing).

A repro script (nvFuser's ``fd.last_repro_script()``, Thunder's ``nv_save_fake_inputs``, a script pasted in an
issue thread, in any era's spelling: the pytorch fork's ``torch._C._nvfuser``, ``nvfuser``, ``nvfuser_direct``)
builds one or more fusions and runs them on some inputs. ``load_repro`` runs it the way Python would, against
the recording frontend and with nothing touching CUDA (segkit.repro.script), records every FusionDefinition it
builds, picks one (by name when there are several) and keeps how to rebuild its inputs (segkit.repro.inputs);
``Repro.make_inputs`` rebuilds them on any device.

The script runs in a child process (segkit.repro.isolate) under a wall-clock limit; what comes back is plain
data: the chosen fusion's IR and its inputs' recipes. Every entry that loads a script (``load_repro``, the
``segkit`` commands, fuzz, tune, the Thunder hooks) comes through here.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import linecache
import math
import os
import signal
import threading
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from segkit import limits
from segkit.args import checked
from segkit.errors import (FusionDefinitionError, InputMismatchError, ReproError, ResourceLimitError,
                           UnsupportedOpError, error_summary)
from segkit.frontend import FusionDefinition
from segkit.interp import as_fusion, random_inputs
from segkit.ir import Fusion
from segkit.repro.inputs import (InputParser, InputRecipe, captured_recipe, check_recipes, inputs_node, module_names,
                                 same_layout)
from segkit.repro.device import no_cuda
from segkit.repro.isolate import ChildDied, ChildOverran, run_isolated
from segkit.repro.script import (RecordedFusion, ScriptRun, TestHarness, fusion_functions, name_fusions, new_run,
                                 script_process, test_calls)
from segkit.repro.stubs import pasted_names, stubbed

__all__ = ["InputRecipe", "Repro", "SCRIPT_TIMEOUT_ENV", "load_repro", "read_script"]


@dataclass
class Repro:
    """A loaded repro script: the recorded fusion and how to rebuild its inputs."""

    fd: FusionDefinition
    recipes: list[InputRecipe] = field(default_factory=list)
    source: str = ""
    path: str = "<string>"
    #: the fusion's name in the script (its function, class or variable name), and every fusion's, in order
    name: str = ""
    names: tuple[str, ...] = ()
    #: what the loader noticed and the user should know (the script stopping after its fusions ran)
    notes: tuple[str, ...] = ()

    @property
    def fusion(self) -> FusionDefinition:
        return self.fd

    def make_inputs(self, device: str = "cpu", seed: int = 0) -> list[Any]:
        """The script's inputs (same shapes, strides, dtypes) on ``device``: random values (by ``seed``) for
        those written as literal expressions, the script's own values for tensors its code built; a script that
        gives none, random ones in its inputs' declared layouts (segkit.interp.random_inputs)."""
        wanted = as_fusion(self.fd).inputs
        if wanted and not self.recipes and _declared(wanted):  # print(fd)'s form: the definition, no inputs
            return random_inputs(self.fd, device, seed)
        if wanted and not self.recipes:
            raise ReproError(f"{self.path}: found no inputs for the fusion's {len(wanted)} input(s) "
                             f"({', '.join(v.describe() for v in wanted)}): segkit reads a module-level "
                             "`inputs = [...]` or the list passed to `fd.execute(...)`, else makes them from "
                             "`define_tensor` declarations whose sizes are all given (shape=[...], no -1)")
        gen = torch.Generator().manual_seed(seed)
        # a CPU scalar input (define_tensor(..., is_cpu=True), from_pytorch of a 0-dim CPU tensor) stays on the CPU
        devices = [("cpu" if i < len(wanted) and wanted[i].is_tensor and wanted[i].is_cpu else device)
                   for i in range(len(self.recipes))]
        return [r.make(d, gen) for r, d in zip(self.recipes, devices)]


_BINARY_MAGIC = {b"SQLite format 3\x00": "an SQLite database (an nsys report? read it with `segkit trace show`)",
                 b"\x1f\x8b": "gzip-compressed (a torch.profiler trace? read it with `segkit trace show`)",
                 b"\x7fELF": "an executable"}


def read_script(path: str | Path) -> str:
    """A script file's text; a missing file, a directory, a trace or binary file, or text that is not
    UTF-8 is a ReproError saying which."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except IsADirectoryError:
        raise ReproError(f"{path} is a directory, not a repro script") from None
    except OSError as e:
        raise ReproError(f"{path}: cannot read: {e.strerror or e}") from None
    for magic, what in _BINARY_MAGIC.items():
        if data.startswith(magic):
            raise ReproError(f"{path} is {what}, not a repro script (Python source)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ReproError(f"{path} is not UTF-8 text (byte {data[e.start]:#04x} at offset {e.start}): "
                         "not a repro script (Python source)") from None
    if "\x00" in text:
        raise ReproError(f"{path} holds NUL bytes: a binary file, not a repro script (Python source)")
    return text


def _seconds(value: Any, what: str) -> float:
    """A time limit: a positive number of seconds (``inf``: none, allowed for the API argument only)."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        seconds = math.nan
    if not seconds > 0 or (math.isinf(seconds) and what != "timeout"):
        raise ReproError(f"{what}={value!r} is not a positive number of seconds")
    return seconds


def _script_time_limit(timeout: float | None) -> float:
    if timeout is not None:
        return _seconds(timeout, "timeout")
    value = os.environ.get(SCRIPT_TIMEOUT_ENV, "")
    if not value.strip():
        return DEFAULT_SCRIPT_TIMEOUT
    limit = limits.seconds(value)  # the rule the command line checks before any command runs
    if limit is None:
        raise ReproError(f"{SCRIPT_TIMEOUT_ENV}={value!r} is not a positive number of seconds")
    return limit


class _Expired(BaseException):
    """The script's time limit ran out (turned into a ResourceLimitError by ``_time_limit``); ``where`` says
    what the script was running."""

    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


def _running(frame, path: str) -> str:
    """What the script was running in ``frame``'s stack: ``func(args) ... at line N``, or its line."""
    while frame is not None and frame.f_code.co_filename != path:
        frame = frame.f_back
    if frame is None:
        return "the script"
    code = frame.f_code
    if code.co_name == "<module>":
        return f"the script (at line {frame.f_lineno})"
    return f"{code.co_name}({', '.join(code.co_varnames[:code.co_argcount])}) (at line {frame.f_lineno})"


@contextlib.contextmanager
def _time_limit(seconds: float, path: str):
    """Interrupt the block after ``seconds`` (SIGALRM; only on the main thread of a POSIX process)."""
    usable = (math.isfinite(seconds) and hasattr(signal, "setitimer")
              and threading.current_thread() is threading.main_thread()
              and signal.getitimer(signal.ITIMER_REAL)[0] == 0  # the process's own timer is left alone
              and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None))
    if not usable:
        yield
        return

    def expire(signum, frame):
        raise _Expired(_running(frame, path))  # a BaseException: no `except Exception` in the script swallows it

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Expired as e:
        what = e.where.replace(" (at line", " ran longer than {s} s (at line", 1) if "(at line" in e.where \
            else e.where + " ran longer than {s} s"
        raise ResourceLimitError(f"{path}: " + what.format(s=f"{seconds:g}") + "; stopped (an endless loop? raise "
                                 f"the limit with {SCRIPT_TIMEOUT_ENV}=SECONDS or load_repro(..., timeout=SECONDS))"
                                 ) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


#: Seconds a script may run while it is loaded (environment variable, or ``load_repro(timeout=)``).
SCRIPT_TIMEOUT_ENV = limits.SCRIPT_TIMEOUT_ENV
DEFAULT_SCRIPT_TIMEOUT = 10.0  # a script records ops (well under a second for the pasted repros): an endless
# loop in its fusion function is stopped in seconds, not after a minute

#: ``with _Stubbed(): runpy.run_path(script)``: a standalone script's nvFuser imports run segkit's frontend.
_Stubbed = stubbed


def _script_text(path_or_source: str | Path) -> tuple[str, str]:
    """(path, source): a Path or a one-line string is a path, anything else the script's text."""
    text = str(path_or_source)
    if isinstance(path_or_source, Path) or "\n" not in text:
        if not text.strip():
            raise ReproError("an empty path: give a repro script's path or its text")
        return text, read_script(text)
    return "<repro>", text


def _parse(path: str, source: str) -> ast.Module:
    try:
        with warnings.catch_warnings():  # the script's own style warnings are not segkit's to print
            warnings.simplefilter("ignore", SyntaxWarning)
            return ast.parse(source, filename=path)
    except SyntaxError as e:
        raise ReproError(f"{path}:{e.lineno}: syntax error: {e.msg}") from None
    except (ValueError, RecursionError, MemoryError) as e:  # NUL bytes, nesting too deep for the parser
        raise ReproError(f"{path}: cannot parse: {e}") from None


def _line_of(e: BaseException, path: str, default: int) -> int:
    import traceback

    frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == path]
    return frames[-1].lineno if frames else default


#: errors that name their call site already
_PASSED_THROUGH = (FusionDefinitionError, ResourceLimitError, ReproError, UnsupportedOpError)


def _run_script(run: ScriptRun, fd_class: type, source: str, limit: float) -> tuple[dict[str, Any], list[str]]:
    """Run the script (then its test functions, then its fusion functions, while it has built no fusion);
    returns its namespace and notes: names segkit supplied, the script stopping with an error after a fusion
    ran."""
    path, tree = run.path, run.tree
    supplied = pasted_names(tree, fd_class)
    notes = [f"{path}: the script uses {', '.join(supplied)} without importing it; segkit supplied the standard "
             "import(s)"] if supplied else []
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": path, "__builtins__": builtins, **supplied}
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    stage = "module"
    with stubbed(fd_class, run), no_cuda(run.devices), script_process(path), _time_limit(limit, path):
        try:
            exec(compile(tree, path, "exec"), namespace)
            stage = "tests"
            for call in test_calls(tree, namespace, TestHarness(fd_class)) if not run.fusions else []:
                call()
            stage = "fusion functions"
            for func in fusion_functions(tree) if not run.fusions else []:
                namespace[func.name](fd_class())
            for rec in run.fusions:
                rec.fd.fusion  # a subclass records its definition() on first use
        except _PASSED_THROUGH:
            raise
        except ImportError as e:
            raise ReproError(f"{path}:{_line_of(e, path, 0)}: import failed: {e}") from None
        except BaseException as e:  # pytest's outcomes (pytest.raises: "DID NOT RAISE") are BaseExceptions
            if isinstance(e, (KeyboardInterrupt, GeneratorExit, _Expired)):
                raise
            line = _line_of(e, path, 0)
            if isinstance(e, SystemExit) and e.code in (None, 0):
                return namespace, notes
            if run.executed and _expects_refusal(e):
                raise ReproError(f"{path}:{line}: the script expects nvFuser to refuse its fusion "
                                 f"({error_summary(e)}); segkit's reference runs it: this refusal is not one segkit "
                                 "reproduces") from None
            if run.executed and stage != "fusion functions":  # the script's own checks on results: the fusions stand
                what = f"exited with {e.code}" if isinstance(e, SystemExit) else error_summary(e)
                notes.append(f"{path}:{line}: the script stopped after running its fusion(s) ({what}); "
                             "segkit keeps the fusions built before that line")
                return namespace, notes
            what = f"inputs do not match the definition: {e}" if isinstance(e, InputMismatchError) else error_summary(e)
            raise ReproError(f"{path}:{line}: {what}" if line else f"{path}: {what}") from None
    return namespace, notes


def _expects_refusal(e: BaseException) -> bool:
    """Whether ``e`` is a test saying an expected error did not come (``pytest.raises``, ``assertRaises``)."""
    text = str(e)
    return text.startswith("DID NOT RAISE") or (isinstance(e, AssertionError) and text.endswith(" not raised"))


def _built(run: ScriptRun) -> list[RecordedFusion]:
    """The fusions the script built: those it recorded into or ran (all of them when none of them is)."""
    return [r for r in run.fusions if r.fd.fusion.values or r.inputs is not None] or list(run.fusions)


def _choose(run: ScriptRun, wanted: str | None, notes: list[str]) -> RecordedFusion:
    built = _built(run)
    listing = ", ".join(f"{r.name} (line {r.created_line})" if r.created_line else r.name for r in built)
    if wanted is not None:
        exact = [r for r in built if r.name == wanted] or [r for r in built if r.name.split("@")[0] == wanted]
        if len(exact) == 1:
            return exact[0]
        raise ReproError(f"{run.path}: no fusion named {wanted!r}; the script builds "
                         + (listing or "none") + "".join(f"; {n}" for n in notes if "stopped" in n))
    if not built:
        raise ReproError(f"{run.path}: the script builds no fusion: no fusion function `def f(fd)`, "
                         "`with FusionDefinition() as fd:` block or FusionDefinition subclass recorded anything")
    if len(built) > 1:
        raise ReproError(f"{run.path}: the script builds {len(built)} fusions: {listing}; choose one with "
                         "--fusion NAME (load_repro(..., fusion=NAME))")
    return built[0]


def _recipes(run: ScriptRun, rec: RecordedFusion, namespace: dict[str, Any]) -> tuple[list[InputRecipe], int]:
    """The fusion's inputs and the line that gives them: the list its first execute got (read from the syntax
    tree where it is written there in literal expressions and agrees with the run, else the objects
    themselves), else the module's ``inputs`` (the same way)."""
    parser = InputParser(run.path, module_names(run.tree))
    if rec.inputs is not None:
        node = _execute_arg(run.tree, rec.execute_line, parser) if rec.execute_at_module else None
        objects, line = rec.inputs, rec.execute_line
    else:
        node = inputs_node(run.tree, parser.bound)
        objects = namespace.get("inputs")
        line = node.lineno if node is not None else 0
        if node is None and not isinstance(objects, (list, tuple)):
            return [], 0
    where = f"{run.path}:{line}"
    if objects is not None and not isinstance(objects, (list, tuple)):
        raise ReproError(f"{where}: the inputs are a {type(objects).__name__}, not a list")
    if node is None:
        return [captured_recipe(x, where) for x in objects], line
    if objects is None:  # never run (a fusion function the loader called): the tree is all there is
        return [parser.checked(e) for e in node.elts], line
    if len(node.elts) != len(objects) or any(isinstance(e, ast.Starred) for e in node.elts):
        return [captured_recipe(x, where) for x in objects], line
    return [_entry(parser, e, x, where) for e, x in zip(node.elts, objects)], line


def _entry(parser: InputParser, node: ast.AST, obj: Any, where: str) -> InputRecipe:
    """One input: as written in the tree (random values by seed) where segkit reads it and the run agrees,
    else the object the script built."""
    try:
        recipe = parser.checked(node)
    except ReproError:
        return captured_recipe(obj, where)
    return recipe if same_layout(recipe, obj) else captured_recipe(obj, where)


def _execute_arg(tree: ast.Module, line: int, parser: InputParser) -> ast.List | ast.Tuple | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node, "lineno", None) == line and node.args \
                and isinstance(node.func, ast.Attribute) and node.func.attr == "execute":
            arg = parser.bound(node.args[0])
            if isinstance(arg, (ast.List, ast.Tuple)):
                return arg
    return None


@dataclass
class _Recorded:
    """What the child process sends back: plain data only (the fusion's IR, its inputs' recipes, names and notes),
    never an object of the script's."""

    fusion: Fusion
    recipes: list[InputRecipe]
    name: str
    names: tuple[str, ...]
    notes: tuple[str, ...]


def _plain(fusion: Fusion) -> Fusion:
    """A copy of ``fusion`` that pickles flat: no recording FusionDefinition, no value-to-op links (pickling them
    would recurse along every chain of ops); ``_linked`` puts the links back."""
    plain, _ = fusion.copy()
    for v in plain.values:
        v.definition = None
    return plain


def _linked(fusion: Fusion) -> Fusion:
    for op in fusion.ops:
        for out in op.outputs:
            out.definition = op
    return fusion


def _record(path: str, source: str, limit: float, fusion: str | None) -> _Recorded:
    """Run the script (in the child process) and keep its chosen fusion as plain data."""
    tree = _parse(path, source)
    run, fd_class = new_run(path, tree)
    namespace, notes = _run_script(run, fd_class, source, limit)
    name_fusions(run.fusions, tree)
    rec = _choose(run, fusion, notes)
    if rec.refused and rec.inputs is None:
        raise ReproError(f"{rec.refused} (fusion {rec.name}; the script catches this error itself: it expects "
                         "nvFuser to refuse the fusion)")
    recipes, line = _recipes(run, rec, namespace)
    if line:
        check_recipes(as_fusion(rec.fd), recipes, f"{path}:{line}")
    names = tuple(r.name for r in _built(run))
    return _Recorded(_plain(as_fusion(rec.fd)), recipes, rec.name, names, tuple(notes))


#: Seconds past its time limit a script's process is killed when it has not stopped by itself (it caught the
#: limit's interrupt, or never gave control back to Python).
HARD_KILL_GRACE_S = 2.0


#: segkit's own small script, loaded once in this process before any child is forked (``warm``).
_WARM_SCRIPT = """
import torch
from nvfuser import FusionDefinition, DataType
from torch.testing import make_tensor

with FusionDefinition() as fd:
    t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
    t1 = fd.from_pytorch(torch.ones(2, 3, device="cuda"))
    c0 = fd.define_scalar(2.0, dtype=DataType.Double)
    t2 = fd.ops.cast(t0, dtype=DataType.Float)
    t3 = fd.ops.mul(fd.ops.add(t2, t1), c0)
    t4 = fd.ops.sum(t3, dims=[1], keepdim=False, dtype=DataType.Float)
    t5 = fd.ops.broadcast_in_dim(t4, shape=[2, 3], broadcast_dims=[0])
    t6 = fd.ops.reshape(fd.ops.permute(fd.ops.sub(t3, t5), dims=[1, 0]), new_shape=[6])
    fd.add_output(fd.ops.cast(t6, dtype=DataType.BFloat16))
inputs = [torch.randn((2, 3), dtype=torch.bfloat16, device="cuda"), make_tensor((2, 3), dtype=torch.float32, device="cuda")]
fd.execute(inputs)
"""
_warmed = False


def warm() -> None:
    """Import here, once, what loading a script imports on first use (torch._dynamo behind the first torch op,
    segkit's lazy imports), by loading segkit's own small script in this process: a child forked from it then
    starts warm instead of paying those imports on every load."""
    global _warmed
    if not _warmed:
        _warmed = True
        _record("<segkit warm-up>", _WARM_SCRIPT, math.inf, None)


def _in_child(path: str, source: str, limit: float, fusion: str | None) -> _Recorded:
    """``_record`` in a child process killed past ``limit`` (segkit.repro.isolate): no script hangs segkit,
    outlives it or swallows its time limit."""
    warm()
    try:
        return run_isolated(_record, (path, source, limit, fusion), hard_limit=limit + HARD_KILL_GRACE_S)
    except ChildOverran:
        raise ResourceLimitError(f"{path}: the script ran longer than {limit:g} s and did not stop at its time limit "
                                 "(it catches the interrupt, or never gives control back): killed (raise the limit "
                                 f"with {SCRIPT_TIMEOUT_ENV}=SECONDS or load_repro(..., timeout=SECONDS))") from None
    except ChildDied as e:
        how = (f"was killed by {signal.Signals(-e.code).name}" if e.code is not None and e.code < 0
               else f"exited with code {e.code} (os._exit?)")
        raise ReproError(f"{path}: the script's process {how} before segkit recorded its fusion") from None


@checked
def load_repro(path_or_source: str | Path, timeout: float | None = None, fusion: str | None = None) -> Repro:
    """Record a repro script's fusion (no GPU, no CUDA calls) and how to rebuild its inputs.

    ``path_or_source``: a path (a Path, or a one-line string; any file name), or the script's text.
    The script runs as Python code (load only scripts you trust) in a child process, for at most ``timeout``
    seconds (default: $SEGKIT_SCRIPT_TIMEOUT, else 10; the process is killed a little later if the script does
    not stop). ``fusion``: which one, by name, when it builds several (the error for several and no name lists
    them).
    """
    path, source = _script_text(path_or_source)
    _parse(path, source)  # a syntax error is found here, before any process starts
    limit = _script_time_limit(timeout)
    got = _in_child(path, source, limit, fusion)
    fd = FusionDefinition.from_fusion(_linked(got.fusion))
    notes, wanted = got.notes, as_fusion(fd).inputs
    if wanted and not got.recipes and _declared(wanted):
        notes = (*notes, f"{path}: the script gives no inputs: random ones at the {len(wanted)} input(s)' "
                         "declared sizes, dtypes and layouts (a scalar without a value: a stand-in)")
    return Repro(fd, got.recipes, source, path, got.name, got.names, notes)


def _declared(values: list) -> bool:
    """Whether every tensor input's sizes are declared (no -1): inputs can be made from the definition alone."""
    return all(-1 not in v.shape for v in values if v.is_tensor)
