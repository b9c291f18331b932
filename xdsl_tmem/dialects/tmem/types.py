"""tmem types: the TMEM allocation, stages and tensor views, pipelines, the output ring,
the dealloc barrier and the warp contexts, each with the capacity rules of its
parameters.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    IntAttr,
    f32,
    i32,
)
from xdsl.ir import Attribute, ParametrizedAttribute, TypeAttribute
from xdsl.irdl import (
    irdl_attr_definition,
    param_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects.utils import (
    TMEM_COLUMNS,
    check_alloc_columns,
    check_cta_group,
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
    """OutputPipelineConfig rules (docs/semantics.md §4.1, §9 item 3)."""
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
"""Valid MMA_M per cta_group (Mojo `validate_constraints`, docs/semantics.md §9 item 1)."""


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
