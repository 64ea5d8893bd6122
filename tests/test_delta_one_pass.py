"""The open protocol's Delta sync in one pass (``sync(tables=None)``, what ``ticdc-fast sync``
runs): the tables and their columns are learned by the typed decode itself, and the Delta
tables end exactly as after ``discover`` + ``sync`` (two decodes), whatever the chunking."""
from __future__ import annotations

import pytest
from deltalake import DeltaTable

import delta_streams as S
from ticdc_fast.delta_sync import OpenTables, discover, partitions_of, sync


def _chunks(msgs, n):
    for i in range(0, len(msgs), n):
        part = msgs[i:i + n]
        yield [m[0] for m in part], [m[1] for m in part], [m[2] for m in part], [m[3] for m in part]


def _rows(root, table):
    dt = DeltaTable(f"{root}/{table.replace('.', '/')}")
    rows = dt.to_pyarrow_table().to_pylist()
    return sorted(rows, key=lambda r: sorted((k, str(v)) for k, v in r.items()))


def _two_passes(msgs, root, chunk, **kw):
    tables, parts = discover("open", _chunks(msgs, chunk), kw.get("decoder_options"))
    return sync("open", _chunks(msgs, chunk), root, tables=tables, partitions=parts, topic="tidb", **kw)


def _one_pass(msgs, root, chunk, **kw):
    parts = partitions_of(_chunks(msgs, chunk))
    return sync("open", _chunks(msgs, chunk), root, tables=None, partitions=parts, topic="tidb", **kw)


@pytest.mark.parametrize("chunk", [3, 7, 1000])
@pytest.mark.parametrize("schema_change", ["evolve", "ignore"])
def test_one_pass_equals_two_passes(tmp_path, impl, chunk, schema_change):
    msgs = S.with_offsets(S.encode_open(S.events()))
    kw = dict(schema_change=schema_change, decoder_options={"implementation": impl})
    two = _two_passes(msgs, str(tmp_path / "two"), chunk, **kw)
    one = _one_pass(msgs, str(tmp_path / "one"), chunk, **kw)
    assert (one.rows_applied, one.resolved_ts, one.waiting) == (two.rows_applied, two.resolved_ts, two.waiting)
    for table in S.TABLES:
        assert _rows(tmp_path / "one", table) == _rows(tmp_path / "two", table), table
    if schema_change == "evolve":
        live = {r["id"]: r for r in _rows(tmp_path / "one", "db.t") if not r["_deleted"]}
        assert {k: {c: live[k][c] for c in ("id", "name", "note")} for k in live} == S.expected_state(S.events())["db.t"]


def test_learned_once_and_decoded_again_only_when_taught(impl):
    """The learner decodes a piece again only when it met a new table or new columns."""
    msgs = S.with_offsets(S.encode_open(S.events()))
    learner = OpenTables({"implementation": impl})
    pieces = 0
    for k, v, p, o in _chunks(msgs, 3):
        learner.decode(k, v, p, o)
        pieces += 1
    assert set(learner.tables) == set(S.TABLES)
    assert "note" in learner.tables["db.t"].schema.names
    assert "note" not in learner.tables["db.t"].first.names
    assert learner.tables["db.t"].keys == ["id"]
    # a new table in the first pieces, the ADD COLUMN later: a few pieces, not every one
    assert 2 <= learner.redecoded < pieces // 2


def test_only_one_table_and_one_that_never_comes(tmp_path, impl):
    msgs = S.with_offsets(S.encode_open(S.events()))
    kw = dict(decoder_options={"implementation": impl})
    _one_pass(msgs, str(tmp_path / "lake"), 5, only="db.t", **kw)
    assert not (tmp_path / "lake" / "db" / "u").exists()
    with pytest.raises(ValueError, match="db.nope has no change"):
        _one_pass(msgs, str(tmp_path / "none"), 5, only="db.nope", **kw)
