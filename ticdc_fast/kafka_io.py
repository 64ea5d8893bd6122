"""Reading a whole Kafka topic with confluent-kafka (the CLI's ``--bootstrap/--topic`` input)."""
from __future__ import annotations


def consume_all(bootstrap: str, topic: str, chunk: int = 50_000, timeout: float = 10.0):
    """Chunks of (keys, values, partitions, offsets), every partition from its start to its end."""
    from confluent_kafka import Consumer, KafkaError, TopicPartition

    c = Consumer({"bootstrap.servers": bootstrap, "group.id": "ticdc-fast-cli", "enable.auto.commit": False,
                  "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    try:
        md = c.list_topics(topic, timeout=timeout)
        if topic not in md.topics or md.topics[topic].error is not None:
            raise ValueError(f"topic {topic!r} not found on {bootstrap}")
        parts = sorted(md.topics[topic].partitions)
        c.assign([TopicPartition(topic, p, 0) for p in parts])
        pending = set(parts)
        keys, values, ps, offs = [], [], [], []
        while pending:
            for m in c.consume(num_messages=10_000, timeout=timeout):
                if m.error():
                    if m.error().code() == KafkaError._PARTITION_EOF:
                        pending.discard(m.partition())
                        continue
                    raise ValueError(f"Kafka error: {m.error()}")
                keys.append(m.key())
                values.append(m.value())
                ps.append(m.partition())
                offs.append(m.offset())
                if len(values) == chunk:
                    yield keys, values, ps, offs
                    keys, values, ps, offs = [], [], [], []
        if values:
            yield keys, values, ps, offs
    finally:
        c.close()
