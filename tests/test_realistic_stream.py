"""``ticdc_fast.testing.realistic_stream``: three tables in one topic with the value distributions
of the realistic benchmark corpora, decodable by every protocol's decoder."""
from __future__ import annotations

import struct

import pyarrow as pa
import pyarrow.compute as pc
import pytest

import ticdc_fast
from ticdc_fast.testing import mix_columns, realistic_stream

DML = pa.array(["INSERT", "UPDATE", "DELETE"])


def _decode(stream, impl):
    if stream.protocol == "open":
        return ticdc_fast.OpenDecoder(implementation=impl).decode(stream.keys, stream.values)
    if stream.protocol == "avro":
        return ticdc_fast.AvroDecoder(schemas=stream.schemas, implementation=impl).decode(stream.keys, stream.values)
    return ticdc_fast.SimpleDecoder(stream.protocol.split("-")[1], implementation=impl).decode(None, stream.values)


@pytest.mark.parametrize("protocol", ["open", "simple-json", "simple-avro", "avro"])
def test_three_tables_interleaved_with_realistic_values(protocol, impl):
    stream = realistic_stream(protocol, 1200, seed=3)
    assert stream.rows == 1200
    assert stream.tables == {"shop.events": "realistic5", "shop.orders": "orders10", "shop.wide": "wide100"}
    batch = _decode(stream, impl)
    dml = batch.filter(pc.is_in(batch.column("_op"), DML))
    assert dml.num_rows == 1200
    tables = dml.column("_table").to_pylist()
    counts = {t: tables.count(t) for t in ("events", "orders", "wide")}
    assert counts == {"events": 600, "orders": 480, "wide": 120}
    # interleaved: the tables alternate all along the stream, not one after the other
    assert sum(a != b for a, b in zip(tables, tables[1:])) > 200       # ~480 transactions
    assert tables[-120:].count("wide") > 0 and tables[:120].count("wide") > 0

    want = {name for name, _ in mix_columns("wide100")}
    after = dml.column("after").to_pylist()
    before = dml.column("before").to_pylist()
    # full images only: the Avro protocol's DELETE carries the key columns alone
    images, tables = zip(*[(dict(a or b), t) for a, b, t in zip(after, before, tables) if len(a or b) > 1])
    wide = [img for img, t in zip(images, tables) if t == "wide"]
    assert set(wide[0]) == want
    values = [v for img in images for k, v in img.items() if k != "id"]
    nulls = sum(v is None for v in values) / len(values)
    assert 0.07 < nulls < 0.13, nulls                              # about 10% NULLs
    events = [img for img, t in zip(images, tables) if t == "events"]
    texts = [img["c01_varchar_intl"] for img in events if img["c01_varchar_intl"] is not None]
    assert any(ord(ch) > 0xFFFF for s in texts for ch in s)        # emoji (outside the BMP)
    assert any("\u4e00" <= ch <= "\u9fff" for s in texts for ch in s)   # CJK
    doubles = [float(img["c02_double_full"]) for img in events if img["c02_double_full"] is not None]
    assert sum(len(repr(d).replace(".", "").lstrip("0")) >= 15 for d in doubles) > len(doubles) // 2
    stamps = [img["c03_timestamp3"] for img in events if img["c03_timestamp3"] is not None]
    assert stamps and all(s[19] == "." and s[20:23].isdigit() for s in stamps)   # TIMESTAMP(3)
    orders = [img for img, t in zip(images, tables) if t == "orders"]
    floats = [img["c04_float_full"] for img in orders if img["c04_float_full"] is not None]
    # float32 values given as their shortest float32 text: about 7 significant digits, not 2 decimals
    assert sum(len(f.replace(".", "").lstrip("0")) >= 6 for f in floats) > len(floats) // 2
    assert all(struct.unpack("<f", struct.pack("<f", float(f)))[0] == pytest.approx(float(f), rel=1e-7)
               for f in floats)


def test_the_same_seed_gives_the_same_bytes():
    a, b = realistic_stream("open", 300, seed=9), realistic_stream("open", 300, seed=9)
    assert a.messages == b.messages
    assert realistic_stream("open", 300, seed=10).messages != a.messages


# Digests of 300 row changes of every benchmark mix as the corpus code made them before it moved
# from benchmarks/asv_corpora.py to ticdc_fast.testing.realistic: a change here breaks the
# comparability of the benchmark history (add a mix or a kind instead).
CORPUS_DIGESTS = {
    "mixed10": "e4f83c6fed8b805bb675b201", "wide50": "d031507c9250abc77a5d9d43",
    "strings": "b7b9e3ddefdacbb7395f20f1", "numeric": "53975e1472fc90b2475ca179",
    "realistic5": "0bff3ffb31dd0339c4c350ca", "wide100": "3531c8ee27e5a4199012cf5f",
}


@pytest.mark.parametrize("mix", sorted(CORPUS_DIGESTS))
def test_benchmark_mixes_keep_their_bytes(mix):
    import hashlib

    from ticdc_fast.testing import OpenEncoder, SimpleEncoder
    from ticdc_fast.testing import realistic as R

    changes = R.change_stream(mix, 300)
    digest = hashlib.sha256()
    for key, value in OpenEncoder("tiflow").encode(R.open_events(mix, changes)):
        digest.update(key)
        digest.update(value)
    tables = {t: R.simple_table(mix, t) for t in R.mix_tables(mix)}
    for _, value in SimpleEncoder("json").encode(R.simple_events(mix, tables, changes)):
        digest.update(value)
    assert digest.hexdigest()[:24] == CORPUS_DIGESTS[mix]
