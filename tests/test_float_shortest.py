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


def _twin_number_text(text, bits, plain):
    try:
        return V.float_text(V.parse_float_text(text, bits), bits, plain)
    except V.ValueProblem:
        return None


def _plain_spellings(rnd):
    """Positional spellings (no exponent) of shortest texts, the form the core copies through
    when its digit search finds the text's own digits: of random doubles near 1 and far from it
    (below 1e-6 the Go form needs an exponent), of float32 values, and each with its last digit
    moved by one (a text of the same length that is not the shortest, or another value)."""
    out = []
    xs = [rnd.uniform(-2.0, 2.0) * 10.0 ** rnd.randint(-9, 18) for _ in range(3000)]
    xs32 = [struct.unpack("<f", struct.pack("<f", x))[0] for x in xs[:1500]]
    for text in [repr(x) for x in xs] + [V.format_float(x, 32) for x in xs32]:
        plain = format(V.Decimal(text), "f")
        out.append(plain.encode())
        last = int(plain[-1])
        for step in (-1, 1):
            if 0 <= last + step <= 9:
                out.append((plain[:-1] + str(last + step)).encode())
    return out


def _number_texts(rnd):
    """JSON-number texts (the scanner checked their syntax) as writers spell them: repr, %.17g/%.16g/%.15g of random doubles, float32
    values printed at 6-9 digits, short decimals, digit runs of 1-25 digits with leading and
    trailing zeros, exponents at the edges of both widths, zeros."""
    texts = []
    for x in float64_sample(rnd, 6000):
        texts += [repr(x).encode(), b"%.17g" % x, b"%.16g" % x, b"%.15g" % x]
    for x in float32_sample(rnd, 3000):
        texts += [b"%.9g" % x, b"%.8g" % x, b"%.7g" % x, b"%.6g" % x]
    texts += _plain_spellings(rnd)
    for _ in range(6000):
        nd = rnd.randint(1, 25)
        digits = "".join(rnd.choice("0123456789") for _ in range(nd))
        cut = rnd.randint(0, nd)
        text = (digits[:cut].lstrip("0") or "0") + ("." + digits[cut:] if cut < nd else "")
        if rnd.random() < 0.3 and text != "0":
            text += "0" * rnd.randint(1, 6)
        if rnd.random() < 0.3:
            text += "e%d" % rnd.randint(-330, 330)
        texts.append(("-" if rnd.random() < 0.3 else "").encode() + text.encode())
    texts += [b"0", b"-0", b"0.0", b"-0.000", b"0e5", b"1e-45", b"1e-46", b"3.4028235e38",
              b"3.4028236e38", b"1e39", b"1e308", b"1e309", b"2.2250738585072014e-308", b"4.9e-324",
              b"1e-400", b"100", b"1200000", b"0.000001", b"0.0000001", b"1e21", b"1e20",
              b"123456789012345678", b"1234567890123456789", b"12345678901234567890",
              b"0.30000000000000004", b"1.5000000000000000000000"]
    return texts


@pytest.mark.parametrize("bits", [64, 32])
@pytest.mark.parametrize("plain", [False, True], ids=["go-json", "plain"])
def test_number_text_matches_twin(core, bits, plain):
    """A FLOAT/DOUBLE column's JSON number as generic text: the text's own digits when they are
    the shortest, the shortest-digit search otherwise, the same as the twin for every spelling."""
    texts = _number_texts(random.Random(21))
    got = core._format_number_texts(texts, bits, plain)
    bad = [(t, g, _twin_number_text(t, bits, plain)) for t, g in zip(texts, got)
           if g != _twin_number_text(t, bits, plain)]
    assert bad[:5] == []
    assert sum(g is not None for g in got) > (0.9 if bits == 64 else 0.6) * len(texts)


def test_short_decimals_and_trailing_zeros_match_twin(core):
    """Values whose shortest digits end before the 17th: every count of trailing zeros the
    digit search can leave (stripped eight, four, two and one at a time) at both widths."""
    xs = [m * 10.0 ** e for m in (1, 7, 12, 125, 1234567, 123456789, 12345678901234567)
          for e in range(-12, 23)]
    xs += [round(random.Random(7).random() * 10 ** k, d) for k in range(1, 9) for d in range(0, 5)]
    xs += [-x for x in xs[:40]]
    assert _mismatches(xs, _core_texts(core, xs, 64), V.format_float, 64) == []
    assert _mismatches(xs, _core_texts(core, xs, 64, True), V.format_float_plain, 64) == []
    xs32 = [struct.unpack("<f", struct.pack("<f", x))[0] for x in xs if abs(x) < 3e38]
    assert _mismatches(xs32, _core_texts(core, xs32, 32), V.format_float, 32) == []


def test_integer_text_of_every_digit_count(core):
    """int_to_text writes its digits eight at a time: every length 1-20, the powers of ten and
    their neighbours, 2^64 - 1, negatives."""
    xs = [0, 1, 9, 2**64 - 1, -(2**64 - 1), 2**63, -(2**63)]
    for k in range(1, 20):
        xs += [10 ** k - 1, 10 ** k, 10 ** k + 1, -(10 ** k), 12345678901234567890 // 10 ** (20 - k)]
    rng = random.Random(5)
    xs += [rng.randrange(0, 2**64) >> rng.randrange(0, 64) for _ in range(20_000)]
    assert [core._int_text(abs(x), x < 0).decode() for x in xs] == [str(x) for x in xs]
