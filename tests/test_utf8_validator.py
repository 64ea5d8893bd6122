"""The core's strict UTF-8 check (src_cython/values/text.pxi: a shift-based DFA, and 32-byte
blocks where the CPU has AVX2) against Python's own decoder: every 1- and 2-byte sequence, every
3-byte sequence with an E0..EF lead, every 4-byte lead with its edge continuations, random text
mixing ASCII, CJK and emoji with bytes broken at every position (the ASCII run skip and the
16-byte DFA steps meet at every offset), and every sequence class across a block boundary.  Each
test runs with the block check on and off, so both paths are held to the decoder here."""
from __future__ import annotations

import itertools
import random

import pytest
from conftest import core_simd_path, is_utf8

pytestmark = pytest.mark.cython


@pytest.fixture(scope="module", params=["blocks", "dfa"])
def valid(request):
    for core in core_simd_path("_utf8_use_blocks", request.param == "blocks"):
        yield core._utf8_valid


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


# One sample per class of the block check's lookup (lead, first continuation): valid forms at
# their edges and each kind of fault (overlong, surrogate, above U+10FFFF, too short, stray).
SEQUENCES = [b"\xc2\x80", b"\xdf\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xe0\xa0\x80", b"\xe0\x9f\xbf",
             b"\xed\x9f\xbf", b"\xed\xa0\x80", b"\xef\xbf\xbf", b"\xf0\x90\x80\x80",
             b"\xf0\x8f\xbf\xbf", b"\xf4\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
             b"\xf8\x88\x80\x80\x80", b"\xe4\xb8", b"\xf0\x9f\x98", b"\x80", b"\xbf\x80",
             b"\xe4\xb8\xad\x80", b"\xc3", b"\xff"]


@pytest.mark.parametrize("length", [16, 17, 31, 32, 33, 48, 63, 64, 65, 96, 127, 130])
def test_every_sequence_class_at_every_offset_of_long_text(valid, length):
    """Placed at each offset of text long enough for the block check, so that a character
    straddles a 32-byte boundary, opens at a block's end or is cut at the text's end."""
    filler = "日本語 é😀 ".encode()
    for seq in SEQUENCES:
        for at in range(length - len(seq) + 1):
            body = (filler * (length // len(filler) + 2))
            # keep the filler whole around the sequence: cut it at character boundaries
            head = body[:at].decode("utf-8", "ignore").encode()
            head += b"a" * (at - len(head))
            tail_len = length - at - len(seq)
            tail = body[:tail_len].decode("utf-8", "ignore").encode()
            tail += b"b" * (tail_len - len(tail))
            b = head + seq + tail
            assert valid(b) == is_utf8(b), (seq, at, b)


@pytest.mark.parametrize("length", range(0, 41))
def test_short_and_tail_ascii_with_one_odd_sequence_anywhere(valid, length):
    """Short text is checked as ASCII in one or two overlapping reads and the tail of longer text
    as its last 8 bytes: one non-ASCII or broken sequence at any position, at either end
    included, must still be seen."""
    odd = (b"\x80", b"\xff", b"\xc3", b"\xc3\xa9", b"\xe8\xaf", b"\xe8\xaf\xb7", b"\xf0\x9f\x8e\x81",
           b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\x7f")
    base = bytes((0x61 + i % 26) for i in range(length))
    assert valid(base) == is_utf8(base)
    for pos in range(length + 1):
        for seq in odd:
            b = base[:pos] + seq + base[pos:]
            assert valid(b) == is_utf8(b), b
            b = base[:pos] + seq + base[pos + len(seq):]
            assert valid(b) == is_utf8(b), b
