"""How far the Avro protocols' typed decode is from the least work any decoder must do (issue 13).

    PYTHONPATH=. python benchmarks/floor.py [--protocol avro|simple-avro] [--rows 10000] [--rounds 7]
    PYTHONPATH=. python benchmarks/floor.py --protocol simple-avro [--two-pass] [--map-order go|table]

The *floor* is a C loop written for exactly one table, the ``orders10`` table of
``benchmarks/goals.py`` (the "10-column stream" of the 5 M rows/s goal), in one protocol:
straight-line code per field (the Avro protocol: its one writer schema; simple Avro: the
protocol's schema, with each map key found in a hash table of the table's ten column names, as
TiCDC writes the map in Go map order), no plan to interpret, every read bounds-checked, every
value written to a preallocated column (validity bytes, offsets, int64/float/double/decimal
values, DATETIME/TIMESTAMP text parsed to microseconds).  It leaves out what a real decoder also does: UTF-8 checks of text, error
context (message, byte offset, column), growing builders, other schemas, the Arrow hand-over and the
Python call.  So a decoder that reads these bytes the way the floor does cannot be faster than
it on this machine (a different way of reading can be: see ``--two-pass``); how much slower the
core is says how much its generality costs.

The script builds the corpus, compiles the floor (``benchmarks/floor_c/``: ``avro.c``,
``simple_avro.c``, ``simple_json.c``) with the machine's ``gcc -O3 -march=native`` (into a
temporary directory; nothing is kept), checks that the floor decodes the same values as
the core (sums of ids, commit timestamps, the two datetime columns, the double column and the
text bytes), then times both in alternating rounds on one CPU: each round is the floor's best of
~0.3 s, then the core's best of ~0.3 s (a ``gc.collect()`` before each call); the ratio of each
round is taken seconds apart, so the host's changes of speed mostly cancel.

Simple Avro has two floors.  The default reads each map once and converts each entry as its key
comes, so the branches on the column follow the map's order; ``--two-pass`` first finds where
each column's value is (the key looked up, the value's size from its union branch without a
branch on it), then converts the values in the table's column order.  ``--map-order table``
builds the corpus (and so the core's input too) with the map entries in column order instead of
the Go map order TiCDC writes, a new order every row: what the order alone costs.
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import pin_one_core  # noqa: E402

# The floors' C, one file per protocol (sharing common.h and avro_prelude.h), compiled at run time.
FLOOR_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "floor_c")
FLOOR_SOURCES = {"avro": "avro.c", "simple-avro": "simple_avro.c", "simple-json": "simple_json.c"}


def compile_floor(protocol, tmp, two_pass=False):
    """The floor of ``protocol`` compiled into ``tmp`` (``gcc -O3 -march=native``): its path."""
    exe = os.path.join(tmp, "floor")
    subprocess.run(["gcc", "-O3", "-march=native", *(["-DFLOOR_TWO_PASS"] if two_pass else []),
                    "-I", FLOOR_DIR, "-o", exe, os.path.join(FLOOR_DIR, FLOOR_SOURCES[protocol])], check=True)
    return exe


def write_corpus(case, path):
    """The messages as the floor reads them: per message the key's and the value's length
    (-1: none) and bytes; simple Avro has no keys, only the value's length and bytes."""
    with open(path, "wb") as fh:
        if case.keys_list is None:
            for v in case.values_list:
                fh.write(struct.pack("<i", len(v)))
                fh.write(v)
            return
        for k, v in zip(case.keys_list, case.values_list):
            fh.write(struct.pack("<ii", len(k), -1 if v is None else len(v)))
            fh.write(k)
            fh.write(v or b"")


def core_sums(batch):
    """The floor's checksums, from the core's typed batch."""
    import pyarrow.compute as pc
    ops = batch.column("_op").to_pylist()
    ts = batch.column("_commit_ts").to_pylist()
    sum_ts = sum(t for o, t in zip(ops, ts) if o in ("INSERT", "UPDATE") and t is not None)
    rows = sum(o in ("INSERT", "UPDATE", "DELETE") for o in ops)     # not the control rows
    micros = 0
    for name in ("c08_datetime", "c09_timestamp3"):
        micros += sum(v for v in batch.column(name).cast("int64").to_pylist() if v is not None)
    text = sum(pc.sum(pc.binary_length(batch.column(n))).as_py() or 0 for n in ("c06_varchar_intl", "c07_text"))
    f64 = 0.0
    for v in batch.column("c03_double_full").to_pylist():    # in row order, as the floor adds
        if v is not None:
            f64 += v
    return (rows, _wrap(pc.sum(batch.column("id")).as_py()), _wrap(sum_ts), _wrap(micros), f64, text)


def _wrap(x):
    """x as the floor's int64 sum, which wraps around."""
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= 1 << 63 else x


def json_core_sums(batch):
    """Map entries and key bytes of the core's generic batch (after and before), as the floor
    counts them, and its value bytes (rendered: shortest floats, a 'Z' after TIMESTAMPs)."""
    import pyarrow.compute as pc
    entries = keys = values = 0
    for name in ("after", "before"):
        col = batch.column(name)
        entries += len(col.keys)
        keys += pc.sum(pc.binary_length(col.keys)).as_py() or 0
        values += pc.sum(pc.binary_length(col.items)).as_py() or 0
    ops = batch.column("_op").to_pylist()
    return sum(o in ("INSERT", "UPDATE", "DELETE") for o in ops), entries, keys, values


def _best(fn, seconds):
    fn()
    best, t_end = float("inf"), time.perf_counter() + seconds
    out = None
    while time.perf_counter() < t_end:
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--protocol", choices=("avro", "simple-avro", "simple-json"), default="avro")
    ap.add_argument("--corpus", default="orders10", help="simple-json: any corpus of goals.py (Avro: orders10)")
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=0.3, help="each contender's share of a round")
    ap.add_argument("--two-pass", action="store_true",
                    help="simple-avro: the floor reads each map twice (find every column's value, then "
                         "convert in column order)")
    ap.add_argument("--map-order", choices=("go", "table"), default="go",
                    help="simple-avro: the order of the data/old map entries; TiCDC writes Go map order")
    args = ap.parse_args(argv)
    pin_one_core()
    import goals
    if args.protocol != "simple-json" and args.corpus != "orders10":
        raise SystemExit("the Avro floors are written for orders10 only")
    if args.protocol != "simple-avro" and (args.two_pass or args.map_order != "go"):
        raise SystemExit("--two-pass and --map-order are for simple-avro")
    case = goals.Case(args.protocol, args.corpus, args.rows,
                      avro_map_order="table" if args.map_order == "table" else None)
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.bin")
        exe = compile_floor(args.protocol, tmp, two_pass=args.two_pass)
        write_corpus(case, corpus)

        def floor():
            out = subprocess.run([exe, corpus, str(args.seconds)], capture_output=True, text=True, check=True)
            best, bad, *sums = out.stdout.split()
            if int(bad):
                raise SystemExit("the floor found bytes it does not expect")
            return float(best), tuple(float(x) if "." in x else int(x) for x in sums)

        if args.protocol == "simple-json":
            run_json(args, case, floor)
            return
        _, floor_sums = floor()
        _, batch = _best(case.decode_typed, args.seconds)
        mine = core_sums(batch)
        if mine != floor_sums:
            raise SystemExit(f"the floor and the core disagree: {floor_sums} vs {mine}")
        print(f"# {args.corpus}, {args.protocol}, typed: {case.rows:,} row changes, {case.nbytes / 1e6:.2f} MB; "
              f"the floor decodes the same values (checksums {floor_sums})")
        print("| round | floor ms | floor M rows/s | core ms | core M rows/s | core ÷ floor (time) |")
        print("|---|---|---|---|---|---|")
        ratios = []
        for r in range(args.rounds):
            f_t, _ = floor()
            c_t, _ = _best(case.decode_typed, args.seconds)
            ratios.append(c_t / f_t)
            print(f"| {r + 1} | {f_t * 1e3:.3f} | {case.rows / f_t / 1e6:.2f} | {c_t * 1e3:.3f} | "
                  f"{case.rows / c_t / 1e6:.2f} | {c_t / f_t:.2f}× |", flush=True)
        print(f"\ncore ÷ floor, median of {len(ratios)} rounds: {statistics.median(ratios):.2f}× "
              f"(lowest {min(ratios):.2f}×, highest {max(ratios):.2f}×); load average {os.getloadavg()[0]:.2f}")


def run_json(args, case, floor):
    """Simple JSON, generic output: the floor, simdjson's parse-only rate (the goal's baseline)
    and the core, each round all three."""
    _, (rows, entries, keys, values, nulls) = floor()
    _, batch = _best(case.decode_generic, args.seconds)
    mine = json_core_sums(batch)
    if mine[:3] != (rows, entries, keys):
        raise SystemExit(f"the floor and the core disagree: {(rows, entries, keys)} vs {mine[:3]}")
    print(f"# {args.corpus}, simple-json, generic: {case.rows:,} row changes, {case.nbytes / 1e6:.2f} MB; the "
          f"floor writes the same map entries ({entries:,}, {keys:,} key bytes; value bytes: floor {values:,} "
          f"copied as they are, core {mine[3]:,} rendered)")
    print("| round | floor MB/s | simdjson parse-only MB/s | core MB/s | floor ÷ simdjson | core ÷ simdjson | core ÷ floor (time) |")
    print("|---|---|---|---|---|---|---|")
    mb = case.nbytes / 1e6
    res = []
    for r in range(args.rounds):
        f_t, _ = floor()
        s_t, _ = _best(case.baseline, args.seconds)
        c_t, _ = _best(case.decode_generic, args.seconds)
        res.append((s_t / f_t, s_t / c_t, c_t / f_t))
        print(f"| {r + 1} | {mb / f_t:.0f} | {mb / s_t:.0f} | {mb / c_t:.0f} | {s_t / f_t:.2f}× | {s_t / c_t:.2f}× | "
              f"{c_t / f_t:.2f}× |", flush=True)
    med = [statistics.median(x[k] for x in res) for k in range(3)]
    print(f"\nmedians of {len(res)} rounds: floor ÷ simdjson {med[0]:.2f}×, core ÷ simdjson {med[1]:.2f}×, "
          f"core ÷ floor {med[2]:.2f}×; load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
