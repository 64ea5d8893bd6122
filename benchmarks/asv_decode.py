"""asv benchmarks: decoding one Kafka batch of TiCDC messages into an Arrow record batch.

One class per protocol, each over

* ``mode``: ``generic`` (``after``/``before`` maps) or ``typed`` (the table's columns, with the
  schema inferred from the data: ``infer_open_schema``, ``simple_arrow_schema``, or the default
  Arrow types of the Avro writer schema);
* ``mix``: ``mixed10``, ``wide50``, ``strings``, ``numeric``, ``realistic5``, ``wide100`` (see
  ``asv_corpora``);
* ``rows``: row changes in the batch (1,000 or 10,000).

All use the Cython core (``implementation="cython"``); ``PureTwin`` compares it with the
pure-Python twin on the ``mixed10`` mix only.  The corpora are built once per class in
``setup_cache`` (fixed seeds); ``setup`` picks a batch and builds its decoder.

``track_rows_per_second`` counts decoded output rows (row changes plus the few resolved-ts /
WATERMARK rows); ``track_mb_per_second`` counts Kafka key + value bytes.  Both time the
fastest of several decodes (at least 3, up to ~0.2 s) in one process.

    asv run --quick                       # everything once
    asv run --bench OpenProtocol          # one protocol
    asv continuous --factor 1.5 main HEAD # regressions against main
"""
from __future__ import annotations

from .asv_corpora import (MIXES, MODES, ROW_COUNTS, SMALL_ROWS, Batch, best_time, build,
                          build_all, change_stream)


class _DecodeSuite:
    """Benchmarks shared by the per-protocol classes (each defines ``protocol`` and its own
    ``setup_cache``: asv keys the cache by the function's source line, so it is not inherited)."""

    protocol = ""
    params = (list(MODES), list(MIXES), list(ROW_COUNTS))
    param_names = ("mode", "mix", "rows")
    timeout = 120

    def setup(self, cache, mode, mix, rows):
        self.batch = Batch(self.protocol, cache[mix], mode, rows, implementation="cython")

    def time_decode(self, cache, mode, mix, rows):
        self.batch.decode()

    def peakmem_decode(self, cache, mode, mix, rows):
        self.batch.decode()

    def track_rows_per_second(self, cache, mode, mix, rows):
        secs, out = best_time(self.batch.decode)
        return round(out.num_rows / secs)

    track_rows_per_second.unit = "rows/s"

    def track_mb_per_second(self, cache, mode, mix, rows):
        secs, _ = best_time(self.batch.decode)
        return round(self.batch.nbytes / secs / 1e6, 1)

    track_mb_per_second.unit = "MB/s"


class OpenProtocol(_DecodeSuite):
    """``protocol=open-protocol`` (tiflow flavour, up to 16 rows per Kafka message)."""

    protocol = "open"

    def setup_cache(self):
        return build_all("open")

    setup_cache.timeout = 300


class SimpleJson(_DecodeSuite):
    """``protocol=simple``, ``encoding-format=json``; the decoder is seeded with the BOOTSTRAP."""

    protocol = "simple-json"

    def setup_cache(self):
        return build_all("simple-json")

    setup_cache.timeout = 300


class SimpleAvro(_DecodeSuite):
    """``protocol=simple``, ``encoding-format=avro``; the decoder is seeded with the BOOTSTRAP."""

    protocol = "simple-avro"

    def setup_cache(self):
        return build_all("simple-avro")

    setup_cache.timeout = 300


class AvroProtocol(_DecodeSuite):
    """``protocol=avro`` (Confluent framing; writer schemas given offline, no registry)."""

    protocol = "avro"

    def setup_cache(self):
        return build_all("avro")

    setup_cache.timeout = 300


class PureTwin:
    """The Cython core against the pure-Python twin: ``mixed10``, 1,000 row changes."""

    params = (["open", "simple-json", "simple-avro", "avro"], ["cython", "python"], list(MODES))
    param_names = ("protocol", "implementation", "mode")
    timeout = 120

    def setup_cache(self):
        changes = change_stream("mixed10", SMALL_ROWS)
        return {p: build(p, "mixed10", changes) for p in self.params[0]}

    setup_cache.timeout = 300

    def setup(self, cache, protocol, implementation, mode):
        self.batch = Batch(protocol, cache[protocol], mode, SMALL_ROWS,
                           implementation=implementation)

    def time_twin(self, cache, protocol, implementation, mode):
        self.batch.decode()
