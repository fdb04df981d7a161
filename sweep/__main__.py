"""``python -m sweep ...``: the launcher (sweep.launch)."""

import sys

try:
    from sweep.launch import main
except KeyboardInterrupt:  # a Ctrl-C while starting: the same one line as later
    print("sweep: interrupted (SIGINT) before any shard started; no record written", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
