"""Both drivers (and the tests) see the same dialects: one registration function."""

from xdsl_tmem.tools import run
from xdsl_tmem.tools.opt import TmemOptMain
from xdsl_tmem.universe import make_context


def test_opt_and_run_register_the_same_dialects() -> None:
    opt = set(TmemOptMain(args=[]).ctx.registered_dialect_names)
    assert opt == set(make_context().registered_dialect_names)
    assert run.make_context is make_context
    assert {"tmem", "nvvm", "ptx", "llvm", "arith", "func"} <= opt


def test_llvm_extensions_are_registered() -> None:
    # Upstream NVVM programs use `llvm.addrspacecast`, which xDSL 0.74's llvm dialect lacks.
    for ctx in (make_context(), TmemOptMain(args=[]).ctx):
        assert ctx.get_optional_op("llvm.addrspacecast") is not None
