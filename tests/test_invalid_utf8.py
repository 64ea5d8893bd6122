"""Invalid UTF-8 in text columns (TiDB with its UTF-8 check off stores it, TiCDC forwards it).

Default ``invalid_utf8="replace"``: text output holds exactly what Python's
``bytes.decode("utf-8", errors="replace")`` gives (one U+FFFD per maximal ill-formed subpart) and
``decoder.invalid_utf8_replaced`` counts the text values that needed it, per successful
``decode()``.  A ``pa.binary()`` column gets the original bytes.  ``invalid_utf8="error"``: a
DecodeError naming the message and the column.  Every protocol and flavour, generic and typed,
both implementations."""
from __future__ import annotations

import random

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _constants as C
from ticdc_fast.testing import (AvroColumn, AvroEncoder, SimpleBootstrap, SimpleColumn, SimpleDML,
                                SimpleEncoder, SimpleTable, make_tso)
from ticdc_fast.testing.open_encoder import Col, OpenEncoder, RowChange

from conftest import frame, is_utf8, row_event

T0 = 1_714_521_600_000

# The hard cases of the "maximal subpart" rule, then random mixes of pieces and random bytes.
EDGE = [b"\xff", b"\xfe", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\x80", b"\xbf\xbf",
        b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf",
        b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf4\x8f\xbf",
        b"\xc3", b"a\xc3", b"\xc3(", b"\xe2\x82", b"\xe2\x82(", b"\xf0\x9f\x98", b"\xf0\x9f", b"\xf0",
        b"\xf0\x9f\x98(", b"caf\xe9", b"\xe9t\xe9", b"ok \xe2\x82\xac \xf0\x9f\x98\x80", b""]
PIECES = [b"a", b" ", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xef\xbf\xbd", b"\x80",
          b"\xbf", b"\xc3", b"\xe2\x82", b"\xf0\x9f\x98", b"\xed\xa0\x80", b"\xe0\x80\x80", b"\xc0\x80",
          b"\xf4\x90\x80\x80", b"\xf5", b"\xff", b"\xe0\xa0", b"\xf4\x8f"]


def _samples(n=240, seed=12):
    rnd = random.Random(seed)
    out = list(EDGE)
    while len(out) < n:
        roll = rnd.random()
        if roll < 0.2:
            out.append(b"".join(rnd.choice(PIECES[:6]) for _ in range(rnd.randint(1, 9))))
        elif roll < 0.7:
            out.append(b"".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 9))))
        else:
            out.append(bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 12))))
    return out


SAMPLES = _samples()


def _replaced(b: bytes) -> str:
    return b.decode("utf-8", errors="replace")


def test_samples_cover_valid_and_invalid():
    assert 20 < sum(map(is_utf8, SAMPLES)) < len(SAMPLES) - 100


# =========================================================================== the protocols
# Each builds messages whose rows carry SAMPLES[i] in every one of its raw-text columns and
# returns (keys, values, text columns, decoder factory, rows per sample value of a column in
# generic output).

def _open(flavor):
    # tiflow writes VARCHAR through encoding/json (U+FFFD already) but TEXT as base64 of the raw
    # bytes; ticdc copies both raw
    cols = [("t", 252)] if flavor == "tiflow" else [("v", C.T_VARCHAR), ("t", 252)]
    enc = OpenEncoder(flavor, max_batch_size=1)    # one event per Kafka message
    events = [RowChange("db", "t", make_tso(T0 + i), after=[Col("id", C.T_LONG, i)]
                        + [Col(name, code, s) for name, code in cols])
              for i, s in enumerate(SAMPLES)]
    msgs = enc.encode(events)

    def decoder(impl, **kw):
        return ticdc_fast.OpenDecoder(implementation=impl, **kw)
    return [k for k, _ in msgs], [v for _, v in msgs], [c for c, _ in cols], decoder


def _simple_avro():
    table = SimpleTable("db", "t", 10, make_tso(T0 - 1000), [
        SimpleColumn("id", "int", nullable=False), SimpleColumn("v", "varchar", length=64),
        SimpleColumn("t", "text")])
    enc = SimpleEncoder("avro")
    values = [enc.encode_value(SimpleBootstrap(table))]
    values += [enc.encode_value(SimpleDML(table, "INSERT", make_tso(T0 + i), data={"id": i, "v": s, "t": s}))
               for i, s in enumerate(SAMPLES)]

    def decoder(impl, **kw):
        return _SkipKeys(ticdc_fast.SimpleDecoder("avro", implementation=impl, **kw))
    return [None] * len(values), values, ["v", "t"], decoder


class _SkipKeys:
    """The simple protocol takes no keys; the first message is the BOOTSTRAP (a row without
    text) — the tests below skip rows whose text columns are all null."""
    def __init__(self, dec):
        self.dec = dec

    def decode(self, keys, values):
        return self.dec.decode(None, values)

    def __getattr__(self, name):
        return getattr(self.dec, name)


def _avro():
    cols = [AvroColumn("k", C.T_VARCHAR, C.FLAG_PRIMARY_KEY | C.FLAG_HANDLE_KEY),
            AvroColumn("v", C.T_VARCHAR, C.FLAG_NULLABLE), AvroColumn("t", C.T_BLOB, C.FLAG_NULLABLE)]
    enc = AvroEncoder(table_columns={("db", "t"): cols})
    events = [RowChange("db", "t", make_tso(T0 + i), after=[
        Col("k", C.T_VARCHAR, s + b"#%d" % i, C.FLAG_PRIMARY_KEY | C.FLAG_HANDLE_KEY),
        Col("v", C.T_VARCHAR, s, C.FLAG_NULLABLE), Col("t", C.T_BLOB, s, C.FLAG_NULLABLE)])
        for i, s in enumerate(SAMPLES)]
    msgs = enc.encode(events)
    schemas = {sid: text for _, sid, text in enc.registered}

    def decoder(impl, **kw):
        return ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl, **kw)
    return [k for k, _ in msgs], [v for _, v in msgs], ["k", "v", "t"], decoder


PROTOCOLS = {"open-tiflow": lambda: _open("tiflow"), "open-ticdc": lambda: _open("ticdc"),
             "simple-avro": _simple_avro, "avro": _avro}


def _sent(column, i):
    """The bytes row i holds in a column (the Avro key column is made unique per row)."""
    return SAMPLES[i] + b"#%d" % i if column == "k" else SAMPLES[i]


def _text_rows(batch, columns):
    """Rows that carry the sample values (the simple protocol's BOOTSTRAP row has none)."""
    return [r for r in batch.to_pylist() if r["_op"] in ("INSERT", "UPSERT")]


@pytest.fixture(params=list(PROTOCOLS))
def protocol(request):
    return request.param, PROTOCOLS[request.param]()


# =========================================================================== generic output
def test_generic_replaces_like_python_and_counts(protocol, impl):
    name, (keys, values, cols, decoder) = protocol
    dec = decoder(impl)
    rows = _text_rows(dec.decode(keys, values), cols)
    assert len(rows) == len(SAMPLES)
    expected_count = 0
    for i, r in enumerate(rows):
        after = dict(r["after"])
        for c in cols:
            assert after[c] == _replaced(_sent(c, i)), (name, c, _sent(c, i))
            expected_count += not is_utf8(_sent(c, i))
        if name == "avro":   # the key record: one more text value
            assert dict(r["_key"]) == {"k": _replaced(_sent("k", i))}
            expected_count += not is_utf8(_sent("k", i))
    assert expected_count > 100
    assert dec.invalid_utf8_replaced == expected_count
    # cumulative over the decoder's life
    dec.decode(keys, values)
    assert dec.invalid_utf8_replaced == 2 * expected_count


# =========================================================================== typed output
def test_typed_string_replaces_and_binary_keeps_the_bytes(protocol, impl):
    name, (keys, values, cols, decoder) = protocol
    as_text = decoder(impl, table="db.t", schema=pa.schema([(c, pa.string()) for c in cols]))
    as_bytes = decoder(impl, table="db.t", schema=pa.schema([(c, pa.binary()) for c in cols]))
    text_rows = _text_rows(as_text.decode(keys, values), cols)
    byte_rows = _text_rows(as_bytes.decode(keys, values), cols)
    assert len(text_rows) == len(byte_rows) == len(SAMPLES)
    for i, (t, b) in enumerate(zip(text_rows, byte_rows)):
        for c in cols:
            assert t[c] == _replaced(_sent(c, i)), (name, c, _sent(c, i))
            assert b[c] == _sent(c, i), (name, c)
    assert as_text.invalid_utf8_replaced == sum(not is_utf8(_sent(c, i)) for i in range(len(SAMPLES)) for c in cols)
    assert as_bytes.invalid_utf8_replaced == 0


# =========================================================================== invalid_utf8="error"
@pytest.mark.parametrize("typed", [False, True], ids=["generic", "typed"])
def test_error_option_names_message_and_column(protocol, typed, impl):
    name, (keys, values, cols, decoder) = protocol
    first_bad = next(i for i, s in enumerate(SAMPLES) if not is_utf8(s))
    skip = 1 if name == "simple-avro" else 0      # the BOOTSTRAP comes first
    kw = {"table": "db.t", "schema": pa.schema([(c, pa.string()) for c in cols])} if typed else {}
    dec = decoder(impl, invalid_utf8="error", **kw)
    with pytest.raises(ticdc_fast.DecodeError) as info:
        dec.decode(keys, values)
    err = info.value
    assert err.message_index == first_bad + skip
    assert "invalid UTF-8" in err.reason
    # the first text column (in output order) of that row
    assert err.column == cols[0]
    assert err.part == "value"
    assert dec.invalid_utf8_replaced == 0
    # the valid rows before it decode
    upto = first_bad + skip
    ok = dec.decode(keys[:upto], values[:upto])
    assert len(_text_rows(ok, cols)) == first_bad


def test_a_failed_decode_adds_nothing(impl):
    keys, values, cols, decoder = _open("ticdc")
    first_bad = next(i for i, s in enumerate(SAMPLES) if not is_utf8(s))
    dec = decoder(impl)
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(keys[:first_bad + 1] + [b"\x00"], values[:first_bad + 1] + [b""])
    assert dec.invalid_utf8_replaced == 0
    dec.decode(keys[:first_bad + 1], values[:first_bad + 1])
    assert dec.invalid_utf8_replaced == len(cols)


def test_a_decode_leaves_the_ambient_policy_as_it_found_it(impl):
    # decode() sets its decoder's policy for the call only, whether the call returns or raises:
    # text read outside a decode stays strict
    from ticdc_fast import values as V
    keys, values, cols, decoder = _open("ticdc")
    first_bad = next(i for i, s in enumerate(SAMPLES) if not is_utf8(s))
    dec = decoder(impl)
    dec.decode(keys[:first_bad + 1], values[:first_bad + 1])
    with pytest.raises(ticdc_fast.DecodeError):
        dec.decode(keys[:first_bad + 1] + [b"\x00"], values[:first_bad + 1] + [b""])
    with pytest.raises(V.ValueProblem):
        V.value_text(SAMPLES[first_bad])
    assert dec.invalid_utf8_replaced == len(cols)


@pytest.mark.parametrize("make", [
    lambda **kw: ticdc_fast.OpenDecoder(**kw),
    lambda **kw: ticdc_fast.SimpleDecoder("avro", **kw),
    lambda **kw: ticdc_fast.AvroDecoder(schemas={}, **kw),
], ids=["open", "simple", "avro"])
def test_option_is_validated(make, impl):
    for bad in ("ignore", "strict", None, 1, "REPLACE"):
        with pytest.raises(ValueError):
            make(invalid_utf8=bad, implementation=impl)
    for good in ("replace", "error"):
        assert make(invalid_utf8=good, implementation=impl).invalid_utf8_replaced == 0


# =========================================================================== other places
def test_simple_json_cannot_carry_invalid_utf8(impl):
    # Go's encoding/json writes U+FFFD for invalid UTF-8 (nothing left to replace or count); raw
    # bytes in the document are malformed JSON under either option
    table = SimpleTable("db", "t", 10, make_tso(T0 - 1000), [
        SimpleColumn("id", "int", nullable=False), SimpleColumn("v", "varchar", length=64)])
    enc = SimpleEncoder("json")
    boot = enc.encode_value(SimpleBootstrap(table))
    dml = enc.encode_value(SimpleDML(table, "INSERT", make_tso(T0), data={"id": 1, "v": b"a\xffb"}))
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl)
    rows = dec.decode(None, [boot, dml]).to_pylist()
    assert dict(rows[1]["after"])["v"] == "a\ufffdb"
    assert dec.invalid_utf8_replaced == 0
    raw = dml.replace("a\\ufffdb".encode(), b"a\xffb").replace("a\ufffdb".encode(), b"a\xffb")
    assert b"a\xffb" in raw
    for option in ("replace", "error"):
        with pytest.raises(ticdc_fast.DecodeError, match="malformed JSON") as info:
            ticdc_fast.SimpleDecoder("json", implementation=impl, invalid_utf8=option).decode(None, [boot, raw])
        assert info.value.message_index == 1


@pytest.mark.parametrize("escape", [b"\\ud800", b"\\udcff", b"\\ud800x", b"\\ude00\\ud83d"])
def test_open_lone_surrogate_escape_is_malformed_json(escape, decoder_factory):
    # JSON text can only name a surrogate half by an escape; TiCDC never writes one (encoding/json
    # and jsoniter write U+FFFD or raw bytes).  Rejected, as orjson does, under either option, also
    # beside raw invalid bytes (where the twin's fallback parser would otherwise take it).
    for raw in (b"", b"\xff"):
        doc = b'{"u":{"ok":{"t":3,"v":1},"c":{"t":15,"v":"x' + raw + escape + b'"}}}'
        key, value = frame([(row_event()[0], doc)])
        for option in ("replace", "error"):
            with pytest.raises(ticdc_fast.DecodeError, match="malformed JSON") as info:
                decoder_factory(invalid_utf8=option).decode([key], [value])
            assert info.value.message_index == 0


def test_names_stay_strict(decoder_factory):
    # column names are not column values: invalid UTF-8 there is an error under either option
    key, value = frame([(row_event()[0], b'{"u":{"o\xffk":{"t":3,"v":1}}}')])
    for option in ("replace", "error"):
        with pytest.raises(ticdc_fast.DecodeError, match="invalid UTF-8 in a column name"):
            decoder_factory(invalid_utf8=option).decode([key], [value])
