"""The executor's dispatch: what it derives once per op instead of at each execution.

* `present` reads which optional operands and results an op has: expected from the op's
  text (the assembly format names them);
* the table calls the function an xDSL `@impl` wraps, and adapts an implementation that
  is not such a wrapper: both give the results the op's own semantics say (plain integer
  arithmetic, written out here).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, OpImplResult, PythonValues, impl, register_impls
from xdsl.ir import Operation
from xdsl.parser import Parser

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.interpreter import run_kernel
from xdsl_tmem.interpreter.arith import ArithFunctions
from xdsl_tmem.interpreter.executor import Kind, Program, present
from xdsl_tmem.interpreter.run import default_functions
from xdsl_tmem.universe import make_context

ARRIVES = """
llvm.func @k(%bar: !llvm.ptr<3>, %n: i32) {
  nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
  %s = nvvm.mbarrier.arrive %bar, %n : !llvm.ptr<3> -> i64
  llvm.return
}
"""


def test_present_names_the_optional_operands_and_results_an_op_has() -> None:
    module = Parser(make_context(), ARRIVES).parse_module()
    arrives = [op for op in module.walk() if isinstance(op, nvvm.MBarrierArriveOp)]
    assert [present(op) for op in arrives] == [frozenset(), frozenset({"count", "res"})]


def test_the_table_calls_what_impl_wraps() -> None:
    program = Program(ModuleOp([]), default_functions())
    kind, ft, fn, _ = program.table[arith.AddiOp]
    assert kind is Kind.SIMPLE
    # The wrapped function returns the results themselves, not an OpImplResult.
    op = Parser(make_context(), "%a = arith.constant 1 : i32\n%b = arith.addi %a, %a : i32").parse_module()
    addi = next(o for o in op.walk() if isinstance(o, arith.AddiOp))
    assert fn(ft, None, addi, (0xFFFFFFFF, 2)) == (1,)  # (2^32 - 1 + 2) mod 2^32


def _double_addi(ft: ArithFunctions, interp: Interpreter, op: Operation, args: PythonValues) -> OpImplResult:
    return OpImplResult((2 * (args[0] + args[1]),), None)


def test_an_implementation_without_the_wrapper_is_adapted() -> None:
    @register_impls
    class Plain(ArithFunctions):
        @impl(arith.AddiOp)
        def run_addi(self, interp: Interpreter, op: arith.AddiOp, args: PythonValues) -> PythonValues:
            return ((args[0] + args[1]) & 0xFF,)

    impls = getattr(Plain, "__impl_dict")
    impls[arith.AddiOp] = _double_addi  # not a wrapper of xDSL's `impl`
    functions = [Plain() if isinstance(f, ArithFunctions) else f for f in default_functions()]
    program = Program(ModuleOp([]), functions)
    kind, ft, fn, _ = program.table[arith.AddiOp]
    assert kind is Kind.SIMPLE
    assert isinstance(ft, Plain)
    assert fn(ft, None, None, (3, 4)) == (14,)


KERNEL = """
llvm.func @k(%out: !llvm.ptr<1>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c7 = arith.constant 7 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %c0) -> (i32) : i32 {
    %p = arith.cmpi ult, %i, %c7 : i32
    %x = arith.select %p, %i, %c1 : i32
    %a = arith.addi %acc, %x : i32
    scf.yield %a : i32
  }
  llvm.store %r, %out : i32, !llvm.ptr<1>
  llvm.return
}
"""


def test_a_loop_runs_its_per_op_facts_at_every_iteration() -> None:
    """Constants, compares and selects derive their facts once per op; the loop's value is
    the sum written out: i for i < 7, else 1."""
    module = Parser(make_context(), KERNEL).parse_module()
    n = 20
    result = run_kernel(module, "k", block=32, args={"out": np.zeros(1, np.int32), "n": n})
    assert result.outputs["out"].tolist() == [sum(i if i < 7 else 1 for i in range(n))]
