"""The ``segkit`` command line: repro scripts, bookending, differential checks, tuning, profiling and traces.

It sits above the core (``segkit``) and the workloads (``fusions``): a command imports ``fusions`` before it
resolves a ``NAME:CONFIG``, which fills the core's registry ``segkit.workloads``. The entry point is
``segkit_cli.main.main``; each subcommand is one module of ``segkit_cli.commands``.
"""
