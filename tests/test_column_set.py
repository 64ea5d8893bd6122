"""The core's column set rolls back to a savepoint: a message that fails halfway through its row
(some columns written, then a value error) leaves no partial row in any column, flat, map or
typed, so the plan's builders stay aligned for the rows that follow.  Core-only: the twin has
no builders."""
from __future__ import annotations

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import DecodeError, _impl
from ticdc_fast.testing import SimpleBootstrap, SimpleColumn, SimpleDML, SimpleEncoder, SimpleTable, make_tso

pytestmark = pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: the core's builders")

T0 = 1_714_521_600_000
TABLE = SimpleTable("db", "t", 50, make_tso(T0 - 10_000), [
    SimpleColumn("id", "bigint", nullable=False), SimpleColumn("n", "int", unsigned=True),
    SimpleColumn("name", "varchar", length=20)])


def _messages(rows):
    events = [SimpleBootstrap(TABLE)] + [SimpleDML(TABLE, "INSERT", make_tso(T0 + k), data=row)
                                         for k, row in enumerate(rows)]
    return [v for _, v in SimpleEncoder("json").encode(events)]


@pytest.mark.parametrize("typed,old_image", [(False, False), (True, False), (True, True)],
                         ids=["generic", "typed", "typed-old-image"])
def test_a_failed_message_leaves_no_partial_row(typed, old_image):
    kw = dict(table="db.t", schema=pa.schema([("id", pa.int64()), ("n", pa.uint32()), ("name", pa.string())]),
              old_image=old_image) if typed else {}
    dec = ticdc_fast.SimpleDecoder("json", implementation="cython", **kw)
    boot, good, bad, last = _messages([{"id": 1, "n": 7, "name": "a"}, {"id": 2, "n": 1 << 40, "name": "b"},
                                       {"id": 3, "n": None, "name": "ç"}])
    dec.decode(None, [boot])               # registers the table's schema
    rows = dec._rows
    with pytest.raises(DecodeError) as err:
        rows.run([good, bad], 0)           # `id` of the bad row is written before `n` fails
    assert err.value.message_index == 1 and err.value.column == "n"
    assert rows.run([last], 0, 2) == 1
    cols, msg = rows.finish(dec._fields)
    assert msg.to_pylist() == [0, 2]
    assert {len(c) for c in cols} == {2}
    batch = pa.RecordBatch.from_arrays(cols, schema=pa.schema(dec._fields))
    assert batch.validate(full=True) is None
    if typed:
        assert batch.column("id").to_pylist() == [1, 3]
        assert batch.column("n").to_pylist() == [7, None]
        assert batch.column("name").to_pylist() == ["a", "ç"]
        if old_image:
            assert batch.column("_before").to_pylist() == [None, None]
    else:
        assert [dict(m) for m in batch.column("after").to_pylist()] == [
            {"id": "1", "n": "7", "name": "a"}, {"id": "3", "n": None, "name": "ç"}]
