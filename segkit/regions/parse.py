"""Read a Thunder execution trace (the Python source ``print(thunder.last_traces(jfn)[-1])`` shows) into
dataclasses: its calls in order, with their tensor arguments and outputs, the ops Thunder prints as comments
under a fusion region, and every tensor's type from Thunder's type comments (``# t5: "cuda:0 bf16[1, 4096]"``).

The statements are read with ``ast`` and the comments with ``tokenize``; a comment's own text is parsed with
``ast`` too (a type comment is an annotated name, a region's op an assignment). Thunder prints no type for the
outputs of a call that returns several tensors: those stay unknown unless another comment names them (the
backward trace's unpacking of saved tensors, or the type block ``thunder_exec.trace_capture.save_traces``
appends).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass

from segkit.args import checked
from segkit.errors import SegkitError

# Thunder's dtype short names: letters, bits, optional variant ("bf16", "f8_e4m3fn", "f4_e2m1fn_x2", "b8").
_DTYPE = re.compile(r"(?P<kind>[a-z]+)(?P<bits>\d+)(?:_\w+)?")


class TraceFormatError(SegkitError, ValueError):
    """Text that is not a Thunder execution trace, naming the file and line."""


@dataclass(frozen=True)
class TensorType:
    """A tensor's device, Thunder dtype short name and shape, as a type comment prints them."""

    device: str
    dtype: str
    shape: tuple[int, ...]

    @property
    def nbytes(self) -> int:
        bits = int(_DTYPE.fullmatch(self.dtype).group("bits"))
        n = 1
        for d in self.shape:
            n *= d
        return n * bits // 8

    def __str__(self) -> str:
        return f"{self.device} {self.dtype}{list(self.shape)}"


@dataclass(frozen=True)
class Call:
    """One top-level call of the trace: ``outputs = callee(args)``. ``text``: its line as printed, ``call_key``'d
    (what names it in a profile's ranges); ``args``: the names passed (in collections too); ``ops``:
    the operations printed as comments under it (a fusion region's contents, the outermost level); ``source``: the
    user's line Thunder printed above it, if any."""

    line: int
    text: str
    callee: str
    outputs: tuple[str, ...]
    args: tuple[str, ...]
    ops: tuple[str, ...] = ()
    source: str | None = None


@dataclass(frozen=True)
class ExecTrace:
    """A parsed execution trace: its function, parameters, top-level calls in order, the names its return
    statement hands back, and the type of every tensor a type comment names."""

    label: str
    function: str
    params: tuple[str, ...]
    calls: tuple[Call, ...]
    returned: frozenset[str]
    types: dict[str, TensorType]


def call_key(printed: str) -> str:
    """A call's printed line as its profile range is named (thunder_exec.trace_capture.CallRanges): without the
    trailing type comment, double quotes as single ones (torch.profiler writes range names into its JSON
    unescaped)."""
    return printed.split("  #")[0].strip().replace('"', "'")


def parse_type(text: str) -> TensorType | None:
    """``"cuda:0 bf16[1, 4096, 4096]"`` as a TensorType; None for a type that is not a tensor's ("Collection")."""
    device, _, rest = text.strip().partition(" ")
    dtype, bracket, dims = rest.partition("[")
    if not bracket or not _DTYPE.fullmatch(dtype) or not dims.endswith("]"):
        return None
    try:
        shape = tuple(int(d) for d in dims[:-1].split(",") if d.strip())
    except ValueError:  # a symbolic dimension: its size is not in the text
        return None
    return TensorType(device, dtype, shape)


def _names(node: ast.AST) -> list[str]:
    """The names in ``node``, in order (a Name, or names inside tuples, lists and dicts of an argument)."""
    return [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]


def _comment_statement(text: str) -> ast.stmt | None:
    """The single statement a comment's text is, if it parses as one (``t5 = prims.add(a, b)``, ``t5: "..."``)."""
    try:
        body = ast.parse(text.strip()).body
    except (SyntaxError, ValueError):
        return None
    return body[0] if len(body) == 1 else None


def _type_comment(stmt: ast.stmt | None) -> tuple[str, TensorType] | None:
    if (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
            and isinstance(stmt.annotation, ast.Constant) and isinstance(stmt.annotation.value, str)):
        t = parse_type(stmt.annotation.value)
        return (stmt.target.id, t) if t is not None else None
    return None


@dataclass(frozen=True)
class _Comment:
    line: int
    col: int
    text: str  # without the leading "#"


def _comments(source: str, label: str) -> list[_Comment]:
    try:
        return [_Comment(tok.start[0], tok.start[1], tok.string[1:]) for tok in
                tokenize.generate_tokens(io.StringIO(source).readline) if tok.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError) as e:
        raise TraceFormatError(f"{label}: not Python source ({e})") from None


def _types_in(text: str, types: dict[str, TensorType]) -> None:
    """Record every type comment in a comment's text, the trailing ones of an op comment included."""
    while text:
        found = _type_comment(_comment_statement(text))
        if found:
            types.setdefault(*found)
            return
        _, hash_, text = text.partition("#")  # "t5 = op(a)  # t5: \"...\"": try what follows the next "#"
        if not hash_:
            return


def _op_text(text: str) -> str | None:
    """A region's op comment without its trailing type comment (``t5 = prims.add(a, b)``), else None."""
    stmt = _comment_statement(text.split("  #")[0])
    if isinstance(stmt, (ast.Assign, ast.Expr)) and isinstance(stmt.value, ast.Call):
        return ast.unparse(stmt)
    return None


def _source_comment(text: str) -> str | None:
    """Thunder's user-source comment ``/path/model.py:42: \\t    y = norm(x)`` (or ``<eval_with_key>.26:61: ..``
    from an FX graph), shortened to ``model.py:42: y = norm(x)``; None for any other comment."""
    m = re.fullmatch(r"\s*(?P<path>\S+?):(?P<line>\d+):\s(?P<code>.*)", text)
    return f"{m['path'].rsplit('/', 1)[-1]}:{m['line']}: {m['code'].strip()}" if m else None


def _statements(body: list[ast.stmt]):
    """The statements of a function body in order, those inside ``with`` / ``if`` / ``for`` blocks included."""
    for stmt in body:
        yield stmt
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from _statements(inner)


def _call_of(stmt: ast.stmt) -> tuple[list[str], ast.Call] | None:
    if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
        return [n for t in stmt.targets for n in _names(t)], stmt.value
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return [], stmt.value
    return None


@checked
def parse_trace(source: str, label: str = "<trace>") -> ExecTrace:
    """The execution trace in ``source`` (``label`` names it in errors: a file name). A text that is not Python
    or holds no function is a TraceFormatError naming ``label`` and the line."""
    try:
        module = ast.parse(source)
    except SyntaxError as e:
        raise TraceFormatError(f"{label}:{e.lineno}: not Python source ({e.msg}): not a Thunder trace") from None
    functions = [n for n in module.body if isinstance(n, ast.FunctionDef)]
    if not functions:
        raise TraceFormatError(f"{label}: no function definition: not a Thunder execution trace (save one with "
                               "thunder_exec.trace_capture.save_traces, or print(thunder.last_traces(jfn)[-1]))")
    fn = functions[0]
    comments = _comments(source, label)
    lines = source.splitlines()
    types: dict[str, TensorType] = {}
    for c in comments:
        _types_in(c.text, types)

    stmts = list(_statements(fn.body))
    starts = sorted({s.lineno for s in stmts} | {fn.end_lineno + 1})
    calls = []
    returned: set[str] = set()
    for stmt in stmts:
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            returned.update(_names(stmt.value))
        found = _call_of(stmt)
        if found is None:
            continue
        outputs, call = found
        args = [n for a in [*call.args, *(k.value for k in call.keywords)] for n in _names(a)]
        end = next(s for s in starts if s > stmt.end_lineno)
        below = [c for c in comments if stmt.end_lineno < c.line < end and c.col > stmt.col_offset]
        top = min((c.col for c in below), default=0)
        ops = tuple(op for c in below if c.col == top and (op := _op_text(c.text)) is not None)
        above = [c for c in comments if c.line == stmt.lineno - 1 and c.col == stmt.col_offset]
        source_line = _source_comment(above[0].text) if above else None
        calls.append(Call(stmt.lineno, call_key(lines[stmt.lineno - 1]), ast.unparse(call.func), tuple(outputs),
                          tuple(args), ops, source_line))
    params = tuple(a.arg for a in fn.args.args)
    return ExecTrace(label, fn.name, params, tuple(calls), frozenset(returned), types)
