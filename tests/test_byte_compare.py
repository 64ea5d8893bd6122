"""The core's short byte-string equality (src_cython/framing/cursor.pxi `bytes_eq`, used for
every member name and key the parsers match) against Python's: every length up to 40 (whole
words, the overlapping tail word, the 4-byte and 1-3-byte cases), equal and differing in one
byte at every position, with the operands at every alignment of an 8-byte word."""
from __future__ import annotations

import importlib

import pytest

pytestmark = pytest.mark.cython


def test_every_length_and_differing_position_agrees_with_python():
    core = importlib.import_module("ticdc_fast._core")
    base = bytes(range(33, 33 + 48))
    checked = 0
    for shift in range(8):
        for n in range(41):
            a = memoryview(bytearray(b"\0" * shift + base[:n]))[shift:]
            assert core._bytes_eq(a, bytes(a)) is True
            for i in range(n):
                for flip in (0x01, 0x80):
                    b = bytearray(a)
                    b[i] ^= flip
                    assert core._bytes_eq(a, bytes(b)) is False, (shift, n, i, flip)
                    checked += 1
    assert checked == 8 * sum(2 * n for n in range(41))


def test_lengths_must_match():
    core = importlib.import_module("ticdc_fast._core")
    with pytest.raises(ValueError):
        core._bytes_eq(b"ab", b"abc")
