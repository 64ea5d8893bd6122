"""TiCDC Avro protocol (``protocol=avro``) with a Confluent Schema Registry."""
from .decoder import AvroDecoder
from .latest import avro_arrow_schema, latest_value_schema
from .registry import SchemaSource
from .schema import WriterSchema, compile_writer_schema

__all__ = ["AvroDecoder", "SchemaSource", "WriterSchema", "avro_arrow_schema", "compile_writer_schema",
           "latest_value_schema"]
