"""sweep: shard a pytest suite (tests, benchmarks, fuzzing or tuning commands) over the GPUs of a host, or over
cluster jobs, one pinned process per GPU, and merge what each shard did into one record.

    python -m sweep --gpus all -o run.json -- PYTEST ARGS

``sweep.launch`` is the command line, ``sweep.plan`` plans the shards, ``sweep.jobs`` runs them, ``sweep.merge``
merges what they did, ``sweep.plugin`` is the pytest plugin each shard loads, ``sweep.resume``
continues a sweep its time limit cut, ``sweep.respawn`` restarts a shard whose process died, ``sweep.estimate``
computes the one-GPU side of a sweep, and ``sweep.machine`` is the machine block every results file carries.
It imports no project package but ``segkit`` (one file helper); ``benchmarks`` builds on it. See sweep/README.md.
"""
