"""Arrow types: the default type of every TiDB column type, the Spark-accepted variant, the
typed-output target plan, and schema inference from sample open-protocol messages."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import pyarrow as pa

from . import _constants as C
from .columns import old_image_field

_INT_DEFAULTS = {  # type code -> (signed, unsigned)
    C.T_TINY: (pa.int8(), pa.uint8()),
    C.T_SHORT: (pa.int16(), pa.uint16()),
    C.T_INT24: (pa.int32(), pa.uint32()),
    C.T_LONG: (pa.int32(), pa.uint32()),
    C.T_LONGLONG: (pa.int64(), pa.uint64()),
}

# Spark's Arrow path rejects unsigned integers: widen, and carry uint64 as decimal(20,0).
_SPARK_UNSIGNED = {
    pa.uint8(): pa.int16(), pa.uint16(): pa.int32(), pa.uint32(): pa.int64(),
    pa.uint64(): pa.decimal128(20, 0),
}


def default_arrow_type(type_code: int, flags: int = 0, scale: int | None = None) -> pa.DataType:
    """The Arrow type a column of MySQL type ``type_code`` with TiCDC ``flags`` decodes to by
    default (exact for every value TiDB can hold).  ``scale`` is the DECIMAL scale."""
    kind = C.TYPE_KIND.get(type_code)
    if kind is None:
        raise ValueError(f"unknown MySQL type code {type_code}")
    unsigned = bool(flags & C.FLAG_UNSIGNED)
    binary = bool(flags & C.FLAG_BINARY)
    if type_code in _INT_DEFAULTS:
        return _INT_DEFAULTS[type_code][unsigned]
    if type_code == C.T_YEAR:
        return pa.int16()
    if type_code in (C.T_BIT, C.T_SET):
        return pa.uint64()
    if type_code == C.T_ENUM:
        return pa.uint16()
    if kind == C.K_FLOAT32:
        return pa.float32()
    if kind == C.K_FLOAT64:
        return pa.float64()
    if kind == C.K_DECIMAL:
        return pa.decimal256(65, scale or 0)
    if kind == C.K_DATE:
        return pa.date32()
    if kind == C.K_DATETIME:
        return pa.timestamp("us")
    if kind == C.K_TIMESTAMP:
        return pa.timestamp("us", tz="UTC")
    if kind == C.K_TIME:
        return pa.duration("us")
    if kind in (C.K_TEXT, C.K_BLOB):
        return pa.binary() if binary else pa.string()
    if kind == C.K_JSONDOC:
        return pa.string()
    return pa.string()  # JSON/VECTOR text, and type NULL (only ever null values)


def spark_arrow_type(t: pa.DataType) -> pa.DataType:
    """The nearest type Spark's Arrow path accepts that still holds every value exactly."""
    if t in _SPARK_UNSIGNED:
        return _SPARK_UNSIGNED[t]
    if pa.types.is_decimal(t) and t.precision > 38:
        return pa.decimal128(38, t.scale) if t.scale <= 38 else pa.string()
    if pa.types.is_duration(t) or pa.types.is_time(t):
        return pa.string()
    if pa.types.is_timestamp(t) and t.unit != "us":
        return pa.timestamp("us", tz=t.tz)
    if pa.types.is_null(t):
        return pa.string()
    if pa.types.is_struct(t):   # the typed old image (`_before`)
        return pa.struct([t.field(i).with_type(spark_arrow_type(t.field(i).type)) for i in range(t.num_fields)])
    return t


def spark_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every field replaced by its Spark-accepted variant (see ``spark_arrow_type``)."""
    return pa.schema([f.with_type(spark_arrow_type(f.type)) for f in schema], metadata=schema.metadata)


# ------------------------------------------------------------------ typed-output plan
@dataclass(frozen=True)
class Target:
    name: str
    writer: int
    precision: int = 0
    scale: int = 0
    arrow_type: pa.DataType | None = None


def _writer_for(t: pa.DataType) -> Target | None:
    simple = {
        pa.bool_(): C.W_BOOL, pa.int8(): C.W_INT8, pa.int16(): C.W_INT16, pa.int32(): C.W_INT32,
        pa.int64(): C.W_INT64, pa.uint8(): C.W_UINT8, pa.uint16(): C.W_UINT16,
        pa.uint32(): C.W_UINT32, pa.uint64(): C.W_UINT64, pa.float32(): C.W_FLOAT32,
        pa.float64(): C.W_FLOAT64, pa.date32(): C.W_DATE32, pa.string(): C.W_STRING,
        pa.binary(): C.W_BINARY, pa.duration("us"): C.W_DURATION,
    }
    if t in simple:
        return Target("", simple[t], arrow_type=t)
    if pa.types.is_decimal128(t):
        return Target("", C.W_DECIMAL128, t.precision, t.scale, t)
    if pa.types.is_decimal256(t):
        return Target("", C.W_DECIMAL256, t.precision, t.scale, t)
    if pa.types.is_timestamp(t) and t.unit == "us":
        return Target("", C.W_TIMESTAMP, arrow_type=t)
    return None


def old_image_column(targets: Sequence[Target], rows: list) -> pa.Array:
    """The ``_before`` column of the pure-Python twins from one converted value list per row
    (``None``: the row has no old image)."""
    children = [pa.array([None if r is None else r[j] for r in rows], t.arrow_type)
                for j, t in enumerate(targets)]
    return pa.StructArray.from_arrays(children, fields=list(old_image_field(targets).type),
                                      mask=pa.array([r is None for r in rows], pa.bool_()))


def compile_targets(schema: pa.Schema) -> tuple[Target, ...]:
    out = []
    seen = set()
    for f in schema:
        w = _writer_for(f.type)
        if w is None:
            raise TypeError(
                f"column {f.name!r}: Arrow type {f.type} is not a typed-output target "
                "(use bool, [u]int8..64, float32/64, decimal128/256, date32, timestamp('us'[, tz]), "
                "duration('us'), string or binary)")
        if f.name in seen:
            raise ValueError(f"duplicate column {f.name!r} in the target schema")
        seen.add(f.name)
        out.append(Target(f.name, w.writer, w.precision, w.scale, f.type))
    return tuple(out)


# ------------------------------------------------------------------ inference
def infer_open_schema(keys: Sequence, values: Sequence, table: str, *,
                      compression: str = "none", spark: bool = False) -> pa.Schema:
    """Build the Arrow schema of ``table`` ("db.tbl") from sample open-protocol messages.

    Every row event carries each column's type code and flags, so the column types are exact;
    DECIMAL scale is taken from the number of fraction digits TiCDC rendered (it always renders
    exactly ``scale`` digits).  Column order is the order of first appearance (TiCDC flavour:
    table order; tiflow flavour: sorted names).  ``spark=True`` gives the Spark-accepted variant.
    """
    from .open.reference import iter_row_columns

    fields: dict[str, list] = {}
    for name, type_code, flags, value in iter_row_columns(keys, values, table, compression):
        slot = fields.get(name)
        if slot is None:
            slot = fields[name] = [type_code, flags, None]
        elif slot[0] == C.T_NULL and type_code != C.T_NULL:
            slot[0], slot[1] = type_code, flags
        if C.TYPE_KIND.get(type_code) == C.K_DECIMAL and isinstance(value, str):
            _, _, frac = value.partition(".")
            slot[2] = max(slot[2] or 0, len(frac))
    if not fields:
        raise ValueError(f"no row event of table {table!r} in the sample")
    schema = pa.schema([
        pa.field(name, default_arrow_type(tc, fl, sc), nullable=True,
                 metadata={b"tidb_type_code": str(tc).encode(), b"ticdc_flags": str(fl).encode()})
        for name, (tc, fl, sc) in fields.items()
    ])
    return spark_schema(schema) if spark else schema


def as_arrow_schema(schema) -> pa.Schema:
    """A table schema as Spark users write it — a pyarrow ``Schema``, a
    ``pyspark.sql.types.StructType`` or a DDL string (``"id BIGINT, name STRING"``, as
    ``from_json`` takes) — as a pyarrow schema.  A DDL string is read without Spark
    (``ticdc_fast.ddl``)."""
    if isinstance(schema, pa.Schema):
        return schema
    if isinstance(schema, str):
        from .ddl import parse_ddl
        return parse_ddl(schema)
    try:
        from pyspark.sql.types import StructType
    except ImportError:  # without pyspark only the pyarrow form and DDL text can exist
        StructType = None
    if StructType is not None and isinstance(schema, StructType):
        from pyspark.sql.pandas.types import to_arrow_schema
        # TIMESTAMP is an instant: UTC, as the typed decoders write it
        return to_arrow_schema(schema, timezone="UTC")
    raise TypeError("schema must be a pyarrow.Schema, a pyspark.sql.types.StructType or a DDL string "
                    f"such as 'id BIGINT, name STRING', not {type(schema).__name__}")
