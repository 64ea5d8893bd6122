"""Benchmarks: the asv suite (``asv_*.py``, configured by ``asv.conf.json`` at the repo root) and
stand-alone scripts (``bench_*.py``, ``compare.py``: ``python benchmarks/bench_open.py``).

asv imports this folder as the package ``benchmarks`` and then imports *every* module in it,
collecting each ``time_*``/``mem_*``/``peakmem_*``/``track_*`` function it finds.  The scripts are
not asv benchmarks: they import their helpers as top-level modules (``from _common import ...``)
and may define such names for other purposes.  So, inside an asv process only, every module
here that is not ``asv_*`` is registered as an empty stub before asv gets to it.
"""
import pkgutil as _pkgutil
import sys as _sys
import types as _types

if "asv_runner" in _sys.modules:
    for _info in _pkgutil.iter_modules(__path__):
        if not _info.name.startswith("asv_"):
            _full = f"{__name__}.{_info.name}"
            _sys.modules.setdefault(_full, _types.ModuleType(_full, "not an asv benchmark module"))
