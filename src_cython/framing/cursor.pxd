# The cursor and error record every parser shares, and the return codes of the nogil code:
# declarations only (included first by _core.pyx); their functions are in cursor.pxi.

cdef struct Cur:
    const uint8_t* start
    const uint8_t* pos
    const uint8_t* end


cdef enum:
    PART_NONE = 0
    PART_KEY = 1
    PART_VALUE = 2


# What the nogil message loops return.  RUN_FAIL with `err.failed` set is bad input; without it,
# an allocation failed.
cdef enum:
    RUN_FAIL = -1
    RUN_OK = 0
    RUN_STOP = 1      # simple protocol: a message the Python front end handles first
    RUN_REREAD = 2  # simple protocol: the first, streaming reading of a message met what
                        # only the row image decides in the twin's order (a repeated column, a
                        # value that fails or stops): SimplePlan._read_again, the one second
                        # reading (never leaves _message)


# What every nogil function that takes an Err returns when it fails.  The two must stay apart all
# the way up: a caller that keeps an error for later (a deferred conversion error) reads the Err,
# which an allocation failure never fills.
cdef enum:
    RC_FAILED = -1        # an error is recorded in the Err (bad input)
    RC_NO_MEMORY = -2     # an allocation failed; the Err is untouched


# Filled inside nogil code; turned into DecodeError (raise_decode_error) after the GIL is back.
cdef struct Err:
    int failed
    Py_ssize_t msg
    Py_ssize_t offset
    int part
    int has_column
    Py_ssize_t column_len
    char column[256]
    char reason[256]
