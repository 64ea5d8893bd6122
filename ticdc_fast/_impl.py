"""Selects the implementation: the Cython core when it is built, the pure-Python twin otherwise.

``TICDC_FAST_PURE=1`` forces the twin (same API, same output).  Falling back without being asked
to warns (``SlowImplementationWarning``): the twin is 60–160× slower, which nobody should find out
from a slow job.
"""
from __future__ import annotations

import os
import warnings
from pathlib import Path

from .errors import SlowImplementationWarning

PURE_FORCED = os.environ.get("TICDC_FAST_PURE", "").strip() not in ("", "0", "false", "no")


def core_problem(exc: BaseException | None) -> str:
    """Why the compiled core did not load, and what fixes it (one paragraph)."""
    package = Path(__file__).resolve().parent
    archive = next((p for p in package.parents if p.suffix in (".zip", ".whl", ".egg") and p.is_file()), None)
    if archive is not None:
        return (f"ticdc_fast was imported from the archive {archive} (a zip on sys.path, e.g. Spark's "
                "--py-files): Python cannot load a compiled extension from a zip. Ship an environment "
                "with ticdc_fast installed instead (docs/spark.md, Production: a venv-pack archive "
                "via --archives)")
    built = sorted(package.glob("_core.*.so")) + sorted(package.glob("_core.*.pyd"))
    source_tree = (package.parent / "src_cython").is_dir() and (package.parent / "setup.py").is_file()
    if built:
        return (f"the compiled core {built[0]} does not load ({exc}). Rebuild it for this "
                "Python: pip install --force-reinstall --no-cache-dir ticdc_fast (or, in a checkout, "
                "pip install -e .)")
    if source_tree:
        return (f"ticdc_fast was imported from the source tree {package}, which holds no compiled "
                "core (a Python started in a checkout imports ./ticdc_fast before the installed "
                "package). Run from another directory, or build the core in place: pip install -e . "
                "(or python setup.py build_ext --inplace)")
    return (f"ticdc_fast at {package} was installed without its compiled core (no C compiler at "
            "install time?). Reinstall with a compiler, or from a wheel: pip install --force-reinstall "
            "--no-cache-dir ticdc_fast")


core = None
CORE_PROBLEM: str | None = None
if not PURE_FORCED:
    try:
        from . import _core as core  # type: ignore[no-redef]
    except ImportError as exc:
        core = None
        CORE_PROBLEM = core_problem(exc)
        warnings.warn(f"ticdc_fast decodes with the pure-Python twin, 60-160x slower: {CORE_PROBLEM}. "
                      "Set TICDC_FAST_PURE=1 to choose the twin and silence this warning.",
                      SlowImplementationWarning, stacklevel=2)

IMPLEMENTATION = "cython" if core is not None else "python"


def resolve(implementation: str | None) -> str:
    """``None``/"auto" → the default; "cython" fails loudly if the extension is missing."""
    if implementation in (None, "auto"):
        return IMPLEMENTATION
    if implementation == "python":
        return "python"
    if implementation == "cython":
        if core is None:
            raise ImportError("the ticdc_fast._core extension is not available: "
                              + ("TICDC_FAST_PURE is set" if PURE_FORCED else str(CORE_PROBLEM)))
        return "cython"
    raise ValueError(f"implementation must be 'auto', 'cython' or 'python', not {implementation!r}")


def set_buffer_pool_limit(nbytes: int) -> int:
    """Bytes of released output buffers the Cython core keeps for the next batches (default
    256 MiB; 0 frees them and turns reuse off).  Returns the previous limit (0 without the core).

    Reused blocks are already mapped, which saves the kernel's page zeroing on every batch."""
    if core is None:
        return 0
    return core.set_buffer_pool_limit(int(nbytes))

