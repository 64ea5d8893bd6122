"""Open protocol rows whose column-name sequence changes from row to row.

The core remembers the last row's name sequence and skips hashing and de-duplication while names
repeat; these streams break the sequence in every way (reordered, shorter, longer, a repeated
name after a matching prefix, escaped spellings of the same name, another table in between) and
must decode exactly like the reference twin and like a fresh decoder per row."""
from __future__ import annotations

import pyarrow as pa
import pytest

import ticdc_fast
from conftest import frame, row_event


def _col(v, t=3, f=0):
    return {"t": t, "f": f, "v": v}


def _raw_row(body: str, ts: int):
    """A row event whose value JSON is written by hand (duplicate or escaped member names)."""
    key, _ = row_event({}, ts=ts)
    return key, ('{"u":{' + body + '}}').encode()


ROWS = [
    row_event({"a": _col(1), "b": _col(2), "c": _col(3)}, ts=1),
    row_event({"a": _col(4), "b": _col(5), "c": _col(6)}, ts=2),            # the memo's case
    row_event({"b": _col(7), "a": _col(8), "c": _col(9)}, ts=3),            # reordered
    row_event({"a": _col(10), "b": _col(11)}, ts=4),                        # a prefix
    row_event({"a": _col(12), "b": _col(13), "c": _col(14), "d": _col(15)}, ts=5),   # longer
    _raw_row('"a":{"t":3,"f":0,"v":16},"b":{"t":3,"f":0,"v":17},"a":{"t":3,"f":0,"v":18}', 6),
    _raw_row('"a":{"t":3,"f":0,"v":19},"b":{"t":3,"f":0,"v":20},"c":{"t":3,"f":0,"v":21}', 7),
    _raw_row('"\\u0061":{"t":3,"f":0,"v":22},"b":{"t":3,"f":0,"v":23},"c":{"t":3,"f":0,"v":24}', 8),
    row_event({"x": _col("p", t=15), "y": _col(1)}, ts=9, tbl="other"),     # another table
    row_event({"a": _col(25), "b": _col(26), "c": _col(27)}, ts=10),
    row_event({"a": _col(28), "b": _col(29), "c": _col(30)}, ts=11, old={"a": _col(1), "c": _col(2)}),
    _raw_row('"a":{"t":3,"f":0,"v":31},"a":{"t":3,"f":0,"v":32}', 12),
    row_event({"a": _col(33), "b": _col(34), "c": _col(35)}, ts=13),
]

SCHEMA = pa.schema([("a", pa.int64()), ("b", pa.int64()), ("c", pa.int64()), ("d", pa.int64())])


def _messages(rows):
    msgs = [frame([r]) for r in rows]
    return [k for k, _ in msgs], [v for _, v in msgs]


def _one_per_decoder(impl, rows, **kw):
    out = []
    for r in rows:
        keys, values = _messages([r])
        out.append(ticdc_fast.OpenDecoder(implementation=impl, **kw).decode(keys, values))
    return pa.Table.from_batches(out).combine_chunks().to_batches()[0]


@pytest.mark.parametrize("typed", [False, True])
def test_changing_name_sequences(impl, typed):
    kw = dict(table="db.t", schema=SCHEMA) if typed else {}
    keys, values = _messages(ROWS)
    got = ticdc_fast.OpenDecoder(implementation=impl, **kw).decode(keys, values)
    assert got.equals(_one_per_decoder(impl, ROWS, **kw))
    twin = ticdc_fast.OpenDecoder(implementation="python", **kw).decode(keys, values)
    assert got.equals(twin)
    if typed:
        assert got.column("a").to_pylist() == [1, 4, 8, 10, 12, 18, 19, 22, 25, 28, 32, 33]
        assert got.column("b").to_pylist() == [2, 5, 7, 11, 13, 17, 20, 23, 26, 29, None, 34]
        assert got.column("d").to_pylist() == [None] * 4 + [15] + [None] * 7
    else:
        after = [dict(r) for r in got.column("after").to_pylist()]
        assert after[5] == {"a": "18", "b": "17"}          # last value wins, first position kept
        assert list(after[5]) == ["a", "b"]
        assert after[7] == {"a": "22", "b": "23", "c": "24"}
        assert after[8] == {"x": "p", "y": "1"}


def test_batched_events_share_the_memo(impl):
    """Events of one Kafka message (batched) and of later messages alternate sequences."""
    msgs = [frame(ROWS[k:k + 4]) for k in range(0, len(ROWS), 4)]
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    got = ticdc_fast.OpenDecoder(implementation=impl).decode(keys, values)
    assert got.equals(ticdc_fast.OpenDecoder(implementation="python").decode(keys, values))
    assert got.num_rows == len(ROWS)


# Column objects in every shape around the one TiCDC writes (`{"t":..,"h":..,"f":..,"v":..}`),
# which the core reads by literal matching; any other shape goes through the general member loop.
SHAPES = [
    '{"t":3,"f":0,"v":1}', '{"t":3,"h":true,"f":11,"v":1}', '{"t":3,"h":false,"f":0,"v":-7}',
    '{"t":3,"h":null,"f":0,"v":1}', '{"t":3,"f":null,"v":1}', '{"v":1,"t":3,"f":0}',
    '{"t":3, "f":0,"v":1}', '{"t":3,"f":0,"v":1 }', '{"t":3,"f":0,"v":1,"x":2}', '{"t":3,"f":0}',
    '{"t":15,"f":0,"v":"a\\"b"}', '{"t":15,"f":0,"v":null}', '{"t":3,"f":0,"v":[1]}', '{"t":3,"f":0,"v":{"a":1}}',
    '{"t":03,"f":0,"v":1}', '{"t":3,"f":01,"v":1}', '{"t":999,"f":0,"v":1}', '{"t":2,"f":0,"v":1}',
    '{"t":3,"f":4294967295,"v":1}', '{"t":3,"f":4294967296,"v":1}', '{"t":3,"f":99999999999,"v":1}',
    '{"t":-3,"f":0,"v":1}', '{"t":3.0,"f":0,"v":1}', '{"t":3,"f":0,"v":"unterminated}', '{"t":3,"f":0,"v":1',
    '{"t":3,"f":0,"v":}', '{"t":3,"h":tru,"f":0,"v":1}', '{"t":3,"f":0,"v":1e5}', '{}', '{"t":3,"f":0,"v":tru}',
]


@pytest.mark.parametrize("typed", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_column_object_shapes_match_the_twin(impl, shape, typed):
    kw = dict(table="db.t", schema=pa.schema([("a", pa.string()), ("b", pa.int64())])) if typed else {}
    rows = [row_event({"b": _col(1)}, ts=1),
            _raw_row('"a":' + shape + ',"b":{"t":3,"f":0,"v":2}', 2)]
    keys, values = _messages(rows)

    def run(which):
        try:
            return ticdc_fast.OpenDecoder(implementation=which, **kw).decode(keys, values)
        except ticdc_fast.DecodeError as exc:
            return ("error", exc.message_index, exc.column)
    got, want = run(impl), run("python")
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and got[:2] == want[:2]
    else:
        assert not isinstance(got, tuple) and got.equals(want)



@pytest.mark.parametrize("typed", [False, True])
@pytest.mark.parametrize("shape", SHAPES + [
    '{"t":3,"f":1,"v":5}', '{"t":8,"f":0,"v":5}', '{"t":15,"f":0,"v":"5"}', '{"t":3,"h":true,"f":0,"v":5}',
    '{"t":3,"f":0,"v": 5}', '{"t":3,"f":0,"v":"5"}', '{"t":3,"f":0,"v":5.5}'])
def test_column_heads_that_change_under_the_same_names(impl, shape, typed):
    """The core remembers each column's head (`{"t":3,"f":0,"v":`) with the table's names; a
    later row with the same names and another head, or the same head before another shape,
    must read exactly as the twin reads it (values, and where an error is)."""
    kw = dict(table="db.t", schema=pa.schema([("a", pa.string()), ("b", pa.int64())])) if typed else {}
    plain = '"a":{"t":3,"f":0,"v":%d},"b":{"t":3,"f":0,"v":%d}'
    rows = [_raw_row(plain % (1, 2), 1), _raw_row(plain % (3, 4), 2),
            _raw_row('"a":' + shape + ',"b":{"t":3,"f":0,"v":6}', 3), _raw_row(plain % (7, 8), 4)]
    keys, values = _messages(rows)

    def run(which):
        try:
            return ticdc_fast.OpenDecoder(implementation=which, **kw).decode(keys, values)
        except ticdc_fast.DecodeError as exc:
            return ("error", exc.message_index, exc.byte_offset, exc.column, exc.reason)
    got, want = run(impl), run("python")
    if isinstance(want, tuple):
        assert got == want
    else:
        assert not isinstance(got, tuple) and got.equals(want)
        assert got.equals(_one_per_decoder(impl, rows, **kw))


# --------------------------------------------------------------------------- validity bitmaps
# The core writes a column's validity bitmap only from its first null on (earlier rows are
# filled in then); these patterns put the first null on and around every byte boundary.
def _null_patterns():
    for first in list(range(0, 18)) + [31, 32, 33, 63, 64, 65]:
        yield [i == first or (i > first and i % 5 == 0) for i in range(first + 20)]
    yield [False] * 70
    yield [True] * 70


@pytest.mark.parametrize("pattern", list(_null_patterns()), ids=lambda p: f"first-null-{p.index(True) if True in p else 'none'}-{len(p)}")
def test_validity_bitmaps_around_byte_boundaries(impl, pattern):
    rows = [row_event({"a": {"t": 3, "f": 0, "v": None if null else i},
                       "s": {"t": 15, "f": 0, "v": None if null else f"x{i}"},
                       "b": {"t": 1, "f": 0, "v": None if null else i % 2},
                       "d": {"t": 246, "f": 0, "v": None if null else f"{i}.25"}}, ts=i + 1)
            for i, null in enumerate(pattern)]
    msgs = [frame(rows[k:k + 3]) for k in range(0, len(rows), 3)]
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    schema = pa.schema([("a", pa.int64()), ("s", pa.string()), ("b", pa.bool_()), ("d", pa.decimal128(10, 2))])
    got = ticdc_fast.OpenDecoder(implementation=impl, table="db.t", schema=schema).decode(keys, values)
    want = [None if null else i for i, null in enumerate(pattern)]
    assert got.column("a").to_pylist() == want
    assert got.column("s").to_pylist() == [None if v is None else f"x{v}" for v in want]
    assert got.column("b").to_pylist() == [None if v is None else bool(v % 2) for v in want]
    assert [None if v is None else str(v) for v in got.column("d").to_pylist()] == \
        [None if v is None else f"{v}.25" for v in want]
    assert got.column("a").null_count == sum(pattern)
    got.validate(full=True)
    if impl == "cython":
        assert got.equals(ticdc_fast.OpenDecoder(implementation="python", table="db.t", schema=schema)
                          .decode(keys, values))


def test_event_key_field_orders_and_spellings(impl):
    """Event keys in TiCDC's order, reordered, with escaped names, extra and missing fields."""
    value = b'{"u":{"a":{"t":3,"f":0,"v":1}}}'
    key_docs = [b'{"ts":5,"scm":"db","tbl":"t","t":1}', b'{"ts":6,"scm":"db","tbl":"t","t":1}',
                b'{"t":1,"tbl":"t","scm":"db","ts":7}', b'{"\\u0074s":8,"scm":"db","tbl":"t","t":1}',
                b'{"ts":9,"scm":"db","tbl":"t","rid":3,"t":1}', b'{"ts":10,"scm":"db","t":1,"tbl":"t"}',
                b'{"ts":11,"scm":"db","tbl":"t","t":1,"x":"y"}', b'{"ts":12,"scm":"db","tbl":"t","ts2":1,"t":1}',
                b'{"ts":13,"scm":"d\\u0062","tbl":"t","t":1}', b'{"ts":14,"tbl":"t","t":1}']
    msgs = [frame([(kd, value)]) for kd in key_docs]
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    got = ticdc_fast.OpenDecoder(implementation=impl).decode(keys, values)
    assert got.equals(ticdc_fast.OpenDecoder(implementation="python").decode(keys, values))
    assert got.column("_commit_ts").to_pylist() == list(range(5, 15))
    assert got.column("_schema").to_pylist() == ["db"] * 9 + [None]
    assert got.column("_row_id").to_pylist()[4] == 3



def _many_tables_rows():
    """40 tables (more than the core's memo slots, so some share one), each with its own name
    sequence, interleaved; the same table names in another schema with other columns; table t7
    named plainly and with an escape in the key by turns (the slot hint differs, the names must
    not). Returns the events and (schema, table, column names) of each."""
    import random
    from conftest import jdump
    rng = random.Random(7)
    names = ["a", "b", "c", "d", "e", "f"]
    rows, meta = [], []
    for ts in range(1, 301):
        i = rng.randrange(40)
        cols = names[i % 6:] + names[:i % 6]
        cols = cols[: 2 + i % 5] + [f"only_t{i}"]
        scm = "db" if ts % 7 else "other_db"
        if scm == "other_db":
            cols = cols[::-1]
        key, value = row_event({c: _col(ts * 10 + k) for k, c in enumerate(cols)}, ts=ts, scm=scm,
                               tbl=f"t{i}")
        if i == 7 and ts % 2:
            key = jdump(key).replace(b'"tbl":"t7"', b'"tbl":"\\u00747"')
            assert b"u0074" in key
        rows.append((key, value))
        meta.append((scm, f"t{i}", cols))
    return rows, meta


@pytest.mark.parametrize("typed", [False, True])
def test_many_interleaved_tables(impl, typed):
    rows, meta = _many_tables_rows()
    schema = pa.schema([(n, pa.int64()) for n in ("a", "b", "c", "d", "e", "f", "only_t7")])
    kw = dict(table="db.t7", schema=schema) if typed else {}
    keys, values = _messages(rows)
    got = ticdc_fast.OpenDecoder(implementation=impl, **kw).decode(keys, values)
    assert got.equals(_one_per_decoder(impl, rows, **kw))
    assert got.equals(ticdc_fast.OpenDecoder(implementation="python", **kw).decode(keys, values))
    ts_of = [ts for ts, (scm, tbl, _) in enumerate(meta, 1) if (scm, tbl) == ("db", "t7")]
    if typed:
        assert got.num_rows == len(ts_of) > 3
        assert got.column("only_t7").to_pylist() == [ts * 10 + 2 + 7 % 5 for ts in ts_of]
        assert got.column("b").to_pylist() == [ts * 10 for ts in ts_of]
    else:
        assert got.num_rows == len(rows)
        assert got.column("_table").to_pylist() == [tbl for _, tbl, _ in meta]
        assert got.column("_schema").to_pylist() == [scm for scm, _, _ in meta]
        after = [list(r) for r in got.column("after").to_pylist()]
        assert after == [[(c, str(ts * 10 + k)) for k, c in enumerate(cols)]
                         for ts, (_, _, cols) in enumerate(meta, 1)]
