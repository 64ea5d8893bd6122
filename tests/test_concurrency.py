"""One decoder shared by two threads (issue 11): every call either decodes correctly or raises
``DecoderBusyError`` at once, never a corrupted heap or a silently different batch.  Separate
decoders in separate threads run in parallel and match single-threaded output.

The stress tests run in a subprocess: before the busy flag existed they crashed the interpreter
("double free or corruption", SIGSEGV), which must fail one test, not the suite."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

import ticdc_fast
from ticdc_fast import _impl
from conftest import frame, row_event

ROOT = Path(ticdc_fast.__file__).resolve().parents[1]
PROTOCOLS = ("open", "simple-json", "simple-avro", "avro")

# Builds one batch of a protocol and a factory of decoders for it (the harness of every script).
HARNESS = """
import sys, threading
import pyarrow as pa
import ticdc_fast
from ticdc_fast import DecoderBusyError

protocol, impl = sys.argv[1], sys.argv[2]
rows = 800 if impl == "cython" else 150   # the twin is slower: fewer rows overlap as well
if protocol == "open":
    from ticdc_fast.testing import OpenEncoder, realistic_changefeed
    msgs = OpenEncoder("tiflow").encode(realistic_changefeed(rows, seed=7))
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    def make():
        return ticdc_fast.OpenDecoder(implementation=impl)
elif protocol.startswith("simple"):
    from ticdc_fast.testing import SimpleEncoder, simple_changefeed
    encoding = protocol.split("-")[1]
    values = [v for _, v in SimpleEncoder(encoding).encode(simple_changefeed(rows, seed=7))]
    keys = None
    def make():
        return ticdc_fast.SimpleDecoder(encoding, implementation=impl)
else:
    from ticdc_fast.testing import AvroEncoder, realistic_avro_changefeed
    events, table_columns = realistic_avro_changefeed(rows, seed=7)
    enc = AvroEncoder(table_columns=table_columns, topic="t")
    msgs = enc.encode(events)
    schemas = {sid: text for _, sid, text in enc.registered}
    keys, values = [k for k, _ in msgs], [v for _, v in msgs]
    def make():
        return ticdc_fast.AvroDecoder(schemas=schemas, implementation=impl)
keys_arr = None if keys is None else pa.array(keys, pa.binary())
values_arr = pa.array(values, pa.binary())
"""

SHARED_SCRIPT = HARNESS + """
single = make()
single.decode(keys_arr, values_arr)
expected = single.decode(keys_arr, values_arr)   # a second batch on a decoder that has state
shared = make()
shared.decode(keys_arr, values_arr)
start = threading.Barrier(2)
busy, wrong, other = [0], [0], []

def worker(arrow):
    k, v = (keys_arr, values_arr) if arrow else (keys, values)
    start.wait()
    for _ in range(12):
        try:
            got = shared.decode(k, v)
        except DecoderBusyError:
            busy[0] += 1
            continue
        except BaseException as exc:   # noqa: BLE001 - reported below
            other.append(repr(exc))
            return
        if not got.equals(expected):
            wrong[0] += 1

threads = [threading.Thread(target=worker, args=(arrow,)) for arrow in (True, False)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not other, other
assert wrong[0] == 0, f"{wrong[0]} batches differ from single-threaded decoding"
assert busy[0] > 0, "the two threads never overlapped"
# the decoder is still sound after the contention
assert shared.decode(keys_arr, values_arr).equals(expected)
print("ok", busy[0])
"""

SEPARATE_SCRIPT = HARNESS + """
expected = make().decode(keys_arr, values_arr)
results, errors = [None] * 4, []

def worker(i):
    try:
        dec = make()
        for _ in range(2):
            results[i] = dec.decode(keys_arr, values_arr)
    except BaseException as exc:   # noqa: BLE001 - reported below
        errors.append(repr(exc))

threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert not errors, errors
assert all(r.equals(expected) for r in results)
print("ok")
"""


def run_isolated(script: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(script), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_shared_decoder_is_correct_or_busy(protocol, impl):
    proc = run_isolated(SHARED_SCRIPT, protocol, impl)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("ok")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_separate_decoders_in_threads_match(protocol, impl):
    proc = run_isolated(SEPARATE_SCRIPT, protocol, impl)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip() == "ok"


def test_busy_error_is_immediate_and_changes_nothing(decoder_factory):
    """While a call runs in one thread, a second thread's call fails at once (it does not wait),
    and the first call's result is unaffected."""
    dec = decoder_factory()
    key, value = frame([row_event({"id": {"t": 8, "f": 0, "v": 1}})])
    expected = dec.decode([key], [value])
    inside, release, seen = threading.Event(), threading.Event(), []

    class SlowKeys(list):
        """Keys whose length is asked inside decode: lets the test hold the call open."""
        def __len__(self):
            inside.set()
            release.wait(10)
            return super().__len__()

    def first():
        seen.append(dec.decode(SlowKeys([key]), [value]))

    t = threading.Thread(target=first)
    t.start()
    assert inside.wait(10)
    with pytest.raises(ticdc_fast.DecoderBusyError, match="another thread"):
        dec.decode([key], [value])
    release.set()
    t.join()
    assert seen[0].equals(expected)
    assert dec.decode([key], [value]).equals(expected)


@pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: the core is not tested")
def test_core_plan_refuses_a_second_thread():
    """The core's own flag (set with the GIL held, cleared in finally), under the front end's."""
    proc = run_isolated(SHARED_CORE_PLAN_SCRIPT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("ok")


SHARED_CORE_PLAN_SCRIPT = """
import threading
import pyarrow as pa
import ticdc_fast
from ticdc_fast import DecoderBusyError
from ticdc_fast.open.decoder import _contiguous
from ticdc_fast.testing import OpenEncoder, realistic_changefeed
msgs = OpenEncoder("tiflow").encode(realistic_changefeed(5000, seed=3))
kbuf, koff = _contiguous([k for k, _ in msgs], "key")
vbuf, voff = _contiguous([v for _, v in msgs], "value")
plan = ticdc_fast.OpenDecoder(implementation="cython")._core_plan
expected = plan.decode(kbuf, koff, vbuf, voff)
start = threading.Barrier(2)
busy, wrong = [0], [0]

def worker():
    start.wait()
    for _ in range(40):
        try:
            cols, msg = plan.decode(kbuf, koff, vbuf, voff)
        except DecoderBusyError:
            busy[0] += 1
            continue
        if not (msg.equals(expected[1]) and all(a.equals(b) for a, b in zip(cols, expected[0]))):
            wrong[0] += 1

threads = [threading.Thread(target=worker) for _ in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert wrong[0] == 0, wrong
assert busy[0] > 0, "never overlapped"
print("ok", busy[0])
"""
