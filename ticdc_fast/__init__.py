"""ticdc_fast: TiCDC Kafka messages → Apache Arrow record batches, for Spark's mapInArrow."""
from ._impl import IMPLEMENTATION, set_buffer_pool_limit
from .avro import AvroDecoder
from .arrow_types import default_arrow_type, infer_open_schema, spark_arrow_type, spark_schema
from .claim_check import fsspec_resolver
from .errors import DecodeError, DecoderBusyError, SchemaChangedError, SlowImplementationWarning, UnavailableError
from .open import OpenDecoder
from .policy import DecodeStats
from .simple import SimpleDecoder, local_claim_check, simple_arrow_schema

__version__ = "0.1.0"

__all__ = [
    "AvroDecoder", "DecodeError", "DecodeStats", "DecoderBusyError", "IMPLEMENTATION", "OpenDecoder", "SimpleDecoder",
    "SchemaChangedError", "SlowImplementationWarning", "UnavailableError", "default_arrow_type", "fsspec_resolver", "infer_open_schema",
    "local_claim_check",
    "set_buffer_pool_limit", "simple_arrow_schema", "spark_arrow_type", "spark_schema", "__version__",
]
