"""What every command line of the repository shares: the exit statuses and the parser class with one-line usage
errors, options that go with another, and ``--force``."""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

EXIT_OK, EXIT_FAILURE, EXIT_USAGE, EXIT_BROKEN_PIPE = 0, 1, 2, 141

#: Said in the help of every command that runs a repro script.
SCRIPT_RUNS = ("The script, all of its code, is run as Python code (against segkit's recording frontend, CUDA "
               "served on the CPU): only give scripts you trust.")


#: The --format values whose stdout is data only (docs/cli.md, "Contracts").
DATA_FORMATS = ("json", "csv")


def messages(args: argparse.Namespace) -> TextIO:
    """Where a command's messages (notes, "wrote ...") go: stderr when stdout carries data (--format json|csv),
    else stdout."""
    return sys.stderr if getattr(args, "format", None) in DATA_FORMATS else sys.stdout


class Parser(argparse.ArgumentParser):
    """argparse with segkit's one-line usage errors (exit 2), and options declared to go with another."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        #: (option, other, value): ``option`` is used only with ``other`` given (as ``value``, where not None)
        self.needs: list[tuple[str, str, tuple[str, ...]]] = []

    def goes_with(self, option: str, other: str, *values: str) -> None:
        """Declare that ``option`` is used only with ``other`` (given as one of ``values``, where any): given
        without it, the command is refused before it runs (``segkit.cli.contracts``), not silently ignored."""
        self.needs.append((option, other, values))

    def add_force(self, what: str = "an output file") -> None:
        """``--force``: write over an existing file that is not of the kind the command writes (refused without)."""
        self.add_argument("--force", action="store_true", help=f"write over {what} that exists and is not one this "
                          "command wrote (refused without it: the file would be lost)")

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
