"""`scf` with divergence: lanes of a warp may disagree on a condition or a trip count.

A uniform condition runs one region with the current mask, as a scalar machine would.
When lanes disagree, `scf.if` runs the then-region under `mask & cond` and the
else-region under `mask & ~cond` and merges the results per lane; `scf.for` and
`scf.while` keep iterating while any lane is still in the loop, each iteration
under the mask of the lanes still inside, as SIMT hardware does.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np
from xdsl.dialects import scf
from xdsl.interpreter import (
    Interpreter,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Block

from xdsl_tmem.interpreter.arith import int_add, int_cmp
from xdsl_tmem.interpreter.executor import RunBlock, StructuredGen, Warp, WarpFunctions, impl_structured
from xdsl_tmem.interpreter.values import Mask, as_signed, merge, width_of


def _if_blocks(op: scf.IfOp) -> tuple[Block, Block | None]:
    """(then block, else block or None), once per op (region accessors are descriptors)."""
    return op.true_region.block, op.false_region.block if op.false_region.blocks else None


def _for_static(op: scf.ForOp) -> tuple[Block, int]:
    """(body, width of the induction variable), once per op."""
    return op.body.block, width_of(op.lb.type)


def _lanes_true(cond: Any, mask: Mask) -> Mask:
    return mask & cond if isinstance(cond, np.ndarray) else (mask if cond else np.zeros_like(mask))


@register_impls
class ScfFunctions(WarpFunctions):
    @impl_structured(scf.IfOp)
    def run_if(self, warp: Warp, op: scf.IfOp, args: PythonValues) -> StructuredGen:
        (cond,) = args
        then_block, else_block = self.static(op, _if_blocks)
        if not isinstance(cond, np.ndarray):  # uniform: one branch, as on a scalar machine
            if cond:
                return (yield RunBlock(then_block, ()))
            return (yield RunBlock(else_block, ())) if else_block is not None else ()
        mask = warp.mask
        taken = mask & cond
        if bool((taken == mask).all()):
            return (yield RunBlock(then_block, ()))
        if not taken.any():
            if else_block is None:
                return ()
            return (yield RunBlock(else_block, ()))
        then_values: PythonValues = yield RunBlock(then_block, (), taken)
        if else_block is None:
            return ()
        else_values: PythonValues = yield RunBlock(else_block, (), mask & ~taken)
        return tuple(merge(taken, t, e, r.type) for t, e, r in zip(then_values, else_values, op.results, strict=True))

    @impl_structured(scf.ForOp)
    def run_for(self, warp: Warp, op: scf.ForOp, args: PythonValues) -> StructuredGen:
        lb, ub, step, *carried = args
        block, w = self.static(op, _for_static)
        if not any(isinstance(v, np.ndarray) for v in (lb, ub, step)):
            # Uniform trip count (the common case): a plain loop (signed bounds, as scf.for).
            values = tuple(carried)
            wrap = (1 << w) - 1
            step_s = as_signed(step, w)
            if step_s <= 0:
                raise ValueError(f"scf.for: the step must be positive, got {step_s}")
            for iv in range(as_signed(lb, w), as_signed(ub, w), step_s):
                values = yield RunBlock(block, (iv & wrap, *values))
            return values
        # Lane-varying bounds: iterate while any lane is inside, each lane under its own mask.
        outer = warp.mask
        iv: Any = lb
        values = tuple(carried)
        types = [r.type for r in op.results]
        while True:
            inside = _lanes_true(int_cmp(iv, ub, w, "slt"), outer)
            if not inside.any():
                return values
            new_values: PythonValues = yield RunBlock(block, (iv, *values), inside)
            values = tuple(merge(inside, n, o, t) for n, o, t in zip(new_values, values, types, strict=True))
            iv = merge(inside, int_add(iv, step, w), iv, op.lb.type)

    @impl_structured(scf.WhileOp)
    def run_while(self, warp: Warp, op: scf.WhileOp, args: PythonValues) -> StructuredGen:
        inside = warp.mask
        values = tuple(args)
        results: list[Any] | None = None
        types = [r.type for r in op.results]
        before, after = op.before_region.block, op.after_region.block
        while True:
            cond, *forwarded = cast(PythonValues, (yield RunBlock(before, values, inside)))
            stay = _lanes_true(cond, inside)
            leaving = inside & ~stay
            if results is None:
                results = list(forwarded)
            elif leaving.any():
                # Each lane leaves once; its results are what it forwarded then.
                results = [merge(leaving, f, r, t) for f, r, t in zip(forwarded, results, types, strict=True)]
            if not stay.any():
                return tuple(results)
            values = cast(PythonValues, (yield RunBlock(after, tuple(forwarded), stay)))
            inside = stay

    @impl_terminator(scf.YieldOp)
    def run_yield(
        self, interp: Interpreter, op: scf.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()

    @impl_terminator(scf.ConditionOp)
    def run_condition(
        self, interp: Interpreter, op: scf.ConditionOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()
