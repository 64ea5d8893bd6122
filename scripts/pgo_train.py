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


def _decoder(ticdc_fast, protocol, stream, **opts):
    """A core decoder of ``protocol`` that knows the stream's schemas (BOOTSTRAPs, Avro schemas)."""
    if protocol == "open":
        return ticdc_fast.OpenDecoder(implementation="cython", **opts)
    if protocol == "avro":
        return ticdc_fast.AvroDecoder(implementation="cython", schemas=stream.schemas, **opts)
    return ticdc_fast.SimpleDecoder(protocol.split("-")[1], implementation="cython", schemas=stream.bootstraps,
                                    **opts)


def _decoders(ticdc_fast, protocol, stream):
    """The generic decoder, one typed decoder per table of the stream (the first with the old
    image, the second in the TiCDC server's zone Asia/Shanghai) and one of every table in one pass."""
    from ticdc_fast.testing import avro_table_schema
    schemas = {}
    for k, table in enumerate(stream.tables):
        if protocol == "open":
            schemas[table] = ticdc_fast.infer_open_schema(stream.keys[:600], stream.values[:600], table=table)
        elif protocol == "avro":
            name = table.split(".")[1]
            schemas[table] = avro_table_schema({i: t for i, t in stream.schemas.items() if f'"{name}"' in t})
        else:   # the BOOTSTRAPs come in the tables' order
            schemas[table] = ticdc_fast.simple_arrow_schema(stream.bootstraps[k], encoding=protocol.split("-")[1])
    typed = [_decoder(ticdc_fast, protocol, stream, table=table, schema=schema, old_image=k == 0,
                      timezone="Asia/Shanghai" if k == 1 else "UTC")
             for k, (table, schema) in enumerate(schemas.items())]
    return [_decoder(ticdc_fast, protocol, stream)] + typed + [_decoder(ticdc_fast, protocol, stream, tables=schemas)]


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
        decoders = _decoders(ticdc_fast, protocol, stream)
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
