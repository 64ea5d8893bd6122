"""Test helpers: faithful TiCDC Open and Simple Protocol encoders and realistic change-stream generators.

>>> from ticdc_fast.testing import OpenEncoder, realistic_changefeed
>>> messages = OpenEncoder("tiflow").encode(realistic_changefeed(1000))
>>> from ticdc_fast.testing import SimpleEncoder, simple_changefeed
>>> messages = SimpleEncoder("avro").encode(simple_changefeed(1000))
>>> from ticdc_fast.testing import AvroEncoder, LocalSchemaRegistry, realistic_avro_changefeed
>>> events, table_columns = realistic_avro_changefeed(1000)
>>> with LocalSchemaRegistry() as reg:
...     messages = AvroEncoder(reg.url, table_columns=table_columns).encode(events)
>>> from ticdc_fast.testing import realistic_stream   # three tables, CJK/emoji, full doubles, NULLs
>>> stream = realistic_stream("simple-json", 1000)
"""
from .open_encoder import (DDL, Col, OpenEncoder, Resolved, RowChange, claim_check_file, go_quote,
                           make_tso, realistic_changefeed)
from .simple_encoder import (SimpleBootstrap, SimpleColumn, SimpleDDL, SimpleDML, SimpleEncoder,
                             SimpleTable, SimpleWatermark, go_json_string, orders_table,
                             simple_changefeed)
from .simple_encoder import claim_check_file as simple_claim_check_file
from .registry import LocalSchemaRegistry
from .realistic import (REALISTIC_TABLES, RealisticStream, avro_table_schema, interleaved_changes, mix_columns,
                        realistic_stream)
from .avro_encoder import (AVRO_ORDERS_COLUMNS, AvroColumn, AvroEncoder, AvroRegistryError,
                           avro_decimal_bytes, many_schema_ids_stream, realistic_avro_changefeed, sanitize_name,
                           sanitize_topic)

__all__ = ["Col", "RowChange", "DDL", "Resolved", "OpenEncoder", "realistic_changefeed",
           "claim_check_file", "go_quote", "make_tso",
           "SimpleColumn", "SimpleTable", "SimpleDML", "SimpleDDL", "SimpleBootstrap",
           "SimpleWatermark", "SimpleEncoder", "simple_changefeed", "orders_table",
           "simple_claim_check_file", "go_json_string",
           "LocalSchemaRegistry", "AvroColumn", "AvroEncoder", "AvroRegistryError",
           "realistic_avro_changefeed", "AVRO_ORDERS_COLUMNS", "avro_decimal_bytes", "many_schema_ids_stream",
           "sanitize_name", "sanitize_topic",
           "realistic_stream", "RealisticStream", "REALISTIC_TABLES", "interleaved_changes", "mix_columns",
           "avro_table_schema"]
