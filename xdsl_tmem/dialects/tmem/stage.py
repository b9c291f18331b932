"""The `tmem` dialect: Mojo's SM100 structured-kernel TMEM accumulator pipeline.

Every type and op mirrors a Mojo struct or method (see `docs/dialect.md` and
`../shared/spec/semantics.md` §2-5). Ops are grouped in families that keep the
Mojo names recognisable:

* allocation (`TmemAllocation`): `tmem.alloc`, `tmem.from_shared`, ...
* **tmem_stage** (`TmemStage`, `TmemTensor`): `tmem.tmem_stage.*`, `tmem.tensor.*`
* `tmem.pipeline.*` (`ProducerConsumerPipeline`, e.g. an input pipeline)
* **output_ring** (`OutputTilePipeline`, formerly `OutputRingBuffer`): `tmem.output_ring.*`
* **warp_context** (`MmaWarpContext`, `EpilogueWarpContext`, `TmemDeallocBarrier`):
  `tmem.warp_context.*`, `tmem.dealloc_barrier.*`

Pipeline state (stage index and phase) is per-warp register state: ops that
advance it return the new value, which a tile loop carries through `scf.for`
iter_args. Shared-memory storage is passed as `!llvm.ptr<3>`.

Mojo checks none of the capacity rules (semantics.md §11); these verifiers do.
"""

from __future__ import annotations

import operator
from abc import ABC
from collections.abc import Callable, Sequence
from typing import ClassVar, cast

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import (
    I32,
    IntAttr,
    IntegerAttr,
    VectorType,
    f32,
    i1,
    i16,
    i32,
)
from xdsl.ir import Attribute, Dialect, Operation, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    BaseAttr,
    IRDLOperation,
    VarConstraint,
    irdl_attr_definition,
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    param_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa

from xdsl_tmem.dialects.nvvm import Tcgen05LdStShape
from xdsl_tmem.dialects.traits import Synchronizes, SyncPoint, WarpLocal
from xdsl_tmem.dialects.utils import (
    SHARED_PTR,
    TMEM_COLUMNS,
    TMEM_PTR,
    CtaGroupUser,
    NamedErrorOp,
    check_alloc_columns,
    check_arrival_count,
    check_cta_group,
    constant_int,
    enclosing_function,
    function_name,
    is_power_of_two,
    max_threads_per_block,
    verify_single_cta_group,
)

# --------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------


class _IntParamsType(ParametrizedAttribute, TypeAttribute, ABC):
    """A type whose parameters are integers written positionally, `!tmem.x<a, b>`.

    Parameters are checked while parsing, so a bad one is reported at its source
    location; `verify` repeats the check for types built in Python.
    """

    TRAILING_DEFAULT: ClassVar[int | None] = None
    """If set, the last parameter may be omitted and then takes this value."""

    @classmethod
    def param_names(cls) -> tuple[str, ...]:
        return tuple(name for name, _ in cls.get_irdl_definition().parameters)

    @classmethod
    def check(cls, values: Sequence[int]) -> str | None:
        """Why `values` are not valid parameters, or None."""
        return None

    def values(self) -> tuple[int, ...]:
        return tuple(cast(IntAttr, p).data for p in self.parameters)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        names = cls.param_names()
        start = parser.pos
        values = parser.parse_comma_separated_list(parser.Delimiter.ANGLE, parser.parse_integer)
        end = parser.pos
        if cls.TRAILING_DEFAULT is not None and len(values) == len(names) - 1:
            values.append(cls.TRAILING_DEFAULT)
        if len(values) != len(names):
            parser.raise_error(
                f"!{cls.name} expects <{', '.join(names)}>, got {len(values)} parameter(s)",
                start,
                end,
            )
        if (error := cls.check(values)) is not None:
            parser.raise_error(f"!{cls.name}: {error}", start, end)
        return tuple(IntAttr(v) for v in values)

    def print_parameters(self, printer: Printer) -> None:
        values = list(self.values())
        if self.TRAILING_DEFAULT is not None and values[-1] == self.TRAILING_DEFAULT:
            values.pop()
        with printer.in_angle_brackets():
            printer.print_list(values, printer.print_int)

    def verify(self) -> None:
        if (error := self.check(self.values())) is not None:
            raise VerifyException(f"!{self.name}: {error}")


def _check_stage_config(num_stages: int, stride: int, cta_group: int, columns: int) -> str | None:
    """OutputPipelineConfig rules (semantics.md §4.1, §9 item 3)."""
    if num_stages < 1:
        return f"num_stages must be >= 1, got {num_stages}"
    if stride <= 0:
        return f"stage stride must be > 0 columns, got {stride}"
    if (error := check_cta_group(cta_group)) is not None:
        return error
    if num_stages * stride > columns:
        return (
            f"num_stages * stride = {num_stages} * {stride} = {num_stages * stride} "
            f"exceeds the {columns} allocated TMEM columns"
        )
    return None


@irdl_attr_definition
class AllocationType(_IntParamsType):
    """`!tmem.allocation<cta_group, max_cols>`: Mojo `TmemAllocation[cta_group, max_cols]`.

    At run time a 32-bit TMEM address (lane 0, first allocated column).
    """

    name = "tmem.allocation"
    cta_group: IntAttr = param_def(converter=IntAttr)
    max_cols: IntAttr = param_def(converter=IntAttr)

    @classmethod
    def check(cls, values: Sequence[int]) -> str | None:
        cta_group, max_cols = values
        return check_cta_group(cta_group) or check_alloc_columns(max_cols, "max_cols")


class _StageConfigType(_IntParamsType, ABC):
    """Types parametrised by Mojo's `OutputPipelineConfig` (num_stages, stride, cta_group)."""

    @classmethod
    def check(cls, values: Sequence[int]) -> str | None:
        num_stages, stride, cta_group = values
        return _check_stage_config(num_stages, stride, cta_group, TMEM_COLUMNS)

    def config(self) -> tuple[int, int, int]:
        num_stages, stride, cta_group = self.values()
        return num_stages, stride, cta_group


@irdl_attr_definition
class TmemStageType(_StageConfigType):
    """`!tmem.tmem_stage<num_stages, stride, cta_group>`: Mojo `TmemStage[opc]`.

    At run time (base_addr, index); its column address is base + index * stride.
    """

    name = "tmem.tmem_stage"
    num_stages: IntAttr = param_def(converter=IntAttr)
    stride: IntAttr = param_def(converter=IntAttr)
    cta_group: IntAttr = param_def(converter=IntAttr)


@irdl_attr_definition
class OutputRingType(_StageConfigType):
    """`!tmem.output_ring<num_stages, stride, cta_group>`: Mojo `OutputTilePipeline[opc]`.

    At run time: the barrier storage (full[0..n) then empty[0..n)), the TMEM base,
    the 16-bit `mma_complete_mask`, and this warp's producer and consumer
    (stage, phase) registers.
    """

    name = "tmem.output_ring"
    num_stages: IntAttr = param_def(converter=IntAttr)
    stride: IntAttr = param_def(converter=IntAttr)
    cta_group: IntAttr = param_def(converter=IntAttr)

    def stage_type(self) -> TmemStageType:
        return TmemStageType(*self.config())


@irdl_attr_definition
class PipelineType(_IntParamsType):
    """`!tmem.pipeline<num_stages>`: Mojo `ProducerConsumerPipeline[num_stages]`.

    A plain mbarrier ring (e.g. the input tile pipeline of blockwise FP8).
    """

    name = "tmem.pipeline"
    num_stages: IntAttr = param_def(converter=IntAttr)

    @classmethod
    def check(cls, values: Sequence[int]) -> str | None:
        (num_stages,) = values
        return None if num_stages >= 1 else f"num_stages must be >= 1, got {num_stages}"


@irdl_attr_definition
class DeallocBarrierType(_IntParamsType):
    """`!tmem.dealloc_barrier<cta_group>`: Mojo `TmemDeallocBarrier[cta_group]` (one mbarrier)."""

    name = "tmem.dealloc_barrier"
    cta_group: IntAttr = param_def(converter=IntAttr)

    @classmethod
    def check(cls, values: Sequence[int]) -> str | None:
        return check_cta_group(values[0])


class WarpContextType(_IntParamsType, ABC):
    """`<num_stages, stride, cta_group, mma_threads, epilogue_threads[, max_cols = 512]>`."""

    TRAILING_DEFAULT: ClassVar[int | None] = TMEM_COLUMNS

    @classmethod
    def check(cls, values: Sequence[int]) -> str | None:
        num_stages, stride, cta_group, mma_threads, epilogue_threads, max_cols = values
        if (error := check_alloc_columns(max_cols, "max_cols")) is not None:
            return error
        if (error := _check_stage_config(num_stages, stride, cta_group, max_cols)) is not None:
            return error
        for what, n in (("mma_threads", mma_threads), ("epilogue_threads", epilogue_threads)):
            if n < 32 or n % 32:
                return f"{what} must be a positive multiple of 32 (whole warps), got {n}"
        if mma_threads + epilogue_threads > 1024:
            return f"mma_threads + epilogue_threads = {mma_threads + epilogue_threads} exceeds 1024 threads per CTA"
        return None

    def config(self) -> tuple[int, int, int]:
        num_stages, stride, cta_group, *_ = self.values()
        return num_stages, stride, cta_group

    @property
    def sync_threads(self) -> int:
        """Participants of named barrier 1 (Mojo `WarpGroupBarrier[mma + epilogue, 1]`)."""
        _, _, _, mma_threads, epilogue_threads, _ = self.values()
        return mma_threads + epilogue_threads

    def ring_type(self) -> OutputRingType:
        return OutputRingType(*self.config())

    def allocation_type(self) -> AllocationType:
        return AllocationType(self.config()[2], self.values()[5])

    def dealloc_barrier_type(self) -> DeallocBarrierType:
        return DeallocBarrierType(self.config()[2])


@irdl_attr_definition
class MmaWarpContextType(WarpContextType):
    """`!tmem.mma_warp_context<...>`: Mojo `MmaWarpContext[opc, mma_threads, epilogue_threads]`."""

    name = "tmem.mma_warp_context"
    num_stages: IntAttr = param_def(converter=IntAttr)
    stride: IntAttr = param_def(converter=IntAttr)
    cta_group: IntAttr = param_def(converter=IntAttr)
    mma_threads: IntAttr = param_def(converter=IntAttr)
    epilogue_threads: IntAttr = param_def(converter=IntAttr)
    max_cols: IntAttr = param_def(converter=IntAttr)


@irdl_attr_definition
class EpilogueWarpContextType(WarpContextType):
    """`!tmem.epilogue_warp_context<...>`: Mojo `EpilogueWarpContext[opc, mma, epilogue]`."""

    name = "tmem.epilogue_warp_context"
    num_stages: IntAttr = param_def(converter=IntAttr)
    stride: IntAttr = param_def(converter=IntAttr)
    cta_group: IntAttr = param_def(converter=IntAttr)
    mma_threads: IntAttr = param_def(converter=IntAttr)
    epilogue_threads: IntAttr = param_def(converter=IntAttr)
    max_cols: IntAttr = param_def(converter=IntAttr)


_ACCUMULATOR_M = {1: (64, 128), 2: (128, 256)}
"""Valid MMA_M per cta_group (Mojo `validate_constraints`, semantics.md §9 item 1)."""


@irdl_attr_definition
class TensorType(ParametrizedAttribute, TypeAttribute):
    """`!tmem.tensor<MxNxdtype, cta_group>`: Mojo `TmemTensor[dtype, layout(M, N), cta_group]`.

    A typed view of one accumulator tile: N columns of 32-bit cells (one per f32
    or i32 element). At run time its column address.
    """

    name = "tmem.tensor"
    m: IntAttr = param_def(converter=IntAttr)
    n: IntAttr = param_def(converter=IntAttr)
    element_type: Attribute = param_def()
    cta_group: IntAttr = param_def(converter=IntAttr)

    @staticmethod
    def check(m: int, n: int, element_type: Attribute, cta_group: int) -> str | None:
        if (error := check_cta_group(cta_group)) is not None:
            return error
        if element_type not in (f32, i32):
            # f16 accumulators pack two values per 32-bit cell; their TMEM layout is
            # not pinned down in the spec, so we do not guess it.
            return f"element type must be f32 or i32 (32-bit accumulator cells), got {element_type}"
        if m not in _ACCUMULATOR_M[cta_group]:
            allowed = " or ".join(map(str, _ACCUMULATOR_M[cta_group]))
            return f"M must be {allowed} for cta_group {cta_group}, got {m}"
        if not 1 <= n <= TMEM_COLUMNS:
            return f"N must be in [1, {TMEM_COLUMNS}] columns, got {n}"
        return None

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        start = parser.pos
        with parser.in_angle_brackets():
            dims, element_type = parser.parse_ranked_shape()
            parser.parse_punctuation(",")
            cta_group = parser.parse_integer()
        if len(dims) != 2:
            parser.raise_error(f"!tmem.tensor expects an MxN shape, got {len(dims)} dimensions", start, parser.pos)
        if (error := cls.check(dims[0], dims[1], element_type, cta_group)) is not None:
            parser.raise_error(f"!tmem.tensor: {error}", start, parser.pos)
        return (IntAttr(dims[0]), IntAttr(dims[1]), element_type, IntAttr(cta_group))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string(f"{self.m.data}x{self.n.data}x")
            printer.print_attribute(self.element_type)
            printer.print_string(f", {self.cta_group.data}")

    def verify(self) -> None:
        error = self.check(self.m.data, self.n.data, self.element_type, self.cta_group.data)
        if error is not None:
            raise VerifyException(f"!tmem.tensor: {error}")

    @property
    def is_lower_required(self) -> bool:
        """Mojo `TmemTensor.is_lower_required`: rows 16-31 hold data unless cg 1 with M = 64."""
        return not (self.cta_group.data == 1 and self.m.data == 64)


_CTA_GROUP_TYPES = (
    AllocationType,
    TmemStageType,
    OutputRingType,
    DeallocBarrierType,
    MmaWarpContextType,
    EpilogueWarpContextType,
    TensorType,
)


def _cta_group_of(t: Attribute) -> int | None:
    if isinstance(t, _CTA_GROUP_TYPES):
        return t.cta_group.data
    return None


# --------------------------------------------------------------------------------------
# Op base
# --------------------------------------------------------------------------------------


class TmemOp(NamedErrorOp, CtaGroupUser, ABC):
    """Base of every tmem op: precise messages and the one-cta_group-per-kernel rule."""

    def used_cta_group(self) -> int | None:
        types = [*self.operand_types, *self.result_types]
        types += (
            [arg.type for region in self.regions for arg in region.blocks[0].args]
            if all(r.blocks for r in self.regions)
            else []
        )
        types += [p for p in self.properties.values() if isinstance(p, TypeAttribute)]
        for t in types:
            if (group := _cta_group_of(t)) is not None:
                return group
        return None

    def verify_(self) -> None:
        self.verify_tmem()
        verify_single_cta_group(self)

    def verify_tmem(self) -> None:
        """Op-specific checks; raise `self.error(...)`."""

    def expect_type(self, what: str, actual: Attribute, expected: Attribute) -> None:
        if actual != expected:
            raise self.error(f"{what} must be {expected}, got {actual}")


def _check_stage_index(op: TmemOp, index: SSAValue, stage_type: TmemStageType) -> None:
    num_stages = stage_type.num_stages.data
    if (value := constant_int(index)) is not None and not 0 <= value < num_stages:
        raise op.error(f"stage index {value} out of range [0, {num_stages}) for {stage_type}")


def _check_fits_allocation(op: TmemOp, config: tuple[int, int, int], allocation: AllocationType) -> None:
    num_stages, stride, cta_group = config
    if cta_group != allocation.cta_group.data:
        raise op.error(f"cta_group {cta_group} of the stages does not match {allocation}")
    if num_stages * stride > allocation.max_cols.data:
        raise op.error(
            f"num_stages * stride = {num_stages} * {stride} = {num_stages * stride} exceeds "
            f"the {allocation.max_cols.data} columns of {allocation}"
        )


def _check_mask(op: TmemOp, cta_group: int, mask: SSAValue | None) -> None:
    """`mma_complete_mask` is the cta_group 2 multicast mask (semantics.md §6.1)."""
    if cta_group == 1 and mask is not None:
        raise op.error(
            "mma_complete_mask is only used by cta_group 2 (multicast commit); "
            "cta_group 1 commits to its own CTA, remove the mask"
        )
    if cta_group == 2 and mask is None:
        raise op.error("cta_group 2 needs an mma_complete_mask (i16 mask of the CTA pair, e.g. 0b11)")
    if mask is not None and (value := constant_int(mask)) is not None and value & 0xFFFF == 0:
        raise op.error("mma_complete_mask must be non-zero, got 0")


# --------------------------------------------------------------------------------------
# Allocation: TmemAllocation
# --------------------------------------------------------------------------------------


@irdl_op_definition
class AllocOp(TmemOp):
    """`TmemAllocation.allocate(smem_slot)`: the whole (MMA) warp allocates `max_cols`
    TMEM columns; the address is written to the shared-memory slot and read back.

    PTX: `tcgen05.alloc.cta_group::N.sync.aligned.shared::cta.b32 [slot], max_cols;`
    then `bar.warp.sync` and `ld.shared.b32`.
    """

    traits = traits_def(Synchronizes())

    name = "tmem.alloc"
    slot = operand_def(SHARED_PTR)
    allocation = result_def(AllocationType)
    assembly_format = "$slot attr-dict `:` type($allocation)"

    def __init__(self, slot: SSAValue, allocation_type: AllocationType):
        super().__init__(operands=[slot], result_types=[allocation_type])


@irdl_op_definition
class FromSharedOp(TmemOp):
    """`TmemAllocation.from_shared(smem_slot)`: read an address another warp allocated.

    Only valid after the named-barrier sync that publishes it (semantics.md §5.2).
    """

    traits = traits_def(SyncPoint())

    name = "tmem.from_shared"
    slot = operand_def(SHARED_PTR)
    allocation = result_def(AllocationType)
    assembly_format = "$slot attr-dict `:` type($allocation)"

    def __init__(self, slot: SSAValue, allocation_type: AllocationType):
        super().__init__(operands=[slot], result_types=[allocation_type])


@irdl_op_definition
class RelinquishOp(TmemOp):
    """`TmemAllocation.release_lock()`: give up the right to allocate again.

    PTX: `tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned;`
    """

    traits = traits_def(Synchronizes())

    name = "tmem.relinquish"
    allocation = operand_def(AllocationType)
    assembly_format = "$allocation attr-dict `:` type($allocation)"

    def __init__(self, allocation: SSAValue):
        super().__init__(operands=[allocation])


@irdl_op_definition
class DeallocOp(TmemOp):
    """`TmemAllocation.deallocate()`: free the columns (whole warp).

    PTX: `tcgen05.dealloc.cta_group::N.sync.aligned.b32 addr, max_cols;`
    """

    traits = traits_def(Synchronizes())

    name = "tmem.dealloc"
    allocation = operand_def(AllocationType)
    assembly_format = "$allocation attr-dict `:` type($allocation)"

    def __init__(self, allocation: SSAValue):
        super().__init__(operands=[allocation])


@irdl_op_definition
class BaseAddressOp(TmemOp):
    """`TmemAllocation.addr`: the allocation's 32-bit TMEM address."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.base_address"
    allocation = operand_def(AllocationType)
    address = result_def(i32)
    assembly_format = "$allocation attr-dict `:` type($allocation)"

    def __init__(self, allocation: SSAValue):
        super().__init__(operands=[allocation], result_types=[i32])


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
        _check_fits_allocation(self, stage_type.config(), cast(AllocationType, self.allocation.type))
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


@irdl_op_definition
class TensorAddressOp(TmemOp):
    """`TmemTensor.address()`: the view's TMEM address as `!llvm.ptr<6>`."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.tensor.address"
    tensor = operand_def(TensorType)
    result = result_def(TMEM_PTR)
    assembly_format = "$tensor attr-dict `:` type($tensor)"


LDST_16X256B_REGS_PER_REPEAT = Tcgen05LdStShape.SHAPE_16X256B.registers_per_num
"""16x256b: 16 lanes x 256 bits over 32 threads = 4 registers per `.x1`."""
LDST_16X256B_COLS_PER_REPEAT = Tcgen05LdStShape.SHAPE_16X256B.columns_per_num
"""16x256b.xN covers 8N 32-bit columns."""
LOWER_HALF_LANE_OFFSET = 16 << 16
"""`TMEM_LOWER_ROW_OFFSET`: the lower 16 rows of a warp's quarter (semantics.md §1.4)."""

_REGISTER_ELEMENT_TYPES = (f32, i32)


class _StageAccessOp(TmemOp, ABC):
    """16x256b `tcgen05.ld`/`st` of one half (upper rows 0-15 or lower rows 16-31) of the
    warp's lane quarter, `repeat` times along the columns, at `offset() + column`."""

    DEFAULT_REPEAT: ClassVar[int] = 4
    """TmemStage's load/store default is `repeat = 4` (semantics.md §3.7)."""

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


_I32_FOLDS: dict[type[Operation], Callable[[int, int], int]] = {
    arith.AddiOp: operator.add,
    arith.SubiOp: operator.sub,
    arith.MuliOp: operator.mul,
}


def folded_i32(value: SSAValue, depth: int = 8) -> int | None:
    """The signed i32 `value` folds to: a constant, or `arith.addi/subi/muli` of values
    that fold (wrapping as i32 does); None if it is not a constant."""
    if (constant := constant_int(value)) is not None:
        return constant
    owner = value.owner
    if not isinstance(owner, Operation) or (fold := _I32_FOLDS.get(type(owner))) is None or depth == 0:
        return None
    lhs, rhs = (folded_i32(operand, depth - 1) for operand in owner.operands)
    if lhs is None or rhs is None:
        return None
    wrapped = fold(lhs, rhs) & 0xFFFF_FFFF
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


# --------------------------------------------------------------------------------------
# pipeline: ProducerConsumerPipeline
# --------------------------------------------------------------------------------------


class _InitBarriersOp(TmemOp, ABC):
    """`init_mbars(producer_arv_count, consumer_arv_count)`: one thread initialises
    full[i] with the producer count and empty[i] with the consumer count, i < n."""

    storage = operand_def(SHARED_PTR)
    producer_arv_count = prop_def(IntegerAttr[I32])
    consumer_arv_count = prop_def(IntegerAttr[I32])
    assembly_format = (
        "$storage `producer_arv_count` $producer_arv_count `consumer_arv_count` "
        "$consumer_arv_count attr-dict `:` qualified($ring_type)"
    )

    def verify_tmem(self) -> None:
        for what, attr in (
            ("producer_arv_count", self.producer_arv_count),
            ("consumer_arv_count", self.consumer_arv_count),
        ):
            if (error := check_arrival_count(what, attr.value.data)) is not None:
                raise self.error(error)


@irdl_op_definition
class PipelineInitBarriersOp(_InitBarriersOp):
    """`ProducerConsumerPipeline.init_mbars(producer_arv_count, consumer_arv_count)`."""

    traits = traits_def(SyncPoint())

    name = "tmem.pipeline.init_barriers"
    ring_type = prop_def(PipelineType)


@irdl_op_definition
class PipelineCreateOp(TmemOp):
    """`ProducerConsumerPipeline(ptr)`: producer starts at (stage 0, phase 1), the
    consumer at (stage 0, phase 0), so the first producer wait passes at once."""

    traits = traits_def(WarpLocal())

    name = "tmem.pipeline.create"
    storage = operand_def(SHARED_PTR)
    pipeline = result_def(PipelineType)
    assembly_format = "$storage attr-dict `:` type($pipeline)"


class _PipelineWaitOp(TmemOp, ABC):
    pipeline = operand_def(PipelineType)
    assembly_format = "$pipeline attr-dict `:` type($pipeline)"


@irdl_op_definition
class WaitProducerOp(_PipelineWaitOp):
    """`wait_producer()` (consumer side): block on full[consumer_stage] with parity
    consumer_phase."""

    traits = traits_def(Synchronizes())

    name = "tmem.pipeline.wait_producer"


@irdl_op_definition
class WaitConsumerOp(_PipelineWaitOp):
    """`wait_consumer()` (producer side): block on empty[producer_stage] with parity
    producer_phase."""

    traits = traits_def(Synchronizes())

    name = "tmem.pipeline.wait_consumer"


class _PipelineStageOp(TmemOp, ABC):
    pipeline = operand_def(PipelineType)
    index = result_def(i32)
    assembly_format = "$pipeline attr-dict `:` type($pipeline)"

    def __init__(self, pipeline: SSAValue):
        super().__init__(operands=[pipeline], result_types=[i32])


@irdl_op_definition
class ProducerStageOp(_PipelineStageOp):
    """`producer_stage()`: the producer's current index."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.pipeline.producer_stage"


@irdl_op_definition
class ConsumerStageOp(_PipelineStageOp):
    """`consumer_stage()`: the consumer's current index."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.pipeline.consumer_stage"


class _PipelineStepOp(TmemOp, ABC):
    T: ClassVar = VarConstraint("T", BaseAttr(PipelineType))
    pipeline = operand_def(T)
    new_pipeline = result_def(T)
    assembly_format = "$pipeline attr-dict `:` type($pipeline)"

    def __init__(self, pipeline: SSAValue):
        super().__init__(operands=[pipeline], result_types=[pipeline.type])


@irdl_op_definition
class ProducerStepOp(_PipelineStepOp):
    """`producer_step()`: stage += 1; on wrap stage = 0 and phase ^= 1. No barrier op."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.pipeline.producer_step"


@irdl_op_definition
class ConsumerStepOp(_PipelineStepOp):
    """`consumer_step()`: stage += 1; on wrap stage = 0 and phase ^= 1. No barrier op."""

    traits = traits_def(Pure())  # a function of its operands

    name = "tmem.pipeline.consumer_step"


class _PipelineMbarOp(TmemOp, ABC):
    pipeline = operand_def(PipelineType)
    index = operand_def(i32)
    barrier = result_def(SHARED_PTR)
    assembly_format = "$pipeline `,` $index attr-dict `:` type($pipeline)"

    def verify_tmem(self) -> None:
        num_stages = cast(PipelineType, self.pipeline.type).num_stages.data
        if (value := constant_int(self.index)) is not None and not 0 <= value < num_stages:
            raise self.error(f"stage index {value} out of range [0, {num_stages})")


@irdl_op_definition
class ProducerMbarOp(_PipelineMbarOp):
    """`producer_mbar(stage)`: the address of full[stage]."""

    traits = traits_def(WarpLocal())

    name = "tmem.pipeline.producer_mbar"


@irdl_op_definition
class ConsumerMbarOp(_PipelineMbarOp):
    """`consumer_mbar(stage)`: the address of empty[stage]."""

    traits = traits_def(WarpLocal())

    name = "tmem.pipeline.consumer_mbar"


# --------------------------------------------------------------------------------------
# output_ring: OutputTilePipeline (formerly OutputRingBuffer)
# --------------------------------------------------------------------------------------


@irdl_op_definition
class RingInitBarriersOp(_InitBarriersOp):
    """`OutputTilePipeline.init_barriers(storage, producer_arv_count, consumer_arv_count)`:
    full[i] = producer count (1: the MMA commit), empty[i] = consumer count
    (cta_group * epilogue threads)."""

    traits = traits_def(SyncPoint())

    name = "tmem.output_ring.init_barriers"
    ring_type = prop_def(OutputRingType)

    def verify_tmem(self) -> None:
        super().verify_tmem()
        # full[i] completes once per stage instance, on the single commit of
        # release_from_mma (multicast for cta_group 2: one arrival per CTA).
        if (producers := self.producer_arv_count.value.data) != 1:
            raise self.error(
                f"producer_arv_count is {producers}, but full[i] gets exactly 1 arrival per stage "
                "(the one tcgen05.commit of release_from_mma); it must be 1"
            )
        _check_count_against_contexts(
            self, "consumer_arv_count", self.consumer_arv_count.value.data, self.storage, "accum_barriers", "empty[i]"
        )


@irdl_op_definition
class RingCreateOp(TmemOp):
    """`OutputTilePipeline(barriers, tmem, mma_complete_mask)`: no PTX."""

    traits = traits_def(WarpLocal())

    name = "tmem.output_ring.create"
    storage = operand_def(SHARED_PTR)
    allocation = operand_def(AllocationType)
    mask = opt_operand_def(i16)
    ring = result_def(OutputRingType)
    assembly_format = (
        "$storage `,` $allocation (`mma_complete_mask` $mask^)? attr-dict `:` type($allocation) `->` type($ring)"
    )

    def __init__(
        self,
        storage: SSAValue,
        allocation: SSAValue,
        ring_type: OutputRingType,
        mask: SSAValue | None = None,
    ):
        super().__init__(operands=[storage, allocation, mask], result_types=[ring_type])

    def verify_tmem(self) -> None:
        ring_type = self.ring.type
        _check_fits_allocation(self, ring_type.config(), cast(AllocationType, self.allocation.type))
        _check_mask(self, ring_type.cta_group.data, self.mask)


class _RingStageOp(TmemOp, ABC):
    """Ops taking a ring and a stage of that ring."""

    def check_stage_of_ring(self, ring: SSAValue, stage_type: Attribute) -> None:
        expected = cast(OutputRingType, ring.type).stage_type()
        self.expect_type("the stage type", stage_type, expected)


class _AcquireOp(_RingStageOp, ABC):
    ring = operand_def(OutputRingType)
    stage = result_def(TmemStageType)
    assembly_format = "$ring attr-dict `:` type($ring) `->` type($stage)"

    def __init__(self, ring: SSAValue):
        ring_type = cast(OutputRingType, ring.type)
        super().__init__(operands=[ring], result_types=[ring_type.stage_type()])

    def verify_tmem(self) -> None:
        self.check_stage_of_ring(self.ring, self.stage.type)


@irdl_op_definition
class AcquireForMmaOp(_AcquireOp):
    """`acquire_for_mma()` (MMA warp, all lanes): wait on empty[producer_stage] with
    parity producer_phase (passes at once on the first lap); returns the stage."""

    traits = traits_def(Synchronizes())

    name = "tmem.output_ring.acquire_for_mma"


@irdl_op_definition
class AcquireForEpilogueOp(_AcquireOp):
    """`acquire_for_epilogue()` (every epilogue thread): wait on full[consumer_stage]
    with parity consumer_phase; returns the stage."""

    traits = traits_def(Synchronizes())

    name = "tmem.output_ring.acquire_for_epilogue"


@irdl_op_definition
class ReleaseFromMmaOp(_RingStageOp):
    """`release_from_mma(stage)`: one lane commits on full[stage.index] (cta_group 1:
    plain `tcgen05.commit`; cta_group 2: multicast with `mma_complete_mask`), then
    every lane steps the producer state.

    A commit only tracks the MMAs of the thread that issues it, so it must come from
    the lane that issued the tile's MMAs. Mojo relies on two `elect_one_sync()` calls
    picking the same lane (PTX does not promise which lane it elects). `leader` makes
    that explicit: the commit is issued where `leader` is true. Without it a fresh
    `elect.sync` picks the lane, exactly as Mojo.
    """

    traits = traits_def(SyncPoint())

    name = "tmem.output_ring.release_from_mma"
    T: ClassVar = VarConstraint("T", BaseAttr(OutputRingType))
    ring = operand_def(T)
    stage = operand_def(TmemStageType)
    leader = opt_operand_def(i1)
    new_ring = result_def(T)
    assembly_format = "$ring `,` $stage (`leader` $leader^)? attr-dict `:` type($ring) `,` type($stage)"

    def __init__(self, ring: SSAValue, stage: SSAValue, leader: SSAValue | None = None):
        super().__init__(operands=[ring, stage, leader], result_types=[ring.type])

    def verify_tmem(self) -> None:
        self.check_stage_of_ring(self.ring, self.stage.type)


@irdl_op_definition
class ReleaseFromEpilogueOp(TmemOp):
    """`release_from_epilogue()`: steps the consumer state **only**. It does not
    arrive on empty[stage]: that is `tmem.output_ring.arrive_empty`, exactly as Mojo."""

    traits = traits_def(WarpLocal())

    name = "tmem.output_ring.release_from_epilogue"
    T: ClassVar = VarConstraint("T", BaseAttr(OutputRingType))
    ring = operand_def(T)
    new_ring = result_def(T)
    assembly_format = "$ring attr-dict `:` type($ring)"

    def __init__(self, ring: SSAValue):
        super().__init__(operands=[ring], result_types=[ring.type])


@irdl_op_definition
class ArriveEmptyOp(_RingStageOp):
    """`AccumBarrier[cta_group].arrive(pipeline, stage.index)` (every epilogue thread,
    after its last `wait_load` of the stage): cta_group 1 arrives on the local
    empty[index]; cta_group 2 arrives on the leader CTA's empty[index]."""

    traits = traits_def(Synchronizes())

    name = "tmem.output_ring.arrive_empty"
    ring = operand_def(OutputRingType)
    stage = operand_def(TmemStageType)
    assembly_format = "$ring `,` $stage attr-dict `:` type($ring) `,` type($stage)"

    def __init__(self, ring: SSAValue, stage: SSAValue):
        super().__init__(operands=[ring, stage])

    def verify_tmem(self) -> None:
        self.check_stage_of_ring(self.ring, self.stage.type)


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates the body of a tmem region op, passing values out of it."""

    name = "tmem.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(*_REGION_OPS), WarpLocal()))
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


class TmemRegionOp(TmemOp, ABC):
    """A Mojo `with` block: the body receives its block arguments and yields `outs`.

    Results: the advanced state values (rings, pipelines), then the yielded values.
    """

    outs = var_result_def()
    body = region_def("single_block")

    def expected_block_arg_types(self) -> Sequence[Attribute]:
        raise NotImplementedError

    def verify_tmem(self) -> None:
        block = self.body.block
        expected = list(self.expected_block_arg_types())
        actual = [arg.type for arg in block.args]
        if actual != expected:
            shown = ", ".join(str(t) for t in expected)
            raise self.error(
                f"the body must take ({shown}) as block arguments, got ({', '.join(str(t) for t in actual)})"
            )
        terminator = block.last_op
        if not isinstance(terminator, YieldOp):
            raise self.error("the body must end with tmem.yield")
        yielded = [v.type for v in terminator.values]
        produced = [r.type for r in self.outs]
        if yielded != produced:
            raise self.error(
                f"tmem.yield passes ({', '.join(map(str, yielded))}) but the op "
                f"declares ({', '.join(map(str, produced))})"
            )


class _RingRegionOp(TmemRegionOp, ABC):
    T: ClassVar = VarConstraint("T", BaseAttr(OutputRingType))
    ring = operand_def(T)
    new_ring = result_def(T)
    assembly_format = "$ring `:` type($ring) (`->` type($outs)^)? $body attr-dict"

    def __init__(self, ring: SSAValue, body: Region, out_types: Sequence[Attribute] = ()):
        super().__init__(operands=[ring], result_types=[ring.type, out_types], regions=[body])

    def expected_block_arg_types(self) -> Sequence[Attribute]:
        return [cast(OutputRingType, self.ring.type).stage_type()]


class _RingProducerRegionOp(_RingRegionOp, ABC):
    """A producer region; `leader` is the lane that issues the MMAs and the commit
    (see `tmem.output_ring.release_from_mma`)."""

    ring = operand_def(_RingRegionOp.T)
    leader = opt_operand_def(i1)
    assembly_format = "$ring (`leader` $leader^)? `:` type($ring) (`->` type($outs)^)? $body attr-dict"

    def __init__(
        self,
        ring: SSAValue,
        body: Region,
        out_types: Sequence[Attribute] = (),
        leader: SSAValue | None = None,
    ):
        IRDLOperation.__init__(self, operands=[ring, leader], result_types=[ring.type, out_types], regions=[body])


@irdl_op_definition
class ProducerOp(_RingProducerRegionOp):
    """`with ring.producer() as stage:` (`OutputProducer`): acquire_for_mma, body,
    release_from_mma."""

    traits = traits_def(WarpLocal())

    name = "tmem.output_ring.producer"


@irdl_op_definition
class ConsumerOp(_RingRegionOp):
    """`with ring.consumer() as stage:` (`OutputConsumer`): acquire_for_epilogue, body,
    release_from_epilogue. Like Mojo it does **not** arrive on empty: the body must
    `tmem.output_ring.arrive_empty` after its last `wait_load`."""

    traits = traits_def(WarpLocal())

    name = "tmem.output_ring.consumer"


@irdl_op_definition
class PerKProducerOp(_RingProducerRegionOp):
    """`with ring.per_k().produce() as stage:` (`MmaKStage`, blockwise FP8): acquire an
    output stage per K iteration, commit to full on exit. Same protocol as `producer`."""

    traits = traits_def(WarpLocal())

    name = "tmem.output_ring.per_k_producer"


@irdl_op_definition
class PerKConsumerOp(_RingRegionOp):
    """`with ring.per_k().consume() as stage:` (`PerKConsumerStage`): acquire_for_epilogue;
    on exit arrive on empty[index] (local for cta_group 1, leader CTA for 2), then
    release_from_epilogue."""

    traits = traits_def(WarpLocal())

    name = "tmem.output_ring.per_k_consumer"


# --------------------------------------------------------------------------------------
# warp_context: TmemDeallocBarrier, MmaWarpContext, EpilogueWarpContext
# --------------------------------------------------------------------------------------


@irdl_op_definition
class DeallocBarrierInitOp(TmemOp):
    """Initialise the dealloc mbarrier (one thread; `init_core_barriers`) with
    `arrival_count` = cta_group * epilogue threads."""

    traits = traits_def(SyncPoint())

    name = "tmem.dealloc_barrier.init"
    barrier = operand_def(SHARED_PTR)
    arrival_count = prop_def(IntegerAttr[I32])
    barrier_type = prop_def(DeallocBarrierType)
    assembly_format = "$barrier `arrival_count` $arrival_count attr-dict `:` qualified($barrier_type)"

    def verify_tmem(self) -> None:
        error = check_arrival_count("arrival_count", self.arrival_count.value.data)
        if error is not None:
            raise self.error(error)
        _check_count_against_contexts(
            self, "arrival_count", self.arrival_count.value.data, self.barrier, "dealloc_barrier", "the barrier"
        )


@irdl_op_definition
class DeallocBarrierCreateOp(TmemOp):
    """`TmemDeallocBarrier(dealloc_mbar)`: no PTX."""

    traits = traits_def(WarpLocal())

    name = "tmem.dealloc_barrier.create"
    barrier = operand_def(SHARED_PTR)
    dealloc_barrier = result_def(DeallocBarrierType)
    assembly_format = "$barrier attr-dict `:` type($dealloc_barrier)"


class _DeallocBarrierOp(TmemOp, ABC):
    dealloc_barrier = operand_def(DeallocBarrierType)
    assembly_format = "$dealloc_barrier attr-dict `:` type($dealloc_barrier)"

    def __init__(self, dealloc_barrier: SSAValue):
        super().__init__(operands=[dealloc_barrier])


@irdl_op_definition
class SignalPeerOp(_DeallocBarrierOp):
    """`signal_peer()`: cta_group 2 only: arrive on the peer CTA's dealloc barrier
    (`mapa` to rank ^ 1, `mbarrier.arrive.shared::cluster`). No-op for cta_group 1."""

    traits = traits_def(Synchronizes())

    name = "tmem.dealloc_barrier.signal_peer"


@irdl_op_definition
class SignalSelfOp(_DeallocBarrierOp):
    """`signal_self()`: arrive on this CTA's dealloc barrier."""

    traits = traits_def(Synchronizes())

    name = "tmem.dealloc_barrier.signal_self"


@irdl_op_definition
class SignalCompleteOp(_DeallocBarrierOp):
    """`signal_complete()` (every epilogue thread, at exit): signal_peer then signal_self."""

    traits = traits_def(Synchronizes())

    name = "tmem.dealloc_barrier.signal_complete"


@irdl_op_definition
class DeallocBarrierWaitOp(_DeallocBarrierOp):
    """`wait()`: block on the dealloc barrier with parity 0 (single-use)."""

    traits = traits_def(Synchronizes())

    name = "tmem.dealloc_barrier.wait"


@irdl_op_definition
class CompleteDeallocOp(TmemOp):
    """`complete_dealloc(tmem)` (MMA warp): relinquish the alloc permit, wait the
    dealloc barrier at parity 0, deallocate."""

    traits = traits_def(Synchronizes())

    name = "tmem.dealloc_barrier.complete_dealloc"
    dealloc_barrier = operand_def(DeallocBarrierType)
    allocation = operand_def(AllocationType)
    assembly_format = "$dealloc_barrier `,` $allocation attr-dict `:` type($dealloc_barrier) `,` type($allocation)"

    def __init__(self, dealloc_barrier: SSAValue, allocation: SSAValue):
        super().__init__(operands=[dealloc_barrier, allocation])

    def verify_tmem(self) -> None:
        barrier_group = cast(DeallocBarrierType, self.dealloc_barrier.type).cta_group.data
        if barrier_group != cast(AllocationType, self.allocation.type).cta_group.data:
            raise self.error(f"{self.dealloc_barrier.type} and {self.allocation.type} differ in cta_group")


def _same_storage(a: SSAValue, b: SSAValue) -> bool:
    """One shared-memory object: the same value, or `llvm.mlir.addressof` of one global."""
    if a is b:
        return True
    owner_a, owner_b = a.owner, b.owner
    return (
        isinstance(owner_a, llvm.AddressOfOp)
        and isinstance(owner_b, llvm.AddressOfOp)
        and owner_a.global_name == owner_b.global_name
    )


def _check_count_against_contexts(
    op: TmemOp, what: str, count: int, storage: SSAValue, operand: str, barrier: str
) -> None:
    """An accumulator `empty[i]` or the dealloc barrier is arrived on once by every
    epilogue thread of each CTA of the group: `cta_group * epilogue_threads` (Mojo
    `compute_accum_barrier_counts`, kernel_common.mojo; `init_core_barriers`). The warp
    contexts of the same kernel built on the same barriers (`operand`) know that number;
    without one the count is checked at run time by the interpreter."""
    scope = enclosing_function(op)
    if scope is None:  # top-level ops (tests): the whole module
        scope = op
        while (parent := scope.parent_op()) is not None:
            scope = parent
    for context in scope.walk():
        if not isinstance(context, _ContextCreateOp) or not _same_storage(getattr(context, operand), storage):
            continue
        context_type = context.get_context_type()
        _, _, cta_group = context_type.config()
        epilogue_threads = context_type.values()[4]
        if count != cta_group * epilogue_threads:
            raise op.error(
                f"{what} is {count}, but {context.name} builds {context_type} on these barriers: "
                f"{barrier} gets one arrival per epilogue thread of each of the cta_group CTAs, "
                f"cta_group * epilogue_threads = {cta_group} * {epilogue_threads} = {cta_group * epilogue_threads}"
            )


def _check_context_threads(op: TmemOp, context_type: WarpContextType) -> None:
    """Named barrier 1 waits for mma + epilogue threads: the block must have them."""
    fn = enclosing_function(op)
    if fn is None or (limit := max_threads_per_block(fn)) is None:
        return
    if context_type.sync_threads > limit:
        raise op.error(
            f"named barrier 1 needs mma_threads + epilogue_threads = "
            f"{context_type.sync_threads} threads, but kernel {function_name(fn)} has at "
            f"most {limit} (nvvm.maxntid/reqntid); it would deadlock"
        )


class _ContextCreateOp(TmemOp, ABC):
    slot = operand_def(SHARED_PTR)
    accum_barriers = operand_def(SHARED_PTR)
    dealloc_barrier = operand_def(SHARED_PTR)
    mask = opt_operand_def(i16)

    def get_context_type(self) -> WarpContextType:
        raise NotImplementedError

    def verify_tmem(self) -> None:
        context_type = self.get_context_type()
        _check_mask(self, context_type.config()[2], self.mask)
        _check_context_threads(self, context_type)


class _ContextCreateValueOp(_ContextCreateOp, ABC):
    assembly_format = (
        "$slot `,` $accum_barriers `,` $dealloc_barrier (`mma_complete_mask` $mask^)? attr-dict `:` type($context)"
    )

    def get_context_type(self) -> WarpContextType:
        return cast(WarpContextType, self.results[0].type)


@irdl_op_definition
class MmaCreateOp(_ContextCreateValueOp):
    """`MmaWarpContext.create(tmem_addr_storage, accum_barriers, dealloc_mbar, mask)`
    (whole MMA warp): allocate max_cols TMEM columns into the slot, build the output
    ring and the dealloc barrier."""

    traits = traits_def(Synchronizes())

    name = "tmem.warp_context.mma_create"
    context = result_def(MmaWarpContextType)

    def __init__(
        self,
        slot: SSAValue,
        accum_barriers: SSAValue,
        dealloc_barrier: SSAValue,
        context_type: MmaWarpContextType,
        mask: SSAValue | None = None,
    ):
        super().__init__(operands=[slot, accum_barriers, dealloc_barrier, mask], result_types=[context_type])


@irdl_op_definition
class EpilogueCreateOp(_ContextCreateValueOp):
    """`EpilogueWarpContext.create(...)` preceded by its precondition `Sync.wait()`:
    `barrier.sync 1, mma_threads + epilogue_threads`, then read the TMEM address from
    the slot (`TmemAllocation.from_shared`). Doing both here makes reading the slot
    before the sync (hazard 13) impossible by construction."""

    traits = traits_def(Synchronizes())

    name = "tmem.warp_context.epilogue_create"
    context = result_def(EpilogueWarpContextType)

    def __init__(
        self,
        slot: SSAValue,
        accum_barriers: SSAValue,
        dealloc_barrier: SSAValue,
        context_type: EpilogueWarpContextType,
        mask: SSAValue | None = None,
    ):
        super().__init__(operands=[slot, accum_barriers, dealloc_barrier, mask], result_types=[context_type])


class _ContextUseOp(TmemOp, ABC):
    assembly_format = "$context attr-dict `:` type($context)"

    def __init__(self, context: SSAValue):
        super().__init__(operands=[context])


@irdl_op_definition
class MmaEnterOp(_ContextUseOp):
    """`MmaWarpContext.__enter__`: `barrier.arrive 1, mma_threads + epilogue_threads`
    — tells the epilogue the TMEM address is in shared memory (non-blocking)."""

    traits = traits_def(Synchronizes())

    name = "tmem.warp_context.mma_enter"
    context = operand_def(MmaWarpContextType)


@irdl_op_definition
class MmaExitOp(_ContextUseOp):
    """`MmaWarpContext.__exit__`: `dealloc_barrier.complete_dealloc(tmem)` — relinquish,
    wait the dealloc barrier at parity 0, deallocate."""

    traits = traits_def(Synchronizes())

    name = "tmem.warp_context.mma_exit"
    context = operand_def(MmaWarpContextType)


@irdl_op_definition
class EpilogueExitOp(_ContextUseOp):
    """`EpilogueWarpContext.__exit__`: `dealloc_barrier.signal_complete()` — arrive on
    the peer's dealloc barrier (cta_group 2) and on our own."""

    traits = traits_def(Synchronizes())

    name = "tmem.warp_context.epilogue_exit"
    context = operand_def(EpilogueWarpContextType)


class _ContextFieldOp(TmemOp, ABC):
    context = operand_def(MmaWarpContextType | EpilogueWarpContextType)
    assembly_format = "$context attr-dict `:` type($context) `->` type($result)"

    def expected_type(self, context_type: WarpContextType) -> Attribute:
        raise NotImplementedError

    def __init__(self, context: SSAValue):
        context_type = cast(WarpContextType, context.type)
        super().__init__(operands=[context], result_types=[self.expected_type(context_type)])

    def verify_tmem(self) -> None:
        context_type = cast(WarpContextType, self.context.type)
        self.expect_type("the result type", self.results[0].type, self.expected_type(context_type))


@irdl_op_definition
class ContextOutputRingOp(_ContextFieldOp):
    """`ctx.output_pipeline`: the context's output ring in its initial state."""

    traits = traits_def(WarpLocal())

    name = "tmem.warp_context.output_ring"
    result = result_def(OutputRingType)

    def expected_type(self, context_type: WarpContextType) -> Attribute:
        return context_type.ring_type()


@irdl_op_definition
class ContextTmemOp(_ContextFieldOp):
    """`ctx.tmem`: the context's TMEM allocation."""

    traits = traits_def(WarpLocal())

    name = "tmem.warp_context.tmem"
    result = result_def(AllocationType)

    def expected_type(self, context_type: WarpContextType) -> Attribute:
        return context_type.allocation_type()


@irdl_op_definition
class ContextDeallocBarrierOp(_ContextFieldOp):
    """`ctx.dealloc_barrier`: the context's `TmemDeallocBarrier`."""

    traits = traits_def(WarpLocal())

    name = "tmem.warp_context.dealloc_barrier"
    result = result_def(DeallocBarrierType)

    def expected_type(self, context_type: WarpContextType) -> Attribute:
        return context_type.dealloc_barrier_type()


@irdl_op_definition
class MmaPerKStageOp(TmemRegionOp):
    """`with mma_ctx.per_k_stage() as stage:` (`MmaKStage`): acquire an output stage on
    entry, commit to full[index] on exit; the ring is threaded explicitly."""

    traits = traits_def(WarpLocal())

    name = "tmem.warp_context.mma_per_k_stage"
    T: ClassVar = VarConstraint("T", BaseAttr(OutputRingType))
    context = operand_def(MmaWarpContextType)
    ring = operand_def(T)
    leader = opt_operand_def(i1)
    new_ring = result_def(T)
    assembly_format = (
        "$context `,` $ring (`leader` $leader^)? `:` type($context) `,` type($ring) "
        "(`->` type($outs)^)? $body attr-dict"
    )

    def expected_block_arg_types(self) -> Sequence[Attribute]:
        ring_type = cast(MmaWarpContextType, self.context.type).ring_type()
        self.expect_type("the ring", self.ring.type, ring_type)
        return [ring_type.stage_type()]


@irdl_op_definition
class EpiloguePerKStageOp(TmemRegionOp):
    """`with epi_ctx.per_k_stage(input_pipeline) as stage:` (`EpilogueKContext`):
    acquire_for_epilogue and record the input pipeline's consumer stage (second block
    argument) on entry; on exit the input pipeline's consumer_step, the arrive on the
    output empty[index] (local / leader CTA), and release_from_epilogue."""

    traits = traits_def(WarpLocal())

    name = "tmem.warp_context.epilogue_per_k_stage"
    T: ClassVar = VarConstraint("T", BaseAttr(OutputRingType))
    P: ClassVar = VarConstraint("P", BaseAttr(PipelineType))
    context = operand_def(EpilogueWarpContextType)
    ring = operand_def(T)
    input = operand_def(P)
    new_ring = result_def(T)
    new_input = result_def(P)
    assembly_format = (
        "$context `,` $ring `,` $input `:` type($context) `,` type($ring) `,` type($input) "
        "(`->` type($outs)^)? $body attr-dict"
    )

    def expected_block_arg_types(self) -> Sequence[Attribute]:
        ring_type = cast(EpilogueWarpContextType, self.context.type).ring_type()
        self.expect_type("the ring", self.ring.type, ring_type)
        return [ring_type.stage_type(), i32]


class _ContextRegionOp(TmemRegionOp, _ContextCreateOp, ABC):
    """`with Context.create(...) as ctx:` — the body receives the context."""

    assembly_format = (
        "$slot `,` $accum_barriers `,` $dealloc_barrier (`mma_complete_mask` $mask^)? "
        "`:` qualified($context_type) (`->` type($outs)^)? $body attr-dict"
    )

    def get_context_type(self) -> WarpContextType:
        return cast(WarpContextType, self.properties["context_type"])

    def expected_block_arg_types(self) -> Sequence[Attribute]:
        return [self.get_context_type()]

    def verify_tmem(self) -> None:
        _ContextCreateOp.verify_tmem(self)
        TmemRegionOp.verify_tmem(self)


@irdl_op_definition
class MmaContextOp(_ContextRegionOp):
    """`with MmaWarpContext.create(...) as ctx:` — mma_create, mma_enter, body, mma_exit."""

    traits = traits_def(WarpLocal())

    name = "tmem.warp_context.mma"
    context_type = prop_def(MmaWarpContextType)


@irdl_op_definition
class EpilogueContextOp(_ContextRegionOp):
    """`Sync.wait(); with EpilogueWarpContext.create(...) as ctx:` — epilogue_create
    (named-barrier sync, read the address), body, epilogue_exit."""

    traits = traits_def(WarpLocal())

    name = "tmem.warp_context.epilogue"
    context_type = prop_def(EpilogueWarpContextType)


_REGION_OPS = (
    ProducerOp,
    ConsumerOp,
    PerKProducerOp,
    PerKConsumerOp,
    MmaPerKStageOp,
    EpiloguePerKStageOp,
    MmaContextOp,
    EpilogueContextOp,
)


Tmem = Dialect(
    "tmem",
    [
        # allocation
        AllocOp,
        FromSharedOp,
        RelinquishOp,
        DeallocOp,
        BaseAddressOp,
        # tmem_stage
        StageCreateOp,
        StageFromAllocOp,
        StageFromOffsetOp,
        StageOffsetOp,
        StageIndexOp,
        StageAddressOp,
        StageTensorOp,
        TensorOffsetOp,
        TensorAddressOp,
        LoadUpperOp,
        LoadLowerOp,
        StoreUpperOp,
        StoreLowerOp,
        WaitLoadOp,
        WaitStoreOp,
        # pipeline
        PipelineInitBarriersOp,
        PipelineCreateOp,
        WaitProducerOp,
        WaitConsumerOp,
        ProducerStageOp,
        ConsumerStageOp,
        ProducerStepOp,
        ConsumerStepOp,
        ProducerMbarOp,
        ConsumerMbarOp,
        # output_ring
        RingInitBarriersOp,
        RingCreateOp,
        AcquireForMmaOp,
        ReleaseFromMmaOp,
        AcquireForEpilogueOp,
        ReleaseFromEpilogueOp,
        ArriveEmptyOp,
        ProducerOp,
        ConsumerOp,
        PerKProducerOp,
        PerKConsumerOp,
        # warp_context
        DeallocBarrierInitOp,
        DeallocBarrierCreateOp,
        SignalPeerOp,
        SignalSelfOp,
        SignalCompleteOp,
        DeallocBarrierWaitOp,
        CompleteDeallocOp,
        MmaCreateOp,
        MmaEnterOp,
        MmaExitOp,
        EpilogueCreateOp,
        EpilogueExitOp,
        ContextOutputRingOp,
        ContextTmemOp,
        ContextDeallocBarrierOp,
        MmaPerKStageOp,
        EpiloguePerKStageOp,
        MmaContextOp,
        EpilogueContextOp,
        YieldOp,
    ],
    [
        AllocationType,
        TmemStageType,
        TensorType,
        PipelineType,
        OutputRingType,
        DeallocBarrierType,
        MmaWarpContextType,
        EpilogueWarpContextType,
    ],
)
