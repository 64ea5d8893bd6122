"""Structure-aware differential fuzzer for all four protocols (open, simple-json, simple-avro, avro).

Each case starts from a valid batch made by this package's faithful TiCDC encoders, applies a few
structure-aware mutations (JSON values, types, keys, duplicate keys, escapes, huge numbers, deep
nesting, invalid UTF-8; Avro varints, lengths, union/enum indexes and block counts found by walking
the bytes with the writer schema; open-protocol u64 framing; snappy/lz4 wrappers; message order)
and byte-level edits, then checks:

* the whole batch on a fresh decoder, Cython core vs pure-Python twin: equal batches, or the
  same ``DecodeError`` in both (message index, reason, part, byte offset and column);
* the same batch replayed on one long-lived decoder per implementation, in calls of 1 to 16
  messages (state across calls; after a failed message decoding goes on with the next one, as an
  error policy does), comparing every call;
* that nothing but ``DecodeError`` comes out of either implementation.

Cases are a pure function of ``(protocol, seed, index)``, so any case can be regenerated.  A crash
(ASan/UBSan report, signal) kills the worker process: ``run_campaign`` runs workers in
subprocesses, learns the case that was running from a shared progress file, saves it and goes on.

Command line: ``python scripts/fuzz.py --help`` (or ``python -m ticdc_fast.testing.fuzz``).
"""
from __future__ import annotations

import base64
import hashlib
import json
import mmap
import os
import pickle
import random
import struct
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pyarrow as pa

PROTOCOLS = ("open", "simple-json", "simple-avro", "avro")

# Sizes of the replay calls on the long-lived decoders (single messages stay the most common).
REPLAY_CHUNKS = (1, 1, 2, 3, 4, 6, 8, 12, 16)

# Core-only errors that are not findings (none: the Avro twins read as strictly as the core).
ALLOWED_CORE_ONLY_ERRORS: tuple[str, ...] = ()
# Protocols whose twin reports the core's reason, part, byte offset and column: compared besides
# the message index (every protocol: the twins are position-exact).
POSITION_EXACT = ("open", "simple-json", "simple-avro", "avro")
# ``--core-only``: no twin; the core's batch and replay calls are checked for crashes, hangs and
# anything but a DecodeError (with its message index inside the call) — the campaign to run under
# the sanitizers, several times faster than the differential one.
CORE_ONLY = False


# =========================================================================== base corpora
@dataclass
class Base:
    """A valid batch and the decoder settings that read it."""
    name: str
    protocol: str
    keys: list | None
    values: list
    generic_kwargs: dict
    typed_kwargs: dict | None
    compression: str = "none"
    avro_schemas: dict = field(default_factory=dict)   # schema id -> parsed writer schema (avro)


def _open_bases() -> list[Base]:
    import ticdc_fast
    from .open_encoder import OpenEncoder, realistic_changefeed
    out = []
    for flavor in ("tiflow", "ticdc"):
        events = realistic_changefeed(9, seed=3, flavor=flavor, tables=("shop.orders", "shop.users"),
                                      resolved_every=4)
        plain = OpenEncoder(flavor=flavor, max_batch_size=3).encode(events)
        schema = ticdc_fast.infer_open_schema([k for k, _ in plain], [v for _, v in plain], table="shop.orders")
        for comp in ("none", "snappy", "lz4"):
            for batch in (1, 3):
                msgs = OpenEncoder(flavor=flavor, max_batch_size=batch, compression=comp).encode(events)
                tz = "Asia/Shanghai" if batch == 3 else "UTC"
                kw = {"compression": comp, "timezone": tz}
                out.append(Base(f"open-{flavor}-{comp}-b{batch}", "open", [k for k, _ in msgs],
                                [v for _, v in msgs], kw,
                                dict(kw, table="shop.orders", schema=schema, old_image=batch == 3), comp))
        hko = OpenEncoder(flavor=flavor, max_batch_size=2, max_message_bytes=420,
                          large_message_handle="handle-key-only").encode(events)
        out.append(Base(f"open-{flavor}-handle-key-only", "open", [k for k, _ in hko], [v for _, v in hko],
                        {}, {"table": "shop.orders", "schema": schema}))
    return out


def _simple_bases(encoding: str) -> list[Base]:
    from ..simple import simple_arrow_schema
    from .simple_encoder import SimpleBootstrap, SimpleEncoder, orders_table, simple_changefeed
    out = []
    streams = {
        "alter": simple_changefeed(8, seed=7, alter_every=4, watermark_every=3, bootstrap_every=5),
        "midstream": simple_changefeed(8, seed=8, start_mid_stream=True, watermark_every=4,
                                       bootstrap_every=5, location="UTC"),
    }
    for sname, events in streams.items():
        for flavor in ("tiflow", "ticdc"):
            for comp in ("none", "snappy", "lz4"):
                enc = SimpleEncoder(encoding, flavor=flavor, compression=comp)
                values = [v for _, v in enc.encode(events)]
                plain = SimpleEncoder(encoding, flavor=flavor)
                boot = plain.encode_value(SimpleBootstrap(orders_table()))
                schema = simple_arrow_schema(boot, encoding=encoding)
                kw = {"compression": comp, "timezone": "Asia/Shanghai" if flavor == "tiflow" else "UTC"}
                typed = dict(kw, table="shop.orders", schema=schema, old_image=flavor == "ticdc")
                if sname == "alter":
                    # the typed schema is the BOOTSTRAP's whole table and the ALTERs add columns
                    # to it: a real schema change, decoded on (the rows after it are fuzzed too)
                    typed["on_schema_change"] = "ignore"
                out.append(Base(f"simple-{encoding}-{sname}-{flavor}-{comp}", f"simple-{encoding}", None,
                                values, kw, typed, comp))
    return out


def _avro_typed_schema(columns) -> pa.Schema:
    from .. import _constants as C
    from ..arrow_types import default_arrow_type
    fields = []
    for c in columns:
        if c.type in (C.T_ENUM, C.T_SET):        # the Avro protocol sends their text
            fields.append((c.name, pa.string()))
            continue
        try:
            t = default_arrow_type(c.type, c.flags, c.scale if c.scale >= 0 else None)
        except (ValueError, KeyError):
            t = pa.string()
        fields.append((c.name, t))
    return pa.schema(fields)


def _avro_bases() -> list[Base]:
    from .avro_encoder import AvroEncoder, realistic_avro_changefeed
    out = []
    for flavor in ("tiflow", "ticdc"):
        for dec_mode, big_mode, watermark in (("precise", "long", False), ("string", "string", True)):
            events, table_columns = realistic_avro_changefeed(9, seed=4, resolved_every=4, add_column_at=5)
            enc = AvroEncoder(table_columns=table_columns, flavor=flavor, decimal_handling_mode=dec_mode,
                              bigint_unsigned_handling_mode=big_mode, enable_watermark=watermark)
            msgs = enc.encode(events)
            texts = {sid: text for _, sid, text in enc.registered}
            cols = next(iter(table_columns.values()))
            typed = _avro_typed_schema(cols)
            kw = {"schemas": texts, "timezone": "Asia/Shanghai" if watermark else "UTC"}
            out.append(Base(f"avro-{flavor}-{dec_mode}-{big_mode}", "avro", [k for k, _ in msgs],
                            [v for _, v in msgs], kw,
                            dict(kw, table="shop.orders", schema=typed, old_image=watermark),
                            avro_schemas={sid: json.loads(t) for sid, t in texts.items()}))
            if not watermark:
                # typed for a table the stream does not carry: every message is one the output
                # leaves out, which the core reads and checks without filling a row image
                out.append(Base(f"avro-{flavor}-{dec_mode}-{big_mode}-other-table", "avro", [k for k, _ in msgs],
                                [v for _, v in msgs], kw,
                                dict(kw, table="shop.other", schema=pa.schema([("id", pa.int64())])),
                                avro_schemas={sid: json.loads(t) for sid, t in texts.items()}))
    return out


@lru_cache(maxsize=None)
def bases(protocol: str) -> tuple[Base, ...]:
    if protocol == "open":
        return tuple(_open_bases())
    if protocol in ("simple-json", "simple-avro"):
        return tuple(_simple_bases(protocol.split("-")[1]))
    if protocol == "avro":
        return tuple(_avro_bases())
    raise ValueError(f"protocol must be one of {PROTOCOLS}, not {protocol!r}")


@lru_cache(maxsize=None)
def simple_avro_schema():
    text = (Path(__file__).resolve().parents[1] / "simple" / "simple_protocol.avsc").read_text()
    return json.loads(text)


# =========================================================================== byte-level mutation
INTERESTING_BYTES = [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b"-", b"0", b"9", b".", b"e",
                     b"\\u", b"\\ud800", b"\xff", b"\x00", b"\x01", b"\x02", b"\x16", b"\x7f", b"\x81",
                     b"null", b"true", b"1e999", b"-0", b"\\x", b"\xc3\x28", b"\xed\xa0\x80",
                     b"\x7f\xff\xff\xff\xff\xff\xff\xff", b"\x00\x00\x00\x00\x00\x00\x00\x00",
                     b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", b"\x80" * 10 + b"\x02"]


def mutate_bytes(data: bytes, rnd: random.Random, n: int) -> bytes:
    b = bytearray(data)
    for _ in range(n):
        op = rnd.randrange(6)
        pos = rnd.randrange(len(b) + 1)
        if op == 0 and b:
            b[min(pos, len(b) - 1)] = rnd.randrange(256)
        elif op == 1 and b:
            b[min(pos, len(b) - 1)] ^= 1 << rnd.randrange(8)
        elif op == 2:
            b[pos:pos] = rnd.choice(INTERESTING_BYTES)
        elif op == 3 and b:
            del b[pos:pos + rnd.randrange(1, 9)]
        elif op == 4 and b:
            j = rnd.randrange(len(b))
            b[pos:pos] = b[j:j + rnd.randrange(1, 17)]
        else:
            b = b[:pos]
    return bytes(b)


# =========================================================================== JSON structure
class Obj(list):
    """A JSON object as a list of (key, value) pairs: keeps order and allows duplicate keys."""


class Num(str):
    """A JSON number kept as its text (exact; may be any text when mutated)."""


class Raw(bytes):
    """Bytes emitted verbatim (e.g. a string with invalid UTF-8, a bad escape)."""


class Esc(str):
    """A string emitted with every character as a ``\\u`` escape."""


def parse_json(data: bytes):
    return json.loads(data, object_pairs_hook=Obj, parse_int=Num, parse_float=Num, parse_constant=Num)


def _emit_str(s: str, rnd: random.Random | None, out: bytearray):
    if isinstance(s, Esc):
        out += b'"' + "".join(f"\\u{ord(ch):04x}" if ord(ch) < 0x10000 else
                              json.dumps(ch) [1:-1] for ch in s).encode() + b'"'
        return
    out += json.dumps(s, ensure_ascii=False).encode("utf-8", "surrogatepass")


def emit_json(node, out: bytearray | None = None) -> bytes:
    out = bytearray() if out is None else out
    if isinstance(node, Obj):
        out += b"{"
        for i, (k, v) in enumerate(node):
            if i:
                out += b","
            if isinstance(k, Raw):
                out += k
            else:
                _emit_str(k, None, out)
            out += b":"
            emit_json(v, out)
        out += b"}"
    elif isinstance(node, list):
        out += b"["
        for i, v in enumerate(node):
            if i:
                out += b","
            emit_json(v, out)
        out += b"]"
    elif isinstance(node, Raw):
        out += node
    elif isinstance(node, Num):
        out += node.encode()
    elif isinstance(node, str):
        _emit_str(node, None, out)
    elif node is None:
        out += b"null"
    elif node is True:
        out += b"true"
    elif node is False:
        out += b"false"
    else:
        out += json.dumps(node).encode()
    return bytes(out)


_HUGE_NUMBERS = ["9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
                 "18446744073709551615", "18446744073709551616", "-1", "0", "-0", "1e309", "-1e309", "1E400",
                 "1.5", "0.1", "1e-400", "4294967295", "4294967296", "2147483648", "-2147483649", "01", "1e5",
                 "123456789012345678901234567890123456789012345678901234567890123456789",
                 "1" * 400, "0." + "0" * 300 + "1"]
_INT_EDGES = ["-9223372036854775808", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
              "18446744073709551615", "18446744073709551616", "-2147483648", "2147483647", "4294967295",
              "-32768", "65535", "-128", "255", "-0", "0"]
_ODD_STRINGS = ["", " ", "0", "-1", "null", "true", "9223372036854775808", "18446744073709551616",
                "-9223372036854775808", "9223372036854775807", "18446744073709551615", "-2147483648",
                "2024-02-30 25:61:61", "0000-00-00 00:00:00", "9999-12-31 23:59:59.999999",
                "1970-01-01 00:00:00", "2024-03-10 02:30:00", "838:59:59", "-838:59:59.000001",
                "1.2.3", "NaN", "Infinity", "1e309", "\u2028", "\x00", "测试", "America", "Etc",
                "../../../etc/passwd", "x" * 300, "Asia/Shanghai", "UTC", "+08:00", "-24:00", "local",
                "\ud800", "a,b", "0x1F", "b'101'", "1" * 70, "-" + "9" * 66, ".5", "5.", "+1"]


def _json_nodes(node, path=(), out=None):
    """(container, key-or-index, node) for every value in the tree."""
    out = [] if out is None else out
    if isinstance(node, Obj):
        for i, (k, v) in enumerate(node):
            out.append((node, i, v, k))
            _json_nodes(v, path + (k,), out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out.append((node, i, v, None))
            _json_nodes(v, path + (i,), out)
    return out


def _reaches(node, target) -> bool:
    """Whether ``target`` is ``node`` or lies inside it (by identity, without recursion)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n is target:
            return True
        if isinstance(n, Obj):
            stack.extend(v for _, v in n)
        elif isinstance(n, list):
            stack.extend(n)
    return False


def _set(container, i, value):
    if isinstance(container, Obj):
        container[i] = (container[i][0], value)
    else:
        container[i] = value


def _random_value(rnd: random.Random, like=None, depth=0):
    r = rnd.random()
    if r < 0.25:
        return Num(rnd.choice(_HUGE_NUMBERS))
    if r < 0.5:
        s = rnd.choice(_ODD_STRINGS)
        return Esc(s) if rnd.random() < 0.3 else s
    if r < 0.6:
        return rnd.choice([None, True, False])
    if r < 0.7:
        return Raw(b'"' + rnd.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"a\xe2\x82",
                                      b"\\ud800", b"\\udc00\\ud800", b"\\x41", b"\\u00", b"\\u12G4", b"\t",
                                      b"\\u0000", b"\\/\\b\\f"]) + b'"')
    if r < 0.78:
        d = rnd.choice([1, 2, 64, 1023, 1024, 1025, 3000])
        opener, closer = rnd.choice([(b"[", b"]"), (b'{"a":', b"}")])
        return Raw(opener * d + b"1" + closer * d)
    if r < 0.86 and depth < 2:
        return Obj([(rnd.choice(["a", "name", "value", "type"]), _random_value(rnd, depth=depth + 1))])
    if r < 0.93 and depth < 2:
        return [_random_value(rnd, depth=depth + 1) for _ in range(rnd.randrange(3))]
    if like is not None and isinstance(like, str):
        return Esc(like)
    return Num(str(rnd.randrange(-(1 << 64), 1 << 64)))


def mutate_json_tree(tree, rnd: random.Random, n: int):
    for _ in range(n):
        nodes = _json_nodes(tree)
        if not nodes:
            return _random_value(rnd)
        container, i, node, key = rnd.choice(nodes)
        op = rnd.randrange(11)
        if op <= 2:                                        # another value/type
            _set(container, i, _random_value(rnd, node))
        elif op == 3 and isinstance(node, str) and not isinstance(node, Esc):
            _set(container, i, Esc(node))                  # same text, all \u escapes
        elif op == 4 and isinstance(container, Obj):       # duplicate key
            value = node if rnd.random() < 0.4 else _random_value(rnd, node)
            where = rnd.choice([i, i + 1, len(container)])
            container.insert(where, (key, value))
        elif op == 5:                                      # delete
            del container[i]
        elif op == 6 and isinstance(container, Obj):       # rename key
            others = [k for k, _ in container]
            new = rnd.choice(others + ["", "x", key.upper() if isinstance(key, str) else "K",
                                       (key or "") + "\x00", Esc(key or "k")])
            container[i] = (new, node)
        elif op == 7 and isinstance(node, (Num, str)):     # number text, integer edges first
            if rnd.random() < 0.5:
                edge = rnd.choice(_INT_EDGES)
                _set(container, i, Num(edge) if isinstance(node, Num) else edge)
            elif isinstance(node, Num):
                _set(container, i, Num(rnd.choice(_HUGE_NUMBERS + [node + "0", "-" + node, node + ".0",
                                                                  node + "e3", node[:-1] or "-"])))
            else:
                _set(container, i, rnd.choice(_ODD_STRINGS))
        elif op == 8 and isinstance(node, (Obj, list)) and node:   # duplicate / shuffle elements
            if rnd.random() < 0.5:
                node.insert(rnd.randrange(len(node) + 1), node[rnd.randrange(len(node))])
            else:
                rnd.shuffle(node)
        elif op == 9 and isinstance(node, str) and len(node) > 1:  # escape some characters only
            k = rnd.randrange(len(node))
            _set(container, i, Raw(emit_json(node[:k])[:-1] + f"\\u{ord(node[k]) & 0xFFFF:04X}".encode()
                                   + emit_json(node[k + 1:])[1:]))
        else:                                              # swap two values
            c2, j, other, _ = rnd.choice(nodes)
            # not a value with one of its own ancestors: that would make the tree a cycle
            if (c2 is not container or j != i) and not _reaches(other, container) and not _reaches(node, c2):
                try:
                    _set(container, i, other)
                    _set(c2, j, node)
                except IndexError:
                    pass
    return tree


def mutate_json(data: bytes, rnd: random.Random, n: int) -> bytes:
    try:
        return emit_json(mutate_json_tree(parse_json(data), rnd, n))
    except (ValueError, RecursionError):      # not JSON, or nested too deep to walk here
        return mutate_bytes(data, rnd, n)


# =========================================================================== Avro structure
@dataclass
class Span:
    start: int
    end: int
    kind: str          # long, len, union, enum, block, bool, float, double, fixed
    branches: int = 0  # union/enum: how many


def _zigzag(n: int) -> bytes:
    z = (n << 1) ^ (n >> 63) if -(1 << 63) <= n < (1 << 63) else (n << 1) if n >= 0 else ((-n) << 1) - 1
    out = bytearray()
    while True:
        b = z & 0x7F
        z >>= 7
        if z:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


class _Walk:
    """Reads Avro binary with a schema, recording where each primitive lies."""

    def __init__(self, data: bytes, pos: int, named: dict):
        self.d, self.p, self.named, self.spans = data, pos, named, []

    def varint(self, kind, branches=0) -> int:
        start, shift, z = self.p, 0, 0
        while True:
            if self.p >= len(self.d) or shift > 63:
                raise ValueError("bad varint")
            b = self.d[self.p]
            self.p += 1
            z |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                break
        self.spans.append(Span(start, self.p, kind, branches))
        return (z >> 1) ^ -(z & 1)

    def take(self, n: int, kind: str):
        if n < 0 or self.p + n > len(self.d):
            raise ValueError("short")
        self.spans.append(Span(self.p, self.p + n, kind))
        self.p += n

    def read(self, s, ns=""):
        if isinstance(s, list):
            i = self.varint("union", len(s))
            if not 0 <= i < len(s):
                raise ValueError("union")
            return self.read(s[i], ns)
        if isinstance(s, str):
            if s in ("long", "int"):
                self.varint("long")
            elif s in ("string", "bytes"):
                self.take(self.varint("len"), "data")
            elif s == "boolean":
                self.take(1, "bool")
            elif s == "float":
                self.take(4, "float")
            elif s == "double":
                self.take(8, "double")
            elif s == "null":
                pass
            else:
                full = s if "." in s or not ns else f"{ns}.{s}"
                t = self.named.get(full) or self.named.get(s)
                if t is None:
                    raise ValueError(f"unknown type {s}")
                self.read(t, ns)
            return
        t = s["type"]
        if isinstance(t, (dict, list)) or t not in ("record", "enum", "fixed", "array", "map", "error"):
            return self.read(t, ns)
        if t in ("record", "error"):
            ns2 = s.get("namespace", ns)
            for f in s["fields"]:
                self.read(f["type"], ns2)
        elif t == "enum":
            i = self.varint("enum", len(s["symbols"]))
            if not 0 <= i < len(s["symbols"]):
                raise ValueError("enum")
        elif t == "fixed":
            self.take(s["size"], "fixed")
        else:
            while True:
                count = self.varint("block")
                if count == 0:
                    break
                if count < 0:
                    self.varint("len")
                    count = -count
                for _ in range(count):
                    if t == "map":
                        self.take(self.varint("len"), "data")
                    self.read(s["items" if t == "array" else "values"], ns)


def _collect_named(s, ns, named):
    if isinstance(s, list):
        for x in s:
            _collect_named(x, ns, named)
    elif isinstance(s, dict):
        t = s.get("type")
        if t in ("record", "enum", "fixed", "error"):
            ns2 = s.get("namespace", ns) if "." not in s["name"] else s["name"].rsplit(".", 1)[0]
            full = s["name"] if "." in s["name"] else (f"{ns2}.{s['name']}" if ns2 else s["name"])
            named[full] = s
            named.setdefault(s["name"], s)
            for f in s.get("fields", ()):
                _collect_named(f["type"], ns2, named)
        elif t in ("array", "map"):
            _collect_named(s.get("items", s.get("values")), ns, named)
        elif isinstance(t, (dict, list)):
            _collect_named(t, ns, named)


@lru_cache(maxsize=64)
def _named_of(schema_json: str):
    s = json.loads(schema_json)
    named = {}
    _collect_named(s, "", named)
    return s, named


def avro_spans(data: bytes, pos: int, schema) -> list[Span]:
    s, named = _named_of(json.dumps(schema, sort_keys=True))
    w = _Walk(data, pos, named)
    w.read(s)
    return w.spans


_VARINTS = [0, 1, -1, 2, 63, 64, -65, 127, 128, (1 << 31) - 1, 1 << 31, -(1 << 31), -(1 << 31) - 1,
            (1 << 63) - 1, -(1 << 63), 1 << 32, 1 << 40, -(1 << 40), 1 << 62]
_OVERLONG = [b"\x80" * 10 + b"\x02", b"\xff" * 10 + b"\x01", b"\xff" * 12, b"\x81\x80\x80\x80\x80\x80\x80\x80\x80\x00",
             b"\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01", b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f",
             b"\x80", b"\xff\xff\xff\xff\x0f"]
_AVRO_TEXT = [b"", b"\xff", b"\xc3\x28", b"\xed\xa0\x80", "测试".encode(), b"\x00", b"0", b"-1", b"1e309",
              b"18446744073709551616", b"9223372036854775808", b"2024-02-30 25:61:61", b"0000-00-00 00:00:00",
              b"9999-12-31 23:59:59.999999", b"1970-01-01 00:00:00", b"838:59:59", b"NaN", b"America",
              b"x" * 300, b"1" * 70, b"-" + b"9" * 66, b".5", b"a,b", b"\x80" * 9, b"\xff" * 40]


def mutate_avro(data: bytes, pos: int, schema, rnd: random.Random, n: int) -> bytes:
    """``n`` schema-guided edits of the Avro body at ``data[pos:]`` (byte edits if it does not walk)."""
    for _ in range(n):
        try:
            spans = avro_spans(data, pos, schema)
        except (ValueError, RecursionError, KeyError, TypeError):
            spans = []
        if not spans:
            data = mutate_bytes(data, rnd, 1)
            continue
        sp = rnd.choice(spans)
        head, tail = data[:sp.start], data[sp.end:]
        r = rnd.random()
        if sp.kind in ("union", "enum"):
            choices = [_zigzag(i) for i in range(sp.branches)] + [_zigzag(-1), _zigzag(sp.branches),
                                                                 _zigzag(-sp.branches), _zigzag(1 << 40)]
            new = rnd.choice(choices) if r < 0.85 else rnd.choice(_OVERLONG)
        elif sp.kind in ("long", "len", "block"):
            if r < 0.6:
                new = _zigzag(rnd.choice(_VARINTS + [rnd.randrange(-300, 300)]))
            elif r < 0.8:
                new = rnd.choice(_OVERLONG)
            else:                        # the same value, encoded one byte longer (non-canonical)
                old = bytearray(data[sp.start:sp.end])
                old[-1] |= 0x80
                new = bytes(old) + b"\x00"
        elif sp.kind == "data":
            # replace the content and fix the length varint before it when there is one
            txt = rnd.choice(_AVRO_TEXT) if r < 0.7 else mutate_bytes(data[sp.start:sp.end], rnd, 1)
            prev = next((s for s in spans if s.end == sp.start and s.kind == "len"), None)
            if prev is not None and rnd.random() < 0.9:
                data = data[:prev.start] + _zigzag(len(txt)) + txt + tail
                continue
            new = txt
        elif sp.kind == "bool":
            new = rnd.choice([b"\x02", b"\xff", b"\x01", b"\x00", b""])
        elif sp.kind == "float":
            new = rnd.choice([struct.pack("<f", x) for x in (float("nan"), float("inf"), -0.0, 3.4e38)] + [b"\x00"])
        elif sp.kind == "double":
            new = rnd.choice([struct.pack("<d", x) for x in (float("nan"), float("-inf"), -0.0, 5e-324, 1e308)]
                             + [b"\x00" * 3])
        else:
            new = mutate_bytes(data[sp.start:sp.end], rnd, 1)
        data = head + new + tail
    return data


# =========================================================================== compression wrappers
def _codec(name):
    from ..compression import compress, decompress
    return (lambda b: compress(b, name)), (lambda b: decompress(b, name))


def mutate_wrapped(data: bytes, compression: str, rnd: random.Random, inner) -> bytes:
    """Mutate the payload inside a snappy/lz4 wrapper (and re-wrap), or the wrapper itself."""
    if compression == "none":
        return inner(data)
    comp, decomp = _codec(compression)
    r = rnd.random()
    if r < 0.7:
        try:
            plain = decomp(data)
        except ValueError:
            return mutate_bytes(data, rnd, 1)
        return comp(inner(plain))
    if r < 0.85 and compression == "snappy":   # forge the declared length
        body = data
        k = 0
        while k < len(body) and body[k] & 0x80:
            k += 1
        forged = rnd.choice([0, 1, len(body) * 22, len(body) * 22 + 65, 1 << 31, (1 << 32) - 1, 1 << 40])
        out = bytearray()
        while True:
            b = forged & 0x7F
            forged >>= 7
            out.append(b | (0x80 if forged else 0))
            if not forged:
                break
        return bytes(out) + body[k + 1:]
    if r < 0.85 and compression == "lz4":       # a frame whose content is a bomb-ish run
        return comp(rnd.choice([b"{" * 5000, b"[" * 2000 + b"]" * 2000, b"\x00" * 100_000]))
    return mutate_bytes(data, rnd, rnd.randrange(1, 4))


# =========================================================================== per-protocol mutators
_U64S = [0, 1, 7, 8, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 32, (1 << 63) - 1, 1 << 63, (1 << 64) - 1]


def _split_frames(data: bytes, start: int) -> list[bytes] | None:
    out, p = [], start
    while p < len(data):
        if p + 8 > len(data):
            return None
        n = int.from_bytes(data[p:p + 8], "big")
        if p + 8 + n > len(data):
            return None
        out.append(data[p + 8:p + 8 + n])
        p += 8 + n
    return out


def _join_frames(frames) -> bytes:
    return b"".join(len(f).to_bytes(8, "big") + f for f in frames)


def mutate_open_message(key: bytes, value: bytes, base: Base, rnd: random.Random, n: int):
    kframes = _split_frames(key, 8) if len(key) >= 8 else None
    vframes = _split_frames(value, 0)
    if kframes is None or vframes is None or rnd.random() < 0.1:
        return (mutate_bytes(key, rnd, n), value) if rnd.random() < 0.4 else (key, mutate_bytes(value, rnd, n))
    version = key[:8]
    r = rnd.random()
    if r < 0.35 and kframes:                      # an event key's JSON
        i = rnd.randrange(len(kframes))
        kframes[i] = mutate_json(kframes[i], rnd, n)
    elif r < 0.7 and vframes:                     # an event value's JSON, inside its compression
        i = rnd.randrange(len(vframes))
        if vframes[i]:
            vframes[i] = mutate_wrapped(vframes[i], base.compression, rnd,
                                        lambda b: mutate_json(b, rnd, n))
        else:
            vframes[i] = rnd.choice([b"{}", b"null", b'{"u":{}}'])
    elif r < 0.8:                                 # event lists of different lengths / order
        which = rnd.choice([kframes, vframes])
        if which and rnd.random() < 0.5:
            del which[rnd.randrange(len(which))]
        elif which:
            which.insert(rnd.randrange(len(which) + 1), which[rnd.randrange(len(which))])
    elif r < 0.9:                                 # forged u64 length
        part = rnd.choice(["key", "value"])
        frames = kframes if part == "key" else vframes
        if frames:
            i = rnd.randrange(len(frames))
            buf = bytearray((version if part == "key" else b"") + _join_frames(frames))
            off = (8 if part == "key" else 0) + sum(8 + len(f) for f in frames[:i])
            forged = rnd.choice(_U64S + [len(frames[i]) + 1, max(0, len(frames[i]) - 1)])
            buf[off:off + 8] = forged.to_bytes(8, "big")
            return (bytes(buf), value) if part == "key" else (key, bytes(buf))
    else:                                         # version word
        version = rnd.choice(_U64S + [2]).to_bytes(8, "big")
    return version + _join_frames(kframes), _join_frames(vframes)


def mutate_simple_value(value: bytes, base: Base, rnd: random.Random, n: int) -> bytes:
    if base.protocol == "simple-json":
        inner = lambda b: mutate_json(b, rnd, n)        # noqa: E731
    else:
        inner = lambda b: mutate_avro(b, 0, simple_avro_schema(), rnd, n)   # noqa: E731
    return mutate_wrapped(value, base.compression, rnd, inner)


def mutate_avro_part(data: bytes | None, base: Base, rnd: random.Random, n: int) -> bytes | None:
    if data is None:
        return rnd.choice([None, b"", b"\x00", b"\x00\x00\x00\x00\x01"])
    r = rnd.random()
    if data[:1] == b"\x00" and len(data) >= 5 and r < 0.7:
        sid = int.from_bytes(data[1:5], "big", signed=True)
        schema = base.avro_schemas.get(sid)
        if schema is not None:
            return mutate_avro(data, 5, schema, rnd, n)
    if data[:1] == b"\x01" and r < 0.8:             # DDL: 0x01 + JSON
        return b"\x01" + mutate_json(data[1:], rnd, n)
    if r < 0.85 and len(data) >= 5:                 # header: magic byte / schema id
        b = bytearray(data)
        if rnd.random() < 0.5:
            b[0] = rnd.choice([0, 1, 2, 3, 4, 0xff])
        else:
            ids = list(base.avro_schemas) + [0, -1, 1 << 30, 999]
            b[1:5] = struct.pack(">i", rnd.choice(ids))
        return bytes(b)
    return mutate_bytes(data, rnd, n)


# =========================================================================== cases
@dataclass
class Case:
    protocol: str
    seed: int
    index: int
    base: str
    typed: bool
    arrow_input: bool
    keys: list | None
    values: list
    decoder_kwargs: dict

    def describe(self) -> str:
        return (f"{self.protocol} seed={self.seed} index={self.index} base={self.base} "
                f"{'typed' if self.typed else 'generic'}{' arrow-input' if self.arrow_input else ''} "
                f"{len(self.values)} messages")


def make_case(protocol: str, seed: int, index: int) -> Case:
    rnd = random.Random(f"{protocol}/{seed}/{index}")
    base = rnd.choice(bases(protocol))
    typed = base.typed_kwargs is not None and rnd.random() < 0.5
    kwargs = dict(base.typed_kwargs if typed else base.generic_kwargs)
    keys = list(base.keys) if base.keys is not None else None
    values = list(base.values)
    # a window of the stream (the schema-carrying first messages usually kept)
    if rnd.random() < 0.3 and len(values) > 3:
        a = 0 if rnd.random() < 0.6 else rnd.randrange(len(values) - 1)
        b = rnd.randrange(a + 1, len(values) + 1)
        values = values[a:b]
        keys = keys[a:b] if keys is not None else None
    n_msgs = 1 if rnd.random() < 0.6 else rnd.randrange(2, 4)
    for _ in range(n_msgs):
        i = rnd.randrange(len(values))
        n = rnd.choice([1, 1, 1, 2, 3])
        r = rnd.random()
        if r < 0.08:                                  # batch-level: duplicate / drop / move a message
            j = rnd.randrange(len(values))
            if rnd.random() < 0.5:
                values.insert(j, values[i])
                if keys is not None:
                    keys.insert(j, keys[i])
            elif len(values) > 1:
                values.insert(j, values.pop(i))
                if keys is not None:
                    keys.insert(j, keys.pop(i))
            continue
        if r < 0.2:                                   # plain byte-level edits
            if keys is not None and keys[i] is not None and rnd.random() < 0.3:
                keys[i] = mutate_bytes(keys[i], rnd, n)
            elif values[i] is not None:
                values[i] = mutate_bytes(values[i], rnd, n)
            continue
        if protocol == "open":
            keys[i], values[i] = mutate_open_message(keys[i], values[i], base, rnd, n)
        elif protocol.startswith("simple"):
            values[i] = mutate_simple_value(values[i], base, rnd, n)
        else:
            if rnd.random() < 0.8 or keys[i] is None:
                values[i] = mutate_avro_part(values[i], base, rnd, n)
            else:
                keys[i] = mutate_avro_part(keys[i], base, rnd, n)
    arrow_input = rnd.random() < 0.3
    return Case(protocol, seed, index, base.name, typed, arrow_input, keys, values, kwargs)


# =========================================================================== running one case
class Finding(Exception):
    def __init__(self, kind: str, signature: str, detail: str):
        super().__init__(f"{kind}: {signature}")
        self.kind, self.signature, self.detail = kind, signature, detail


def _decoder(case: Case, impl: str):
    import ticdc_fast
    kw = dict(case.decoder_kwargs, implementation=impl)
    if case.protocol == "open":
        return ticdc_fast.OpenDecoder(**kw)
    if case.protocol.startswith("simple"):
        return ticdc_fast.SimpleDecoder(case.protocol.split("-")[1], **kw)
    return ticdc_fast.AvroDecoder(**kw)


def _input(seq, arrow: bool):
    if seq is None or not arrow:
        return seq
    return pa.array(seq, pa.binary())


def _where(exc: BaseException) -> str:
    tb = traceback.extract_tb(exc.__traceback__)
    frame = tb[-1] if tb else None
    return f"{Path(frame.filename).name}:{frame.lineno} {frame.name}" if frame else "?"


def _call(dec, case: Case, keys, values, impl: str, arrow: bool):
    """The decoded batch, or ("error", message_index, reason, (part, byte offset, column)) for a
    DecodeError."""
    from ..errors import DecodeError
    try:
        if case.protocol.startswith("simple"):
            return dec.decode(None, _input(values, arrow))
        return dec.decode(_input(keys, arrow), _input(values, arrow))
    except DecodeError as exc:
        return ("error", exc.message_index, exc.reason, (exc.part, exc.byte_offset, exc.column))
    except RecursionError as exc:
        raise Finding("exception", f"{impl}:RecursionError:{_where(exc)}", traceback.format_exc()) from None
    except Exception as exc:  # noqa: BLE001 - anything else is a finding
        raise Finding("exception", f"{impl}:{type(exc).__name__}:{_where(exc)}",
                      traceback.format_exc()) from None


def _reason_class(reason: str) -> str:
    return reason.split(":")[0].split("(")[0].strip()[:60]


def _compare(core, twin, mode: str, position_exact: bool = False) -> str | None:
    """None when they agree; "allowed" for a documented leniency; else a finding signature.
    ``position_exact``: errors must also agree on reason, part, byte offset and column."""
    ce, te = isinstance(core, tuple), isinstance(twin, tuple)
    if ce and te:
        if ALLOWED_CORE_ONLY_ERRORS and core[2].startswith(ALLOWED_CORE_ONLY_ERRORS) and \
                (core[1] != twin[1] or _reason_class(core[2]) != _reason_class(twin[2])):
            # the twin read past a leniency the core rejects and failed elsewhere: further on, or
            # on a held message that message released; their states differ from here on
            return "allowed"
        if core[1] != twin[1]:
            return f"{mode}:error-index core={_reason_class(core[2])} twin={_reason_class(twin[2])}"
        if position_exact and (core[2], core[3]) != (twin[2], twin[3]):
            what = [n for n, c, t in zip(("reason", "part", "offset", "column"), (core[2],) + core[3],
                                         (twin[2],) + twin[3]) if c != t]
            return f"{mode}:error-{'-'.join(what)} core={_reason_class(core[2])} twin={_reason_class(twin[2])}"
        return None
    if ce:
        if ALLOWED_CORE_ONLY_ERRORS and core[2].startswith(ALLOWED_CORE_ONLY_ERRORS):
            return "allowed"
        return f"{mode}:core-error-twin-ok:{_reason_class(core[2])}"
    if te:
        return f"{mode}:twin-error-core-ok:{_reason_class(twin[2])}"
    if core.equals(twin):
        return None
    if core.schema != twin.schema:
        return f"{mode}:schemas-differ"
    if core.num_rows != twin.num_rows:
        return f"{mode}:rows-differ"
    cols = [core.schema.field(i).name for i in range(core.num_columns) if not core.column(i).equals(twin.column(i))]
    return f"{mode}:values-differ:{','.join(cols[:4])}"


def _compare_replaced(dc, dt, mode: str) -> str | None:
    """Both implementations count the same text values with invalid UTF-8 replaced."""
    if dc.invalid_utf8_replaced != dt.invalid_utf8_replaced:
        return f"{mode}:invalid-utf8-counts-differ"
    return None


def _show(x) -> str:
    if isinstance(x, tuple):
        return repr(x)
    try:
        return repr(x.to_pylist())[:3000]
    except Exception as exc:  # noqa: BLE001
        return f"<{type(exc).__name__} {exc}>"


def _run_core_only(case: Case) -> str:
    dc = _decoder(case, "cython")
    _call(dc, case, case.keys, case.values, "cython", case.arrow_input)
    rnd = random.Random(f"replay/{case.protocol}/{case.seed}/{case.index}")
    dc = _decoder(case, "cython")
    j, n = 0, len(case.values)
    while j < n:
        end = min(n, j + rnd.choice(REPLAY_CHUNKS))
        k = None if case.keys is None else case.keys[j:end]
        got = _call(dc, case, k, case.values[j:end], "cython", case.arrow_input)
        failed_at = got[1] if isinstance(got, tuple) else None
        if failed_at is not None and not 0 <= failed_at < end - j:
            raise Finding("exception", "cython:error-index-out-of-call", repr(got))
        j = end if failed_at is None else j + failed_at + 1
    return "ok"


def run_case(case: Case) -> str:
    """Run all checks; returns "ok" or "allowed"; raises Finding."""
    if CORE_ONLY:
        return _run_core_only(case)
    verdict = "ok"
    # 1. the whole batch, fresh decoders
    dc, dt = _decoder(case, "cython"), _decoder(case, "python")
    core = _call(dc, case, case.keys, case.values, "cython", case.arrow_input)
    twin = _call(dt, case, case.keys, case.values, "python", False)
    sig = _compare(core, twin, "batch", case.protocol in POSITION_EXACT) or _compare_replaced(dc, dt, "batch")
    if sig == "allowed":
        verdict = "allowed"
    elif sig is not None:
        raise Finding("disagreement", sig, f"core: {_show(core)}\ntwin: {_show(twin)}")
    # 2. the stream again on one long-lived decoder each, in calls of 1 to 16 messages (state kept
    #    across calls); after a DecodeError both go on with the message after the failing one,
    #    as an error policy does.  Chunks make the campaign several times faster than one call
    #    per message, and every message is still decoded (or failed) on its own terms.
    rnd = random.Random(f"replay/{case.protocol}/{case.seed}/{case.index}")
    dc, dt = _decoder(case, "cython"), _decoder(case, "python")
    j, n = 0, len(case.values)
    while j < n:
        end = min(n, j + rnd.choice(REPLAY_CHUNKS))
        k = None if case.keys is None else case.keys[j:end]
        v = case.values[j:end]
        core = _call(dc, case, k, v, "cython", case.arrow_input)
        twin = _call(dt, case, k, v, "python", False)
        sig = _compare(core, twin, "replay", case.protocol in POSITION_EXACT) or _compare_replaced(dc, dt, "replay")
        if sig == "allowed":
            return "allowed"          # states may differ from here on, by design
        if sig is not None:
            raise Finding("disagreement", sig,
                          f"replay of messages {j}..{end - 1}\ncore: {_show(core)}\ntwin: {_show(twin)}")
        failed_at = core[1] if isinstance(core, tuple) else None
        j = end if failed_at is None else j + failed_at + 1
    return verdict


# =========================================================================== findings on disk
def _b64(x):
    return None if x is None else base64.b64encode(x).decode()


def case_record(case: Case) -> dict:
    return {"protocol": case.protocol, "seed": case.seed, "index": case.index, "base": case.base,
            "typed": case.typed, "arrow_input": case.arrow_input,
            "keys": None if case.keys is None else [_b64(k) for k in case.keys],
            "values": [_b64(v) for v in case.values]}


def case_from_record(rec: dict) -> Case:
    base = next(b for b in bases(rec["protocol"]) if b.name == rec["base"])
    kwargs = dict(base.typed_kwargs if rec["typed"] else base.generic_kwargs)
    unb = lambda x: None if x is None else base64.b64decode(x)   # noqa: E731
    return Case(rec["protocol"], rec["seed"], rec["index"], rec["base"], rec["typed"], rec["arrow_input"],
                None if rec["keys"] is None else [unb(k) for k in rec["keys"]],
                [unb(v) for v in rec["values"]], kwargs)


def save_finding(out_dir: Path, case: Case, kind: str, signature: str, detail: str, *, limit: int = 3) -> Path | None:
    """Writes ``<out>/<protocol>/<kind>-<hash>/case-<index>.json`` (at most ``limit`` per signature)."""
    h = hashlib.sha1(f"{case.protocol}|{kind}|{signature}".encode()).hexdigest()[:10]
    d = out_dir / case.protocol / f"{kind}-{h}"
    d.mkdir(parents=True, exist_ok=True)
    (d / "signature.txt").write_text(f"{kind}: {signature}\n")
    if len(list(d.glob("case-*.json"))) >= limit:
        return None
    p = d / f"case-{case.index}.json"
    rec = case_record(case)
    rec.update(kind=kind, signature=signature, detail=detail, description=case.describe())
    p.write_text(json.dumps(rec, indent=1))
    return p


def minimize(case: Case, still_fails, budget: float = 20.0) -> Case:
    """Drops messages, then byte chunks of each remaining message, while ``still_fails(case)``."""
    deadline = time.monotonic() + budget

    def with_msgs(idx):
        return Case(case.protocol, case.seed, case.index, case.base, case.typed, case.arrow_input,
                    None if case.keys is None else [case.keys[i] for i in idx],
                    [case.values[i] for i in idx], case.decoder_kwargs)

    idx = list(range(len(case.values)))
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        for i in list(idx):
            trial = [x for x in idx if x != i]
            if trial and still_fails(with_msgs(trial)):
                idx, changed = trial, True
    case = with_msgs(idx)
    for part in ("values", "keys"):
        seq = getattr(case, part)
        if seq is None:
            continue
        for m in range(len(seq)):
            data = seq[m]
            if data is None:
                continue
            chunk = max(1, len(data) // 2)
            while chunk >= 1 and time.monotonic() < deadline:
                p, progressed = 0, False
                while p < len(data) and time.monotonic() < deadline:
                    trial = data[:p] + data[p + chunk:]
                    seq[m] = trial
                    if still_fails(case):
                        data, progressed = trial, True
                    else:
                        seq[m] = data
                        p += chunk
                if not progressed:
                    chunk //= 2
            seq[m] = data
    return case


# =========================================================================== worker / campaign
class Progress:
    """A file-backed counter the supervisor reads after the worker dies."""

    def __init__(self, path: Path):
        if not path.exists() or path.stat().st_size < 24:
            path.write_bytes(b"\xff" * 16 + bytes(8))
        self._f = open(path, "r+b")
        self._m = mmap.mmap(self._f.fileno(), 24)

    def set(self, protocol_no: int, index: int, messages: int = 0):
        struct.pack_into("<qqq", self._m, 0, protocol_no, index, messages)

    @staticmethod
    def read(path: Path) -> tuple[int, int]:
        return struct.unpack("<qq", path.read_bytes()[:16])

    @staticmethod
    def messages(path: Path) -> int:
        """Messages of the cases the worker finished before its current one."""
        return struct.unpack("<q", path.read_bytes()[16:24])[0]


def worker(protocols, seed: int, start: int, count: int | None, seconds: float | None,
           out_dir: Path, progress_path: Path | None, minimize_budget: float = 10.0) -> dict:
    """Runs cases ``start, start+1, ...`` of each protocol in this process; returns stats."""
    progress = Progress(progress_path) if progress_path else None
    stats = {p: {"cases": 0, "messages": 0, "seconds": 0.0, "shrink_seconds": 0.0, "allowed": 0, "findings": {}}
             for p in protocols}
    per_proto = None if seconds is None else seconds / len(protocols)
    for pno, protocol in enumerate(protocols):
        bases(protocol)
        st = stats[protocol]
        t0 = time.monotonic()
        i = start
        while (count is None or i < start + count) and (per_proto is None or time.monotonic() - t0 < per_proto):
            if progress:
                progress.set(pno, i, st["messages"])   # before the case is made: a fuzzer bug is blamed right
            case = make_case(protocol, seed, i)
            try:
                if run_case(case) == "allowed":
                    st["allowed"] += 1
            except Finding as f:
                sig = f.signature

                def same(c, sig=sig):
                    try:
                        run_case(c)
                    except Finding as g:
                        return g.signature == sig
                    return False
                t_shrink = time.monotonic()
                small = minimize(case, same, minimize_budget) if minimize_budget else case
                st["shrink_seconds"] += time.monotonic() - t_shrink
                detail = f.detail
                if small is not case:
                    try:
                        run_case(small)
                    except Finding as g:
                        detail = g.detail          # what the shrunk input does
                save_finding(out_dir, small, f.kind, sig, detail)
                st["findings"][f"{f.kind}: {sig}"] = st["findings"].get(f"{f.kind}: {sig}", 0) + 1
            st["cases"] += 1
            st["messages"] += len(case.values)
            i += 1
        st["seconds"] = round(time.monotonic() - t0, 2)
        st["next"] = i
    return stats


def _crash_signature(stderr: str, rc: int) -> str:
    lines = stderr.splitlines()
    rt = next((ln for ln in lines if "runtime error:" in ln), None)
    if rt:                      # UBSan: where and what (its SUMMARY line says less)
        return rt.strip()[:200]
    summary = next((ln for ln in lines if ln.startswith("SUMMARY:")), None)
    if summary:
        return summary.replace("SUMMARY: ", "")[:200]
    fatal = next((ln for ln in lines if "Fatal Python error" in ln or "double free" in ln or "corrupted" in ln), None)
    if fatal:
        return fatal.strip()[:200]
    last = next((ln for ln in reversed(lines) if ln.strip()), "")
    return f"exit status {rc}" + (f": {last.strip()}" if last and rc > 0 else "")[:200]


def run_campaign(protocols, seed: int, count: int | None, seconds: float | None, out_dir: Path,
                 hang_seconds: float = 120.0, minimize_budget: float = 10.0, log=print) -> dict:
    """Runs the worker in subprocesses, restarting it after a crash or hang (saved as findings)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    progress_path = out_dir / f".progress-{os.getpid()}"
    summary = {p: {"cases": 0, "messages": 0, "seconds": 0.0, "shrink_seconds": 0.0, "allowed": 0, "findings": {}}
               for p in protocols}
    for protocol in protocols:
        start, t_start = 0, time.monotonic()
        while True:
            left = None if seconds is None else seconds / len(protocols) - (time.monotonic() - t_start)
            left_count = None if count is None else count - start
            if (left is not None and left <= 0) or (left_count is not None and left_count <= 0):
                break
            args = [sys.executable, "-m", "ticdc_fast.testing.fuzz", "--worker", "--protocol", protocol,
                    "--seed", str(seed), "--start", str(start), "--out", str(out_dir),
                    "--progress", str(progress_path), "--minimize", str(minimize_budget)]
            if CORE_ONLY:
                args.append("--core-only")
            if left_count is not None:
                args += ["--count", str(left_count)]
            if left is not None:
                args += ["--seconds", f"{left:.1f}"]
            progress_path.write_bytes(struct.pack("<qqq", -1, start - 1, 0))
            t_run = time.monotonic()
            root = str(Path(__file__).resolve().parents[2])
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
            proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            last, last_change, hung = None, time.monotonic(), False
            while proc.poll() is None:
                time.sleep(0.5)
                try:
                    now = Progress.read(progress_path)
                except (OSError, struct.error):
                    now = None
                if now != last:
                    last, last_change = now, time.monotonic()
                elif time.monotonic() - last_change > hang_seconds:
                    proc.kill()
                    hung = True
            out, err = proc.communicate()
            if proc.returncode == 0 and not hung:
                stats = json.loads(out.strip().splitlines()[-1])[protocol]
                s = summary[protocol]
                for k in ("cases", "messages", "seconds", "shrink_seconds", "allowed"):
                    s[k] += stats[k]
                for k, v in stats["findings"].items():
                    s["findings"][k] = s["findings"].get(k, 0) + v
                break
            _, index = Progress.read(progress_path)
            index = max(index, start)      # died before its first case
            try:
                case = make_case(protocol, seed, index)
            except RecursionError:
                case = Case(protocol, seed, index, "?", False, False, None, [], {})
            kind = "hang" if hung else "crash"
            sig = f"no progress for {hang_seconds:.0f} s" if hung else _crash_signature(err, proc.returncode)
            path = save_finding(out_dir, case, kind, sig, err[-20000:])
            log(f"{protocol}: {kind} at case {index}: {sig} -> {path}")
            s = summary[protocol]
            s["cases"] += index - start + 1
            s["messages"] += Progress.messages(progress_path) + len(case.values)
            s["seconds"] += time.monotonic() - t_run
            s["findings"][f"{kind}: {sig}"] = s["findings"].get(f"{kind}: {sig}", 0) + 1
            start = index + 1
    try:
        progress_path.unlink()
    except OSError:
        pass
    return summary


def replay(path: Path) -> str:
    """Re-runs a saved case in this process: "ok", "allowed", or the finding's text."""
    case = case_from_record(json.loads(Path(path).read_text()))
    try:
        return run_case(case)
    except Finding as f:
        return f"{f.kind}: {f.signature}\n{f.detail}"


def shrink_crash(path: Path, budget: float = 300.0) -> Path:
    """Shrinks a saved crash case by replaying candidates in subprocesses (same interpreter and
    environment, so under the sanitizer when run from ``scripts/sanitize.sh``); writes
    ``<case>.min.json`` beside it and returns its path."""
    rec = json.loads(Path(path).read_text())
    case = case_from_record(rec)
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    probe = Path(path).with_suffix(".probe.json")

    def crashes(c: Case) -> bool:
        probe.write_text(json.dumps(case_record(c)))
        r = subprocess.run([sys.executable, "-m", "ticdc_fast.testing.fuzz", "--replay", str(probe)],
                           env=env, capture_output=True, text=True, timeout=600)
        return r.returncode != 0 and _crash_signature(r.stderr, r.returncode) == rec["signature"]

    small = minimize(case, crashes, budget)
    probe.unlink(missing_ok=True)
    out = Path(path).with_suffix(".min.json")
    small_rec = case_record(small)
    small_rec.update(kind=rec["kind"], signature=rec["signature"], detail=rec["detail"],
                     description=small.describe() + " (shrunk)")
    out.write_text(json.dumps(small_rec, indent=1))
    return out


def report(out_dir: Path) -> str:
    """One line per finding directory under ``out_dir``: protocol, kind, signature, first case."""
    lines = []
    for sig_file in sorted(Path(out_dir).glob("*/*/signature.txt")):
        d = sig_file.parent
        cases = sorted(d.glob("case-*.json"), key=lambda p: (".min" not in p.name, int(p.name.split("-")[1].split(".")[0])))
        first = cases[0] if cases else None      # a shrunk crash case first
        n = ""
        if first is not None:
            rec = json.loads(first.read_text())
            n = f"{len(rec['values'])} msg, {sum(len(base64.b64decode(v)) for v in rec['values'] if v)} B"
        lines.append(f"{d.parent.name}\t{sig_file.read_text().strip()}\t{n}\t{first or d}")
    return "\n".join(lines)


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(prog="fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--protocol", default=",".join(PROTOCOLS),
                    help=f"comma-separated: {', '.join(PROTOCOLS)} (default: all)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, help="cases per protocol")
    ap.add_argument("--seconds", type=float, help="time budget (split evenly between protocols)")
    ap.add_argument("--out", default="fuzz-findings", help="directory for findings (default ./fuzz-findings)")
    ap.add_argument("--hang-seconds", type=float, default=120.0)
    ap.add_argument("--minimize", type=float, default=10.0, help="seconds to shrink each finding (0: off)")
    ap.add_argument("--replay", metavar="CASE.json", help="re-run one saved case and print the outcome")
    ap.add_argument("--report", metavar="DIR", help="list the findings saved under DIR")
    ap.add_argument("--shrink-crash", metavar="CASE.json", help="shrink a saved crash case (subprocess replays)")
    ap.add_argument("--in-process", action="store_true", help="no supervisor (a crash ends the run)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--progress", help=argparse.SUPPRESS)
    ap.add_argument("--core-only", action="store_true",
                    help="no twin: only crashes, hangs and non-DecodeError exceptions of the core (sanitizer campaigns)")
    a = ap.parse_args(argv)
    global CORE_ONLY
    CORE_ONLY = a.core_only
    if a.replay:
        print(replay(Path(a.replay)))
        return 0
    if a.shrink_crash:
        print(shrink_crash(Path(a.shrink_crash), a.minimize if a.minimize > 10 else 300.0))
        return 0
    if a.report:
        print(report(Path(a.report)))
        return 0
    protocols = [p.strip() for p in a.protocol.split(",") if p.strip()]
    for p in protocols:
        if p not in PROTOCOLS:
            ap.error(f"unknown protocol {p!r}")
    if a.count is None and a.seconds is None:
        a.count = 1000
    out = Path(a.out)
    if a.worker or a.in_process:
        out.mkdir(parents=True, exist_ok=True)
        stats = worker(protocols, a.seed, a.start, a.count, a.seconds, out,
                       Path(a.progress) if a.progress else None, a.minimize)
        print(json.dumps(stats))
        return 0
    summary = run_campaign(protocols, a.seed, a.count, a.seconds, out, a.hang_seconds, a.minimize,
                           log=lambda s: print(s, file=sys.stderr, flush=True))
    for p, s in summary.items():
        busy = max(s["seconds"] - s["shrink_seconds"], 1e-9)   # rates without the time spent shrinking findings
        print(f"{p}: {s['cases']} cases, {s['messages']} messages in {s['seconds']:.1f} s "
              f"({s['messages'] / busy:.0f} messages/s, {s['cases'] / busy:.1f} cases/s not counting "
              f"{s['shrink_seconds']:.1f} s of shrinking), "
              f"{s['allowed']} allowed leniencies, {sum(s['findings'].values())} findings")
        for k, v in sorted(s["findings"].items()):
            print(f"    {v:6d}  {k}")
    print(json.dumps(summary), file=sys.stderr)
    return 1 if any(s["findings"] for s in summary.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
