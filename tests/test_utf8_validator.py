"""The core's strict UTF-8 check (a shift-based DFA, src_cython/values/text.pxi) against Python's
own decoder: every 1- and 2-byte sequence, every 3-byte sequence with an E0..EF lead, every 4-byte
lead with its edge continuations, and random text mixing ASCII, CJK and emoji with bytes broken
at every position (the ASCII run skip and the 16-byte DFA steps meet at every offset)."""
from __future__ import annotations

import importlib
import itertools
import random

import pytest
from conftest import is_utf8

pytestmark = pytest.mark.cython


@pytest.fixture(scope="module")
def valid():
    return importlib.import_module("ticdc_fast._core")._utf8_valid


def test_every_short_sequence_agrees_with_python(valid):
    for n in (0, 1, 2):
        for seq in itertools.product(range(256), repeat=n):
            b = bytes(seq)
            assert valid(b) == is_utf8(b), b


def test_every_three_byte_lead_sequence_agrees_with_python(valid):
    for lead in range(0xE0, 0xF0):
        for b1 in range(256):
            for b2 in (0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF):
                b = bytes((lead, b1, b2))
                assert valid(b) == is_utf8(b), b


def test_every_four_byte_lead_agrees_with_python(valid):
    edges = (0x00, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF)
    for lead in range(0xF0, 0x100):
        for b1, b2, b3 in itertools.product(edges, repeat=3):
            b = bytes((lead, b1, b2, b3))
            assert valid(b) == is_utf8(b), b
            assert valid(b"abc" + b) == is_utf8(b), b       # and not at the start


@pytest.mark.parametrize("longest", [60, 200])     # 200: past 32 bytes, the two-lane split
def test_random_mixed_text_and_every_broken_byte(valid, longest):
    rnd = random.Random(13 + longest)
    alphabet = ["a", "Z", " ", "é", "ß", "日", "本", "語", "😀", "🎉", "\u07ff", "\uffff", "\U0010ffff"]
    for _ in range(300 if longest == 60 else 60):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randrange(0, longest))).encode()
        assert valid(text) and is_utf8(text)
        for pos in range(len(text)):
            broken = bytearray(text)
            broken[pos] = rnd.choice((0x80, 0xBF, 0xC0, 0xED, 0xF5, 0xFF, rnd.randrange(256)))
            broken = bytes(broken)
            assert valid(broken) == is_utf8(broken), broken
        if text:
            assert valid(text[:-1]) == is_utf8(text[:-1])              # a sequence cut short
            for cut in range(1, 4):                                     # a character cut at the middle
                mid = len(text) // 2
                spliced = text[:mid] + text[mid + cut:]
                assert valid(spliced) == is_utf8(spliced), spliced
