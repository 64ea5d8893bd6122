"""Differential fuzzing: mutated messages either decode to the same rows in both
implementations or raise DecodeError for the same message in both — never a crash or hang."""
from __future__ import annotations

import random

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pytest

import ticdc_fast
from conftest import mutate
from ticdc_fast import _impl
from ticdc_fast.testing import OpenEncoder, realistic_changefeed

# Differential: needs the core, which TICDC_FAST_PURE=1 deliberately hides.
pytestmark = pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")

_BASE = {flavor: OpenEncoder(flavor=flavor, max_batch_size=3).encode(
    realistic_changefeed(12, seed=11, flavor=flavor)) for flavor in ("tiflow", "ticdc")}
_SCHEMA = ticdc_fast.infer_open_schema([k for k, _ in _BASE["tiflow"]], [v for _, v in _BASE["tiflow"]],
                                       table="shop.orders")
_INTERESTING = [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b"-", b"0", b"9", b".", b"e",
                b"\\u", b"\\ud800", b"\xff", b"\x00", b"null", b"true", b"1e999", b"-0", b"\\x",
                b"\x7f\xff\xff\xff\xff\xff\xff\xff", b"\x00\x00\x00\x00\x00\x00\x00\x00"]


def _mutate(data: bytes, rnd: random.Random, n: int) -> bytes:
    return mutate(data, rnd, n, _INTERESTING, max_delete=8)


def _outcome(impl, keys, values, **kw):
    try:
        return ticdc_fast.OpenDecoder(implementation=impl, **kw).decode(keys, values)
    except ticdc_fast.DecodeError as exc:
        assert isinstance(exc, ValueError)
        assert exc.message_index is None or 0 <= exc.message_index < len(keys)
        return ("error", exc.message_index, exc.part, exc.byte_offset, exc.column, exc.reason)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2 ** 32 - 1), flavor=st.sampled_from(["tiflow", "ticdc"]),
       which=st.sampled_from(["key", "value", "both"]), n=st.integers(1, 4),
       typed=st.booleans())
def test_mutated_messages_agree(seed, flavor, which, n, typed):
    rnd = random.Random(seed)
    msgs = _BASE[flavor]
    i = rnd.randrange(len(msgs))
    keys = [k for k, _ in msgs]
    values = [v for _, v in msgs]
    if which in ("key", "both"):
        keys[i] = _mutate(keys[i], rnd, n)
    if which in ("value", "both"):
        values[i] = _mutate(values[i], rnd, n)
    kw = {"table": "shop.orders", "schema": _SCHEMA} if typed else {}
    a = _outcome("cython", keys, values, **kw)
    b = _outcome("python", keys, values, **kw)
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b
    else:
        assert a.equals(b)


def test_every_truncation_of_a_batch_raises_cleanly():
    key, value = _BASE["ticdc"][1]
    for impl in ("cython", "python"):
        dec = ticdc_fast.OpenDecoder(implementation=impl)
        for cut in range(len(key)):
            try:
                dec.decode([key[:cut]], [value])
            except ticdc_fast.DecodeError as exc:
                assert exc.message_index == 0
            else:
                raise AssertionError(f"{impl}: key cut at {cut} decoded")
        for cut in range(len(value)):
            try:
                dec.decode([key], [value[:cut]])
            except ticdc_fast.DecodeError as exc:
                assert exc.message_index == 0 and exc.byte_offset is not None
                assert 0 <= exc.byte_offset <= cut
            else:
                raise AssertionError(f"{impl}: value cut at {cut} decoded")
