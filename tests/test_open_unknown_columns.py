"""Open protocol, typed mode: ``OpenDecoder.unknown_columns`` reports the columns rows of a typed
table carried that its schema lacks (issue 41), and ``on_schema_change`` makes such a column a
schema change when the schema held every column of the table's first row (issue 42).  Both
implementations, the same answers."""
from __future__ import annotations

import pyarrow as pa
import pytest

import ticdc_fast
from conftest import frame, resolved_event, row_event

A = {"t": 3, "v": 1}
AB = pa.schema([("a", pa.int64()), ("b", pa.int64())])


def col(v):
    return {"t": 3, "v": v}


def msgs(*events):
    """One Kafka message per event."""
    pairs = [frame([e]) for e in events]
    return [k for k, _ in pairs], [v for _, v in pairs]


def decode(dec, *events, **kw):
    keys, values = msgs(*events)
    return dec.decode(keys, values, **kw)


def test_nothing_unknown(decoder_factory):
    dec = decoder_factory(table="db.t", schema=AB)
    decode(dec, row_event({"a": col(1), "b": col(2)}), row_event({"a": col(3)}), resolved_event())
    assert dec.unknown_columns == {}
    assert dec.stats.schema_changes_ignored == 0


def test_generic_decoder_reports_nothing(decoder_factory):
    dec = decoder_factory()
    decode(dec, row_event({"a": col(1), "x": col(2)}))
    assert dec.unknown_columns == {}


def test_projection_reports_and_never_fails(decoder_factory):
    dec = decoder_factory(table="db.t", schema=AB)
    batch = decode(dec, row_event({"a": col(1), "x": col(2), "b": col(3)}),
                   row_event({"a": col(4), "b": col(5), "y": col(6), "x": col(7)}))
    assert batch.column("a").to_pylist() == [1, 4]
    assert dec.unknown_columns == {"db.t": ("x", "y")}
    decode(dec, row_event({"z": col(1), "a": col(2)}))      # another call: cumulative
    assert dec.unknown_columns == {"db.t": ("x", "y", "z")}
    assert dec.stats.schema_changes_ignored == 0


def test_every_image_in_order_new_then_old(decoder_factory):
    dec = decoder_factory(table="db.t", schema=AB, on_schema_change="ignore")
    decode(dec, row_event({"a": col(1), "u1": col(2)}, old={"p1": col(1), "a": col(0), "u1": col(1)}),
           row_event({"d1": col(1), "a": col(1)}, op="d"))
    assert dec.unknown_columns == {"db.t": ("u1", "p1", "d1")}


def test_other_tables_not_reported(decoder_factory):
    dec = decoder_factory(table="db.t", schema=AB)
    decode(dec, row_event({"a": col(1), "other": col(2)}, tbl="u"), row_event({"a": col(1)}))
    assert dec.unknown_columns == {}


def test_schema_change_fails_at_its_message(decoder_factory):
    dec = decoder_factory(table="db.t", schema=AB)
    decode(dec, row_event({"a": col(1), "b": col(2)}))
    events = (row_event({"a": col(3), "b": col(4)}), row_event({"a": col(5), "b": col(6), "c": col(7)}))
    for _ in range(2):              # the decoder is as before the call: the same error again
        with pytest.raises(ticdc_fast.SchemaChangedError) as info:
            decode(dec, *events, partitions=[0, 0], offsets=[10, 11])
        err = info.value
        assert (err.message_index, err.table, err.added, err.offset) == (1, "db.t", ("c",), 11)
        assert "c" in str(err) and "db.t" in str(err)
        assert dec.unknown_columns == {}
    # an error policy never sets it aside
    skipping = decoder_factory(table="db.t", schema=AB, on_error="skip")
    decode(skipping, row_event({"a": col(1), "b": col(2)}))
    with pytest.raises(ticdc_fast.SchemaChangedError):
        decode(skipping, *events)


def test_schema_change_ignored_is_counted(decoder_factory):
    dec = decoder_factory(table="db.t", schema=AB, on_schema_change="ignore")
    batch = decode(dec, row_event({"a": col(1)}), row_event({"a": col(2), "c": col(3)}),
                   row_event({"a": col(2), "c": col(3), "d": col(4)}), row_event({"c": col(1)}))
    assert batch.column("a").to_pylist() == [1, 2, 2, None]
    assert dec.unknown_columns == {"db.t": ("c", "d")}
    assert dec.stats.schema_changes_ignored == 2      # the rows that brought c, then d


def test_a_failed_call_adds_nothing(decoder_factory):
    dec = decoder_factory(table="db.t", schema=AB)
    bad = (row_event({"a": col(1), "x": col(2)}), row_event({"a": {"t": 3, "v": "no"}}))
    with pytest.raises(ticdc_fast.DecodeError):
        decode(dec, *bad)
    assert dec.unknown_columns == {}
    skipping = decoder_factory(table="db.t", schema=AB, on_error="skip")
    out = decode(skipping, *bad, row_event({"a": col(3), "y": col(2)}))
    assert out.column("a").to_pylist() == [1, 3]
    assert skipping.unknown_columns == {"db.t": ("x", "y")}


def test_memo_shared_with_other_tables(decoder_factory):
    """40 tables (more than the plan's column memos) with the same columns: the typed table's
    rows are checked even when another table left the memo they land on."""
    dec = decoder_factory(table="db.t7", schema=AB, on_schema_change="ignore")
    others = [row_event({"a": col(1), "x": col(2)}, tbl=f"t{k}") for k in range(40) if k != 7]
    decode(dec, row_event({"a": col(1)}, tbl="t7"), *others)
    assert dec.unknown_columns == {}
    decode(dec, *others, row_event({"a": col(1), "x": col(2)}, tbl="t7"), *others)
    assert dec.unknown_columns == {"db.t7": ("x",)}
    assert dec.stats.schema_changes_ignored == 1


def test_repeated_rows_across_calls(decoder_factory):
    """Rows that repeat their table's column memo report nothing twice; a failed call forgets
    what it saw, so the next call reports it."""
    dec = decoder_factory(table="db.t", schema=AB)
    row = row_event({"a": col(1), "x": col(2)})
    for _ in range(3):
        decode(dec, row, row, row)
    assert dec.unknown_columns == {"db.t": ("x",)}
    with pytest.raises(ticdc_fast.DecodeError):
        decode(dec, row, row_event({"a": col(1), "y": col(2)}), row_event({"a": {"t": 3, "v": "no"}}))
    assert dec.unknown_columns == {"db.t": ("x",)}
    decode(dec, row_event({"a": col(1), "y": col(2)}))
    assert dec.unknown_columns == {"db.t": ("x", "y")}


def test_tables_per_table(decoder_factory):
    dec = decoder_factory(tables={"db.t": AB, "db.u": pa.schema([("x", pa.int64())])},
                          on_schema_change="ignore")
    decode(dec, row_event({"a": col(1), "x": col(2)}), row_event({"x": col(1), "y": col(2)}, tbl="u"),
           row_event({"q": col(1)}, tbl="w"), row_event({"a": col(1), "x": col(2), "z": col(3)}))
    assert dec.unknown_columns == {"db.t": ("x", "z"), "db.u": ("y",)}
    assert dec.stats.schema_changes_ignored == 0      # both first rows left columns out
    strict = decoder_factory(tables={"db.t": AB, "db.u": pa.schema([("x", pa.int64())])})
    decode(strict, row_event({"x": col(1)}, tbl="u"))
    with pytest.raises(ticdc_fast.SchemaChangedError) as info:
        decode(strict, row_event({"a": col(1)}), row_event({"x": col(1), "y": col(2)}, tbl="u"))
    assert (info.value.table, info.value.added, info.value.message_index) == ("db.u", ("y",), 1)


def test_realistic_stream_core_equals_twin(impl):
    """A projection of every table of a realistic stream, decoded a piece at a time: the core
    and the twin report the same names (the columns left out)."""
    from ticdc_fast.testing.realistic import realistic_stream
    if impl == "python":
        pytest.skip("compares the core with the twin: runs once, as the cython case")
    messages = realistic_stream("open", 3000).messages
    keys, values = [k for k, _ in messages], [v for _, v in messages]
    gen = ticdc_fast.OpenDecoder(implementation="python")
    batch = gen.decode(keys, values)
    tables = {}
    for r in batch.select(["_schema", "_table", "after"]).to_pylist():
        if r["after"] is not None:
            tables.setdefault(f"{r['_schema']}.{r['_table']}", {}).update(dict(r["after"]))
    # a schema of every other column of each table: a projection
    schemas = {t: pa.schema([(c, pa.string()) for c in list(cols)[::2]] + [("no_such", pa.string())])
               for t, cols in tables.items()}
    out, missing = {}, {}
    for impl in ("cython", "python"):
        dec = ticdc_fast.OpenDecoder(tables=schemas, implementation=impl)
        for at in range(0, len(keys), 700):
            dec.decode(keys[at:at + 700], values[at:at + 700])
        out[impl], missing[impl] = dec.unknown_columns, dec.missing_columns
    assert out["cython"] == out["python"]
    assert missing["cython"] == missing["python"] == {t: ("no_such",) for t in tables}
    assert {t: set(v) for t, v in out["cython"].items()} == \
        {t: set(list(cols)[1::2]) for t, cols in tables.items()}


def test_missing_columns_of_full_new_images(decoder_factory):
    """The typed columns a row's full new image (INSERT, UPDATE) lacked; DELETE images,
    control rows and handle-key-only rows do not count."""
    abc = pa.schema([("a", pa.int64()), ("b", pa.int64()), ("c", pa.int64())])
    dec = decoder_factory(table="db.t", schema=abc, on_schema_change="ignore")
    decode(dec, row_event({"a": col(1), "b": col(2), "c": col(3)}), resolved_event(),
           row_event({"a": col(1)}, op="d"), row_event({"a": col(1)}, ohk=True))
    assert dec.missing_columns == {}
    decode(dec, row_event({"a": col(1), "b": {"t": 3, "v": None}}),          # null is carried
           row_event({"b": col(1)}, old={"a": col(1), "b": col(1), "c": col(1)}))
    assert dec.missing_columns == {"db.t": ("c", "a")}
    with pytest.raises(ticdc_fast.DecodeError):
        decode(dec, row_event({"c": col(1)}), row_event({"a": {"t": 3, "v": "no"}}))
    assert dec.missing_columns == {"db.t": ("c", "a")}
    many = decoder_factory(tables={"db.t": abc, "db.u": pa.schema([("x", pa.int64())])})
    decode(many, row_event({"a": col(1), "b": col(2)}), row_event({"y": col(1)}, tbl="u"))
    assert many.missing_columns == {"db.t": ("c",), "db.u": ("x",)}
