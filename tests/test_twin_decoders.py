"""The pure-Python twin chooses one decoder per output column when it compiles a plan (issue 40
item 5), never per value: decoding the same messages twice over compiles no more decoders than
decoding them once."""
from __future__ import annotations

import pytest

import ticdc_fast
from ticdc_fast import convert
from ticdc_fast.avro import reference as avro_reference
from ticdc_fast.simple import reference as simple_reference
from ticdc_fast.testing import realistic_stream

TABLE = "shop.orders"


def _typed_decoder(protocol: str, s):
    if protocol == "open":
        schema = ticdc_fast.infer_open_schema(s.keys, s.values, TABLE)
        return lambda: ticdc_fast.OpenDecoder(implementation="python", table=TABLE, schema=schema)
    if protocol == "simple-json":
        schema = ticdc_fast.simple.arrow_schema(ticdc_fast.simple.latest_table_schema(s.values, TABLE))
        boot = [v for v in s.values if b'"BOOTSTRAP"' in v[:200]]
        return lambda: ticdc_fast.SimpleDecoder("json", implementation="python", table=TABLE, schema=schema,
                                                schemas=boot)
    from ticdc_fast.avro import compile_writer_schema
    from ticdc_fast.testing.realistic import avro_table_schema
    mine = {}
    for sid, text in s.schemas.items():
        ws = compile_writer_schema(sid, text)
        if f"{ws.database}.{ws.table}" == TABLE:
            mine[sid] = text
    schema = avro_table_schema(mine)
    return lambda: ticdc_fast.AvroDecoder(implementation="python", table=TABLE, schema=schema,
                                          schemas=dict(s.schemas))


_CHOOSERS = {"open": (convert, "typed_decoder"), "simple-json": (simple_reference, "typed_decoder"),
             "avro": (avro_reference, "typed_decoder")}


@pytest.mark.parametrize("protocol", sorted(_CHOOSERS))
def test_twin_compiles_each_decoder_once(protocol, monkeypatch):
    s = realistic_stream(protocol, 200, seed=3)
    make = _typed_decoder(protocol, s)
    module, name = _CHOOSERS[protocol]
    real, calls = getattr(module, name), []

    def counting(*args):
        calls.append(args)
        return real(*args)
    monkeypatch.setattr(module, name, counting)

    def compiled(times: int) -> tuple[int, int]:
        calls.clear()
        keys = None if s.keys is None else list(s.keys) * times
        out = make().decode(keys, list(s.values) * times)
        return len(calls), out.num_rows

    once, rows_once = compiled(1)
    twice, rows_twice = compiled(2)
    assert 0 < once < rows_once
    assert rows_twice == 2 * rows_once
    assert twice == once
