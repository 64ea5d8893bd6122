"""A real, local Confluent-compatible schema registry for tests (stdlib only).

``LocalSchemaRegistry`` serves the subset of the Confluent Schema Registry REST API that
TiCDC's Avro encoder/decoder and confluent-kafka's ``SchemaRegistryClient`` (with
``AvroSerializer``/``AvroDeserializer``) use, over real HTTP on ``127.0.0.1``, from a
``ThreadingHTTPServer`` in a daemon thread::

    with LocalSchemaRegistry() as reg:
        sid = reg.register("orders-value", schema_json)        # in-process
        urllib.request.urlopen(f"{reg.url}/schemas/ids/{sid}")   # over HTTP

Endpoints (all JSON, ``Content-Type: application/vnd.schemaregistry.v1+json``; query strings
such as ``?normalize=false``, ``?subject=…&format=…``, ``?deleted=false`` are accepted and
ignored):

========  ===========================================  ==========================================
GET       ``/``                                        ``{}`` (exactly; TiCDC checks the text)
GET       ``/schemas/ids/{id}``                        ``{"schema": s}`` (+ ``schemaType`` when not
                                                       AVRO, + ``references`` when present);
                                                       404 ``40403`` when unknown
GET       ``/schemas/ids/{id}/subjects``, ``/versions``  subjects / ``[{"subject","version"}]``
GET       ``/schemas/types``                           ``["AVRO", "JSON", "PROTOBUF"]``
POST      ``/subjects/{subject}/versions``             register: ``{"id": n}`` (422 ``42201`` for
                                                       a body without a JSON ``schema``)
POST      ``/subjects/{subject}``                      lookup: ``{"subject","id","version",
                                                       "schema"}``; 404 ``40401`` (subject) /
                                                       ``40403`` (schema)
GET       ``/subjects``                                sorted subject names
GET       ``/subjects/{subject}/versions``             ``[1, 2, …]``; 404 ``40401``
GET       ``/subjects/{subject}/versions/{v}``         ``{"subject","id","version","schema"}``;
                                                       ``v`` = number, ``latest`` or ``-1``;
                                                       404 ``40401`` / ``40402``
DELETE    ``/subjects/{subject}``, ``…/versions/{v}``  deleted versions / version
GET/PUT   ``/config``, ``/config/{subject}``           ``{"compatibilityLevel": …}`` /
                                                       ``{"compatibility": …}`` (never enforced)
GET/PUT   ``/mode``, ``/mode/{subject}``               ``{"mode": "READWRITE"}``
GET       ``/associations/resources/{ns}/{name}``      ``[]`` (asked by confluent-kafka 2.16
                                                       serializers before TopicNameStrategy)
POST      ``/compatibility/subjects/{s}/versions…``    ``{"is_compatible": true}``
========  ===========================================  ==========================================

Identity rules follow Confluent: an id is global and names one schema (type + JSON content,
compared after parsing, so whitespace and key order do not matter + references); registering
the same schema again, under any subject, returns the same id, and a subject gets a new version
only for a schema it does not hold yet.  ``GET /schemas/ids/{id}`` returns the text as it was
first registered (a real registry returns its own canonical rewrite of it).

Test hooks: ``down = True`` makes every request answer 503; ``fail_next = n`` makes the next
``n`` requests answer 500 (``fail_status`` changes the code); ``requests`` logs ``(method,
path)`` without the query string, ``request_log`` logs ``(method, path_with_query)``.
With ``basic_auth=(user, password)`` and/or ``bearer_token=…`` every request must carry a
matching ``Authorization`` header (either one when both are set), else 401.

Note for confluent-kafka clients: ``SchemaRegistryClient`` retries 408/429/5xx answers
``max.retries`` times (default 3) with ``retries.wait.ms`` (default 1000 ms) jittered
back-off, so pass ``{"max.retries": 0}`` in "registry down" tests to keep them fast.
"""
from __future__ import annotations

import base64
import hmac
import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

__all__ = ["LocalSchemaRegistry", "CONTENT_TYPE"]

CONTENT_TYPE = "application/vnd.schemaregistry.v1+json"
_COMPATIBILITY_LEVELS = ("NONE", "BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD",
                         "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE")


class _HTTPError(Exception):
    def __init__(self, status: int, error_code: int, message: str):
        super().__init__(message)
        self.status = status
        self.error_code = error_code
        self.message = message


def _canonical(schema_type: str, schema: str, references) -> tuple:
    """Identity of a schema: its type, its parsed JSON re-serialised with sorted keys (so
    formatting does not matter), and its references."""
    try:
        text = json.dumps(json.loads(schema), sort_keys=True, separators=(",", ":"))
    except ValueError:
        text = schema                       # PROTOBUF text, or anything non-JSON: exact text
    refs = json.dumps(references or [], sort_keys=True)
    return schema_type, text, refs


class LocalSchemaRegistry:
    """A Confluent-REST schema registry on ``127.0.0.1`` (see the module docstring).

    Parameters
    ----------
    host, port:
        Where to listen; ``port=0`` picks a free port (read it back from ``url``).
    basic_auth:
        ``(user, password)``: require HTTP Basic auth.
    bearer_token:
        Require ``Authorization: Bearer <token>``.
    fail_next:
        The next ``fail_next`` requests get HTTP ``fail_status`` (500) before anything else.
    """

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0,
                 basic_auth: tuple[str, str] | None = None, bearer_token: str | None = None,
                 fail_next: int = 0):
        self.host = host
        self.port = port
        self.basic_auth = basic_auth
        self.bearer_token = bearer_token
        self.fail_next = fail_next
        self.fail_status = 500
        self.down = False
        self.schemas: dict[int, str] = {}
        self.schema_types: dict[int, str] = {}
        self.schema_references: dict[int, list] = {}
        # subject -> schema id of version i+1 (None: a deleted version; numbers are never reused)
        self.subjects: dict[str, list[int | None]] = {}
        self.compatibility = "BACKWARD"
        self.subject_compatibility: dict[str, str] = {}
        self.requests: list[tuple[str, str]] = []
        self.request_log: list[tuple[str, str]] = []
        self._ids: dict[tuple, int] = {}
        self._next_id = 1
        self._lock = threading.RLock()
        self._conns: set = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> "LocalSchemaRegistry":
        if self._server is not None:
            return self
        handler = type("_Handler", (_Handler,), {"registry": self})
        server = _Server((self.host, self.port), handler)
        self._server = server
        self.port = server.server_address[1]
        self.url = f"http://{self.host}:{self.port}"
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name=f"LocalSchemaRegistry:{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        with self._lock:                     # drop kept-alive client connections too
            conns, self._conns = list(self._conns), set()
        for sock in conns:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "LocalSchemaRegistry":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalSchemaRegistry(url={self.url!r}, schemas={len(self.schemas)})"

    # ------------------------------------------------------------------ state
    def register(self, subject: str, schema_str: str, schema_type: str = "AVRO",
                 references: list | None = None) -> int:
        """Register ``schema_str`` under ``subject`` (in-process, no HTTP); returns its id."""
        schema_type = (schema_type or "AVRO").upper()
        key = _canonical(schema_type, schema_str, references)
        with self._lock:
            sid = self._ids.get(key)
            if sid is None:
                sid = self._next_id
                self._next_id += 1
                self._ids[key] = sid
                self.schemas[sid] = schema_str
                self.schema_types[sid] = schema_type
                if references:
                    self.schema_references[sid] = list(references)
            versions = self.subjects.setdefault(subject, [])
            if sid not in versions:
                versions.append(sid)
            return sid

    def lookup(self, subject: str, schema_str: str, schema_type: str = "AVRO",
               references: list | None = None) -> dict:
        """``POST /subjects/{subject}`` semantics; raises ``KeyError`` when not found."""
        with self._lock:
            versions = self.subjects.get(subject)
            if versions is None:
                raise KeyError(f"subject {subject!r} not found")
            sid = self._ids.get(_canonical((schema_type or "AVRO").upper(), schema_str, references))
            if sid is None or sid not in versions:
                raise KeyError("schema not found")
            return self._version_info(subject, versions.index(sid) + 1)

    def _version_info(self, subject: str, version: int) -> dict:
        sid = self.subjects[subject][version - 1]
        out = {"subject": subject, "version": version, "id": sid, "schema": self.schemas[sid]}
        if self.schema_types.get(sid, "AVRO") != "AVRO":
            out["schemaType"] = self.schema_types[sid]
        if sid in self.schema_references:
            out["references"] = self.schema_references[sid]
        return out

    # ------------------------------------------------------------------ HTTP routing
    def _check_auth(self, header: str | None) -> bool:
        if self.basic_auth is None and self.bearer_token is None:
            return True
        if not header:
            return False
        scheme, _, cred = header.strip().partition(" ")
        scheme = scheme.lower()
        cred = cred.strip()
        if scheme == "basic" and self.basic_auth is not None:
            want = base64.b64encode(f"{self.basic_auth[0]}:{self.basic_auth[1]}".encode()).decode()
            return hmac.compare_digest(cred.encode(), want.encode())
        if scheme == "bearer" and self.bearer_token is not None:
            return hmac.compare_digest(cred.encode(), self.bearer_token.encode())
        return False

    def _handle(self, method: str, raw_path: str, headers, body: bytes) -> tuple[int, object]:
        parts = urlsplit(raw_path)
        path = parts.path or "/"
        with self._lock:
            self.requests.append((method, path))
            self.request_log.append((method, raw_path))
            if self.down:
                return 503, {"error_code": 50003, "message": "Schema registry is down"}
            if self.fail_next > 0:
                self.fail_next -= 1
                return self.fail_status, {"error_code": 50001,
                                          "message": "Injected failure (fail_next)"}
        if not self._check_auth(headers.get("Authorization")):
            return 401, {"error_code": 401, "message": "Unauthorized"}
        segs = [unquote(s) for s in path.strip("/").split("/")] if path.strip("/") else []
        try:
            return self._route(method, segs, body)
        except _HTTPError as e:
            return e.status, {"error_code": e.error_code, "message": e.message}

    def _json_body(self, body: bytes) -> dict:
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            raise _HTTPError(400, 400, "Unrecognized request body (invalid JSON)") from None
        if not isinstance(data, dict):
            raise _HTTPError(422, 422, "Request body must be a JSON object")
        return data

    def _schema_from_body(self, body: bytes) -> tuple[str, str, list | None]:
        data = self._json_body(body)
        schema = data.get("schema")
        if not isinstance(schema, str):
            raise _HTTPError(422, 42201, "Invalid schema: the request has no 'schema' string")
        schema_type = str(data.get("schemaType") or "AVRO").upper()
        if schema_type in ("AVRO", "JSON"):
            try:
                json.loads(schema)
            except ValueError as e:
                raise _HTTPError(422, 42201, f"Invalid schema: {e}") from None
        refs = data.get("references") or None
        return schema, schema_type, refs

    def _subject_versions(self, subject: str) -> list[int]:
        versions = self.subjects.get(subject)
        if not versions or all(x is None for x in versions):
            raise _HTTPError(404, 40401, f"Subject '{subject}' not found.")
        return versions

    def _version_number(self, subject: str, token: str) -> int:
        versions = self._subject_versions(subject)
        if token in ("latest", "-1"):
            return max(i + 1 for i, x in enumerate(versions) if x is not None)
        try:
            v = int(token)
        except ValueError:
            raise _HTTPError(422, 42202, f"Invalid version {token!r}") from None
        if not 1 <= v <= len(versions) or versions[v - 1] is None:
            raise _HTTPError(404, 40402, f"Version {v} not found.")
        return v

    def _route(self, method: str, segs: list[str], body: bytes) -> tuple[int, object]:
        n = len(segs)
        head = segs[0] if segs else ""
        with self._lock:
            if n == 0:
                if method == "GET":
                    return 200, {}
            elif head == "schemas":
                if n == 2 and segs[1] == "types" and method == "GET":
                    return 200, ["AVRO", "JSON", "PROTOBUF"]
                if n >= 3 and segs[1] == "ids" and method == "GET":
                    try:
                        sid = int(segs[2])
                    except ValueError:
                        raise _HTTPError(404, 40403, "Schema not found") from None
                    if sid not in self.schemas:
                        raise _HTTPError(404, 40403, "Schema not found")
                    if n == 3:
                        out = {"schema": self.schemas[sid]}
                        if self.schema_types.get(sid, "AVRO") != "AVRO":
                            out["schemaType"] = self.schema_types[sid]
                        if sid in self.schema_references:
                            out["references"] = self.schema_references[sid]
                        return 200, out
                    if n == 4 and segs[3] == "subjects":
                        return 200, sorted(s for s, v in self.subjects.items() if sid in v)
                    if n == 4 and segs[3] == "versions":
                        return 200, [{"subject": s, "version": v.index(sid) + 1}
                                     for s, v in sorted(self.subjects.items()) if sid in v]
            elif head == "subjects":
                if n == 1 and method == "GET":
                    return 200, sorted(s for s, v in self.subjects.items()
                                   if any(x is not None for x in v))
                subject = segs[1] if n > 1 else ""
                if n == 2 and method == "POST":              # lookup
                    schema, stype, refs = self._schema_from_body(body)
                    self._subject_versions(subject)
                    try:
                        return 200, self.lookup(subject, schema, stype, refs)
                    except KeyError:
                        raise _HTTPError(404, 40403, "Schema not found") from None
                if n == 2 and method == "DELETE":
                    versions = self._subject_versions(subject)
                    deleted = [i + 1 for i, x in enumerate(versions) if x is not None]
                    del self.subjects[subject]
                    return 200, deleted
                if n == 3 and segs[2] == "versions":
                    if method == "POST":                      # register
                        schema, stype, refs = self._schema_from_body(body)
                        return 200, {"id": self.register(subject, schema, stype, refs)}
                    if method == "GET":
                        return 200, [i + 1 for i, x in enumerate(self._subject_versions(subject))
                                     if x is not None]
                if n == 4 and segs[2] == "versions":
                    v = self._version_number(subject, segs[3])
                    if method == "GET":
                        return 200, self._version_info(subject, v)
                    if method == "DELETE":
                        self.subjects[subject][v - 1] = None   # keep later version numbers
                        if all(x is None for x in self.subjects[subject]):
                            del self.subjects[subject]
                        return 200, v
                if n == 5 and segs[2] == "versions" and segs[4] == "schema" and method == "GET":
                    v = self._version_number(subject, segs[3])
                    return 200, json.loads(self._version_info(subject, v)["schema"])
            elif head == "config":
                subject = segs[1] if n > 1 else None
                if method == "GET":
                    level = (self.subject_compatibility.get(subject, self.compatibility)
                             if subject else self.compatibility)
                    return 200, {"compatibilityLevel": level}
                if method == "PUT":
                    data = self._json_body(body)
                    level = str(data.get("compatibility") or data.get("compatibilityLevel") or "")
                    if level.upper() not in _COMPATIBILITY_LEVELS:
                        raise _HTTPError(422, 42203, f"Invalid compatibility level {level!r}")
                    if subject:
                        self.subject_compatibility[subject] = level.upper()
                    else:
                        self.compatibility = level.upper()
                    return 200, {"compatibility": level.upper()}
                if method == "DELETE":
                    if subject:
                        level = self.subject_compatibility.pop(subject, self.compatibility)
                    else:
                        level, self.compatibility = self.compatibility, "BACKWARD"
                    return 200, {"compatibilityLevel": level}
            elif head == "mode":
                if method in ("GET", "DELETE"):
                    return 200, {"mode": "READWRITE"}
                if method == "PUT":
                    return 200, {"mode": str(self._json_body(body).get("mode") or "READWRITE")}
            elif head == "compatibility" and method == "POST":
                self._schema_from_body(body)
                return 200, {"is_compatible": True}
            elif head == "contexts" and method == "GET":
                return 200, ["."]
            elif head == "associations" and method == "GET" and n >= 2 and segs[1] == "resources":
                # confluent-kafka >= 2.16 serializers ask for topic associations first; a
                # registry without any answers [] and the client falls back to TopicName.
                return 200, []
        raise _HTTPError(404, 404, "HTTP 404 Not Found")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass                                  # a client hanging up is not a test failure


class _Handler(BaseHTTPRequestHandler):
    registry: LocalSchemaRegistry      # set on the per-server subclass
    protocol_version = "HTTP/1.1"
    server_version = "LocalSchemaRegistry/1.0"

    def setup(self):
        super().setup()
        try:        # headers and body go out in two writes: avoid Nagle + delayed-ACK stalls
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass
        with self.registry._lock:
            self.registry._conns.add(self.connection)

    def finish(self):
        try:
            super().finish()
        finally:
            with self.registry._lock:
                self.registry._conns.discard(self.connection)

    def log_message(self, format, *args):    # keep test output quiet
        pass

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass                  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _serve(self):
        body = self._read_body()
        try:
            status, payload = self.registry._handle(self.command, self.path, self.headers, body)
        except Exception as e:                   # never kill the connection on a bug
            status, payload = 500, {"error_code": 50001, "message": f"internal error: {e!r}"}
        data = b"{}" if payload == {} else json.dumps(payload, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("Content-Length", str(len(data)))
        if status == 401:
            self.send_header("WWW-Authenticate", 'Basic realm="LocalSchemaRegistry"')
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _serve
