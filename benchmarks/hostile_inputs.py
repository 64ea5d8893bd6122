"""Hostile input, the costs that must stay bounded (issue 43, item 6); numbers, not pass/fail.

``python benchmarks/hostile_inputs.py avro-ids``: the first decode of a batch whose messages carry
n different Avro schema ids (offline schemas: no registry in the time), n = 1k, 4k, 16k; best of
``--repeat`` fresh decoders; the goal is ≤ 5× the time for 4× the ids.  Two corpora: the same
writer schema under every id (``many_schema_ids_stream``), and every id a table of its own.

``python benchmarks/hostile_inputs.py bombs``: peak memory of decoding a decompression bomb, each
case in a fresh interpreter (the peak RSS while decoding less the RSS before, the bomb already in
memory; Linux ``/proc/self/status``), by a decoder and by ``compression.decompress`` alone, against the 128 MiB ``max_message_bytes`` cap; the goal is ≤ ~2× the cap.

``python benchmarks/hostile_inputs.py router``: seconds to refuse a malformed simple-JSON message
(``{"version"`` then deep ``{"a":`` nesting) with ``tables=`` and with a single-table decoder, by
size; the goal is that both refuse it as soon as the single-table decoder does.  The same for the
open protocol (a key ``{"ts":1,"scm"`` then deep nesting).

``all`` runs the three.  ``--implementation cython|python`` picks the decoder (default cython).
"""
from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20


# ------------------------------------------------------------------------------------ avro ids
def _avro_corpus(n: int, distinct_tables: bool):
    from ticdc_fast.testing import many_schema_ids_stream
    key, values, schemas = many_schema_ids_stream(n, 1_000)
    if distinct_tables:
        value_text = schemas[1_000]
        name = '"name":"' + value_text.split('"name":"', 1)[1].split('"', 1)[0] + '"'
        for i in range(n):
            schemas[1_000 + i] = value_text.replace(name, name[:-1] + f'_{i}"', 1)
    return pa.array([key] * n, pa.binary()), pa.array(values, pa.binary()), schemas


def bench_avro_ids(impl: str, repeat: int) -> None:
    import ticdc_fast

    print(f"Avro protocol, first decode of n messages with n schema ids ({impl}; best of {repeat})")
    print(f"{'corpus':<28} {'n':>7} {'first s':>9} {'×prev':>6} {'cached s':>9}")
    for distinct in (False, True):
        prev = None
        for n in (1_000, 4_000, 16_000):
            keys, values, schemas = _avro_corpus(n, distinct)
            best = cached = float("inf")
            for _ in range(repeat):
                dec = ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl)
                gc.collect()
                t0 = time.perf_counter()
                dec.decode(keys, values)
                t1 = time.perf_counter()
                dec.decode(keys, values)
                cached = min(cached, time.perf_counter() - t1)
                best = min(best, t1 - t0)
                del dec
            ratio = f"{best / prev:6.2f}" if prev else "     -"
            label = "one table per id" if distinct else "one schema under every id"
            print(f"{label:<28} {n:>7,} {best:9.3f} {ratio} {cached:9.3f}", flush=True)
            prev = best


# ------------------------------------------------------------------------------------ bombs
_BOMB_CHILD = """
import gc, sys
import ticdc_fast

def status(key):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith(key + ":")) / 1024

path, compression, impl = sys.argv[1:4]
with open(path, "rb") as fh:
    bomb = fh.read()
dec = ticdc_fast.SimpleDecoder("json", compression=compression, implementation=impl)
gc.collect()
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")              # the peak (VmHWM) starts again from the current RSS
before = status("VmRSS")
try:
    dec.decode(None, [bomb])
    outcome = "decoded"
except ticdc_fast.DecodeError as exc:
    outcome = "refused: " + str(exc).split(" (", 1)[0][:70]
decoder = status("VmHWM") - before
from ticdc_fast.compression import decompress
gc.collect()
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")
before = status("VmRSS")
try:
    out = decompress(bomb, compression)
    del out
except ValueError:
    pass
print(decoder, status("VmHWM") - before, outcome)
"""


def _bombs():
    import cramjam
    zeros = bytes(256 * MIB)
    one_mib_frame = bytes(cramjam.lz4.compress(bytes(MIB)))
    out = [
        ("lz4", "one frame claiming 256 MiB", bytes(cramjam.lz4.compress(zeros))),
        ("lz4", "1024 frames of 1 MiB (1 GiB)", one_mib_frame * 1024),
        # snappy declares its length: the largest it lets through is the cap itself
        ("snappy", "a block of exactly the cap (128 MiB)", bytes(cramjam.snappy.compress_raw(zeros[:128 * MIB]))),
        ("snappy", "a block declaring cap + 1", bytes(cramjam.snappy.compress_raw(zeros[:128 * MIB + 1]))),
        ("lz4", "a frame of exactly the cap (128 MiB)", bytes(cramjam.lz4.compress(zeros[:128 * MIB]))),
    ]
    del zeros
    return out


def bench_bombs(impl: str) -> None:
    print(f"decompression bombs, peak RSS growth while decoding one message ({impl}; cap 128 MiB)")
    print(f"{'codec':<7} {'bomb':<38} {'input MB':>9} {'decoder MiB':>12} {'× cap':>6} "
          f"{'decompress MiB':>15} {'× cap':>6}  outcome")
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    with tempfile.TemporaryDirectory() as tmp:
        for codec, what, data in _bombs():
            path = Path(tmp) / "bomb"
            path.write_bytes(data)
            res = subprocess.run([sys.executable, "-c", textwrap.dedent(_BOMB_CHILD), str(path), codec, impl],
                                 capture_output=True, text=True, env=env, timeout=600)
            if res.returncode:
                raise SystemExit(res.stderr)
            grown, alone, outcome = res.stdout.strip().split(" ", 2)
            grown, alone = float(grown), float(alone)
            print(f"{codec:<7} {what:<38} {len(data) / 1e6:9.2f} {grown:12.0f} {grown / 128:6.2f} "
                  f"{alone:15.0f} {alone / 128:6.2f}  {outcome}", flush=True)


# ------------------------------------------------------------------------------------ router
def _deep(size: int) -> bytes:
    """``{"version"`` then ``{"a":`` nested to ``size`` bytes (malformed at byte 10: no colon)."""
    head = b'{"version"'
    return head + b'{"a":' * ((size - len(head)) // 5)


def bench_router(impl: str, repeat: int) -> None:
    import ticdc_fast

    schema = pa.schema([("id", pa.int64())])
    print(f"simple JSON, refusing {{\"version\" + deep nesting ({impl}; best of {repeat})")
    print(f"{'size':>8} {'single-table s':>15} {'tables= s':>10}  error")
    for size in (MIB // 8, MIB, 4 * MIB):
        msg = _deep(size)
        times, errors = {}, {}
        for label, make in (("single", lambda: ticdc_fast.SimpleDecoder("json", table="db.t", schema=schema,
                                                                          implementation=impl)),
                            ("tables", lambda: ticdc_fast.SimpleDecoder("json", tables={"db.t": schema},
                                                                          implementation=impl))):
            best = float("inf")
            for _ in range(repeat):
                dec = make()
                t0 = time.perf_counter()
                try:
                    dec.decode(None, [msg])
                except ticdc_fast.DecodeError as exc:
                    errors[label] = f"byte {exc.byte_offset}: {str(exc)[:50]}"
                best = min(best, time.perf_counter() - t0)
            times[label] = best
        same = "same" if errors.get("single") == errors.get("tables") else f"DIFFERENT: {errors}"
        print(f"{size / MIB:7.3g}M {times['single']:15.4f} {times['tables']:10.4f}  {errors.get('single')} ({same})",
              flush=True)


def bench_open_router(impl: str, repeat: int) -> None:
    import ticdc_fast

    schema = pa.schema([("id", pa.int64())])
    print(f"open protocol, refusing a key {{\"ts\":1,\"scm\" + deep nesting ({impl}; best of {repeat})")
    print(f"{'size':>8} {'single-table s':>15} {'tables= s':>10}  error")
    for size in (MIB // 8, MIB, 4 * MIB):
        body = b'{"ts":1,"scm"' + b'{"a":' * ((size - 13) // 5)
        key = (1).to_bytes(8, "big") + len(body).to_bytes(8, "big") + body
        value = (2).to_bytes(8, "big") + b"{}"
        times, errors = {}, {}
        for label, make in (("single", lambda: ticdc_fast.OpenDecoder(table="db.t", schema=schema,
                                                                        implementation=impl)),
                            ("tables", lambda: ticdc_fast.OpenDecoder(tables={"db.t": schema},
                                                                        implementation=impl))):
            best = float("inf")
            for _ in range(repeat):
                dec = make()
                t0 = time.perf_counter()
                try:
                    dec.decode([key], [value])
                except ticdc_fast.DecodeError as exc:
                    errors[label] = f"byte {exc.byte_offset}: {str(exc)[:50]}"
                best = min(best, time.perf_counter() - t0)
            times[label] = best
        same = "same" if errors.get("single") == errors.get("tables") else f"DIFFERENT: {errors}"
        print(f"{size / MIB:7.3g}M {times['single']:15.4f} {times['tables']:10.4f}  {errors.get('single')} ({same})",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=("avro-ids", "bombs", "router", "all"))
    ap.add_argument("--implementation", choices=("cython", "python"), default="cython")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    if args.what in ("avro-ids", "all"):
        bench_avro_ids(args.implementation, args.repeat)
    if args.what in ("bombs", "all"):
        bench_bombs(args.implementation)
    if args.what in ("router", "all"):
        bench_router(args.implementation, args.repeat)
        bench_open_router(args.implementation, args.repeat)


if __name__ == "__main__":
    main()
