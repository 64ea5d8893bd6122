"""asv benchmarks: simple-protocol rows held before their BOOTSTRAP, one message per ``decode()``.

A consumer that starts mid-stream holds every DML until the table's BOOTSTRAP (or DDL) arrives.
Streaming readers (Spark's Kafka source with small micro-batches, a Kafka poll loop) call
``decode()`` with one or a few messages, so the cost of one call must not grow with the number
of rows already held (issue 11: the front end used to copy the hold queue on every call, 40,000
held messages took 50 s).  Each benchmark is over

* ``held``: messages held before the BOOTSTRAP (10,000 to 80,000): doubling it must at
  most double the time;
* ``implementation``: the Cython core or the pure-Python twin (the hold queue is shared; the
  twin only decodes the released rows more slowly).

``HoldQueue.time_hold`` holds ``held`` JSON DML messages, one per ``decode()`` call;
``time_hold_failing`` does the same, but every call also carries a message that fails, so each
call is rolled back and then retried without it (the normal flow of an error policy);
``ReleaseHeld.time_release`` decodes the BOOTSTRAP that releases them all.  ``track_us_per_held_message`` is ``time_hold`` per message:
flat across ``held`` when the work per call is bounded.

    asv run --bench HoldQueue
    python -m benchmarks.asv_hold_queue [cython|python]   # the same, once each, without asv
"""
from __future__ import annotations

import time

import ticdc_fast
from ticdc_fast.testing import SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder, SimpleTable, make_tso

HELD = (10_000, 20_000, 40_000, 80_000)
_T0 = 1_714_521_600_000
_BAD = b'{"type":'       # malformed JSON: a message that fails its decode() call


def _messages(n: int) -> tuple[list[bytes], bytes]:
    table = SimpleTable("shop", "orders", 42, make_tso(_T0 - 10_000), [
        SimpleColumn("id", "bigint", nullable=False), SimpleColumn("status", "varchar", length=16),
        SimpleColumn("amount", "decimal", length=12, decimal=2), SimpleColumn("note", "text")])
    events = [SimpleDML(table, "INSERT", make_tso(_T0 + k),
                        data={"id": k, "status": "paid", "amount": "12.50", "note": f"order {k}"})
              for k in range(n)]
    enc = SimpleEncoder("json")
    held = [v for _, v in enc.encode(events)]
    bootstrap = [v for _, v in enc.encode([SimpleBootstrap(table)])][0]
    return held, bootstrap


def _decoder(implementation: str):
    return ticdc_fast.SimpleDecoder("json", implementation=implementation,
                                    hold_max_rows=max(HELD) + 1)


def _hold(dec, held) -> None:
    for k, v in enumerate(held):
        dec.decode(None, [v], offsets=[k])


def _hold_failing(dec, held) -> None:
    for k, v in enumerate(held):
        try:
            dec.decode(None, [v, _BAD], offsets=[k, k])
        except ticdc_fast.DecodeError:
            dec.decode(None, [v], offsets=[k])


class HoldQueue:
    params = (list(HELD), ["cython", "python"])
    param_names = ("held", "implementation")
    timeout = 600
    number = 1          # every sample needs a fresh decoder (setup runs before each)
    repeat = 3

    def setup_cache(self):
        return {n: _messages(n) for n in HELD}

    setup_cache.timeout = 300

    def setup(self, cache, held, implementation):
        self.held, self.bootstrap = cache[held]
        self.dec = _decoder(implementation)

    def time_hold(self, cache, held, implementation):
        _hold(self.dec, self.held)

    def time_hold_failing(self, cache, held, implementation):
        _hold_failing(self.dec, self.held)

    def track_us_per_held_message(self, cache, held, implementation):
        t0 = time.perf_counter()
        _hold(self.dec, self.held)
        return round((time.perf_counter() - t0) / held * 1e6, 2)

    track_us_per_held_message.unit = "µs"


class ReleaseHeld:
    """The BOOTSTRAP that releases every held row (decoded in one call)."""

    params = HoldQueue.params
    param_names = HoldQueue.param_names
    timeout = 600
    number = 1
    repeat = 3

    def setup_cache(self):
        return {n: _messages(n) for n in HELD}

    setup_cache.timeout = 300

    def setup(self, cache, held, implementation):
        messages, self.bootstrap = cache[held]
        self.dec = _decoder(implementation)
        _hold(self.dec, messages)

    def time_release(self, cache, held, implementation):
        self.dec.decode(None, [self.bootstrap])


def main(implementations=HoldQueue.params[1]) -> None:
    """Each measurement once (what ``asv run --quick`` would do), as a table."""
    hold, release = HoldQueue(), ReleaseHeld()
    cache = hold.setup_cache()
    print(f"{'held':>7} {'impl':>7} {'hold s':>8} {'µs/held':>8} {'hold+fail s':>12} {'release s':>10}")
    for implementation in implementations:
        for n in HELD:
            row = []
            for bench, name in ((hold, "time_hold"), (hold, "time_hold_failing"), (release, "time_release")):
                bench.setup(cache, n, implementation)
                t0 = time.perf_counter()
                getattr(bench, name)(cache, n, implementation)
                row.append(time.perf_counter() - t0)
            print(f"{n:>7} {implementation:>7} {row[0]:>8.2f} {row[0] / n * 1e6:>8.1f} {row[1]:>12.2f} "
                  f"{row[2]:>10.3f}", flush=True)


if __name__ == "__main__":
    import sys
    main(sys.argv[1:] or HoldQueue.params[1])
