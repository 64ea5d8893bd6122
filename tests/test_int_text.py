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
