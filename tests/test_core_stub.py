"""ticdc_fast/_core.pyi names what the compiled core exposes: every class, method, property and
function the stub declares exists in the built module (and the plans' public methods are all
declared)."""
from __future__ import annotations

import ast
import inspect
from pathlib import Path

import ticdc_fast
import ticdc_fast._core as core

STUB = Path(ticdc_fast.__file__).with_name("_core.pyi")


def _declared():
    tree = ast.parse(STUB.read_text())
    classes, functions = {}, set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            members = set()
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    members.add(item.name)
                elif isinstance(item, ast.AnnAssign):
                    members.add(item.target.id)
            classes[node.name] = members
        elif isinstance(node, ast.FunctionDef):
            functions.add(node.name)
    return classes, functions


def test_every_declared_name_exists_in_the_core():
    classes, functions = _declared()
    assert {"OpenPlan", "SimplePlan", "AvroPlan", "PlanCore"} <= set(classes)
    for name, members in classes.items():
        cls = getattr(core, name)
        for member in members - {"__init__"}:
            assert hasattr(cls, member), f"{name}.{member} is in the stub but not in the core"
    for name in functions:
        assert callable(getattr(core, name)), name


def test_the_plans_public_methods_are_all_declared():
    classes, _ = _declared()
    for name in ("OpenPlan", "SimplePlan", "AvroPlan"):
        public = {m for m, _ in inspect.getmembers(getattr(core, name)) if not m.startswith("_")}
        assert public <= classes[name], f"{name}: {sorted(public - classes[name])} missing from the stub"
