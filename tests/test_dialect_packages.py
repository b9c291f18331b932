"""The dialect packages' layout (issue 12, items 2 and 9): one name, one place.

`nvvm` and `tmem` are packages with one module per op family; the package `__init__`
defines the dialect and re-exports every public name. These tests read the source
(`ast`) and the registered dialects, so that a name defined twice, a family module
importing through the package, an op class left out of its dialect, or a builder with
a long parameter list fails here rather than in review.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from types import ModuleType

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Dialect, Operation
from xdsl.irdl import IRDLOperation

import xdsl_tmem.dialects
from xdsl_tmem.backend.isel import RULES
from xdsl_tmem.dialects import nvvm, ptx, tmem
from xdsl_tmem.dialects.traits import PtxLevelOnly
from xdsl_tmem.interpreter.executor import Program
from xdsl_tmem.interpreter.run import default_functions

DIALECTS = Path(xdsl_tmem.dialects.__file__).parent

PACKAGES: dict[str, tuple[ModuleType, Dialect, frozenset[str]]] = {
    # (package, its dialect, names it re-exports from elsewhere)
    "nvvm": (nvvm, nvvm.NVVM, frozenset({"CtaGroupUser"})),
    "tmem": (tmem, tmem.Tmem, frozenset()),
}

MAX_PARAMETERS = 8
NOT_YET_CHECKED = {"ptx"}
"""The ptx package's MMA builder is brought to 8 parameters by issue 12 item 7
(typed PTX instructions, a parallel branch); drop it from this set once merged."""


def _modules(package: str) -> dict[str, Path]:
    return {p.stem: p for p in sorted((DIALECTS / package).glob("*.py")) if p.stem != "__init__"}


def _top_level_names(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef | ast.FunctionDef):
            names.append(node.name)
        elif isinstance(node, ast.Assign):
            names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.append(node.target.id)
    return names


def _definitions(package: str) -> dict[str, list[str]]:
    """Every top-level name of the package's family modules -> the modules defining it."""
    owners: dict[str, list[str]] = {}
    for stem, path in _modules(package).items():
        for name in _top_level_names(path):
            owners.setdefault(name, []).append(stem)
    return owners


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_each_name_is_defined_in_one_module(package: str) -> None:
    twice = {name: stems for name, stems in _definitions(package).items() if len(stems) > 1}
    assert twice == {}


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_the_package_exports_every_public_name_from_its_defining_module(package: str) -> None:
    module, dialect, reexported = PACKAGES[package]
    owners = _definitions(package)
    public = {name for name in owners if not name.startswith("_")}
    assert set(module.__all__) == public | reexported | {dialect_name(module, dialect)}
    for name in public:
        (stem,) = owners[name]
        family = importlib.import_module(f"{module.__name__}.{stem}")
        assert getattr(module, name) is getattr(family, name), name


def dialect_name(module: ModuleType, dialect: Dialect) -> str:
    (name,) = [n for n in module.__all__ if getattr(module, n) is dialect]
    return name


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_family_modules_import_siblings_not_the_package(package: str) -> None:
    """Only the package `__init__` re-exports: a family module names the module that
    defines what it uses (no chains, no import cycle through `__init__`)."""
    full = f"xdsl_tmem.dialects.{package}"
    for stem, path in _modules(package).items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                assert node.module != full, f"{stem}.py imports from {full}"
                assert not (node.module == "xdsl_tmem.dialects" and any(a.name == package for a in node.names))
            if isinstance(node, ast.Import):
                assert all(a.name != full for a in node.names), f"{stem}.py imports {full}"


REGISTERED: dict[str, Dialect] = {"nvvm": nvvm.NVVM, "tmem": tmem.Tmem, "ptx": ptx.PTX}


@pytest.mark.parametrize("package", sorted(REGISTERED))
def test_the_dialect_registers_every_op_and_attribute_of_the_package(package: str) -> None:
    dialect = REGISTERED[package]
    module = importlib.import_module(f"xdsl_tmem.dialects.{package}")
    defined_ops: set[type[IRDLOperation]] = set()
    defined_attributes: set[type[Attribute]] = set()
    for stem in _modules(package):
        family = importlib.import_module(f"{module.__name__}.{stem}")
        for value in vars(family).values():
            if not isinstance(value, type) or value.__module__ != family.__name__:
                continue
            if not isinstance(getattr(value, "name", None), str):
                continue  # an abstract base: IRDL definitions have a `name`
            if issubclass(value, IRDLOperation):
                defined_ops.add(value)
            elif issubclass(value, Attribute):
                defined_attributes.add(value)
    assert defined_ops == set(dialect.operations)
    assert defined_attributes == set(dialect.attributes)


def test_no_dialect_function_takes_more_than_8_parameters() -> None:
    too_many: list[str] = []
    for path in sorted(DIALECTS.rglob("*.py")):
        if path.parent.name in NOT_YET_CHECKED:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                a = node.args
                names = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
                count = len([n for n in names if n.arg not in ("self", "cls")])
                if count > MAX_PARAMETERS:
                    too_many.append(f"{path.relative_to(DIALECTS)}:{node.lineno} {node.name} takes {count}")
    assert too_many == []


# --------------------------------------------------------------------------------------
# Every op has the faces docs/development.md lists for its dialect
# --------------------------------------------------------------------------------------


def _interpreted() -> set[type[Operation]]:
    return set(Program(ModuleOp([]), default_functions(), "visible").table)


def test_every_nvvm_op_has_an_isel_rule_and_an_interpreter_implementation() -> None:
    """Both are found by op class at use (an op without one is reported at its
    location); this finds a forgotten one before a program needs it."""
    ops = set(nvvm.NVVM.operations)
    assert sorted(op.name for op in ops - set(RULES)) == []
    # (an op declaring `PtxLevelOnly` is refused at the op at the NVVM level; none does since issue 14)
    ptx_only = {op for op in ops if op.has_trait(PtxLevelOnly)}
    assert sorted(op.name for op in ops - _interpreted() - ptx_only) == []
    assert not ptx_only & _interpreted(), "an op declared PtxLevelOnly has an NVVM-level implementation"


def test_every_tmem_op_has_an_interpreter_implementation() -> None:
    """(Its lowering is checked by tests/test_lowering.py; tmem ops have no isel rule:
    they reach PTX as the nvvm they lower to.)"""
    ops = set(tmem.Tmem.operations)
    assert sorted(op.name for op in ops - _interpreted()) == []
    assert not ops & set(RULES)
