"""``python -m sweep ...``: the launcher (sweep.launch)."""

import sys

from sweep.launch import main

sys.exit(main())
