"""Output buffers released by pyarrow go back to the core's pool and are reused by later batches:
a reused block must never alias memory that a live batch still points at, and the limit works."""
from __future__ import annotations

import gc

import pyarrow as pa
import pytest

import ticdc_fast
from ticdc_fast import _impl
from ticdc_fast.testing import OpenEncoder, realistic_changefeed

pytestmark = pytest.mark.skipif(_impl.core is None, reason="TICDC_FAST_PURE=1: the pool is in the Cython core")


def _batches():
    msgs = OpenEncoder(flavor="tiflow").encode(realistic_changefeed(3000, seed=3, flavor="tiflow"))
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    third = len(keys) // 3
    return [(pa.array(keys[a:b], pa.binary()), pa.array(values[a:b], pa.binary()))
            for a, b in ((0, third), (third, 2 * third), (2 * third, len(keys)))]


def test_reused_blocks_never_touch_live_batches():
    batches = _batches()
    want = [ticdc_fast.OpenDecoder(implementation="python").decode(k, v) for k, v in batches]
    old = ticdc_fast.set_buffer_pool_limit(256 << 20)
    try:
        dec = ticdc_fast.OpenDecoder(implementation="cython")
        first = dec.decode(*batches[0])
        snapshot = first.to_pylist()
        for _ in range(3):                       # cycle blocks through the pool
            out = dec.decode(*batches[1])
            assert out.equals(want[1])
            del out
            gc.collect()
        assert _impl.core.buffer_pool_bytes() > 0
        third = dec.decode(*batches[2])          # may reuse blocks, never `first`'s
        assert first.to_pylist() == snapshot and first.equals(want[0])
        assert third.equals(want[2])
    finally:
        ticdc_fast.set_buffer_pool_limit(old)


def test_limit_zero_empties_and_disables_the_pool():
    batches = _batches()
    old = ticdc_fast.set_buffer_pool_limit(256 << 20)
    try:
        out = ticdc_fast.OpenDecoder(implementation="cython").decode(*batches[0])
        del out
        gc.collect()
        assert _impl.core.buffer_pool_bytes() > 0
        assert ticdc_fast.set_buffer_pool_limit(0) == 256 << 20
        assert _impl.core.buffer_pool_bytes() == 0
        out = ticdc_fast.OpenDecoder(implementation="cython").decode(*batches[0])
        del out
        gc.collect()
        assert _impl.core.buffer_pool_bytes() == 0
    finally:
        ticdc_fast.set_buffer_pool_limit(old)



def test_blocks_go_back_to_their_column_until_their_decoder_idles_or_goes():
    """A busy decoder's blocks wait for its own columns (a decoder taking turns with it takes none
    of them); once it has been idle for a few batches of others, or is gone, they are anyone's."""
    batches = _batches()
    typed = ticdc_fast.infer_open_schema(*batches[0], table="shop.orders")
    old = ticdc_fast.set_buffer_pool_limit(0)            # start from an empty pool
    try:
        ticdc_fast.set_buffer_pool_limit(256 << 20)
        first = ticdc_fast.OpenDecoder(implementation="cython")
        out = first.decode(*batches[0])
        del out
        gc.collect()
        mine = sorted(_impl.core._buffer_pool_blocks())
        owner = mine[0][1]
        assert mine and owner != 0 and all(o == owner for _, o in mine)

        def first_blocks():
            return sorted(b for b in _impl.core._buffer_pool_blocks() if b[1] == owner)

        other = ticdc_fast.OpenDecoder(implementation="cython", table="shop.orders", schema=typed)
        kept = [other.decode(*batches[1]) for _ in range(2)]             # outputs kept: no own blocks
        assert first_blocks() == mine                                    # busy: none taken
        kept += [other.decode(*batches[1]) for _ in range(4)]
        assert len(first_blocks()) < len(mine)                           # idle: taken
        rest = first_blocks()
        del first
        gc.collect()
        assert all(o != owner for _, o in _impl.core._buffer_pool_blocks())
        pooled = _impl.core.buffer_pool_bytes()
        again = ticdc_fast.OpenDecoder(implementation="cython").decode(*batches[0])
        assert not rest or _impl.core.buffer_pool_bytes() < pooled       # reused
        assert again.equals(ticdc_fast.OpenDecoder(implementation="python").decode(*batches[0]))
        assert all(batch.num_rows > 0 for batch in kept)
    finally:
        ticdc_fast.set_buffer_pool_limit(old)
