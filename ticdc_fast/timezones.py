"""Source time zones for TIMESTAMP values.

TiCDC renders TIMESTAMP columns as wall-clock text in its *server* time zone and does not say
which zone that was (open protocol).  The decoder is told the zone and turns the wall clock back
into a UTC instant.  Ambiguous or skipped wall-clock times resolve like Python's ``fold=0``: the
offset in force *before* the transition is used.

The Cython core cannot call ``zoneinfo`` without the GIL, so each zone is compiled once into a
table of local-time boundaries and offsets (``local_table``); the pure-Python twin uses
``zoneinfo`` directly (``wall_to_utc_us``).  Tests check both agree across DST edges.
"""
from __future__ import annotations

import datetime as _dt
import functools
import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

_EPOCH = _dt.datetime(1970, 1, 1)
_US = 1_000_000
_OFFSET_RE = re.compile(r"([+-])([0-9]{2}):([0-9]{2})")
# The shape of every IANA zone name (``Asia/Shanghai``, ``Etc/GMT+5``, ``America/Argentina/Salta``).
# Names come from message content, and zoneinfo treats them as file paths: anything else (a
# directory such as ``America``, ``..``, NUL bytes, a component too long for the file system,
# non-ASCII) must fail as "unknown zone" before the file system is asked.
_ZONE_NAME_RE = re.compile(r"[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)*")
_ZONE_NAME_MAX = 255
# Probe range: TiDB TIMESTAMP values lie in 1970..2038 (UTC); outside it the nearest offset holds.
_PROBE_FIRST_YEAR = 1969
_PROBE_LAST_YEAR = 2040


@functools.lru_cache(maxsize=64)
def get_zone(name: str) -> _dt.tzinfo:
    """Parse a zone name: an IANA name (``Asia/Shanghai``), ``UTC``/``Z`` or ``±HH:MM``."""
    if not isinstance(name, str):
        raise ValueError(f"unknown time zone {_shown(name)}")
    if name in ("UTC", "Z", "utc", "Etc/UTC"):
        return _dt.timezone.utc
    m = _OFFSET_RE.fullmatch(name)
    if m:
        minutes = int(m.group(2)) * 60 + int(m.group(3))
        if minutes >= 24 * 60:
            raise ValueError(f"time zone offset out of range: {name!r}")
        return _dt.timezone(_dt.timedelta(minutes=-minutes if m.group(1) == "-" else minutes))
    if len(name) > _ZONE_NAME_MAX or not _ZONE_NAME_RE.fullmatch(name):
        raise ValueError(f"unknown time zone {_shown(name)}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        # OSError: a name that is a tzdata directory (IsADirectoryError) or unreadable
        raise ValueError(f"unknown time zone {_shown(name)}") from exc


def _shown(name) -> str:
    """A zone name for an error message: bounded, whatever the message sent."""
    text = repr(name)
    return text if len(text) <= 80 else text[:60] + f"... ({len(name)} characters)"


def _offset_us_at_utc(zone: _dt.tzinfo, utc_seconds: int) -> int:
    when = _dt.datetime.fromtimestamp(utc_seconds, _dt.timezone.utc)
    return int(zone.utcoffset(when.astimezone(zone)).total_seconds() * _US)


@functools.lru_cache(maxsize=64)
def local_table(name: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(boundaries, offsets)`` in microseconds: a wall clock ``L`` (µs since 1970-01-01 as if UTC)
    uses ``offsets[k]`` for the largest ``k`` with ``boundaries[k] <= L`` (``boundaries[0]`` is -inf).
    """
    zone = get_zone(name)
    if isinstance(zone, _dt.timezone):
        return ((-(1 << 63),), (int(zone.utcoffset(None).total_seconds() * _US),))
    start = int((_dt.datetime(_PROBE_FIRST_YEAR, 1, 1) - _EPOCH).total_seconds())
    stop = int((_dt.datetime(_PROBE_LAST_YEAR, 1, 1) - _EPOCH).total_seconds())
    step = 24 * 3600  # no zone has changed offset twice within a day
    transitions = []  # (utc_second, offset_before, offset_after)
    prev = _offset_us_at_utc(zone, start)
    t = start
    while t < stop:
        nxt = t + step
        off = _offset_us_at_utc(zone, nxt)
        if off != prev:
            lo, hi = t, nxt  # offset(lo) == prev, offset(hi) != prev
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if _offset_us_at_utc(zone, mid) == prev:
                    lo = mid
                else:
                    hi = mid
            transitions.append((hi, prev, _offset_us_at_utc(zone, hi)))
            prev = _offset_us_at_utc(zone, hi)
            t = hi
            continue
        t = nxt
    boundaries = [-(1 << 63)]
    offsets = [_offset_us_at_utc(zone, start)]
    for utc_s, before, after in transitions:
        boundaries.append(utc_s * _US + max(before, after))
        offsets.append(after)
    return tuple(boundaries), tuple(offsets)


def wall_to_utc_us(name: str, wall_us: int) -> int:
    """Reference conversion through zoneinfo: wall clock (µs, naive) in zone ``name`` → UTC µs."""
    zone = get_zone(name)
    if isinstance(zone, _dt.timezone):
        return wall_us - int(zone.utcoffset(None).total_seconds() * _US)
    naive = _EPOCH + _dt.timedelta(microseconds=wall_us)
    if not (_PROBE_FIRST_YEAR <= naive.year < _PROBE_LAST_YEAR):
        # Outside the compiled table the core keeps the nearest known offset; so does the twin.
        boundaries, offsets = local_table(name)
        return wall_us - (offsets[0] if naive.year < _PROBE_FIRST_YEAR else offsets[-1])
    offset = naive.replace(tzinfo=zone, fold=0).utcoffset()
    return wall_us - int(offset.total_seconds() * _US)
