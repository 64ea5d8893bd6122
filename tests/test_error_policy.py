"""Error policies (``on_error="fail"|"skip"|"dead_letter"``) on poisoned streams of every protocol.

Each stream is a clean change stream with poison messages injected at known positions: a
truncated message, a bit-flipped one, forged lengths, a message of another protocol, and (typed
mode) a value the target type cannot hold.  ``skip`` must give exactly the rows of the clean
stream and count the poison; ``dead_letter`` those rows plus one ERROR row per poison message with
its bytes, partition and offset; ``fail`` a DecodeError naming the partition and offset.  The
streams are decoded whole and in small batches (a poison message then also ends or starts a
batch), by both implementations.
"""
from __future__ import annotations

import random

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _constants as C
from ticdc_fast import _impl
from ticdc_fast.policy import ERROR_TYPE, split_dead_letters
from ticdc_fast.testing import (AvroColumn, AvroEncoder, OpenEncoder, SimpleBootstrap, SimpleColumn,
                                SimpleDML, SimpleEncoder, SimpleTable, make_tso)
from ticdc_fast.testing.open_encoder import Col, RowChange

T0 = 1_714_521_600_000
PK = C.FLAG_PRIMARY_KEY | C.FLAG_HANDLE_KEY
TYPED = pa.schema([("id", pa.int64()), ("n", pa.int16()), ("name", pa.string())])
TOO_BIG_FOR_INT16 = 100_000


def _rows(count: int, start_id: int = 1):
    """(op, id, n, name, old) tuples: inserts, an update and a delete, with NULLs and non-ASCII."""
    out = []
    for k in range(count):
        i = start_id + k
        name = None if i % 5 == 0 else f"näme-{i}-日本"
        out.append(("INSERT", i, (i * 37) % 30_000 - 15_000, name, None))
        if i % 3 == 0:
            out.append(("UPDATE", i, i, f"upd-{i}", ((i * 37) % 30_000 - 15_000, name)))
        if i % 4 == 0:
            out.append(("DELETE", i, None, None, (i, name)))
    return out


# =========================================================================== stream builders
def _open_cols(i, n, name):
    return [Col("id", C.T_LONGLONG, i, PK), Col("n", C.T_LONG, n, C.FLAG_NULLABLE),
            Col("name", C.T_VARCHAR, name, C.FLAG_NULLABLE)]


def _open_event(op, i, n, name, old, ts):
    if op == "INSERT":
        return RowChange("db", "t", ts, after=_open_cols(i, n, name))
    if op == "UPDATE":
        return RowChange("db", "t", ts, after=_open_cols(i, n, name), before=_open_cols(i, *old))
    return RowChange("db", "t", ts, before=_open_cols(i, *old))


def open_stream(flavor):
    enc = OpenEncoder(flavor, max_batch_size=1)
    events = [_open_event(*r, make_tso(T0 + k)) for k, r in enumerate(_rows(12))]
    clean = enc.encode(events)
    big = enc.encode([_open_event("INSERT", 999, TOO_BIG_FOR_INT16, "big", None, make_tso(T0 + 500))])[0]
    k, v = clean[2]
    forged = v[:8] + (1 << 40).to_bytes(8, "big") + v[16:]    # the first event's length field
    simple_value = SimpleEncoder("json").encode([SimpleBootstrap(_simple_table())])[0][1]
    poison = {"truncated": (k, v[: len(v) // 2]), "bit-flipped": _flipped(k, v, json_text=True, part="value", skip=8),
              "forged-length": (k, forged), "wrong-protocol": (b"", simple_value)}
    return clean, poison, big, lambda impl, **kw: ticdc_fast.OpenDecoder(implementation=impl, **kw)


def _simple_table():
    return SimpleTable("db", "t", 50, make_tso(T0 - 10_000), [
        SimpleColumn("id", "bigint", nullable=False), SimpleColumn("n", "int"),
        SimpleColumn("name", "varchar", length=40)])


def _simple_event(table, op, i, n, name, old, ts):
    row = {"id": i, "n": n, "name": name}
    if op == "INSERT":
        return SimpleDML(table, "INSERT", ts, data=row)
    old_row = {"id": i, "n": old[0], "name": old[1]}
    if op == "UPDATE":
        return SimpleDML(table, "UPDATE", ts, data=row, old=old_row)
    return SimpleDML(table, "DELETE", ts, old=old_row)


def simple_stream(encoding):
    table = _simple_table()
    enc = SimpleEncoder(encoding)
    events = [SimpleBootstrap(table)] + [_simple_event(table, *r, make_tso(T0 + k))
                                         for k, r in enumerate(_rows(12))]
    clean = enc.encode(events)
    big = enc.encode([_simple_event(table, "INSERT", 999, TOO_BIG_FOR_INT16, "big", None, make_tso(T0 + 500))])[0]
    _, v = clean[3]
    open_msg = OpenEncoder("tiflow").encode([_open_event("INSERT", 1, 2, "x", None, make_tso(T0))])[0]
    bootstrap = clean[0][1]
    poison = {"truncated": (None, v[: len(v) // 2]),
              "truncated-bootstrap": (None, bootstrap[: len(bootstrap) - 7]),
              "bit-flipped": _flipped(None, v, json_text=encoding == "json", part="value"),
              "wrong-protocol": (None, open_msg[1])}
    if encoding == "avro":
        poison["forged-length"] = (None, _forge_avro_string_length(v, b"n\xc3\xa4me-3"))
    return clean, poison, big, lambda impl, **kw: ticdc_fast.SimpleDecoder(encoding, implementation=impl, **kw)


def avro_stream(flavor):
    columns = {("db", "t"): [AvroColumn("id", C.T_LONGLONG, PK), AvroColumn("n", C.T_LONG, C.FLAG_NULLABLE),
                             AvroColumn("name", C.T_VARCHAR, C.FLAG_NULLABLE)]}
    enc = AvroEncoder(flavor=flavor, table_columns=columns)
    events = [_open_event(*r, make_tso(T0 + k)) for k, r in enumerate(_rows(12))]
    clean = enc.encode(events)
    big = enc.encode([_open_event("INSERT", 999, TOO_BIG_FOR_INT16, "big", None, make_tso(T0 + 500))])[0]
    schemas = {sid: text for _, sid, text in enc.registered}
    k, v = clean[2]
    open_msg = OpenEncoder("tiflow").encode([_open_event("INSERT", 1, 2, "x", None, make_tso(T0))])[0]
    unknown_id = v[:1] + (0x7FFF0000).to_bytes(4, "big") + v[5:]
    poison = {"truncated": (k, v[: len(v) // 2]), "bit-flipped": _flipped(k, v, json_text=False, part="value"),
              "forged-length": (k, _forge_avro_string_length(v, b"n\xc3\xa4me-3")),
              "wrong-protocol": open_msg, "unknown-schema-id": (k, unknown_id)}
    return clean, poison, big, lambda impl, **kw: ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl, **kw)


def _forge_avro_string_length(value: bytes, text: bytes) -> bytes:
    """The Avro string ``text`` in ``value`` with its length varint replaced by a huge one."""
    at = value.index(text)
    head = value[:at]
    assert head[-1] < 0x80, "a one-byte length varint expected"
    return head[:-1] + b"\xfe\xff\xff\xff\x0f" + value[at:]


def _flipped(key, value, *, json_text, part, skip=0):
    """A copy of the message with one bit flipped where it breaks the message: in JSON, in the
    first member name's quote; in binary, in the first byte after ``skip`` that fails the decode
    (found by trying, below)."""
    if json_text:
        at = value.index(b'"', skip)
        return key, value[:at] + bytes([value[at] ^ 0x01]) + value[at + 1:]
    return key, ("flip", value)     # resolved per protocol by _resolve_flip


def _resolve_flip(make, key, marker):
    """The first single-bit flip of ``value`` (from its end, deterministic) that both
    implementations reject on its own, after the clean stream's schemas."""
    _, value = marker
    rng = random.Random(7)
    positions = list(range(5, len(value)))
    rng.shuffle(positions)
    for at in positions:
        for bit in (0x80, 0x40, 0x01):
            candidate = value[:at] + bytes([value[at] ^ bit]) + value[at + 1:]
            if all(_rejects(make, impl, key, candidate) for impl in _AVAILABLE):
                return key, candidate
    raise AssertionError("no breaking bit flip found")


_AVAILABLE = ("python",) if _impl.PURE_FORCED else ("cython", "python")


def _rejects(make, impl, key, value) -> bool:
    dec = make(impl)
    try:
        dec.decode([key], [value])
    except ticdc_fast.DecodeError:
        return True
    return False


STREAMS = {
    "open-tiflow": lambda: open_stream("tiflow"),
    "open-ticdc": lambda: open_stream("ticdc"),
    "simple-json": lambda: simple_stream("json"),
    "simple-avro": lambda: simple_stream("avro"),
    "avro-tiflow": lambda: avro_stream("tiflow"),
    "avro-ticdc": lambda: avro_stream("ticdc"),
}


def _poisoned(name, impl, typed: bool):
    clean, poison, big, make = STREAMS[name]()
    if name.startswith("simple"):   # held rows are not all-or-nothing without the bootstrap
        make_alone = lambda impl_, **kw: _with_bootstrap(make, clean[0][1], impl_, **kw)  # noqa: E731
    else:
        make_alone = make
    bad = []
    for label, (k, v) in sorted(poison.items()):
        if isinstance(v, tuple):
            k, v = _resolve_flip(make_alone, k, v)
        bad.append((label, k, v))
    if typed:
        bad.append(("typed-conversion", *big))
    # spread the poison over the stream (never before a simple stream's BOOTSTRAP), partitions 0/1
    messages, is_bad = [], []
    slots = {1 + 3 * j: b for j, b in enumerate(bad)}
    ci = 0
    pos = 0
    while ci < len(clean) or slots:
        if pos in slots and (not name.startswith("simple") or ci > 0):
            label, k, v = slots.pop(pos)
            messages.append((k, v))
            is_bad.append(label)
        elif ci < len(clean):
            messages.append(clean[ci])
            is_bad.append(None)
            ci += 1
        else:
            pos = min(slots)
            continue
        pos += 1
    partitions = [i % 2 for i in range(len(messages))]
    offsets = [1000 + i // 2 for i in range(len(messages))]
    kw = {"table": "db.t", "schema": TYPED} if typed else {}
    return messages, is_bad, partitions, offsets, (lambda **extra: make(impl, **kw, **extra))


class _BootstrappedDecoder:
    def __init__(self, dec, bootstrap):
        self.dec = dec
        dec.decode(None, [bootstrap])

    def decode(self, keys, values):
        return self.dec.decode(None, values)


def _with_bootstrap(make, bootstrap, impl, **kw):
    return _BootstrappedDecoder(make(impl, **kw), bootstrap)


def _decode(make_decoder, messages, partitions, offsets, batch, **kw):
    dec = make_decoder(**kw)
    out = []
    for s in range(0, len(messages), batch):
        part = messages[s:s + batch]
        keys = [k for k, _ in part]
        if all(k is None for k in keys):
            keys = None
        out.append(dec.decode(keys, [v for _, v in part], partitions=partitions[s:s + batch],
                              offsets=offsets[s:s + batch]))
    return dec, pa.Table.from_batches(out)


def _clean_reference(make_decoder, messages, is_bad, partitions, offsets, batch):
    keep = [i for i, b in enumerate(is_bad) if b is None]
    return _decode(make_decoder, [messages[i] for i in keep], [partitions[i] for i in keep],
                   [offsets[i] for i in keep], batch)[1]


CASES = [(name, typed) for name in STREAMS for typed in (False, True)]


@pytest.mark.parametrize("batch", [1000, 4])
@pytest.mark.parametrize("name,typed", CASES, ids=[f"{n}-{'typed' if t else 'generic'}" for n, t in CASES])
def test_skip_gives_the_clean_rows_and_counts_the_poison(impl, name, typed, batch):
    messages, is_bad, partitions, offsets, make_decoder = _poisoned(name, impl, typed)
    want = _clean_reference(make_decoder, messages, is_bad, partitions, offsets, batch)
    dec, got = _decode(make_decoder, messages, partitions, offsets, batch, on_error="skip")
    assert got.schema == want.schema
    assert got.to_pylist() == want.to_pylist()
    n_bad = sum(b is not None for b in is_bad)
    assert n_bad >= 4
    assert dec.stats.skipped == n_bad
    assert dec.stats.dead_lettered == 0
    assert dec.stats.messages == len(messages)
    assert dec.stats.rows == want.num_rows


@pytest.mark.parametrize("batch", [1000, 4])
@pytest.mark.parametrize("name,typed", CASES, ids=[f"{n}-{'typed' if t else 'generic'}" for n, t in CASES])
def test_dead_letter_gives_one_error_row_per_poison_message(impl, name, typed, batch):
    messages, is_bad, partitions, offsets, make_decoder = _poisoned(name, impl, typed)
    want = _clean_reference(make_decoder, messages, is_bad, partitions, offsets, batch)
    dec, got = _decode(make_decoder, messages, partitions, offsets, batch, on_error="dead_letter")
    assert got.schema == dec.output_schema(partitions=True, offsets=True)
    assert got.schema.field("_error").type == ERROR_TYPE
    batch_ = got.combine_chunks().to_batches()[0] if got.num_rows else None
    good, dead = split_dead_letters(batch_)
    # good rows: the clean stream's, with null _error/_raw_*
    assert good.drop_columns(["_error", "_raw_key", "_raw_value"]).to_pylist() == want.to_pylist()
    assert good.column("_error").null_count == good.num_rows
    assert good.column("_raw_value").null_count == good.num_rows
    # one ERROR row per poison message, in stream order, with its bytes and Kafka position
    bad_at = [i for i, b in enumerate(is_bad) if b is not None]
    assert dead.num_rows == len(bad_at) == dec.stats.dead_lettered
    assert dead.column("_raw_value").to_pylist() == [messages[i][1] for i in bad_at]
    assert dead.column("_raw_key").to_pylist() == [messages[i][0] for i in bad_at]
    assert dead.column("_partition").to_pylist() == [partitions[i] for i in bad_at]
    assert dead.column("_offset").to_pylist() == [offsets[i] for i in bad_at]
    errors = dead.column("_error").to_pylist()
    for i, e in zip(bad_at, errors):
        assert e["partition"] == partitions[i] and e["offset"] == offsets[i]
        assert e["message_index"] == i % batch
        assert e["reason"] and f"Kafka partition {partitions[i]}, offset {offsets[i]}" in e["message"]
        if is_bad[i] == "typed-conversion":
            assert e["column"] == "n"
    # every other column of an ERROR row is null
    for field in dead.schema:
        if field.name not in ("_op", "_error", "_raw_key", "_raw_value", "_partition", "_offset"):
            assert dead.column(field.name).null_count == dead.num_rows, field.name
    assert set(dead.column("_op").to_pylist()) == {"ERROR"}


@pytest.mark.parametrize("name,typed", CASES, ids=[f"{n}-{'typed' if t else 'generic'}" for n, t in CASES])
def test_fail_names_the_partition_and_offset_of_the_first_poison(impl, name, typed):
    messages, is_bad, partitions, offsets, make_decoder = _poisoned(name, impl, typed)
    first = next(i for i, b in enumerate(is_bad) if b is not None)
    with pytest.raises(ticdc_fast.DecodeError) as info:
        _decode(make_decoder, messages, partitions, offsets, 1000)
    e = info.value
    assert (e.message_index, e.partition, e.offset) == (first, partitions[first], offsets[first])
    assert f"Kafka partition {partitions[first]}, offset {offsets[first]}" in str(e)


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")
@pytest.mark.parametrize("name", list(STREAMS))
def test_core_and_twin_agree_on_the_dead_letters(name):
    results = {}
    for impl in ("cython", "python"):
        messages, is_bad, partitions, offsets, make_decoder = _poisoned(name, impl, True)
        _, got = _decode(make_decoder, messages, partitions, offsets, 5, on_error="dead_letter")
        table = got.to_pylist()
        for row in table:
            if row["_error"] is not None:   # the twin's byte offsets and wording may differ
                row["_error"] = {k: row["_error"][k] for k in ("message_index", "partition", "offset")}
        results[impl] = table
    assert results["cython"] == results["python"]


# =========================================================================== state is all-or-nothing
def test_simple_bad_bootstrap_changes_no_state(impl):
    """A truncated BOOTSTRAP set aside leaves the schema cache as it was: the DML after it is held
    (not decoded with a schema the bad message half-announced) until a good BOOTSTRAP comes."""
    table = _simple_table()
    enc = SimpleEncoder("json")
    boot = enc.encode([SimpleBootstrap(table)])[0][1]
    dml = enc.encode([_simple_event(table, "INSERT", 1, 2, "a", None, make_tso(T0))])[0][1]
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl, on_error="skip")
    out = dec.decode(None, [boot[:-3], dml])
    assert out.num_rows == 0 and dec.held() == 1 and dec.stats.skipped == 1
    assert dec.table_schema("db", "t") is None
    out = dec.decode(None, [boot])
    assert [r["_op"] for r in out.to_pylist()] == ["BOOTSTRAP", "INSERT"]
    assert dec.held() == 0


def test_simple_held_message_that_fails_later_is_dead_lettered_with_its_position(impl):
    """A DML held for its schema in one batch, that cannot be converted when the schema comes in
    the next, is set aside then, with its own partition and offset; the batch's good rows stay."""
    table = _simple_table()
    enc = SimpleEncoder("json")
    boot = enc.encode([SimpleBootstrap(table)])[0][1]
    good = enc.encode([_simple_event(table, "INSERT", 1, 2, "a", None, make_tso(T0))])[0][1]
    bad = enc.encode([_simple_event(table, "INSERT", 2, TOO_BIG_FOR_INT16, "b", None, make_tso(T0 + 1))])[0][1]
    dec = ticdc_fast.SimpleDecoder("json", table="db.t", schema=TYPED, implementation=impl,
                                   on_error="dead_letter")
    first = dec.decode(None, [good, bad], partitions=[3, 3], offsets=[70, 71])
    assert first.num_rows == 0 and dec.held() == 2
    second = dec.decode(None, [boot], partitions=[3], offsets=[72])
    rows = second.to_pylist()
    assert [r["_op"] for r in rows] == ["ERROR", "BOOTSTRAP", "INSERT"]
    assert rows[0]["_raw_value"] == bad and (rows[0]["_partition"], rows[0]["_offset"]) == (3, 71)
    assert rows[0]["_error"]["column"] == "n" and rows[0]["_error"]["message_index"] is None
    assert rows[2]["id"] == 1 and (rows[2]["_partition"], rows[2]["_offset"]) == (3, 70)
    assert dec.held() == 0 and dec.stats.dead_lettered == 1


def test_simple_error_outside_the_policy_rolls_back_the_whole_call(impl):
    """An error no policy covers (the hold bound) undoes the whole call, also the stretches the
    policy already decoded: retrying the batch neither duplicates nor loses rows."""
    table = _simple_table()
    enc = SimpleEncoder("json")
    boot = enc.encode([SimpleBootstrap(table)])[0][1]
    dmls = [v for _, v in enc.encode([_simple_event(table, "INSERT", i, i, "x", None, make_tso(T0 + i))
                                      for i in range(1, 4)])]
    dec = ticdc_fast.SimpleDecoder("json", implementation=impl, on_error="skip", hold_max_rows=1)
    with pytest.raises(ticdc_fast.DecodeError, match="held waiting"):
        dec.decode(None, [dmls[0], b"{", dmls[1], dmls[2]])
    assert dec.held() == 0
    dec2 = ticdc_fast.SimpleDecoder("json", implementation=impl, on_error="skip")
    out = dec2.decode(None, [dmls[0], b"{", dmls[1], boot])
    assert [r["_op"] for r in out.to_pylist()] == ["BOOTSTRAP", "INSERT", "INSERT"]
    assert dec2.stats.skipped == 1


# =========================================================================== what always fails
def test_registry_down_is_never_skipped(impl):
    from ticdc_fast.testing import LocalSchemaRegistry
    columns = {("db", "t"): [AvroColumn("id", C.T_LONGLONG, PK)]}
    with LocalSchemaRegistry() as reg:
        url = reg.url
        enc = AvroEncoder(url, table_columns=columns)
        msgs = enc.encode([RowChange("db", "t", make_tso(T0), after=[Col("id", C.T_LONGLONG, 1, PK)])])
    # the registry is gone now
    for policy in ("skip", "dead_letter"):
        dec = ticdc_fast.AvroDecoder(url, implementation=impl, on_error=policy, registry_retries=0,
                                     registry_timeout=2)
        with pytest.raises(ticdc_fast.UnavailableError) as info:
            dec.decode([k for k, _ in msgs], [v for _, v in msgs], partitions=[0], offsets=[5])
        assert (info.value.partition, info.value.offset) == (0, 5)
        assert dec.stats.skipped == dec.stats.dead_lettered == 0


def test_unknown_schema_id_from_a_live_registry_is_a_message_error(impl):
    from ticdc_fast.testing import LocalSchemaRegistry
    columns = {("db", "t"): [AvroColumn("id", C.T_LONGLONG, PK)]}
    with LocalSchemaRegistry() as reg:
        enc = AvroEncoder(reg.url, table_columns=columns)
        k, v = enc.encode([RowChange("db", "t", make_tso(T0), after=[Col("id", C.T_LONGLONG, 1, PK)])])[0]
        bad = v[:1] + (4242).to_bytes(4, "big") + v[5:]
        dec = ticdc_fast.AvroDecoder(reg.url, implementation=impl, on_error="skip")
        out = dec.decode([k, k], [bad, v])
    assert [r["after"] for r in out.to_pylist()] == [[("id", "1")]]
    assert dec.stats.skipped == 1


def test_bad_option_values():
    for cls, args in ((ticdc_fast.OpenDecoder, ()), (ticdc_fast.SimpleDecoder, ("json",)),
                      (ticdc_fast.AvroDecoder, ())):
        with pytest.raises(ValueError, match="on_error"):
            cls(*args, on_error="ignore")


def test_key_value_count_mismatch_always_fails(impl):
    dec = ticdc_fast.OpenDecoder(implementation=impl, on_error="skip")
    with pytest.raises(ticdc_fast.DecodeError, match="keys but"):
        dec.decode([b"a"], [b"a", b"b"])


def test_every_message_bad_gives_an_empty_batch_of_the_schema(impl):
    dec = ticdc_fast.OpenDecoder(implementation=impl, on_error="skip")
    out = dec.decode([b"x", b"y"], [b"", b""], partitions=[0, 0], offsets=[1, 2])
    assert out.num_rows == 0 and out.schema == dec.output_schema(partitions=True, offsets=True)
    dl = ticdc_fast.OpenDecoder(implementation=impl, on_error="dead_letter")
    out = dl.decode([b"x", b"y"], [b"", b""], partitions=[0, 0], offsets=[1, 2])
    assert out.column("_op").to_pylist() == ["ERROR", "ERROR"]
    assert out.column("_raw_key").to_pylist() == [b"x", b"y"]
    assert out.schema == dl.output_schema(partitions=True, offsets=True)


def test_arrow_input_is_sliced_not_copied(impl):
    clean, poison, _, make = open_stream("tiflow")
    keys = pa.array([k for k, _ in clean] + [poison["truncated"][0]], pa.binary())
    values = pa.array([v for _, v in clean] + [poison["truncated"][1]], pa.binary())
    dec = make(impl, on_error="dead_letter")
    out = dec.decode(keys, values, partitions=pa.array([0] * len(keys), pa.int32()),
                     offsets=pa.array(range(len(keys)), pa.int64()))
    good, dead = split_dead_letters(out)
    assert dead.column("_offset").to_pylist() == [len(clean)]
    assert good.num_rows == make(impl).decode([k for k, _ in clean], [v for _, v in clean]).num_rows


def test_replaced_text_counts_once_when_a_stretch_is_decoded_again(impl):
    """The policy decodes the stretch before a bad message twice; its replaced text values count
    once, as in a clean decode of the same good messages."""
    enc = OpenEncoder("ticdc", max_batch_size=1)
    events = [RowChange("db", "t", make_tso(T0 + i), after=_open_cols(i, i, b"bad \xff text" if i % 2 else "ok"))
              for i in range(1, 9)]
    msgs = enc.encode(events)
    poisoned_msgs = msgs[:5] + [(msgs[0][0], b"\x00")] + msgs[5:]
    clean = ticdc_fast.OpenDecoder(implementation=impl)
    clean.decode([k for k, _ in msgs], [v for _, v in msgs])
    assert clean.stats.invalid_utf8_replaced == 4
    for policy in ("skip", "dead_letter"):
        dec = ticdc_fast.OpenDecoder(implementation=impl, on_error=policy)
        out = dec.decode([k for k, _ in poisoned_msgs], [v for _, v in poisoned_msgs])
        assert dec.stats.invalid_utf8_replaced == dec.invalid_utf8_replaced == 4
        names = [dict(r["after"])["name"] for r in out.to_pylist() if r["_op"] != "ERROR"]
        assert names.count("bad \ufffd text") == 4
