"""Differential fuzzing of the simple protocol: a mutated message decodes to the same rows in both
implementations, or raises DecodeError for the same message in both — never a crash or a hang."""
from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ticdc_fast
from conftest import mutate
from ticdc_fast import _impl
from ticdc_fast.testing import SimpleEncoder, simple_changefeed

pytestmark = pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")

_EVENTS = simple_changefeed(10, seed=5)
_BASE = {enc: [v for _, v in SimpleEncoder(enc).encode(_EVENTS)] for enc in ("json", "avro")}
_INTERESTING = [b'"', b"\\", b"{", b"}", b",", b":", b"-", b"0", b"\x16", b"\x00", b"\x01", b"\x7f",
                b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b"\x81", b"null", b"1e999", b"\\u0000"]


def _mutate(data: bytes, rnd: random.Random, n: int) -> bytes:
    return mutate(data, rnd, n, _INTERESTING, max_delete=4)


def _outcome(impl, enc, values):
    try:
        return ticdc_fast.SimpleDecoder(enc, implementation=impl).decode(None, values)
    except ticdc_fast.DecodeError as exc:
        return ("error", exc.message_index, exc.part, exc.byte_offset, exc.column, exc.reason)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), enc=st.sampled_from(["json", "avro"]), n=st.integers(1, 3))
def test_mutated_simple_messages_agree(seed, enc, n):
    rnd = random.Random(seed)
    values = list(_BASE[enc])
    i = rnd.randrange(1, len(values))   # keep the BOOTSTRAP intact most of the time
    values[i] = _mutate(values[i], rnd, n)
    a = _outcome("cython", enc, values)
    b = _outcome("python", enc, values)
    if isinstance(a, tuple) or isinstance(b, tuple):
        # the same message, part, byte offset, column and reason
        assert isinstance(a, tuple) and isinstance(b, tuple) and a == b, (a, b)
    else:
        assert a.equals(b)
