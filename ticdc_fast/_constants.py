"""Constants shared by the Cython core and the pure-Python twin (one source of truth).

Every integer constant below reaches the Cython core as a ``cdef enum`` member of the same name:
``scripts/gen_constants.py`` writes ``src_cython/_constants.pxi`` from this file at build time.
"""
from __future__ import annotations

OPEN_BATCH_VERSION = 1

# Open-protocol event kinds (key field "t").
MSG_ROW = 1
MSG_DDL = 2
MSG_RESOLVED = 3

# Output `_op` values, by code.
OP_INSERT = 0
OP_UPDATE = 1
OP_DELETE = 2
OP_DDL = 3
OP_RESOLVED = 4
OP_UPSERT = 5      # Avro protocol without the TiDB extension: inserts and updates look alike
OP_NAMES = ("INSERT", "UPDATE", "DELETE", "DDL", "RESOLVED", "UPSERT")

# TiCDC column flags (open protocol "f"); not TiDB's own column flags.
FLAG_BINARY = 1
FLAG_HANDLE_KEY = 2
FLAG_GENERATED = 4
FLAG_PRIMARY_KEY = 8
FLAG_UNIQUE_KEY = 16
FLAG_MULTIPLE_KEY = 32
FLAG_NULLABLE = 64
FLAG_UNSIGNED = 128

# MySQL type codes (open protocol "t").
T_DECIMAL_LEGACY = 0
T_TINY = 1
T_SHORT = 2
T_LONG = 3
T_FLOAT = 4
T_DOUBLE = 5
T_NULL = 6
T_TIMESTAMP = 7
T_LONGLONG = 8
T_INT24 = 9
T_DATE = 10
T_DURATION = 11
T_DATETIME = 12
T_YEAR = 13
T_NEWDATE = 14
T_VARCHAR = 15
T_BIT = 16
T_VECTOR = 225
T_JSON = 245
T_NEWDECIMAL = 246
T_ENUM = 247
T_SET = 248
T_TINY_BLOB = 249
T_MEDIUM_BLOB = 250
T_LONG_BLOB = 251
T_BLOB = 252
T_VAR_STRING = 253
T_STRING = 254

# How a column type's JSON value is read.  Every accepted type code maps to one kind;
# any other code is rejected with DecodeError.
K_INT = 1        # JSON integer; uint64 when FLAG_UNSIGNED, else int64
K_UINT = 2       # JSON integer, always unsigned (BIT, SET)
K_FLOAT32 = 3
K_FLOAT64 = 4
K_DECIMAL = 5    # JSON string, MyDecimal text
K_DATE = 6
K_DATETIME = 7   # DATETIME: wall clock, never converted
K_TIMESTAMP = 8  # TIMESTAMP: wall clock in the TiCDC server time zone
K_TIME = 9       # TIME / duration
K_TEXT = 10      # JSON string; Go-quoted bytes when FLAG_BINARY
K_BLOB = 11      # JSON string holding std base64 of the bytes
K_JSONDOC = 12   # JSON / VECTOR text
K_NULL = 13      # type NULL: the value must be null
K_ENUM = 14      # JSON integer, 1-based index (unsigned)

TYPE_KIND = {
    T_DECIMAL_LEGACY: K_DECIMAL,
    T_TINY: K_INT, T_SHORT: K_INT, T_LONG: K_INT, T_LONGLONG: K_INT, T_INT24: K_INT,
    T_YEAR: K_INT,
    T_FLOAT: K_FLOAT32, T_DOUBLE: K_FLOAT64,
    T_NULL: K_NULL,
    T_TIMESTAMP: K_TIMESTAMP,
    T_DATE: K_DATE, T_NEWDATE: K_DATE,
    T_DURATION: K_TIME,
    T_DATETIME: K_DATETIME,
    T_VARCHAR: K_TEXT, T_VAR_STRING: K_TEXT, T_STRING: K_TEXT,
    T_BIT: K_UINT, T_SET: K_UINT, T_ENUM: K_ENUM,
    T_VECTOR: K_JSONDOC, T_JSON: K_JSONDOC,
    T_NEWDECIMAL: K_DECIMAL,
    T_TINY_BLOB: K_BLOB, T_MEDIUM_BLOB: K_BLOB, T_LONG_BLOB: K_BLOB, T_BLOB: K_BLOB,
}

# Integer ranges by type code (signed, unsigned); YEAR is 0 or 1901..2155 but travels as int.
INT_RANGE = {
    T_TINY: ((-(1 << 7), (1 << 7) - 1), (0, (1 << 8) - 1)),
    T_SHORT: ((-(1 << 15), (1 << 15) - 1), (0, (1 << 16) - 1)),
    T_INT24: ((-(1 << 23), (1 << 23) - 1), (0, (1 << 24) - 1)),
    T_LONG: ((-(1 << 31), (1 << 31) - 1), (0, (1 << 32) - 1)),
    T_LONGLONG: ((-(1 << 63), (1 << 63) - 1), (0, (1 << 64) - 1)),
    T_YEAR: ((0, 2155), (0, 2155)),
}

# Compression names accepted for `large-message-handle-compression`.
COMPRESSIONS = ("none", "snappy", "lz4")

# Output column names.
COL_OP = "_op"
COL_COMMIT_TS = "_commit_ts"
COL_SCHEMA = "_schema"
COL_TABLE = "_table"
COL_DDL = "_ddl"
COL_DDL_TYPE = "_ddl_type"
COL_AFTER = "after"
COL_BEFORE = "before"
COL_BEFORE_ROW = "_before"          # typed output, old_image=True: the old image as a struct
COL_ROW_ID = "_row_id"
COL_PHYSICAL_TABLE_ID = "_physical_table_id"
COL_HANDLE_KEY_ONLY = "_handle_key_only"
COL_CLAIM_CHECK = "_claim_check_location"
COL_BEFORE_INCOMPLETE = "_before_incomplete"
COL_TABLE_SCHEMA = "_table_schema"            # simple
COL_SCHEMA_VERSION = "_schema_version"        # simple
COL_TABLE_ID = "_table_id"                    # simple
COL_BUILT_TS = "_build_ts"                    # simple
COL_CHECKSUM_VERSION = "_checksum_version"    # simple, avro
COL_CHECKSUM_CORRUPTED = "_checksum_corrupted"  # simple, avro
COL_CHECKSUM_CURRENT = "_checksum_current"    # simple
COL_CHECKSUM_PREVIOUS = "_checksum_previous"  # simple
COL_UNDECODABLE = "_undecodable"              # simple
COL_RAW = "_raw"                              # simple
COL_KEY = "_key"                              # avro (generic)
COL_CHECKSUM = "_checksum"                    # avro
COL_KEY_SCHEMA_ID = "_key_schema_id"          # avro
COL_VALUE_SCHEMA_ID = "_value_schema_id"      # avro
COL_PARTITION = "_partition"
COL_OFFSET = "_offset"

# A MySQL type code is one byte: the size of the type-code tables (TYPE_KIND in the core).
TYPE_CODE_SLOTS = 256

# Avro protocol: the first byte of a message's value.  A Confluent-framed record starts with the
# magic byte; TiCDC frames its DDL, checkpoint and delete-marker values with their own byte.
AVRO_FRAME_RECORD = 0
AVRO_FRAME_DDL = 1
AVRO_FRAME_CHECKPOINT = 2
AVRO_FRAME_DELETE = 3

# Simple protocol, Avro encoding: the branches of a column value's union (simple_protocol.avsc).
SAV_NULL = 0
SAV_LONG = 1
SAV_FLOAT = 2
SAV_DOUBLE = 3
SAV_STRING = 4
SAV_BYTES = 5
SAV_TIMESTAMP = 6
SAV_UBIGINT = 7
SAV_BRANCHES = 8

# TIMESTAMP location names that are no time zone, remembered at once by a simple-protocol plan
# (each fails where its value is converted); a message naming more of them is refused.
UNKNOWN_ZONE_SLOTS = 256

# Typed-output writer kinds: what Arrow type a target column is written as.
W_BOOL = 1
W_INT8 = 2
W_INT16 = 3
W_INT32 = 4
W_INT64 = 5
W_UINT8 = 6
W_UINT16 = 7
W_UINT32 = 8
W_UINT64 = 9
W_FLOAT32 = 10
W_FLOAT64 = 11
W_DECIMAL128 = 12
W_DECIMAL256 = 13
W_DATE32 = 14
W_TIMESTAMP = 15   # timestamp('us'[, tz])
W_DURATION = 16    # duration('us')
W_STRING = 17
W_BINARY = 18

INT_WRITER_RANGE = {
    W_INT8: (-(1 << 7), (1 << 7) - 1), W_INT16: (-(1 << 15), (1 << 15) - 1),
    W_INT32: (-(1 << 31), (1 << 31) - 1), W_INT64: (-(1 << 63), (1 << 63) - 1),
    W_UINT8: (0, (1 << 8) - 1), W_UINT16: (0, (1 << 16) - 1),
    W_UINT32: (0, (1 << 32) - 1), W_UINT64: (0, (1 << 64) - 1),
}
