"""Every behaviour of real TiCDC streams that protocols.md lists (pitfalls §E, the "Docs vs code"
sections A.7/B.6/C.5, the options of §F and the addendum of facts confirmed with Go's own
encoders) decodes: no valid TiCDC message is rejected, and the values are exact.

Each test builds the bytes the way TiCDC's encoder writes them (the test encoders in
``ticdc_fast.testing``, or by hand where the test encoders model no such option) and asserts
the decoded values with both implementations.
"""
from __future__ import annotations

import base64
import json
import struct

import pytest
from conftest import frame, plain_rows

import ticdc_fast
from ticdc_fast import _constants as C
from ticdc_fast.testing import Col, DDL, OpenEncoder, Resolved, RowChange, make_tso

TS = make_tso(1_714_521_600_000, 7)

# TiDB's own column flags (parser/mysql/type.go), which some ticdc builds wrote into "f".
MYSQL_NOT_NULL, MYSQL_PRI_KEY, MYSQL_BLOB, MYSQL_UNSIGNED, MYSQL_BINARY = 1, 2, 16, 32, 128


def _open(impl, messages, **kw):
    dec = ticdc_fast.OpenDecoder(implementation=impl, **kw)
    keys = [k for k, _ in messages]
    values = [v for _, v in messages]
    return plain_rows(dec.decode(keys, values))


def _open_raw(impl, events, **kw):
    """Decode one hand-built message: ``events`` = [(key dict, value dict or bytes), ...]."""
    return _open(impl, [frame(events)], **kw)


# =========================================================================== open protocol
@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
@pytest.mark.parametrize("compression", ["none", "snappy", "lz4"])
def test_open_compression_applies_to_rows_ddl_and_resolved(impl, flavor, compression):
    # §0 "Compression option", §E.22: every value (rows and DDL) is compressed; resolved stays empty
    enc = OpenEncoder(flavor, compression=compression)
    msgs = enc.encode([
        RowChange("db", "t", TS, after=[Col("id", C.T_LONGLONG, 5, 11)]),
        DDL("db", "t", TS + 1, "ALTER TABLE t ADD c INT", 5),
        Resolved(TS + 2),
    ])
    rows = _open(impl, msgs, compression=compression)
    assert [(r["_op"], r["_commit_ts"]) for r in rows] == [
        ("INSERT", TS), ("DDL", TS + 1), ("RESOLVED", TS + 2)]
    assert rows[0]["after"] == {"id": "5"}
    assert rows[1]["_ddl"] == "ALTER TABLE t ADD c INT" and rows[1]["_ddl_type"] == 5


def test_open_uint64_max_is_a_bare_json_integer(impl):
    # §0 "JSON writers": uint64 up to 18446744073709551615 is a bare integer, never via float64
    enc = OpenEncoder("tiflow")
    msgs = enc.encode([RowChange("db", "t", TS, after=[
        Col("u", C.T_LONGLONG, (1 << 64) - 1, C.FLAG_BINARY | C.FLAG_UNSIGNED),
        Col("b", C.T_BIT, (1 << 64) - 1, C.FLAG_BINARY | C.FLAG_UNSIGNED)])])
    (row,) = _open(impl, msgs)
    assert row["after"] == {"b": "18446744073709551615", "u": "18446744073709551615"}


@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
def test_open_batch_mixes_tables_and_keeps_emission_order(impl, flavor):
    # §A.1 "Row batching": one message holds up to max-batch-size rows of any tables
    enc = OpenEncoder(flavor, max_batch_size=3)
    evs = [RowChange("db", f"t{i % 2}", TS + i, after=[Col("id", C.T_LONG, i, 11)]) for i in range(7)]
    msgs = enc.encode(evs)
    assert len(msgs) == 3
    rows = _open(impl, msgs)
    assert [(r["_table"], r["after"]["id"]) for r in rows] == [(f"t{i % 2}", str(i)) for i in range(7)]


def test_open_legacy_batched_ddl_and_resolved(impl):
    # §A.1: older encoders batched DDL and resolved events with rows (java-example vectors)
    enc = OpenEncoder("tiflow", batch_control_events=True)
    msgs = enc.encode([RowChange("db", "t", TS, after=[Col("id", C.T_LONG, 1, 11)]),
                       DDL("db", "t", TS + 1, "TRUNCATE TABLE t", 11), Resolved(TS + 2),
                       RowChange("db", "t", TS + 3, after=[Col("id", C.T_LONG, 2, 11)])])
    assert len(msgs) == 1
    rows = _open(impl, msgs)
    assert [r["_op"] for r in rows] == ["INSERT", "DDL", "RESOLVED", "INSERT"]


def test_open_ticdc_writes_empty_scm_and_tbl(impl):
    # §A.2: ticdc always writes scm/tbl, possibly ""; tiflow omits them
    k = {"ts": TS, "scm": "", "tbl": "", "t": 2}
    (row,) = _open_raw(impl, [(k, {"q": "CREATE DATABASE x", "t": 1})])
    assert row["_schema"] is None and row["_table"] is None and row["_ddl"] == "CREATE DATABASE x"


def test_open_tiflow_rid_and_ptn(impl):
    # §A.2: rid (tiflow only) and ptn (partitioned tables)
    enc = OpenEncoder("tiflow")
    msgs = enc.encode([RowChange("db", "t", TS, after=[Col("id", C.T_LONG, -3, 11)], row_id=-3,
                                 partition_id=88)])
    (row,) = _open(impl, msgs)
    assert row["_row_id"] == -3 and row["_physical_table_id"] == 88 and row["after"] == {"id": "-3"}


def test_open_ticdc_key_field_order_and_trailing_ptn(impl):
    # §A.2: ticdc key order ts,scm,tbl,t,[ohk],[ptn]
    enc = OpenEncoder("ticdc")
    msgs = enc.encode([RowChange("db", "t", TS, after=[Col("id", C.T_LONG, 1, 11)], partition_id=0,
                                 handle_key_only=True)])
    assert b'"t":1,"ohk":true,"ptn":0}' in msgs[0][0]
    (row,) = _open(impl, msgs)
    assert row["_physical_table_id"] == 0 and row["_handle_key_only"] is True


def test_open_ticdc_claim_check_key_repeats_ohk(impl):
    # §A.2, §E.16, addendum 7: ticdc writes "ohk":true,"ohk":false,"ccl":...; tiflow no ohk
    for flavor in ("tiflow", "ticdc"):
        enc = OpenEncoder(flavor, max_message_bytes=400, large_message_handle="claim-check")
        msgs = enc.encode([RowChange("db", "t", TS, after=[Col("id", C.T_LONG, 1, 11),
                                                           Col("pad", C.T_VARCHAR, "x" * 500, 64)])])
        (row,) = _open(impl, msgs)
        assert row["_handle_key_only"] is False
        assert row["_claim_check_location"].startswith("file:///tmp/ticdc-claim-check/")
        assert row["after"] == {"id": "1"}


def test_open_handle_key_only_row(impl):
    # §A.6 handle-key-only: "ohk":true and only the handle-key columns
    enc = OpenEncoder("tiflow", max_message_bytes=400, large_message_handle="handle-key-only")
    msgs = enc.encode([RowChange("db", "t", TS, after=[Col("id", C.T_LONG, 9, 11),
                                                       Col("pad", C.T_VARCHAR, "x" * 500, 64)],
                                 before=[Col("id", C.T_LONG, 9, 11), Col("pad", C.T_VARCHAR, "y", 64)])])
    (row,) = _open(impl, msgs)
    assert row["_handle_key_only"] is True and row["_op"] == "UPDATE"
    assert row["after"] == {"id": "9"} and row["before"] == {"id": "9"}


@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
def test_open_update_without_old_value_is_an_insert(impl, flavor):
    # §A.3, §F output-old-value=false / enable-old-value=false: no "p"
    k = {"ts": TS, "scm": "db", "tbl": "t", "t": 1}
    (row,) = _open_raw(impl, [(k, {"u": {"id": {"t": 3, "h": True, "f": 11, "v": 1}}})])
    assert row["_op"] == "INSERT" and row["before"] is None


def test_open_column_names_sorted_or_in_table_order(impl):
    # §A.3: tiflow sorts column names, ticdc keeps table order; the map keeps the wire order
    cols = [Col("zeta", C.T_LONG, 1, 11), Col("alpha", C.T_LONG, 2, 64)]
    for flavor, order in (("tiflow", ["alpha", "zeta"]), ("ticdc", ["zeta", "alpha"])):
        (row,) = _open(impl, OpenEncoder(flavor).encode([RowChange("db", "t", TS, after=cols)]))
        assert list(row["after"]) == order


def test_open_docs_example_without_f(impl):
    # §A.7: pre-v4.0.5 output has no "f", VARCHAR as base64 text, no "p"
    k = {"ts": TS, "scm": "test", "tbl": "t2", "t": 1}
    v = {"u": {"id": {"t": 3, "h": True, "v": 1}, "name": {"t": 15, "v": "YWE="}}}
    (row,) = _open_raw(impl, [(k, v)])
    # a CHAR/VARCHAR is never base64-decoded (§E.1): the text is what the bytes say
    assert row["after"] == {"id": "1", "name": "YWE="}


def test_open_only_updated_columns_old_image_subset(impl):
    # §A.3, §F only-output-updated-columns: "p" holds only the changed columns
    k = {"ts": TS, "scm": "db", "tbl": "t", "t": 1}
    v = {"u": {"id": {"t": 3, "h": True, "f": 11, "v": 1}, "a": {"t": 3, "f": 65, "v": 2},
               "b": {"t": 3, "f": 65, "v": 3}},
         "p": {"a": {"t": 3, "f": 65, "v": 20}}}
    (row,) = _open_raw(impl, [(k, v)])
    assert row["_op"] == "UPDATE" and row["before"] == {"a": "20"}


def test_open_ticdc_zero_values_as_null_in_old_image(impl):
    # §E.14: ticdc v8.5.x wrote "v":null for zero/empty old values under only-output-updated-columns
    k = {"ts": TS, "scm": "db", "tbl": "t", "t": 1}
    v = {"u": {"id": {"t": 3, "h": True, "f": 11, "v": 1}, "s": {"t": 15, "f": 0, "v": "x"}},
         "p": {"s": {"t": 15, "f": 0, "v": None}}}
    (row,) = _open_raw(impl, [(k, v)])
    assert row["before"] == {"s": None}


def test_open_ticdc_v85_old_image_carries_tidb_flags(impl):
    # §E.13 (ticdc v8.5.x, fixed by ticdc PR #3973): under only-output-updated-columns the "p"
    # columns carry TiDB's column flags in "f" (NotNull=1, Unsigned=32, Binary=128), while "u"
    # carries TiCDC's.  A negative INT, a NOT NULL VARCHAR holding a backslash, a nullable
    # VARBINARY (Go-quoted, TiDB Binary flag only) and a NOT NULL TEXT must decode as in "u".
    k = {"ts": TS, "scm": "db", "tbl": "t", "t": 1}
    u = {"id": {"t": 3, "h": True, "f": 11, "v": 1},
         "i": {"t": 3, "f": 1, "v": -1},                       # INT NOT NULL: TiCDC Binary
         "s": {"t": 15, "f": 0, "v": "new"},                   # VARCHAR NOT NULL, utf8
         "vb": {"t": 15, "f": 65, "v": "\\x00"},                # VARBINARY NULL
         "tx": {"t": 252, "f": 0, "v": base64.b64encode(b"new").decode()}}   # TEXT NOT NULL
    p = {"i": {"t": 3, "f": MYSQL_NOT_NULL | MYSQL_BINARY, "v": -5},
         "s": {"t": 15, "f": MYSQL_NOT_NULL, "v": "a\\qb"},
         "vb": {"t": 15, "f": MYSQL_BINARY, "v": "\\x89PNG"},
         "tx": {"t": 252, "f": MYSQL_NOT_NULL | MYSQL_BLOB, "v": base64.b64encode("é".encode()).decode()}}
    (row,) = _open_raw(impl, [(k, {"u": u, "p": p})])
    assert row["before"] == {"i": "-5", "s": "a\\qb", "vb": base64.b64encode(b"\x89PNG").decode(),
                             "tx": "é"}


@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
def test_open_float_forms(impl, flavor):
    # addendum 1 and 2: two-digit exponents (ticdc), whole floats printed as integers, 21-digit
    # integers for [1e20, 1e21), negative zero; §A.4 FLOAT is float32
    k = {"ts": TS, "scm": "db", "tbl": "t", "t": 1}
    raw = (b'{"u":{"a":{"t":5,"f":1,"v":1e-07},"b":{"t":5,"f":1,"v":100},'
           b'"c":{"t":5,"f":1,"v":100000000000000000000},"d":{"t":5,"f":1,"v":-0},'
           b'"e":{"t":4,"f":1,"v":9.999999e-07},"g":{"t":4,"f":1,"v":16777216},'
           b'"h":{"t":5,"f":1,"v":1e+21},"i":{"t":4,"f":1,"v":3.4028235e+38},"j":{"t":5,"f":1,"v":5e-324}}}')
    (row,) = _open_raw(impl, [(k, raw)])
    assert row["after"] == {"a": "1e-7", "b": "100", "c": "100000000000000000000", "d": "-0",
                            "e": "9.999999e-7", "g": "16777216", "h": "1e+21",
                            "i": "3.4028235e+38", "j": "5e-324"}


def test_open_tiflow_nan_became_zero(impl):
    # §A.4: TF's mounter turns NaN/Inf into 0
    (row,) = _open(impl, OpenEncoder("tiflow").encode([RowChange("db", "t", TS, after=[
        Col("f", C.T_FLOAT, float("nan"), 65), Col("d", C.T_DOUBLE, float("inf"), 65)])]))
    assert row["after"] == {"d": "0", "f": "0"}


def test_open_every_type_code_tidb_sends(impl):
    # §A.4 value table: every type code with its wire form (ENUM index, SET bitmask, BIT uint64,
    # YEAR 0, zero dates, TIME of 3-digit hours, JSON text, VECTOR, legacy DECIMAL t=0, NEWDATE)
    cols = [Col("ti", C.T_TINY, -128, 1), Col("yr", C.T_YEAR, 0, 1), Col("bit", C.T_BIT, 5, 1),
            Col("en", C.T_ENUM, 0, 0), Col("st", C.T_SET, (1 << 64) - 1, 0),
            Col("dc", C.T_NEWDECIMAL, "-0.000100", 1), Col("dl", C.T_DECIMAL_LEGACY, "1.5", 1),
            Col("dt", C.T_DATE, "0000-00-00", 1), Col("nd", C.T_NEWDATE, "2024-02-29", 1),
            Col("dtm", C.T_DATETIME, "0000-00-00 00:00:00", 1),
            Col("ts", C.T_TIMESTAMP, "2024-05-01 08:00:00.123", 1),
            Col("tm", C.T_DURATION, "-838:59:59.000000", 1),
            Col("js", C.T_JSON, '{"key1": "value1", "k": [1, 2]}', 1),
            Col("vec", C.T_VECTOR, "[1,2.5,-3]", 1), Col("nul", C.T_NULL, None, 65)]
    for flavor in ("tiflow", "ticdc"):
        (row,) = _open(impl, OpenEncoder(flavor).encode([RowChange("db", "t", TS, after=cols)]))
        assert row["after"] == {
            "ti": "-128", "yr": "0", "bit": "5", "en": "0", "st": "18446744073709551615",
            "dc": "-0.000100", "dl": "1.5", "dt": "0000-00-00", "nd": "2024-02-29",
            "dtm": "0000-00-00 00:00:00", "ts": "2024-05-01 08:00:00.123", "tm": "-838:59:59.000000",
            "js": '{"key1": "value1", "k": [1, 2]}', "vec": "[1,2.5,-3]", "nul": None}


def test_open_binary_quote_forms(impl):
    # §A.4 strconv.Quote rules, addendum 9: \xHH lowercase, short escapes, \u/\U for non-printable
    # runes, a UTF-8 sequence cut by BINARY(n) width, 0x00 padding; JSON doubles the backslashes
    data = (b"\x89PNG\r\n\x1a\n\x07\x0b\"\\\x7f" + "\u00ad\u200b\ufeff".encode() + "\U000e0001".encode()
            + "é<>&\u2028".encode() + b"\xc2\x00\x00")
    for flavor in ("tiflow", "ticdc"):
        (row,) = _open(impl, OpenEncoder(flavor).encode([RowChange("db", "t", TS, after=[
            Col("b", C.T_STRING, data, 65), Col("vb", C.T_VARCHAR, data, 65),
            Col("blob", C.T_BLOB, data, 65), Col("txt", C.T_BLOB, "é\u2028<", 64)])]))
        b64 = base64.b64encode(data).decode()
        assert row["after"] == {"b": b64, "vb": b64, "blob": b64, "txt": "é\u2028<"}


def test_open_ddl_value_type_is_a_number(impl):
    # §A.5: DDL value {"q":...,"t":<ActionType>} (the docs call t a string; it is a number)
    enc = OpenEncoder("ticdc")
    (row,) = _open(impl, enc.encode([DDL("db", "t", TS, "CREATE TABLE t (id INT)", 3)]))
    assert row["_op"] == "DDL" and row["_ddl_type"] == 3 and row["_schema"] == "db"


# =========================================================================== simple protocol
from ticdc_fast.testing import (SimpleBootstrap, SimpleColumn, SimpleDDL, SimpleDML,  # noqa: E402
                                SimpleEncoder, SimpleTable, SimpleWatermark)

S_V1 = make_tso(1_714_521_000_000)


def _simple_table(version=S_V1):
    return SimpleTable("db", "t", 100, version, [
        SimpleColumn("id", "bigint", nullable=False),
        SimpleColumn("biu", "bigint", unsigned=True), SimpleColumn("f", "float"),
        SimpleColumn("d", "double"), SimpleColumn("b64", "bit", length=64, default=5),
        SimpleColumn("st", "set", elements=[f"e{i}" for i in range(64)]),
        SimpleColumn("ts", "timestamp", decimal=3), SimpleColumn("vb", "varbinary", length=16),
        SimpleColumn("tx", "text"), SimpleColumn("en", "enum", elements=["a", "b"])])


def _simple(impl, encoding, messages, **kw):
    dec = ticdc_fast.SimpleDecoder(encoding, implementation=impl, **kw)
    return plain_rows(dec.decode([k for k, _ in messages], [v for _, v in messages])), dec


S_ROW = {"id": 1, "biu": (1 << 64) - 1, "f": 1e6, "d": 1e-7, "b64": 1 << 63,
         "st": (1 << 64) - 1, "ts": ("Asia/Shanghai", "2024-05-01 08:00:00.123"),
         "vb": b"\x00\xff", "tx": "é", "en": 2}
S_TEXT = {"id": "1", "biu": "18446744073709551615", "f": "1000000", "d": "0.0000001",
          "b64": "9223372036854775808", "st": "18446744073709551615",
          "ts": "2024-05-01 00:00:00.123Z", "vb": "AP8=", "tx": "é", "en": "2"}


@pytest.mark.parametrize("encoding", ["json", "avro"])
@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
@pytest.mark.parametrize("compression", ["none", "snappy", "lz4"])
def test_simple_every_message_kind(impl, encoding, flavor, compression):
    # §B.2 the six kinds; §B.3 values (BIT long in tiflow Avro / string in ticdc, wrapped
    # UnsignedBigint, 64-element SET wrapped, TIMESTAMP {location,value}); §0 compression of all
    t = _simple_table()
    t2 = _simple_table(S_V1 + 1)
    enc = SimpleEncoder(encoding, flavor, compression)
    msgs = enc.encode([
        SimpleBootstrap(t),
        SimpleDML(t, "INSERT", S_V1 + 10, data=S_ROW),
        SimpleDML(t, "UPDATE", S_V1 + 11, data=S_ROW, old={**S_ROW, "id": 2}),
        SimpleDML(t, "DELETE", S_V1 + 12, old=S_ROW, table_id=101),
        SimpleDDL("ALTER", "ALTER TABLE t COMMENT 'x'", S_V1 + 13, t2, t),
        SimpleDDL("CREATE", "CREATE TABLE t2 (id INT)", S_V1 + 14, t2),
        SimpleDDL("ERASE", "DROP DATABASE db2", S_V1 + 15, None),
        SimpleWatermark(S_V1 + 16),
    ])
    rows, _ = _simple(impl, encoding, msgs, compression=compression)
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "INSERT", "UPDATE", "DELETE", "DDL", "DDL",
                                        "DDL", "RESOLVED"]
    assert rows[1]["after"] == S_TEXT and rows[1]["before"] is None
    assert rows[2]["after"] == S_TEXT and rows[2]["before"] == {**S_TEXT, "id": "2"}
    assert rows[3]["before"] == S_TEXT and rows[3]["_table_id"] == 101
    assert [r["_ddl_type"] for r in rows[4:7]] == ["ALTER", "CREATE", "ERASE"]
    assert rows[6]["_ddl"] == "DROP DATABASE db2" and rows[6]["_table_schema"] is None
    assert rows[7]["_commit_ts"] == S_V1 + 16


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_simple_dml_before_any_bootstrap_is_held_not_rejected(impl, encoding):
    # §E.17 (tiflow #11032, v7.5.2 sent no BOOTSTRAP): DML with no schema is held, then released
    t = _simple_table()
    enc = SimpleEncoder(encoding)
    dml = enc.encode([SimpleDML(t, "INSERT", S_V1 + 10, data=S_ROW)])
    boot = enc.encode([SimpleBootstrap(t)])
    dec = ticdc_fast.SimpleDecoder(encoding, implementation=impl)
    first = dec.decode([None], [dml[0][1]])
    assert first.num_rows == 0 and dec.held() == 1
    rows = plain_rows(dec.decode([None], [boot[0][1]]))
    assert [r["_op"] for r in rows] == ["BOOTSTRAP", "INSERT"] and rows[1]["after"] == S_TEXT


def test_simple_ticdc_v85_json_floats_in_go_v_format(impl):
    # §E.14 (ticdc #1087, fixed by PR #3973): ticdc v8.5.x wrote FLOAT/DOUBLE with Go %v, so
    # exponents appear inside the JSON strings ("1e+06", "1e-07", "3.4028235e+38")
    t = _simple_table()
    enc = SimpleEncoder("json", "ticdc")
    boot, dml = enc.encode([SimpleBootstrap(t), SimpleDML(t, "INSERT", S_V1 + 10, data=S_ROW)])
    value = dml[1].replace(b'"d":"0.0000001"', b'"d":"1e-07"').replace(b'"f":"1000000"', b'"f":"1e+06"')
    big = dml[1].replace(b'"d":"0.0000001"', b'"d":"1e+21"').replace(b'"f":"1000000"', b'"f":"3.4028235e+38"')
    assert value != dml[1] and big != dml[1]
    rows, _ = _simple(impl, "json", [boot, (None, value), (None, big)])
    assert rows[1]["after"] == S_TEXT
    assert rows[2]["after"] == {**S_TEXT, "d": "1" + "0" * 21, "f": "34028235" + "0" * 31}


@pytest.mark.parametrize("encoding", ["json", "avro"])
@pytest.mark.parametrize("mode", ["handle-key-only", "claim-check"])
def test_simple_large_message_stand_ins_are_flagged(impl, encoding, mode):
    # §B.5: handleKeyOnly (both modes) and claimCheckLocation; without a resolver the row holds
    # the handle-key columns and says so
    t = _simple_table()
    enc = SimpleEncoder(encoding, max_message_bytes=400, large_message_handle=mode)
    msgs = (SimpleEncoder(encoding).encode([SimpleBootstrap(t)])
            + enc.encode([SimpleDML(t, "INSERT", S_V1 + 10, data={**S_ROW, "tx": "x" * 400})]))
    rows, _ = _simple(impl, encoding, msgs)
    # a claim-check stand-in is marked by its location (as in the open protocol), not as
    # handle-key-only: the full row exists, in the file
    claim_check = mode == "claim-check"
    assert rows[1]["after"] == {"id": "1"}
    assert rows[1]["_handle_key_only"] is not claim_check
    assert (rows[1]["_claim_check_location"] or "").startswith("file:///tmp/ticdc-claim-check/") is claim_check


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_simple_checksum_fields(impl, encoding):
    # §B.2 checksum object ([integrity] row checksums); current/previous are uint32
    t = _simple_table()
    enc = SimpleEncoder(encoding)
    ck = {"version": 1, "corrupted": False, "current": 0xFFFFFFFF, "previous": 7}
    msgs = enc.encode([SimpleBootstrap(t), SimpleDML(t, "UPDATE", S_V1 + 10, data=S_ROW, old=S_ROW,
                                                     checksum=ck)])
    rows, _ = _simple(impl, encoding, msgs)
    r = rows[1]
    assert (r["_checksum_version"], r["_checksum_corrupted"], r["_checksum_current"],
            r["_checksum_previous"]) == (1, False, 0xFFFFFFFF, 7)


def test_simple_avro_map_entries_in_random_order(impl):
    # §B.3, addendum 5: Avro data/old map entry order is Go map order (random per message)
    t = _simple_table()
    enc = SimpleEncoder("avro", "ticdc", avro_map_order="random", seed=3)
    msgs = enc.encode([SimpleBootstrap(t)] + [SimpleDML(t, "INSERT", S_V1 + i, data=S_ROW)
                                              for i in range(5)])
    rows, _ = _simple(impl, "avro", msgs)
    assert all(r["after"] == S_TEXT for r in rows[1:])


# =========================================================================== avro protocol
from ticdc_fast.testing import AvroColumn, AvroEncoder  # noqa: E402


def _zz(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _avro_bytes(b: bytes) -> bytes:
    return _zz(len(b)) + b


def _confluent(schema_id: int, body: bytes) -> bytes:
    return b"\x00" + schema_id.to_bytes(4, "big") + body


def _avro(impl, schemas, messages, **kw):
    dec = ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl, **kw)
    return plain_rows(dec.decode([k for k, _ in messages], [v for _, v in messages]))


def _field(name, avro_type, tidb_type=None, nullable=False, null_first=True, **extra):
    t = {"type": avro_type, **extra}
    if tidb_type is not None:
        t["connect.parameters"] = {"tidb_type": tidb_type}
    if nullable:
        return {"default": None, "name": name, "type": ["null", t] if null_first else [t, "null"]}
    return {"name": name, "type": t}


def _record(fields, name="t", namespace="default.db"):
    return json.dumps({"type": "record", "name": name, "namespace": namespace, "fields": fields},
                      separators=(",", ":"))


@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
def test_avro_nullable_column_with_default_has_null_second(impl, flavor):
    # §E.4 (tiflow #11994, PR #12191): a nullable column with a non-null default is [T,"null"]
    cols = {("db", "t"): [AvroColumn("id", C.T_LONGLONG, flags=11),
                          AvroColumn("n", C.T_LONG, flags=64, default="3"),
                          AvroColumn("s", C.T_VARCHAR, flags=64, default="x")]}
    enc = AvroEncoder(flavor=flavor, table_columns=cols)
    msgs = enc.encode([RowChange("db", "t", TS, after=[Col("id", C.T_LONGLONG, 1, 11),
                                                       Col("n", C.T_LONG, None, 64),
                                                       Col("s", C.T_VARCHAR, "v", 64)]),
                       RowChange("db", "t", TS + 1, after=[Col("id", C.T_LONGLONG, 2, 11),
                                                           Col("n", C.T_LONG, 4, 64),
                                                           Col("s", C.T_VARCHAR, None, 64)])])
    assert any('[{"type":"int"' in text for _, _, text in enc.registered)
    rows = _avro(impl, {sid: text for _, sid, text in enc.registered}, msgs)
    assert [r["after"] for r in rows] == [{"id": "1", "n": None, "s": "v"},
                                          {"id": "2", "n": "4", "s": None}]


def test_avro_pre_v6_schemas(impl):
    # §E.5 (tiflow #4818: NOT NULL columns were nullable unions before v6.0), §E.6 (old
    # encodings: TEXT as bytes), §E.7 (FLOAT was double before v7.0): decode by the writer schema
    value = _record([_field("id", "long", "BIGINT", nullable=True),
                     _field("f", "double", "FLOAT", nullable=True),
                     _field("tx", "bytes", nullable=True),
                     _field("d", "double", "DOUBLE")])
    key = _record([_field("id", "long", "BIGINT", nullable=True)])
    body = (b"\x02" + _zz(7) + b"\x02" + struct.pack("<d", 0.1)
            + b"\x02" + _avro_bytes("é".encode()) + struct.pack("<d", -0.0))
    rows = _avro(impl, {1: key, 2: value}, [(_confluent(1, b"\x02" + _zz(7)), _confluent(2, body))])
    assert rows[0]["_op"] == "UPSERT" and dict(rows[0]["_key"]) == {"id": "7"}
    # an Avro bytes field is bytes whatever column it came from: standard base64 of them
    assert rows[0]["after"] == {"id": "7", "f": "0.1", "tx": base64.b64encode("é".encode()).decode(),
                                "d": "-0"}


def test_avro_schema_without_connect_parameters(impl):
    # §E.6: schemas registered by old versions differ; a field without a tidb_type decodes by
    # its Avro type
    value = _record([_field("id", "long"), _field("s", "string", nullable=True),
                     _field("b", "bytes"), _field("x", "double"), _field("i", "int")])
    body = _zz(5) + b"\x02" + _avro_bytes(b"hi") + _avro_bytes(b"\x00\xff") \
        + struct.pack("<d", 2.5) + _zz(-3)
    rows = _avro(impl, {2: value}, [(None, _confluent(2, body))])
    assert rows[0]["after"] == {"id": "5", "s": "hi", "b": "AP8=", "x": "2.5", "i": "-3"}


@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
@pytest.mark.parametrize("unsigned_mode", ["long", "string"])
@pytest.mark.parametrize("decimal_mode", ["precise", "string"])
def test_avro_option_modes_and_flavour_forms(impl, flavor, unsigned_mode, decimal_mode):
    # §C.4, §E.8: BIGINT UNSIGNED long wraps (reinterpreted) or string; DECIMAL precise (minimal
    # two's complement, addendum 4) or string; BIT minimal (tiflow) or ceil(n/8) bytes (ticdc);
    # ENUM/SET names with an escaped comma in "allowed"; §C.1 tombstone DELETE
    cols = {("db", "t"): [AvroColumn("id", C.T_LONGLONG, flags=11),
                          AvroColumn("u", C.T_LONGLONG, flags=C.FLAG_UNSIGNED | 64),
                          AvroColumn("dc", C.T_NEWDECIMAL, flags=65, length=12, scale=2),
                          AvroColumn("bt", C.T_BIT, flags=65, length=20),
                          AvroColumn("en", C.T_ENUM, flags=64, elements=("a,b", "c")),
                          AvroColumn("st", C.T_SET, flags=64, elements=("x", "y,z"))]}
    enc = AvroEncoder(flavor=flavor, table_columns=cols, bigint_unsigned_handling_mode=unsigned_mode,
                      decimal_handling_mode=decimal_mode)
    row = [Col("id", C.T_LONGLONG, 1, 11), Col("u", C.T_LONGLONG, (1 << 64) - 1, 192),
           Col("dc", C.T_NEWDECIMAL, "-1.28", 65), Col("bt", C.T_BIT, 1, 65),
           Col("en", C.T_ENUM, 1, 64), Col("st", C.T_SET, 3, 64)]
    msgs = enc.encode([RowChange("db", "t", TS, after=row), RowChange("db", "t", TS + 1, before=row)])
    rows = _avro(impl, {sid: text for _, sid, text in enc.registered}, msgs)
    assert rows[0]["_op"] == "INSERT" and rows[0]["_commit_ts"] == TS
    assert rows[0]["after"] == {"id": "1", "u": "18446744073709551615", "dc": "-1.28", "bt": "1",
                                "en": "a,b", "st": "x,y,z"}
    assert rows[1]["_op"] == "DELETE" and rows[1]["before"] == {"id": "1"}


def test_avro_ticdc_include_before_value(impl):
    # §C.1/§C.3, §F avro-include-before-value (ticdc): _ticdc_before, and a DELETE with a value
    # whose _tidb_op is "d"
    inner = [_field("id", "long", "BIGINT"), _field("v", "string", "TEXT", nullable=True)]
    before = {"type": "record", "name": "t_before", "fields": inner}
    value = _record(inner + [{"default": None, "name": "_ticdc_before", "type": ["null", before]},
                             {"default": "", "name": "_tidb_op", "type": "string"}])
    key = _record([_field("id", "long", "BIGINT")])
    upd = _zz(1) + b"\x02" + _avro_bytes(b"new") + b"\x02" + _zz(1) + b"\x02" + _avro_bytes(b"old") \
        + _avro_bytes(b"u")
    dele = _zz(1) + b"\x02" + _avro_bytes(b"old") + b"\x00" + _avro_bytes(b"d")
    k = _confluent(1, _zz(1))
    rows = _avro(impl, {1: key, 2: value}, [(k, _confluent(2, upd)), (k, _confluent(2, dele))])
    assert rows[0]["_op"] == "UPDATE" and rows[0]["after"] == {"id": "1", "v": "new"}
    assert rows[0]["before"] == {"id": "1", "v": "old"}
    assert rows[1]["_op"] == "DELETE" and rows[1]["after"] is None
    assert rows[1]["before"] == {"id": "1", "v": "old"}


@pytest.mark.parametrize("flavor", ["tiflow", "ticdc"])
def test_avro_watermark_values(impl, flavor):
    # §C.1, §F avro-enable-watermark (test only, with the extension): 0x01 DDL, 0x02
    # checkpoint, ticdc 0x03 delete; their Kafka key is nil (DDL, checkpoint)
    enc = AvroEncoder(flavor=flavor, enable_watermark=True)
    row = [Col("id", C.T_LONGLONG, 1, 11)]
    msgs = enc.encode([RowChange("db", "t", TS, after=row), DDL("db", "t", TS + 1, "ALTER TABLE t ADD c INT", 5),
                       Resolved(TS + 2), RowChange("db", "t", TS + 3, before=row)])
    rows = _avro(impl, {sid: text for _, sid, text in enc.registered}, msgs)
    assert [r["_op"] for r in rows] == ["INSERT", "DDL", "RESOLVED", "DELETE"]
    assert rows[1]["_ddl"] == "ALTER TABLE t ADD c INT" and rows[1]["_ddl_type"] == 5
    assert rows[2]["_commit_ts"] == TS + 2
    assert rows[3]["_commit_ts"] == (TS + 3 if flavor == "ticdc" else None)


def test_avro_ticdc_namespace_without_schema(impl):
    # §C.3: ticdc leaves out "." + schema when the schema is empty; names are sanitised
    value = _record([_field("_1abc", "long", "BIGINT")], name="__", namespace="default")
    rows = _avro(impl, {2: value}, [(None, _confluent(2, _zz(9)))])
    assert rows[0]["_table"] == "__" and rows[0]["_schema"] in (None, "")
    assert rows[0]["after"] == {"_1abc": "9"}


def test_avro_checksum_fields(impl):
    # §C.3 [integrity]: _tidb_row_level_checksum (decimal uint32 string), _tidb_corrupted,
    # _tidb_checksum_version; checksums force decimal/unsigned string modes
    value = _record([_field("id", "long", "BIGINT"),
                     {"default": "", "name": "_tidb_op", "type": "string"},
                     {"default": 0, "name": "_tidb_commit_ts", "type": "long"},
                     {"default": 0, "name": "_tidb_commit_physical_time", "type": "long"},
                     {"default": "", "name": "_tidb_row_level_checksum", "type": "string"},
                     {"default": False, "name": "_tidb_corrupted", "type": "boolean"},
                     {"default": 0, "name": "_tidb_checksum_version", "type": "int"}])
    body = _zz(1) + _avro_bytes(b"c") + _zz(TS) + _zz(TS >> 18) + _avro_bytes(b"4294967295") \
        + b"\x00" + _zz(1)
    rows = _avro(impl, {2: value}, [(None, _confluent(2, body))])
    r = rows[0]
    assert (r["_op"], r["_commit_ts"], r["_checksum"], r["_checksum_corrupted"],
            r["_checksum_version"]) == ("INSERT", TS, "4294967295", False, 1)
    assert r["after"] == {"id": "1"}


# --------------------------------------------------------------------------- open: ticdc bare groups
# ticdc's writeColumnFieldValueIfUpdated (only-output-updated-columns=true) writes a column that
# went from non-NULL to NULL as bare "t",["h":true],"f","v" members of "p", in table column order
# among the named ones (protocols.md §E.15, addendum 6).  The bytes below are written as its
# JSON writer does: u in table column order, p holding only the changed columns.
BARE_KEY = {"ts": TS, "scm": "db", "tbl": "t", "t": 1}
ID = b'"id":{"t":3,"h":true,"f":11,"v":1}'


def _bare_value(u: bytes, p: bytes) -> bytes:
    return b'{"u":{' + u + b'},"p":{' + p + b'}}'


def _bare_rows(impl, *values, **kw):
    dec = ticdc_fast.OpenDecoder(implementation=impl, **kw)
    msgs = [frame([(BARE_KEY, v)]) for v in values]
    return dec.decode([k for k, _ in msgs], [v for _, v in msgs])


def test_open_bare_group_one_column_recovered(impl):
    # §E.15: a (INT) went 5 -> NULL, b changed "x" -> "y"; c stayed NULL (not in p). The bare group
    # lies before the named b, so only a fits.
    value = _bare_value(ID + b',"a":{"t":3,"f":64,"v":null},"b":{"t":15,"f":64,"v":"y"},'
                             b'"c":{"t":3,"f":64,"v":null}',
                        b'"t":3,"f":64,"v":5,"b":{"t":15,"f":64,"v":"x"}')
    batch = _bare_rows(impl, value)
    assert batch.schema.names[-1] == "_before_incomplete"
    batch = batch.to_pylist()
    (row,) = batch
    assert row["_op"] == "UPDATE" and row["_before_incomplete"] is False
    assert row["before"] == [("a", "5"), ("b", "x")]
    assert dict(row["after"]) == {"id": "1", "a": None, "b": "y", "c": None}


def test_open_bare_groups_two_columns_recovered_by_order_and_type(impl):
    # §E.15 / addendum 6: two columns became NULL, so p holds duplicate bare t/f/v keys; c (INT)
    # stayed NULL.  Column order and the type codes leave one mapping: a (BIGINT UNSIGNED), b
    # (DECIMAL).  Values exact: uint64 max and a decimal string.
    value = _bare_value(ID + b',"a":{"t":8,"f":192,"v":null},"b":{"t":246,"f":64,"v":null},'
                             b'"c":{"t":3,"f":64,"v":null}',
                        b'"t":8,"f":192,"v":18446744073709551615,"t":246,"f":64,"v":"2333.654321"')
    (row,) = _bare_rows(impl, value).to_pylist()
    assert row["_before_incomplete"] is False
    assert row["before"] == [("a", "18446744073709551615"), ("b", "2333.654321")]


def test_open_bare_group_beside_a_column_named_t(impl):
    # §E.15: a column literally named "t" is an object; the bare "t" after it is a group member
    value = _bare_value(ID + b',"t":{"t":3,"f":64,"v":2},"a":{"t":3,"h":true,"f":75,"v":null}',
                        b'"t":{"t":3,"f":64,"v":1},"t":3,"h":true,"f":75,"v":7')
    (row,) = _bare_rows(impl, value).to_pylist()
    assert row["before"] == [("t", "1"), ("a", "7")] and row["_before_incomplete"] is False


def test_open_bare_group_ambiguous_is_left_out_and_flagged(impl):
    # §E.15: a went 5 -> NULL and c stayed NULL, both INT, both before the named d: the group may
    # be either, so it is not guessed; the rest of p is kept and the row is flagged.
    value = _bare_value(ID + b',"a":{"t":3,"f":64,"v":null},"c":{"t":3,"f":64,"v":null},'
                             b'"d":{"t":3,"f":64,"v":2}',
                        b'"t":3,"f":64,"v":5,"d":{"t":3,"f":64,"v":1}')
    plain = _bare_value(ID + b',"a":{"t":3,"f":64,"v":3},"c":{"t":3,"f":64,"v":null},'
                             b'"d":{"t":3,"f":64,"v":2}', b'"d":{"t":3,"f":64,"v":1}')
    rows = _bare_rows(impl, value, plain).to_pylist()
    assert [(r["before"], r["_before_incomplete"]) for r in rows] == [
        ([("d", "1")], True), ([("d", "1")], False)]


def test_open_bare_groups_typed_output(impl):
    # §E.15: typed mode decodes the same messages; the trailer carries the flag after
    # _claim_check_location
    import pyarrow as pa
    schema = pa.schema([("id", pa.int64()), ("a", pa.int64()), ("c", pa.int64()), ("d", pa.int64())])
    recovered = _bare_value(ID + b',"a":{"t":3,"f":64,"v":null},"c":{"t":3,"f":64,"v":null},'
                                 b'"d":{"t":3,"f":64,"v":2}',
                            b'"t":3,"f":64,"v":5,"d":{"t":3,"f":64,"v":1}')
    unique = _bare_value(ID + b',"a":{"t":3,"f":64,"v":null},"c":{"t":3,"f":64,"v":4},'
                              b'"d":{"t":3,"f":64,"v":2}',
                         b'"t":3,"f":64,"v":5,"d":{"t":3,"f":64,"v":1}')
    batch = _bare_rows(impl, recovered, unique, table="db.t", schema=schema)
    assert batch.schema.names == ["_op", "_commit_ts", "id", "a", "c", "d", "_ddl",
                                  "_handle_key_only", "_claim_check_location", "_before_incomplete"]
    assert [(r["_op"], r["id"], r["a"], r["c"], r["d"], r["_before_incomplete"])
            for r in batch.to_pylist()] == [("UPDATE", 1, None, None, 2, True),
                                            ("UPDATE", 1, None, 4, 2, False)]


U3 = ID + b',"a":{"t":3,"f":64,"v":null},"b":{"t":15,"f":64,"v":"y"}'


@pytest.mark.parametrize("value, reason", [
    # a full p (output without only-output-updated-columns) leaves no column for a bare group
    (_bare_value(U3, ID + b',"a":{"t":3,"f":64,"v":5},"b":{"t":15,"f":64,"v":"x"},"t":3,"f":64,"v":5'),
     "match no NULL column"),
    # no NULL column of that type
    (_bare_value(U3, b'"t":15,"f":64,"v":"z"'), "match no NULL column"),
    # the group must lie where its column is: a is before the named b
    (_bare_value(U3, b'"b":{"t":15,"f":64,"v":"x"},"t":3,"f":64,"v":5'), "match no NULL column"),
    (_bare_value(U3, b'"t":3,"f":64'), "do not form t,[h],f,v groups"),
    (_bare_value(U3, b'"t":3,"v":5'), "do not form t,[h],f,v groups"),
    (_bare_value(U3, b'"v":5,"t":3,"f":64'), "do not form t,[h],f,v groups"),
    (_bare_value(U3, b'"t":3,"h":false,"f":64,"v":5'), "do not form t,[h],f,v groups"),
    (_bare_value(U3, b'"t":3,"f":64,"b":{"t":15,"f":64,"v":"x"},"v":5'), "do not form t,[h],f,v groups"),
    (_bare_value(U3, b'"t":"x","f":64,"v":5'), "invalid t"),
    (_bare_value(U3, b'"t":300,"f":64,"v":5'), "invalid t"),
    (_bare_value(U3, b'"t":3,"f":-1,"v":5'), "invalid f"),
    (_bare_value(U3, b'"t":3,"f":64,"v":null'), "null v"),
    # bare members anywhere but p are not columns
    (b'{"u":{' + ID + b',"t":3,"f":64,"v":5}}', "column value is not a JSON object"),
    (b'{"d":{' + ID + b',"t":3,"f":64,"v":5}}', "column value is not a JSON object"),
])
def test_open_bare_groups_hostile_is_a_decode_error(impl, value, reason):
    # §E.15: only what ticdc's writer can produce is recovered; anything else fails cleanly
    dec = ticdc_fast.OpenDecoder(implementation=impl)
    k, v = frame([(BARE_KEY, value)])
    with pytest.raises(ticdc_fast.DecodeError, match=reason.replace("[", r"\[").replace("]", r"\]")) as ei:
        dec.decode([k], [v])
    assert ei.value.message_index == 0
    good = frame([(BARE_KEY, _bare_value(U3, b'"t":3,"f":64,"v":5'))])
    assert dec.decode([good[0]], [good[1]]).to_pylist()[0]["before"] == [("a", "5")]
