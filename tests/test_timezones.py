"""The compiled zone table (``local_table``, used by the Cython core through a bisect over
boundaries) must give exactly what the zoneinfo-based reference (``wall_to_utc_us``) gives, with
the fold=0 rule (the offset in force before a transition) for skipped and repeated wall times."""
from __future__ import annotations

import datetime as dt
from bisect import bisect_right

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_fast.timezones import get_zone, local_table, wall_to_utc_us

EPOCH = dt.datetime(1970, 1, 1)
US = 1_000_000
HOUR = 3600 * US
INT64_MIN = -(1 << 63)

ZONES = [
    "America/New_York",
    "Europe/London",
    "Europe/Dublin",          # negative DST in the tzdata source
    "Australia/Lord_Howe",    # 30-minute DST shift
    "Pacific/Apia",           # skipped 2011-12-30 entirely
    "Pacific/Kiritimati",     # skipped 1994-12-31
    "Africa/Casablanca",      # many transitions (Ramadan suspensions)
    "America/Sao_Paulo",      # DST at midnight, southern hemisphere
    "Asia/Shanghai",
    "Asia/Kathmandu",         # +05:30 -> +05:45
    "Pacific/Chatham",        # +12:45 / +13:45
    "America/St_Johns",       # -03:30 / -02:30
    "Antarctica/Troll",       # +00 / +02 (two-hour DST)
    "Asia/Tehran",
]
FIXED = {"UTC": 0, "Z": 0, "Etc/UTC": 0, "+05:30": 5 * HOUR + 30 * 60 * US, "-08:00": -8 * HOUR,
         "+00:00": 0, "-00:30": -30 * 60 * US, "+14:00": 14 * HOUR}


def table_to_utc(name: str, wall_us: int) -> int:
    """What the core does: bisect the compiled boundaries, subtract that offset."""
    bounds, offsets = local_table(name)
    k = bisect_right(bounds, wall_us) - 1
    return wall_us - offsets[k]


def wall(*args) -> int:
    d = dt.datetime(*args) - EPOCH
    return (d.days * 86400 + d.seconds) * US + d.microseconds


def fold0_reference(name: str, wall_us: int) -> int:
    """Independent fold=0 conversion straight from zoneinfo."""
    naive = EPOCH + dt.timedelta(microseconds=wall_us)
    off = naive.replace(tzinfo=get_zone(name), fold=0).utcoffset()
    return wall_us - (off.days * 86400 + off.seconds) * US - off.microseconds


@pytest.mark.parametrize("name", ZONES)
def test_table_shape(name):
    bounds, offsets = local_table(name)
    assert len(bounds) == len(offsets) >= 2
    assert bounds[0] == INT64_MIN
    assert all(a < b for a, b in zip(bounds, bounds[1:])), "boundaries must be strictly increasing"
    assert all(a != b for a, b in zip(offsets, offsets[1:])), "consecutive offsets must differ"
    assert all(abs(o) < 24 * HOUR for o in offsets)


@pytest.mark.parametrize("name", ZONES)
def test_table_matches_zoneinfo_at_every_boundary(name):
    bounds, offsets = local_table(name)
    mismatches = []
    for k in range(1, len(bounds)):
        b = bounds[k]
        # The other edge of the gap/fold: the transition instant seen on the "after" clock and
        # on the "before" clock (one of them is the boundary itself).
        transition_utc = b - max(offsets[k - 1], offsets[k])
        edges = {b, transition_utc + offsets[k - 1], transition_utc + offsets[k]}
        probes = set()
        for e in edges:
            probes.update((e - HOUR, e - 1, e, e + 1, e + HOUR))
        for w in sorted(probes):
            got, want = table_to_utc(name, w), wall_to_utc_us(name, w)
            if got != want:
                mismatches.append((str(EPOCH + dt.timedelta(microseconds=w)), got - want))
    assert not mismatches, mismatches[:10]


@pytest.mark.parametrize("name", ZONES)
def test_reference_is_fold0_inside_probe_range(name):
    bounds, _ = local_table(name)
    for b in bounds[1:]:
        for w in (b - HOUR, b - 1, b, b + 1):
            if wall(1969, 1, 2) <= w < wall(2039, 12, 31):
                assert wall_to_utc_us(name, w) == fold0_reference(name, w)


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(ZONES),
       when=st.integers(min_value=wall(1969, 1, 1), max_value=wall(2039, 12, 31)))
def test_table_matches_zoneinfo_random(name, when):
    assert table_to_utc(name, when) == wall_to_utc_us(name, when) == fold0_reference(name, when)


@pytest.mark.parametrize("name", ["America/New_York", "Asia/Shanghai", "Europe/London"])
@pytest.mark.parametrize("when", [(1800, 6, 1), (1950, 12, 31, 23), (2050, 1, 1, 1), (2300, 7, 1)])
def test_outside_probe_range_uses_nearest_known_offset(name, when):
    w = wall(*when)
    assert table_to_utc(name, w) == wall_to_utc_us(name, w)


@pytest.mark.parametrize("name, offset", list(FIXED.items()))
def test_fixed_offsets(name, offset):
    bounds, offsets = local_table(name)
    assert bounds == (INT64_MIN,)
    assert offsets == (offset,)
    for w in (wall(1970, 1, 1), wall(2024, 3, 10, 2, 30), wall(1, 1, 1), wall(9999, 12, 31)):
        assert wall_to_utc_us(name, w) == w - offset == table_to_utc(name, w)


def test_new_york_dst_edges_fold0():
    ny = "America/New_York"
    # Spring forward 2024-03-10 02:00 EST -> 03:00 EDT: 02:30 does not exist; fold=0 uses EST.
    assert wall_to_utc_us(ny, wall(2024, 3, 10, 2, 30)) == wall(2024, 3, 10, 7, 30)
    assert table_to_utc(ny, wall(2024, 3, 10, 2, 30)) == wall(2024, 3, 10, 7, 30)
    assert table_to_utc(ny, wall(2024, 3, 10, 3, 0)) == wall(2024, 3, 10, 7, 0)
    assert table_to_utc(ny, wall(2024, 3, 10, 1, 59, 59, 999999)) == wall(2024, 3, 10, 6, 59, 59, 999999)
    # Fall back 2024-11-03 02:00 EDT -> 01:00 EST: 01:30 happens twice; fold=0 uses EDT.
    assert wall_to_utc_us(ny, wall(2024, 11, 3, 1, 30)) == wall(2024, 11, 3, 5, 30)
    assert table_to_utc(ny, wall(2024, 11, 3, 1, 30)) == wall(2024, 11, 3, 5, 30)
    assert table_to_utc(ny, wall(2024, 11, 3, 1, 59, 59, 999999)) == wall(2024, 11, 3, 5, 59, 59, 999999)
    assert table_to_utc(ny, wall(2024, 11, 3, 2, 0)) == wall(2024, 11, 3, 7, 0)


def test_shanghai_is_utc_plus_8():
    assert table_to_utc("Asia/Shanghai", wall(2024, 11, 3, 1, 30)) == wall(2024, 11, 2, 17, 30)
    assert wall_to_utc_us("Asia/Shanghai", wall(2024, 11, 3, 1, 30)) == wall(2024, 11, 2, 17, 30)


def test_apia_skipped_day():
    apia = "Pacific/Apia"
    # 2011-12-29 23:59:59 -10:00 was followed by 2011-12-31 00:00:00 +14:00.
    assert table_to_utc(apia, wall(2011, 12, 29, 23, 59, 59)) == wall(2011, 12, 30, 9, 59, 59)
    assert table_to_utc(apia, wall(2011, 12, 31, 0, 0)) == wall(2011, 12, 30, 10, 0)
    # Wall times on the skipped day use the offset before the jump (fold=0).
    assert table_to_utc(apia, wall(2011, 12, 30, 12, 0)) == wall_to_utc_us(apia, wall(2011, 12, 30, 12, 0))


@pytest.mark.parametrize("name", ["Not/AZone", "+24:00", "+5:30", "05:30", "", "UTC+8"])
def test_bad_zone_names(name):
    with pytest.raises(ValueError):
        get_zone(name)
