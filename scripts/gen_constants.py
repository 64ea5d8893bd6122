"""Write ``src_cython/_constants.pxi`` from ``ticdc_fast/_constants.py``.

The pure-Python twin and the Cython core share one source of truth: every integer constant of
``_constants.py`` becomes a ``cdef enum`` member of the same name, plus a ``CONSTANTS`` dict the
tests compare against the Python module.  ``setup.py`` runs this before Cython, so the generated
file is never committed.  Run it by hand with ``python scripts/gen_constants.py``.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SOURCE = os.path.join(ROOT, "ticdc_fast", "_constants.py")
TARGET = os.path.join(ROOT, "src_cython", "_constants.pxi")


def integer_constants(source: str = SOURCE) -> dict[str, int]:
    """The module's integer constants, in definition order (executed alone: it imports nothing)."""
    namespace: dict = {}
    with open(source, encoding="utf-8") as f:
        exec(compile(f.read(), source, "exec"), namespace)
    return {name: value for name, value in namespace.items()
            if name.isupper() and type(value) is int}


def render(constants: dict[str, int]) -> str:
    lines = [
        "# Generated from ticdc_fast/_constants.py by scripts/gen_constants.py at build time: do not edit.",
        "",
        "cdef enum:",
    ]
    lines += [f"    {name} = {value}" for name, value in constants.items()]
    lines += ["", "CONSTANTS = dict("]
    lines += [f"    {name}={name}," for name in constants]
    lines += [")", ""]
    return "\n".join(lines)


def write(target: str = TARGET, source: str = SOURCE) -> bool:
    """Write the file when its text changes (an unchanged file keeps Cython's rebuild check quiet)."""
    text = render(integer_constants(source))
    try:
        with open(target, encoding="utf-8") as f:
            if f.read() == text:
                return False
    except FileNotFoundError:
        pass
    with open(target, "w", encoding="utf-8") as f:
        f.write(text)
    return True


if __name__ == "__main__":
    changed = write()
    print(f"{os.path.relpath(TARGET, ROOT)}: {'written' if changed else 'up to date'}", file=sys.stderr)
