"""Importing this module warms the process for loading scripts (``segkit.repro.load.warm``): the fork server
of segkit.repro.isolate preloads it, so that every child it forks starts warm."""

import gc

from segkit.repro.load import warm

warm()
gc.freeze()  # the server only forks from now on: its children's collector leaves these objects (and pages) alone
