"""Simple protocol, ``tables={...}``: the table each message is about, from the few members that
name it, so that each message is decoded once, by its table's decoder (``ticdc_fast.tables``).

A DML names its table in ``database``/``table`` (JSON: top-level members; Avro: the DML record's
leading fields); a BOOTSTRAP or DDL belongs to the table the single-table decoder gives its row
to (``database``/``table`` of its ``tableSchema``, else of its ``preTableSchema``); a WATERMARK
belongs to every table.  A control message of no table is one of the tables not listed.  A
message whose table cannot be read (null, not decompressible, malformed) goes to every table's
decoder, which reports it exactly as the single-table decoders do.

The core reads DML names in place (``_core.simple_routes``) and leaves the rest to
``route_one``, which is the whole router of the pure-Python twin (its JSON reading is the
front end's parse, orjson with the standard-library fallback: the same documents as the core's
scanner, and it needs no scan of its own)."""
from __future__ import annotations

import numpy as np
import orjson

from .. import _impl
from .._avro_binary import AvroError, Reader
from .._frontend import as_binary_chunk, is_binary_array
from .._json_fallback import stdlib_loads
from ..compression import decompress
from ..errors import DecodeError
from ..tables import ROUTE_ALL, ROUTE_UNLISTED, split_table
from .messages import AVRO_MESSAGE_BRANCH, DML_TYPES, parse_avro_message
from .schema import TableSchemaError, table_schema_from_dict

ROUTE_ASK = -3    # the core's answer for what route_one decides
_DML = 3          # Message.type / payload branch of a DML
_WATERMARK = 0


class SimpleRouter:
    """``route(keys, values)`` → each message's route (``ticdc_fast.tables.TableRouter``)."""

    def __init__(self, tables, encoding: str, compression: str, max_message_bytes: int,
                 implementation: str):
        self._index = {split_table(t): k for k, t in enumerate(tables)}
        self._names = [(db.encode(), tb.encode()) for db, tb in self._index]
        self._avro = encoding == "avro"
        self._compression = compression
        self._max_message_bytes = max_message_bytes
        self._core = _impl.core if implementation == "cython" else None

    def __call__(self, keys, values) -> np.ndarray:
        if self._compression != "none":
            values = [self._decompressed(v) for v in _as_list(values)]
        if self._core is None:
            return np.fromiter((self.route_one(v) for v in _as_list(values)), np.int32, len(values))
        if is_binary_array(values):
            values = as_binary_chunk(values)
        elif not isinstance(values, list):
            values = _as_list(values)
        codes = np.frombuffer(self._core.simple_routes(values, self._names, self._avro), np.int32).copy()
        for i in np.flatnonzero(codes == ROUTE_ASK).tolist():
            v = values[i]
            codes[i] = self.route_one(v.as_py() if hasattr(v, "as_py") else v)
        return codes

    def _decompressed(self, v):
        if v is None:
            return None
        try:
            return decompress(bytes(v), self._compression, self._max_message_bytes)
        except ValueError:
            return None      # the table's decoder reports it

    # ------------------------------------------------------------------ one message
    def route_one(self, value) -> int:
        if value is None:
            return ROUTE_ALL
        value = bytes(value)
        return self._avro_route(value) if self._avro else self._json_route(value)

    def _table(self, database, table, table_schema=None, pre_table_schema=None, dml=False) -> int:
        # as SimpleDecoder._control names a control row's table: the message's own names, else
        # those of the schema it announces last (tableSchema, else preTableSchema)
        announced = table_schema if table_schema is not None else pre_table_schema
        if announced is not None and not dml:
            try:
                ts = table_schema_from_dict(announced)
            except TableSchemaError:
                return ROUTE_ALL
            database, table = database or ts.database, table or ts.table
        if isinstance(database, str) and isinstance(table, str):
            return self._index.get((database, table), ROUTE_UNLISTED)
        if database is None and table is None and not dml:
            return ROUTE_UNLISTED       # a control message of no table
        return ROUTE_ALL

    def _json_route(self, value: bytes) -> int:
        try:
            doc = orjson.loads(value)
        except orjson.JSONDecodeError as exc:
            # as the decoder reads a document (messages._fallback_json): the standard parser
            # only for numbers beyond the double range; anything else orjson refuses is refused
            # there too, at once, by every table's decoder
            if "infinity" not in exc.msg:
                return ROUTE_ALL
            try:
                doc = stdlib_loads(value.decode("utf-8"), parse_constant=_no_constant)
            except ValueError:       # UnicodeDecodeError included
                return ROUTE_ALL
        if type(doc) is not dict:
            return ROUTE_ALL
        kind = doc.get("type")
        if kind == "WATERMARK":
            return ROUTE_ALL
        dml = kind in DML_TYPES or doc.get("data") is not None or doc.get("old") is not None
        return self._table(doc.get("database"), doc.get("table"), doc.get("tableSchema"),
                           doc.get("preTableSchema"), dml)

    def _avro_route(self, value: bytes) -> int:
        if not value or value[0] != 2 * AVRO_MESSAGE_BRANCH:
            return ROUTE_ALL
        r = Reader(value, 1)
        try:
            kind, branch = r.long(), r.long()
            if kind == _DML and branch == _DML:
                r.long()                                       # version
                database, table = r.raw().decode("utf-8"), r.raw().decode("utf-8")
                return self._index.get((database, table), ROUTE_UNLISTED)
        except (AvroError, UnicodeDecodeError):
            return ROUTE_ALL
        if kind == _WATERMARK or kind != branch:
            return ROUTE_ALL
        try:
            m = parse_avro_message(value, 0)
        except DecodeError:
            return ROUTE_ALL
        return self._table(m.database, m.table, m.table_schema, m.pre_table_schema)


def _no_constant(name):
    raise ValueError(f"invalid JSON literal {name}")


def _as_list(values) -> list:
    if hasattr(values, "to_pylist"):
        return values.to_pylist()
    return list(values)
