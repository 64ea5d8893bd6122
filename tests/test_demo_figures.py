"""The demo's two throughput figures come side by side, each saying what it measures."""
from __future__ import annotations

from ticdc_fast.demo import throughput_lines


def test_the_demo_says_what_each_figure_measures():
    lines = throughput_lines(30_000_000, 200_000, 1.5, 200_000, 0.04)
    assert lines[0] == "throughput on these 30.0 MB of messages (generic output), side by side:"
    assert lines[1].startswith("  Spark end to end        20 MB/s     133,333 rows/s  tfs.decode + count in "
                               "Spark local[2]: two cores shared by the JVM")
    assert lines[2].startswith("  decoder alone          750 MB/s   5,000,000 rows/s  ticdc_fast.OpenDecoder "
                               "on one thread (one core), the messages in memory")
    assert "the README's Performance table is the decoder alone on one core" in lines[3]
