"""``run``: one entry point's life, the same for every tool of the repository: parse (one-line usage errors,
exit 2), check the paths (``contracts.check``, before any work), run the chosen command with its output folders
taken and its inputs protected from every write (``segkit.files.write_atomic``), and end each failure as one
line ``PROG: error: ...`` (exit 2 for a usage error, 1 otherwise), a Ctrl-C as ``PROG: interrupted`` (130), a
reader that went away (``| head``) quietly (141)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence

from segkit.cli import contracts
from segkit.cli.parser import EXIT_BROKEN_PIPE, EXIT_FAILURE, EXIT_USAGE, Parser
from segkit.errors import SegkitError, UsageError


def run(build: Callable[[], Parser], argv: Sequence[str] | None, *,
        expected: tuple[type[BaseException], ...] = (ValueError, OSError), expected_status: int = EXIT_FAILURE) -> int:
    """Parse ``argv`` with ``build()``'s parser and run ``args.func(args)``; its exit status. ``expected``: the
    errors a command reports in its own words (a file that is not what it reads): one line, ``expected_status``,
    no traceback; any other error is one line too, flagged as unexpected."""
    from segkit.interrupts import interrupt_handled

    parser = build()
    if not isinstance(parser, Parser):
        raise TypeError(f"{build.__qualname__} must build a segkit.cli.parser.Parser")
    prog = parser.prog
    argv = sys.argv[1:] if argv is None else [str(a) for a in argv]
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # --help (0) or a usage error (2), already printed
            return e.code if isinstance(e.code, int) else EXIT_USAGE
        words, command = contracts.chosen(parser, args)
        dirs = contracts.check(command, args)
        inputs = [p for p in contracts.path_args(command, args)
                  if p.contract.role == "input" and p.contract.kind == "file"]
        with contracts.taken(dirs, " ".join((prog, *words)), inputs):
            status = args.func(args)
        sys.stdout.flush()
        return status if isinstance(status, int) else 0  # a command that returns nothing (or a value): done
    except BrokenPipeError:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt as e:
        interrupt_handled()
        print(f"{prog}: interrupted{'; ' + one_line(e) if e.args else ''}", file=sys.stderr)
        return 130
    except SystemExit as e:  # a command's own sys.exit("message")
        if isinstance(e.code, str):
            print(one_line(e.code), file=sys.stderr)
            return EXIT_FAILURE
        return EXIT_USAGE if e.code is None else e.code
    except Exception as e:  # noqa: BLE001 - every failure is one line
        if isinstance(e, UsageError):
            line, status = str(e), EXIT_USAGE
        elif isinstance(e, OSError) and e.filename is not None:
            line, status = f"{e.filename}: {e.strerror or e}", expected_status
        elif isinstance(e, (SegkitError, *expected)):
            line, status = str(e), expected_status
        else:
            line, status = (f"{type(e).__name__}: {e} (an unexpected error in {prog}: please report it)",
                            EXIT_FAILURE)
        print(f"{prog}: error: {one_line(line)}", file=sys.stderr)
        return status


def one_line(e: BaseException | str) -> str:
    """``e`` on one line, at most 1000 characters."""
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 1000 else text[:997] + "..."
