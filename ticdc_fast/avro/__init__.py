"""TiCDC Avro protocol (``protocol=avro``) with a Confluent Schema Registry."""
from .decoder import AvroDecoder
from .registry import SchemaSource
from .schema import WriterSchema, compile_writer_schema

__all__ = ["AvroDecoder", "SchemaSource", "WriterSchema", "compile_writer_schema"]
