"""TiCDC Simple Protocol (``protocol=simple``), JSON and Avro encodings."""
from .decoder import SimpleDecoder, local_claim_check
from .latest import latest_table_schema
from .schema import TableSchema, arrow_schema, simple_arrow_schema, table_schema_from_dict

__all__ = ["SimpleDecoder", "TableSchema", "arrow_schema", "latest_table_schema", "local_claim_check",
           "simple_arrow_schema", "table_schema_from_dict"]
