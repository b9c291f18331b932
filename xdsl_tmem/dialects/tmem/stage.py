"""tmem_stage (Mojo `TmemStage`, `TmemTensor`): stages of the accumulator ring, tensor
views, and their 16x256b tcgen05.ld/st with the waits.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    I32,
    IntegerAttr,
    VectorType,
    f32,
    i32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.hints import isa

from xdsl_tmem.dialects.nvvm import Tcgen05LdStShape
from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.tmem.base import TmemOp, check_fits_allocation
from xdsl_tmem.dialects.tmem.types import AllocationType, TensorType, TmemStageType
from xdsl_tmem.dialects.traits import SyncPoint, WarpLocal
from xdsl_tmem.dialects.utils import (
    TMEM_PTR,
    constant_int,
    is_power_of_two,
)


def _check_stage_index(op: TmemOp, index: SSAValue, stage_type: TmemStageType) -> None:
    num_stages = stage_type.num_stages.data
    if (value := constant_int(index)) is not None and not 0 <= value < num_stages:
        raise op.error(f"stage index {value} out of range [0, {num_stages}) for {stage_type}")


# --------------------------------------------------------------------------------------
# tmem_stage: TmemStage and TmemTensor
# --------------------------------------------------------------------------------------


@irdl_op_definition
class StageCreateOp(TmemOp):
    """`TmemStage(base_addr, index)`."""

    traits = traits_def(WarpLocal())

    name = "tmem.tmem_stage.create"
    base = operand_def(i32)
    index = operand_def(i32)
    stage = result_def(TmemStageType)
    assembly_format = "$base `,` $index attr-dict `:` type($stage)"

    def __init__(self, base: SSAValue, index: SSAValue, stage_type: TmemStageType):
        super().__init__(operands=[base, index], result_types=[stage_type])

    def verify_tmem(self) -> None:
        _check_stage_index(self, self.index, self.stage.type)


@irdl_op_definition
class StageFromAllocOp(TmemOp):
    """`TmemStage(TmemAllocation, index)`: base = the allocation's address."""

    traits = traits_def(WarpLocal())

    name = "tmem.tmem_stage.from_alloc"
    allocation = operand_def(AllocationType)
    index = operand_def(i32)
    stage = result_def(TmemStageType)
    assembly_format = "$allocation `,` $index attr-dict `:` type($allocation) `->` type($stage)"

    def __init__(self, allocation: SSAValue, index: SSAValue, stage_type: TmemStageType):
        super().__init__(operands=[allocation, index], result_types=[stage_type])

    def verify_tmem(self) -> None:
        stage_type = self.stage.type
        check_fits_allocation(self, stage_type.config(), cast(AllocationType, self.allocation.type))
        _check_stage_index(self, self.index, stage_type)


@irdl_op_definition
class StageFromOffsetOp(TmemOp):
    """`TmemStage.from_offset(offset, index)`: base = offset - index * stride, so that
    `offset()` returns `offset` (legacy interop; the index is kept for signalling)."""

    traits = traits_def(WarpLocal())

    name = "tmem.tmem_stage.from_offset"
    offset = operand_def(i32)
    index = operand_def(i32)
    stage = result_def(TmemStageType)
    assembly_format = "$offset `,` $index attr-dict `:` type($stage)"

    def __init__(self, offset: SSAValue, index: SSAValue, stage_type: TmemStageType):
        super().__init__(operands=[offset, index], result_types=[stage_type])

    def verify_tmem(self) -> None:
        _check_stage_index(self, self.index, self.stage.type)


class _StageQueryOp(TmemOp, ABC):
    """`stage -> value` accessors; the result type is fixed per op."""

    RESULT_TYPE: ClassVar[Attribute]

    def __init__(self, stage: SSAValue):
        super().__init__(operands=[stage], result_types=[self.RESULT_TYPE])


@irdl_op_definition
class StageOffsetOp(_StageQueryOp):
    """`TmemStage.offset()`: the stage's column address, base + index * stride."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.tmem_stage.offset"
    RESULT_TYPE: ClassVar[Attribute] = i32
    stage = operand_def(TmemStageType)
    result = result_def(i32)
    assembly_format = "$stage attr-dict `:` type($stage)"


@irdl_op_definition
class StageIndexOp(_StageQueryOp):
    """`OutputStage.index`: which ring slot (and barrier pair) the stage is."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.tmem_stage.index"
    RESULT_TYPE: ClassVar[Attribute] = i32
    stage = operand_def(TmemStageType)
    result = result_def(i32)
    assembly_format = "$stage attr-dict `:` type($stage)"


@irdl_op_definition
class StageAddressOp(_StageQueryOp):
    """`TmemStage.address()`: the stage's TMEM address as `!llvm.ptr<6>`, ready for
    `nvvm.tcgen05.mma` / `ld` / `st`."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.tmem_stage.address"
    RESULT_TYPE: ClassVar[Attribute] = TMEM_PTR
    stage = operand_def(TmemStageType)
    result = result_def(TMEM_PTR)
    assembly_format = "$stage attr-dict `:` type($stage)"


@irdl_op_definition
class StageTensorOp(TmemOp):
    """`TmemStage.tensor[dtype, layout]()`: a typed M x N accumulator view at `offset()`."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.tmem_stage.tensor"
    stage = operand_def(TmemStageType)
    tensor = result_def(TensorType)
    assembly_format = "$stage attr-dict `:` type($stage) `->` type($tensor)"

    def __init__(self, stage: SSAValue, tensor_type: TensorType):
        super().__init__(operands=[stage], result_types=[tensor_type])

    def verify_tmem(self) -> None:
        stage_type = cast(TmemStageType, self.stage.type)
        tensor_type = self.tensor.type
        _, stride, cta_group = stage_type.config()
        if tensor_type.cta_group.data != cta_group:
            raise self.error(f"{tensor_type} does not match the cta_group of {stage_type}")
        if tensor_type.n.data > stride:
            raise self.error(
                f"the view's N = {tensor_type.n.data} columns exceed the stage stride "
                f"{stride} of {stage_type}; it would overlap the next stage"
            )


@irdl_op_definition
class TensorOffsetOp(TmemOp):
    """`TmemTensor.offset()`: the view's column address (the MMA's `c_tmem`)."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.tensor.offset"
    tensor = operand_def(TensorType)
    result = result_def(i32)
    assembly_format = "$tensor attr-dict `:` type($tensor)"

    def __init__(self, tensor: SSAValue):
        super().__init__(operands=[tensor], result_types=[i32])


@irdl_op_definition
class TensorAddressOp(TmemOp):
    """`TmemTensor.address()`: the view's TMEM address as `!llvm.ptr<6>`."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.tensor.address"
    tensor = operand_def(TensorType)
    result = result_def(TMEM_PTR)
    assembly_format = "$tensor attr-dict `:` type($tensor)"

    def __init__(self, tensor: SSAValue):
        super().__init__(operands=[tensor], result_types=[TMEM_PTR])


LDST_16X256B_REGS_PER_REPEAT = Tcgen05LdStShape.SHAPE_16X256B.registers_per_num
"""16x256b: 16 lanes x 256 bits over 32 threads = 4 registers per `.x1`."""
LDST_16X256B_COLS_PER_REPEAT = Tcgen05LdStShape.SHAPE_16X256B.columns_per_num
"""16x256b.xN covers 8N 32-bit columns."""
LOWER_HALF_LANE_OFFSET = 16 << 16
"""`TMEM_LOWER_ROW_OFFSET`: the lower 16 rows of a warp's quarter (docs/semantics.md §1.4)."""

_REGISTER_ELEMENT_TYPES = (f32, i32)


class _StageAccessOp(TmemOp, ABC):
    """16x256b `tcgen05.ld`/`st` of one half (upper rows 0-15 or lower rows 16-31) of the
    warp's lane quarter, `repeat` times along the columns, at `offset() + column`."""

    DEFAULT_REPEAT: ClassVar[int] = 4
    """TmemStage's load/store default is `repeat = 4` (docs/semantics.md §3.7)."""

    stage = operand_def(TmemStageType)
    column = opt_operand_def(i32)
    repeat = opt_prop_def(IntegerAttr[I32])

    @property
    def repeat_value(self) -> int:
        return self.DEFAULT_REPEAT if self.repeat is None else self.repeat.value.data

    def registers_type(self) -> Attribute:
        raise NotImplementedError

    def verify_tmem(self) -> None:
        repeat = self.repeat_value
        registers = LDST_16X256B_REGS_PER_REPEAT * repeat
        if not is_power_of_two(repeat) or registers > 128:
            raise self.error(
                f"repeat must be a power of two with 4 * repeat <= 128 registers (16x256b, so 1..32), got {repeat}"
            )
        registers_type = self.registers_type()
        if not (
            isa(registers_type, VectorType)
            and registers_type.get_num_dims() == 1
            and registers_type.element_type in _REGISTER_ELEMENT_TYPES
        ):
            raise self.error(f"registers must be a vector of f32 or i32, got {registers_type}")
        count = registers_type.get_shape()[0]
        if count != registers:
            raise self.error(
                f"16x256b with repeat {repeat} moves 4 * {repeat} = {registers} registers per "
                f"thread, but the vector has {count}"
            )
        _, stride, _ = cast(TmemStageType, self.stage.type).config()
        width = LDST_16X256B_COLS_PER_REPEAT * repeat
        # A column only known at run time is checked by the interpreter.
        first = 0 if self.column is None else folded_i32(self.column)
        if first is not None and (first < 0 or first + width > stride):
            raise self.error(
                f"column {first} + width {width} (16x256b x{repeat}) = {first + width} leaves the stage: "
                f"the columns [{first}, {first + width}) must lie in [0, stride {stride})"
            )


def folded_i32(value: SSAValue, depth: int = 8) -> int | None:
    """The signed i32 `value` folds to: a constant, or an arith binary op that xDSL can
    fold (`py_operation`: addi, subi, muli, andi, ori, xori) of values that fold, wrapping
    as i32 does; None if it is not a constant."""
    if (constant := constant_int(value)) is not None:
        return constant
    owner = value.owner
    if not isinstance(owner, arith.SignlessIntegerBinaryOperation) or depth == 0:
        return None
    lhs, rhs = (folded_i32(operand, depth - 1) for operand in owner.operands)
    if lhs is None or rhs is None or (folded := owner.py_operation(lhs, rhs)) is None:
        return None
    wrapped = folded & 0xFFFF_FFFF
    return wrapped - (1 << 32) if wrapped >= 1 << 31 else wrapped


class _StageLoadOp(_StageAccessOp, ABC):
    result = result_def(VectorType)
    assembly_format = "$stage (`[` $column^ `]`)? (`repeat` $repeat^)? attr-dict `:` type($stage) `->` type($result)"

    def __init__(
        self,
        stage: SSAValue,
        result_type: Attribute,
        column: SSAValue | None = None,
        repeat: int | None = None,
    ):
        super().__init__(
            operands=[stage, column],
            result_types=[result_type],
            properties={} if repeat is None else {"repeat": IntegerAttr(repeat, i32)},
        )

    def registers_type(self) -> Attribute:
        return self.result.type


@irdl_op_definition
class LoadUpperOp(_StageLoadOp):
    """`TmemStage.load_upper[repeat=4]()`: `tcgen05.ld.sync.aligned.16x256b.x{repeat}.b32`
    at the stage address (rows 0-15 of the warp's lane quarter)."""

    traits = traits_def(SyncPoint())

    name = "tmem.tmem_stage.load_upper"


@irdl_op_definition
class LoadLowerOp(_StageLoadOp):
    """`TmemStage.load_lower[repeat=4]()`: as `load_upper` at address + (16 << 16)
    (rows 16-31 of the warp's lane quarter)."""

    traits = traits_def(SyncPoint())

    name = "tmem.tmem_stage.load_lower"


class _StageStoreOp(_StageAccessOp, ABC):
    # Redeclared so that the operand order is (stage, column, values).
    stage = operand_def(TmemStageType)
    column = opt_operand_def(i32)
    values = operand_def(VectorType)
    assembly_format = (
        "$stage (`[` $column^ `]`)? `,` $values (`repeat` $repeat^)? attr-dict `:` type($stage) `,` type($values)"
    )

    def __init__(
        self,
        stage: SSAValue,
        values: SSAValue,
        column: SSAValue | None = None,
        repeat: int | None = None,
    ):
        super().__init__(
            operands=[stage, column, values],
            properties={} if repeat is None else {"repeat": IntegerAttr(repeat, i32)},
        )

    def registers_type(self) -> Attribute:
        return self.values.type


@irdl_op_definition
class StoreUpperOp(_StageStoreOp):
    """`TmemStage.store_upper`: `tcgen05.st.sync.aligned.16x256b.x{repeat}.b32` at the
    stage address (rows 0-15 of the warp's lane quarter)."""

    traits = traits_def(SyncPoint())

    name = "tmem.tmem_stage.store_upper"


@irdl_op_definition
class StoreLowerOp(_StageStoreOp):
    """`TmemStage.store_lower`: as `store_upper` at address + (16 << 16)."""

    traits = traits_def(SyncPoint())

    name = "tmem.tmem_stage.store_lower"


@irdl_op_definition
class WaitLoadOp(TmemOp):
    """`TmemStage.wait_load()`: `tcgen05.wait::ld.sync.aligned` — this thread's loads
    are complete and their registers valid."""

    traits = traits_def(SyncPoint())

    name = "tmem.wait_load"
    assembly_format = "attr-dict"


@irdl_op_definition
class WaitStoreOp(TmemOp):
    """`TmemStage.wait_store()`: `tcgen05.wait::st.sync.aligned`."""

    traits = traits_def(SyncPoint())

    name = "tmem.wait_store"
    assembly_format = "attr-dict"
