"""The core's Go-unquote and strict base64 decoders (src_cython/values/text.pxi: 8-byte runs,
a loop over whole groups, 32-symbol AVX2 blocks where the CPU has them) agree with the twin's (ticdc_fast.values) byte for byte on accepted
input and on the reason for refused input: Go-quoted bytes of every kind and length (so the
8-byte run stops at each escape position), and base64 of every length with every corruption."""
from __future__ import annotations

import base64
import random

import pytest

from ticdc_fast import values as V
from ticdc_fast.values import ValueProblem
from conftest import core_simd_path
from test_values import _go_quote_body

pytestmark = pytest.mark.cython


@pytest.fixture(scope="module", params=["blocks", "scalar"])
def codec(request):
    """The core's codecs, with base64's AVX2 blocks on and off (both must agree with the twin)."""
    for core in core_simd_path("_b64_use_blocks", request.param == "blocks"):
        yield core._byte_codec


def _twin(fn, data):
    try:
        return fn(data)
    except ValueProblem as e:
        return str(e)


def _raws(rnd):
    pieces = [b"a", b"xyz", b"\x00", b"\xff", b"\n", b'"', b"\\", "日".encode(), "😀".encode(), b"\x7f", b" "]
    for n in range(0, 70):
        yield bytes(rnd.getrandbits(8) for _ in range(n))
        yield b"".join(rnd.choice(pieces) for _ in range(n))
        yield b"p" * n + b"\\" + b"q" * (n % 9)


def test_go_unquote_agrees_with_the_twin(codec):
    rnd = random.Random(21)
    for raw in _raws(rnd):
        body = _go_quote_body(raw)
        assert codec("go", body) == raw
        for pos in range(0, len(body), 3):
            for bad in (b'"', b"\n", b"\\", b"\\x", b"\\9", b"\\u12"):
                broken = body[:pos] + bad + body[pos:]
                assert codec("go", broken) == _twin(V.go_unquote_body, broken), broken


def test_b64_agrees_with_the_twin(codec):
    rnd = random.Random(22)
    for raw in _raws(rnd):
        text = base64.b64encode(raw)
        assert codec("b64", text) == raw
        for pos in range(len(text)):
            for bad in (b"=", b"-", b"\n", b"A", b"/"):
                broken = text[:pos] + bad + text[pos + 1:]
                assert codec("b64", broken) == _twin(V.b64decode_strict, broken), broken
        assert codec("b64", text[:-1]) == _twin(V.b64decode_strict, text[:-1])


def test_b64_long_text_every_corruption_agrees_with_the_twin(codec):
    """Text long enough for the 32-symbol blocks (every length to 420 symbols, so each block
    boundary and the symbols the blocks leave to the group loop are covered), with a symbol
    outside the alphabet (each class boundary of the ranges, '=', bytes >= 0x80) at every
    position."""
    rnd = random.Random(23)
    outside = b"=-_ \n\x00\x7f\x80\xff@[`{:,.*\x2a\x2c\x2e"
    for n in range(0, 316):
        raw = bytes(rnd.getrandbits(8) for _ in range(n))
        text = base64.b64encode(raw)
        assert codec("b64", text) == raw
        if n % 7 == 0:
            for pos in range(len(text)):
                bad = outside[(pos + n) % len(outside):][:1]
                broken = text[:pos] + bad + text[pos + 1:]
                assert codec("b64", broken) == _twin(V.b64decode_strict, broken), (n, pos, bad)
    every = bytes(range(256))
    text = base64.b64encode(every * 3)
    assert codec("b64", text) == every * 3
    for b in range(256):
        broken = text[:100] + bytes([b]) + text[101:]
        assert codec("b64", broken) == _twin(V.b64decode_strict, broken), b
