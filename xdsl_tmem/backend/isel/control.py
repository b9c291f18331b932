"""Rules for control flow: `scf.if` (branched or predicated), rotated `scf.for` /
`scf.while` loops, multi-block `cf` / `llvm` branches, returns, and `llvm.call` of a
device function (with the `.param` conventions its `.func` shares).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xdsl.dialects import cf, func, llvm, scf
from xdsl.dialects.builtin import VectorType, i1
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from xdsl_tmem.backend.isel.arith import packed_pair, selects_f32x2, unpacked_pair
from xdsl_tmem.backend.isel.core import (
    Address,
    FunctionSelector,
    Operand,
    UnsupportedTypeError,
    bit_width,
    byte_size,
    register_kind,
    rule,
    vector_elements,
)
from xdsl_tmem.dialects import ptx
from xdsl_tmem.dialects.ptx import CmpOp, PtxType, StateSpace
from xdsl_tmem.dialects.utils import constant_int

# --------------------------------------------------------------------------------------
# Structured control flow
# --------------------------------------------------------------------------------------


def _forward_branch(fs: FunctionSelector, target: str, cond: SSAValue, negated: bool = False) -> None:
    """A conditional branch forward (over an `if` arm, a loop, out of a `while`): a plain
    `bra` even on a uniform condition. ptxas 13.0 structures a plain `bra` itself and
    keeps knowing that the warp is converged in the code it skips into; after a
    `bra.uni` it does not, and loads the memory descriptor into vector registers
    (an R2UR before every global access) and issues an elected `tcgen05.mma` or
    `commit` in a loop over the active lanes (docs/ptx_backend.md, "Loops and branches")."""
    fs.emit(ptx.BraOp(target, fs.reg(cond, "pred"), negated=negated, uniform=False))


NOUNROLL = "nounroll"
"""Each loop's header carries `.pragma "nounroll";` (as llc-22 writes it for
`llvm.loop.unroll.disable`): the loop stays as the program writes it, so its registers
and code size are the program's, not those of ptxas's unrolling (docs/ptx_backend.md)."""


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
    has_else = bool(op.false_region.blocks) and any(not isinstance(o, scf.YieldOp) for o in op.false_region.block.ops)
    if not has_else and not op.results and _try_predicated(fs, op):
        return
    end = fs.label()
    otherwise = fs.label() if has_else or result_registers else end
    _forward_branch(fs, otherwise, op.cond, negated=True)
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
    packs = [_carries_pairs(op, i) for i in range(len(op.iter_args))]
    carried = [_carried_registers(fs, arg, packed) for arg, packed in zip(block.args[1:], packs, strict=True)]
    fs.move([induction], [fs.scalar(op.lb)])
    initial = [_carried_sources(fs, fs.get(v), packed) for v, packed in zip(op.iter_args, packs, strict=True)]
    fs.move([r for registers in carried for r in registers], [s for sources in initial for s in sources])
    fs.define(block.args[0], [induction])
    uniform = all(fs.uniform(v) for v in (op.lb, op.ub, op.step))
    body, done = fs.label(), fs.label()
    lb, ub = constant_int(op.lb), constant_int(op.ub)
    if lb is None or ub is None or not lb < ub:
        skip = fs.emit(ptx.SetpOp(CmpOp.GE, PtxType.of("s", bits), fs.fresh("pred"), induction, fs.scalar(op.ub))).res
        _forward_branch(fs, done, skip)
    fs.emit(ptx.LabelOp(body))
    fs.emit(ptx.PragmaOp([NOUNROLL]))
    for arg, registers, packed in zip(block.args[1:], carried, packs, strict=True):
        _define_carried(fs, arg, registers, packed)
    yielded = block.last_op
    assert isinstance(yielded, scf.YieldOp)
    for inner in block.ops:
        if inner is not yielded:
            fs.select(inner)
    sources = [_carried_sources(fs, fs.get(v), packed) for v, packed in zip(yielded.arguments, packs, strict=True)]
    fs.move([r for registers in carried for r in registers], [s for group in sources for s in group])
    fs.emit(ptx.AddOp(PtxType.of("s", bits), cast(ptx.RegisterType, induction.type), induction, fs.scalar(op.step)))
    again = fs.emit(ptx.SetpOp(CmpOp.LT, PtxType.of("s", bits), fs.fresh("pred"), induction, fs.scalar(op.ub))).res
    fs.emit(ptx.BraOp(body, again, uniform=uniform))
    fs.emit(ptx.LabelOp(done))
    for result, registers, packed in zip(op.results, carried, packs, strict=True):
        _define_carried(fs, result, registers, packed)


def _carries_pairs(op: scf.ForOp, index: int) -> bool:
    """Whether iter arg `index` is carried as `.b64` lane pairs: a vector of f32 that an
    `.f32x2` op yields and one reads (an accumulator `acc = acc + x`). Carried as 32-bit
    lanes, each iteration would unpack its pairs for the back edge and re-pack them at
    the top; ptxas 13.0 then needs more registers (156 instead of 151 on blockwise_fp8_cg1)."""
    yielded = op.body.block.last_op
    assert isinstance(yielded, scf.YieldOp)
    producer = yielded.arguments[index].owner
    argument = op.body.block.args[1 + index]
    return (
        isinstance(producer, Operation)
        and selects_f32x2(producer)
        and any(selects_f32x2(use.operation) for use in argument.uses)
    )


def _carried_registers(fs: FunctionSelector, value: SSAValue, packed: bool) -> list[SSAValue]:
    """The registers carrying `value` around a loop: one per element, or one `.b64` per
    lane pair (and a 32-bit one for an odd last lane)."""
    if not packed:
        return fs.registers_like(value)
    _, count = vector_elements(value.type)
    return [fs.handle("b64") for _ in range(count // 2)] + [fs.handle("b32") for _ in range(count % 2)]


def _carried_sources(fs: FunctionSelector, lanes: Sequence[Operand], packed: bool) -> list[Operand]:
    if not packed:
        return list(lanes)
    values = [fs.reg(lane) if isinstance(lane, Address) else lane for lane in lanes]  # f32 lanes: no addresses
    pairs: list[Operand] = [packed_pair(fs, values[i], values[i + 1]) for i in range(0, len(values) - 1, 2)]
    return pairs + values[len(values) - len(values) % 2 :]


def _define_carried(fs: FunctionSelector, value: SSAValue, registers: list[SSAValue], packed: bool) -> None:
    """Define a block argument or loop result from its carried registers (pairs unpacked
    where read: dead-instruction removal drops an unpack nobody reads)."""
    if not packed:
        _define_from(fs, [value], registers)
        return
    _, count = vector_elements(value.type)
    lanes: list[Operand] = [half for pair in registers[: count // 2] for half in unpacked_pair(fs, pair)]
    fs.define(value, lanes + registers[count // 2 :])


@rule(scf.WhileOp)
def _while(fs: FunctionSelector, op: scf.WhileOp) -> None:
    before, after = op.before_region.block, op.after_region.block
    state = [r for arg in before.args for r in fs.registers_like(arg)]
    fs.move(state, [s for v in op.arguments for s in fs.get(v)])
    _define_from(fs, before.args, state)
    forwarded = [r for arg in after.args for r in fs.registers_like(arg)]
    head, done = fs.label(), fs.label()
    fs.emit(ptx.LabelOp(head))
    fs.emit(ptx.PragmaOp([NOUNROLL]))
    condition = before.last_op
    assert isinstance(condition, scf.ConditionOp)
    for inner in before.ops:
        if inner is not condition:
            fs.select(inner)
    fs.move(forwarded, [s for v in condition.args for s in fs.get(v)])
    _forward_branch(fs, done, condition.condition, negated=True)
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
    _forward_branch(fs, other, cond, negated=True)
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
        if "nvvm.kernel" in fs.fn.attributes:
            raise fs.error(op, "a kernel returns no value")
        store_func_param(fs, fs.symbol(FUNC_RETURN), op.operands[0])
    fs.emit(ptx.RetOp())


# --------------------------------------------------------------------------------------
# Device functions and calls
# --------------------------------------------------------------------------------------

FUNC_RETURN = "func_retval0"
"""The return value's `.param` name in a `.func` (llc-22's)."""


def func_param_declaration(name: str, t: Attribute) -> ptx.DeclAttr:
    """The `.param` of a device function's parameter or return value, or of a call's
    argument, as llc-22 declares them: scalars up to 32 bits `.b32` (i1, i8 and i16
    widened), 64-bit ones `.b64`, vectors a byte array at their size's alignment
    (`.param .align 16 .b8 p[16]`). Pointers take their register's width (32 bits for
    shared, tensor and shared::cluster memory; llc-22 passes those as 64-bit generic
    values, but both ends of our calls are ours)."""
    if isinstance(t, VectorType):
        vector = cast(Attribute, t)
        if vector_elements(vector)[0] == i1:
            raise UnsupportedTypeError(f"vector of i1 {t} cannot be passed to a device function")
        size = byte_size(vector)
        if size & (size - 1):
            raise UnsupportedTypeError(f"vector {t} of {size} bytes (not a power of two) cannot be passed")
        return ptx.DeclAttr("param", "b8", name, align=min(size, 16), dims=[size])
    return ptx.DeclAttr("param", "b64" if bit_width(t) == 64 else "b32", name)


def _param_accesses(t: Attribute) -> list[tuple[PtxType, int]]:
    """(type, byte offset) of each element's `ld.param` / `st.param`."""
    element, count = vector_elements(t)
    bits = bit_width(element)
    width = max(bits // 8, 1)
    return [(PtxType.of("b", max(bits, 8)), k * width) for k in range(count)]


def store_func_param(fs: FunctionSelector, symbol: SSAValue, value: SSAValue) -> None:
    """`st.param` of `value` into a `.param` (an i1 as the `.b32` 0 or 1)."""
    if value.type == i1:
        bit = fs.emit(ptx.SelpOp(PtxType.B32, fs.fresh("b32"), fs.imm(1), fs.imm(0), fs.reg(value, "pred"))).res
        fs.emit(ptx.StOp(StateSpace.PARAM, PtxType.B32, symbol, [bit]))
        return
    for operand, (t, offset) in zip(fs.get(value), _param_accesses(value.type), strict=True):
        register = fs.materialize_address(operand) if isinstance(operand, Address) else fs.reg(operand)
        fs.emit(ptx.StOp(StateSpace.PARAM, t, symbol, [register], offset))


def load_func_param(fs: FunctionSelector, value: SSAValue, name: str) -> None:
    """Define `value` by `ld.param` from the `.param` named `name` (an i1 from its `.b32`).
    The registers are handles (`ptx.reg`, defined at the top of the function): a call's
    return value is loaded inside the call's `{ }` scope and used after it."""
    symbol = fs.symbol(name)
    t = value.type
    if t == i1:
        word = fs.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B32, [fs.fresh("b32")], symbol)).res[0]
        bit = fs.handle("pred")
        fs.emit(ptx.SetpOp(CmpOp.NE, PtxType.B32, cast(ptx.RegisterType, bit.type), word, fs.imm(0)))
        fs.define(value, [bit])
        return
    element, _ = vector_elements(t)
    kind = register_kind(element)
    loaded: list[Operand] = []
    for access, offset in _param_accesses(t):
        register = fs.handle(kind)
        fs.emit(ptx.LdOp(StateSpace.PARAM, access, [cast(ptx.RegisterType, register.type)], symbol, offset))
        loaded.append(Address(register) if isinstance(element, llvm.LLVMPointerType) else register)
    fs.define(value, loaded)


@rule(llvm.CallOp)
def _call(fs: FunctionSelector, op: llvm.CallOp) -> None:
    """The call sequence llc-22 emits, in its own `{ }` scope: the argument and return
    `.param`s (`param0`, ..., `retval0`), `st.param` of each argument, `call.uni`, and
    `ld.param` of the return value. `.uni`: the call is unguarded, so every active
    thread calls (PTX ISA 9.0, `call`; llc-22 writes `call.uni` under divergence too)."""
    if op.callee is None:
        raise fs.error(op, "an indirect llvm.call (through a function pointer) has no PTX lowering")
    if op.op_bundle_operands:
        raise fs.error(op, "llvm.call with operand bundles has no PTX lowering")
    callee = op.callee.string_value()
    outer = fs.body
    scope = Block()
    fs.body = scope
    try:
        args: list[SSAValue] = []
        for i, arg in enumerate(op.args):
            name = f"param{i}"
            scope.add_op(ptx.VariableOp(func_param_declaration(name, arg.type)))
            args.append(fs.symbol(name))
        returns: list[SSAValue] = []
        if op.returned is not None:
            scope.add_op(ptx.VariableOp(func_param_declaration("retval0", op.returned.type)))
            returns.append(fs.symbol("retval0"))
        for symbol, arg in zip(args, op.args, strict=True):
            store_func_param(fs, symbol, arg)
        fs.emit(ptx.CallOp(callee, returns, args, uniform=True))
        if op.returned is not None:
            load_func_param(fs, op.returned, "retval0")
    finally:
        fs.body = outer
    fs.emit(ptx.ScopeOp(Region(scope)))
