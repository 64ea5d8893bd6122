"""The core's DecodeError against the twin's for the same input (shared by the test files)."""
import pytest

import ticdc_fast


def same_error_as_twin(decode, impl):
    """``decode(impl)`` and ``decode("python")`` both raise a DecodeError with the same message
    index, byte offset, column and reason; the core's error is returned."""
    with pytest.raises(ticdc_fast.DecodeError) as got:
        decode(impl)
    with pytest.raises(ticdc_fast.DecodeError) as want:
        decode("python")
    g, w = got.value, want.value
    assert (g.message_index, g.byte_offset, g.column, g.reason) == (w.message_index, w.byte_offset, w.column, w.reason)
    return g
