"""``python -m segkit.trace.torch_run OUT.json SCRIPT [ARGS]``: run a script under torch.profiler."""

from __future__ import annotations

import runpy
import sys

from segkit.trace.record import capture


def main() -> None:
    out, script, *args = sys.argv[1:]
    sys.argv = [script, *args]
    with capture(out):
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
