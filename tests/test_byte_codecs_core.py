"""The core's Go-unquote and strict base64 decoders (src_cython/values/text.pxi: 8-byte runs,
a loop over whole groups) agree with the twin's (ticdc_fast.values) byte for byte on accepted
input and on the reason for refused input: Go-quoted bytes of every kind and length (so the
8-byte run stops at each escape position), and base64 of every length with every corruption."""
from __future__ import annotations

import base64
import importlib
import random

import pytest

from ticdc_fast import values as V
from ticdc_fast.values import ValueProblem
from test_values import _go_quote_body

pytestmark = pytest.mark.cython


@pytest.fixture(scope="module")
def codec():
    return importlib.import_module("ticdc_fast._core")._byte_codec


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
