"""TiCDC Open Protocol (``protocol=open-protocol``)."""
from .decoder import OpenDecoder

__all__ = ["OpenDecoder"]
