"""The core's integer text (src_cython/values/numbers.pxi `int_to_text`, which the generic output of
every protocol and the Avro integer paths write with) against Python's: every digit count, the
powers of ten and their neighbours, the powers of two around 2^63 and 2^64, and the sign."""
from __future__ import annotations

import importlib
import random

import pytest

pytestmark = pytest.mark.cython


def _magnitudes():
    yield from range(0, 1001)
    for k in range(1, 20):
        yield from (10 ** k - 1, 10 ** k, 10 ** k + 1)
    for k in range(1, 64):
        yield from (2 ** k - 1, 2 ** k, 2 ** k + 1)
    yield 2 ** 64 - 1
    rnd = random.Random(7)
    for bits in range(1, 65):
        for _ in range(50):
            yield rnd.getrandbits(bits)


def test_every_digit_count_agrees_with_python():
    core = importlib.import_module("ticdc_fast._core")
    seen = set()
    for m in _magnitudes():
        m &= 2 ** 64 - 1
        assert core._int_text(m, False) == str(m).encode(), m
        assert core._int_text(m, True) == (str(-m) if m else "0").encode(), m
        seen.add(len(str(m)))
    assert seen == set(range(1, 21))


def _python_parse_int(text):
    """parse_int_text's contract: JSON's integer grammar, sign and magnitude, -2 past 2^64 - 1."""
    import re
    if not re.fullmatch(rb"-?(0|[1-9][0-9]*)", text):
        return (-1, None, None)
    v = int(text)
    if abs(v) > 2 ** 64 - 1:
        return (-2, None, None)
    return (0, v < 0, abs(v))


def _int_texts(rnd):
    texts = [b"", b"-", b"0", b"-0", b"00", b"-00", b"01", b"-01", b"0-", b"1-", b"+1", b" 1", b"1 ",
             b"18446744073709551615", b"18446744073709551616", b"-18446744073709551615",
             b"99999999999999999999", b"9223372036854775808", b"-9223372036854775808"]
    for nd in range(1, 26):
        for _ in range(40):
            digits = str(rnd.randint(10 ** (nd - 1) if nd > 1 else 0, 10 ** nd - 1)).encode()
            for t in (digits, b"-" + digits):
                texts.append(t)
                # one byte that is no digit at every position: the grammar must catch each
                at = rnd.randrange(len(t))
                texts.append(t[:at] + bytes([rnd.choice(b"a./:+- \x00\xff\x2f\x3a")]) + t[at + 1:])
    return texts


def test_parse_int_text_agrees_with_python():
    """Every digit count 1-25 with a sign or none, and a non-digit byte at each position: the
    word-at-a-time reading (eight digits, then the text's last word for the rest) accepts what
    JSON's grammar accepts and reads the same magnitude."""
    core = importlib.import_module("ticdc_fast._core")
    texts = _int_texts(random.Random(11))
    got = core._parse_int_texts(texts)
    bad = [(t, g, _python_parse_int(t)) for t, g in zip(texts, got) if g != _python_parse_int(t)]
    assert bad[:5] == []
    assert sum(g[0] == 0 for g in got) > len(texts) // 3
