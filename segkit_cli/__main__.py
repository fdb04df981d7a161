"""``python -m segkit_cli ...``: the ``segkit`` command without the installed script."""

import sys

try:
    from segkit_cli.main import main
except KeyboardInterrupt:  # a Ctrl-C while starting: the same one line as later
    from segkit.interrupts import interrupt_handled

    interrupt_handled()
    print("segkit: interrupted", file=sys.stderr)
    sys.exit(130)

sys.exit(main())
