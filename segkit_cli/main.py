"""``segkit`` command line: repro scripts, bookending, differential checks, profiling and traces.

Errors: every failure prints one line, ``segkit: error: ...``, naming the file, argument or op and what
to do; exit status 2 for a usage error (a bad argument, refused before any long run), 1 for a failure (a
script that does not load, a mismatch, a trace that cannot be read), 0 otherwise. ``--debug`` prints the
traceback too. Output piped into a reader that stops early (``| head``) ends quietly (status 141).

Before a command runs, its paths are checked once (``segkit.cli.contracts``, the layer every tool of the repository shares): no output may be an input, and
an output directory must be new, empty, or segkit's own (docs/cli.md, "Contracts").

Adding a subcommand: write a module in ``segkit_cli.commands`` with ``register(subparsers)`` (see that
package's docstring) and list it in COMMANDS; tests/test_cli_contracts.py holds it to the contracts.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from segkit.errors import SegkitError, UsageError
from segkit.interrupts import interrupt_handled, interrupt_in
from segkit.cli import contracts
from segkit_cli.commands import (bookend, check, demo, fuzz, minimize, profile, regions, report, repro, reuse,
                                 segments, trace, tune)
from segkit.cli.parser import EXIT_BROKEN_PIPE, EXIT_FAILURE, EXIT_USAGE, Parser

#: The subcommands, in the order ``segkit --help`` lists them.
COMMANDS = (repro, bookend, check, minimize, profile, trace, demo, segments, report, regions, reuse, tune, fuzz)


def build_parser() -> Parser:
    parser = Parser(prog="segkit", description=__doc__.split("\n\n")[0],
                    epilog="Exit status: 0 ok, 1 failure or mismatch, 2 usage error. Limits: "
                           "SEGKIT_MAX_TENSOR_BYTES (reference interpreter, per tensor, default 16G), "
                           "SEGKIT_SCRIPT_TIMEOUT (a repro script's run while loading, seconds, default 10).")
    parser.add_argument("--debug", action="store_true", help="print the traceback of an error")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.register(sub)
    return parser


#: Commands that never import torch: their start stays light (``segkit trace show`` of a large profile takes seconds).
LIGHT = frozenset({"trace", "profile"})


def _import_held(name: str) -> None:
    """Import ``name`` with Ctrl-C held until it is done. torch's import runs Python callbacks from C++; a
    KeyboardInterrupt raised in one aborts the process ("terminate called after throwing an instance of
    'pybind11::error_already_set'", status -6). Held, a Ctrl-C meanwhile is delivered right after, as the one-line
    "segkit: interrupted"."""
    from segkit.interrupts import sigint_held

    if name not in sys.modules:
        with sigint_held():
            __import__(name)


def _quiet_broken_pipe() -> int:
    """The reader of our output went away (``| head``): stop writing, without a traceback at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout replaced by an object without a file descriptor
        pass
    return EXIT_BROKEN_PIPE


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (usage errors included: argparse's exit is caught)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    own = argv.index("--") if "--" in argv else len(argv)  # after "--": a profiled command's own arguments
    debug = "--debug" in argv[:own]
    argv = [a for i, a in enumerate(argv) if i >= own or a != "--debug"]  # --debug goes anywhere before "--"
    try:
        parser = build_parser()
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # --help (0) or a usage error (2), already printed
            return e.code if isinstance(e.code, int) else EXIT_USAGE
        words, command = contracts.chosen(parser, args)
        if words[0] not in LIGHT:
            _import_held("torch")
        dirs = contracts.check(command, args)
        inputs = [p for p in contracts.path_args(command, args) if p.contract.role == "input" and p.contract.kind == "file"]
        with contracts.taken(dirs, " ".join(("segkit", *words)), inputs):
            status = args.func(args)
        sys.stdout.flush()
        return status
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except KeyboardInterrupt as e:
        return _interrupted(e)
    except Exception as e:
        if (ctrl_c := interrupt_in(e)) is not None:  # a Ctrl-C that a library wrapped: still a Ctrl-C
            return _interrupted(ctrl_c)
        if isinstance(e, OSError):  # the file system refused a path (a directory that cannot be made, a full disk)
            return _report(e, debug, f"{e.filename}: {e.strerror or e}" if e.filename is not None else None)
        return _report(e, debug)


def _interrupted(e: KeyboardInterrupt) -> int:
    """Say one line (a command may say what it left behind: KeyboardInterrupt("...")); status 130."""
    interrupt_handled()
    print(f"segkit: interrupted{'; ' + _one_line(e) if e.args else ''}", file=sys.stderr)
    return 130


def _report(e: BaseException, debug: bool, line: str | None = None) -> int:
    """Print ``e`` as one line (``line`` if given; the traceback too with --debug); the exit status for it."""
    if debug:
        import traceback

        traceback.print_exc()
    if line is None and not isinstance(e, SegkitError):
        line = (f"{type(e).__name__}: {_one_line(e)} (an unexpected error in segkit: please report it; --debug "
                "shows the traceback)")
    print(f"segkit: error: {_one_line(line or e)}", file=sys.stderr)
    return EXIT_USAGE if isinstance(e, UsageError) else EXIT_FAILURE


def _one_line(e: BaseException | str) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 1000 else text[:997] + "..."


if __name__ == "__main__":
    sys.exit(main())
