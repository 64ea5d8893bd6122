"""asv benchmarks: work per message stays bounded however many schema ids or bad zones a stream
brings (issue 11, "no quadratic path").

* ``AvroSchemaIds``: ``protocol=avro``, one message per writer-schema id (a registry hands out a
  new id for every table and every schema change).  ``time_first_decode`` includes compiling
  every id once; ``time_cached_decode`` decodes the same batch again with every id known.
* ``SimpleBadZones``: simple protocol (JSON), one DML per message, each naming a TIMESTAMP
  location that is no zone and was not seen before; the decoder remembers a bounded number of
  such names.

Both over ``n`` = 2,000 / 4,000 / 8,000 / 16,000: doubling ``n`` should at most double the
time (before the fix, ids were found by a linear scan and zones by a linear scan of an
ever-growing table: 16k ids took 13 s).  All use the Cython core.

    asv run --bench BoundedWork          # or: python -m benchmarks.asv_bounded_work
"""
from __future__ import annotations

import time

import pyarrow as pa

SIZES = (2_000, 4_000, 8_000, 16_000)
FIRST_VALUE_ID = 1_000


def avro_id_corpus(n: int) -> dict:
    """n messages, message i framed with its own value-schema id (one writer schema under all)."""
    from ticdc_fast.testing import many_schema_ids_stream
    key, values, schemas = many_schema_ids_stream(n, FIRST_VALUE_ID)
    return {"keys": pa.array([key] * n, pa.binary()), "values": pa.array(values, pa.binary()),
            "schemas": schemas}


def bad_zone_corpus(n: int) -> dict:
    """A BOOTSTRAP, then n INSERTs whose TIMESTAMP location is a new name that is no zone."""
    from ticdc_fast.testing import (SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder,
                                    SimpleTable, make_tso)
    t0 = 1_714_521_600_000
    table = SimpleTable("app", "events", 9, make_tso(t0 - 10_000),
                        [SimpleColumn("id", "int", nullable=False),
                         SimpleColumn("at", "timestamp", decimal=3)])
    enc = SimpleEncoder("json")
    boot = enc.encode_value(SimpleBootstrap(table))
    row = enc.encode_value(SimpleDML(table, "INSERT", make_tso(t0),
                                     data={"id": 1, "at": ("UTC", "2024-05-01 08:00:00.000")}))
    assert row.count(b'"location":"UTC"') == 1
    values = [row.replace(b'"location":"UTC"', b'"location":"Nowhere/Zone%07d"' % i) for i in range(n)]
    return {"bootstrap": boot, "values": pa.array(values, pa.binary())}


def typed_schema() -> pa.Schema:
    # typed output without the TIMESTAMP column: the bad zones never fail a value, so every
    # message decodes and only the zone bookkeeping is measured
    return pa.schema([("id", pa.int32())])


class AvroSchemaIds:
    params = (list(SIZES),)
    param_names = ("n",)
    timeout = 300

    def setup_cache(self):
        return {n: avro_id_corpus(n) for n in SIZES}

    setup_cache.timeout = 300

    def setup(self, cache, n):
        import ticdc_fast
        self.corpus = cache[n]
        self.cached = ticdc_fast.AvroDecoder(schemas=self.corpus["schemas"], implementation="cython")
        self.cached.decode(self.corpus["keys"], self.corpus["values"])

    def time_first_decode(self, cache, n):
        import ticdc_fast
        dec = ticdc_fast.AvroDecoder(schemas=self.corpus["schemas"], implementation="cython")
        dec.decode(self.corpus["keys"], self.corpus["values"])

    def time_cached_decode(self, cache, n):
        self.cached.decode(self.corpus["keys"], self.corpus["values"])


class SimpleBadZones:
    params = (list(SIZES),)
    param_names = ("n",)
    timeout = 300

    def setup_cache(self):
        return {n: bad_zone_corpus(n) for n in SIZES}

    setup_cache.timeout = 300

    def setup(self, cache, n):
        self.corpus = cache[n]

    def time_decode(self, cache, n):
        import ticdc_fast
        dec = ticdc_fast.SimpleDecoder("json", table="app.events", schema=typed_schema(),
                                       schemas=[self.corpus["bootstrap"]], implementation="cython")
        dec.decode(None, self.corpus["values"])


def main() -> None:
    """The same cases timed once each (best of 3), without asv."""
    avro, zones = AvroSchemaIds(), SimpleBadZones()
    print(f"{'n':>7} {'avro first':>12} {'avro cached':>12} {'simple bad zones':>17}")
    for n in SIZES:
        cache_a, cache_z = {n: avro_id_corpus(n)}, {n: bad_zone_corpus(n)}
        avro.setup(cache_a, n)
        zones.setup(cache_z, n)
        times = []
        for fn, cache in ((avro.time_first_decode, cache_a), (avro.time_cached_decode, cache_a),
                          (zones.time_decode, cache_z)):
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                fn(cache, n)
                best = min(best, time.perf_counter() - t0)
            times.append(best)
        print(f"{n:>7} {times[0]:>11.3f}s {times[1]:>11.4f}s {times[2]:>16.3f}s", flush=True)


if __name__ == "__main__":
    main()
