"""pipeline (Mojo `ProducerConsumerPipeline`, e.g. an input pipeline): barrier set-up,
waits, stage and phase state.
"""

from __future__ import annotations

from abc import ABC
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    I32,
    IntegerAttr,
    i32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    BaseAttr,
    VarConstraint,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.tmem.base import TmemOp
from xdsl_tmem.dialects.tmem.types import PipelineType
from xdsl_tmem.dialects.traits import Synchronizes, SyncPoint, WarpLocal
from xdsl_tmem.dialects.utils import (
    SHARED_PTR,
    check_arrival_count,
    constant_int,
)

# --------------------------------------------------------------------------------------
# pipeline: ProducerConsumerPipeline
# --------------------------------------------------------------------------------------


class InitBarriersOp(TmemOp, ABC):
    """`init_mbars(producer_arv_count, consumer_arv_count)`: one thread initialises
    full[i] with the producer count and empty[i] with the consumer count, i < n."""

    storage = operand_def(SHARED_PTR)
    producer_arv_count = prop_def(IntegerAttr[I32])
    consumer_arv_count = prop_def(IntegerAttr[I32])
    assembly_format = (
        "$storage `producer_arv_count` $producer_arv_count `consumer_arv_count` "
        "$consumer_arv_count attr-dict `:` qualified($ring_type)"
    )

    def __init__(self, storage: SSAValue, producer_arv_count: int, consumer_arv_count: int, ring_type: Attribute):
        super().__init__(
            operands=[storage],
            properties={
                "producer_arv_count": IntegerAttr(producer_arv_count, i32),
                "consumer_arv_count": IntegerAttr(consumer_arv_count, i32),
                "ring_type": ring_type,
            },
        )

    def verify_tmem(self) -> None:
        for what, attr in (
            ("producer_arv_count", self.producer_arv_count),
            ("consumer_arv_count", self.consumer_arv_count),
        ):
            if (error := check_arrival_count(what, attr.value.data)) is not None:
                raise self.error(error)


@irdl_op_definition
class PipelineInitBarriersOp(InitBarriersOp):
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

    def __init__(self, storage: SSAValue, pipeline_type: PipelineType):
        super().__init__(operands=[storage], result_types=[pipeline_type])


class _PipelineWaitOp(TmemOp, ABC):
    pipeline = operand_def(PipelineType)
    assembly_format = "$pipeline attr-dict `:` type($pipeline)"

    def __init__(self, pipeline: SSAValue):
        super().__init__(operands=[pipeline])


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

    def __init__(self, pipeline: SSAValue, index: SSAValue):
        super().__init__(operands=[pipeline, index], result_types=[SHARED_PTR])

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
