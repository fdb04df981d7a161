"""segkit's nvFuser backend: a recorded fusion replayed into nvFuser, run, timed and its segmentation read back.

A layer of its own inside segkit (``tests/test_layering.py``): it builds on the IR, the recording frontend, the
reference interpreter and the tuning table's ``NvTuning``, and imports nothing above it (the bookend pass, check,
segments, tune's search, trace), which all reach nvFuser through it.

* ``replay`` -- a recorded fusion replayed into ``nvfuser_direct``; ``PlainFusion`` runs it with nvFuser's heuristics;
* ``tuned`` -- ``TunedFusion``: run it the way its ``NvTuning`` says (options, a manual schedule, a split);
* ``run`` -- ``compiled`` (the fusion's program, made once), ``run_nvfuser`` / ``run_on`` (run and profile);
* ``runnable`` -- the protocols of what runs on a backend (``Runnable``, ``NvProgram``, ``RunsOnBoth``);
* ``timing`` -- the cold-L2 kernel timers and the CUPTI bookkeeping;
* ``dump`` -- nvFuser's segmented-fusion dump and segmenter log, parsed into data.
"""
