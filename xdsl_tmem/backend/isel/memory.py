"""Rules for pointers and memory (`llvm`): globals' addresses, `getelementptr` folded
into `[base+offset]`, pointer casts, loads, stores and vector element extraction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    i1,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from xdsl_tmem.backend.isel.core import (
    SHORT_POINTER_SPACES,
    Address,
    FunctionSelector,
    Operand,
    address_space,
    bit_width,
    byte_size,
    late_rule,
    natural_alignment,
    register_kind,
    rule,
    to_predicate,
    vector_elements,
)
from xdsl_tmem.dialects import llvm_ext, ptx
from xdsl_tmem.dialects.ptx import CmpOp, IntMode, PtxType, StateSpace
from xdsl_tmem.dialects.utils import constant_int

if TYPE_CHECKING:
    from xdsl.dialects import vector


@rule(llvm.AddressOfOp)
def _addressof(fs: FunctionSelector, op: llvm.AddressOfOp) -> None:
    space = address_space(op.result.type)
    if space != 3:
        raise fs.error(
            op, f"llvm.mlir.addressof of a global in address space {space}: only shared (3) globals are supported"
        )
    fs.define(op.result, [Address(fs.symbol(op.global_name.root_reference.data))])


def _offset_of(fs: FunctionSelector, op: llvm.GEPOp) -> tuple[int, list[tuple[SSAValue, int]]]:
    """(constant byte offset, [(dynamic index, scale)]) of a GEP."""
    constant = 0
    dynamic: list[tuple[SSAValue, int]] = []
    ssa = iter(op.ssa_indices)
    current: Attribute = op.elem_type
    for position, raw in enumerate(op.rawConstantIndices.iter_values()):
        if position == 0:
            scale = byte_size(current)
        elif isinstance(current, llvm.LLVMArrayType):
            current = current.type
            scale = byte_size(current)
        elif isinstance(current, llvm.LLVMStructType):
            # Struct fields need a constant index (verified by llvm.getelementptr).
            field_offset = 0
            for i, field_type in enumerate(current.types):
                align = natural_alignment(field_type)
                field_offset = (field_offset + align - 1) // align * align
                if i == raw:
                    constant += field_offset
                    current = field_type
                    break
                field_offset += byte_size(field_type)
            continue
        else:
            raise fs.error(op, f"getelementptr into {current} is not supported")
        if raw == llvm.GEP_USE_SSA_VAL:
            index, folded = _split_constant(next(ssa))
            constant += folded * scale
            if index is not None:
                dynamic.append((index, scale))
        else:
            constant += raw * scale
    return constant, dynamic


def _split_constant(index: SSAValue) -> tuple[SSAValue | None, int]:
    """`index` as (dynamic part, constant part): `x + c` folds `c` into the address
    offset (`[%r+16]`) instead of costing an add (GEP indices wrap like the addi)."""
    if (value := constant_int(index)) is not None:
        return None, value
    owner = index.owner
    if isinstance(owner, arith.AddiOp | llvm.AddOp):
        for dynamic, constant in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            if (value := constant_int(constant)) is not None:
                rest, more = _split_constant(dynamic)
                return rest, value + more
    return index, 0


@rule(llvm.GEPOp)
def _gep(fs: FunctionSelector, op: llvm.GEPOp) -> None:
    base = fs.address(op.ptr)
    constant, dynamic = _offset_of(fs, op)
    result = Address(base.base, base.offset + constant)
    bits = bit_width(op.result.type)
    for index, scale in dynamic:
        index_bits = bit_width(index.type)
        base_reg = fs.materialize_address(Address(result.base))
        idx = fs.reg(index)
        kind = "b32" if bits == 32 else "b64"
        if bits == 64 and index_bits == 32:
            wide = fs.emit(ptx.MulOp(PtxType.S32, fs.fresh("b64"), idx, fs.imm(scale), mode=IntMode.WIDE)).res
            summed = fs.emit(ptx.AddOp(PtxType.S64, fs.fresh("b64"), base_reg, wide)).res
        elif bits == 32 and index_bits == 64:
            narrow = fs.emit(ptx.CvtOp(PtxType.U32, PtxType.U64, fs.fresh("b32"), idx)).res
            summed = fs.emit(
                ptx.MadOp(PtxType.S32, fs.fresh("b32"), (narrow, fs.imm(scale), base_reg), mode=IntMode.LO)
            ).res
        else:
            summed = fs.emit(
                ptx.MadOp(
                    PtxType.of("s", bits),
                    fs.fresh(kind),
                    (idx, fs.imm(scale, i32 if bits == 32 else i64), base_reg),
                    mode=IntMode.LO,
                )
            ).res
        result = Address(summed, result.offset)
    fs.define(op.result, [result])


@rule(llvm.IntToPtrOp)
def _inttoptr(fs: FunctionSelector, op: llvm.IntToPtrOp) -> None:
    source_bits, result_bits = bit_width(op.input.type), bit_width(op.output.type)
    value = fs.scalar(op.input)
    if source_bits == result_bits:
        fs.define(op.output, [Address(fs.reg(value))])
    elif source_bits == 32:
        fs.define(
            op.output, [Address(fs.emit(ptx.CvtOp(PtxType.U64, PtxType.U32, fs.fresh("b64"), fs.reg(value))).res)]
        )
    else:
        fs.define(
            op.output, [Address(fs.emit(ptx.CvtOp(PtxType.U32, PtxType.U64, fs.fresh("b32"), fs.reg(value))).res)]
        )


@rule(llvm.PtrToIntOp)
def _ptrtoint(fs: FunctionSelector, op: llvm.PtrToIntOp) -> None:
    pointer_bits, result_bits = bit_width(op.input.type), bit_width(op.output.type)
    value = fs.reg(fs.address(op.input))
    if pointer_bits == result_bits:
        fs.define(op.output, [value])
    elif pointer_bits == 32:
        fs.define(
            op.output,
            [
                fs.emit(
                    ptx.CvtOp(PtxType.of("u", result_bits), PtxType.U32, fs.fresh(register_kind(op.output.type)), value)
                ).res
            ],
        )
    else:
        fs.define(
            op.output,
            [
                fs.emit(
                    ptx.CvtOp(PtxType.of("u", result_bits), PtxType.U64, fs.fresh(register_kind(op.output.type)), value)
                ).res
            ],
        )


_CVTA_SPACE = {
    1: StateSpace.GLOBAL,
    3: StateSpace.SHARED,
    4: StateSpace.CONST,
    5: StateSpace.LOCAL,
    7: StateSpace.SHARED_CLUSTER,
}
"""The address spaces `cvta` converts to and from generic addresses."""


@rule(llvm_ext.AddrSpaceCastOp)
def _addrspacecast(fs: FunctionSelector, op: llvm_ext.AddrSpaceCastOp) -> None:
    """Through the generic space: `cvta.<space>.u64` into it, `cvta.to.<space>.u64` out
    of it, with `cvt` between the 32-bit shared pointers and the 64-bit generic ones."""
    source, target = address_space(op.arg.type), address_space(op.res.type)
    if source is None or target is None:
        raise fs.error(op, f"llvm.addrspacecast of {op.arg.type}: only scalar pointers are supported")
    if source == target:
        fs.define(op.res, fs.get(op.arg))
        return
    for space in (source, target):
        if space != 0 and space not in _CVTA_SPACE:
            raise fs.error(
                op,
                f"llvm.addrspacecast from address space {source} to {target}: address space {space} has no "
                f"generic addresses (cvta supports 0, {', '.join(map(str, _CVTA_SPACE))})",
            )
    value = fs.reg(fs.address(op.arg))
    if source != 0:
        if source in SHORT_POINTER_SPACES:
            value = fs.emit(ptx.CvtOp(PtxType.U64, PtxType.U32, fs.fresh("b64"), value)).res
        value = fs.emit(ptx.CvtaOp(_CVTA_SPACE[source], fs.fresh("b64"), value, to_generic=True)).res
    if target != 0:
        value = fs.emit(ptx.CvtaOp(_CVTA_SPACE[target], fs.fresh("b64"), value)).res
        if target in SHORT_POINTER_SPACES:
            value = fs.emit(ptx.CvtOp(PtxType.U32, PtxType.U64, fs.fresh("b32"), value)).res
    fs.define(op.res, [Address(value)])


_STATE_SPACE: dict[int, StateSpace | None] = {0: None, **_CVTA_SPACE}
"""The `ld`/`st` state space of each address space (none: generic)."""


def _state_space(fs: FunctionSelector, op: Operation, pointer: SSAValue) -> StateSpace | None:
    space = address_space(pointer.type)
    if space not in _STATE_SPACE:
        raise fs.error(op, f"{op.name} through an address-space-{space} pointer is not supported")
    return _STATE_SPACE[space]


def _memory_chunks(element: Attribute, count: int, alignment: int) -> list[tuple[int, int]]:
    """[(first element, width)] splitting a vector access into .v4/.v2/scalar pieces
    no wider than 16 bytes nor than the alignment allows."""
    size = byte_size(element)
    width = 1
    while width < 4 and width * 2 <= count and width * 2 * size <= min(16, alignment) and count % (width * 2) == 0:
        width *= 2
    return [(i, width) for i in range(0, count, width)]


def _memory_type(element: Attribute) -> PtxType:
    if element == i1:
        raise ValueError("i1 memory access")
    return PtxType.of("b", max(bit_width(element), 8))


@rule(llvm.LoadOp)
def _load(fs: FunctionSelector, op: llvm.LoadOp) -> None:
    space = _state_space(fs, op, op.ptr)
    address = fs.address(op.ptr)
    result_type = op.dereferenced_value.type
    element, count = vector_elements(result_type)
    alignment = op.alignment.value.data if op.alignment is not None else natural_alignment(element)
    kind = register_kind(element)
    if element == i1:
        # An i1 in memory is a byte holding 0 or 1 (LLVM's layout): load it, test bit 0.
        if count != 1:
            raise fs.error(op, f"llvm.load of {result_type}: vectors of i1 have no PTX lowering")
        byte = fs.emit(ptx.LdOp(space, PtxType.U8, [fs.fresh("b16")], address.base, address.offset)).res[0]
        fs.define(op.dereferenced_value, [fs.emit(to_predicate(fs, fs.fresh("pred"), byte)).results[0]])
        return
    registers: list[Operand] = []
    for first, width in _memory_chunks(element, count, alignment):
        results = [fs.fresh(kind) for _ in range(width)]
        load = fs.emit(
            ptx.LdOp(space, _memory_type(element), results, address.base, address.offset + first * byte_size(element))
        )
        registers.extend(load.res)
    fs.define(op.dereferenced_value, registers)


@rule(llvm.StoreOp)
def _store(fs: FunctionSelector, op: llvm.StoreOp) -> None:
    space = _state_space(fs, op, op.ptr)
    address = fs.address(op.ptr)
    element, count = vector_elements(op.value.type)
    alignment = op.alignment.value.data if op.alignment is not None else natural_alignment(element)
    if element == i1:
        # Stored as the byte 0 or 1.
        if count != 1:
            raise fs.error(op, f"llvm.store of {op.value.type}: vectors of i1 have no PTX lowering")
        byte = fs.emit(
            ptx.SelpOp(PtxType.B16, fs.fresh("b16"), fs.imm(1, i16), fs.imm(0, i16), fs.reg(op.value, "pred"))
        ).res
        fs.emit(ptx.StOp(space, PtxType.B8, address.base, [byte], address.offset))
        return
    values = (
        [fs.scalar(op.value)]
        if count == 1
        else [v if not isinstance(v, Address) else fs.reg(v) for v in fs.get(op.value)]
    )
    for first, width in _memory_chunks(element, count, alignment):
        chunk = values[first : first + width]
        offset = address.offset + first * byte_size(element)
        pairs = _packed_pairs(fs, chunk) if bit_width(element) == 32 else None
        if pairs is not None:
            fs.emit(ptx.StOp(space, PtxType.B64, address.base, pairs, offset))
        else:
            fs.emit(ptx.StOp(space, _memory_type(element), address.base, chunk, offset))


def _packed_pairs(fs: FunctionSelector, chunk: list[SSAValue]) -> list[SSAValue] | None:
    """The `.b64` registers a chunk of 32-bit lanes was unpacked from, pair by pair, when
    every pair was (the `.f32x2` results): storing them (`st.v2.b64`, as llc-22 stores
    such lanes) saves ptxas moving the halves into four consecutive registers."""
    if len(chunk) % 2:
        return None
    pairs = [fs.packed.get((chunk[i], chunk[i + 1])) for i in range(0, len(chunk), 2)]
    return [pair for pair in pairs if pair is not None] if all(pair is not None for pair in pairs) else None


@rule(llvm_ext.ExtractElementOp)
def _extractelement(fs: FunctionSelector, op: llvm_ext.ExtractElementOp) -> None:
    elements = fs.get(op.vector)
    if (index := constant_int(op.position)) is not None:
        fs.define(op.res, [elements[index]])
        return
    # A dynamic index: a select chain (llc spills the vector to local memory instead).
    position = fs.reg(op.position)
    bits = bit_width(vector_elements(op.res.type)[0])
    kind = register_kind(vector_elements(op.res.type)[0])
    chosen = fs.reg(cast(SSAValue, elements[0]), kind)
    for i, element in enumerate(elements[1:], start=1):
        hit = fs.emit(
            ptx.SetpOp(
                CmpOp.EQ,
                PtxType.of("b", bit_width(op.position.type)),
                fs.fresh("pred"),
                position,
                fs.imm(i, op.position.type),
            )
        ).res
        chosen = fs.emit(
            ptx.SelpOp(PtxType.of("b", max(bits, 16)), fs.fresh(kind), cast(SSAValue, element), chosen, hit)
        ).res
    fs.define(op.res, [chosen])


def _extract_op() -> type[vector.ExtractOp]:
    from xdsl.dialects import vector

    return vector.ExtractOp


@late_rule("vector.extract", _extract_op)  # importing vector is ~3% of xdsl-tmem-opt -t ptx
def _vector_extract(fs: FunctionSelector, op: vector.ExtractOp) -> None:
    elements = fs.get(op.vector)
    positions = list(op.static_position.get_values())
    if op.dynamic_position or len(positions) != 1:
        raise fs.error(op, "vector.extract: only a constant position into a 1-D vector is supported")
    fs.define(op.result, [elements[positions[0]]])
