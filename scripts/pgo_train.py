"""The training run of a profile-guided build (``TICDC_FAST_PGO=1``, see setup.py).

Decodes a realistic topic of every protocol, generic and typed (``ticdc_fast.testing``'s
three-table stream: CJK/emoji text, full-precision doubles, float32 values, DECIMAL, DATETIME(6),
TIMESTAMP(3), a 100-column table, 10% NULLs, updates with their old image) with the
instrumented core, so that gcc lays out, inlines and predicts the hot paths by what decoding real
streams does.  Error paths stay cold on purpose: the profile should not teach the compiler that
bad input is common.

    python scripts/pgo_train.py ROOT     # ROOT: the directory that holds the built ticdc_fast/
"""
from __future__ import annotations

import os
import sys

ROWS = 4000           # per protocol; more changes no decision gcc makes (the profile saturates)
PASSES = 2


def _typed_decoders(ticdc_fast, protocol, stream):
    """One typed decoder per table of the stream (the first with the old image, the second in
    the TiCDC server's zone Asia/Shanghai) and one decoder of every table in one pass."""
    from ticdc_fast.testing import avro_table_schema
    decoders = []
    schemas = {}
    for k, table in enumerate(stream.tables):
        name = table.split(".")[1]
        opts = {"table": table, "implementation": "cython", "old_image": k == 0,
                "timezone": "Asia/Shanghai" if k == 1 else "UTC"}
        if protocol == "open":
            schema = ticdc_fast.infer_open_schema(stream.keys[:600], stream.values[:600], table=table)
            decoders.append(ticdc_fast.OpenDecoder(schema=schema, **opts))
        elif protocol.startswith("simple"):
            encoding = protocol.split("-")[1]
            schema = ticdc_fast.simple_arrow_schema(stream.bootstraps[k], encoding=encoding)   # tables' order
            decoders.append(ticdc_fast.SimpleDecoder(encoding, schema=schema, schemas=stream.bootstraps, **opts))
        else:
            schema = avro_table_schema({i: t for i, t in stream.schemas.items() if f'"{name}"' in t})
            decoders.append(ticdc_fast.AvroDecoder(schema=schema, schemas=stream.schemas, **opts))
        schemas[table] = schema
    if protocol == "open":
        decoders.append(ticdc_fast.OpenDecoder(tables=schemas, implementation="cython"))
    elif protocol.startswith("simple"):
        decoders.append(ticdc_fast.SimpleDecoder(protocol.split("-")[1], tables=schemas, schemas=stream.bootstraps,
                                                 implementation="cython"))
    else:
        decoders.append(ticdc_fast.AvroDecoder(tables=schemas, schemas=stream.schemas, implementation="cython"))
    return decoders


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        sys.path.insert(0, argv[0])
    import pyarrow as pa

    import ticdc_fast
    from ticdc_fast.testing import realistic_stream

    if ticdc_fast.IMPLEMENTATION != "cython":
        raise SystemExit(f"pgo_train: the core did not load ({ticdc_fast.IMPLEMENTATION}): nothing to train")
    from ticdc_fast import _core
    if argv and not os.path.realpath(_core.__file__).startswith(os.path.realpath(argv[0]) + os.sep):
        raise SystemExit(f"pgo_train: imported {_core.__file__}, not the core built under {argv[0]}")
    for protocol in ("open", "simple-json", "simple-avro", "avro"):
        stream = realistic_stream(protocol, ROWS, seed=22)
        keys = None if protocol.startswith("simple") else stream.keys
        opts = {"schemas": stream.schemas} if protocol == "avro" else (
            {"schemas": stream.bootstraps} if protocol.startswith("simple") else {})
        if protocol.startswith("simple"):
            generic = ticdc_fast.SimpleDecoder(protocol.split("-")[1], implementation="cython", **opts)
        elif protocol == "avro":
            generic = ticdc_fast.AvroDecoder(implementation="cython", **opts)
        else:
            generic = ticdc_fast.OpenDecoder(implementation="cython")
        decoders = [generic] + _typed_decoders(ticdc_fast, protocol, stream)
        # the messages as Python lists and as Arrow binary arrays (what the Kafka source hands over)
        inputs = [(keys, stream.values),
                  (None if keys is None else pa.array(keys, pa.binary()), pa.array(stream.values, pa.binary()))]
        for _ in range(PASSES):
            for decoder in decoders:
                for keys_in, values_in in inputs:
                    out = decoder.decode(keys_in, values_in)
                    rows = sum(b.num_rows for b in out.values()) if isinstance(out, dict) else out.num_rows
                    if rows == 0:
                        raise SystemExit(f"pgo_train: {protocol} decoded no rows")
        print(f"pgo_train: {protocol}: {len(decoders)} decoders x {PASSES} passes over {len(stream.values)} messages")


if __name__ == "__main__":
    main()
