"""asv benchmarks: what the error policy costs.

``on_error="dead_letter"`` (and ``"skip"``) against ``"fail"`` on the same batches of the
``mixed10`` corpus (10,000 row changes, generic and typed), clean and with one poison message
(a truncated copy of a real one) in every 1,000.  On clean input the policies must cost nothing:
the batch is decoded in one pass either way.  With poison, each bad message costs one extra pass
over the stretch of the batch before it.

    asv run --bench ErrorPolicy
"""
from __future__ import annotations

import pyarrow as pa

from .asv_corpora import PROTOCOLS, ROWS, Batch, best_time, build

POLICIES = ("fail", "skip", "dead_letter")
POISON = ("clean", "1-in-1000")


def poisoned(batch: Batch, every: int = 1000) -> None:
    """Replace every ``every``-th message (from the middle of each stretch) by its first half."""
    keys = batch.keys.to_pylist() if batch.keys is not None else None
    values = batch.values.to_pylist()
    for i in range(every // 2, len(values), every):
        values[i] = values[i][: len(values[i]) // 2]
    batch.values = pa.array(values, pa.binary())
    if keys is not None:
        batch.keys = pa.array(keys, pa.binary())


class ErrorPolicy:
    params = (list(PROTOCOLS), ["generic", "typed"], list(POLICIES), list(POISON))
    param_names = ("protocol", "mode", "on_error", "input")
    timeout = 300

    def setup_cache(self):
        return {p: build(p, "mixed10") for p in PROTOCOLS}

    setup_cache.timeout = 600

    def setup(self, cache, protocol, mode, on_error, input_):
        if on_error == "fail" and input_ != "clean":
            raise NotImplementedError("fail stops at the first poison message")
        self.batch = Batch(protocol, cache[protocol], mode, ROWS, on_error=on_error)
        if input_ != "clean":
            poisoned(self.batch)

    def time_decode(self, cache, protocol, mode, on_error, input_):
        self.batch.decode()

    def track_mb_per_second(self, cache, protocol, mode, on_error, input_):
        secs, _ = best_time(self.batch.decode)
        return round(self.batch.nbytes / secs / 1e6, 1)

    track_mb_per_second.unit = "MB/s"
