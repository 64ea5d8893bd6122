"""The Cython core takes its codes from ticdc_fast/_constants.py (src_cython/_constants.pxi is
generated from it at build time); the twins share one truth."""
import importlib
import os
import re
import runpy

from ticdc_fast import _constants as C

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _generator():
    return runpy.run_path(os.path.join(ROOT, "scripts", "gen_constants.py"))


def test_core_has_every_integer_constant():
    core = importlib.import_module("ticdc_fast._core")  # importable even when TICDC_FAST_PURE is set
    expected = {name: value for name, value in vars(C).items() if name.isupper() and type(value) is int}
    assert core.CONSTANTS == expected
    assert core.CYTHON_MODULE == 1


def test_generated_pxi_is_current(tmp_path):
    gen = _generator()
    target = tmp_path / "_constants.pxi"
    assert gen["write"](str(target)) is True
    text = target.read_text()
    assert "    T_NEWDECIMAL = 246\n" in text and "    OP_UPSERT = 5\n" in text
    assert gen["write"](str(target)) is False          # unchanged text is not rewritten
    with open(os.path.join(ROOT, "src_cython", "_constants.pxi"), encoding="utf-8") as f:
        assert f.read() == text                         # the build wrote what the source says now


def test_no_type_code_literal_in_the_core():
    """Type codes, flags and op codes are compared by name: the generated file is the only place
    their numbers appear."""
    pattern = re.compile(r"\b(e\.t|f\.type_code|type_code|\bt|op)\s*(==|!=)\s*\d")
    for folder, _, files in os.walk(os.path.join(ROOT, "src_cython")):
        for name in files:
            if not name.endswith((".pyx", ".pxi", ".pxd")) or name == "_constants.pxi":
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                for number, line in enumerate(f, 1):
                    assert not pattern.search(line), f"{name}:{number}: {line.strip()}"
