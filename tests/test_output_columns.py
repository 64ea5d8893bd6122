"""Every protocol's output columns come from one place, ``ticdc_fast.columns``: the core's plans
build their column sets from it and give the same names, order and Arrow types as the schemas
the front ends build from it; the batches both implementations return have that schema."""
from __future__ import annotations

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _constants as C
from ticdc_fast import _impl, columns
from ticdc_fast.testing import (AvroEncoder, SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder, SimpleTable,
                                make_tso, realistic_avro_changefeed)

from conftest import frame, row_event

TABLE_SCHEMA = pa.schema([pa.field("id", pa.int64(), metadata={b"tidb_type_code": b"8"}),
                          ("n", pa.uint32()), ("name", pa.string())])
MODES = [(False, False), (True, False), (True, True)]
MODE_IDS = ["generic", "typed", "typed-old-image"]


def _decoder(protocol: str, impl: str, typed: bool, old_image: bool, **kw):
    if typed:
        kw.update(table="db.t", schema=TABLE_SCHEMA, old_image=old_image)
    if protocol == "open":
        return ticdc_fast.OpenDecoder(implementation=impl, **kw)
    if protocol in ("simple-json", "simple-avro"):
        return ticdc_fast.SimpleDecoder(protocol.split("-")[1], implementation=impl, **kw)
    return ticdc_fast.AvroDecoder(schemas=kw.pop("schemas", {}), implementation=impl, **kw)


def _expected(protocol: str, dec, typed: bool, old_image: bool) -> list:
    targets = dec.config.targets if typed else None
    return columns.output_fields(protocol.split("-")[0], targets, old_image=old_image,
                                 table_schema=TABLE_SCHEMA if protocol == "open" else None)


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: the core's plans")
@pytest.mark.parametrize("typed,old_image", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("protocol", ["open", "simple-json", "simple-avro", "avro"])
def test_the_core_builds_the_declared_columns(protocol, typed, old_image):
    dec = _decoder(protocol, "cython", typed, old_image)
    plan = dec._core_plan if protocol == "open" else dec._rows
    expected = _expected(protocol, dec, typed, old_image)
    assert plan.output_columns == [(f.name, f.type) for f in expected]
    assert dec.output_schema().equals(pa.schema(expected), check_metadata=True)


@pytest.mark.parametrize("typed,old_image", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("protocol", ["open", "simple-json", "avro"])
def test_decoded_batches_have_the_declared_schema(impl, protocol, typed, old_image):
    if protocol == "open":
        dec = _decoder(protocol, impl, typed, old_image)
        keys, values = zip(frame([row_event({"id": {"t": 8, "v": 1}, "n": {"t": 3, "f": 32, "v": 7},
                                              "name": {"t": 15, "v": "ç"}}, ts=5)]))
        expected_rows = 1
    elif protocol == "simple-json":
        dec = _decoder(protocol, impl, typed, old_image)
        table = SimpleTable("db", "t", 50, make_tso(1), [
            SimpleColumn("id", "bigint", nullable=False), SimpleColumn("n", "int", unsigned=True),
            SimpleColumn("name", "varchar", length=20)])
        events = [SimpleBootstrap(table), SimpleDML(table, "INSERT", make_tso(5), data={"id": 1, "n": 7, "name": "ç"})]
        keys, values = None, [v for _, v in SimpleEncoder("json").encode(events)]
        expected_rows = 2     # the bootstrap's control row, then the insert
    else:
        events, tc = realistic_avro_changefeed(6, seed=3)
        enc = AvroEncoder(table_columns=tc, enable_watermark=True)
        msgs = enc.encode(events)
        schemas = {sid: text for _, sid, text in enc.registered}
        schema = pa.schema([("id", pa.int64())])
        kw = dict(table="shop.orders", schema=schema, old_image=old_image) if typed else {}
        dec = ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl, **kw)
        keys, values = [k for k, _ in msgs], [v for _, v in msgs]
        expected_rows = None
    batch = dec.decode(keys, values, offsets=list(range(len(values))))
    targets = dec.config.targets if typed else None
    expected = columns.output_fields(protocol.split("-")[0], targets, old_image=old_image,
                                     table_schema=TABLE_SCHEMA if protocol == "open" else None)
    assert batch.schema.equals(pa.schema(expected + [pa.field(C.COL_OFFSET, pa.int64())]), check_metadata=True)
    assert batch.validate(full=True) is None
    if expected_rows is not None:
        assert batch.num_rows == expected_rows
    else:
        assert batch.num_rows > 6
    if typed and protocol != "avro":
        assert batch.column("id").to_pylist()[-1] == 1 and batch.column("name").to_pylist()[-1] == "ç"


def test_layouts_agree_with_one_another():
    fixed = [C.COL_OP, C.COL_COMMIT_TS, C.COL_HANDLE_KEY_ONLY, C.COL_DDL, C.COL_CLAIM_CHECK]
    for (protocol, typed), lay in columns.LAYOUTS.items():
        every = lay.head + lay.tail + lay.unused
        names = [c.name for c in every]
        assert len(names) == len(set(names)), (protocol, typed)
        # the columns the core's row writers fill in every protocol (and, generic, the images)
        assert set(fixed) <= set(names), (protocol, typed)
        if not typed:
            assert {C.COL_SCHEMA, C.COL_TABLE, C.COL_AFTER, C.COL_BEFORE} <= set(names)
            assert not lay.tail
        # typed output keeps the generic columns' types
        generic = {c.name: c for c in columns.layout(protocol, False).head}
        for c in every:
            if c.name in generic:
                assert (c.type, c.nullable) == (generic[c.name].type, generic[c.name].nullable), (protocol, c.name)
    assert [f.name for f in columns.output_fields("open", None)] == [
        "_op", "_commit_ts", "_schema", "_table", "_ddl", "after", "before", "_ddl_type", "_row_id",
        "_physical_table_id", "_handle_key_only", "_claim_check_location", "_before_incomplete"]
