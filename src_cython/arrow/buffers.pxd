# The column builders: declarations only (included first by _core.pyx); their functions,
# reserve once per batch, append unchecked, grow in a cold path, are in buffers.pxi.

cdef struct Buf:
    uint8_t* data
    Py_ssize_t len
    Py_ssize_t cap


# Output blocks return here when pyarrow releases them, so the next batch writes into memory that
# is already mapped (a fresh page costs a kernel fault and zeroing).  Only touched with the GIL
# held: in _Owned.__dealloc__ and an exported batch's release, in the builders' *_init, which run before the nogil loops, and
# when a column set is freed.
#
# Each block remembers the column it was written for: its column set's `PoolOwner` and the
# column's index.  A column takes back its own block first (its pages are the ones its last
# batch touched); else the smallest that fits of those no busy column set owns (a finished or
# idle decoder's, a capture file's); else a fresh one.  Taken by size alone, two decoders of one
# process taking turns (generic and typed, or two topics) took each other's blocks, the one
# robbed took the next, and whatever came from a smaller column faulted in its new pages:
# 400-1,100 faults per batch of the Avro protocol's `orders10` with a generic decoder beside it.
# A column set is busy while it reserved within the last POOL_BUSY reserves of the process: a
# few decoders taking turns keep their blocks, one left idle does not hoard the pool.
cdef struct PoolOwner:
    int alive            # the column set still exists
    Py_ssize_t refs      # the column set's own reference + one per exported block or batch
    Py_ssize_t last      # pool_clock at its last reserve


# Validity bitmap kept alongside a column: bits are set for valid rows, and the bitmap is only
# written once the column has a null (take_validity hands pyarrow None before that).
cdef struct Bits:
    Buf b
    Py_ssize_t n
    Py_ssize_t nulls
    Py_ssize_t rows_hint      # rows reserved for the batch (colset_reserve): the bitmap's size
                              # once a null comes


# Variable-width column (string/binary): int32 offsets, data, validity.  Leading null rows are
# only counted (`lazy`) and written when the first value arrives or at export, so a column that
# stays null (DDL text on DML rows, claim-check locations...) costs nothing per row.
cdef struct VarCol:
    Buf offsets
    Buf data
    Bits valid
    Py_ssize_t lazy


# Fixed-width column: `width` bytes per value; width 0 means a bit-packed boolean.
cdef struct FixCol:
    Buf data
    Bits valid
    int width
    Py_ssize_t n
    Py_ssize_t lazy         # leading null rows not written yet (as VarCol.lazy)
