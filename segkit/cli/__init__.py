"""The command-line layer every entry point of the repository is built through (docs/cli.md, "Contracts"):
``argtypes`` (each option's validated type and its contract: an input, an output, a value), ``contracts`` (the
paths of one command line checked before it runs: no output is an input, output folders new / empty / segkit's
own, no file of another kind written over without ``--force``), ``parser`` (one-line usage errors, ``goes_with``)
and ``entry`` (``run``: parse, check, run, and every failure as one line; Ctrl-C as ``interrupted``).

The ``segkit`` command (segkit_cli), ``python -m benchmarks.*``, ``benchmarks/model_step.py`` and ``python -m
sweep`` all use it; tests/test_entry_points.py walks every parser of the repository and holds it to that.
Only the standard library is imported at module level, so a tool's ``--help`` stays fast.
"""
