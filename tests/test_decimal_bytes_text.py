"""The core's text of an Avro decimal (src_cython/values/numbers.pxi `decimal_bytes_text`: the
unscaled value as minimal two's-complement big-endian bytes, and the scale), which the Avro
protocol's generic output writes, against Python's integers: every width from 1 to 90 bytes
(the 64-bit path up to 8, the long division above), both signs, the two's-complement edges,
values below one and scales from 0 to 30."""
from __future__ import annotations

import importlib
import random

import pytest

pytestmark = pytest.mark.cython


def _expected(unscaled: int, scale: int) -> str:
    digits = str(abs(unscaled)).rjust(scale + 1, "0")
    text = digits[:len(digits) - scale] + "." + digits[len(digits) - scale:] if scale else digits
    return ("-" if unscaled < 0 else "") + text


def _bytes(v: int, width: int) -> bytes:
    return v.to_bytes(width, "big", signed=True)


def _values():
    rnd = random.Random(11)
    for width in range(1, 91):
        lo, hi = -(1 << (8 * width - 1)), (1 << (8 * width - 1)) - 1
        for v in (lo, lo + 1, -1, 0, 1, hi - 1, hi, 10 ** min(width * 2, 200) % hi, -(10 ** min(width * 2, 200) % hi)):
            yield v, width
        for _ in range(40):
            yield rnd.randint(lo, hi), width


def test_every_width_and_sign_agrees_with_python():
    core = importlib.import_module("ticdc_fast._core")
    checked = 0
    for v, width in _values():
        for scale in (0, 1, 2, 5, 9, 18, 30):
            assert core._decimal_bytes_text(_bytes(v, width), scale) == _expected(v, scale), (v, width, scale)
            checked += 1
    assert checked > 30000


def test_power_of_ten_group_edges():
    core = importlib.import_module("ticdc_fast._core")
    for k in range(0, 60):
        for v in (10 ** k - 1, 10 ** k, 10 ** k + 1, -(10 ** k)):
            width = max(1, (v.bit_length() + 8) // 8)
            for scale in (0, 3, 9, 10):
                assert core._decimal_bytes_text(_bytes(v, width), scale) == _expected(v, scale), (v, scale)


def test_refusals():
    core = importlib.import_module("ticdc_fast._core")
    assert core._decimal_bytes_text(b"", 2) == "empty decimal bytes"
    assert core._decimal_bytes_text(b"\x01" * 91, 2) == "decimal wider than 720 bits"
