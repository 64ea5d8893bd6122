"""Small pieces the realistic changefeed generators share."""
from __future__ import annotations

import time


class WallClock:
    """Cached 'YYYY-MM-DD HH:MM:SS' text of a UTC millisecond timestamp (generators format the
    same second many times)."""

    def __init__(self, limit: int = 100_000):
        self._cache: dict[int, str] = {}
        self._limit = limit

    def __call__(self, ms: int) -> str:
        s = ms // 1000
        txt = self._cache.get(s)
        if txt is None:
            if len(self._cache) > self._limit:
                self._cache.clear()
            txt = self._cache[s] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(s))
        return txt
