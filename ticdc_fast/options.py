"""One vocabulary: every decoder option, its meaning, its default and who takes it.

The ``ticdc`` Spark source, the CLI and docs/api.md read their option names from ``OPTIONS``;
a name is accepted in snake_case (``on_error``) and in Spark's camelCase (``onError``), compared
without case and underscores (``spelling_key``).  An option nobody takes is an error naming the
valid ones (``resolve_names``), never ignored.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

OPEN, SIMPLE, AVRO = "open", "simple", "avro"
ALL = (OPEN, SIMPLE, AVRO)


@dataclass(frozen=True)
class Option:
    name: str            # snake_case, as the decoders' keyword
    kind: str            # "str", "bool", "int", "float", "json": how a text value (source, CLI) is read
    default: object
    protocols: tuple     # the decoders that take it
    meaning: str
    decoder: bool = True  # a keyword of the decoders (else read by the source or spark.decode)

    @property
    def camel(self) -> str:
        head, *rest = self.name.split("_")
        return head + "".join(w.capitalize() for w in rest)


OPTIONS: dict[str, Option] = {o.name: o for o in (
    Option("protocol", "str", None, ALL, "open, simple-json, simple-avro or avro", decoder=False),
    Option("table", "str", None, ALL, "typed output of this table, 'db.table'"),
    Option("schema", "str", None, ALL, "typed schema: pyarrow schema, StructType, DDL string or 'auto'"),
    Option("tables", "str", None, ALL, "many tables in one pass: {'db.t': schema or None}"),
    Option("unlisted", "str", "skip", ALL, "rows of tables not in tables=: skip or generic"),
    Option("on_error", "str", "fail", ALL, "a message that cannot be decoded: fail, skip or dead_letter"),
    Option("on_schema_change", "str", "fail", ALL, "typed: a DDL / value schema / row that changes the typed columns: fail or ignore"),
    Option("timezone", "str", "UTC", ALL, "the TiCDC server zone TIMESTAMP text was written in"),
    Option("control_events", "bool", True, ALL, "typed: keep RESOLVED and DDL rows"),
    Option("old_image", "bool", False, ALL, "typed: add the _before struct (the old row)"),
    Option("invalid_utf8", "str", "replace", ALL, "invalid UTF-8 in text: replace (U+FFFD) or error"),
    Option("implementation", "str", "auto", ALL, "auto, cython (the core) or python (the twin)"),
    Option("compression", "str", "none", (OPEN, SIMPLE), "large-message-handle-compression: none, snappy, lz4"),
    Option("max_message_bytes", "int", 128 << 20, (OPEN, SIMPLE), "the most bytes one message may decompress to"),
    Option("claim_check_base", "str", None, (OPEN, SIMPLE), "where claim-check files live (fsspec URL)", decoder=False),
    Option("hold_max_rows", "int", 100_000, (SIMPLE,), "rows held while their schema is unknown, at most"),
    Option("hold_max_bytes", "int", 256 << 20, (SIMPLE,), "bytes held while their schema is unknown, at most"),
    Option("on_hold_overflow", "str", "raise", (SIMPLE,), "at the hold bound: raise or emit (_undecodable rows)"),
    Option("verify_checksum", "bool", False, (SIMPLE,), "recompute TiCDC's row checksums"),
    Option("schema_version", "int", None, (SIMPLE, AVRO), "typed: the schema version (simple) / registry id (Avro) "
           "the typed schema was taken from; earlier ones are history"),
    Option("registry", "str", None, (AVRO,), "Schema Registry URL (or client / config dict)"),
    Option("registry_timeout", "float", 10.0, (AVRO,), "seconds per registry request"),
    Option("registry_retries", "int", 3, (AVRO,), "registry retries"),
    Option("schemas", "json", None, (SIMPLE, AVRO), "schemas seeded so none has to be read first: "
           "simple: a list of TableSchema JSON (each names its table and version); avro: "
           "{registry id: writer schema} (the wire names only the id)"),
    Option("extra_columns", "str", "ignore", (AVRO,), "typed: a writer column the schema lacks: ignore or error"),
)}

# old spellings kept one release: old name -> (protocols it applied to, new name)
RENAMED = {"schema_id": ((AVRO,), "schema_version")}


def spelling_key(name: str) -> str:
    """``onError``, ``on_error``, ``ONERROR`` -> ``onerror``."""
    return str(name).replace("_", "").lower()


_BY_SPELLING = {spelling_key(o.name): o.name for o in OPTIONS.values()}


def protocol_family(protocol: str) -> str:
    return protocol.split("-")[0]


def resolve_names(given, *, where: str, others=()) -> dict:
    """``{canonical name: value}`` of ``given`` (any spelling).  An unknown name is a ValueError
    listing the valid ones (and ``others``, the names the caller reads itself)."""
    out, unknown = {}, []
    for k, v in given.items():
        key = spelling_key(k)
        if key in _BY_SPELLING:
            out[_BY_SPELLING[key]] = v
        else:
            unknown.append(k)
    if unknown:
        valid = sorted(o.camel for o in OPTIONS.values())
        raise ValueError(f"{where}: unknown option{'s' if len(unknown) > 1 else ''} "
                         f"{', '.join(map(repr, unknown))}; the options are {', '.join(valid)} "
                         f"(camelCase or snake_case){''.join(', ' + o for o in others)}")
    return out


def parse_value(name: str, text):
    """A text value (a Spark option, a CLI flag) as its option's kind."""
    kind = OPTIONS[name].kind
    if kind == "json":
        return _json_value(name, text)
    s = str(text).strip()
    if kind == "bool":
        if s.lower() in ("true", "1", "yes"):
            return True
        if s.lower() in ("false", "0", "no"):
            return False
        raise ValueError(f"option {OPTIONS[name].camel!r} must be true or false, got {text!r}")
    if kind in ("int", "float"):
        try:
            return int(s) if kind == "int" else float(s)
        except ValueError:
            raise ValueError(f"option {OPTIONS[name].camel!r} must be a number, got {text!r}") from None
    return s


def _json_value(name: str, text):
    """A JSON option: the text (``@path``: the file's text) parsed; a value already parsed
    (``spark.decode``'s keywords) as it is."""
    if not isinstance(text, (str, bytes)):
        return text
    s = text.strip()
    if isinstance(s, str) and s.startswith("@"):
        with open(s[1:], "rb") as f:
            s = f.read()
    import orjson
    try:
        return orjson.loads(s)
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"option {OPTIONS[name].camel!r} must be JSON (or @file of JSON): {exc}") from None


def check_protocol(name: str, protocol: str, where: str) -> None:
    fam = protocol_family(protocol)
    if fam not in OPTIONS[name].protocols:
        takers = ", ".join(OPTIONS[name].protocols)
        raise ValueError(f"{where}: option {OPTIONS[name].camel!r} is for the {takers} protocol"
                         f"{'s' if len(OPTIONS[name].protocols) > 1 else ''}, not {protocol!r}")


def renamed(kwargs: dict, owner: str) -> dict:
    """``kwargs`` with old option names replaced by their new ones (a DeprecationWarning each)."""
    for old, (_, new) in RENAMED.items():
        if old in kwargs:
            value = kwargs.pop(old)
            warnings.warn(f"{owner}: {old}= is now {new}=; {old}= goes in the next release",
                          DeprecationWarning, stacklevel=3)
            if kwargs.get(new) is not None and value is not None and kwargs[new] != value:
                raise ValueError(f"{owner}: give {new}= only (not {old}= too)")
            if kwargs.get(new) is None:
                kwargs[new] = value
    return kwargs
