"""The README's "Use" snippets run as written, in order, in one namespace: against the real local
broker (``localhost:9092`` in the text) and a real HTTP schema registry (``localhost:8081``)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from ticdc_fast.testing import LocalSchemaRegistry, OpenEncoder, realistic_changefeed

README = Path(__file__).resolve().parents[1] / "README.md"


def use_snippets() -> list[str]:
    text = README.read_text()
    section = text[text.index("## Use\n"):text.index("\n## ", text.index("## Use\n") + 1)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_readme_has_the_use_snippets():
    snippets = use_snippets()
    assert len(snippets) >= 6
    assert any("consume_all" in s for s in snippets) and any("read_capture" in s for s in snippets)


def test_readme_use_snippets_run_as_written(spark, kafka, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                       # the capture file lands here
    kafka.create_topic("tidb-open", partitions=1, exist_ok=True)
    produced = OpenEncoder().encode(realistic_changefeed(1_000, seed=1))
    kafka.produce("tidb-open", produced)
    namespace: dict = {}
    with LocalSchemaRegistry() as registry:
        for i, snippet in enumerate(use_snippets()):
            code = (snippet.replace('"localhost:9092"', repr(kafka.bootstrap_servers))
                    .replace('"http://localhost:8081"', repr(registry.url)))
            try:
                exec(compile(code, f"README.md snippet {i + 1}", "exec"), namespace)
            except Exception as exc:  # noqa: BLE001 - name the snippet that broke
                pytest.fail(f"README snippet {i + 1} failed: {type(exc).__name__}: {exc}\n{snippet}")
            if "consume_all" in snippet:   # the topic's messages, decoded like the in-memory ones
                assert namespace["batch"].num_rows == namespace["dec"].decode(
                    [k for k, _ in produced], [v for _, v in produced]).num_rows
            if "tfs.decode" in snippet:
                assert namespace["state"].count() > 0
    assert namespace["batch"].num_rows > 0 and namespace["typed"].num_rows > 0
    assert {"INSERT", "UPDATE", "DELETE"} <= set(namespace["batch"].column("_op").to_pylist())
