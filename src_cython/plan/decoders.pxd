# The decoder model: declarations only (included first by _core.pyx); the apply functions
# are in decoders.pxi.

# Typed output: one per branch of a column with a target.
cdef enum FieldDecoder:
    DEC_CHECK = 0       # read and checked, written nowhere (no target, or a row not output)
    DEC_UNLISTED = 1    # a column the target schema lacks: checked, its place kept for
                        # extra_columns="error" (Avro protocol)
    DEC_NULL = 2        # the null branch: a null in the target
    DEC_INT = 3         # long/int of an integer column into an integer target (ranges checked)
    DEC_F64 = 4         # DOUBLE (double) or FLOAT (float) column into float64: cannot fail
    DEC_F32 = 5         # FLOAT (float) column into float32: exact, cannot fail
    DEC_BLOB = 6        # BLOB bytes into a binary target: the bytes themselves
    DEC_STR = 7         # a text column's string into a string target: UTF-8 checked as a value
    DEC_DECIMAL = 8     # DECIMAL bytes into decimal128: the limbs at once when the scale is the
                        # target's and the digits fit its precision, else by the text rules
    DEC_WALL = 9        # a DATE/DATETIME/TIMESTAMP string into a timestamp (TIMESTAMP made UTC)
    DEC_TEXT_RULES = 10 # anything else: the value as the row image would hold it, converted by
                        # the target's converter (plan/core.pxi)
    DEC_NUMBER = 11     # a number (or BIT bytes) of another column type or into another writer:
                        # the value where the writer takes it (decode_int_value / decode_real_value),
                        # else its text by the converters
    DEC_DECIMAL_TEXT = 12  # a DECIMAL's string (simple protocol) into decimal128/256


# Generic output: one per branch of every column; each writes the value's text as the next
# entry of the map being filled.
cdef enum GenericDecoder:
    GEN_RENDER = 0      # the value as the row image would hold it, rendered (PlanCore._render)
    GEN_NULL = 1        # the null branch: a null entry
    GEN_INT = 2         # an integer of an integer column (Avro protocol: BIT bytes too):
                        # range-checked by type, decimal text
    GEN_FLOAT = 3       # float/double of a FLOAT/DOUBLE column: shortest text (Avro protocol)
    GEN_TEXT = 4        # a string kept as it is (a character column's; Avro protocol: any column
                        # whose string _render keeps, DATETIME...), UTF-8 checked as a value
    GEN_FLOAT_PLAIN = 5 # float/double of a FLOAT/DOUBLE column: shortest digits, never an
                        # exponent (the simple protocol's rule)
    GEN_DECIMAL = 6     # DECIMAL bytes/fixed (the unscaled two's complement): its digits at
                        # the branch's scale (Avro protocol)
    GEN_BASE64 = 7      # bytes/fixed of a binary BLOB column: their base64 (Avro protocol)


# Text-rule output: a column whose values come as text tokens (the simple protocol's JSON
# strings; an Avro value read by DEC_TEXT_RULES) gets one per target when its plan is compiled
# (text_decoder_for); decode_text applies it.
cdef enum TextDecoder:
    TXT_CORE = 0         # the core's converter of (column kind, target writer)
    TXT_TEXT = 1         # a character column's text into a string target, as it is
    TXT_RENDER = 2       # a string target: the value rendered by the protocol's text rules
    TXT_ENUM = 3         # an ENUM index into a string target: its element's name
    TXT_SET = 4          # a SET bitmask into a string target: its elements' names, comma-joined
    TXT_FLOAT = 5        # a FLOAT/DOUBLE column's number text into float32/float64, exact


cdef struct ElementNames:
    # the ENUM/SET element names of a protocol's plans: element k is names[off[k]:off[k + 1]]
    Buf names
    Buf off             # int64 offsets
