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


@pytest.mark.parametrize("message", [
    b'{"version"' + b'{"a":' * 200_000,                                  # malformed at byte 10
    b'{"version":1,"type":"DML","database":"shop","table":"orders","x":"\\ud800"}',   # lone surrogate
    b'{"version":1,"type":"DML","database":"shop","table":"orders","x":' + b"[" * 1100 + b"]" * 1100 + b"}",
], ids=["deep-after-bad-member", "lone-surrogate", "too-deep"])
def test_a_message_orjson_refuses_goes_to_every_table_and_fails_as_alone(impl, message):
    """What orjson refuses (but numbers beyond the double range) is refused by the single-table
    decoder at once; the router sends it to every table's decoder without parsing it again."""
    import pyarrow as pa

    import ticdc_fast

    assert SimpleRouter(TABLES, "json", "none", 1 << 20, impl)(None, [message]).tolist() == [-1]
    schema = pa.schema([("id", pa.int64())])
    with pytest.raises(ticdc_fast.DecodeError) as alone:
        ticdc_fast.SimpleDecoder("json", table="shop.orders", schema=schema, implementation=impl).decode(None, [message])
    with pytest.raises(ticdc_fast.DecodeError) as routed:
        ticdc_fast.SimpleDecoder("json", tables={t: schema for t in TABLES}, implementation=impl).decode(None, [message])
    assert str(routed.value) == str(alone.value)
    assert (routed.value.message_index, routed.value.byte_offset) == (alone.value.message_index, alone.value.byte_offset)
