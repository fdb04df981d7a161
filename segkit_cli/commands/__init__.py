"""One module per ``segkit`` subcommand, each with ``register(subparsers)``: it adds its parser (argument types
from ``segkit.cli.argtypes``, the same module as ``segkit_cli.argtypes``) and sets ``func`` to its handler,
``run(args) -> int`` (the exit status).

Only the standard library and ``segkit_cli``'s light modules are imported at a command module's top level
(torch and the rest inside the handler): ``segkit --help`` imports every command module and must stay fast.
"""
