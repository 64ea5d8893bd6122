"""SimpleDecoder(tables={...}): every message decoded once, by its table's decoder, and each
table's batch equal to the single-table typed decode of the same input (ticdc_fast/tables.py)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ticdc_fast import DecodeError, SimpleDecoder, _impl
from ticdc_fast.simple import arrow_schema
from ticdc_fast.simple.routing import ROUTE_ASK, SimpleRouter
from ticdc_fast.tables import DEAD_LETTERS, OTHER_TABLES, ROUTE_ALL, ROUTE_UNLISTED, TableBatches
from ticdc_fast.testing.realistic import realistic_stream

EVENTS, ORDERS, WIDE = "shop.events", "shop.orders", "shop.wide"


@pytest.fixture(scope="module", params=["json", "avro"])
def stream(request):
    return request.param, realistic_stream(f"simple-{request.param}", 1_500, seed=7)


def _schemas(encoding, st) -> dict:
    """Each table's default Arrow schema, read from its BOOTSTRAP."""
    seed = SimpleDecoder(encoding)
    out = {}
    for b in st.bootstraps:
        ts = seed.add_schema(b)
        out[f"{ts.database}.{ts.table}"] = arrow_schema(ts)
    return out


def _batches(values, cuts):
    bounds = [0, *cuts, len(values)]
    return [(values[a:b], list(range(a, b))) for a, b in zip(bounds, bounds[1:])]


def _single(encoding, impl, table, batches, **kw) -> list:
    dec = SimpleDecoder(encoding, table=table, implementation=impl, **kw)
    return [dec.decode(None, v, partitions=[3] * len(v), offsets=o) for v, o in batches]


def _names(encoding, st, values) -> list:
    """The (database, table) each message is about, from a generic decode (one row a message)."""
    b = SimpleDecoder(encoding, schemas=st.bootstraps).decode(None, values)
    assert b.num_rows == len(values)
    return list(zip(b.column("_schema").to_pylist(), b.column("_table").to_pylist()))


def test_three_tables_equal_three_single_table_decodes(stream, impl):
    encoding, st = stream
    schemas = _schemas(encoding, st)
    values = st.values
    # the BOOTSTRAP of shop.wide comes in the second batch: its DML of the first batch is held
    wide_boot = values[2]
    values = values[:2] + values[3:400] + [wide_boot] + values[400:]
    batches = _batches(values, [397, 900])
    tables = {EVENTS: None, ORDERS: schemas[ORDERS], WIDE: schemas[WIDE]}
    multi = SimpleDecoder(encoding, tables=tables, schemas=st.bootstraps[:2], old_image=True, implementation=impl)
    outs = []
    for v, o in batches:
        outs.append(multi.decode(None, v, partitions=[3] * len(v), offsets=o))
        if len(outs) == 1:
            assert multi.held() == _names(encoding, st, v).count(("shop", "wide")) > 0
    assert multi.held() == 0
    for table in tables:
        want = _single(encoding, impl, table, batches, schema=tables[table], schemas=st.bootstraps[:2],
                       old_image=True)
        for got, exp in zip(outs, want):
            assert isinstance(got, TableBatches) and list(got) == [EVENTS, ORDERS, WIDE]
            assert got[table].equals(exp), table
    wide = pa.concat_tables([pa.Table.from_batches([o[WIDE]]) for o in outs])
    assert wide.num_rows > 100 and "_before" in wide.column_names
    ops = wide.column("_op").to_pylist()
    assert ops.count("BOOTSTRAP") == 1 and ops.count("RESOLVED") == 2
    assert multi.stats.unlisted_rows == 0 and multi.stats.rows == sum(o.num_rows for o in outs)
    assert multi.stats.messages == len(values)
    assert multi.output_schemas(partitions=True, offsets=True) == {k: b.schema for k, b in outs[0].items()}


@pytest.mark.parametrize("unlisted", ["skip", "generic"])
def test_unlisted_tables(stream, impl, unlisted):
    encoding, st = stream
    values = st.values
    multi = SimpleDecoder(encoding, tables={EVENTS: None, ORDERS: None}, unlisted=unlisted,
                          schemas=st.bootstraps, implementation=impl)
    out = multi.decode(None, values)
    for table in (EVENTS, ORDERS):
        assert out[table].equals(_single(encoding, impl, table, [(values, list(range(len(values))))],
                                         schemas=st.bootstraps)[0].drop_columns(["_partition", "_offset"]))
    names = _names(encoding, st, values)
    wide = [v for v, n in zip(values, names) if n == ("shop", "wide")]
    if unlisted == "skip":
        assert list(out) == [EVENTS, ORDERS]
        assert multi.stats.unlisted_rows == len(wide) > 100
    else:
        assert list(out) == [EVENTS, ORDERS, OTHER_TABLES] and multi.stats.unlisted_rows == 0
        rest = [v for v, n in zip(values, names) if n in (("shop", "wide"), (None, None))]
        assert out[OTHER_TABLES].equals(SimpleDecoder(encoding, implementation=impl).decode(None, rest))
        assert set(out[OTHER_TABLES].column("_table").to_pylist()) == {"wide", None}


def _corrupt(encoding) -> bytes:
    return b'{"version":1,"type":"INSERT","database":' if encoding == "json" else b"\x16\x06\x06\x02"


@pytest.mark.parametrize("on_error", ["skip", "dead_letter"])
def test_bad_message_in_the_middle(stream, impl, on_error):
    encoding, st = stream
    values = list(st.values[:600])
    bad_at = [250, 251 + 100]
    for i in bad_at:
        values.insert(i, _corrupt(encoding))
    offsets = list(range(1000, 1000 + len(values)))
    multi = SimpleDecoder(encoding, tables={EVENTS: None, ORDERS: None, WIDE: None}, on_error=on_error,
                          schemas=st.bootstraps, implementation=impl)
    out = multi.decode(None, values, partitions=[3] * len(values), offsets=offsets)
    for table in (EVENTS, ORDERS, WIDE):
        exp = SimpleDecoder(encoding, table=table, schemas=st.bootstraps, on_error="skip",
                            implementation=impl).decode(None, values, partitions=[3] * len(values), offsets=offsets)
        assert out[table].equals(exp), table
    if on_error == "skip":
        assert DEAD_LETTERS not in out and multi.stats.skipped == 2
    else:
        dead = out[DEAD_LETTERS]
        assert multi.stats.dead_lettered == 2 and dead.num_rows == 2
        assert dead.column("_op").to_pylist() == ["ERROR", "ERROR"]
        assert [e["message_index"] for e in dead.column("_error").to_pylist()] == bad_at
        assert dead.column("_offset").to_pylist() == [1000 + i for i in bad_at]
        assert dead.column("_raw_value").to_pylist() == [_corrupt(encoding)] * 2
        assert multi.output_schemas(partitions=True, offsets=True)[DEAD_LETTERS] == dead.schema


def test_all_or_nothing_across_tables(stream, impl):
    encoding, st = stream
    values = st.values
    first = values[:2] + values[3:300]          # shop.wide's DML held: its BOOTSTRAP comes later
    second = [values[2]] + values[300:700]
    multi = SimpleDecoder(encoding, tables={EVENTS: None, ORDERS: None, WIDE: None},
                          schemas=st.bootstraps[:2], implementation=impl)
    # a table given by schema=None needs its TableSchema before decode(), as in single-table mode
    with pytest.raises(ValueError, match="shop.wide"):
        multi.decode(None, first)
    schemas = _schemas(encoding, st)
    multi = SimpleDecoder(encoding, tables={EVENTS: None, ORDERS: None, WIDE: schemas[WIDE]},
                          schemas=st.bootstraps[:2], implementation=impl)
    multi.decode(None, first)
    held, state = multi.held(), multi.state()
    assert held > 0
    # the BOOTSTRAP releases shop.wide's rows, then two tables' messages are bad: the error is the
    # first one in message order, at its index in the batch and its Kafka position
    bad = list(second)
    names = _names(encoding, st, second[1:])
    orders_at = next(i for i in range(200, len(bad)) if names[i - 1] == ("shop", "orders"))
    events_at = next(i for i in range(orders_at + 1, len(bad)) if names[i - 1] == ("shop", "events"))
    for i in (orders_at, events_at):
        bad[i] = bad[i][:-7] if encoding == "json" else bad[i][:30]
    offsets = list(range(50, 50 + len(bad)))
    with pytest.raises(DecodeError) as info:
        multi.decode(None, bad, partitions=[1] * len(bad), offsets=offsets)
    assert info.value.message_index == orders_at and info.value.offset == 50 + orders_at
    assert info.value.partition == 1
    assert multi.held() == held and multi.state() == state
    fresh = SimpleDecoder(encoding, tables={EVENTS: None, ORDERS: None, WIDE: schemas[WIDE]},
                          schemas=st.bootstraps[:2], implementation=impl)
    fresh.decode(None, first)
    again, want = multi.decode(None, second), fresh.decode(None, second)
    assert multi.held() == 0 and list(again) == list(want)
    assert all(again[k].equals(want[k]) for k in want)
    assert again[WIDE].num_rows > held


MESSAGES_JSON = [
    b'{"version":1,"database":"shop","table":"events","type":"INSERT","commitTs":1,"data":{}}',
    b'{"version":1,"database":"shop","table":"wide","type":"INSERT","commitTs":1,"data":{}}',
    b'{"type":"WATERMARK","commitTs":5}',
    b'{"version":1,"\\u0064atabase":"shop","table":"orders","type":"INSERT","commitTs":1,"data":{}}',
    b'{"database":"shop","table":"wide","database":"shop","table":"orders","type":"DELETE","commitTs":1,"old":{}}',
    b'{"database":"sh\\u006fp","table":"events","type":"INSERT","commitTs":1,"data":{}}',
    b'{"type":"BOOTSTRAP","commitTs":0,"tableSchema":{"schema":"shop","table":"orders","version":1,"columns":[]}}',
    b'{"type":"ERASE","commitTs":1,"preTableSchema":{"schema":"shop","table":"events","version":1,"columns":[]}}',
    b'{"type":"QUERY","commitTs":1,"sql":"create database x"}',
    b'{"type":"INSERT","database":"shop","table":"events","data":{"a":1e999}}',
    b'{"type":"INSERT","database":"shop","table":"events","data":{"a":123456789012345678901234567890}}',
    b'{"type":"INSERT","database":"shop","table":"events","data":{"a":"\\ud800"}}',
    b'{"type":"INSERT","database":"shop","table":"events","data":{"a":"\xff"}}',
    b'{"type":"INSERT","database":"shop","table":"events",}',
    b'[1,2]', b'', b'   ', None,
    b'{"type":"INSERT","database":null,"table":"events","data":{}}',
    b'{"type":"INSERT","database":"shop","table":"events","data":' + b"[" * 1100 + b"]" * 1100 + b"}",
]


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")
def test_core_router_and_twin_agree():
    """The core reads DML names in place and leaves the rest to the front end: whatever it
    decides, the twin decides the same."""
    want = [0, ROUTE_UNLISTED, ROUTE_ALL, 1, 1, 0, 1, 0, ROUTE_UNLISTED, 0, 0]
    routers = {impl: SimpleRouter([EVENTS, ORDERS], "json", "none", 1 << 20, impl) for impl in ("cython", "python")}
    got = {impl: r(None, MESSAGES_JSON).tolist() for impl, r in routers.items()}
    assert got["cython"] == got["python"]
    assert got["python"][:len(want)] == want
    arrow = routers["cython"](None, pa.array(MESSAGES_JSON, pa.binary()))
    assert arrow.tolist() == got["python"]
    assert got["python"][len(want) + 2:] == [ROUTE_ALL] * (len(MESSAGES_JSON) - len(want) - 2)
    # the core itself reads plain DML and WATERMARK messages (the front end only the rest)
    raw = np.frombuffer(_impl.core.simple_routes(MESSAGES_JSON[:3], [(b"shop", b"events")], False), np.int32)
    assert raw.tolist() == [0, ROUTE_UNLISTED, ROUTE_ALL]


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")
def test_core_reads_the_realistic_stream_itself(stream):
    encoding, st = stream
    names = [(b"shop", b"events"), (b"shop", b"orders")]
    raw = np.frombuffer(_impl.core.simple_routes(st.values, names, encoding == "avro"), np.int32)
    asked = np.flatnonzero(raw == ROUTE_ASK).tolist()
    assert asked == [0, 1, 2]          # the BOOTSTRAPs only
    router = SimpleRouter([EVENTS, ORDERS], encoding, "none", 1 << 20, "python")
    assert raw[3:].tolist() == router(None, st.values[3:]).tolist()


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")
def test_core_router_and_twin_agree_avro():
    st = realistic_stream("simple-avro", 40, seed=3)
    values = list(st.values) + [None, b"", b"\x16", b"\x16\x06\x06\x02\x0a", b"\x15\x06"]
    values += [v[:k] for v in st.values[3:6] for k in (5, 9, 12)]
    codes = [SimpleRouter([WIDE, EVENTS], "avro", "none", 1 << 20, impl)(None, values).tolist()
             for impl in ("cython", "python")]
    assert codes[0] == codes[1]
    assert codes[0][:3] == [1, ROUTE_UNLISTED, 0]       # the BOOTSTRAPs: events, orders, wide
    assert set(codes[0][3:len(st.values)]) <= {0, 1, ROUTE_ALL, ROUTE_UNLISTED}
    assert isinstance(np.asarray(codes[0]), np.ndarray)
