"""`convert-tmem-to-nvvm`: every explicit tmem op → nvvm + llvm + arith + scf.

The protocol reproduced is Mojo's (docs/semantics.md §1-7); the target ops and their PTX
are in docs/ptx-nvvm.md §2-3.

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
instead clears bit 24 of the shared address (`umma_arrive_leader_cta`, docs/semantics.md
§1.2), which relies on an undocumented encoding of shared::cluster addresses for
clusters of two; `mapa` is the documented PTX way, works for any cluster size, and
costs the same one instruction.

**Fences** (`fence-policy`). `strict` (default) inserts `tcgen05.fence::before_thread_sync`
before a thread sync that publishes tcgen05 work and `::after_thread_sync` after the
matching wait, as the PTX memory model asks (docs/ptx-nvvm.md §1.5): after the empty/full
waits, before the epilogue's empty arrive, around the allocation's warp sync, before the
MMA warp's `barrier.arrive` and after the epilogue's `barrier.sync`, before the dealloc
arrivals and after the dealloc wait. `mojo` reproduces Mojo's emission, which has none
(docs/semantics.md §9.1).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

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
from xdsl_tmem.dialects.utils import SHARED_PTR, TMEM_PTR, constant_int
from xdsl_tmem.fence_policy import FencePolicy, fence_policy
from xdsl_tmem.passes.op_pattern import OpRewritePattern, OpT, OpTypeApplier

_T = TypeVar("_T", bound=Attribute)


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
        if (value := constant_int(index)) is not None:
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
        """`stage += 1; if stage == n: stage = 0; phase ^= 1` (docs/semantics.md §2)."""
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
    """`value.type` as the tmem type the verifier guarantees (xDSL 0.74 types operands
    only as `SSAValue[Attribute]`; checked, not cast)."""
    assert isinstance(value.type, cls)
    return value.type


def _pack(values: Sequence[SSAValue], type: Attribute) -> UnrealizedConversionCastOp:
    return UnrealizedConversionCastOp(operands=[list(values)], result_types=[[type]])


Lowered = SSAValue | Sequence[SSAValue]


class TmemLowering(OpRewritePattern[OpT], Generic[OpT]):
    """Lowers one tmem op class, its type argument: `AllocLowering(TmemLowering[tmem.AllocOp])`.
    `lower` returns, per result of the op, its value or (for a tmem-typed result) its
    lowered values."""

    def __init__(self, policy: FencePolicy = FencePolicy.STRICT):
        super().__init__()
        self.policy = policy

    def rewrite(self, op: OpT, rewriter: PatternRewriter, /) -> None:
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
    def lower(self, op: OpT, b: Emitter) -> Sequence[Lowered]: ...


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


class AllocLowering(TmemLowering[tmem.AllocOp]):
    def lower(self, op: tmem.AllocOp, b: Emitter) -> Sequence[Lowered]:
        return [[_allocate(b, op.slot, op.allocation.type)]]


class FromSharedLowering(TmemLowering[tmem.FromSharedOp]):
    def lower(self, op: tmem.FromSharedOp, b: Emitter) -> Sequence[Lowered]:
        return [[b.value(llvm.LoadOp(op.slot, i32))]]


class RelinquishLowering(TmemLowering[tmem.RelinquishOp]):
    def lower(self, op: tmem.RelinquishOp, b: Emitter) -> Sequence[Lowered]:
        b.emit(nvvm.Tcgen05RelinquishAllocPermitOp(_typed(op.allocation, tmem.AllocationType).cta_group.data))
        return []


def _deallocate(b: Emitter, address: SSAValue, allocation: tmem.AllocationType) -> None:
    columns = b.const(allocation.max_cols.data)
    b.emit(nvvm.Tcgen05DeallocOp(b.tmem_pointer(address), columns, allocation.cta_group.data))


class DeallocLowering(TmemLowering[tmem.DeallocOp]):
    def lower(self, op: tmem.DeallocOp, b: Emitter) -> Sequence[Lowered]:
        _deallocate(b, b.one(op.allocation), _typed(op.allocation, tmem.AllocationType))
        return []


class BaseAddressLowering(TmemLowering[tmem.BaseAddressOp]):
    def lower(self, op: tmem.BaseAddressOp, b: Emitter) -> Sequence[Lowered]:
        return [b.one(op.allocation)]


# --------------------------------------------------------------------------------------
# tmem_stage
# --------------------------------------------------------------------------------------


def _stage_offset(b: Emitter, stage: SSAValue) -> SSAValue:
    """`base + index * stride`."""
    base, index = b.unpack(stage)
    stride = _typed(stage, tmem.TmemStageType).stride.data
    if (value := constant_int(index)) is not None:
        return b.add_const(base, value * stride)
    return b.add(base, b.mul_const(index, stride))


class StageCreateLowering(TmemLowering[tmem.StageCreateOp]):
    def lower(self, op: tmem.StageCreateOp, b: Emitter) -> Sequence[Lowered]:
        return [[op.base, op.index]]


class StageFromAllocLowering(TmemLowering[tmem.StageFromAllocOp]):
    def lower(self, op: tmem.StageFromAllocOp, b: Emitter) -> Sequence[Lowered]:
        return [[b.one(op.allocation), op.index]]


class StageFromOffsetLowering(TmemLowering[tmem.StageFromOffsetOp]):
    def lower(self, op: tmem.StageFromOffsetOp, b: Emitter) -> Sequence[Lowered]:
        scaled = b.mul_const(op.index, op.stage.type.stride.data)
        return [[b.value(arith.SubiOp(op.offset, scaled)), op.index]]


class StageOffsetLowering(TmemLowering[tmem.StageOffsetOp]):
    def lower(self, op: tmem.StageOffsetOp, b: Emitter) -> Sequence[Lowered]:
        return [_stage_offset(b, op.stage)]


class StageIndexLowering(TmemLowering[tmem.StageIndexOp]):
    def lower(self, op: tmem.StageIndexOp, b: Emitter) -> Sequence[Lowered]:
        return [b.unpack(op.stage)[1]]


class StageAddressLowering(TmemLowering[tmem.StageAddressOp]):
    def lower(self, op: tmem.StageAddressOp, b: Emitter) -> Sequence[Lowered]:
        return [b.tmem_pointer(_stage_offset(b, op.stage))]


class StageTensorLowering(TmemLowering[tmem.StageTensorOp]):
    def lower(self, op: tmem.StageTensorOp, b: Emitter) -> Sequence[Lowered]:
        return [[_stage_offset(b, op.stage)]]


class TensorOffsetLowering(TmemLowering[tmem.TensorOffsetOp]):
    def lower(self, op: tmem.TensorOffsetOp, b: Emitter) -> Sequence[Lowered]:
        return [b.one(op.tensor)]


class TensorAddressLowering(TmemLowering[tmem.TensorAddressOp]):
    def lower(self, op: tmem.TensorAddressOp, b: Emitter) -> Sequence[Lowered]:
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


_LoadT = TypeVar("_LoadT", bound=tmem.LoadUpperOp | tmem.LoadLowerOp)
_StoreT = TypeVar("_StoreT", bound=tmem.StoreUpperOp | tmem.StoreLowerOp)


class _LoadLowering(TmemLowering[_LoadT], Generic[_LoadT]):
    """`tcgen05.ld.sync.aligned.16x256b.x{repeat}.b32` (upstream returns i32 registers;
    an f32 view is a bitcast)."""

    def lower(self, op: _LoadT, b: Emitter) -> Sequence[Lowered]:
        registers = _i32_vector(op.result.type)
        loaded = b.value(nvvm.Tcgen05LdOp(_access_address(b, op), nvvm.Tcgen05LdStShape.SHAPE_16X256B, registers))
        if op.result.type != registers:
            loaded = b.value(llvm.BitcastOp(loaded, op.result.type))
        return [loaded]


class LoadUpperLowering(_LoadLowering[tmem.LoadUpperOp]):
    pass


class LoadLowerLowering(_LoadLowering[tmem.LoadLowerOp]):
    pass


class _StoreLowering(TmemLowering[_StoreT], Generic[_StoreT]):
    """`tcgen05.st.sync.aligned.16x256b.x{repeat}.b32`."""

    def lower(self, op: _StoreT, b: Emitter) -> Sequence[Lowered]:
        registers = _i32_vector(op.values.type)
        values = op.values
        if values.type != registers:
            values = b.value(llvm.BitcastOp(values, registers))
        b.emit(nvvm.Tcgen05StOp(_access_address(b, op), values, nvvm.Tcgen05LdStShape.SHAPE_16X256B))
        return []


class StoreUpperLowering(_StoreLowering[tmem.StoreUpperOp]):
    pass


class StoreLowerLowering(_StoreLowering[tmem.StoreLowerOp]):
    pass


class WaitLoadLowering(TmemLowering[tmem.WaitLoadOp]):
    def lower(self, op: tmem.WaitLoadOp, b: Emitter) -> Sequence[Lowered]:
        b.emit(nvvm.Tcgen05WaitOp(nvvm.Tcgen05WaitKind.LOAD))
        return []


class WaitStoreLowering(TmemLowering[tmem.WaitStoreOp]):
    def lower(self, op: tmem.WaitStoreOp, b: Emitter) -> Sequence[Lowered]:
        b.emit(nvvm.Tcgen05WaitOp(nvvm.Tcgen05WaitKind.STORE))
        return []


# --------------------------------------------------------------------------------------
# pipeline and output_ring
# --------------------------------------------------------------------------------------


def _initial_state(b: Emitter) -> list[SSAValue]:
    """Producer (stage 0, phase 1) so its first wait passes; consumer (0, 0)."""
    zero = b.const(0)
    return [zero, b.const(1), zero, zero]


_InitBarriersT = TypeVar("_InitBarriersT", bound=tmem.PipelineInitBarriersOp | tmem.RingInitBarriersOp)


class _InitBarriersLowering(TmemLowering[_InitBarriersT], Generic[_InitBarriersT]):
    """`init_mbars`: `mbarrier.init` full[i] with the producer count, empty[i] with the
    consumer count (unrolled over the n stages)."""

    def lower(self, op: _InitBarriersT, b: Emitter) -> Sequence[Lowered]:
        num_stages = op.ring_type.num_stages.data
        producer = b.const(op.producer_arv_count.value.data)
        consumer = b.const(op.consumer_arv_count.value.data)
        for i in range(num_stages):
            b.emit(nvvm.MBarrierInitOp(b.barrier_at(op.storage, i), producer))
        for i in range(num_stages):
            b.emit(nvvm.MBarrierInitOp(b.barrier_at(op.storage, num_stages + i), consumer))
        return []


class PipelineInitBarriersLowering(_InitBarriersLowering[tmem.PipelineInitBarriersOp]):
    pass


class RingInitBarriersLowering(_InitBarriersLowering[tmem.RingInitBarriersOp]):
    pass


class PipelineCreateLowering(TmemLowering[tmem.PipelineCreateOp]):
    def lower(self, op: tmem.PipelineCreateOp, b: Emitter) -> Sequence[Lowered]:
        return [[op.storage, *_initial_state(b)]]


class WaitProducerLowering(TmemLowering[tmem.WaitProducerOp]):
    """Consumer side: wait full[consumer stage] with the consumer phase."""

    def lower(self, op: tmem.WaitProducerOp, b: Emitter) -> Sequence[Lowered]:
        p = b.pipeline(op.pipeline)
        b.emit(nvvm.MBarrierTryWaitParityOp(b.barrier(p.barriers, p.consumer.stage), p.consumer.phase, b.const(0)))
        return []


class WaitConsumerLowering(TmemLowering[tmem.WaitConsumerOp]):
    """Producer side: wait empty[producer stage] with the producer phase."""

    def lower(self, op: tmem.WaitConsumerOp, b: Emitter) -> Sequence[Lowered]:
        p = b.pipeline(op.pipeline)
        n = _typed(op.pipeline, tmem.PipelineType).num_stages.data
        b.emit(nvvm.MBarrierTryWaitParityOp(b.barrier(p.barriers, p.producer.stage, n), p.producer.phase, b.const(0)))
        return []


class ProducerStageLowering(TmemLowering[tmem.ProducerStageOp]):
    def lower(self, op: tmem.ProducerStageOp, b: Emitter) -> Sequence[Lowered]:
        return [b.pipeline(op.pipeline).producer.stage]


class ConsumerStageLowering(TmemLowering[tmem.ConsumerStageOp]):
    def lower(self, op: tmem.ConsumerStageOp, b: Emitter) -> Sequence[Lowered]:
        return [b.pipeline(op.pipeline).consumer.stage]


class ProducerStepLowering(TmemLowering[tmem.ProducerStepOp]):
    def lower(self, op: tmem.ProducerStepOp, b: Emitter) -> Sequence[Lowered]:
        p = b.pipeline(op.pipeline)
        p.producer = b.step(p.producer, _typed(op.pipeline, tmem.PipelineType).num_stages.data)
        return [[p.barriers, *p.state()]]


class ConsumerStepLowering(TmemLowering[tmem.ConsumerStepOp]):
    def lower(self, op: tmem.ConsumerStepOp, b: Emitter) -> Sequence[Lowered]:
        p = b.pipeline(op.pipeline)
        p.consumer = b.step(p.consumer, _typed(op.pipeline, tmem.PipelineType).num_stages.data)
        return [[p.barriers, *p.state()]]


class ProducerMbarLowering(TmemLowering[tmem.ProducerMbarOp]):
    def lower(self, op: tmem.ProducerMbarOp, b: Emitter) -> Sequence[Lowered]:
        return [b.barrier(b.pipeline(op.pipeline).barriers, op.index)]


class ConsumerMbarLowering(TmemLowering[tmem.ConsumerMbarOp]):
    def lower(self, op: tmem.ConsumerMbarOp, b: Emitter) -> Sequence[Lowered]:
        n = _typed(op.pipeline, tmem.PipelineType).num_stages.data
        return [b.barrier(b.pipeline(op.pipeline).barriers, op.index, n)]


def _create_ring(b: Emitter, barriers: SSAValue, base: SSAValue, mask: SSAValue | None) -> Ring:
    return Ring(Pipeline.from_values(barriers, _initial_state(b)), base, mask)


class RingCreateLowering(TmemLowering[tmem.RingCreateOp]):
    def lower(self, op: tmem.RingCreateOp, b: Emitter) -> Sequence[Lowered]:
        return [_create_ring(b, op.storage, b.one(op.allocation), op.mask).values()]


def _acquire(b: Emitter, ring_value: SSAValue, producer: bool) -> list[SSAValue]:
    ring = b.ring(ring_value)
    n = _typed(ring_value, tmem.OutputRingType).num_stages.data
    side = ring.pipeline.producer if producer else ring.pipeline.consumer
    # The producer waits on empty[stage] (index n + stage), the consumer on full[stage].
    b.wait(b.barrier(ring.pipeline.barriers, side.stage, n if producer else 0), side.phase)
    return [ring.base, side.stage]


class AcquireForMmaLowering(TmemLowering[tmem.AcquireForMmaOp]):
    def lower(self, op: tmem.AcquireForMmaOp, b: Emitter) -> Sequence[Lowered]:
        return [_acquire(b, op.ring, producer=True)]


class AcquireForEpilogueLowering(TmemLowering[tmem.AcquireForEpilogueOp]):
    def lower(self, op: tmem.AcquireForEpilogueOp, b: Emitter) -> Sequence[Lowered]:
        return [_acquire(b, op.ring, producer=False)]


class ReleaseFromMmaLowering(TmemLowering[tmem.ReleaseFromMmaOp]):
    """One lane commits on full[stage.index] (multicast for cta_group 2); every lane
    steps the producer state."""

    def lower(self, op: tmem.ReleaseFromMmaOp, b: Emitter) -> Sequence[Lowered]:
        ring = b.ring(op.ring)
        ring_type = _typed(op.ring, tmem.OutputRingType)
        _, index = b.unpack(op.stage)
        leader = op.leader if op.leader is not None else b.value(nvvm.ElectSyncOp())
        full = b.barrier(ring.pipeline.barriers, index)
        commit = nvvm.Tcgen05CommitOp(full, ring.mask, ring_type.cta_group.data)
        b.emit(scf.IfOp(leader, [], [commit, scf.YieldOp()]))
        ring.pipeline.producer = b.step(ring.pipeline.producer, ring_type.num_stages.data)
        return [ring.values()]


class ReleaseFromEpilogueLowering(TmemLowering[tmem.ReleaseFromEpilogueOp]):
    """`consumer_step` only."""

    def lower(self, op: tmem.ReleaseFromEpilogueOp, b: Emitter) -> Sequence[Lowered]:
        ring = b.ring(op.ring)
        ring.pipeline.consumer = b.step(ring.pipeline.consumer, _typed(op.ring, tmem.OutputRingType).num_stages.data)
        return [ring.values()]


def _leader_rank(b: Emitter) -> SSAValue:
    """The even rank of this CTA's pair: `cluster_ctarank & ~1`."""
    rank = b.value(nvvm.ClusterCtaRankOp())
    return b.value(arith.AndIOp(rank, b.const(-2)))


class ArriveEmptyLowering(TmemLowering[tmem.ArriveEmptyOp]):
    """`AccumBarrier.arrive`: every epilogue thread arrives on empty[index] — local for
    cta_group 1, on the leader CTA's barrier for cta_group 2."""

    def lower(self, op: tmem.ArriveEmptyOp, b: Emitter) -> Sequence[Lowered]:
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


class DeallocBarrierInitLowering(TmemLowering[tmem.DeallocBarrierInitOp]):
    def lower(self, op: tmem.DeallocBarrierInitOp, b: Emitter) -> Sequence[Lowered]:
        b.emit(nvvm.MBarrierInitOp(op.barrier, b.const(op.arrival_count.value.data)))
        return []


class DeallocBarrierCreateLowering(TmemLowering[tmem.DeallocBarrierCreateOp]):
    def lower(self, op: tmem.DeallocBarrierCreateOp, b: Emitter) -> Sequence[Lowered]:
        return [[op.barrier]]


def _signal(b: Emitter, barrier: SSAValue, cta_group: int, peer: bool, self_: bool) -> None:
    """Arrivals on the dealloc barrier: the peer CTA's (cta_group 2) then our own."""
    b.fence(nvvm.Tcgen05FenceKind.BEFORE)
    if peer and cta_group == 2:
        rank = b.value(nvvm.ClusterCtaRankOp())
        b.cluster_arrive(barrier, b.value(arith.XOrIOp(rank, b.const(1))))
    if self_:
        b.emit(nvvm.MBarrierArriveOp(barrier))


class SignalPeerLowering(TmemLowering[tmem.SignalPeerOp]):
    def lower(self, op: tmem.SignalPeerOp, b: Emitter) -> Sequence[Lowered]:
        if _typed(op.dealloc_barrier, tmem.DeallocBarrierType).cta_group.data == 2:
            _signal(b, b.one(op.dealloc_barrier), 2, peer=True, self_=False)
        return []


class SignalSelfLowering(TmemLowering[tmem.SignalSelfOp]):
    def lower(self, op: tmem.SignalSelfOp, b: Emitter) -> Sequence[Lowered]:
        _signal(b, b.one(op.dealloc_barrier), 1, peer=False, self_=True)
        return []


class SignalCompleteLowering(TmemLowering[tmem.SignalCompleteOp]):
    def lower(self, op: tmem.SignalCompleteOp, b: Emitter) -> Sequence[Lowered]:
        _signal(
            b,
            b.one(op.dealloc_barrier),
            _typed(op.dealloc_barrier, tmem.DeallocBarrierType).cta_group.data,
            peer=True,
            self_=True,
        )
        return []


class DeallocBarrierWaitLowering(TmemLowering[tmem.DeallocBarrierWaitOp]):
    """Single-use barrier: parity 0."""

    def lower(self, op: tmem.DeallocBarrierWaitOp, b: Emitter) -> Sequence[Lowered]:
        b.wait(b.one(op.dealloc_barrier), b.const(0))
        return []


def _complete_dealloc(b: Emitter, barrier: SSAValue, address: SSAValue, allocation: tmem.AllocationType) -> None:
    """relinquish → wait the dealloc barrier (parity 0) → dealloc."""
    b.emit(nvvm.Tcgen05RelinquishAllocPermitOp(allocation.cta_group.data))
    b.wait(barrier, b.const(0))
    _deallocate(b, address, allocation)


class CompleteDeallocLowering(TmemLowering[tmem.CompleteDeallocOp]):
    def lower(self, op: tmem.CompleteDeallocOp, b: Emitter) -> Sequence[Lowered]:
        _complete_dealloc(
            b, b.one(op.dealloc_barrier), b.one(op.allocation), _typed(op.allocation, tmem.AllocationType)
        )
        return []


class MmaCreateLowering(TmemLowering[tmem.MmaCreateOp]):
    """Allocate max_cols columns (whole warp); build the ring and dealloc barrier."""

    def lower(self, op: tmem.MmaCreateOp, b: Emitter) -> Sequence[Lowered]:
        address = _allocate(b, op.slot, _typed(op.context, tmem.WarpContextType).allocation_type())
        ring = _create_ring(b, op.accum_barriers, address, op.mask)
        return [WarpContext(address, ring, op.dealloc_barrier).values()]


class EpilogueCreateLowering(TmemLowering[tmem.EpilogueCreateOp]):
    """`barrier.sync 1, mma + epilogue threads`, then read the address from the slot."""

    def lower(self, op: tmem.EpilogueCreateOp, b: Emitter) -> Sequence[Lowered]:
        threads = b.const(_typed(op.context, tmem.WarpContextType).sync_threads)
        b.emit(nvvm.BarrierOp(b.const(1), threads))
        b.fence(nvvm.Tcgen05FenceKind.AFTER)
        address = b.value(llvm.LoadOp(op.slot, i32))
        ring = _create_ring(b, op.accum_barriers, address, op.mask)
        return [WarpContext(address, ring, op.dealloc_barrier).values()]


class MmaEnterLowering(TmemLowering[tmem.MmaEnterOp]):
    """`barrier.arrive 1, mma + epilogue threads`: the address is in shared memory."""

    def lower(self, op: tmem.MmaEnterOp, b: Emitter) -> Sequence[Lowered]:
        b.fence(nvvm.Tcgen05FenceKind.BEFORE)
        b.emit(nvvm.BarrierArriveOp(b.const(_typed(op.context, tmem.WarpContextType).sync_threads), b.const(1)))
        return []


class MmaExitLowering(TmemLowering[tmem.MmaExitOp]):
    def lower(self, op: tmem.MmaExitOp, b: Emitter) -> Sequence[Lowered]:
        ctx = b.context(op.context)
        _complete_dealloc(
            b, ctx.dealloc_barrier, ctx.allocation, _typed(op.context, tmem.WarpContextType).allocation_type()
        )
        return []


class EpilogueExitLowering(TmemLowering[tmem.EpilogueExitOp]):
    def lower(self, op: tmem.EpilogueExitOp, b: Emitter) -> Sequence[Lowered]:
        ctx = b.context(op.context)
        _signal(b, ctx.dealloc_barrier, _typed(op.context, tmem.WarpContextType).config()[2], peer=True, self_=True)
        return []


class ContextOutputRingLowering(TmemLowering[tmem.ContextOutputRingOp]):
    def lower(self, op: tmem.ContextOutputRingOp, b: Emitter) -> Sequence[Lowered]:
        return [b.context(op.context).ring.values()]


class ContextTmemLowering(TmemLowering[tmem.ContextTmemOp]):
    def lower(self, op: tmem.ContextTmemOp, b: Emitter) -> Sequence[Lowered]:
        return [[b.context(op.context).allocation]]


class ContextDeallocBarrierLowering(TmemLowering[tmem.ContextDeallocBarrierOp]):
    def lower(self, op: tmem.ContextDeallocBarrierOp, b: Emitter) -> Sequence[Lowered]:
        return [[b.context(op.context).dealloc_barrier]]


# --------------------------------------------------------------------------------------
# Structural: scf ops forwarding tmem values
# --------------------------------------------------------------------------------------

FORWARDING_OPS: tuple[type[Operation], ...] = (scf.ForOp, scf.IfOp, scf.WhileOp, scf.YieldOp, scf.ConditionOp)
"""Ops that only pass values from operands to block arguments and results (they never
look inside a value), so a tmem value they carry may be replaced by its lowered values
in place: the 1:N type conversion of `scf`.

This tuple is the definition, not a copy of one: xDSL 0.74's scf ops declare no trait
that says "forwards values without reading them" (upstream's RegionBranchOpInterface),
and upstream's own conversion lists the same five ops by name
(`mlir/lib/Dialect/SCF/Transforms/StructuralTypeConversions.cpp`). It cannot go stale
silently: a tmem value through any other op is a located error (`_reject_tmem_values`),
and `tests/test_lowering.py` fails when xDSL's scf dialect gains an op nobody has
decided on."""


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

OP_LOWERINGS: tuple[type[TmemLowering[Any]], ...] = (
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
    LoadUpperLowering,
    LoadLowerLowering,
    StoreUpperLowering,
    StoreLowerLowering,
    WaitLoadLowering,
    WaitStoreLowering,
    PipelineInitBarriersLowering,
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
    """Fail closed: a tmem op left over has no pattern in `OP_LOWERINGS` (reported as
    such, even when it carries no tmem value). Then every tmem value must have been
    rewritten; casts between the two sides are the only ops still allowed to mention
    tmem types (they are folded next). Operands and results are checked first, so a
    value passed to a successor block is reported at the branch rather than at the
    function owning the block."""
    ops = [op for op in module.walk() if not isinstance(op, UnrealizedConversionCastOp)]
    tmem_ops = set(tmem.Tmem.operations)
    for op in ops:
        if type(op) in tmem_ops:
            raise LocatedError(op, f"convert-tmem-to-nvvm: {op.name} has no lowering pattern (none in OP_LOWERINGS)")
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
                f"(only tmem ops and {', '.join(o.name for o in FORWARDING_OPS)} can)",
            )


@dataclass(frozen=True)
class ConvertTmemToNvvmPass(ModulePass):
    """Lower the explicit tmem ops (after `tmem-expand-regions`) to nvvm + llvm + arith + scf."""

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
        PatternRewriteWalker(OpTypeApplier(patterns), apply_recursively=True).rewrite_module(op)
        _check_fully_lowered(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([FoldCastPairs(), ForDropRedundantIterArgs()], dce_enabled=True)
        ).rewrite_module(op)
        for leftover in op.walk():
            if isinstance(leftover, UnrealizedConversionCastOp):
                raise LocatedError(leftover, "convert-tmem-to-nvvm: internal error: a conversion cast was left behind")
