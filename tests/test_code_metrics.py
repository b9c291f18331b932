"""Issue 12's structure metrics stay where the consolidation left them
(`benchmarks/code_metrics.py` measures them; ruff's C901 is in the ruff config): no import
cycle, no function of more than 8 parameters outside the dialects, no new hand-kept op
list. Each checker is also shown to find what it looks for."""

from __future__ import annotations

import ast
from pathlib import Path

import code_metrics
from support import ROOT


def _package(tmp_path: Path, files: dict[str, str]) -> list[code_metrics.Module]:
    for name, text in files.items():
        path = tmp_path / "xdsl_tmem" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return code_metrics.modules(tmp_path)


def test_no_import_cycle() -> None:
    assert code_metrics.import_cycles(code_metrics.modules(ROOT)) == []


def test_import_cycle_check_finds_a_lazy_cycle(tmp_path: Path) -> None:
    """The shape machine.py and races.py had: a lazy import inside a function closes it."""
    mods = _package(
        tmp_path,
        {
            "__init__.py": "",
            "machine.py": "def f():\n    from xdsl_tmem.races import Shadow\n",
            "races.py": "from xdsl_tmem.machine import f\n",
            "typed.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from xdsl_tmem import races\n",
        },
    )
    assert code_metrics.import_cycles(mods) == [["xdsl_tmem.machine", "xdsl_tmem.races"]]


def test_no_long_parameter_list_outside_the_dialects() -> None:
    rows = code_metrics.long_parameter_lists(code_metrics.modules(ROOT), ROOT)
    assert [where for where, _ in rows if "/dialects/" not in where] == []


def test_parameter_count_skips_only_self_and_cls(tmp_path: Path) -> None:
    nine = ", ".join(f"p{i}" for i in range(9))
    eight = ", ".join(f"p{i}" for i in range(8))
    text = (
        f"def nine({nine}): pass\n"
        f"def eight({eight}): pass\n"
        f"def keywords(a, *, {eight}): pass\n"
        f"class C:\n    def method(self, {eight}): pass\n"
        f"    @staticmethod\n    def static(self, {eight}): pass\n"
    )
    rows = code_metrics.long_parameter_lists(_package(tmp_path, {"m.py": text}), tmp_path)
    assert [(where.split()[-1], n) for where, n in rows] == [("nine", 9), ("keywords", 9), ("C.static", 9)]


def test_no_hand_kept_op_list() -> None:
    found = {name for name, _ in code_metrics.op_lists(code_metrics.modules(ROOT))}
    assert found <= set(code_metrics.DOCUMENTED)


def test_op_list_check_finds_literal_lists_not_derived_ones() -> None:
    text = (
        "from xdsl.dialects import arith, scf\n"
        "KEPT = (arith.AddiOp, scf.ForOp)\n"
        "TABLE = {arith.AddiOp: 1}\n"
        "DERIVED = tuple(op for op in scf.Scf.operations if op.name == 'scf.for')\n"
        "NUMBERS = (1, 2)\n"
    )
    tree = ast.parse(text)
    namespace: dict[str, object] = {}
    exec(compile(tree, "<test>", "exec"), namespace)
    found = {
        name: len(code_metrics.op_classes_named(value, namespace))
        for name, value in code_metrics.literal_assignments(tree)
        if code_metrics.op_classes_named(value, namespace)
    }
    assert found == {"KEPT": 2, "TABLE": 1}
