"""A bounded run of the structure-aware campaign (ticdc_fast/testing/fuzz.py) per protocol, in a
subprocess so that a crash is a test failure: mutated batches decoded by the core and the twin,
whole and replayed message by message on a long-lived decoder, must agree and raise nothing but
DecodeError.  The long run is `python scripts/fuzz.py` (README, Development)."""
from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from ticdc_fast import _impl
from ticdc_fast.testing import fuzz

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")

# Cases per protocol: about 5-10 s each on one core without sanitizers.
COUNTS = {"open": 800, "simple-json": 500, "simple-avro": 500, "avro": 700}
SEED = 20261124


def _run(protocol: str, count: int, tmp_path: Path) -> dict:
    out = tmp_path / "findings"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fuzz.py"), "--protocol", protocol, "--count", str(count),
         "--seed", str(SEED), "--out", str(out), "--minimize", "0", "--hang-seconds", "300"],
        cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode in (0, 1), proc.stderr[-5000:]
    summary = json.loads(proc.stderr.strip().splitlines()[-1])[protocol]
    assert summary["cases"] == count, (summary, proc.stderr[-3000:])
    return summary


@pytest.mark.parametrize("protocol", fuzz.PROTOCOLS)
def test_campaign(protocol, tmp_path):
    """No crash, no exception but DecodeError, no disagreement outside the documented leniencies."""
    summary = _run(protocol, COUNTS[protocol], tmp_path)
    assert summary["findings"] == {}, f"fuzz findings (inputs under {tmp_path}): {summary['findings']}"


def test_core_only_campaign_runs_every_protocol_in_its_workers(tmp_path):
    """--core-only (the sanitizer campaign) reaches its worker subprocesses and reads every case."""
    out = tmp_path / "findings"
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fuzz.py"), "--core-only", "--count", "60",
         "--seed", str(SEED), "--out", str(out), "--minimize", "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-5000:]
    summary = json.loads(proc.stderr.strip().splitlines()[-1])
    assert sorted(summary) == sorted(fuzz.PROTOCOLS)
    for s in summary.values():
        assert s["cases"] == 60 and s["messages"] >= 60 and s["findings"] == {}, s


def test_core_only_reports_an_exception_that_is_not_a_decode_error(monkeypatch):
    case = fuzz.make_case("open", SEED, 3)
    monkeypatch.setattr(fuzz, "CORE_ONLY", True)

    def broken(*a, **k):
        raise KeyError("boom")
    monkeypatch.setattr(fuzz, "_decoder", lambda case, impl: type("D", (), {"decode": broken})())
    with pytest.raises(fuzz.Finding, match="cython:KeyError"):
        fuzz.run_case(case)


# --------------------------------------------------------------------------- the fuzzer itself
@pytest.mark.parametrize("protocol", fuzz.PROTOCOLS)
def test_cases_are_reproducible_and_mutated(protocol):
    bases = {b.name: b for b in fuzz.bases(protocol)}
    changed = 0
    for i in range(40):
        a, b = fuzz.make_case(protocol, 7, i), fuzz.make_case(protocol, 7, i)
        assert (a.keys, a.values, a.base, a.typed) == (b.keys, b.values, b.base, b.typed)
        base = bases[a.base]
        changed += a.values != base.values or (a.keys is not None and a.keys != base.keys)
    assert changed >= 36


def test_unmutated_bases_agree():
    """Every base corpus decodes, and identically in both implementations (else every case is noise)."""
    for protocol in fuzz.PROTOCOLS:
        for base in fuzz.bases(protocol):
            for typed in (False, True) if base.typed_kwargs is not None else (False,):
                case = fuzz.Case(protocol, 0, 0, base.name, typed, False, base.keys, base.values,
                                 dict(base.typed_kwargs if typed else base.generic_kwargs))
                assert fuzz.run_case(case) == "ok", case.describe()
                core = fuzz._call(fuzz._decoder(case, "cython"), case, case.keys, case.values, "cython", False)
                assert not isinstance(core, tuple), (case.describe(), core)


def test_avro_walker_covers_the_whole_message():
    for protocol in ("simple-avro", "avro"):
        for base in fuzz.bases(protocol):
            for v in base.values:
                if v is None or v[:1] not in (b"\x00", b"\x16") or (protocol == "avro" and v[:1] != b"\x00"):
                    continue
                if protocol == "avro":
                    schema = base.avro_schemas[int.from_bytes(v[1:5], "big")]
                    spans = fuzz.avro_spans(v, 5, schema)
                else:
                    spans = fuzz.avro_spans(v, 0, fuzz.simple_avro_schema())
                assert spans[-1].end == len(v)


def test_json_round_trip_keeps_duplicates_and_exact_numbers():
    src = b'{"a":1,"a":18446744073709551616,"b":[1.50,{"c":null}],"d":"x\\u00e9"}'
    assert fuzz.emit_json(fuzz.parse_json(src)) == '{"a":1,"a":18446744073709551616,"b":[1.50,{"c":null}],"d":"xé"}'.encode()
    tree = fuzz.parse_json(b'{"ts":"2024-01-01 00:00:00"}')
    tree[0] = ("ts", fuzz.Esc(tree[0][1]))
    assert json.loads(fuzz.emit_json(tree)) == {"ts": "2024-01-01 00:00:00"}
    assert b"\\u0032" in fuzz.emit_json(tree)
    assert fuzz.mutate_json(b"{}", random.Random(0), 3) != b"{}"


def test_crash_signature_prefers_the_sanitizer_summary():
    err = ("==1==ERROR: AddressSanitizer: SEGV on unknown address\n    #0 0x1 in buf_append\n"
           "SUMMARY: AddressSanitizer: SEGV (libc.so.6+0x1) in memcpy\n")
    assert fuzz._crash_signature(err, 1) == "AddressSanitizer: SEGV (libc.so.6+0x1) in memcpy"
    ub = "src_cython/_core.c:123:4: runtime error: negation of -9223372036854775808 cannot be represented\n"
    assert "runtime error: negation" in fuzz._crash_signature(ub, 1)
    assert fuzz._crash_signature("", -11) == "exit status -11"
    assert fuzz._crash_signature("Traceback\nValueError: x\n", 1) == "exit status 1: ValueError: x"
