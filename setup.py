"""Build the Cython core (``ticdc_fast._core``) from ``src_cython/``.

Generated C is never committed: Cython runs at build time (pinned in pyproject's build
requirements).  Before it runs, ``scripts/gen_constants.py`` writes ``src_cython/_constants.pxi``
from ``ticdc_fast/_constants.py``, so the core and the pure-Python twin share one set of codes.  ``TICDC_FAST_DEBUG=1`` builds with annotation and bounds assertions.
``TICDC_FAST_SANITIZE=1`` builds with AddressSanitizer and UndefinedBehaviorSanitizer (for the
fuzzer; run it with ``scripts/sanitize.sh``, which preloads the sanitizer runtimes).
``TICDC_FAST_PGO=1`` builds profile-guided (gcc only): an instrumented core decodes the realistic
streams of every protocol (``scripts/pgo_train.py``), then the core is built again from that
profile.  The training runs ``TICDC_FAST_PGO_PYTHON`` (default: this Python), which needs the
runtime dependencies: build with ``--no-build-isolation`` from an environment that has them.
"""
import os
import runpy
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

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


PGO = os.environ.get("TICDC_FAST_PGO", "") not in ("", "0") and not (DEBUG or SANITIZE)
# With a profile, gcc inlines by it and compiles what the training never ran for size, so a far
# larger inlining budget costs no object size (6.8 MB, as the plain build); without one the same
# budget doubles the object.  Measured against a profile-guided build with the plain budget and
# -fprofile-partial-training: Avro typed 1.2x, JSON 1.04-1.05x (docs/performance.md).
PGO_INLINE_FLAGS = ["--param", "max-inline-insns-single=2000", "--param", "max-inline-insns-auto=300"]


class build_ext_pgo(build_ext):
    """build_ext, twice when TICDC_FAST_PGO is set: instrumented, trained, then from the profile.
    A training run that fails stops the build (a silently unprofiled core would be the slow one)."""

    def run(self):
        if not PGO:
            return super().run()
        if "clang" in (sysconfig.get_config_var("CC") or "") or "clang" in os.environ.get("CC", ""):
            raise RuntimeError("TICDC_FAST_PGO: the profile-guided build is written for gcc (clang's profiles "
                               "need llvm-profdata); build without TICDC_FAST_PGO")
        profile_dir = tempfile.mkdtemp(prefix="ticdc_fast-pgo-")
        try:
            self._build_with([f"-fprofile-generate={profile_dir}", "-fprofile-update=single"])
            root = os.path.abspath(os.path.dirname(os.path.dirname(self.get_ext_fullpath("ticdc_fast._core"))))
            here = os.path.dirname(os.path.abspath(__file__))
            python = os.environ.get("TICDC_FAST_PGO_PYTHON", sys.executable)
            env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, here]))
            try:
                subprocess.run([python, os.path.join(here, "scripts", "pgo_train.py"), root], check=True, env=env,
                               cwd=profile_dir)
            except subprocess.CalledProcessError:
                raise RuntimeError(
                    "TICDC_FAST_PGO: the training run failed (its output is above). It needs the package's "
                    "dependencies: build with --no-build-isolation from an environment that has them, or name "
                    "a Python that has them in TICDC_FAST_PGO_PYTHON") from None
            if not any(name.endswith(".gcda") for _, _, names in os.walk(profile_dir) for name in names):
                raise RuntimeError(f"TICDC_FAST_PGO: the training run left no profile in {profile_dir}")
            self._build_with([f"-fprofile-use={profile_dir}", "-Wno-missing-profile", *PGO_INLINE_FLAGS])
        finally:
            shutil.rmtree(profile_dir, ignore_errors=True)

    def _build_with(self, flags):
        if not hasattr(self, "_compiler_choice"):
            self._compiler_choice = self.compiler    # run() replaces the name by the compiler object
        self.compiler = self._compiler_choice
        for ext in self.extensions:
            ext.extra_compile_args = _compile_args() + flags
            ext.extra_link_args = list(flags)
        self.force = True
        super().run()


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


setup(ext_modules=extensions(), cmdclass={"build_ext": build_ext_pgo})
