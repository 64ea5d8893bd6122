"""Decoding must not depend on the host process's locale.

libc's strtod/printf follow LC_NUMERIC: under a locale whose decimal point is ',' a naive core
reads "7887.44" as 7887.  This runs the decoders in a subprocess whose LC_NUMERIC uses ',' (a
locale compiled here with localedef, part of every glibc system) and checks exact values."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

LOCALE_SOURCE = 'LC_NUMERIC\ndecimal_point ","\nthousands_sep "."\ngrouping 3;3\nEND LC_NUMERIC\n'

SCRIPT = textwrap.dedent('''
    import json, locale, sys
    sys.path.insert(0, {tests!r})
    locale.setlocale(locale.LC_NUMERIC, "xx_COMMA")
    assert locale.localeconv()["decimal_point"] == ","
    import pyarrow as pa
    import ticdc_fast
    from conftest import frame, row_event
    from ticdc_fast.testing import SimpleEncoder, SimpleBootstrap, SimpleDML, SimpleTable, SimpleColumn, make_tso
    impl = sys.argv[1]
    vals = [7887.44, 0.1, 1e-07, 5e-324, 1.7976931348623157e308, -2.5, 123456789.125]
    rows = [row_event({{"d": {{"t": 5, "f": 0, "v": v}}, "f": {{"t": 4, "f": 0, "v": 0.1}}}}, ts=i + 1)
            for i, v in enumerate(vals)]
    k, v = frame(rows)
    out = {{}}
    gen = ticdc_fast.OpenDecoder(implementation=impl).decode([k], [v])
    out["open_generic"] = [dict(m) for m in gen.column("after").to_pylist()]
    typed = ticdc_fast.OpenDecoder(implementation=impl, table="db.t",
                                   schema=pa.schema([("d", pa.float64()), ("f", pa.float32())])).decode([k], [v])
    out["open_typed"] = typed.column("d").to_pylist()
    out["open_typed_f32"] = typed.column("f").to_pylist()
    t = SimpleTable("db", "s", 1, make_tso(1_714_521_600_000), [SimpleColumn("id", "int", nullable=False),
                                                                 SimpleColumn("x", "double")])
    evs = [SimpleBootstrap(t)] + [SimpleDML(t, "INSERT", make_tso(1_714_521_601_000 + i), data={{"id": i, "x": x}})
                                  for i, x in enumerate(vals)]
    for enc in ("json", "avro"):
        values = [m for _, m in SimpleEncoder(enc).encode(evs)]
        b = ticdc_fast.SimpleDecoder(enc, implementation=impl, table="db.s",
                                     schema=pa.schema([("x", pa.float64())]), control_events=False).decode(None, values)
        out["simple_" + enc] = b.column("x").to_pylist()
        g = ticdc_fast.SimpleDecoder(enc, implementation=impl).decode(None, values)
        out["simple_generic_" + enc] = [None if m is None else dict(m)["x"] for m in g.column("after").to_pylist()]
    print(json.dumps(out))
''')


@pytest.fixture(scope="module")
def comma_locale(tmp_path_factory):
    root = tmp_path_factory.mktemp("locales")
    (root / "src").write_text(LOCALE_SOURCE)
    # -c: write it although the other categories are not defined (they stay as in "C")
    subprocess.run(["localedef", "-c", "-i", str(root / "src"), str(root / "xx_COMMA")],
                   check=False, capture_output=True, env={**os.environ, "I18NPATH": str(root)})
    assert (root / "xx_COMMA" / "LC_NUMERIC").exists(), "localedef could not compile the test locale"
    return root


def test_floats_exact_under_a_comma_decimal_locale(impl, comma_locale):
    env = {**os.environ, "LOCPATH": str(comma_locale)}
    tests = os.path.dirname(__file__)
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(tests=tests), impl], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    vals = [7887.44, 0.1, 1e-07, 5e-324, 1.7976931348623157e308, -2.5, 123456789.125]
    assert out["open_typed"] == vals
    assert out["open_typed_f32"] == [0.10000000149011612] * len(vals)
    assert [r["d"] for r in out["open_generic"]] == ["7887.44", "0.1", "1e-7", "5e-324",
                                                     "1.7976931348623157e+308", "-2.5", "123456789.125"]
    assert {r["f"] for r in out["open_generic"]} == {"0.1"}
    for enc in ("json", "avro"):
        assert out["simple_" + enc] == vals, enc
        generic = [x for x in out["simple_generic_" + enc] if x is not None]      # BOOTSTRAP row: none
        assert generic[:3] == ["7887.44", "0.1", "0.0000001"] and generic[-2:] == ["-2.5", "123456789.125"], enc
        assert generic[4] == "179769313486231570" + "0" * 291, enc
