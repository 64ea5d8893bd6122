"""The core's MyDecimal text parser (src_cython/values/numbers.pxi `decimal_parse`: DECIMAL
values of the open and simple protocols into decimal128/decimal256 limbs) against Python's
integers.  Values whose unscaled digits fit one 64-bit word take a path of their own, so the
cases cross that boundary (19 digits) from both sides, with leading zeros, both signs, every
scale and precision edge, and the refusals."""
from __future__ import annotations

import importlib
import random

import pytest

pytestmark = pytest.mark.cython


def _expected(text: str, precision: int, scale: int):
    """What decimal_parse must answer, by the rules it documents (MyDecimal text, the fraction
    padded to `scale` or cut where only zeros are cut, at most `precision` digits)."""
    neg = text.startswith("-")
    body = text[1:] if neg else text
    whole, _, frac = body.partition(".")
    if frac[scale:].strip("0"):
        return "decimal does not fit the target scale exactly"
    unscaled = int(whole + frac[:scale].ljust(scale, "0"))
    if unscaled and len(str(unscaled)) > precision:
        return "decimal exceeds the target precision"
    return -unscaled if neg else unscaled


def _texts():
    rnd = random.Random(29)
    for int_len in range(1, 40):
        for frac_len in (0, 1, 2, 6, 12, 19):
            for _ in range(6):
                whole = str(rnd.randint(0, 10 ** int_len - 1)).rjust(int_len, "0") if rnd.random() < 0.3 \
                    else str(rnd.randint(10 ** (int_len - 1), 10 ** int_len - 1))
                frac = "".join(rnd.choice("0123456789") for _ in range(frac_len))
                if frac and rnd.random() < 0.3:
                    frac = frac[: frac_len // 2].ljust(frac_len, "0")       # trailing zeros
                text = whole + ("." + frac if frac else "")
                yield text
                yield "-" + text
    for edge in ("0", "-0", "0.00", "-0.00", "000", "9999999999999999999", "18446744073709551615",
                 "18446744073709551616", "-9999999999999999999", "99999999999999999.99", "1.5", "-1.50"):
        yield edge


@pytest.mark.parametrize("limbs", [2, 4])
def test_agrees_with_python_across_the_one_word_boundary(limbs):
    core = importlib.import_module("ticdc_fast._core")
    top = 38 if limbs == 2 else 76
    checked = 0
    for text in _texts():
        for scale in (0, 1, 2, 4, 6, 10, 18, 19, 30):
            for precision in sorted({1, 5, 12, 18, 19, 20, top, max(scale, 1)}):
                if precision < scale or precision > top:
                    continue
                want = _expected(text, precision, scale)
                assert core._decimal_parse(text.encode(), precision, scale, limbs) == want, (text, precision, scale)
                checked += 1
    assert checked > 50_000


@pytest.mark.parametrize("text", ["", "-", ".5", "1.", "1e5", "1.2.3", "+1", " 1", "1 ", "--1", "0x10"])
def test_refuses_what_is_not_mydecimal_text(text):
    core = importlib.import_module("ticdc_fast._core")
    assert core._decimal_parse(text.encode(), 20, 2, 2) == "invalid decimal"
