"""asv benchmarks: many tables of one topic, one multi-table decode against one decode per table.

The topic is ``realistic_stream(protocol, 10_000)``: ``shop.events`` (half of the rows, 5
columns), ``shop.orders`` (40%, 10 columns) and ``shop.wide`` (10%, 100 columns) interleaved
(open protocol: tiflow flavour, up to 16 events per Kafka message; Avro protocol: the three
subjects' messages interleaved, as a consumer of three topics reads them).  Typed with each
table's default schema: ``infer_open_schema`` (open), the BOOTSTRAP's TableSchema (simple),
the writer schema (Avro).

* ``tables``: ``tables={the three}``, every message read once;
* ``three_single``: ``table=..., schema=...`` for each table on the same messages (what a reader
  of several tables did before ``tables=``);
* ``two_tables_skip``: ``tables=`` with ``shop.events`` and ``shop.orders`` listed, ``shop.wide``
  skipped.

    asv run --bench MultiTable
"""
from __future__ import annotations

import ticdc_fast
from ticdc_fast.testing import realistic_stream

from .asv_corpora import ROWS, SEED, best_time, pack, payload_bytes, unpack

PROTOCOLS = ("open", "simple-json", "avro")
MODES = ("tables", "three_single", "two_tables_skip")
TWO = ("shop.events", "shop.orders")


def _schemas(protocol: str, s) -> tuple[dict, dict]:
    """(typed schema per table, decoder options) of a realistic stream."""
    if protocol == "open":
        return {t: ticdc_fast.infer_open_schema(s.keys, s.values, t) for t in s.tables}, {}
    if protocol == "simple-json":
        schemas = {}
        for t in s.tables:
            ts = ticdc_fast.simple.latest_table_schema(s.values, t)
            schemas[t] = ticdc_fast.simple.arrow_schema(ts)
        return schemas, {"schemas": [v for v in s.values if b'"BOOTSTRAP"' in v[:200]]}
    from ticdc_fast.avro import avro_arrow_schema, compile_writer_schema
    schemas = {}
    for sid, text in s.schemas.items():
        ws = compile_writer_schema(sid, text)
        schemas[f"{ws.database}.{ws.table}"] = avro_arrow_schema(ws)
    return {t: schemas[t] for t in s.tables}, {"schemas": dict(s.schemas)}


def make_decoder(protocol: str, options: dict, **kw):
    if protocol == "open":
        return ticdc_fast.OpenDecoder(implementation="cython", **options, **kw)
    if protocol == "simple-json":
        return ticdc_fast.SimpleDecoder("json", implementation="cython", **options, **kw)
    return ticdc_fast.AvroDecoder(implementation="cython", **options, **kw)


class MultiTable:
    params = (list(PROTOCOLS), list(MODES))
    param_names = ("protocol", "mode")
    timeout = 300

    def setup_cache(self):
        out = {}
        for protocol in PROTOCOLS:
            s = realistic_stream(protocol, ROWS, SEED)
            schemas, options = _schemas(protocol, s)
            out[protocol] = {"keys": pack(s.keys), "values": pack(s.values), "schemas": schemas,
                             "options": options}
        return out

    setup_cache.timeout = 900

    def setup(self, cache, protocol, mode):
        c = cache[protocol]
        self.keys, self.values = unpack(c["keys"]), unpack(c["values"])
        self.nbytes = payload_bytes(self.keys, self.values)
        schemas, options = c["schemas"], c["options"]
        if mode == "three_single":
            # fresh decoders per call: the simple protocol's state must not carry over
            self.decode = lambda: [make_decoder(protocol, options, table=t, schema=s).decode(self.keys, self.values)
                                   for t, s in schemas.items()]
            return
        if mode == "two_tables_skip":
            schemas = {t: schemas[t] for t in TWO}
        self.decode = lambda: list(make_decoder(protocol, options, tables=schemas).decode(self.keys, self.values).values())

    def time_decode(self, cache, protocol, mode):
        self.decode()

    def peakmem_decode(self, cache, protocol, mode):
        self.decode()

    def track_rows_per_second(self, cache, protocol, mode):
        secs, out = best_time(self.decode)
        return round(sum(b.num_rows for b in out) / secs)

    track_rows_per_second.unit = "rows/s"

    def track_mb_per_second(self, cache, protocol, mode):
        secs, _ = best_time(self.decode)
        return round(self.nbytes / secs / 1e6, 1)

    track_mb_per_second.unit = "MB/s"
