"""The Cython core mirrors ticdc_fast/_constants.py; they must agree (the twins share one truth)."""
import importlib

from ticdc_fast import _constants as C


def test_core_constants_match_python():
    core = importlib.import_module("ticdc_fast._core")  # importable even when TICDC_FAST_PURE is set
    for name, value in core.CONSTANTS.items():
        assert getattr(C, name) == value, name
    assert core.CYTHON_MODULE == 1
