"""Keep only the tables segkit.trace reads from an nsys SQLite export (test fixtures under 1 MiB)."""

import shutil
import sqlite3
import sys

KEEP = {"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "NVTX_EVENTS", "TARGET_INFO_GPU"}

src, dst = sys.argv[1:3]
shutil.copy(src, dst)
con = sqlite3.connect(dst)
for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall():
    if name not in KEEP and not name.startswith("sqlite_"):
        con.execute(f"DROP TABLE IF EXISTS {name}")
con.commit()
con.execute("VACUUM")
con.close()
