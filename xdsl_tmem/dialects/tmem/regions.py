"""Region ops (Mojo `with` blocks) and their terminator `tmem.yield`: the output ring's
producer/consumer blocks and the warp contexts' blocks. `expand_tmem_regions` expands
them into the ops of their family before the lowering.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    i1,
    i32,
)
from xdsl.ir import Attribute, Operation, Region, SSAValue
from xdsl.irdl import (
    BaseAttr,
    IRDLOperation,
    VarConstraint,
    lazy_traits_def,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import HasParent, IsTerminator

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.tmem.base import TmemOp
from xdsl_tmem.dialects.tmem.types import (
    EpilogueWarpContextType,
    MmaWarpContextType,
    OutputRingType,
    PipelineType,
    WarpContextType,
)
from xdsl_tmem.dialects.tmem.warp_context import ContextCreateOp
from xdsl_tmem.dialects.traits import WarpLocal


@irdl_op_definition
class YieldOp(IRDLOperation):
    """Terminates the body of a tmem region op, passing values out of it."""

    name = "tmem.yield"
    values = var_operand_def()
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(*_region_ops()), WarpLocal()))
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])


def _region_ops() -> tuple[type[Operation], ...]:
    """Every tmem op with a body (the parents a `tmem.yield` may have): the ops this
    module defines on `TmemRegionOp`, in definition order."""
    return tuple(
        cls
        for cls in globals().values()
        if isinstance(cls, type) and issubclass(cls, TmemRegionOp) and "name" in vars(cls)
    )


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


class _ContextRegionOp(TmemRegionOp, ContextCreateOp, ABC):
    """`with Context.create(...) as ctx:` — the body receives the context."""

    assembly_format = (
        "$slot `,` $accum_barriers `,` $dealloc_barrier (`mma_complete_mask` $mask^)? "
        "`:` qualified($context_type) (`->` type($outs)^)? $body attr-dict"
    )

    def __init__(
        self,
        slots: tuple[SSAValue, SSAValue, SSAValue],
        context_type: WarpContextType,
        body: Region,
        mask: SSAValue | None = None,
        out_types: Sequence[Attribute] = (),
    ):
        """`slots`: the TMEM address slot, the accumulator barriers and the dealloc barrier."""
        IRDLOperation.__init__(
            self,
            operands=[*slots, mask],
            result_types=[out_types],
            properties={"context_type": context_type},
            regions=[body],
        )

    def get_context_type(self) -> WarpContextType:
        return cast(WarpContextType, self.properties["context_type"])

    def expected_block_arg_types(self) -> Sequence[Attribute]:
        return [self.get_context_type()]

    def verify_tmem(self) -> None:
        ContextCreateOp.verify_tmem(self)
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
