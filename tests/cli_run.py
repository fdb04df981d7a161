"""Running the ``segkit`` command line inside a test: its exit status and what it printed, and the one line an
error must be."""

from __future__ import annotations

from segkit_cli.main import main


def cli(capsys, argv) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``segkit ARGV`` (arguments turned into strings)."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    """The error's one line (fails when there is more, or a traceback)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]
