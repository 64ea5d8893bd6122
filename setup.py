"""Build the Cython core (``ticdc_fast._core``) from ``src_cython/``.

Generated C is never committed: Cython runs at build time (pinned in pyproject's build
requirements).  Before it runs, ``scripts/gen_constants.py`` writes ``src_cython/_constants.pxi``
from ``ticdc_fast/_constants.py``, so the core and the pure-Python twin share one set of codes.  ``TICDC_FAST_DEBUG=1`` builds with annotation and bounds assertions.
``TICDC_FAST_SANITIZE=1`` builds with AddressSanitizer and UndefinedBehaviorSanitizer (for the
fuzzer; run it with ``scripts/sanitize.sh``, which preloads the sanitizer runtimes).
"""
import os
import runpy

from setuptools import Extension, setup

DEBUG = os.environ.get("TICDC_FAST_DEBUG", "") not in ("", "0")
SANITIZE = os.environ.get("TICDC_FAST_SANITIZE", "") not in ("", "0")
# -O1 keeps ASan reports readable and fast enough for long fuzz runs; the frame pointer gives
# full stacks.  CPython's own CFLAGS carry -fwrapv, which defines signed overflow and so hides it
# from UBSan: -fno-wrapv puts it back in reach.  The same flags go to the link so the shared
# object pulls in the runtimes.
SANITIZE_FLAGS = ["-fsanitize=address,undefined", "-fno-wrapv", "-fno-omit-frame-pointer", "-O1", "-g"]


# The whole core is one translation unit whose hot functions (the record walks, the emitters) are
# large: with gcc's default growth limits they stop inlining the small column appends and
# varint reads they call per value.  Raising the limits for large functions measured 5-9 % on
# the Avro decoders and 7 % on open generic (docs/performance.md), for a 1.3x larger object.
INLINE_FLAGS = ["--param", "inline-unit-growth=400", "--param", "large-function-growth=400",
                "--param", "large-function-insns=20000"]


def _compile_args():
    if SANITIZE:
        return SANITIZE_FLAGS
    return ["-O0", "-g"] if DEBUG else ["-O3", *INLINE_FLAGS]


def generate_constants():
    here = os.path.dirname(os.path.abspath(__file__))
    runpy.run_path(os.path.join(here, "scripts", "gen_constants.py"))["write"]()


def extensions():
    from Cython.Build import cythonize

    generate_constants()

    ext = Extension(
        "ticdc_fast._core",
        sources=["src_cython/_core.pyx"],
        include_dirs=["src_cython"],
        extra_compile_args=_compile_args(),
        extra_link_args=SANITIZE_FLAGS if SANITIZE else [],
    )
    return cythonize(
        [ext],
        include_path=["src_cython"],
        annotate=DEBUG,
        compiler_directives={
            "language_level": "3",
            "boundscheck": DEBUG,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
            "embedsignature": True,
        },
    )


setup(ext_modules=extensions())
