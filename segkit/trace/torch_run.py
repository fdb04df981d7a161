"""``python -m segkit.trace.torch_run OUT.json SCRIPT [ARGS]`` (or ``-c CODE`` / ``-m MODULE`` as python takes them):
run a Python program under torch.profiler."""

from __future__ import annotations

import runpy
import sys

from segkit.trace.record import capture


def main() -> None:
    out, *argv = sys.argv[1:]
    with capture(out):
        if argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102 - the user's -c code
        elif argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = argv
            runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
    main()
