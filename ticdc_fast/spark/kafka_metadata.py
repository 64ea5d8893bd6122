"""Kafka metadata columns (``_topic``, ``_timestamp``, ``_headers``) on decoded rows.

The decoders carry ``_partition``/``_offset`` of each row's message themselves (a simple-protocol
row held for its schema keeps them until it is released, batches later).  The other Kafka columns
are joined on afterwards by that pair: within one topic (one decoder per topic, see
``decoding.decode_partition``) a partition and offset name exactly one message, so the decoders
need not know about them.
"""
from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

# Kafka source column -> decoded column
META_COLUMNS = {"topic": "_topic", "timestamp": "_timestamp", "headers": "_headers"}


def meta_names(columns) -> list[str]:
    """The Kafka metadata columns among ``columns``, in output order."""
    return [c for c in META_COLUMNS if c in columns]


class KafkaMetadataJoin:
    """Remembers the metadata of the messages given to one decoder and appends it to the rows
    the decoder returns, matched by ``(_partition, _offset)``.

    ``keep_history``: rows may come from messages of earlier batches (the simple protocol holds
    rows until their schema arrives), so every batch's metadata is kept for the decoder's life —
    16 bytes a message plus the headers, freed with the task.  Otherwise only the last batch's.
    The topic is one per join (one decoder per topic), so it is kept once, not per message."""

    def __init__(self, names: list[str], keep_history: bool) -> None:
        self.with_topic = "topic" in names
        self.names = [n for n in names if n != "topic"]
        self.keep_history = keep_history
        self._topic = None
        self._chunks: dict[int, list] = {}   # partition -> [(offsets, {name: array})]
        self._joined = None                  # (offsets per partition, columns, bases) cache

    def add(self, batch: pa.RecordBatch) -> None:
        """The input batch (Kafka columns ``partition``, ``offset`` and ``names``)."""
        if not self.keep_history:
            self._chunks = {}
        self._joined = None
        if self.with_topic and batch.num_rows:
            self._topic = batch.column("topic")[0]
        if not self.names:
            return
        parts = batch.column("partition")
        offsets = batch.column("offset").cast(pa.int64())
        columns = {n: batch.column(n) for n in self.names}
        uniq = pc.unique(parts).to_pylist()
        for p in uniq:
            if len(uniq) == 1:
                sel_offsets, sel = offsets, columns
            else:
                mask = pc.fill_null(pc.equal(parts, p), False) if p is not None else pc.is_null(parts)
                sel_offsets = offsets.filter(mask)
                sel = {n: a.filter(mask) for n, a in columns.items()}
            self._chunks.setdefault(p, []).append((sel_offsets, sel))

    def retain(self, positions) -> None:
        """Forget every message but those at ``positions`` (``(partition, offset)`` pairs: the
        messages the decoder still holds), so that the history kept for held rows is as large as
        the hold queue, not the task's whole input."""
        if not self.keep_history or not self._chunks:
            return
        wanted: dict = {}
        for p, o in positions:
            wanted.setdefault(p, []).append(o)
        kept = {}
        for p, chunks in self._chunks.items():
            if p not in wanted:
                continue
            value_set = pa.array(wanted[p], pa.int64())
            for offsets, cols in chunks:
                mask = pc.is_in(offsets, value_set=value_set)
                if pc.any(mask).as_py():
                    kept.setdefault(p, []).append((offsets.filter(mask),
                                                   {n: a.filter(mask) for n, a in cols.items()}))
        self._chunks = kept
        self._joined = None

    def _store(self):
        if self._joined is None:
            offsets, bases, cols = {}, {}, {n: [] for n in self.names}
            base = 0
            for p, chunks in self._chunks.items():
                offsets[p] = pa.concat_arrays([c[0] for c in chunks])
                bases[p] = base
                base += len(offsets[p])
                for n in self.names:
                    cols[n].extend(c[1][n] for c in chunks)
            joined = {n: (pa.concat_arrays(a) if a else None) for n, a in cols.items()}
            self._joined = (offsets, bases, joined)
        return self._joined

    def attach(self, out: pa.RecordBatch, types: dict[str, pa.DataType]) -> pa.RecordBatch:
        """``out`` with ``_topic``/``_timestamp``/``_headers`` appended (types: their Arrow types)."""
        n = out.num_rows
        cols = list(out.columns)
        fields = list(out.schema)
        if self.with_topic:
            t = types["topic"]
            cols.append(pa.nulls(n, t) if self._topic is None else pa.repeat(self._topic, n).cast(t))
            fields.append(pa.field(META_COLUMNS["topic"], t))
        if not self.names:
            return pa.RecordBatch.from_arrays(cols, schema=pa.schema(fields))
        if n == 0 or not self._chunks:
            for name in self.names:
                cols.append(pa.nulls(n, types[name]))
                fields.append(pa.field(META_COLUMNS[name], types[name]))
            return pa.RecordBatch.from_arrays(cols, schema=pa.schema(fields))
        offsets, bases, joined = self._store()
        out_parts = out.column("_partition")
        out_offsets = out.column("_offset")
        positions = None
        for p, part_offsets in offsets.items():
            pos = pc.add(pc.index_in(out_offsets, value_set=part_offsets).cast(pa.int64()), bases[p])
            if len(offsets) > 1:
                mask = pc.fill_null(pc.equal(out_parts, p), False) if p is not None else pc.is_null(out_parts)
                pos = pc.if_else(mask, pos, pa.nulls(n, pa.int64()))
            positions = pos if positions is None else pc.coalesce(positions, pos)
        lost = pc.sum(pc.and_(pc.is_valid(out_offsets), pc.is_null(positions))).as_py() or 0
        if lost:
            # a decoder row whose message this join never saw: a bug, never a silent null
            raise RuntimeError(f"ticdc_fast: {lost} decoded rows name a Kafka offset whose "
                               "message metadata is unknown")
        for name in self.names:
            cols.append(joined[name].take(positions).cast(types[name]))
            fields.append(pa.field(META_COLUMNS[name], types[name]))
        return pa.RecordBatch.from_arrays(cols, schema=pa.schema(fields))
