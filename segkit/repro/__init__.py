"""Repro scripts: load them without a GPU (printing a fusion back as a script is segkit.printing).

* ``load`` -- ``load_repro``: run a script, pick its fusion, keep how to rebuild its inputs (``Repro``);
* ``script`` -- run a script the way Python would, against the recording frontend, with nothing touching CUDA;
* ``stubs`` -- what the script gets for ``import nvfuser`` / ``nvfuser_direct`` / ``torch._C._nvfuser``;
* ``device`` -- the script's CUDA requests served on the CPU;
* ``inputs`` -- the script's inputs, read from its syntax tree or captured, rebuilt on any device.
"""

from segkit.repro.load import SCRIPT_TIMEOUT_ENV, InputRecipe, Repro, load_repro, read_script

__all__ = ["InputRecipe", "Repro", "SCRIPT_TIMEOUT_ENV", "load_repro", "read_script"]
