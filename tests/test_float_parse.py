"""The core's decimal-to-double parse (Clinger's exact case, then Eisel-Lemire for up to 19
significant digits, then strtod; src_cython/values/numbers.pxi) against Python's correctly
rounded float(): full-precision doubles as repr, %.17g and %.16g write them, random mantissas of
every length at every exponent, exact halfway points between neighbouring doubles, and the edges
(2^53 + 1, the largest and smallest normal doubles, subnormals, overflow).

A sweep of millions of texts: scripts/float_parse_sweep.py."""
from __future__ import annotations

import importlib
import math
import random
import struct
from decimal import Decimal, getcontext

import pytest

from float_sample import float64_sample

pytestmark = pytest.mark.cython

EDGES = [b"9007199254740993", b"9007199254740993e0", b"1e23", b"8.98846567431158e307",
         b"1.7976931348623157e308", b"1.7976931348623158e308", b"1.8e308", b"1e308",
         b"2.2250738585072014e-308", b"2.2250738585072011e-308", b"4.9e-324", b"5e-324", b"1e-400",
         b"123456789012345678e-20", b"0.1", b"0.30000000000000004", b"18446744073709551615",
         b"9999999999999999999", b"-0", b"-0.0e5", b"0e-999", b"1.00000000000000011102230246251565404",
         b"7.2057594037927933e16", b"3.0517578125e-05", b"-1.2345678901234567e-300"]


@pytest.fixture(scope="module")
def parse():
    return importlib.import_module("ticdc_fast._core")._parse_doubles


def _bits(x):
    return struct.pack("<d", x)


def _check(parse, texts):
    got = parse(texts)
    for t, (v, _fast) in zip(texts, got):
        ref = float(t)
        if math.isinf(ref):
            assert v is None, t
        else:
            assert v is not None and _bits(v) == _bits(ref), (t, v, ref)
    return sum(f for _, f in got)


def test_full_precision_doubles_parse_exactly_and_fast(parse):
    rnd = random.Random(5)
    texts = []
    for x in float64_sample(rnd, 12000):
        texts += [repr(x).encode(), b"%.17g" % x, b"%.16g" % x]
    fast = _check(parse, texts)
    assert fast > 0.9 * len(texts)          # the slow path stays the exception


def test_random_mantissas_at_every_exponent(parse):
    rnd = random.Random(6)
    texts = []
    for _ in range(30000):
        nd = rnd.randint(1, 19)
        m = rnd.randrange(10 ** (nd - 1), 10 ** nd)
        texts.append(b"%de%d" % (m, rnd.randint(-360, 330)))
        texts.append(b"-0.%0*d" % (nd, m))
    _check(parse, texts)


def test_exact_halfway_points_round_to_even(parse):
    getcontext().prec = 800
    rnd = random.Random(7)
    texts = []
    for x in float64_sample(rnd, 4000):
        x = abs(x)
        y = math.nextafter(x, math.inf)
        if x == 0 or math.isinf(y):
            continue
        half = (Decimal(x) + Decimal(y)) / 2
        texts.append(format(half, "e").encode())
    # short halfway points (the ones a 19-digit mantissa can hold): 2^53 + 1, 2^54 + 2, ...
    texts += [b"%d" % (2 ** 53 + 1 + 2 * k) for k in range(200)]
    texts += [b"%de%d" % (2 ** 54 + 2 + 4 * k, 0) for k in range(200)]
    _check(parse, texts)


def test_edges(parse):
    _check(parse, EDGES)


def test_digit_runs_of_every_length(parse):
    """Integer and fraction parts of 0-25 digits, with runs of leading zeros: exact values, and
    the 19-digit path taken for every mantissa of at most 19 significant digits but never past
    them (strtod decides those)."""
    rnd = random.Random(8)
    texts, short = [], 0
    for int_len in range(0, 26):
        for frac_len in range(0, 26):
            if int_len + frac_len == 0:
                continue
            for zeros in (0, 3, 9, 17):
                digits = ("0" * zeros + "".join(rnd.choice("0123456789") for _ in range(int_len + frac_len)))
                digits = digits[-(int_len + frac_len):] if zeros < int_len + frac_len else digits[:int_len + frac_len]
                whole, frac = digits[:int_len] or "0", digits[int_len:]
                text = whole + ("." + frac if frac else "")
                texts += [text.encode(), b"-" + text.encode()]
                short += 2 * (len(digits.lstrip("0")) <= 19)
    got = parse(texts)
    for t, (v, _fast) in zip(texts, got):
        assert v is not None and _bits(v) == _bits(float(t)), t
    fast_short = sum(f for t, (_, f) in zip(texts, got)
                     if len(t.lstrip(b"-").replace(b".", b"").lstrip(b"0")) <= 19)
    assert fast_short > 0.95 * short
    # more than 19 significant digits never takes the 19-digit path
    assert not any(f for t, (_, f) in zip(texts, got)
                   if len(t.lstrip(b"-").replace(b".", b"").lstrip(b"0")) > 19)
