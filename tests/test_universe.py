"""Both drivers (and the tests) see the same dialects: one registration function."""

import importlib
import inspect
import pkgutil

from xdsl.passes import ModulePass

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.tools import run
from xdsl_tmem.tools.opt import TmemOptMain
from xdsl_tmem.universe import TMEM_UNIVERSE, available_passes, make_context


def test_opt_and_run_register_the_same_dialects() -> None:
    opt = set(TmemOptMain(args=[]).ctx.registered_dialect_names)
    assert opt == set(make_context().registered_dialect_names)
    assert run.make_context is make_context
    assert {"tmem", "nvvm", "ptx", "llvm", "arith", "func"} <= opt


def test_llvm_extensions_are_registered() -> None:
    # Upstream NVVM programs use `llvm.addrspacecast`, which xDSL 0.74's llvm dialect lacks.
    for ctx in (make_context(), TmemOptMain(args=[]).ctx):
        assert ctx.get_optional_op("llvm.addrspacecast") is not None


def _module_passes() -> set[type[ModulePass]]:
    """Every `ModulePass` subclass defined in the package (each module imported)."""
    import xdsl_tmem

    for info in pkgutil.walk_packages(xdsl_tmem.__path__, "xdsl_tmem."):
        importlib.import_module(info.name)
    found: set[type[ModulePass]] = set()
    work: list[type[ModulePass]] = [ModulePass]
    while work:
        for sub in work.pop().__subclasses__():
            work.append(sub)
            if sub.__module__.startswith("xdsl_tmem.") and not inspect.isabstract(sub):
                found.add(sub)
    return found


def test_every_pass_is_registered_once_for_both_drivers() -> None:
    passes = _module_passes()
    assert any(p.__module__.startswith("xdsl_tmem.passes.") for p in passes)
    registered = {name: factory() for name, factory in TMEM_UNIVERSE.all_passes.items()}
    assert set(registered.values()) == passes
    assert all(registered[p.name] is p for p in passes), "a pass is registered under another name than its own"
    # Both drivers accept every one of them, through the one registry.
    opt = TmemOptMain(args=[])
    for name, pass_class in registered.items():
        assert opt.available_passes[name]() is pass_class
        (parsed,) = run.parse_pipeline(name, SourceMap()).passes
        assert type(parsed) is pass_class
    assert set(opt.available_passes) == set(available_passes())
