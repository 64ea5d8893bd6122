"""Test helpers: a faithful TiCDC Open Protocol encoder and a realistic change-stream generator.

>>> from ticdc_fast.testing import OpenEncoder, realistic_changefeed
>>> messages = OpenEncoder("tiflow").encode(realistic_changefeed(1000))
"""
from .open_encoder import (DDL, Col, OpenEncoder, Resolved, RowChange, claim_check_file, go_quote,
                           make_tso, realistic_changefeed)

__all__ = ["Col", "RowChange", "DDL", "Resolved", "OpenEncoder", "realistic_changefeed",
           "claim_check_file", "go_quote", "make_tso"]
