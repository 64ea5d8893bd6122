"""``OpenDecoder(tables={...})``: many tables of one topic in one pass.

Every listed table's batch must be exactly what the single-table decode
``OpenDecoder(table=..., schema=...)`` gives on the same messages (RESOLVED rows in every table,
DDL rows in their own, Kafka columns, old image, claim-check rows, invalid UTF-8 counts), rows of
other tables skipped and counted or kept in generic layout under ``OTHER_TABLES``, and bad
messages handled by the error policy with their original index.
"""
from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import ticdc_fast
from ticdc_fast import _constants as C
from ticdc_fast import _impl
from ticdc_fast.arrow_types import infer_open_schema
from ticdc_fast.errors import DecodeError
from ticdc_fast.tables import DEAD_LETTERS, OTHER_TABLES, TableBatches
from ticdc_fast.testing.open_encoder import (DDL, Col, OpenEncoder, Resolved, RowChange, make_tso,
                                             realistic_changefeed)
from ticdc_fast.testing.realistic import _open_specs, interleaved_changes

from conftest import frame, mutate, row_event

FLAVORS = ("tiflow", "ticdc")
TABLES = ("shop.events", "shop.orders", "shop.wide")
MIXES = {"events": "realistic5", "orders": "orders10", "wide": "wide100"}
T0 = 1_714_521_600_000
# TEXT of shop.orders whose bytes are no UTF-8 (TiCDC base64-encodes TEXT, so any bytes travel)
BAD_TEXT = b"caf\xe9 \xff"


def _events(n_rows: int, seed: int) -> list:
    """Row changes of the three tables interleaved, resolved events, DDL of each table and of
    tables not listed anywhere (one without a table name), and two rows with invalid UTF-8."""
    specs = {name: _open_specs(mix) for name, mix in MIXES.items()}
    events = []
    for ch in interleaved_changes(n_rows, seed, resolved_every=150):
        if ch[0] == "resolved":
            events.append(Resolved(ch[1]))
            continue
        _, _, ts, after, before, name = ch
        sp = specs[name]
        image = (lambda vals: None if vals is None
                 else [Col(n, t, v, f) for (n, t, f), v in zip(sp, vals)])
        events.append(RowChange("shop", name, ts, image(after), image(before), row_id=(after or before)[0]))
    rnd = random.Random(seed)
    for k, (scm, tbl, query) in enumerate((
            ("shop", "events", "ALTER TABLE events ADD INDEX i1 (c04_tinyint)"),
            ("shop", "gone", "DROP TABLE gone"),
            ("shop", "orders", "ALTER TABLE orders COMMENT 'ç—🎁'"),
            ("shop", "", "CREATE DATABASE shop"),
            ("shop", "wide", "TRUNCATE TABLE wide"))):
        at = (k + 1) * len(events) // 6 + rnd.randrange(5)
        before = events[at - 1]
        events.insert(at, DDL(scm, tbl, before.ts if isinstance(before, Resolved) else before.commit_ts,
                              query, 3))
    for k, at in enumerate((len(events) // 3, 2 * len(events) // 3)):
        prev = next(e for e in events[at:] if isinstance(e, RowChange) and e.table == "orders"
                    and e.after is not None)
        after = [Col(c.name, c.type, BAD_TEXT if c.name == "c07_text" else c.value, c.flags)
                 for c in prev.after]
        after[0] = Col(after[0].name, after[0].type, 10_000_000 + k, after[0].flags)
        events.insert(at, RowChange("shop", "orders", prev.commit_ts, after, None, row_id=10_000_000 + k))
    return events


_STREAMS: dict = {}


def stream(flavor: str, n_rows: int = 900, seed: int = 5):
    """(keys, values, {table: inferred schema}): control events ride inside batched messages."""
    key = (flavor, n_rows, seed)
    if key not in _STREAMS:
        msgs = OpenEncoder(flavor, max_batch_size=16, batch_control_events=True).encode(_events(n_rows, seed))
        keys, values = [k for k, _ in msgs], [v for _, v in msgs]
        _STREAMS[key] = keys, values, {t: infer_open_schema(keys, values, t) for t in TABLES}
    return _STREAMS[key]


def kafka(n: int) -> dict:
    return {"partitions": [3] * n, "offsets": [1000 + i for i in range(n)]}


def decode_single(impl, keys, values, table, schema, *, partitions=None, offsets=None, **kw):
    dec = ticdc_fast.OpenDecoder(table=table, schema=schema, implementation=impl, **kw)
    return dec, dec.decode(keys, values, partitions=partitions, offsets=offsets)


def generic_unlisted(impl, keys, values, listed, **kw) -> pa.RecordBatch:
    """The generic decode's rows of tables not in ``listed`` (RESOLVED rows belong to the listed
    tables' batches)."""
    batch = ticdc_fast.OpenDecoder(implementation=impl).decode(keys, values, **kw)
    names = pc.binary_join_element_wise(pc.fill_null(batch.column("_schema"), ""),
                                        pc.fill_null(batch.column("_table"), ""), ".")
    keep = pc.and_(pc.invert(pc.is_in(names, pa.array(list(listed)))),
                   pc.not_equal(batch.column("_op"), "RESOLVED"))
    return batch.filter(keep)


# --------------------------------------------------------------------------- equal to single-table
@pytest.mark.parametrize("flavor", FLAVORS)
def test_three_tables_in_one_pass_equal_three_single_table_decodes(flavor, impl):
    keys, values, schemas = stream(flavor)
    kw = kafka(len(keys))
    dec = ticdc_fast.OpenDecoder(tables=schemas, implementation=impl)
    got = dec.decode(keys, values, **kw)
    assert isinstance(got, TableBatches)
    assert list(got) == list(TABLES) == got.tables()
    total = 0
    for table, schema in schemas.items():
        _, want = decode_single(impl, keys, values, table, schema, **kw)
        assert got[table].equals(want), table
        assert got[table].schema == want.schema
        total += want.num_rows
    # the stream is what the test claims: every table has rows, DDL and RESOLVED rows
    for table in TABLES:
        ops = set(got[table].column("_op").to_pylist())
        assert {"INSERT", "UPDATE", "DELETE", "DDL", "RESOLVED"} <= ops, (table, ops)
    assert dec.stats.rows == got.num_rows == total
    assert dec.stats.messages == len(keys)
    assert dec.stats.unlisted_rows == 2         # the DDL of shop.gone and the one without a table
    assert dec.output_schemas(partitions=True, offsets=True) == {t: b.schema for t, b in got.items()}


@pytest.mark.parametrize("flavor", FLAVORS)
def test_old_image_and_no_control_events_per_table(flavor, impl):
    keys, values, schemas = stream(flavor)
    for kw in ({"old_image": True}, {"control_events": False}, {"old_image": True, "control_events": False}):
        got = ticdc_fast.OpenDecoder(tables=schemas, implementation=impl, **kw).decode(keys, values)
        for table, schema in schemas.items():
            _, want = decode_single(impl, keys, values, table, schema, **kw)
            assert got[table].equals(want), (table, kw)
        if kw.get("old_image"):
            before = got["shop.orders"].column("_before")
            assert before.null_count < len(before)       # UPDATE/DELETE rows carry their old image
        if kw.get("control_events") is False:
            assert set(got["shop.events"].column("_op").to_pylist()) == {"INSERT", "UPDATE", "DELETE"}


def test_values_are_exact(impl):
    """A spot check on real values (not only equality with the single-table path): the full-precision
    doubles and non-ASCII text of shop.events come out as they went in."""
    keys, values, schemas = stream("ticdc")
    got = ticdc_fast.OpenDecoder(tables=schemas, implementation=impl).decode(keys, values)
    generic = ticdc_fast.OpenDecoder(implementation=impl).decode(keys, values)
    rows = [r for r in generic.to_pylist() if r["_table"] == "events" and r["_op"] == "INSERT"]
    ev = got["shop.events"].to_pylist()
    typed = [r for r in ev if r["_op"] == "INSERT"]
    assert len(typed) == len(rows) > 100
    for g, t in zip(rows, typed):
        after = dict(g["after"])
        assert t["id"] == int(after["id"])
        assert t["c01_varchar_intl"] == after.get("c01_varchar_intl")
        d = after.get("c02_double_full")
        assert (t["c02_double_full"] is None) == (d is None)
        if d is not None:
            assert t["c02_double_full"] == float(d) and repr(float(d)) != f"{float(d):.2f}"
    texts = [r["c01_varchar_intl"] for r in typed if r["c01_varchar_intl"]]
    assert any(not s.isascii() for s in texts)
    assert any(r["c02_double_full"] is None for r in typed)


# --------------------------------------------------------------------------- unlisted tables
@pytest.mark.parametrize("flavor", FLAVORS)
def test_unlisted_skip_counts_what_generic_keeps(flavor, impl):
    keys, values, schemas = stream(flavor)
    listed = {t: schemas[t] for t in ("shop.orders", "shop.events")}   # listed out of stream order
    kw = kafka(len(keys))
    skip = ticdc_fast.OpenDecoder(tables=listed, implementation=impl)
    got = skip.decode(keys, values, **kw)
    assert list(got) == ["shop.orders", "shop.events"]
    for table, schema in listed.items():
        assert got[table].equals(decode_single(impl, keys, values, table, schema, **kw)[1])
    other = generic_unlisted(impl, keys, values, listed, **kw)
    # shop.wide's rows and DDL, the DDL of shop.gone and the DDL without a table
    assert set(other.column("_op").to_pylist()) == {"INSERT", "UPDATE", "DELETE", "DDL"}
    assert other.filter(pc.equal(other.column("_op"), "DDL")).column("_table").to_pylist() == ["gone", None, "wide"]
    assert skip.stats.unlisted_rows == other.num_rows > 50
    assert skip.stats.rows == got.num_rows

    gen = ticdc_fast.OpenDecoder(tables=listed, unlisted="generic", implementation=impl)
    kept = gen.decode(keys, values, **kw)
    assert list(kept) == ["shop.orders", "shop.events", OTHER_TABLES]
    assert kept[OTHER_TABLES].equals(other)
    for table in listed:
        assert kept[table].equals(got[table])
    assert gen.stats.unlisted_rows == 0 and gen.stats.rows == kept.num_rows
    assert gen.output_schemas(partitions=True, offsets=True)[OTHER_TABLES] == other.schema
    # counts add up over calls
    skip.decode(keys, values)
    assert skip.stats.unlisted_rows == 2 * other.num_rows


def test_skipped_values_are_still_checked(impl):
    """unlisted="skip" reads the value of an event it leaves out, as a single-table typed decode
    reads other tables' events: a broken one fails the message alike (same index and offset)."""
    good = row_event({"id": {"t": 8, "f": 11, "v": 1}}, scm="db", tbl="t1")
    bad_key, _ = row_event(scm="db", tbl="unlisted")
    msgs = [frame([good]), frame([good, (bad_key, b'{"u":{"id":{"t":8,"f":11,"v":1}')])]
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    schema = pa.schema([("id", pa.int64())])
    with pytest.raises(DecodeError) as single_exc:
        decode_single(impl, keys, values, "db.t1", schema)
    with pytest.raises(DecodeError) as multi_exc:
        ticdc_fast.OpenDecoder(tables={"db.t1": schema}, implementation=impl).decode(keys, values)
    assert multi_exc.value.message_index == single_exc.value.message_index == 1
    assert (multi_exc.value.part, multi_exc.value.byte_offset, multi_exc.value.reason) == \
        (single_exc.value.part, single_exc.value.byte_offset, single_exc.value.reason)


def test_escaped_and_empty_names_route_like_the_single_table_filter(impl):
    """Table names are compared unescaped (``t\\u0031`` is ``t1``); an event without a table
    name belongs to no listed table."""
    col = {"id": {"t": 8, "f": 11, "v": 7}}
    msgs = [frame([row_event(col, scm="db", tbl="t1", ts=5),
                   (b'{"ts":6,"scm":"d\\u0062","tbl":"t\\u0031","t":1}', b'{"u":{"id":{"t":8,"f":11,"v":8}}}'),
                   row_event(col, scm="db", tbl="", ts=7),
                   row_event(col, scm="db", tbl="t11", ts=8),
                   row_event(col, scm="dbt", tbl="1", ts=9)])]
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    schema = pa.schema([("id", pa.int64())])
    dec = ticdc_fast.OpenDecoder(tables={"db.t1": schema, ("db", "t2"): schema}, implementation=impl)
    got = dec.decode(keys, values)
    assert got["db.t1"].column("id").to_pylist() == [7, 8]
    assert got["db.t1"].equals(decode_single(impl, keys, values, "db.t1", schema)[1])
    assert got["db.t2"].num_rows == 0 and got["db.t2"].schema == got["db.t1"].schema
    assert dec.stats.unlisted_rows == 3


# --------------------------------------------------------------------------- error policy
def _corrupt(values: list, i: int) -> list:
    values = list(values)
    values[i] = values[i][: len(values[i]) // 2]
    return values


@pytest.mark.parametrize("flavor", FLAVORS)
def test_on_error_skip_and_dead_letter(flavor, impl):
    keys, values, schemas = stream(flavor)
    bad = len(keys) // 2
    values = _corrupt(values, bad)
    kw = kafka(len(keys))
    want = {t: decode_single(impl, keys, values, t, s, on_error="skip", **kw)[1] for t, s in schemas.items()}

    skip = ticdc_fast.OpenDecoder(tables=schemas, on_error="skip", implementation=impl)
    got = skip.decode(keys, values, **kw)
    assert list(got) == list(TABLES)
    for table in TABLES:
        assert got[table].equals(want[table])
    assert skip.stats.skipped == 1 and skip.stats.rows == got.num_rows

    dl = ticdc_fast.OpenDecoder(tables=schemas, on_error="dead_letter", implementation=impl)
    got = dl.decode(keys, values, **kw)
    assert list(got) == list(TABLES) + [DEAD_LETTERS]
    for table in TABLES:
        assert got[table].equals(want[table])
    letters = got[DEAD_LETTERS].to_pylist()
    assert len(letters) == 1 and dl.stats.dead_lettered == 1
    row = letters[0]
    assert row["_op"] == "ERROR" and row["_raw_value"] == values[bad] and row["_raw_key"] == keys[bad]
    assert (row["_error"]["message_index"], row["_error"]["offset"], row["_partition"], row["_offset"]) == \
        (bad, 1000 + bad, 3, 1000 + bad)
    assert dl.output_schemas(partitions=True, offsets=True) == {k: b.schema for k, b in got.items()}

    # clean input under dead_letter: the same keys, an empty DEAD_LETTERS batch
    clean_keys, clean_values, _ = stream(flavor)
    got = dl.decode(clean_keys, clean_values)
    assert list(got) == list(TABLES) + [DEAD_LETTERS] and got[DEAD_LETTERS].num_rows == 0
    assert dl.output_schemas() == {k: b.schema for k, b in got.items()}


def test_error_names_the_original_message_and_column(impl):
    """A value one table's schema cannot hold fails as in that table's single-table decode:
    same message index, Kafka offset, byte offset, column and text."""
    keys, values, schemas = stream("tiflow")
    # the ids of shop.orders fit int16 up to the row with id 10,000,000 a third into the stream
    narrow = pa.schema([f.with_type(pa.int16()) if f.name == "id" else f for f in schemas["shop.orders"]])
    tables = dict(schemas, **{"shop.orders": narrow})
    kw = kafka(len(keys))
    with pytest.raises(DecodeError) as want:
        decode_single(impl, keys, values, "shop.orders", narrow, **kw)
    with pytest.raises(DecodeError) as got:
        ticdc_fast.OpenDecoder(tables=tables, implementation=impl).decode(keys, values, **kw)
    w, g = want.value, got.value
    assert w.message_index >= len(keys) // 4 and w.column == "id"
    assert (g.message_index, g.offset, g.part, g.byte_offset, g.column, str(g)) == \
        (w.message_index, w.offset, w.part, w.byte_offset, w.column, str(w))
    # under dead_letter the bad message keeps its index in the batch
    got = ticdc_fast.OpenDecoder(tables=tables, on_error="dead_letter", implementation=impl).decode(keys, values, **kw)
    first = got[DEAD_LETTERS].to_pylist()[0]["_error"]
    assert (first["message_index"], first["column"], first["byte_offset"]) == (w.message_index, w.column, w.byte_offset)


# --------------------------------------------------------------------------- text, claim-check, schemas
@pytest.mark.parametrize("flavor", FLAVORS)
def test_invalid_utf8_counted_once_per_value(flavor, impl):
    keys, values, schemas = stream(flavor)
    dec = ticdc_fast.OpenDecoder(tables=schemas, implementation=impl)
    got = dec.decode(keys, values)
    singles = [decode_single(impl, keys, values, t, s) for t, s in schemas.items()]
    assert dec.invalid_utf8_replaced == sum(d.invalid_utf8_replaced for d, _ in singles) == 2
    assert dec.stats.invalid_utf8_replaced == 2
    assert got["shop.orders"].column("c07_text").to_pylist().count("caf\ufffd \ufffd") == 2
    with pytest.raises(DecodeError) as want:
        decode_single(impl, keys, values, "shop.orders", schemas["shop.orders"], invalid_utf8="error")
    with pytest.raises(DecodeError) as exc:
        ticdc_fast.OpenDecoder(tables=schemas, invalid_utf8="error", implementation=impl).decode(keys, values)
    assert (exc.value.message_index, exc.value.byte_offset, exc.value.column) == \
        (want.value.message_index, want.value.byte_offset, want.value.column) and exc.value.column == "c07_text"


def _claim_check_stream(flavor, tmp_path):
    key = Col("id", C.T_LONGLONG, 0, C.FLAG_HANDLE_KEY | C.FLAG_PRIMARY_KEY | C.FLAG_BINARY)
    rnd = random.Random(11)

    def row(i, big):
        return [Col("id", C.T_LONGLONG, i, key.flags),
                Col("b", C.T_BLOB, rnd.randbytes(1024 if big else 8), C.FLAG_BINARY | C.FLAG_NULLABLE),
                Col("n", C.T_VARCHAR, f"row {i} ✓", C.FLAG_NULLABLE)]

    ts = iter(make_tso(T0 + k) for k in range(100))
    events = [RowChange("db", "t", next(ts), after=row(1, False), row_id=1),
              RowChange("db", "u", next(ts), after=row(2, True), row_id=2),
              RowChange("db", "t", next(ts), after=row(3, True), row_id=3),
              RowChange("db", "x", next(ts), after=row(4, True), row_id=4),
              DDL("db", "u", next(ts), "ALTER TABLE u ADD COLUMN z INT", 5),
              RowChange("db", "u", next(ts), after=row(2, True), before=row(2, False), row_id=2),
              Resolved(next(ts)),
              RowChange("db", "t", next(ts), before=row(3, True), row_id=3)]
    enc = OpenEncoder(flavor, max_batch_size=4, max_message_bytes=1500, large_message_handle="claim-check",
                      claim_check_storage_uri="s3://bucket/cc")
    msgs = enc.encode(events)
    assert len(enc.claim_check_files) == 5
    for name, content in enc.claim_check_files.items():
        (tmp_path / name).write_bytes(content)
    return [k for k, _ in msgs], [v for _, v in msgs]


@pytest.mark.parametrize("flavor", FLAVORS)
def test_claim_check_rows_resolved_per_table(flavor, impl, tmp_path):
    keys, values = _claim_check_stream(flavor, tmp_path)
    schema = pa.schema([("id", pa.int64()), ("b", pa.binary()), ("n", pa.string())])
    tables = {"db.t": schema, "db.u": schema}
    resolver = ticdc_fast.fsspec_resolver(str(tmp_path))
    kw = kafka(len(keys))
    dec = ticdc_fast.OpenDecoder(tables=tables, unlisted="generic", claim_check_resolver=resolver,
                                 implementation=impl, old_image=True)
    got = dec.decode(keys, values, **kw)
    for table, sch in tables.items():
        _, want = decode_single(impl, keys, values, table, sch, claim_check_resolver=resolver,
                                old_image=True, **kw)
        assert got[table].equals(want), table
    assert [len(b) if b else b for b in got["db.t"].column("b").to_pylist()] == [8, 1024, None, 1024]
    assert got["db.u"].column("_claim_check_location").null_count == got["db.u"].num_rows
    want_other = ticdc_fast.OpenDecoder(claim_check_resolver=resolver, implementation=impl).decode(keys, values, **kw)
    want_other = want_other.filter(pc.equal(want_other.column("_table"), "x"))
    assert got[OTHER_TABLES].equals(want_other) and got[OTHER_TABLES].num_rows == 1
    assert got[OTHER_TABLES].column("_claim_check_location").null_count == 1      # resolved too


def test_schema_forms_and_arguments(impl):
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    keys, values, schemas = stream("ticdc")
    struct = StructType([StructField("id", LongType()), StructField("c01_varchar_intl", StringType())])
    got = ticdc_fast.OpenDecoder(tables={"shop.events": struct}, implementation=impl).decode(keys, values)
    want = decode_single(impl, keys, values, "shop.events",
                         pa.schema([("id", pa.int64()), ("c01_varchar_intl", pa.string())]))[1]
    assert got["shop.events"].equals(want)

    dec = ticdc_fast.OpenDecoder(tables=schemas, implementation=impl)
    with pytest.raises(ValueError, match="output_schemas"):
        dec.output_schema()
    with pytest.raises(ValueError, match="output_schema"):
        ticdc_fast.OpenDecoder(implementation=impl).output_schemas()
    with pytest.raises(ValueError, match="not both"):
        ticdc_fast.OpenDecoder(tables=schemas, table="shop.events", schema=schemas["shop.events"])
    with pytest.raises(ValueError, match="unlisted"):
        ticdc_fast.OpenDecoder(tables=schemas, unlisted="keep")
    with pytest.raises(ValueError, match="listed twice"):
        ticdc_fast.OpenDecoder(tables={"shop.events": schemas["shop.events"],
                                       ("shop", "events"): schemas["shop.events"]})
    empty = dec.decode([], [])
    assert list(empty) == list(TABLES) and empty.num_rows == 0
    assert {k: b.schema for k, b in empty.items()} == dec.output_schemas()


def test_compressed_stream(impl):
    """large-message-handle-compression: the values are decompressed once for every table."""
    events = _events(200, 9)
    msgs = OpenEncoder("ticdc", max_batch_size=8, compression="lz4", batch_control_events=True).encode(events)
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    schemas = {t: infer_open_schema(keys, values, t, compression="lz4") for t in TABLES}
    got = ticdc_fast.OpenDecoder(tables=schemas, compression="lz4", implementation=impl).decode(keys, values)
    for table, schema in schemas.items():
        assert got[table].equals(decode_single(impl, keys, values, table, schema, compression="lz4")[1])


# --------------------------------------------------------------------------- differential fuzzing
_FUZZ_TABLES = ("shop.orders", "shop.items", "shop.refunds")
_FUZZ_BASE = {flavor: OpenEncoder(flavor, max_batch_size=3, batch_control_events=True).encode(
    realistic_changefeed(16, seed=13, flavor=flavor, tables=_FUZZ_TABLES)) for flavor in FLAVORS}
_FUZZ_SCHEMA = infer_open_schema([k for k, _ in _FUZZ_BASE["tiflow"]], [v for _, v in _FUZZ_BASE["tiflow"]],
                                 table="shop.orders")
_INTERESTING = [b'"', b"\\", b"{", b"}", b",", b":", b"-", b"0", b"9", b"e", b"\\u0073", b"\xff",
                b"null", b"true", b"1e999", b'"shop"', b'"items"', b'"t":3', b"\x00" * 8]


def _outcome(impl, keys, values, **kw):
    try:
        dec = ticdc_fast.OpenDecoder(implementation=impl, **kw)
        return dec.decode(keys, values), dec.stats.unlisted_rows
    except DecodeError as exc:
        assert exc.message_index is None or 0 <= exc.message_index < len(keys)
        return ("error", exc.message_index, exc.part)


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")
@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), flavor=st.sampled_from(FLAVORS),
       which=st.sampled_from(["key", "value", "both"]), n=st.integers(1, 4),
       unlisted=st.sampled_from(["skip", "generic"]))
def test_mutated_messages_agree_between_core_and_twin(seed, flavor, which, n, unlisted):
    """The core and the twin give the same batches and counts (or fail on the same message),
    and whatever decodes equals the single-table decode of each listed table."""
    rnd = random.Random(seed)
    msgs = _FUZZ_BASE[flavor]
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    i = rnd.randrange(len(msgs))
    if which in ("key", "both"):
        keys[i] = mutate(keys[i], rnd, n, _INTERESTING)
    if which in ("value", "both"):
        values[i] = mutate(values[i], rnd, n, _INTERESTING)
    tables = {"shop.orders": _FUZZ_SCHEMA, "shop.items": _FUZZ_SCHEMA}
    a = _outcome("cython", keys, values, tables=tables, unlisted=unlisted)
    b = _outcome("python", keys, values, tables=tables, unlisted=unlisted)
    if a[0] == "error" or b[0] == "error":
        assert a == b
        return
    assert list(a[0]) == list(b[0]) and a[1] == b[1]
    for key in a[0]:
        assert a[0][key].equals(b[0][key]), key
    for table, schema in tables.items():
        assert a[0][table].equals(decode_single("cython", keys, values, table, schema)[1])
