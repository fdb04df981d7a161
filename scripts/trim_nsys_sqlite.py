"""Keep only the tables segkit.trace reads from an nsys SQLite export (test fixtures under 1 MiB).

    python scripts/trim_nsys_sqlite.py SRC.sqlite DST.sqlite
"""

import shutil
import sqlite3
import sys

from segkit.cli import argtypes, entry
from segkit.cli.parser import Parser

KEEP = {"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "TARGET_INFO_GPU"}


def build_parser() -> Parser:
    """SRC (an export, read) and DST (written; never SRC, through any link)."""
    parser = Parser(prog="scripts/trim_nsys_sqlite.py", description=__doc__.splitlines()[0])
    parser.add_argument("src", type=argtypes.existing_file, metavar="SRC.sqlite", help="the nsys SQLite export")
    parser.add_argument("dst", type=argtypes.output_file, metavar="DST.sqlite", help="the trimmed copy to write")
    parser.set_defaults(func=trim)
    return parser


def trim(args) -> int:
    shutil.copy(args.src, args.dst)
    con = sqlite3.connect(args.dst)
    for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
        if name not in KEEP and not name.startswith("sqlite_"):
            con.execute(f"DROP TABLE IF EXISTS {name}")
    con.commit()
    con.execute("VACUUM")
    con.close()
    return 0


if __name__ == "__main__":
    sys.exit(entry.run(build_parser, None))
