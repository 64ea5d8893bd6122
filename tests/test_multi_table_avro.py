"""AvroDecoder(tables={...}): a consumer of several topics (one per table) decodes each message
once, by the decoder of the table its schema id names; each table's batch equals the
single-table typed decode of the same input."""
from __future__ import annotations

import orjson
import pyarrow as pa
import pytest

from ticdc_fast import AvroDecoder, DecodeError
from ticdc_fast.tables import DEAD_LETTERS, OTHER_TABLES
from ticdc_fast.testing import LocalSchemaRegistry
from ticdc_fast.testing.realistic import mix_columns, realistic_stream

EVENTS, ORDERS, WIDE = "shop.events", "shop.orders", "shop.wide"


@pytest.fixture(scope="module")
def stream():
    st = realistic_stream("avro", 900, seed=5)
    messages = list(st.messages)
    # a DDL of shop.orders and a checkpoint (no key), as TiCDC sends them with enable-tidb-extension
    ddl = b"\x01" + orjson.dumps({"schema": "shop", "table": "orders", "query": "ALTER TABLE orders COMMENT 'x'",
                                  "commitTs": 77, "type": 4})
    messages.insert(300, (None, ddl))
    messages.insert(500, (None, b"\x02" + (99).to_bytes(8, "big")))
    return st, messages


def _schemas(st) -> dict:
    return {t: pa.schema([(n, pa.int64() if k == "pk" else pa.string()) for n, k in mix_columns(m)])
            for t, m in st.tables.items()}


def _single(st, impl, table, keys, values, **kw):
    dec = AvroDecoder(schemas=st.schemas, table=table, schema=_schemas(st)[table], implementation=impl, **kw)
    return dec.decode(keys, values, partitions=[2] * len(values), offsets=list(range(len(values))))


@pytest.mark.parametrize("arrow_input", [False, True])
def test_three_topics_equal_three_single_table_decodes(stream, impl, arrow_input):
    st, messages = stream
    keys, values = [k for k, _ in messages], [v for _, v in messages]
    multi = AvroDecoder(schemas=st.schemas, tables=_schemas(st), old_image=True, implementation=impl)
    k_in, v_in = (pa.array(keys, pa.binary()), pa.array(values, pa.binary())) if arrow_input else (keys, values)
    out = multi.decode(k_in, v_in, partitions=[2] * len(values), offsets=list(range(len(values))))
    assert list(out) == [EVENTS, ORDERS, WIDE]
    for table in out:
        assert out[table].equals(_single(st, impl, table, keys, values, old_image=True)), table
    ops = out[ORDERS].column("_op").to_pylist()
    assert ops.count("DDL") == 1 and ops.count("RESOLVED") == 1 and "DELETE" in ops
    assert out[EVENTS].column("_op").to_pylist().count("DDL") == 0
    assert multi.stats.rows == out.num_rows and multi.stats.messages == len(values)
    assert multi.output_schemas(partitions=True, offsets=True) == {k: b.schema for k, b in out.items()}


@pytest.mark.parametrize("unlisted", ["skip", "generic"])
def test_unlisted(stream, impl, unlisted):
    st, messages = stream
    keys, values = [k for k, _ in messages], [v for _, v in messages]
    schemas = _schemas(st)
    multi = AvroDecoder(schemas=st.schemas, tables={EVENTS: schemas[EVENTS], WIDE: schemas[WIDE]},
                        unlisted=unlisted, implementation=impl)
    out = multi.decode(keys, values)
    generic = AvroDecoder(schemas=st.schemas, implementation=impl).decode(keys, values)
    orders = [i for i, t in enumerate(generic.column("_table").to_pylist()) if t == "orders"]
    for table in (EVENTS, WIDE):
        assert out[table].equals(_single(st, impl, table, keys, values).drop_columns(["_partition", "_offset"]))
    if unlisted == "skip":
        assert list(out) == [EVENTS, WIDE] and multi.stats.unlisted_rows == len(orders) > 100
    else:
        assert multi.stats.unlisted_rows == 0
        rest = [i for i, t in enumerate(generic.column("_table").to_pylist()) if t in ("orders", None)]
        assert out[OTHER_TABLES].equals(generic.take(pa.array(rest)))


@pytest.mark.parametrize("on_error", ["skip", "dead_letter"])
def test_bad_message_in_the_middle(stream, impl, on_error):
    st, messages = stream
    keys, values = [k for k, _ in messages], [v for _, v in messages]
    bad_at = next(i for i in range(400, 600) if values[i] is not None and values[i][:1] == b"\x00")
    values[bad_at] = values[bad_at][:9]
    values.insert(700, b"\x00\x00\x00\x7f\x7f\x02")        # a schema id nobody knows
    keys.insert(700, None)
    multi = AvroDecoder(schemas=st.schemas, tables=_schemas(st), on_error=on_error, implementation=impl)
    out = multi.decode(keys, values, partitions=[2] * len(values), offsets=list(range(len(values))))
    for table in (EVENTS, ORDERS, WIDE):
        assert out[table].equals(_single(st, impl, table, keys, values, on_error="skip")), table
    if on_error == "skip":
        assert multi.stats.skipped == 2
    else:
        dead = out[DEAD_LETTERS]
        assert [e["message_index"] for e in dead.column("_error").to_pylist()] == [bad_at, 700]
        assert dead.column("_raw_value").to_pylist() == [values[bad_at], values[700]]


def test_first_bad_message_and_all_or_nothing(stream, impl):
    st, messages = stream
    keys, values = [k for k, _ in messages], [v for _, v in messages]
    tables = _schemas(st)
    multi = AvroDecoder(schemas=st.schemas, tables=tables, implementation=impl)
    generic = AvroDecoder(schemas=st.schemas, implementation=impl).decode(keys, values)
    names = generic.column("_table").to_pylist()
    wide_at = next(i for i in range(100, len(values)) if names[i] == "wide" and values[i] is not None)
    events_at = next(i for i in range(wide_at + 1, len(values)) if names[i] == "events" and values[i] is not None)
    bad = list(values)
    bad[events_at] = bad[events_at][:7]
    bad[wide_at] = bad[wide_at][:8]
    with pytest.raises(DecodeError) as info:
        multi.decode(keys, bad, partitions=[4] * len(bad), offsets=list(range(10, 10 + len(bad))))
    assert info.value.message_index == wide_at and info.value.offset == 10 + wide_at
    again = multi.decode(keys, values)
    fresh = AvroDecoder(schemas=st.schemas, tables=tables, implementation=impl).decode(keys, values)
    assert all(again[k].equals(fresh[k]) for k in fresh)


def test_registry_each_schema_fetched_once(stream, impl):
    st, messages = stream
    keys, values = [k for k, _ in messages], [v for _, v in messages]
    host = "127.85.0.1" if impl == "cython" else "127.85.0.2"
    with LocalSchemaRegistry(host=host) as reg:
        for sid, text in sorted(st.schemas.items()):
            assert reg.register(f"s{sid}", text) == sid
        multi = AvroDecoder(reg.url, tables=_schemas(st), unlisted="generic", implementation=impl)
        out = multi.decode(keys, values)
        fetched = [p for m, p in reg.requests if m == "GET" and p.startswith("/schemas/ids/")]
        assert sorted(fetched) == sorted(set(fetched)) and len(fetched) == len(st.schemas)
        assert out[OTHER_TABLES].num_rows == 1      # the checkpoint: every table's, and the others'
        offline = AvroDecoder(schemas=st.schemas, tables=_schemas(st), implementation=impl).decode(keys, values)
        assert all(out[k].equals(offline[k]) for k in offline)
