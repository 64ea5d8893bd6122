"""Hostile input through the simple protocol's message router (``tables={...}``): mutated JSON
and Avro messages — the core's in-place read of the naming members never crashes and, where it
decides, decides what the twin's router decides (it hands the rest to the twin).  Runs under the
sanitizer build too (scripts/sanitize.sh test tests/test_routing_hostile.py)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from ticdc_fast import _impl
from ticdc_fast.simple.routing import ROUTE_ASK, SimpleRouter
from ticdc_fast.testing import realistic_stream

from conftest import mutate

TABLES = ["shop.events", "shop.orders"]
INTERESTING = [b'"', b"\\", b"{", b"}", b"[", b"]", b":", b",", b"\\u0000", b'"database"', b'"table"',
               b'"type"', b'"DML"', b'"shop"', b"\x00", b"\xff", b"\x80", b"\x16", b"\x06", b"\x7f" * 9]


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")
@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_mutated_messages_route_alike_in_core_and_twin(encoding):
    if _impl.core is None:
        pytest.fail("the compiled core is not built: " + str(_impl.CORE_PROBLEM))
    st = realistic_stream(f"simple-{encoding}", 200, seed=21)
    rnd = random.Random(4242)
    names = [(b"shop", b"events"), (b"shop", b"orders")]
    twin = SimpleRouter(TABLES, encoding, "none", 1 << 20, "python")
    decided = 0
    for round_ in range(40):
        values = [mutate(v, rnd, rnd.randrange(1, 4), INTERESTING) for v in st.values]
        raw = np.frombuffer(_impl.core.simple_routes(values, names, encoding == "avro"), np.int32)
        want = twin(None, values)
        mine = raw != ROUTE_ASK
        decided += int(mine.sum())
        assert raw[mine].tolist() == want[mine].tolist(), f"round {round_}"
        assert SimpleRouter(TABLES, encoding, "none", 1 << 20, "cython")(None, values).tolist() == want.tolist()
    assert decided > 400       # the core decided many messages itself (the twin the odd rest)
