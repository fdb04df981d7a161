"""``segkit.cli.entry.run``, the life every tool's command line shares (issue 76 item 1): a usage error, a file
that is not what a command reads, an unexpected error and a Ctrl-C each end as one line with their exit status,
never a traceback; a command's inputs are protected from its own writes while it runs."""

from __future__ import annotations

import pytest

from segkit.cli import argtypes
from segkit.cli.entry import run
from segkit.cli.parser import Parser
from segkit.errors import UsageError
from segkit.files import write_atomic


def _tool(action):
    def build() -> Parser:
        p = Parser(prog="tool")
        p.add_argument("src", type=argtypes.existing_file)
        p.add_argument("--out", type=argtypes.output_file)
        p.set_defaults(func=action)
        return p

    return build


@pytest.mark.parametrize("error, status, said", [
    (KeyboardInterrupt(), 130, "tool: interrupted"),
    (ValueError("x.json: not JSON"), 1, "tool: error: x.json: not JSON"),
    (UsageError("--n 3: too many"), 2, "tool: error: --n 3: too many"),
    (SystemExit("tool: a message of its own"), 1, "tool: a message of its own"),
    (ZeroDivisionError("division by zero"), 1, "ZeroDivisionError: division by zero (an unexpected error in tool"),
    (FileNotFoundError(2, "No such file or directory", "gone.json"), 1, "tool: error: gone.json: No such file"),
], ids=["ctrl-c", "expected", "usage", "sys-exit", "unexpected", "os-error"])
def test_every_failure_is_one_line_with_its_status(tmp_path, capsys, error, status, said):
    src = tmp_path / "in.txt"
    src.write_text("x")

    def fails(args):
        raise error

    assert run(_tool(fails), [src]) == status
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err and "Traceback" not in err, err


def test_a_usage_error_is_refused_before_the_command_runs(tmp_path, capsys):
    ran = []
    assert run(_tool(ran.append), [tmp_path / "nosuch"]) == 2 and not ran
    assert "argument src: no such file" in capsys.readouterr().err
    assert run(_tool(ran.append), ["--help"]) == 0 and not ran


def test_a_commands_inputs_are_protected_from_its_writes(tmp_path, capsys):
    src, link = tmp_path / "in.txt", tmp_path / "link.txt"
    src.write_text("keep")
    link.symlink_to(src)

    def writes_onto_its_input(args):  # a path the contracts cannot see (not an option)
        write_atomic(link, "lost")

    assert run(_tool(writes_onto_its_input), [src]) == 2
    assert src.read_text() == "keep" and "is the input" in capsys.readouterr().err
    assert run(_tool(lambda args: write_atomic(args.out, "ok")), [src, "--out", tmp_path / "o.txt"]) == 0
    assert (tmp_path / "o.txt").read_text() == "ok"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt", "link.txt", "o.txt"]  # no temp file
