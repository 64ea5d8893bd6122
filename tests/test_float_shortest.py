"""The core's shortest float text (Schubfach, src_cython/values/numbers.pxi) against the twin's
(ticdc_fast.values.format_float: CPython's repr for float64, an exact interval check for float32)
on random bit patterns of every exponent, subnormals, zeros and the edges of both widths.

A sweep of millions of values: scripts/float_shortest_sweep.py."""
from __future__ import annotations

import importlib
import random
import struct

import pytest

from float_sample import float32_sample, float64_sample, pack
from ticdc_fast import values as V

pytestmark = pytest.mark.cython


@pytest.fixture(scope="module")
def core():
    return importlib.import_module("ticdc_fast._core")


def _core_texts(core, xs, bits, plain=False):
    return core._format_floats(pack(xs), bits, plain).decode().split("\n")[:-1]


def _mismatches(xs, got, twin, bits):
    return [(x, g, twin(x, bits)) for x, g in zip(xs, got) if g != twin(x, bits)][:5]


@pytest.mark.parametrize("plain", [False, True], ids=["go-json", "plain"])
def test_float64_matches_twin(core, plain):
    xs = float64_sample(random.Random(13), 60_000)
    twin = V.format_float_plain if plain else V.format_float
    assert _mismatches(xs, _core_texts(core, xs, 64, plain), twin, 64) == []


def test_float32_matches_twin(core):
    xs = float32_sample(random.Random(13), 10_000)
    assert _mismatches(xs, _core_texts(core, xs, 32), V.format_float, 32) == []


@pytest.mark.parametrize("x, bits, text", [
    (0.1 + 0.2, 64, "0.30000000000000004"),
    (1 / 3, 64, "0.3333333333333333"),
    (2.0 ** 60, 64, "1152921504606847000"),
    (9007199254740993.0, 64, "9007199254740992"),
    (5e-324, 64, "5e-324"),
    (2.2250738585072014e-308, 64, "2.2250738585072014e-308"),
    (1.7976931348623157e308, 64, "1.7976931348623157e+308"),
    (1e23, 64, "1e+23"),
    (-123.45600000000002, 64, "-123.45600000000002"),
    (0.000001, 64, "0.000001"),
    (struct.unpack("<f", struct.pack("<f", 0.1))[0], 32, "0.1"),
    (struct.unpack("<f", struct.pack("<f", 1 / 3))[0], 32, "0.33333334"),
    (16777216.0, 32, "16777216"),
    (2.0 ** 90, 32, "1.2379401e+27"),
    (1.401298464324817e-45, 32, "1e-45"),
    (3.4028234663852886e38, 32, "3.4028235e+38"),
])
def test_known_texts(core, x, bits, text):
    assert V.format_float(x, bits) == text
    assert _core_texts(core, [x], bits) == [text]


def test_float32_reads_back_without_double_rounding():
    # 1.00000011920928955078125 is the midpoint of float32 1 and its successor (odd significand):
    # read directly to float32 it goes to even, i.e. 1, so it is not a text for the successor.
    succ = struct.unpack("<f", struct.pack("<I", 0x3F800001))[0]
    assert not V._reads_back_as_float32(V.Decimal("1.00000005960464477539062500"), succ)
    assert V._reads_back_as_float32(V.Decimal("1.0000001"), succ)
