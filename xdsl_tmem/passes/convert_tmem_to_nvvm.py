"""`convert-tmem-to-nvvm`: every explicit tmem op → nvvm + llvm + arith + scf.

The protocol reproduced is Mojo's (semantics.md §1-7); the target ops and their PTX
are in ptx-nvvm.md §2-3.

**Values.** A tmem value lowers to several values (a 1:N conversion):

| tmem type | lowered values |
|---|---|
| `!tmem.allocation` | TMEM address (i32) |
| `!tmem.tmem_stage` | base address (i32), index (i32) |
| `!tmem.tensor` | column address (i32) |
| `!tmem.pipeline` | barriers (`!llvm.ptr<3>`), producer stage, phase, consumer stage, phase (i32) |
| `!tmem.output_ring` | barriers, TMEM base (i32), [cg 2: mma_complete_mask (i16)], the two (stage, phase) |
| `!tmem.dealloc_barrier` | its mbarrier (`!llvm.ptr<3>`) |
| warp contexts | allocation, output ring, dealloc barrier (concatenated) |

While ops are rewritten, the two sides meet through `builtin.unrealized_conversion_cast`
(N values → tmem value → N values), which are folded away at the end. `scf.for`,
`scf.if`, `scf.while` and their terminators carrying tmem values (as operands, results
or block arguments) are rebuilt with the expanded values; loop-carried
values that never change (barrier pointers, the consumer state in the MMA warp, ...)
are then removed, so only the advancing (stage, phase) registers stay loop-carried.

**Barriers.** A ring of n stages is `full[0..n)` then `empty[0..n)`, 8 bytes each.
The producer starts at (stage 0, phase 1), the consumer at (0, 0); a step increments the
stage and on wrap to 0 flips the phase. A wait is the blocking `try_wait.parity` loop on
the stage's barrier with the current phase.

**cta_group 2.** `release_from_mma` commits with `multicast_mask`; the epilogue's arrive
on the leader CTA's `empty[i]` and `signal_peer` go through `nvvm.mapa` (rank & ~1, and
rank ^ 1) and a cluster-scope `mbarrier.arrive` on the `!llvm.ptr<7>` it returns. Mojo
instead clears bit 24 of the shared address (`umma_arrive_leader_cta`, semantics.md
§1.2), which relies on an undocumented encoding of shared::cluster addresses for
clusters of two; `mapa` is the documented PTX way, works for any cluster size, and
costs the same one instruction.

**Fences** (`fence-policy`). `strict` (default) inserts `tcgen05.fence::before_thread_sync`
before a thread sync that publishes tcgen05 work and `::after_thread_sync` after the
matching wait, as the PTX memory model asks (ptx-nvvm.md §1.5): after the empty/full
waits, before the epilogue's empty arrive, around the allocation's warp sync, before the
MMA warp's `barrier.arrive` and after the epilogue's `barrier.sync`, before the dealloc
arrivals and after the dealloc wait. `mojo` reproduces Mojo's emission, which has none
(semantics.md §9.1).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import ClassVar, TypeVar, cast

from xdsl.context import Context
from xdsl.dialects import arith, llvm, scf
from xdsl.dialects.builtin import (
    IntegerAttr,
    IntegerType,
    ModuleOp,
    UnrealizedConversionCastOp,
    VectorType,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.hints import isa

from xdsl_tmem.diagnostics import LocatedError
from xdsl_tmem.dialects import nvvm, tmem
from xdsl_tmem.dialects.utils import SHARED_PTR, TMEM_PTR

_T = TypeVar("_T", bound=Attribute)


class FencePolicy(StrEnum):
    STRICT = "strict"
    MOJO = "mojo"


# --------------------------------------------------------------------------------------
# Lowered layouts of tmem values
# --------------------------------------------------------------------------------------

_STATE = (i32, i32, i32, i32)  # producer stage, phase, consumer stage, phase


def _ring_types(ring: tmem.OutputRingType) -> tuple[Attribute, ...]:
    mask = (i16,) if ring.cta_group.data == 2 else ()
    return (SHARED_PTR, i32, *mask, *_STATE)


def lowered_types(t: Attribute) -> tuple[Attribute, ...] | None:
    """The values a tmem type lowers to, or None for non-tmem types."""
    match t:
        case tmem.AllocationType() | tmem.TensorType():
            return (i32,)
        case tmem.TmemStageType():
            return (i32, i32)
        case tmem.PipelineType():
            return (SHARED_PTR, *_STATE)
        case tmem.OutputRingType():
            return _ring_types(t)
        case tmem.DeallocBarrierType():
            return (SHARED_PTR,)
        case tmem.MmaWarpContextType() | tmem.EpilogueWarpContextType():
            return (i32, *_ring_types(t.ring_type()), SHARED_PTR)
        case _:
            return None


@dataclass
class Side:
    """One side's (stage, phase) registers of a pipeline."""

    stage: SSAValue
    phase: SSAValue


@dataclass
class Pipeline:
    """A lowered `!tmem.pipeline` (or the pipeline part of an output ring)."""

    barriers: SSAValue
    producer: Side
    consumer: Side

    def state(self) -> list[SSAValue]:
        return [self.producer.stage, self.producer.phase, self.consumer.stage, self.consumer.phase]

    @staticmethod
    def from_values(barriers: SSAValue, state: Sequence[SSAValue]) -> Pipeline:
        return Pipeline(barriers, Side(state[0], state[1]), Side(state[2], state[3]))


@dataclass
class Ring:
    """A lowered `!tmem.output_ring`."""

    pipeline: Pipeline
    base: SSAValue
    mask: SSAValue | None

    def values(self) -> list[SSAValue]:
        mask = [] if self.mask is None else [self.mask]
        return [self.pipeline.barriers, self.base, *mask, *self.pipeline.state()]

    @staticmethod
    def from_values(values: Sequence[SSAValue]) -> Ring:
        barriers, base, *rest = values
        mask = rest.pop(0) if len(rest) == 5 else None
        return Ring(Pipeline.from_values(barriers, rest), base, mask)


@dataclass
class WarpContext:
    """A lowered warp context."""

    allocation: SSAValue
    ring: Ring
    dealloc_barrier: SSAValue

    def values(self) -> list[SSAValue]:
        return [self.allocation, *self.ring.values(), self.dealloc_barrier]

    @staticmethod
    def from_values(values: Sequence[SSAValue]) -> WarpContext:
        return WarpContext(values[0], Ring.from_values(values[1:-1]), values[-1])


# --------------------------------------------------------------------------------------
# Emitting
# --------------------------------------------------------------------------------------


class Emitter:
    """Inserts lowered ops before the op being rewritten."""

    def __init__(self, rewriter: PatternRewriter, op: Operation, policy: FencePolicy):
        self.rewriter = rewriter
        self.op = op
        self.policy = policy

    def emit(self, new: Operation) -> Operation:
        self.rewriter.insert(new, InsertPoint.before(self.op))
        return new

    def value(self, new: Operation) -> SSAValue:
        return self.emit(new).results[0]

    def const(self, value: int, type: IntegerType = i32) -> SSAValue:
        return self.value(arith.ConstantOp(IntegerAttr(value, type)))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.value(arith.AddiOp(a, b))

    def add_const(self, a: SSAValue, b: int) -> SSAValue:
        return a if b == 0 else self.add(a, self.const(b))

    def mul_const(self, a: SSAValue, b: int) -> SSAValue:
        return self.value(arith.MuliOp(a, self.const(b)))

    def tmem_pointer(self, address: SSAValue) -> SSAValue:
        return self.value(llvm.IntToPtrOp.create(operands=[address], result_types=[TMEM_PTR]))

    def barrier(self, barriers: SSAValue, index: SSAValue, offset: int = 0) -> SSAValue:
        """`&barriers[index + offset]` (8-byte mbarriers)."""
        if (value := _constant(index)) is not None:
            return self.barrier_at(barriers, value + offset)
        return self.value(
            llvm.GEPOp.from_mixed_indices(
                barriers, [self.add_const(index, offset)], pointee_type=i64, result_type=SHARED_PTR
            )
        )

    def barrier_at(self, barriers: SSAValue, index: int) -> SSAValue:
        if index == 0:
            return barriers
        return self.value(llvm.GEPOp(barriers, [index], pointee_type=i64, result_type=SHARED_PTR))

    def fence(self, kind: nvvm.Tcgen05FenceKind) -> None:
        if self.policy == FencePolicy.STRICT:
            self.emit(nvvm.Tcgen05FenceOp(kind))

    def wait(self, barrier: SSAValue, parity: SSAValue) -> None:
        """The blocking `try_wait.parity` loop; then `fence::after_thread_sync` (strict)."""
        self.emit(nvvm.MBarrierTryWaitParityOp(barrier, parity, self.const(0)))
        self.fence(nvvm.Tcgen05FenceKind.AFTER)

    def step(self, side: Side, num_stages: int) -> Side:
        """`stage += 1; if stage == n: stage = 0; phase ^= 1` (semantics.md §2)."""
        if num_stages == 1:
            return Side(side.stage, self.value(arith.XOrIOp(side.phase, self.const(1))))
        next_stage = self.add_const(side.stage, 1)
        wrapped = self.value(arith.CmpiOp(next_stage, self.const(num_stages), "eq"))
        stage = self.value(arith.SelectOp(wrapped, self.const(0), next_stage))
        flip = self.value(arith.ExtUIOp(wrapped, i32))
        return Side(stage, self.value(arith.XOrIOp(side.phase, flip)))

    def cluster_arrive(self, barrier: SSAValue, rank: SSAValue) -> None:
        """Arrive on the barrier at the same offset in CTA `rank` of the cluster."""
        remote = self.value(nvvm.MapaOp(barrier, rank))
        self.emit(nvvm.MBarrierArriveOp(remote, scope=nvvm.MemScopeKind.CLUSTER))

    def unpack(self, value: SSAValue) -> list[SSAValue]:
        """The lowered values of a tmem value."""
        types = lowered_types(value.type)
        assert types is not None, f"{value.type} is not a tmem type"
        owner = value.owner
        if isinstance(owner, UnrealizedConversionCastOp) and len(owner.outputs) == 1:
            if tuple(owner.inputs.types) == types:
                return list(owner.inputs)
        split = self.emit(UnrealizedConversionCastOp(operands=[[value]], result_types=[list(types)]))
        return list(split.results)

    def ring(self, value: SSAValue) -> Ring:
        return Ring.from_values(self.unpack(value))

    def pipeline(self, value: SSAValue) -> Pipeline:
        barriers, *state = self.unpack(value)
        return Pipeline.from_values(barriers, state)

    def context(self, value: SSAValue) -> WarpContext:
        return WarpContext.from_values(self.unpack(value))

    def one(self, value: SSAValue) -> SSAValue:
        (lowered,) = self.unpack(value)
        return lowered


def _typed(value: SSAValue, cls: type[_T]) -> _T:
    """`value.type` as the tmem type the verifier guarantees."""
    assert isinstance(value.type, cls)
    return value.type


def _constant(value: SSAValue) -> int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


def _pack(values: Sequence[SSAValue], type: Attribute) -> UnrealizedConversionCastOp:
    return UnrealizedConversionCastOp(operands=[list(values)], result_types=[[type]])


Lowered = SSAValue | Sequence[SSAValue]


class TmemLowering(RewritePattern, ABC):
    """Lowers one kind of tmem op. `lower` returns, per result of the op, its value or
    (for a tmem-typed result) its lowered values."""

    OP: ClassVar[type[Operation]]

    def __init__(self, policy: FencePolicy = FencePolicy.STRICT):
        self.policy = policy

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, self.OP):
            return
        emitter = Emitter(rewriter, op, self.policy)
        results = self.lower(op, emitter)
        new_results: list[SSAValue] = []
        for old, new in zip(op.results, results, strict=True):
            if isinstance(new, SSAValue):
                new_results.append(new)
            else:
                new_results.append(emitter.emit(_pack(new, old.type)).results[0])
        rewriter.replace(op, [], new_results)

    @abstractmethod
    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]: ...


# --------------------------------------------------------------------------------------
# Allocation
# --------------------------------------------------------------------------------------


def _allocate(b: Emitter, slot: SSAValue, allocation: tmem.AllocationType) -> SSAValue:
    """`tcgen05.alloc` by the whole warp, `bar.warp.sync`, read the slot back."""
    b.emit(nvvm.Tcgen05AllocOp(slot, b.const(allocation.max_cols.data), allocation.cta_group.data))
    b.fence(nvvm.Tcgen05FenceKind.BEFORE)
    b.emit(nvvm.SyncWarpOp(b.const(-1)))
    b.fence(nvvm.Tcgen05FenceKind.AFTER)
    return b.value(llvm.LoadOp(slot, i32))


class AllocLowering(TmemLowering):
    OP = tmem.AllocOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.AllocOp, op)
        return [[_allocate(b, op.slot, op.allocation.type)]]


class FromSharedLowering(TmemLowering):
    OP = tmem.FromSharedOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.FromSharedOp, op)
        return [[b.value(llvm.LoadOp(op.slot, i32))]]


class RelinquishLowering(TmemLowering):
    OP = tmem.RelinquishOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.RelinquishOp, op)
        b.emit(nvvm.Tcgen05RelinquishAllocPermitOp(_typed(op.allocation, tmem.AllocationType).cta_group.data))
        return []


def _deallocate(b: Emitter, address: SSAValue, allocation: tmem.AllocationType) -> None:
    columns = b.const(allocation.max_cols.data)
    b.emit(nvvm.Tcgen05DeallocOp(b.tmem_pointer(address), columns, allocation.cta_group.data))


class DeallocLowering(TmemLowering):
    OP = tmem.DeallocOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.DeallocOp, op)
        _deallocate(b, b.one(op.allocation), _typed(op.allocation, tmem.AllocationType))
        return []


class BaseAddressLowering(TmemLowering):
    OP = tmem.BaseAddressOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.BaseAddressOp, op)
        return [b.one(op.allocation)]


# --------------------------------------------------------------------------------------
# tmem_stage
# --------------------------------------------------------------------------------------


def _stage_offset(b: Emitter, stage: SSAValue) -> SSAValue:
    """`base + index * stride`."""
    base, index = b.unpack(stage)
    stride = cast(tmem.TmemStageType, stage.type).stride.data
    if (value := _constant(index)) is not None:
        return b.add_const(base, value * stride)
    return b.add(base, b.mul_const(index, stride))


class StageCreateLowering(TmemLowering):
    OP = tmem.StageCreateOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.StageCreateOp, op)
        return [[op.base, op.index]]


class StageFromAllocLowering(TmemLowering):
    OP = tmem.StageFromAllocOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.StageFromAllocOp, op)
        return [[b.one(op.allocation), op.index]]


class StageFromOffsetLowering(TmemLowering):
    OP = tmem.StageFromOffsetOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.StageFromOffsetOp, op)
        scaled = b.mul_const(op.index, op.stage.type.stride.data)
        return [[b.value(arith.SubiOp(op.offset, scaled)), op.index]]


class StageOffsetLowering(TmemLowering):
    OP = tmem.StageOffsetOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.StageOffsetOp, op)
        return [_stage_offset(b, op.stage)]


class StageIndexLowering(TmemLowering):
    OP = tmem.StageIndexOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.StageIndexOp, op)
        return [b.unpack(op.stage)[1]]


class StageAddressLowering(TmemLowering):
    OP = tmem.StageAddressOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.StageAddressOp, op)
        return [b.tmem_pointer(_stage_offset(b, op.stage))]


class StageTensorLowering(TmemLowering):
    OP = tmem.StageTensorOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.StageTensorOp, op)
        return [[_stage_offset(b, op.stage)]]


class TensorOffsetLowering(TmemLowering):
    OP = tmem.TensorOffsetOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.TensorOffsetOp, op)
        return [b.one(op.tensor)]


class TensorAddressLowering(TmemLowering):
    OP = tmem.TensorAddressOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.TensorAddressOp, op)
        return [b.tmem_pointer(b.one(op.tensor))]


def _access_address(
    b: Emitter, op: tmem.LoadUpperOp | tmem.LoadLowerOp | tmem.StoreUpperOp | tmem.StoreLowerOp
) -> SSAValue:
    """`offset() + column`, plus `16 << 16` (rows 16-31) for the lower half."""
    address = _stage_offset(b, op.stage)
    if op.column is not None:
        address = b.add(address, op.column)
    if isinstance(op, tmem.LoadLowerOp | tmem.StoreLowerOp):
        address = b.add_const(address, tmem.LOWER_HALF_LANE_OFFSET)
    return b.tmem_pointer(address)


def _i32_vector(t: Attribute) -> VectorType:
    assert isa(t, VectorType)
    return VectorType(i32, t.get_shape())


class StageLoadLowering(TmemLowering):
    """`tcgen05.ld.sync.aligned.16x256b.x{repeat}.b32` (upstream returns i32 registers;
    an f32 view is a bitcast)."""

    OP = tmem.LoadUpperOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.LoadUpperOp | tmem.LoadLowerOp, op)
        registers = _i32_vector(op.result.type)
        loaded = b.value(nvvm.Tcgen05LdOp(_access_address(b, op), nvvm.Tcgen05LdStShape.SHAPE_16X256B, registers))
        if op.result.type != registers:
            loaded = b.value(llvm.BitcastOp(loaded, op.result.type))
        return [loaded]


class StageLoadLowerLowering(StageLoadLowering):
    OP = tmem.LoadLowerOp


class StageStoreLowering(TmemLowering):
    """`tcgen05.st.sync.aligned.16x256b.x{repeat}.b32`."""

    OP = tmem.StoreUpperOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.StoreUpperOp | tmem.StoreLowerOp, op)
        registers = _i32_vector(op.values.type)
        values = op.values
        if values.type != registers:
            values = b.value(llvm.BitcastOp(values, registers))
        b.emit(nvvm.Tcgen05StOp(_access_address(b, op), values, nvvm.Tcgen05LdStShape.SHAPE_16X256B))
        return []


class StageStoreLowerLowering(StageStoreLowering):
    OP = tmem.StoreLowerOp


class WaitLoadLowering(TmemLowering):
    OP = tmem.WaitLoadOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        b.emit(nvvm.Tcgen05WaitOp(nvvm.Tcgen05WaitKind.LOAD))
        return []


class WaitStoreLowering(TmemLowering):
    OP = tmem.WaitStoreOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        b.emit(nvvm.Tcgen05WaitOp(nvvm.Tcgen05WaitKind.STORE))
        return []


# --------------------------------------------------------------------------------------
# pipeline and output_ring
# --------------------------------------------------------------------------------------


def _initial_state(b: Emitter) -> list[SSAValue]:
    """Producer (stage 0, phase 1) so its first wait passes; consumer (0, 0)."""
    zero = b.const(0)
    return [zero, b.const(1), zero, zero]


class InitBarriersLowering(TmemLowering):
    """`init_mbars`: `mbarrier.init` full[i] with the producer count, empty[i] with the
    consumer count (unrolled over the n stages)."""

    OP = tmem.PipelineInitBarriersOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.PipelineInitBarriersOp | tmem.RingInitBarriersOp, op)
        num_stages = op.ring_type.num_stages.data
        producer = b.const(op.producer_arv_count.value.data)
        consumer = b.const(op.consumer_arv_count.value.data)
        for i in range(num_stages):
            b.emit(nvvm.MBarrierInitOp(b.barrier_at(op.storage, i), producer))
        for i in range(num_stages):
            b.emit(nvvm.MBarrierInitOp(b.barrier_at(op.storage, num_stages + i), consumer))
        return []


class RingInitBarriersLowering(InitBarriersLowering):
    OP = tmem.RingInitBarriersOp


class PipelineCreateLowering(TmemLowering):
    OP = tmem.PipelineCreateOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.PipelineCreateOp, op)
        return [[op.storage, *_initial_state(b)]]


class WaitProducerLowering(TmemLowering):
    """Consumer side: wait full[consumer stage] with the consumer phase."""

    OP = tmem.WaitProducerOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.WaitProducerOp, op)
        p = b.pipeline(op.pipeline)
        b.emit(nvvm.MBarrierTryWaitParityOp(b.barrier(p.barriers, p.consumer.stage), p.consumer.phase, b.const(0)))
        return []


class WaitConsumerLowering(TmemLowering):
    """Producer side: wait empty[producer stage] with the producer phase."""

    OP = tmem.WaitConsumerOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.WaitConsumerOp, op)
        p = b.pipeline(op.pipeline)
        n = _typed(op.pipeline, tmem.PipelineType).num_stages.data
        b.emit(nvvm.MBarrierTryWaitParityOp(b.barrier(p.barriers, p.producer.stage, n), p.producer.phase, b.const(0)))
        return []


class ProducerStageLowering(TmemLowering):
    OP = tmem.ProducerStageOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        return [b.pipeline(cast(tmem.ProducerStageOp, op).pipeline).producer.stage]


class ConsumerStageLowering(TmemLowering):
    OP = tmem.ConsumerStageOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        return [b.pipeline(cast(tmem.ConsumerStageOp, op).pipeline).consumer.stage]


class ProducerStepLowering(TmemLowering):
    OP = tmem.ProducerStepOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.ProducerStepOp, op)
        p = b.pipeline(op.pipeline)
        p.producer = b.step(p.producer, _typed(op.pipeline, tmem.PipelineType).num_stages.data)
        return [[p.barriers, *p.state()]]


class ConsumerStepLowering(TmemLowering):
    OP = tmem.ConsumerStepOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.ConsumerStepOp, op)
        p = b.pipeline(op.pipeline)
        p.consumer = b.step(p.consumer, _typed(op.pipeline, tmem.PipelineType).num_stages.data)
        return [[p.barriers, *p.state()]]


class ProducerMbarLowering(TmemLowering):
    OP = tmem.ProducerMbarOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.ProducerMbarOp, op)
        return [b.barrier(b.pipeline(op.pipeline).barriers, op.index)]


class ConsumerMbarLowering(TmemLowering):
    OP = tmem.ConsumerMbarOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.ConsumerMbarOp, op)
        n = _typed(op.pipeline, tmem.PipelineType).num_stages.data
        return [b.barrier(b.pipeline(op.pipeline).barriers, op.index, n)]


def _create_ring(b: Emitter, barriers: SSAValue, base: SSAValue, mask: SSAValue | None) -> Ring:
    return Ring(Pipeline.from_values(barriers, _initial_state(b)), base, mask)


class RingCreateLowering(TmemLowering):
    OP = tmem.RingCreateOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.RingCreateOp, op)
        return [_create_ring(b, op.storage, b.one(op.allocation), op.mask).values()]


def _acquire(b: Emitter, ring_value: SSAValue, producer: bool) -> list[SSAValue]:
    ring = b.ring(ring_value)
    n = cast(tmem.OutputRingType, ring_value.type).num_stages.data
    side = ring.pipeline.producer if producer else ring.pipeline.consumer
    # The producer waits on empty[stage] (index n + stage), the consumer on full[stage].
    b.wait(b.barrier(ring.pipeline.barriers, side.stage, n if producer else 0), side.phase)
    return [ring.base, side.stage]


class AcquireForMmaLowering(TmemLowering):
    OP = tmem.AcquireForMmaOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        return [_acquire(b, cast(tmem.AcquireForMmaOp, op).ring, producer=True)]


class AcquireForEpilogueLowering(TmemLowering):
    OP = tmem.AcquireForEpilogueOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        return [_acquire(b, cast(tmem.AcquireForEpilogueOp, op).ring, producer=False)]


class ReleaseFromMmaLowering(TmemLowering):
    """One lane commits on full[stage.index] (multicast for cta_group 2); every lane
    steps the producer state."""

    OP = tmem.ReleaseFromMmaOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.ReleaseFromMmaOp, op)
        ring = b.ring(op.ring)
        ring_type = _typed(op.ring, tmem.OutputRingType)
        _, index = b.unpack(op.stage)
        leader = op.leader if op.leader is not None else b.value(nvvm.ElectSyncOp())
        full = b.barrier(ring.pipeline.barriers, index)
        commit = nvvm.Tcgen05CommitOp(full, ring.mask, ring_type.cta_group.data)
        b.emit(scf.IfOp(leader, [], [commit, scf.YieldOp()]))
        ring.pipeline.producer = b.step(ring.pipeline.producer, ring_type.num_stages.data)
        return [ring.values()]


class ReleaseFromEpilogueLowering(TmemLowering):
    """`consumer_step` only."""

    OP = tmem.ReleaseFromEpilogueOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.ReleaseFromEpilogueOp, op)
        ring = b.ring(op.ring)
        ring.pipeline.consumer = b.step(ring.pipeline.consumer, _typed(op.ring, tmem.OutputRingType).num_stages.data)
        return [ring.values()]


def _leader_rank(b: Emitter) -> SSAValue:
    """The even rank of this CTA's pair: `cluster_ctarank & ~1`."""
    rank = b.value(nvvm.ClusterCtaRankOp())
    return b.value(arith.AndIOp(rank, b.const(-2)))


class ArriveEmptyLowering(TmemLowering):
    """`AccumBarrier.arrive`: every epilogue thread arrives on empty[index] — local for
    cta_group 1, on the leader CTA's barrier for cta_group 2."""

    OP = tmem.ArriveEmptyOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.ArriveEmptyOp, op)
        ring = b.ring(op.ring)
        ring_type = _typed(op.ring, tmem.OutputRingType)
        _, index = b.unpack(op.stage)
        empty = b.barrier(ring.pipeline.barriers, index, ring_type.num_stages.data)
        b.fence(nvvm.Tcgen05FenceKind.BEFORE)
        if ring_type.cta_group.data == 1:
            b.emit(nvvm.MBarrierArriveOp(empty))
        else:
            b.cluster_arrive(empty, _leader_rank(b))
        return []


# --------------------------------------------------------------------------------------
# warp_context: TmemDeallocBarrier, MmaWarpContext, EpilogueWarpContext
# --------------------------------------------------------------------------------------


class DeallocBarrierInitLowering(TmemLowering):
    OP = tmem.DeallocBarrierInitOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.DeallocBarrierInitOp, op)
        b.emit(nvvm.MBarrierInitOp(op.barrier, b.const(op.arrival_count.value.data)))
        return []


class DeallocBarrierCreateLowering(TmemLowering):
    OP = tmem.DeallocBarrierCreateOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        return [[cast(tmem.DeallocBarrierCreateOp, op).barrier]]


def _signal(b: Emitter, barrier: SSAValue, cta_group: int, peer: bool, self_: bool) -> None:
    """Arrivals on the dealloc barrier: the peer CTA's (cta_group 2) then our own."""
    b.fence(nvvm.Tcgen05FenceKind.BEFORE)
    if peer and cta_group == 2:
        rank = b.value(nvvm.ClusterCtaRankOp())
        b.cluster_arrive(barrier, b.value(arith.XOrIOp(rank, b.const(1))))
    if self_:
        b.emit(nvvm.MBarrierArriveOp(barrier))


class SignalPeerLowering(TmemLowering):
    OP = tmem.SignalPeerOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.SignalPeerOp, op)
        if _typed(op.dealloc_barrier, tmem.DeallocBarrierType).cta_group.data == 2:
            _signal(b, b.one(op.dealloc_barrier), 2, peer=True, self_=False)
        return []


class SignalSelfLowering(TmemLowering):
    OP = tmem.SignalSelfOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.SignalSelfOp, op)
        _signal(b, b.one(op.dealloc_barrier), 1, peer=False, self_=True)
        return []


class SignalCompleteLowering(TmemLowering):
    OP = tmem.SignalCompleteOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.SignalCompleteOp, op)
        _signal(
            b,
            b.one(op.dealloc_barrier),
            _typed(op.dealloc_barrier, tmem.DeallocBarrierType).cta_group.data,
            peer=True,
            self_=True,
        )
        return []


class DeallocBarrierWaitLowering(TmemLowering):
    """Single-use barrier: parity 0."""

    OP = tmem.DeallocBarrierWaitOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        b.wait(b.one(cast(tmem.DeallocBarrierWaitOp, op).dealloc_barrier), b.const(0))
        return []


def _complete_dealloc(b: Emitter, barrier: SSAValue, address: SSAValue, allocation: tmem.AllocationType) -> None:
    """relinquish → wait the dealloc barrier (parity 0) → dealloc."""
    b.emit(nvvm.Tcgen05RelinquishAllocPermitOp(allocation.cta_group.data))
    b.wait(barrier, b.const(0))
    _deallocate(b, address, allocation)


class CompleteDeallocLowering(TmemLowering):
    OP = tmem.CompleteDeallocOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.CompleteDeallocOp, op)
        _complete_dealloc(
            b, b.one(op.dealloc_barrier), b.one(op.allocation), _typed(op.allocation, tmem.AllocationType)
        )
        return []


class MmaCreateLowering(TmemLowering):
    """Allocate max_cols columns (whole warp); build the ring and dealloc barrier."""

    OP = tmem.MmaCreateOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.MmaCreateOp, op)
        address = _allocate(b, op.slot, _typed(op.context, tmem.WarpContextType).allocation_type())
        ring = _create_ring(b, op.accum_barriers, address, op.mask)
        return [WarpContext(address, ring, op.dealloc_barrier).values()]


class EpilogueCreateLowering(TmemLowering):
    """`barrier.sync 1, mma + epilogue threads`, then read the address from the slot."""

    OP = tmem.EpilogueCreateOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.EpilogueCreateOp, op)
        threads = b.const(_typed(op.context, tmem.WarpContextType).sync_threads)
        b.emit(nvvm.BarrierOp(b.const(1), threads))
        b.fence(nvvm.Tcgen05FenceKind.AFTER)
        address = b.value(llvm.LoadOp(op.slot, i32))
        ring = _create_ring(b, op.accum_barriers, address, op.mask)
        return [WarpContext(address, ring, op.dealloc_barrier).values()]


class MmaEnterLowering(TmemLowering):
    """`barrier.arrive 1, mma + epilogue threads`: the address is in shared memory."""

    OP = tmem.MmaEnterOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.MmaEnterOp, op)
        b.fence(nvvm.Tcgen05FenceKind.BEFORE)
        b.emit(nvvm.BarrierArriveOp(b.const(_typed(op.context, tmem.WarpContextType).sync_threads), b.const(1)))
        return []


class MmaExitLowering(TmemLowering):
    OP = tmem.MmaExitOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.MmaExitOp, op)
        ctx = b.context(op.context)
        _complete_dealloc(
            b, ctx.dealloc_barrier, ctx.allocation, _typed(op.context, tmem.WarpContextType).allocation_type()
        )
        return []


class EpilogueExitLowering(TmemLowering):
    OP = tmem.EpilogueExitOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        op = cast(tmem.EpilogueExitOp, op)
        ctx = b.context(op.context)
        _signal(b, ctx.dealloc_barrier, _typed(op.context, tmem.WarpContextType).config()[2], peer=True, self_=True)
        return []


class ContextOutputRingLowering(TmemLowering):
    OP = tmem.ContextOutputRingOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        return [b.context(cast(tmem.ContextOutputRingOp, op).context).ring.values()]


class ContextTmemLowering(TmemLowering):
    OP = tmem.ContextTmemOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        return [[b.context(cast(tmem.ContextTmemOp, op).context).allocation]]


class ContextDeallocBarrierLowering(TmemLowering):
    OP = tmem.ContextDeallocBarrierOp

    def lower(self, op: Operation, b: Emitter) -> Sequence[Lowered]:
        return [[b.context(cast(tmem.ContextDeallocBarrierOp, op).context).dealloc_barrier]]


# --------------------------------------------------------------------------------------
# Structural: scf ops forwarding tmem values
# --------------------------------------------------------------------------------------

FORWARDING_OPS: tuple[type[Operation], ...] = (scf.ForOp, scf.IfOp, scf.WhileOp, scf.YieldOp, scf.ConditionOp)
"""Ops that only pass values from operands to block arguments and results (they never
look inside a value), so a tmem value they carry may be replaced by its lowered values
in place: the 1:N type conversion of `scf` (upstream's `populateSCFStructuralTypeConversions`)."""


def _is_tmem(value: SSAValue) -> bool:
    return lowered_types(value.type) is not None


def _flatten(b: Emitter, values: Sequence[SSAValue]) -> list[SSAValue]:
    return [v for value in values for v in (b.unpack(value) if _is_tmem(value) else [value])]


def _flat_types(types: Sequence[Attribute]) -> list[Attribute]:
    return [flat for t in types for flat in (lowered_types(t) or (t,))]


def _expand_block_args(rewriter: PatternRewriter, block: Block) -> None:
    """Replace each tmem-typed block argument by its lowered values; the old argument is
    rebuilt from the new ones by a cast at the start of the block."""
    for arg in list(block.args):
        types = lowered_types(arg.type)
        if types is None:
            continue
        new_args = [rewriter.insert_block_argument(block, arg.index + 1 + k, t) for k, t in enumerate(types)]
        pack = _pack(new_args, arg.type)
        rewriter.insert(pack, InsertPoint.at_start(block))
        rewriter.replace_all_uses_with(arg, pack.results[0])
        rewriter.erase_block_argument(arg)


def _repack_results(rewriter: PatternRewriter, old: Operation, new: Operation) -> list[SSAValue]:
    results: list[SSAValue] = []
    index = 0
    for result in old.results:
        types = lowered_types(result.type)
        if types is None:
            results.append(new.results[index])
            index += 1
            continue
        pack = _pack(new.results[index : index + len(types)], result.type)
        rewriter.insert(pack, InsertPoint.after(new))
        results.append(pack.results[0])
        index += len(types)
    return results


def _carries_tmem(op: Operation) -> bool:
    block_args = (arg for region in op.regions for block in region.blocks for arg in block.args)
    return any(_is_tmem(v) for v in (*op.operands, *op.results, *block_args))


@dataclass
class ForwardingLowering(RewritePattern):
    """A forwarding op (`FORWARDING_OPS`) carrying tmem values as operands, results or
    block arguments is rebuilt with their lowered values in their place; everything else
    (properties, attributes, the regions' ops) is kept."""

    policy: FencePolicy = FencePolicy.STRICT

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, FORWARDING_OPS) or not _carries_tmem(op):
            return
        operands = _flatten(Emitter(rewriter, op, self.policy), list(op.operands))
        # Detach from the last: the IRDL region accessors index into `op.regions`.
        regions = [op.detach_region(i) for i in reversed(range(len(op.regions)))][::-1]
        for region in regions:
            for block in region.blocks:
                _expand_block_args(rewriter, block)
        new = type(op).create(
            operands=operands,
            result_types=_flat_types(op.result_types),
            properties=dict(op.properties),
            attributes=dict(op.attributes),
            successors=list(op.successors),
            regions=regions,
        )
        rewriter.insert(new, InsertPoint.before(op))
        rewriter.replace(op, [], _repack_results(rewriter, op, new))


# --------------------------------------------------------------------------------------
# Clean-up: fold casts, drop loop-carried values that never change or are never used
# --------------------------------------------------------------------------------------


class FoldCastPairs(RewritePattern):
    """`values → tmem → values` casts: use the original values; drop dead casts."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: UnrealizedConversionCastOp, rewriter: PatternRewriter, /) -> None:
        if not any(r.uses for r in op.results):
            rewriter.erase(op)
            return
        if len(op.inputs) != 1:
            return
        source = op.inputs[0].owner
        if isinstance(source, UnrealizedConversionCastOp) and source.inputs.types == op.outputs.types:
            rewriter.replace(op, [], list(source.inputs))


class ForDropRedundantIterArgs(RewritePattern):
    """Remove iter_args that are yielded unchanged or are dead (no use in the body and
    the result unused)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ForOp, rewriter: PatternRewriter, /) -> None:
        block = op.body.block
        terminator = block.last_op
        assert isinstance(terminator, scf.YieldOp)
        keep: list[int] = []
        for i, (arg, init, result) in enumerate(zip(block.args[1:], op.iter_args, op.results, strict=True)):
            yielded = terminator.arguments[i]
            invariant = yielded is arg
            dead = not arg.uses and not result.uses
            if invariant:
                rewriter.replace_all_uses_with(arg, init)
                rewriter.replace_all_uses_with(result, init)
            elif not dead:
                keep.append(i)
        if len(keep) == len(op.iter_args):
            return
        rewriter.replace(terminator, scf.YieldOp(*[terminator.arguments[i] for i in keep]))
        for i in reversed(range(len(op.iter_args))):
            if i not in keep:
                rewriter.erase_block_argument(block.args[i + 1])
        body = op.detach_region(op.body)
        new = scf.ForOp(op.lb, op.ub, op.step, [op.iter_args[i] for i in keep], body)
        rewriter.insert(new, InsertPoint.before(op))
        # A dropped result is either unused or, being invariant, equal to its init.
        results = [new.results[keep.index(i)] if i in keep else op.iter_args[i] for i in range(len(op.results))]
        rewriter.replace(op, [], results)


# --------------------------------------------------------------------------------------
# The pass
# --------------------------------------------------------------------------------------

OP_LOWERINGS: tuple[type[TmemLowering], ...] = (
    AllocLowering,
    FromSharedLowering,
    RelinquishLowering,
    DeallocLowering,
    BaseAddressLowering,
    StageCreateLowering,
    StageFromAllocLowering,
    StageFromOffsetLowering,
    StageOffsetLowering,
    StageIndexLowering,
    StageAddressLowering,
    StageTensorLowering,
    TensorOffsetLowering,
    TensorAddressLowering,
    StageLoadLowering,
    StageLoadLowerLowering,
    StageStoreLowering,
    StageStoreLowerLowering,
    WaitLoadLowering,
    WaitStoreLowering,
    InitBarriersLowering,
    RingInitBarriersLowering,
    PipelineCreateLowering,
    WaitProducerLowering,
    WaitConsumerLowering,
    ProducerStageLowering,
    ConsumerStageLowering,
    ProducerStepLowering,
    ConsumerStepLowering,
    ProducerMbarLowering,
    ConsumerMbarLowering,
    RingCreateLowering,
    AcquireForMmaLowering,
    AcquireForEpilogueLowering,
    ReleaseFromMmaLowering,
    ReleaseFromEpilogueLowering,
    ArriveEmptyLowering,
    DeallocBarrierInitLowering,
    DeallocBarrierCreateLowering,
    SignalPeerLowering,
    SignalSelfLowering,
    SignalCompleteLowering,
    DeallocBarrierWaitLowering,
    CompleteDeallocLowering,
    MmaCreateLowering,
    EpilogueCreateLowering,
    MmaEnterLowering,
    MmaExitLowering,
    EpilogueExitLowering,
    ContextOutputRingLowering,
    ContextTmemLowering,
    ContextDeallocBarrierLowering,
)


def _check_fully_lowered(module: ModuleOp) -> None:
    """Every tmem value must have been rewritten; casts between the two sides are the
    only ops still allowed to mention tmem types (they are folded next). Operands and
    results are checked first, so a value passed to a successor block is reported at
    the branch rather than at the function owning the block."""
    ops = [op for op in module.walk() if not isinstance(op, UnrealizedConversionCastOp)]
    for op in ops:
        _reject_tmem_values(op, (*op.operands, *op.results))
    for op in ops:
        _reject_tmem_values(op, [arg for region in op.regions for block in region.blocks for arg in block.args])


def _reject_tmem_values(op: Operation, values: Sequence[SSAValue]) -> None:
    for value in values:
        if _is_tmem(value):
            raise LocatedError(
                op,
                f"convert-tmem-to-nvvm: a {value.type} value flows through {op.name}, which cannot carry it "
                "(only tmem ops and scf.for, scf.if, scf.while with their scf.yield / scf.condition can)",
            )


def fence_policy(value: str) -> FencePolicy:
    """The `fence-policy` pass option; a bad value is refused when the pipeline is built."""
    try:
        return FencePolicy(value)
    except ValueError:
        raise ValueError(f"fence-policy must be strict or mojo, got '{value}'") from None


@dataclass(frozen=True)
class ConvertTmemToNvvmPass(ModulePass):
    """Lower explicit tmem ops to nvvm + llvm + arith + scf (see the module docstring)."""

    name = "convert-tmem-to-nvvm"

    fence_policy: str = FencePolicy.STRICT.value
    """`strict` (tcgen05 fences around thread syncs, as PTX asks) or `mojo` (none)."""

    def __post_init__(self) -> None:
        fence_policy(self.fence_policy)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        policy = fence_policy(self.fence_policy)
        for region_op in op.walk():
            if isinstance(region_op, tmem.TmemRegionOp):
                raise LocatedError(
                    region_op,
                    f"convert-tmem-to-nvvm: {region_op.name} must be expanded first (run tmem-expand-regions, "
                    "or the whole lower-tmem pipeline)",
                )
        patterns: list[RewritePattern] = [ForwardingLowering(policy)]
        patterns += [lowering(policy) for lowering in OP_LOWERINGS]
        PatternRewriteWalker(
            GreedyRewritePatternApplier(patterns, dce_enabled=False), apply_recursively=True
        ).rewrite_module(op)
        _check_fully_lowered(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([FoldCastPairs(), ForDropRedundantIterArgs()], dce_enabled=True)
        ).rewrite_module(op)
        for leftover in op.walk():
            if isinstance(leftover, UnrealizedConversionCastOp):
                raise LocatedError(leftover, "convert-tmem-to-nvvm: internal error: a conversion cast was left behind")
