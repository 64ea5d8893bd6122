"""Every case the fuzz campaigns found (crashes under ASan/UBSan, exceptions other than
DecodeError, core/twin disagreements) replays clean: decoded by the core and the twin, whole and
on long-lived decoders, with the same outcome.  Each runs in a subprocess, so a crash fails its
test instead of ending the suite.  The cases are in tests/data/fuzz-regressions/ (``found`` says
what the case did when it was found)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ticdc_fast import _impl

ROOT = Path(__file__).resolve().parents[1]
CASES = sorted((ROOT / "tests" / "data" / "fuzz-regressions").glob("*.json"))

pytestmark = pytest.mark.skipif(_impl.PURE_FORCED, reason="TICDC_FAST_PURE=1: differential core-vs-twin test")


def test_there_are_cases():
    assert len(CASES) >= 30
    assert {json.loads(p.read_text())["protocol"] for p in CASES} >= {"open", "simple-json", "simple-avro", "avro"}


def test_cases_replay_clean():
    """One subprocess replays all cases (a crash names the case it was on)."""
    code = ("import sys\n"
            "from pathlib import Path\n"
            "from ticdc_fast.testing.fuzz import replay\n"
            "for p in sys.argv[1:]:\n"
            "    print(Path(p).name, flush=True)\n"
            "    out = replay(Path(p))\n"
            "    print('  ->', out.splitlines()[0], flush=True)\n")
    proc = subprocess.run([sys.executable, "-c", code, *map(str, CASES)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"crashed after:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    outcomes = dict(zip(proc.stdout.splitlines()[0::2], proc.stdout.splitlines()[1::2]))
    assert len(outcomes) == len(CASES)
    bad = {name: out for name, out in outcomes.items() if out.strip() not in ("-> ok", "-> allowed")}
    assert not bad, bad
