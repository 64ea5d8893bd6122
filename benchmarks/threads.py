"""Decode scaling over threads: the same chunks decoded on 1 and on N threads, one decoder per thread.

    python benchmarks/threads.py --input CAPTURE --protocol open [--batch-size 500] [--jobs 2] [--repeat 5]
    python benchmarks/threads.py --rows 200000 --protocol open      # a generated open stream instead

The capture is read into memory first and nothing is written, so the ratio is the decoder's own
scaling, apart from what ``ticdc-fast decode --jobs N`` adds (reading the capture, writing
Parquet).  Runs alternate 1 thread, N threads and N processes (each process holds its own copy of
the chunks; only row counts come back) and the best of ``--repeat`` of each is kept, because the
machine is shared; the ratios are taken within this one run.  Processes share no GIL, so "N
threads ÷ N processes" near 1 says the GIL is not what limits the threads, whatever share of the
CPUs other people's work leaves.
"""
from __future__ import annotations

import argparse
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa

import ticdc_fast


def _chunks(args):
    if args.input:
        from ticdc_fast.capture import read_capture
        return list(read_capture(args.input, args.batch_size))
    from ticdc_fast.testing import OpenEncoder, realistic_changefeed
    msgs = OpenEncoder().encode(realistic_changefeed(args.rows, seed=1))
    out = []
    for i in range(0, len(msgs), args.batch_size):
        part = msgs[i:i + args.batch_size]
        out.append(([k for k, _ in part], [v for _, v in part], [0] * len(part),
                    list(range(i, i + len(part)))))
    return out


def _decoder(protocol):
    if protocol == "open":
        return ticdc_fast.OpenDecoder(implementation="cython")
    raise SystemExit("only --protocol open is measured here (the simple protocol is stateful; "
                     "the Avro protocol needs a registry)")


def run(chunks, protocol, jobs):
    """Seconds to decode every chunk on ``jobs`` threads (decoders made before the clock starts)."""
    decoders = [_decoder(protocol) for _ in range(jobs)]
    local = threading.local()
    free = list(decoders)
    lock = threading.Lock()

    def work(chunk):
        d = getattr(local, "d", None)
        if d is None:
            with lock:
                d = local.d = free.pop()
        keys, values, parts, offs = chunk
        return d.decode(keys, values, partitions=parts, offsets=offs).num_rows

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        list(pool.map(work, chunks[:jobs]))                 # warm-up: threads and decoders exist
        t0 = time.perf_counter()
        rows = sum(pool.map(work, chunks))
        return time.perf_counter() - t0, rows


_PROC: dict = {}


def _proc_init(args):
    _PROC["chunks"] = _load(args)
    _PROC["decoder"] = _decoder(args.protocol)


def _proc_work(i):
    keys, values, parts, offs = _PROC["chunks"][i]
    return _PROC["decoder"].decode(keys, values, partitions=parts, offsets=offs).num_rows


def run_processes(pool, n_chunks):
    t0 = time.perf_counter()
    rows = sum(pool.map(_proc_work, range(n_chunks)))
    return time.perf_counter() - t0, rows


def _load(args):
    chunks = _chunks(args)
    if args.arrow:
        chunks = [(pa.array(k, pa.binary()), pa.array(v, pa.binary()), p, o) for k, v, p, o in chunks]
    return chunks


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", help="a capture file (kcat -J lines)")
    ap.add_argument("--rows", type=int, default=200_000, help="rows of a generated open stream (no --input)")
    ap.add_argument("--protocol", default="open")
    ap.add_argument("--batch-size", type=int, default=500, help="messages per chunk")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--arrow", action="store_true", help="give the decoder pyarrow binary arrays, not lists")
    args = ap.parse_args(argv)
    import os
    from concurrent.futures import ProcessPoolExecutor
    chunks = _load(args)
    labels = ("1 thread", f"{args.jobs} threads", f"{args.jobs} processes")
    best = dict.fromkeys(labels, float("inf"))
    rows = None
    with ProcessPoolExecutor(max_workers=args.jobs, initializer=_proc_init, initargs=(args,)) as procs:
        list(procs.map(_proc_work, range(args.jobs)))          # warm-up: every process has loaded
        for _ in range(args.repeat):
            for label in labels:
                if label.endswith("processes"):
                    t, rows = run_processes(procs, len(chunks))
                else:
                    t, rows = run(chunks, args.protocol, 1 if label == "1 thread" else args.jobs)
                best[label] = min(best[label], t)
    n = sum(len(c[1]) for c in chunks)
    print(f"{len(chunks)} chunks, {n:,} messages, {rows:,} rows; {'Arrow' if args.arrow else 'list'} input; "
          f"best of {args.repeat}, alternating; load average {os.getloadavg()[0]:.2f}")
    for label, t in best.items():
        print(f"  {label}: {t:.3f} s, {rows / t / 1e6:.2f} M rows/s")
    one = best["1 thread"]
    print(f"  speed-up: {args.jobs} threads {one / best[labels[1]]:.2f}×, {args.jobs} processes "
          f"{one / best[labels[2]]:.2f}×; threads ÷ processes {best[labels[2]] / best[labels[1]]:.2f}")


if __name__ == "__main__":
    main()
