"""Helpers the benchmark scripts share."""
from __future__ import annotations

import os
import time


def pin_one_core() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})


def best_of(fn, repeat: int):
    """(fastest seconds, last result) over ``repeat`` runs."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out
