"""Writer schemas by Confluent schema id: given directly (offline) or fetched from a Schema
Registry with confluent-kafka's ``SchemaRegistryClient`` (auth, TLS, timeouts, retries are its
config keys).  Schemas are immutable, so each id is looked up once per process."""
from __future__ import annotations

import threading
from urllib.parse import urlsplit, urlunsplit

import orjson

_CACHE: dict[tuple[str, int], str] = {}
_LOCK = threading.Lock()


def redact_url(url: str) -> str:
    """The URL without user:password (comma-separated failover lists and IPv6 hosts kept)."""
    if "," in url:
        return ",".join(redact_url(u.strip()) for u in url.split(","))
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if ":" in host:
            host = f"[{host}]"
        if parts.port:
            host = f"{host}:{parts.port}"
    except ValueError:
        return "<invalid url>"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


class RegistryFailure(Exception):
    """The registry could not give a schema; the decoder turns it into DecodeError.

    ``missing``: the registry answered that the id does not exist (or no given schema has it):
    the message names an id nobody knows, a fault of that message.  Otherwise the registry
    could not be asked (down, timeout, 5xx, auth) and no message is at fault."""

    def __init__(self, text: str, *, missing: bool = False):
        super().__init__(text)
        self.missing = missing


class SchemaSource:
    """Resolves schema ids to writer-schema JSON text.

    ``registry``: a URL, a ``SchemaRegistryClient`` config dict (``{"url": ..., "basic.auth.user.info":
    "user:pass", "bearer.auth.token": ..., "ssl.ca.location": ..., "timeout": ..., "max.retries": ...}``),
    an existing ``SchemaRegistryClient``, or ``None``.  ``schemas``: ``{id: schema JSON text/dict}``
    for offline use (checked first)."""

    def __init__(self, registry=None, schemas: dict | None = None, *, timeout: float = 10.0,
                 retries: int = 3):
        self.offline = {int(k): (v if isinstance(v, str) else orjson.dumps(v).decode())
                        for k, v in (schemas or {}).items()}
        self._client = None
        self._config = None
        self.url = None
        if registry is None:
            return
        if isinstance(registry, str):
            registry = {"url": registry}
        if isinstance(registry, dict):
            conf = dict(registry)
            conf.setdefault("timeout", timeout)
            conf.setdefault("max.retries", retries)
            self._config = conf
            self.url = redact_url(str(conf.get("url", "")))
        else:
            self._client = registry
            self.url = redact_url(str(getattr(registry, "_rest_client", None) and
                                      registry._rest_client.base_urls[0] or "<client>"))

    def _client_or_create(self):
        if self._client is None and self._config is not None:
            try:
                from confluent_kafka.schema_registry import SchemaRegistryClient
            except ImportError as exc:
                raise RegistryFailure('a schema registry needs confluent-kafka: pip install '
                                      '"ticdc_fast[registry]"') from exc
            self._client = SchemaRegistryClient(self._config)
        return self._client

    def _explain(self, exc) -> tuple:
        """(HTTP status or None, its prefix for a message, the error text without the password)."""
        code = getattr(exc, "http_status_code", None)
        secret = self._config.get("basic.auth.user.info", "\0") if self._config else "\0"
        return code, f"HTTP {code}: " if code else "", str(getattr(exc, "error_message", "") or exc).replace(secret, "***")

    def get(self, schema_id: int) -> str:
        if schema_id in self.offline:
            return self.offline[schema_id]
        key = (self.url or "", schema_id)
        with _LOCK:
            hit = _CACHE.get(key)
        if hit is not None:
            return hit
        client = self._client_or_create()
        if client is None:
            raise RegistryFailure(f"schema id {schema_id} is not among the given schemas and no registry is set",
                                  missing=True)
        try:
            text = client.get_schema(schema_id).schema_str
        except Exception as exc:  # SchemaRegistryError, httpx errors, timeouts
            code, what, msg = self._explain(exc)
            raise RegistryFailure(f"schema id {schema_id} from registry {self.url}: {what}{msg}",
                                  missing=code == 404) from None
        with _LOCK:
            _CACHE[key] = text
        return text

    def latest(self, subject: str) -> tuple[int, str]:
        """(schema id, writer-schema JSON text) of the latest version registered under
        ``subject``; the text is cached by id like ``get``'s."""
        client = self._client_or_create()
        if client is None:
            raise RegistryFailure(f"the latest schema of subject {subject!r} needs a registry", missing=True)
        try:
            got = client.get_latest_version(subject)
        except Exception as exc:  # SchemaRegistryError, httpx errors, timeouts
            code, what, msg = self._explain(exc)
            raise RegistryFailure(f"the latest schema of subject {subject!r} from registry {self.url}: {what}{msg}",
                                  missing=code == 404) from None
        sid, text = int(got.schema_id), got.schema.schema_str
        with _LOCK:
            _CACHE.setdefault((self.url or "", sid), text)
        return sid, text
