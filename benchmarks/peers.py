"""The core side by side with the best native readers on the same bytes (issue 40, item 6).

    PYTHONPATH=. python benchmarks/peers.py --protocol avro [--rows 10000] [--rounds 7] [--json out.json]
    PYTHONPATH=. python benchmarks/peers.py --protocol all --old --baseline-python ../main/.venv/bin/python

(``--protocol`` is avro, simple-json, open, simple-avro or all; the peers are named in
``benchmarks/requirements.txt``: polars-avro, arro3-io, pysimdjson, fastavro.)

Per protocol and corpus (``goals.py``'s corpora: ``realistic5``, ``orders10``, ``wide100``,
``stream3`` = ``realistic_stream``; ``--old`` adds ``mixed10``, ``wide50``, ``strings``,
``numeric``), the core's generic and typed decodes run next to:

* **Avro protocol**: arrow-rs's arrow-avro (``polars_avro.read_avro``) over an Avro object
  container file of the same value records (the messages of the typed table minus their 5-byte
  Confluent header, in blocks of ``--ocf-block`` records, the header written by fastavro from the
  writer schema; its row count is checked).  The core decodes exactly those value messages, with
  no keys, so both read the same bytes.  Also the check-free floor of ``floor.py`` (``orders10``).
* **Simple JSON**: arrow-rs's arrow-json (``arro3.io.read_json``) over the same message values as
  NDJSON, its schema inferred beforehand, and pysimdjson's parse-only rate (``Parser.parse`` per
  document).
* **Open protocol**: pysimdjson parse-only over every key and value document, and arrow-json
  over the value document of every event, one per line (the key documents left to us: the peer
  reads less than the core does).
* **Simple Avro**: the check-free floor of ``floor.py`` on TiCDC's Go map order (``orders10``;
  no native reader takes the protocol's top-level union schema).

Method: the process pins itself to one CPU; every contender decodes once untimed; in each round
every contender runs, in an order that rotates from round to round, for ``--budget`` seconds and
keeps its best call (a ``gc.collect()`` before each call; the floor times itself over the same
budget in a subprocess).  A ratio is peer time ÷ our time (> 1: we are faster), taken within
each round (median, lowest–highest) and of the best times over all rounds.
``--baseline-python`` also runs ``ab.py``: this checkout's build against another interpreter's
(e.g. main's venv) on the same bytes, required ≥ 0.97.
"""
from __future__ import annotations

import argparse
import gc
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import pyarrow as pa

os.environ.setdefault("POLARS_MAX_THREADS", "1")      # one core: no pool of idle threads
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import goals  # noqa: E402
from _common import pin_one_core  # noqa: E402

PROTOCOLS = ("avro", "simple-json", "open", "simple-avro")
REALISTIC = ("realistic5", "orders10", "wide100", "stream3")
OLD = goals.OLD

# (mode, peer, required, aim): ratio = peer time ÷ the mode's time; "typed" as a peer is our own
# typed decode (the Avro protocol's "generic ≥ 0.6× our typed"); "typed-kv" is the Avro protocol's
# typed decode of keys and values (tombstones too), as the floor reads them
GOALS = {
    "avro": [("typed", "arrow-avro", 1.1, 1.3), ("generic", "typed", 0.6, None),
             ("typed", "polars-read_avro", None, None), ("generic", "arrow-avro", None, None),
             ("typed-kv", "floor", None, None)],
    "simple-json": [("generic", "arrow-json", 2.0, 2.5), ("typed", "arrow-json", 2.0, 2.5),
                    ("generic", "simdjson", 0.5, 0.6), ("typed", "simdjson", 0.5, 0.6)],
    "open": [("generic", "simdjson", 1.0, None), ("typed", "simdjson", 1.0, None),
             ("generic", "arrow-json", 4.0, None), ("typed", "arrow-json", 4.0, None)],
    "simple-avro": [("typed", "floor", 0.6, None), ("generic", "typed", None, None)],
}


# ------------------------------------------------------------------------------- the peers' inputs
def schema_id(message: bytes) -> int:
    return int.from_bytes(message[1:5], "big")


def avro_value_messages(case):
    """The value messages of the typed table (the schema id whose messages ``case.typed`` turns
    into the most rows) and that table's writer schema."""
    by_id = {}
    for v in case.values_list:
        if v is not None:
            by_id.setdefault(schema_id(v), []).append(v)
    rows = {sid: case.typed.decode(None, pa.array(msgs, pa.binary())).num_rows for sid, msgs in by_id.items()}
    sid = max(rows, key=rows.get)
    return by_id[sid], case._schemas[sid]


def avro_ocf(schema_text: str, bodies: list, block: int) -> bytes:
    """An object container file (codec null) of the record bodies, as they are: the header from
    fastavro's writer, then blocks of (count, size, bodies, sync)."""
    import fastavro
    parsed = fastavro.parse_schema(json.loads(schema_text), _ignore_default_error=True)
    out = io.BytesIO()
    fastavro.writer(out, parsed, [], codec="null")
    head = out.getvalue()
    sync = head[-16:]

    def long(n):
        n = (n << 1) ^ (n >> 63)
        b = bytearray()
        while n > 0x7F:
            b.append((n & 0x7F) | 0x80)
            n >>= 7
        b.append(n)
        return bytes(b)

    parts = [head]
    for i in range(0, len(bodies), block):
        chunk = b"".join(bodies[i:i + block])
        parts += [long(len(bodies[i:i + block])), long(len(chunk)), chunk, sync]
    data = b"".join(parts)
    n = sum(1 for _ in fastavro.reader(io.BytesIO(data)))
    if n != len(bodies):
        raise SystemExit(f"the object container file holds {n} records, not {len(bodies)}")
    return data


def open_value_docs(keys, values):
    """The value document of every event of the open protocol's batched messages."""
    docs = []
    for k, v in zip(keys, values):
        kp, vp, kn = 8, 0, len(k)
        while kp < kn:
            kp += 8 + goals._u64(k, kp)
            vl = goals._u64(v, vp)
            if vl:
                docs.append(v[vp + 8:vp + 8 + vl])
            vp += 8 + vl
    return docs


def ndjson(docs) -> bytes:
    if any(b"\n" in d for d in docs):
        raise SystemExit("a document holds a newline: not NDJSON as it is")
    return b"\n".join(docs) + b"\n"


def arrow_json(docs, batch):
    """arro3-io's read_json over the documents as NDJSON, its schema inferred here (untimed)."""
    from arro3.io import infer_json_schema, read_json
    data = ndjson(docs)
    schema = infer_json_schema(io.BytesIO(data))

    def run():
        return read_json(io.BytesIO(data), schema, batch_size=batch).read_all()
    rows = run().num_rows
    if rows != len(docs):
        raise SystemExit(f"arrow-json read {rows} rows of {len(docs)} documents")
    return run, len(data)


def arrow_avro(ocf, tmp, batch):
    """arrow-avro through polars-avro's native source: the file read by Rust, the record batches
    imported into pyarrow (no polars frame); and polars_avro.read_avro over the same file."""
    import polars_avro
    from polars_avro._avro_rs import AvroSource
    path = os.path.join(tmp, "values.avro")
    with open(path, "wb") as fh:
        fh.write(ocf)

    def batches():
        return [pa.record_batch(b) for b in AvroSource([path], False, False).batch_iter(batch, None)]

    def frame():
        return polars_avro.read_avro(path, batch_size=batch)
    return batches, frame


# ------------------------------------------------------------------------------------- one corpus
class Contender:
    def __init__(self, fn=None, floor=None):
        self.fn, self.floor = fn, floor

    def time(self, budget):
        if self.floor is not None:
            return self.floor(budget)
        best, end = float("inf"), time.perf_counter() + budget
        calls = 0
        while calls < 2 or time.perf_counter() < end:
            gc.collect()
            t0 = time.perf_counter()
            self.fn()
            best = min(best, time.perf_counter() - t0)
            calls += 1
        return best


def floor_contender(protocol, case, tmp):
    """The floor of floor.py for this corpus, checked against the core's typed batch."""
    import floor
    exe = floor.compile_floor(protocol, tmp)
    corpus = os.path.join(tmp, f"{protocol}.bin")
    floor.write_corpus(case, corpus)

    def run(budget):
        out = subprocess.run([exe, corpus, str(budget)], capture_output=True, text=True, check=True)
        best, bad, *sums = out.stdout.split()
        if int(bad):
            raise SystemExit("the floor found bytes it does not expect")
        return float(best), tuple(float(x) if "." in x else int(x) for x in sums)

    _, sums = run(0.01)
    mine = floor.core_sums(case.decode_typed())
    if mine != sums:
        raise SystemExit(f"the floor and the core disagree: {sums} vs {mine}")
    return Contender(floor=lambda budget: run(budget)[0])


def contenders(protocol, name, rows, tmp, args):
    """{contender: Contender}, the corpus's MB (what the core reads) and a note on the peers' input."""
    case = goals.Case(protocol, name, rows)
    note = ""
    if protocol == "avro":
        msgs, schema_text = avro_value_messages(case)
        values = pa.array(msgs, pa.binary())
        gen, typ = case.generic, case.typed
        out = {"generic": Contender(lambda: gen.decode(None, values)),
               "typed": Contender(lambda: typ.decode(None, values)),
               }
        batches, frame = arrow_avro(avro_ocf(schema_text, [m[5:] for m in msgs], args.ocf_block), tmp,
                                    args.avro_batch)
        if sum(b.num_rows for b in batches()) != len(msgs) or frame().height != len(msgs):
            raise SystemExit("arrow-avro did not read every record")
        out["arrow-avro"], out["polars-read_avro"] = Contender(batches), Contender(frame)
        rows_out = typ.decode(None, values).num_rows
        note = f"{len(msgs):,} value records of the typed table ({rows_out:,} typed rows)"
        mb = sum(len(m) for m in msgs) / 1e6
        if name == "orders10":       # the floor reads keys and values: so does typed-kv
            out["typed-kv"] = Contender(case.decode_typed)
            out["floor"] = floor_contender(protocol, case, tmp)
        return out, mb, note
    out = {"generic": Contender(case.decode_generic), "typed": Contender(case.decode_typed)}
    mb = case.nbytes / 1e6
    if protocol in ("open", "simple-json"):
        out["simdjson"] = Contender(case.baseline)
        docs = open_value_docs(case.keys_list, case.values_list) if protocol == "open" else case._docs
        run, nbytes = arrow_json(docs, args.json_batch)
        out["arrow-json"] = Contender(run)
        note = f"arrow-json: {len(docs):,} documents, {nbytes / 1e6:.2f} MB NDJSON"
    elif name == "orders10":
        out["floor"] = floor_contender(protocol, case, tmp)
    return out, mb, note


def run_rounds(cons, rounds, budget):
    """{contender: [best seconds of each round]}, contenders in an order that rotates per round."""
    for c in cons.values():
        c.time(0)
    names = list(cons)
    times = {n: [] for n in names}
    for r in range(rounds):
        k = r % len(names)
        for n in names[k:] + names[:k]:
            times[n].append(cons[n].time(budget))
    return times


def ratio(times, peer, mode):
    per = sorted(p / m for p, m in zip(times[peer], times[mode]))
    return {"median": statistics.median(per), "low": per[0], "high": per[-1],
            "best_of": min(times[peer]) / min(times[mode])}


# ------------------------------------------------------------------------------------------- main
def verdict(value, required, aim):
    if required is None:
        return "–"
    if value < required:
        return "MISS"
    return "PASS (aim met)" if aim is not None and value >= aim else "PASS"


def run_protocol(protocol, corpora, args, tmp):
    results = []
    for name in corpora:
        cons, mb, note = contenders(protocol, name, args.rows, tmp, args)
        times = run_rounds(cons, args.rounds, args.budget)
        res = {"protocol": protocol, "corpus": name, "mb": mb, "note": note,
               "best_ms": {n: min(t) * 1e3 for n, t in times.items()}, "ratios": []}
        for mode, peer, required, aim in GOALS[protocol]:
            if peer in times:
                r = ratio(times, peer, mode)
                res["ratios"].append(dict(r, mode=mode, peer=peer, required=required, aim=aim,
                                          verdict=verdict(r["median"], required, aim)))
        results.append(res)
        print(f"  measured {protocol} {name}: {note}", flush=True)
    return results


def print_table(protocol, results):
    print(f"\n### {protocol}\n")
    print("| corpus | ours ÷ peer | median (low–high) | best of | required | aim | verdict |")
    print("|---|---|---|---|---|---|---|")
    for res in results:
        for r in res["ratios"]:
            req = "–" if r["required"] is None else f"≥ {r['required']}×"
            aim = "–" if r["aim"] is None else f"{r['aim']}×"
            print(f"| {res['corpus']} | {r['mode']} ÷ {r['peer']} | {r['median']:.2f}× ({r['low']:.2f}–{r['high']:.2f}) "
                  f"| {r['best_of']:.2f}× | {req} | {aim} | {r['verdict']} |")
    print("\nbest ms: " + "; ".join(f"{res['corpus']} ({res['mb']:.1f} MB) "
                                    + ", ".join(f"{n} {t:.2f}" for n, t in res["best_ms"].items())
                                    for res in results))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--protocol", default="all", choices=PROTOCOLS + ("all",))
    ap.add_argument("--rows", type=int, default=10_000, help="row changes per corpus (default 10000)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--budget", type=float, default=0.2, help="seconds per contender per round (best call kept)")
    ap.add_argument("--corpora", default=",".join(REALISTIC))
    ap.add_argument("--old", action="store_true", help="add the old corpora (mixed10, wide50, strings, numeric)")
    ap.add_argument("--ocf-block", type=int, default=1000, help="records per object container block")
    ap.add_argument("--avro-batch", type=int, default=32768, help="arrow-avro's batch size")
    ap.add_argument("--json-batch", type=int, default=8192, help="arrow-json's batch size")
    ap.add_argument("--json", dest="json_out", help="write the results to this file")
    ap.add_argument("--baseline-python", help="also run ab.py against this interpreter's build")
    args = ap.parse_args(argv)
    pin_one_core()
    from importlib.metadata import version
    print(f"# {platform.machine()}, {os.cpu_count()} CPUs, pinned to {sorted(os.sched_getaffinity(0))}; "
          f"Python {platform.python_version()}, pyarrow {pa.__version__}, polars-avro {version('polars-avro')}, "
          f"arro3-io {version('arro3-io')}, pysimdjson {version('pysimdjson')}; load average "
          f"{os.getloadavg()[0]:.2f}")
    import ticdc_fast
    print(f"# ticdc_fast from {os.path.dirname(ticdc_fast.__file__)}; {args.rows:,} row changes per corpus, "
          f"{args.rounds} rounds of {args.budget} s per contender", flush=True)
    protocols = PROTOCOLS if args.protocol == "all" else (args.protocol,)
    corpora = list(dict.fromkeys(args.corpora.split(",") + (list(OLD) if args.old else [])))
    out = {"rows": args.rows, "rounds": args.rounds, "budget": args.budget, "results": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for p in protocols:
            out["results"][p] = run_protocol(p, corpora, args, tmp)
    print(f"# load average at the end {os.getloadavg()[0]:.2f}")
    for p in protocols:
        print_table(p, out["results"][p])
    if args.baseline_python:
        import ab
        out["ab"] = ab.run(protocols, corpora, args.rows, args.rounds, args.budget, args.baseline_python)
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
