"""Generic simple-Avro rows render their data/old maps into the after/before maps as the entries
are read (each value through the GenericDecoder of its column and union branch).  A repeated
column or a value that does not render reads the message again through the row image, whose
answer (the last copy at the first one's place, the error and where it is) is the twin's."""
from __future__ import annotations

import pytest

import ticdc_fast
from twin_errors import same_error_as_twin
from ticdc_fast.testing import SimpleBootstrap, SimpleEncoder

from test_simple_streamed_rows import TABLE, _entry, _insert


def _generic(impl, values):
    dec = ticdc_fast.SimpleDecoder("avro", implementation=impl)
    boot = SimpleEncoder("avro").encode([SimpleBootstrap(TABLE)])[0][1]
    return dec, dec.decode(None, [boot] + values)


def _maps(batch):
    return [r["after"] for r in batch.to_pylist()][1:]


def test_generic_rows_match_the_twin_with_repeated_and_null_columns(impl):
    rows = [_insert([_entry("id", 1), _entry("name", "x"), _entry("n", 5), _entry("n", 7)]),
            _insert([_entry("id", 2), _entry("id", 3), _entry("name", "y")]),
            _insert([_entry("n", None), _entry("id", 4), _entry("ts", ("UTC", "2024-05-01 00:00:01.250"))]),
            _insert([_entry("name", "日本"), _entry("id", 5), _entry("n", -128)])]
    _, got = _generic(impl, rows)
    _, want = _generic("python", rows)
    assert got.equals(want)
    assert _maps(got)[0] == [("id", "1"), ("name", "x"), ("n", "7")]
    assert _maps(got)[1] == [("id", "3"), ("name", "y")]


def test_generic_value_out_of_range_is_the_twins_error(impl):
    """A TIMESTAMP whose text is no date: its GenericDecoder renders it by the text rules, which
    refuse it; the image path then words the error at the value, as the twin does."""
    bad = _insert([_entry("id", 1), _entry("ts", ("UTC", "2024-13-01 00:00:00")), _entry("name", "z")])
    same_error_as_twin(lambda which: _generic(which, [bad]), impl)
