"""Terminal helpers shared by the command line (``cli``) and the demo (``demo``)."""
from __future__ import annotations

import os
import sys
import time


def best_of(n, fn):
    """Run ``fn`` n times; return the fastest wall time in seconds and the last result."""
    best, out = float("inf"), None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def progress(total=None, unit="msg", desc=""):
    """A tqdm bar on stderr, silenced by TICDC_FAST_NO_PROGRESS=1."""
    from tqdm import tqdm
    return tqdm(total=total, unit=unit, unit_scale=True, desc=desc, file=sys.stderr,
                disable=os.environ.get("TICDC_FAST_NO_PROGRESS") == "1")
