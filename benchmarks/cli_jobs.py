"""Whole ``ticdc-fast decode`` runs, ``--jobs 1`` and ``--jobs N`` alternating (issue 13).

    python benchmarks/cli_jobs.py --input open200k.jsonl [--jobs 2] [--pairs 7] [-- extra decode args]

Each run is a fresh process.  Two times per run: the process's wall time (interpreter start and
imports included, ~0.4 s) and the run the CLI's summary line reports ("whole run": from the first
read of the capture to the renamed Parquet file).  The machine is shared, so the pairs alternate,
and each run prints how much of the machine other processes used while it ran ("others": busy
CPU time in /proc/stat minus the run's own, over wall time x CPUs); the load average lags too much
to tell.  ``--quiet-only P`` keeps (for the best-of line) only the pairs in which others used at
most P % during both runs.
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time


def _busy_seconds() -> float:
    with open("/proc/stat") as fh:
        fields = [int(x) for x in fh.readline().split()[1:]]
    idle = fields[3] + fields[4]
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def _run(args, jobs: int, out: str) -> tuple[float, float, float]:
    """(process wall s, the summary's whole run s, % of the machine others used meanwhile)."""
    cmd = [sys.executable, "-m", "ticdc_fast", "decode", "--protocol", args.protocol, "--input", args.input,
           "-o", out, "--jobs", str(jobs), *args.extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    busy0 = _busy_seconds()
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    busy = _busy_seconds() - busy0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    mine = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    others = max(0.0, busy - mine) / (wall * os.cpu_count()) * 100
    run = float(re.search(r"whole run ([0-9.]+) s", proc.stdout).group(1))
    return wall, run, others


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True)
    ap.add_argument("--protocol", default="open")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--pairs", type=int, default=7)
    ap.add_argument("--quiet-only", type=float, default=100.0, metavar="P")
    ap.add_argument("extra", nargs="*", help="more decode arguments (after --)")
    args = ap.parse_args()
    one, many = [], []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.parquet")
        for i in range(args.pairs):
            load = os.getloadavg()[0]
            a = _run(args, 1, out)
            b = _run(args, args.jobs, out)
            quiet = max(a[2], b[2]) <= args.quiet_only
            if quiet:
                one.append(a)
                many.append(b)
            print(f"pair {i + 1}: load {load:.2f}  jobs 1: process {a[0]:.2f} s, run {a[1]:.2f} s, others "
                  f"{a[2]:.0f} %  jobs {args.jobs}: process {b[0]:.2f} s, run {b[1]:.2f} s, others {b[2]:.0f} %  "
                  f"ratio process {a[0] / b[0]:.2f}x, run {a[1] / b[1]:.2f}x" + ("" if quiet else "  (not kept)"),
                  flush=True)
    if not one:
        print("no pair was quiet enough")
        return
    best1 = [min(x[k] for x in one) for k in (0, 1)]
    bestn = [min(x[k] for x in many) for k in (0, 1)]
    print(f"best of {len(one)}: jobs 1 process {best1[0]:.2f} s, run {best1[1]:.2f} s; jobs {args.jobs} "
          f"process {bestn[0]:.2f} s, run {bestn[1]:.2f} s; ratio process {best1[0] / bestn[0]:.2f}x, "
          f"run {best1[1] / bestn[1]:.2f}x")


if __name__ == "__main__":
    main()
