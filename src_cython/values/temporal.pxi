# Dates and times: MySQL/TiDB DATE, DATETIME/TIMESTAMP and TIME text to days and microseconds,
# the civil calendar both ways, and the UTC offset of a zone at a wall-clock time.

cdef inline int two(const uint8_t* p) noexcept nogil:
    if not (48 <= p[0] <= 57 and 48 <= p[1] <= 57):
        return -1
    return (p[0] - 48) * 10 + (p[1] - 48)


cdef int64_t days_from_civil(int64_t y, int m, int d) noexcept nogil:
    cdef int64_t era, yoe, doy, doe
    if m <= 2:
        y -= 1
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


cdef int parse_ymd(const uint8_t* p, int64_t* days, const char** why) noexcept nogil:
    cdef int y1 = two(p), y2 = two(p + 2), m = two(p + 5), d = two(p + 8), y, mdays
    if y1 < 0 or y2 < 0 or m < 0 or d < 0 or p[4] != 45 or p[7] != 45:
        why[0] = "invalid date"
        return -1
    y = y1 * 100 + y2
    if y == 0 or m == 0 or d == 0:
        why[0] = "zero date has no exact value"
        return -1
    if m > 12:
        why[0] = "invalid date"
        return -1
    mdays = 31
    if m == 4 or m == 6 or m == 9 or m == 11:
        mdays = 30
    elif m == 2:
        mdays = 29 if (y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)) else 28
    if d > mdays:
        why[0] = "invalid date"
        return -1
    days[0] = days_from_civil(y, m, d)
    return 0


cdef int parse_frac_us(const uint8_t* p, const uint8_t* e, int64_t* us) noexcept nogil:
    """'.f{1,6}' to µs; p at '.'."""
    cdef int nd = 0
    cdef int64_t v = 0
    p += 1
    while p < e:
        if not (48 <= p[0] <= 57) or nd == 6:
            return -1
        v = v * 10 + (p[0] - 48)
        nd += 1
        p += 1
    if nd == 0:
        return -1
    while nd < 6:
        v *= 10
        nd += 1
    us[0] = v
    return 0


cdef int parse_date_days(const uint8_t* p, Py_ssize_t n, int64_t* days, const char** why) noexcept nogil:
    if n != 10:
        why[0] = "invalid date"
        return -1
    return parse_ymd(p, days, why)


cdef inline int _seconds_fraction(const uint8_t* p, Py_ssize_t n, int64_t* frac,
                                  const char** why) noexcept nogil:
    """The '.ffffff' after a datetime text's seconds (p[19:n]) in microseconds."""
    if p[19] != 46 or parse_frac_us(p + 19, p + n, frac) < 0:
        why[0] = "invalid datetime"
        return -1
    return 0


cdef int parse_datetime_us(const uint8_t* p, Py_ssize_t n, int64_t* us, const char** why) noexcept nogil:
    cdef int64_t days, frac = 0
    cdef int hh, mi, ss
    if n == 10:
        if parse_ymd(p, &days, why) < 0:
            return -1
        us[0] = days * <int64_t>86400000000LL
        return 0
    if n < 19 or p[10] != 32 or p[13] != 58 or p[16] != 58:
        why[0] = "invalid datetime"
        return -1
    if parse_ymd(p, &days, why) < 0:
        return -1
    hh = two(p + 11)
    mi = two(p + 14)
    ss = two(p + 17)
    if hh < 0 or mi < 0 or ss < 0:
        why[0] = "invalid datetime"
        return -1
    if hh > 23 or mi > 59 or ss > 59:
        why[0] = "invalid time of day"
        return -1
    if n > 19 and _seconds_fraction(p, n, &frac, why) < 0:
        return -1
    us[0] = (days * 86400 + hh * 3600 + mi * 60 + ss) * 1000000 + frac
    return 0


# The minute a DATETIME/TIMESTAMP text starts with, from the last text parsed: the rows of a
# change stream carry times close to their commit time, so most values share their
# "YYYY-MM-DD HH:MM" with the one before and only the seconds are left to read.
cdef struct WallCache:
    uint64_t head0          # the first 16 bytes of the last text that parsed, as two words
    uint64_t head1
    int64_t minute_us       # the wall-clock minute they name, in µs
    int filled


cdef int parse_datetime_cached(WallCache* wc, const uint8_t* p, Py_ssize_t n, int64_t* us,
                               const char** why) noexcept nogil:
    """parse_datetime_us, with the same values and reasons, reading a cached minute's prefix once."""
    cdef int ss
    cdef int64_t frac = 0
    if n >= 19 and wc.filled and load_le64(p) == wc.head0 and load_le64(p + 8) == wc.head1:
        # the prefix (date, hour and minute, separators included) already proved valid
        ss = two(p + 17)
        if p[16] != 58 or ss < 0:
            why[0] = "invalid datetime"
            return -1
        if ss > 59:
            why[0] = "invalid time of day"
            return -1
        if n > 19 and _seconds_fraction(p, n, &frac, why) < 0:
            return -1
        us[0] = wc.minute_us + ss * 1000000 + frac
        return 0
    if parse_datetime_us(p, n, us, why) < 0:
        return -1
    if n >= 19:
        wc.head0 = load_le64(p)
        wc.head1 = load_le64(p + 8)
        wc.minute_us = us[0] - (two(p + 17) * 1000000 + (us[0] % 1000000 + 1000000) % 1000000)
        wc.filled = 1
    return 0


cdef int parse_time_us(const uint8_t* p, Py_ssize_t n, int64_t* us, const char** why) noexcept nogil:
    cdef const uint8_t* e = p + n
    cdef int neg = 0, hd = 0, mi, ss
    cdef int64_t hh = 0, frac = 0
    if p < e and p[0] == 45:
        neg = 1
        p += 1
    while p < e and 48 <= p[0] <= 57 and hd < 4:
        hh = hh * 10 + (p[0] - 48)
        hd += 1
        p += 1
    if hd == 0 or hd > 3 or e - p < 6 or p[0] != 58 or p[3] != 58:
        why[0] = "invalid time"
        return -1
    mi = two(p + 1)
    ss = two(p + 4)
    if mi < 0 or ss < 0:
        why[0] = "invalid time"
        return -1
    if hh > 838 or mi > 59 or ss > 59:
        why[0] = "time out of range"
        return -1
    p += 6
    if p < e:
        if p[0] != 46 or parse_frac_us(p, e, &frac) < 0:
            why[0] = "invalid time"
            return -1
    us[0] = (hh * 3600 + mi * 60 + ss) * 1000000 + frac
    if neg:
        us[0] = -us[0]
    return 0


cdef void civil_from_days(int64_t days, int* y, int* m, int* d) noexcept nogil:
    cdef int64_t z = days + 719468, era, doe, yoe, yy, doy, mp
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    yy = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d[0] = <int>(doy - (153 * mp + 2) // 5 + 1)
    m[0] = <int>(mp + 3 if mp < 10 else mp - 9)
    y[0] = <int>(yy + (1 if m[0] <= 2 else 0))


cdef inline int64_t zone_offset(const int64_t* bounds, const int64_t* offsets, Py_ssize_t n,
                                int64_t wall) noexcept nogil:
    """The offset in force at `wall`: bounds[k] is where offsets[k] starts (bounds sorted, n >= 1)."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if bounds[mid] <= wall:
            lo = mid
        else:
            hi = mid
    return offsets[lo]
