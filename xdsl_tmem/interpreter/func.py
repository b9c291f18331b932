"""`func` calls and returns, and `cf` branches.

A branch goes to one successor for the whole warp: `cf.cond_br` on a condition the
active lanes disagree on would need a reconvergence point, which unstructured
control flow does not give; it is reported rather than guessed (use `scf.if`).
"""

from __future__ import annotations

from xdsl.dialects import cf, func
from xdsl.interpreter import (
    Interpreter,
    PythonValues,
    ReturnedValues,
    Successor,
    TerminatorValue,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Operation

from xdsl_tmem.interpreter.executor import RunBlock, StructuredGen, Warp, WarpFunctions, impl_structured
from xdsl_tmem.interpreter.values import format_lanes, uniform


def call(warp: Warp, callee: Operation, args: PythonValues) -> RunBlock:
    """The request that runs `callee`'s body (a func.func or llvm.func) in a new frame."""
    region = callee.regions[0] if callee.regions else None
    if region is None or not region.blocks:
        raise ValueError(f"call to '{callee.attributes.get('sym_name') or callee.name}', which has no body")
    return RunBlock(region.blocks.first, args, fresh_env=True)  # pyright: ignore[reportArgumentType]


@register_impls
class FuncFunctions(WarpFunctions):
    @impl_structured(func.CallOp)
    def run_call(self, warp: Warp, op: func.CallOp, args: PythonValues) -> StructuredGen:
        return (yield call(warp, warp.get_op_for_symbol(op.callee), args))

    @impl_terminator(func.ReturnOp)
    def run_return(
        self, interp: Interpreter, op: func.ReturnOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


@register_impls
class CfFunctions(WarpFunctions):
    @impl_terminator(cf.BranchOp)
    def run_br(self, interp: Interpreter, op: cf.BranchOp, args: PythonValues) -> tuple[TerminatorValue, PythonValues]:
        return Successor(op.successor, args), ()

    @impl_terminator(cf.ConditionalBranchOp)
    def run_cond_br(
        self, interp: Interpreter, op: cf.ConditionalBranchOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        assert isinstance(interp, Warp)
        cond = uniform(args[0], interp.mask)
        if cond is None:
            raise ValueError(
                f"cf.cond_br: lanes {format_lanes(interp.mask)} disagree on the condition; divergent "
                "unstructured branches are not supported (use scf.if / scf.while)"
            )
        then_args = args[1 : 1 + len(op.then_arguments)]
        else_args = args[1 + len(op.then_arguments) :]
        if cond:
            return Successor(op.then_block, then_args), ()
        return Successor(op.else_block, else_args), ()
