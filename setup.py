"""Build the Cython core (``ticdc_fast._core``) from ``src_cython/``.

Generated C is never committed: Cython runs at build time (pinned in pyproject's build
requirements).  ``TICDC_FAST_DEBUG=1`` builds with annotation and bounds assertions.
"""
import os

from setuptools import Extension, setup

DEBUG = os.environ.get("TICDC_FAST_DEBUG", "") not in ("", "0")


def extensions():
    from Cython.Build import cythonize

    ext = Extension(
        "ticdc_fast._core",
        sources=["src_cython/_core.pyx"],
        include_dirs=["src_cython"],
        extra_compile_args=["-O0", "-g"] if DEBUG else ["-O3"],
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
