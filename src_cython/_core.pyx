# cython: language_level=3
"""ticdc_fast._core: the Cython decoder core.

One extension module assembled from the folders beside this file:
framing/ (cursor over message bytes), json/ (span scanner), values/ (number, text and temporal
codecs), arrow/ (column builders handed to pyarrow zero-copy), plan/ (the protocol-neutral plan every
protocol's plan holds: targets, builders, row images, converters, the Avro readers' decoders), open/, simple/, avro/ (the
protocols' parsers).
"""
cimport cython
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t, uintptr_t
from libc.string cimport memcpy, memcmp, memmove, memset, strncpy, strcmp
from libc.stdlib cimport malloc, calloc, realloc, free, strtod, atoi
from libc.stdio cimport snprintf
from libc.math cimport isinf, isnan, signbit

import pyarrow as pa

from ticdc_fast import _constants as _C
from ticdc_fast import columns as _columns
from ticdc_fast.columns import old_image_field
from ticdc_fast.errors import DecodeError, DecoderBusyError

CYTHON_MODULE = 1

include "_constants.pxi"
# headers: the cursor, the builders, the decoder model (declarations; their code in the .pxi)
include "framing/cursor.pxd"
include "arrow/buffers.pxd"
include "plan/decoders.pxd"
include "framing/cursor.pxi"
include "arrow/buffers.pxi"
include "arrow/columns.pxi"
include "arrow/export.pxi"
include "framing/input.pxi"
include "json/scan.pxi"
include "values/text.pxi"
include "values/numbers.pxi"
include "values/temporal.pxi"
include "values/kinds.pxi"
include "framing/capture.pxi"
include "plan/rows.pxi"
include "plan/core.pxi"
include "plan/decoders.pxi"
include "open/decode.pxi"
include "avro/reader.pxi"
include "simple/decode.pxi"
include "simple/route.pxi"
include "simple/avro.pxi"
include "avro/decode.pxi"
