"""Claim-check files: reading them (resolvers) and unwrapping what TiCDC wrote into them.

With ``large-message-handle-option = "claim-check"`` TiCDC writes each too-large event to a file
``<uuid>.json`` in the changefeed's claim-check storage and sends in Kafka only the event's
handle-key columns plus the file's location, ``<claim-check-storage-uri>/<uuid>.json``
(protocols.md §0, §A.6, §B.5).  A *resolver* is any callable ``location -> bytes`` returning the
file's content; the decoders call it once per claim-check event, never for other messages.

Resolver contract, as the decoders read it:

* return the file's bytes;
* raise ``DecodeError`` when the *location itself* is malformed (the message is at fault);
* raise anything else (``OSError``, a cloud SDK error, ``UnavailableError``) when the file
  could not be read: the decoders turn it into ``UnavailableError`` (never skipped by an error
  policy: the message may be fine, retry once the store is back).
"""
from __future__ import annotations

import base64
import binascii
import threading
from collections import OrderedDict
from typing import Callable

import orjson

from .errors import DecodeError, UnavailableError

__all__ = ["FsspecResolver", "fsspec_resolver", "local_claim_check"]

Resolver = Callable[[str], bytes]

# Storage schemes TiCDC's external storage writes that fsspec spells differently.
_SCHEME_ALIASES = {"azure": "az", "azblob": "az"}


def file_name(location: str) -> str:
    """The file name TiCDC put at the end of the location (what its own consumer reads from its
    configured storage)."""
    name = location.rstrip("/").rsplit("/", 1)[-1]
    if not name or name in (".", "..") or "\\" in name or "\0" in name:
        raise DecodeError(f"claim-check location {location!r} names no file")
    return name


def _storage_url(location: str) -> str:
    scheme, sep, rest = location.partition("://")
    if not sep:
        return location
    scheme = scheme.lower()
    if scheme == "file":
        # TiCDC's local storage has written both file:///abs and file:////abs
        return "file:///" + rest.lstrip("/")
    return _SCHEME_ALIASES.get(scheme, scheme) + "://" + rest


class _ByteLRU:
    """Least-recently-used cache bounded by total bytes and by entry count; thread-safe (one
    resolver may serve decoders in several threads)."""

    def __init__(self, max_bytes: int, max_entries: int):
        self.max_bytes, self.max_entries = int(max_bytes), int(max_entries)
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> bytes | None:
        with self._lock:
            data = self._items.get(key)
            if data is not None:
                self._items.move_to_end(key)
            return data

    def put(self, key: str, data: bytes) -> None:
        if len(data) > self.max_bytes or self.max_entries <= 0:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= len(old)
            self._items[key] = data
            self._bytes += len(data)
            while self._bytes > self.max_bytes or len(self._items) > self.max_entries:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= len(dropped)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def bytes(self) -> int:
        return self._bytes


class FsspecResolver:
    """The resolver ``fsspec_resolver`` returns (see there).  Picklable (cloudpickle ships it
    to Spark workers): a copy starts with an empty cache."""

    def __init__(self, base=None, storage_options: dict | None = None,
                 cache_bytes: int = 64 << 20, cache_entries: int = 1024):
        self.base = None if base is None else (str(base).rstrip("/") or "/")
        self.storage_options = dict(storage_options or {})
        self.cache = _ByteLRU(cache_bytes, cache_entries)

    def url(self, location: str) -> str:
        """Where ``location`` is read from."""
        if not isinstance(location, str) or not location:
            raise DecodeError(f"claim-check location {location!r} is empty")
        if self.base is None:
            return _storage_url(location)
        return _storage_url(self.base.rstrip("/") + "/" + file_name(location))

    def __call__(self, location: str) -> bytes:
        import fsspec   # a runtime dependency; imported here so that importing ticdc_fast stays light

        url = self.url(location)
        data = self.cache.get(url)
        if data is not None:
            return data
        try:
            fs, path = fsspec.core.url_to_fs(url, **self.storage_options)
            data = bytes(fs.cat_file(path))
        except Exception as exc:  # noqa: BLE001 - every backend has its own errors
            shown = repr(location) if url == location else f"{location!r} (read as {url!r})"
            raise UnavailableError(f"claim-check file {shown} could not be read: "
                                   f"{type(exc).__name__}: {exc}", location=location) from exc
        self.cache.put(url, data)
        return data

    def __reduce__(self):
        return (type(self), (self.base, self.storage_options, self.cache.max_bytes, self.cache.max_entries))

    def __repr__(self) -> str:
        return f"fsspec_resolver({self.base!r})"


def fsspec_resolver(base: str | None = None, *, storage_options: dict | None = None,
                    cache_bytes: int = 64 << 20, cache_entries: int = 1024) -> FsspecResolver:
    """A resolver reading claim-check files through fsspec.

    Parameters
    ----------
    base:
        ``None`` (default): read each location as TiCDC wrote it (``s3://bucket/prefix/<uuid>.json``,
        ``gcs://…``, ``azure://…``, ``file:///dir/<uuid>.json``).  Otherwise a storage URI or local
        directory to read the file *name* from, as TiCDC's own consumer does: use it when the
        consumer reaches the files another way (a mirror, another bucket or mount).  Giving
        ``base`` also keeps a message from pointing the consumer at an arbitrary path or URL.
    storage_options:
        Passed to the fsspec filesystem, e.g. ``{"key": ..., "secret": ...,
        "client_kwargs": {"endpoint_url": "http://minio:9000"}}`` for s3fs.  Remote schemes need
        their fsspec backend installed (``s3fs``, ``gcsfs``, ``adlfs``).
    cache_bytes, cache_entries:
        Bound of the cache of files read (least recently used first out); a retried batch does
        not read its files again.  ``cache_entries=0`` disables it.

    Every error names the location; an unreadable file raises ``UnavailableError``.
    """
    return FsspecResolver(base, storage_options, cache_bytes, cache_entries)


def local_claim_check(root) -> Resolver:
    """A resolver for claim-check files copied to a local directory: the location's file name
    is read from ``root`` (``fsspec_resolver(root)`` without a cache)."""
    return fsspec_resolver(str(root), cache_entries=0)


# ----------------------------------------------------------------------------- decoder side
def fetch(resolver: Resolver, location: str, message_index) -> bytes:
    """Call the user's resolver for one claim-check event of message ``message_index``."""
    try:
        data = resolver(location)
    except UnavailableError as exc:
        raise UnavailableError(exc.reason, message_index, location=exc.location or location) from exc
    except DecodeError as exc:
        raise DecodeError(exc.reason if location in exc.reason
                          else f"claim-check location {location!r}: {exc.reason}",
                          message_index, part="key") from None
    except Exception as exc:  # noqa: BLE001 - any failure to read is "unavailable"
        raise UnavailableError(f"claim-check file {location!r} could not be read: "
                               f"{type(exc).__name__}: {exc}", message_index, location=location) from exc
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise UnavailableError(f"the claim-check resolver returned {type(data).__name__}, not bytes, "
                               f"for {location!r}", message_index, location=location)
    return bytes(data)


def unwrap(raw: bytes, location: str, message_index) -> tuple[bytes | None, bytes | None]:
    """``(key, value)`` of a claim-check file: Go JSON ``{"key":<base64>,"value":<base64>}``
    (``null`` for a nil slice).  Anything else is a DecodeError naming the location."""
    def bad(why: str) -> DecodeError:
        return DecodeError(f"claim-check file {location!r} {why}", message_index, part="value")

    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise bad(f"is not JSON ({exc})") from None
    if type(doc) is not dict:
        raise bad("is not a JSON object with key and value")
    out = []
    for name in ("key", "value"):
        v = doc.get(name)
        if v is None:
            out.append(None)
            continue
        if not isinstance(v, str):
            raise bad(f"has a {name} that is not a base64 string")
        try:
            out.append(base64.b64decode(v, validate=True))
        except (binascii.Error, ValueError):
            raise bad(f"has a {name} that is not valid base64") from None
    return out[0], out[1]
