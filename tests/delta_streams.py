"""One changefeed of two tables in one topic of two partitions, written in every protocol, and the
state it leads to folded independently of the package (for the Delta sink's tests).

The history (commit ts in brackets; DDLs are broadcast to both partitions):
  db.t (id BIGINT primary key, name VARCHAR): INSERT 1, 2 [100]; UPDATE 1 [200]; key-changing
  UPDATE 2 -> 3 [300] (raw: one event with the old image; split: DELETE 2 + INSERT 3);
  ADD COLUMN note [400]; INSERT 4, UPDATE 1 with notes [450, 460]; replays at later offsets of
  INSERT 1 [100] and DELETE 2 [300]; DROP COLUMN note [600]; UPDATE 4 [650]; INSERT 9 [800]
  (after the last resolved ts of partition 1: it waits).
  db.u: INSERT 1 [110]; DELETE 1 [210]; INSERT 5 [250]; split key change 5 -> 6 [320]; replays
  of INSERT 1 [110] and DELETE 1 [210]; TRUNCATE [550]; INSERT 7 [560]; a replay of INSERT 6
  [320] after the TRUNCATE.
"""
from __future__ import annotations

from ticdc_fast.testing import (AvroColumn, AvroEncoder, OpenEncoder, SimpleBootstrap, SimpleColumn, SimpleDDL,
                                SimpleDML, SimpleEncoder, SimpleTable, SimpleWatermark)
from ticdc_fast.testing.open_encoder import DDL, Col, Resolved, RowChange

PROTOCOLS = ("open", "simple-json", "simple-avro", "avro")
TABLES = ("db.t", "db.u")
LAST_RESOLVED = 700          # the minimum over both partitions at the end
ADD_TS, TRUNCATE_TS, DROP_TS = 400, 550, 600


def row(part, table, op, ts, new=None, old=None):
    return ("row", part, table, op, ts, new, old)


def ddl(ts, table, sql):
    return [("ddl", p, table, sql, ts) for p in (0, 1)]


def resolved(ts, parts=(0, 1)):
    return [("resolved", p, ts) for p in parts]


def events(raw_key_change=True):
    """The neutral events, in Kafka order (each names its partition)."""
    t, u = "db.t", "db.u"
    moved = ([row(0, t, "UPDATE", 300, {"id": 3, "name": "b"}, {"id": 2, "name": "b"})] if raw_key_change
             else [row(0, t, "DELETE", 300, None, {"id": 2, "name": "b"}),
                   row(0, t, "INSERT", 300, {"id": 3, "name": "b"})])
    out = [row(0, t, "INSERT", 100, {"id": 1, "name": "a"}), row(0, t, "INSERT", 100, {"id": 2, "name": "b"}),
           row(1, u, "INSERT", 110, {"id": 1, "name": "x"}),
           row(0, t, "UPDATE", 200, {"id": 1, "name": "a2"}, {"id": 1, "name": "a"}),
           row(1, u, "DELETE", 210, None, {"id": 1, "name": "x"}),
           row(1, u, "INSERT", 250, {"id": 5, "name": "y"})]
    out += moved
    out += [row(1, u, "DELETE", 320, None, {"id": 5, "name": "y"}), row(1, u, "INSERT", 320, {"id": 6, "name": "y"})]
    out += resolved(350)
    out += ddl(ADD_TS, t, "ALTER TABLE t ADD COLUMN note VARCHAR(20)")
    out += [row(0, t, "INSERT", 450, {"id": 4, "name": "d", "note": "n4"}),
            row(0, t, "UPDATE", 460, {"id": 1, "name": "a3", "note": "n1"}, {"id": 1, "name": "a2", "note": None}),
            row(1, t, "INSERT", 100, {"id": 1, "name": "a"}),                            # replays
            row(1, t, "DELETE", 300, None, {"id": 2, "name": "b"}),
            row(1, u, "INSERT", 110, {"id": 1, "name": "x"}), row(1, u, "DELETE", 210, None, {"id": 1, "name": "x"})]
    out += resolved(500)
    out += ddl(TRUNCATE_TS, u, "TRUNCATE TABLE u")
    out += [row(1, u, "INSERT", 560, {"id": 7, "name": "z"}), row(0, u, "INSERT", 320, {"id": 6, "name": "y"})]
    out += ddl(DROP_TS, t, "ALTER TABLE t DROP COLUMN note")
    out += [row(0, t, "UPDATE", 650, {"id": 4, "name": "d2"}, {"id": 4, "name": "d"})]
    out += resolved(LAST_RESOLVED)
    out += [row(0, t, "INSERT", 800, {"id": 9, "name": "w"})]
    out += resolved(900, parts=(0,))
    return out


# ---------------------------------------------------------------------- the independent fold
def expected_state(evs, upto=LAST_RESOLVED) -> dict:
    """``{table: {id: {"id", "name", "note"}}}``: per key the newest change by (commit ts, DELETE
    first), changes above ``upto`` left out, a key-changing UPDATE deleting its old key, and a
    TRUNCATE dropping the table's changes below it."""
    changes = {tb: [] for tb in TABLES}
    truncated = {tb: -1 for tb in TABLES}
    for n, ev in enumerate(evs):
        if ev[0] == "ddl" and ev[3].startswith("TRUNCATE") and ev[4] <= upto:
            truncated[ev[2]] = max(truncated[ev[2]], ev[4])
        if ev[0] != "row" or ev[4] > upto:
            continue
        _, _, table, op, ts, new, old = ev
        if op == "UPDATE" and old["id"] != new["id"]:
            changes[table].append((ts, 0, n, old["id"], None))
        image = new if op != "DELETE" else None
        changes[table].append((ts, 0 if op == "DELETE" else 1, n, (new or old)["id"], image))
    state = {}
    for table, rows in changes.items():
        newest = {}
        for ts, _, _, key, image in sorted(rows):
            if ts >= truncated[table]:
                newest[key] = image
        state[table] = {k: {"id": k, "name": v["name"], "note": v.get("note")}
                        for k, v in newest.items() if v is not None}
    return state


# ---------------------------------------------------------------------- encoders
def _open_cols(image):
    if image is None:
        return None
    cols = [Col("id", 8, image["id"], 11), Col("name", 15, image["name"], 64)]
    if "note" in image:
        cols.append(Col("note", 15, image["note"], 64))
    return cols


def encode_open(evs):
    """[(key, value, partition)] one message per event."""
    out = []
    for ev in evs:
        if ev[0] == "row":
            _, p, table, op, ts, new, old = ev
            db, name = table.split(".")
            e = RowChange(db, name, ts, after=_open_cols(new), before=_open_cols(old))
        elif ev[0] == "ddl":
            _, p, table, sql, ts = ev
            db, name = table.split(".")
            e = DDL(db, name, ts, sql, 11 if sql.startswith("TRUNCATE") else 5)
        else:
            _, p, ts = ev
            e = Resolved(ts)
        (k, v), = OpenEncoder(max_batch_size=1).encode([e])
        out.append((k, v, p))
    return out


def _simple_tables():
    cols = [SimpleColumn("id", "bigint", nullable=False), SimpleColumn("name", "varchar", length=20)]
    note = SimpleColumn("note", "varchar", length=20)
    versions = {}
    for table, tid in (("t", 60), ("u", 61)):
        v1 = SimpleTable("db", table, tid, 10, list(cols))
        versions[f"db.{table}"] = [(0, v1)]
    t1 = versions["db.t"][0][1]
    versions["db.t"] += [(ADD_TS, SimpleTable("db", "t", 60, ADD_TS, cols + [note])),
                         (DROP_TS, SimpleTable("db", "t", 60, DROP_TS, list(cols)))]
    versions["db.u"] += [(TRUNCATE_TS, SimpleTable("db", "u", 62, TRUNCATE_TS, list(cols)))]
    return versions, t1


def _version_at(versions, ts):
    return [v for start, v in versions if start <= ts][-1]


def encode_simple(evs, encoding):
    versions, _ = _simple_tables()
    enc = SimpleEncoder(encoding)
    out = []
    for p in (0, 1):
        for table in TABLES:
            (_, v), = enc.encode([SimpleBootstrap(versions[table][0][1])])
            out.append((None, v, p))
    for ev in evs:
        if ev[0] == "row":
            _, p, table, op, ts, new, old = ev
            e = SimpleDML(_version_at(versions[table], ts), op, ts, data=new, old=old)
        elif ev[0] == "ddl":
            _, p, table, sql, ts = ev
            kind = "TRUNCATE" if sql.startswith("TRUNCATE") else "ALTER"
            e = SimpleDDL(kind, sql, ts, _version_at(versions[table], ts), _version_at(versions[table], ts - 1))
        else:
            _, p, ts = ev
            e = SimpleWatermark(ts)
        (_, v), = enc.encode([e])
        out.append((None, v, p))
    return out


def _avro_columns(with_note):
    cols = [AvroColumn("id", 8, 11), AvroColumn("name", 15, 64)]
    return cols + [AvroColumn("note", 15, 64)] if with_note else cols


def encode_avro(evs, registry_url):
    """Avro protocol (TiCDC flavour, TiDB extension and watermarks: DDL, checkpoints and DELETE
    commit ts travel too); it carries no old image, so key changes come split."""
    columns = {("db", "t"): _avro_columns(False), ("db", "u"): _avro_columns(False)}
    enc = AvroEncoder(registry_url, flavor="ticdc", enable_watermark=True, table_columns=columns, topic="tidb")
    out = []
    for ev in evs:
        if ev[0] == "row":
            _, p, table, op, ts, new, old = ev
            db, name = table.split(".")
            columns[(db, name)] = _avro_columns(ADD_TS <= ts < DROP_TS and table == "db.t")
            e = RowChange(db, name, ts, after=_open_cols(new), before=_open_cols(old) if op == "DELETE" else None)
        elif ev[0] == "ddl":
            _, p, table, sql, ts = ev
            db, name = table.split(".")
            e = DDL(db, name, ts, sql, 11 if sql.startswith("TRUNCATE") else 5)
        else:
            _, p, ts = ev
            e = Resolved(ts)
        (k, v), = enc.encode([e])
        out.append((k, v, p))
    return out


def encode(protocol, evs, registry_url=None):
    if protocol == "open":
        return encode_open(evs)
    if protocol.startswith("simple"):
        return encode_simple(evs, protocol.split("-")[1])
    return encode_avro(evs, registry_url)


def with_offsets(messages):
    """[(key, value, partition, offset)]: offsets counted per partition."""
    nxt = {}
    out = []
    for k, v, p in messages:
        out.append((k, v, p, nxt.get(p, 0)))
        nxt[p] = nxt.get(p, 0) + 1
    return out
