"""CPU time of one ``ticdc-fast decode`` run, split by thread (issue 13).

    python benchmarks/cli_thread_cpu.py --input open200k.jsonl --jobs 2 [--repeat 3]

``time.thread_time()`` of the main thread (reading the capture, writing Parquet, bookkeeping) and
of the parse and decode calls wherever they run.  CPU time does not depend on what else the
machine runs, so this tells what ``--jobs N`` can give on N free cores (the run takes at least the
main thread's CPU and at least the total over the cores) when the machine is too busy to show it.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time

from ticdc_fast import cli


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", required=True)
    ap.add_argument("--protocol", default="open")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    lock = threading.Lock()
    work = [0.0]

    def timed(f):
        def call(*a):
            t = time.thread_time()
            try:
                return f(*a)
            finally:
                d = time.thread_time() - t
                with lock:
                    work[0] += d
        return call

    cli._columns = timed(cli._columns)
    cli._TimedDecoder.__call__ = timed(cli._TimedDecoder.__call__)
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for jobs in (1, args.jobs):
                work[0] = 0.0
                t0, c0 = time.perf_counter(), time.thread_time()
                cli.main(["decode", "--protocol", args.protocol, "--input", args.input,
                          "-o", os.path.join(tmp, "out.parquet"), "--jobs", str(jobs)])
                wall, main_cpu = time.perf_counter() - t0, time.thread_time() - c0
                own = main_cpu - (work[0] if jobs == 1 else 0.0)
                print(f"jobs {jobs}: wall {wall:.2f} s; main thread: read, write, bookkeeping {own:.2f} s CPU; "
                      f"parse + decode calls {work[0]:.2f} s CPU; bound on {jobs} free cores "
                      f"{max(own, (own + work[0]) / jobs):.2f} s", flush=True)


if __name__ == "__main__":
    main()
