"""asv benchmarks: many tables of one topic, one multi-table decode against one decode per table.

The topic is ``realistic_stream("open", 10_000)`` (tiflow flavour, up to 16 events per Kafka
message): ``shop.events`` (half of the rows, 5 columns), ``shop.orders`` (40%, 10 columns) and
``shop.wide`` (10%, 100 columns) interleaved, typed with the schemas ``infer_open_schema`` finds.

* ``tables``: ``OpenDecoder(tables={the three})``, every message read once;
* ``three_single``: ``OpenDecoder(table=..., schema=...)`` for each table on the same messages
  (what a reader of several tables did before ``tables=``);
* ``two_tables_skip``: ``tables=`` with ``shop.events`` and ``shop.orders`` listed, ``shop.wide``
  skipped (its values still read and checked, not converted).

    asv run --bench OpenMultiTable
"""
from __future__ import annotations

import ticdc_fast
from ticdc_fast.arrow_types import infer_open_schema
from ticdc_fast.testing import realistic_stream

from .asv_corpora import ROWS, SEED, best_time, pack, payload_bytes, unpack

MODES = ("tables", "three_single", "two_tables_skip")


class OpenMultiTable:
    params = (list(MODES),)
    param_names = ("mode",)
    timeout = 300

    def setup_cache(self):
        s = realistic_stream("open", ROWS, SEED)
        schemas = {t: infer_open_schema(s.keys, s.values, t) for t in s.tables}
        return {"keys": pack(s.keys), "values": pack(s.values), "schemas": schemas}

    setup_cache.timeout = 600

    def setup(self, cache, mode):
        self.keys, self.values = unpack(cache["keys"]), unpack(cache["values"])
        self.nbytes = payload_bytes(self.keys, self.values)
        schemas = cache["schemas"]
        if mode == "three_single":
            decoders = [ticdc_fast.OpenDecoder(table=t, schema=s, implementation="cython")
                        for t, s in schemas.items()]
            self.decode = lambda: [d.decode(self.keys, self.values) for d in decoders]
            return
        if mode == "two_tables_skip":
            schemas = {t: schemas[t] for t in ("shop.events", "shop.orders")}
        dec = ticdc_fast.OpenDecoder(tables=schemas, implementation="cython")
        self.decode = lambda: list(dec.decode(self.keys, self.values).values())

    def time_decode(self, cache, mode):
        self.decode()

    def peakmem_decode(self, cache, mode):
        self.decode()

    def track_rows_per_second(self, cache, mode):
        secs, out = best_time(self.decode)
        return round(sum(b.num_rows for b in out) / secs)

    track_rows_per_second.unit = "rows/s"

    def track_mb_per_second(self, cache, mode):
        secs, _ = best_time(self.decode)
        return round(self.nbytes / secs / 1e6, 1)

    track_mb_per_second.unit = "MB/s"
