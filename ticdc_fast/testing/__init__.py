"""Test helpers: faithful TiCDC Open and Simple Protocol encoders and realistic change-stream generators.

>>> from ticdc_fast.testing import OpenEncoder, realistic_changefeed
>>> messages = OpenEncoder("tiflow").encode(realistic_changefeed(1000))
>>> from ticdc_fast.testing import SimpleEncoder, simple_changefeed
>>> messages = SimpleEncoder("avro").encode(simple_changefeed(1000))
"""
from .open_encoder import (DDL, Col, OpenEncoder, Resolved, RowChange, claim_check_file, go_quote,
                           make_tso, realistic_changefeed)
from .simple_encoder import (SimpleBootstrap, SimpleColumn, SimpleDDL, SimpleDML, SimpleEncoder,
                             SimpleTable, SimpleWatermark, go_json_string, orders_table,
                             simple_changefeed)
from .simple_encoder import claim_check_file as simple_claim_check_file

__all__ = ["Col", "RowChange", "DDL", "Resolved", "OpenEncoder", "realistic_changefeed",
           "claim_check_file", "go_quote", "make_tso",
           "SimpleColumn", "SimpleTable", "SimpleDML", "SimpleDDL", "SimpleBootstrap",
           "SimpleWatermark", "SimpleEncoder", "simple_changefeed", "orders_table",
           "simple_claim_check_file", "go_json_string"]
