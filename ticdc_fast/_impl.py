"""Selects the implementation: the Cython core when it is built, the pure-Python twin otherwise.

``TICDC_FAST_PURE=1`` forces the twin (same API, same output).
"""
from __future__ import annotations

import os

PURE_FORCED = os.environ.get("TICDC_FAST_PURE", "").strip() not in ("", "0", "false", "no")

core = None
if not PURE_FORCED:
    try:
        from . import _core as core  # type: ignore[no-redef]
    except ImportError:  # no compiler at install time: the twin serves
        core = None

IMPLEMENTATION = "cython" if core is not None else "python"


def resolve(implementation: str | None) -> str:
    """``None``/"auto" → the default; "cython" fails loudly if the extension is missing."""
    if implementation in (None, "auto"):
        return IMPLEMENTATION
    if implementation == "python":
        return "python"
    if implementation == "cython":
        if core is None:
            raise ImportError("the ticdc_fast._core extension is not available"
                              + (" (TICDC_FAST_PURE is set)" if PURE_FORCED else ""))
        return "cython"
    raise ValueError(f"implementation must be 'auto', 'cython' or 'python', not {implementation!r}")


def set_buffer_pool_limit(nbytes: int) -> int:
    """Bytes of released output buffers the Cython core keeps for the next batches (default
    256 MiB; 0 frees them and turns reuse off).  Returns the previous limit (0 without the core).

    Reused blocks are already mapped, which saves the kernel's page zeroing on every batch."""
    if core is None:
        return 0
    return core.set_buffer_pool_limit(int(nbytes))

