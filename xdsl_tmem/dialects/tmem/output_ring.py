"""output_ring (Mojo `OutputTilePipeline`, formerly `OutputRingBuffer`): the accumulator
ring between the MMA warp and the epilogue; its `with` blocks are in `regions`.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    i1,
    i16,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    BaseAttr,
    VarConstraint,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
)

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.tmem.base import TmemOp, check_fits_allocation, check_mma_complete_mask
from xdsl_tmem.dialects.tmem.pipeline import InitBarriersOp
from xdsl_tmem.dialects.tmem.types import AllocationType, OutputRingType, TmemStageType
from xdsl_tmem.dialects.tmem.warp_context import check_count_against_contexts
from xdsl_tmem.dialects.traits import Synchronizes, SyncPoint, WarpLocal
from xdsl_tmem.dialects.utils import (
    SHARED_PTR,
)

# --------------------------------------------------------------------------------------
# output_ring: OutputTilePipeline (formerly OutputRingBuffer)
# --------------------------------------------------------------------------------------


@irdl_op_definition
class RingInitBarriersOp(InitBarriersOp):
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
        check_count_against_contexts(
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
        check_fits_allocation(self, ring_type.config(), cast(AllocationType, self.allocation.type))
        check_mma_complete_mask(self, ring_type.cta_group.data, self.mask)


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
