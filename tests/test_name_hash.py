"""The core's name hash (src_cython/plan/rows.pxi `name_hash`): every look-up table of the core (column
names, targets, zones, the open protocol's per-table name memos) takes its slot from the low bits.
Plain FNV-1a's low k bits depend on the low k bits of each byte only, so names that differ in the
high bits of a byte shared a slot: shop.events and shop.orders shared one name memo of 16 and
rebuilt it on every change of table."""
from __future__ import annotations

import importlib

import pytest

pytestmark = pytest.mark.cython


def _slots(names, bits=4):
    core = importlib.import_module("ticdc_fast._core")
    return {core._name_hash(n) & ((1 << bits) - 1) for n in names}


def test_names_differing_only_in_high_bits_spread_over_the_low_bits():
    # the same low nibble in every byte: one slot of 16 for plain FNV-1a
    names = [b"c" + bytes([0x21 + 16 * k]) for k in range(6)]
    assert len(_slots(names)) >= 4
    names = [bytes([0x41 + 32 * (k & 1), 0x42 + 32 * (k >> 1 & 1), 0x43 + 32 * (k >> 2 & 1)]) for k in range(8)]
    assert len(_slots(names)) >= 5


def test_many_column_names_fill_a_small_table_evenly():
    names = [f"c{k:02d}_{kind}".encode() for k, kind in
             enumerate(["int", "bigint", "double", "float", "decimal", "varchar", "text", "datetime"] * 4)]
    assert len(_slots(names, bits=6)) >= 18       # 32 names in 64 slots: ~25 distinct if uniform


def test_hash_is_stable_and_empty_names_hash():
    core = importlib.import_module("ticdc_fast._core")
    assert core._name_hash(b"orders") == core._name_hash(bytearray(b"orders"))
    assert core._name_hash(b"") == core._name_hash(b"")
    assert core._name_hash(b"a") != core._name_hash(b"b")
