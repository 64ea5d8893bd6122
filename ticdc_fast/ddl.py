"""Spark DDL strings (``"id BIGINT NOT NULL, price DECIMAL(10,2), tags ARRAY<STRING>"``) as
pyarrow schemas, without a SparkSession: the Arrow schema pyspark gives the same ``StructType``
(``to_arrow_schema(..., timezone="UTC")``: TIMESTAMP an instant in UTC).

Grammar (Spark's, case-insensitive): columns ``name [:] TYPE [NOT NULL] [COMMENT '...']`` split by
commas; a name plain or back-quoted (```odd name```, a back quote doubled); types BOOLEAN, TINYINT
(BYTE), SMALLINT (SHORT), INT (INTEGER), BIGINT (LONG), FLOAT (REAL), DOUBLE, DECIMAL(p, s) (DEC,
NUMERIC; default (10, 0)), STRING, CHAR(n), VARCHAR(n), BINARY, DATE, TIMESTAMP (TIMESTAMP_LTZ),
TIMESTAMP_NTZ, ARRAY<T>, MAP<K, V>, STRUCT<name: T, ...>.  A fault is a ValueError naming the part.
"""
from __future__ import annotations

import re

import pyarrow as pa

_SIMPLE = {
    "boolean": pa.bool_(), "bool": pa.bool_(), "tinyint": pa.int8(), "byte": pa.int8(),
    "smallint": pa.int16(), "short": pa.int16(), "int": pa.int32(), "integer": pa.int32(),
    "bigint": pa.int64(), "long": pa.int64(), "float": pa.float32(), "real": pa.float32(),
    "double": pa.float64(), "string": pa.string(), "binary": pa.binary(), "date": pa.date32(),
    "timestamp": pa.timestamp("us", tz="UTC"), "timestamp_ltz": pa.timestamp("us", tz="UTC"),
    "timestamp_ntz": pa.timestamp("us"),
}
_TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|'(?:[^'\\]|\\.)*'|[A-Za-z_][A-Za-z0-9_$]*|\d+|[<>(),:])")


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text, self.items, pos = text, [], 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if m is None:
                raise ValueError(f"DDL {text!r}: cannot read {text[pos:].strip()[:20]!r}")
            self.items.append(m.group(1))
            pos = m.end()
        self.i = 0

    def peek(self) -> str | None:
        return self.items[self.i] if self.i < len(self.items) else None

    def take(self, what: str = "more") -> str:
        tok = self.peek()
        if tok is None:
            raise ValueError(f"DDL {self.text!r}: ends where {what} should come")
        self.i += 1
        return tok

    def expect(self, want: str) -> None:
        got = self.take(repr(want))
        if got.lower() != want.lower():
            raise ValueError(f"DDL {self.text!r}: {want!r} expected, not {got!r}")


def _name(tok: str) -> str:
    return tok[1:-1].replace("``", "`") if tok.startswith("`") else tok


def _type(t: _Tokens) -> pa.DataType:
    word = t.take("a type")
    low = word.lower()
    if low in ("decimal", "dec", "numeric"):
        p, s = 10, 0
        if t.peek() == "(":
            t.take()
            p = _int(t)
            if t.peek() == ",":
                t.take()
                s = _int(t)
            t.expect(")")
        if not 0 < p <= 38 or not 0 <= s <= p:
            raise ValueError(f"DDL {t.text!r}: DECIMAL({p}, {s}) is not a Spark decimal")
        return pa.decimal128(p, s)
    if low in ("char", "varchar"):
        t.expect("(")
        _int(t)
        t.expect(")")
        return pa.string()
    if low == "array":
        t.expect("<")
        item = _type(t)
        t.expect(">")
        return pa.list_(pa.field("element", item))
    if low == "map":
        t.expect("<")
        key = _type(t)
        t.expect(",")
        value = _type(t)
        t.expect(">")
        return pa.map_(key, value)
    if low == "struct":
        t.expect("<")
        fields = []
        while t.peek() != ">":
            fields.append(_field(t, colon=True))
            if t.peek() == ",":
                t.take()
        t.expect(">")
        return pa.struct(fields)
    if low in _SIMPLE:
        return _SIMPLE[low]
    raise ValueError(f"DDL {t.text!r}: unknown type {word!r}")


def _int(t: _Tokens) -> int:
    tok = t.take("a number")
    if not tok.isdigit():
        raise ValueError(f"DDL {t.text!r}: a number expected, not {tok!r}")
    return int(tok)


def _field(t: _Tokens, colon: bool = False) -> pa.Field:
    tok = t.take("a column name")
    if not (tok.startswith("`") or tok[0].isalpha() or tok[0] == "_"):
        raise ValueError(f"DDL {t.text!r}: a column name expected, not {tok!r}")
    if t.peek() == ":":
        t.take()
    if t.peek() is None:
        raise ValueError(f"DDL {t.text!r}: column {_name(tok)!r} has no type")
    typ = _type(t)
    nullable = True
    if (t.peek() or "").lower() == "not":
        t.take()
        t.expect("null")
        nullable = False
    if (t.peek() or "").lower() == "comment":
        t.take()
        if not t.take("a comment").startswith("'"):
            raise ValueError(f"DDL {t.text!r}: COMMENT needs a quoted string")
    return pa.field(_name(tok), typ, nullable=nullable)


def parse_ddl(text: str) -> pa.Schema:
    """The pyarrow schema of a Spark DDL column list (``"id BIGINT NOT NULL, name STRING"``)."""
    t = _Tokens(text)
    if len(t.items) > 1 and t.items[0].lower() == "struct" and t.items[1] == "<":
        typ = _type(t)                          # "STRUCT<id: BIGINT, ...>": the same columns
        if t.peek() is not None:
            raise ValueError(f"DDL {text!r}: cannot read {t.peek()!r} after the STRUCT")
        return pa.schema(list(typ))
    if t.items and (t.items[0].lower() in _SIMPLE and len(t.items) == 1
                    or t.items[0].lower() in ("array", "map") and t.items[1:2] == ["<"]):
        raise TypeError(f"the DDL string {text!r} is not a list of columns (it is a type)")
    fields = []
    while True:
        fields.append(_field(t))
        tok = t.peek()
        if tok is None:
            break
        if tok != ",":
            raise ValueError(f"DDL {text!r}: cannot read {tok!r} after column {fields[-1].name!r}")
        t.take()
    return pa.schema(fields)
