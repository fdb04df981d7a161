"""``segkit profile -o DIR -- COMMAND ...``: run a command under nsys (or torch.profiler) and print its trace."""

from __future__ import annotations

import argparse

from segkit_cli import argtypes


#: -o: the report segkit.trace.record.profile_command writes (nsys's and its sqlite export, or torch.profiler's).
REPORT_DIR = argtypes.output_dir_writing("report.*", "trace.json")


def register(sub) -> None:
    p = sub.add_parser("profile", help="run a command under nsys (or torch.profiler) and print its trace summary")
    rec = p.add_mutually_exclusive_group()
    rec.add_argument("--nsys", action="store_true", help="require nsys")
    rec.add_argument("--torch", action="store_true", help="record with torch.profiler (python scripts)")
    p.add_argument("-o", "--output", default="segkit-profile", type=REPORT_DIR, help="report directory")
    p.add_argument("cmd", nargs=argparse.REMAINDER, help="-- command ...")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import shutil

    from segkit.errors import UsageError
    from segkit.trace import load
    from segkit.trace.record import profile_command
    from segkit.trace.report import show

    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    if not cmd:
        raise UsageError("give the command to profile after --, e.g. segkit profile -o run -- python script.py")
    backend = "torch" if args.torch else "nsys"
    if backend == "nsys" and shutil.which("nsys") is None:
        if args.nsys:
            raise UsageError("--nsys: nsys is not on PATH")
        print("nsys not found on PATH: recording with torch.profiler instead")
        backend = "torch"
    report = profile_command(cmd, args.output, backend)
    print(f"report: {report}")
    print(show(load(report)))
    return 0
