"""Rules for control flow: `scf.if` (branched or predicated), rotated `scf.for` /
`scf.while` loops, and multi-block `cf` / `llvm` branches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import cf, func, llvm, scf
from xdsl.ir import Block, Operation, Region, SSAValue

from xdsl_tmem.backend.isel.core import (
    Address,
    FunctionSelector,
    Operand,
    bit_width,
    register_kind,
    rule,
    vector_elements,
)
from xdsl_tmem.dialects import ptx
from xdsl_tmem.dialects.ptx import CmpOp, PtxType
from xdsl_tmem.dialects.utils import constant_int

# --------------------------------------------------------------------------------------
# Structured control flow
# --------------------------------------------------------------------------------------


def _branch(
    fs: FunctionSelector, target: str, cond: SSAValue | None = None, negated: bool = False, uniform: bool = True
) -> None:
    guard = None if cond is None else fs.reg(cond, "pred")
    fs.emit(ptx.BraOp(target, guard, negated=negated, uniform=uniform))


def _region_results(fs: FunctionSelector, region: Region, dests: list[SSAValue]) -> None:
    """Select a single-block region ending in scf.yield; copy its yield into `dests`."""
    block = region.block
    for op in block.ops:
        if op is block.last_op and isinstance(op, scf.YieldOp):
            sources = [s for v in op.arguments for s in fs.get(v)]
            fs.move(dests, sources)
        else:
            fs.select(op)


_PREDICABLE_LIMIT = 6


@rule(scf.IfOp)
def _if(fs: FunctionSelector, op: scf.IfOp) -> None:
    cond = constant_int(op.cond)
    result_registers = [r for result in op.results for r in fs.registers_like(result)]
    if cond is not None:
        # A constant condition: only one side exists.
        region = op.true_region if cond else op.false_region
        if region.blocks:
            _region_results(fs, region, result_registers)
        _define_from(fs, op.results, result_registers)
        return
    uniform = fs.uniform(op.cond)
    has_else = bool(op.false_region.blocks) and any(not isinstance(o, scf.YieldOp) for o in op.false_region.block.ops)
    if not has_else and not op.results and _try_predicated(fs, op):
        return
    end = fs.label()
    otherwise = fs.label() if has_else or result_registers else end
    _branch(fs, otherwise, op.cond, negated=True, uniform=uniform)
    _region_results(fs, op.true_region, result_registers)
    if otherwise != end:
        fs.emit(ptx.BraOp(end, uniform=True))
        fs.emit(ptx.LabelOp(otherwise))
        if op.false_region.blocks:
            _region_results(fs, op.false_region, result_registers)
    fs.emit(ptx.LabelOp(end))
    _define_from(fs, op.results, result_registers)


def _try_predicated(fs: FunctionSelector, op: scf.IfOp) -> bool:
    """Guard each instruction of a small, result-less then-block with the condition
    (`@%p tcgen05.commit ...`) instead of branching around it."""
    saved = fs.body
    trial = Block()
    fs.body = trial
    try:
        for inner in op.true_region.block.ops:
            if not isinstance(inner, scf.YieldOp):
                fs.select(inner)
    finally:
        fs.body = saved
    instructions = [o for o in trial.ops if isinstance(o, ptx.Instruction)]
    predicable = (
        len(instructions) <= _PREDICABLE_LIMIT
        and not any(isinstance(o, ptx.LabelOp | ptx.BraOp) for o in trial.ops)
        and all(o.guard_value() is None for o in instructions)
    )
    if not predicable:
        # Re-select as a branch. Keep the trial's pseudo-ops (cached immediates and
        # symbols may be reused later); drop its instructions and the values they
        # defined (only used inside the region).
        for inner in list(trial.ops):
            inner.detach()
            if not isinstance(inner, ptx.Instruction):
                fs.emit(inner)
        for inner in op.true_region.walk():
            for result in inner.results:
                fs.values.pop(result, None)
        return False
    guard = fs.reg(op.cond, "pred")
    for inner in list(trial.ops):
        inner.detach()
        if isinstance(inner, ptx.Instruction):
            inner.set_guard(guard)
        fs.emit(inner)
    return True


def _define_from(fs: FunctionSelector, results: Sequence[SSAValue], registers: list[SSAValue]) -> None:
    index = 0
    for result in results:
        _, count = vector_elements(result.type)
        values: list[Operand] = list(registers[index : index + count])
        if isinstance(result.type, llvm.LLVMPointerType):
            values = [Address(v) for v in registers[index : index + count]]
        fs.define(result, values)
        index += count


@rule(scf.ForOp)
def _for(fs: FunctionSelector, op: scf.ForOp) -> None:
    block = op.body.block
    bits = bit_width(op.lb.type)
    kind = register_kind(op.lb.type)
    induction = fs.handle(kind)
    carried = [r for arg in block.args[1:] for r in fs.registers_like(arg)]
    fs.move([induction], [fs.scalar(op.lb)])
    fs.move(carried, [s for v in op.iter_args for s in fs.get(v)])
    fs.define(block.args[0], [induction])
    _define_from(fs, block.args[1:], carried)
    uniform = all(fs.uniform(v) for v in (op.lb, op.ub, op.step))
    body, done = fs.label(), fs.label()
    lb, ub = constant_int(op.lb), constant_int(op.ub)
    if lb is None or ub is None or not lb < ub:
        skip = fs.emit(ptx.SetpOp(CmpOp.GE, PtxType.of("s", bits), fs.fresh("pred"), induction, fs.scalar(op.ub))).res
        fs.emit(ptx.BraOp(done, skip, uniform=uniform))
    fs.emit(ptx.LabelOp(body))
    _region_results(fs, op.body, carried)
    fs.emit(ptx.AddOp(PtxType.of("s", bits), cast(ptx.RegisterType, induction.type), induction, fs.scalar(op.step)))
    again = fs.emit(ptx.SetpOp(CmpOp.LT, PtxType.of("s", bits), fs.fresh("pred"), induction, fs.scalar(op.ub))).res
    fs.emit(ptx.BraOp(body, again, uniform=uniform))
    fs.emit(ptx.LabelOp(done))
    _define_from(fs, op.results, carried)


@rule(scf.WhileOp)
def _while(fs: FunctionSelector, op: scf.WhileOp) -> None:
    before, after = op.before_region.block, op.after_region.block
    state = [r for arg in before.args for r in fs.registers_like(arg)]
    fs.move(state, [s for v in op.arguments for s in fs.get(v)])
    _define_from(fs, before.args, state)
    forwarded = [r for arg in after.args for r in fs.registers_like(arg)]
    head, done = fs.label(), fs.label()
    fs.emit(ptx.LabelOp(head))
    condition = before.last_op
    assert isinstance(condition, scf.ConditionOp)
    for inner in before.ops:
        if inner is not condition:
            fs.select(inner)
    fs.move(forwarded, [s for v in condition.args for s in fs.get(v)])
    uniform = fs.uniform(condition.condition)
    _branch(fs, done, condition.condition, negated=True, uniform=uniform)
    _define_from(fs, after.args, forwarded)
    _region_results(fs, op.after_region, state)
    fs.emit(ptx.BraOp(head, uniform=True))
    fs.emit(ptx.LabelOp(done))
    _define_from(fs, op.results, forwarded)


# --------------------------------------------------------------------------------------
# Multi-block functions (cf / llvm branches) and returns
# --------------------------------------------------------------------------------------


def select_blocks(fs: FunctionSelector, region: Region) -> None:
    blocks = list(region.blocks)
    for block in blocks[1:]:
        registers = [r for arg in block.args for r in fs.registers_like(arg)]
        fs.block_labels[block] = (fs.label(), registers)
        _define_from(fs, block.args, registers)
    for block in blocks:
        if block in fs.block_labels:
            fs.emit(ptx.LabelOp(fs.block_labels[block][0]))
        fs.select_block(block)


def _jump(fs: FunctionSelector, block: Block, arguments: Sequence[SSAValue]) -> None:
    label, registers = fs.block_labels[block]
    fs.move(registers, [s for v in arguments for s in fs.get(v)])
    fs.emit(ptx.BraOp(label, uniform=True))


def _conditional_jump(
    fs: FunctionSelector,
    cond: SSAValue,
    then_block: Block,
    then_args: Sequence[SSAValue],
    else_block: Block,
    else_args: Sequence[SSAValue],
) -> None:
    other = fs.label()
    _branch(fs, other, cond, negated=True, uniform=fs.uniform(cond))
    _jump(fs, then_block, then_args)
    fs.emit(ptx.LabelOp(other))
    _jump(fs, else_block, else_args)


@rule(cf.BranchOp, llvm.BrOp)
def _br(fs: FunctionSelector, op: cf.BranchOp | llvm.BrOp) -> None:
    _jump(fs, op.successor, op.arguments)


@rule(cf.ConditionalBranchOp, llvm.CondBrOp)
def _cond_br(fs: FunctionSelector, op: cf.ConditionalBranchOp | llvm.CondBrOp) -> None:
    _conditional_jump(fs, op.cond, op.then_block, op.then_arguments, op.else_block, op.else_arguments)


@rule(llvm.ReturnOp, func.ReturnOp)
def _return(fs: FunctionSelector, op: Operation) -> None:
    if op.operands:
        raise fs.error(op, "a kernel returns no value")
    fs.emit(ptx.RetOp())
