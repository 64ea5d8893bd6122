"""Reading a whole Kafka topic with confluent-kafka (the CLI's ``--bootstrap/--topic`` input).

librdkafka's own log lines (a refused connection is logged again on every retry) go to the
``ticdc_fast.kafka`` logger at debug level, never straight to the terminal; what went wrong is
raised once: ``KafkaUnreachableError`` (``cannot reach Kafka at …: …``) or
``TopicNotFoundError`` (``topic … not found on …``), both within ``timeout`` seconds."""
from __future__ import annotations

import logging
import time

LOG = logging.getLogger("ticdc_fast.kafka")

__all__ = ["consume_all", "KafkaUnreachableError", "TopicNotFoundError", "LOG"]


class KafkaUnreachableError(ConnectionError):
    """No broker of the bootstrap list answered (refused, unresolvable, timed out, or lost)."""


class TopicNotFoundError(LookupError):
    """The brokers answered, and they have no such topic."""


class _DebugLogger:
    """What confluent-kafka's ``logger`` setting calls: every librdkafka line at debug level."""

    def log(self, level, fmt, *args):
        if LOG.isEnabledFor(logging.DEBUG):
            LOG.debug(fmt, *args)


class _Errors:
    """The last client-level error librdkafka reported (its ``error_cb``)."""

    def __init__(self):
        self.last = None
        self.all_down = False

    def __call__(self, err):
        from confluent_kafka import KafkaError
        if err.code() == KafkaError._ALL_BROKERS_DOWN:
            self.all_down = True
        else:
            self.last = err

    def text(self, fallback: str) -> str:
        return self.last.str() if self.last is not None else fallback


def _unreachable(bootstrap: str, why: str) -> KafkaUnreachableError:
    return KafkaUnreachableError(f"cannot reach Kafka at {bootstrap}: {why}")


def consume_all(bootstrap: str, topic: str, chunk: int = 50_000, timeout: float = 10.0):
    """Chunks of (keys, values, partitions, offsets), every partition from its start to its end.

    ``timeout``: seconds to wait for the brokers (first contact, and between messages while
    partitions have not reached their end); a broker that refuses every connection fails at once."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    if not timeout > 0:
        raise ValueError(f"timeout must be positive, not {timeout!r}")
    errors = _Errors()
    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "ticdc-fast-cli", "enable.auto.commit": False,
                  "enable.partition.eof": True, "auto.offset.reset": "earliest",
                  "logger": _DebugLogger(), "error_cb": errors,
                  "socket.connection.setup.timeout.ms": max(1000, int(timeout * 1000)),
                  "reconnect.backoff.max.ms": 1000})
    try:
        md = _metadata(c, bootstrap, topic, timeout, errors)
        errors.all_down = False      # from here on it means the brokers went away
        tmd = md.topics.get(topic)
        if tmd is None or tmd.error is not None or not tmd.partitions:
            raise TopicNotFoundError(f"topic {topic!r} not found on {bootstrap}")
        parts = sorted(tmd.partitions)
        c.assign([TopicPartition(topic, p, 0) for p in parts])
        pending = set(parts)
        keys, values, ps, offs = [], [], [], []
        idle_since = time.monotonic()
        while pending:
            got = c.consume(num_messages=10_000, timeout=min(1.0, timeout))
            if got:
                idle_since = time.monotonic()
            elif errors.all_down or time.monotonic() - idle_since > timeout:
                raise _unreachable(bootstrap, errors.text(f"no answer within {timeout:g} s"))
            for m in got:
                if m.error():
                    code = m.error().code()
                    if code == KafkaError._PARTITION_EOF:
                        pending.discard(m.partition())
                        continue
                    if code in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_TOPIC):
                        raise TopicNotFoundError(f"topic {topic!r} not found on {bootstrap}")
                    if code in (KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN, KafkaError._TIMED_OUT):
                        raise _unreachable(bootstrap, m.error().str())
                    raise ValueError(f"Kafka error reading {topic!r}: {m.error().str()}")
                keys.append(m.key())
                values.append(m.value())
                ps.append(m.partition())
                offs.append(m.offset())
                if len(values) == chunk:
                    yield keys, values, ps, offs
                    keys, values, ps, offs = [], [], [], []
        if values:
            yield keys, values, ps, offs
    except KafkaException as exc:
        raise _unreachable(bootstrap, exc.args[0].str() if exc.args else str(exc)) from None
    finally:
        c.close()


def _metadata(c, bootstrap: str, topic: str, timeout: float, errors: _Errors):
    """The topic's metadata; a refused or unresolvable bootstrap list fails about a second after
    librdkafka says every broker is down, anything else at ``timeout``."""
    from confluent_kafka import KafkaException

    start = time.monotonic()
    deadline = start + timeout
    # every broker down: given a second first (a name's other addresses are tried in turn)
    grace = start + min(timeout, 1.0)
    while True:
        step = max(0.05, min(0.5, deadline - time.monotonic()))
        try:
            return c.list_topics(topic, timeout=step)
        except KafkaException as exc:
            c.consume(num_messages=1, timeout=0)     # serves error_cb (nothing is assigned yet)
            now = time.monotonic()
            if (errors.all_down and now >= grace) or now >= deadline:
                err = exc.args[0] if exc.args else None
                raise _unreachable(bootstrap, errors.text(
                    err.str() if err is not None else f"no answer within {timeout:g} s")) from None
