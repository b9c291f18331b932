"""The `tmem` dialect, run directly (no lowering).

Each op performs the machine actions its lowering in `passes/convert_tmem_to_nvvm.py`
emits NVVM for (the same functions `interpreter/nvvm.py` uses), so a program run at
the tmem level and after `lower-tmem` does the same barrier traffic; translation
validation compares the two. tmem values are the Python objects below, field for
field the values the lowering expands them to; they must be warp-uniform.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple, cast

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from xdsl_tmem.dialects import nvvm, tmem
from xdsl_tmem.interpreter import nvvm as N
from xdsl_tmem.interpreter import races
from xdsl_tmem.interpreter.executor import (
    LOCAL,
    OTHER,
    Perform,
    RunBlock,
    Step,
    StructuredGen,
    Warp,
    WarpFunctions,
    as_warp,
    impl_structured,
)
from xdsl_tmem.interpreter.machine import OFFSET_MASK, RANK_SHIFT, Hazard, StageHold
from xdsl_tmem.interpreter.tcgen05 import LdStPlan, ldst_plan
from xdsl_tmem.interpreter.values import WARP, Value

MBAR_BYTES = 8


@dataclass(frozen=True)
class Side:
    stage: int
    phase: int

    def step(self, num_stages: int) -> Side:
        """`stage += 1; if stage == n: stage = 0; phase ^= 1` (docs/semantics.md §2)."""
        stage = self.stage + 1
        return Side(0, self.phase ^ 1) if stage == num_stages else Side(stage, self.phase)


@dataclass(frozen=True)
class Pipeline:
    """`ProducerConsumerPipeline`: full[0..n) then empty[0..n) at `barriers`."""

    barriers: int
    num_stages: int
    producer: Side = Side(0, 1)
    consumer: Side = Side(0, 0)

    def full(self, index: int) -> int:
        return self.barriers + MBAR_BYTES * index

    def empty(self, index: int) -> int:
        return self.barriers + MBAR_BYTES * (self.num_stages + index)


@dataclass(frozen=True)
class Ring:
    """`OutputTilePipeline`: a pipeline, the TMEM base and (cta_group 2) the multicast mask."""

    pipeline: Pipeline
    base: int
    mask: int | None
    stride: int
    cta_group: int


@dataclass(frozen=True)
class Stage:
    """`TmemStage`: its column address is base + index · stride."""

    base: int
    index: int
    stride: int

    @property
    def offset(self) -> int:
        return (self.base + self.index * self.stride) & 0xFFFFFFFF


@dataclass(frozen=True)
class Context:
    """A warp context: allocation address, output ring, dealloc barrier."""

    allocation: int
    ring: Ring
    dealloc_barrier: int


def _uniform(warp: Warp, value: Value, what: str) -> int:
    return N.warp_uniform(warp, value, what)


def _new_ring(ring_type: tmem.OutputRingType, barriers: int, base: int, mask: int | None) -> Ring:
    num_stages, stride, cta_group = ring_type.config()
    return Ring(Pipeline(barriers, num_stages), base, mask, stride, cta_group)


# --------------------------------------------------------------------------------------
# Actions shared by several ops (each mirrors one lowering helper)
# --------------------------------------------------------------------------------------


def allocate(warp: Warp, op: Operation, slot: int, allocation: tmem.AllocationType) -> int:
    """`tcgen05.alloc` by the whole warp, `bar.warp.sync` (between the fences of the strict
    lowering), read the slot back."""
    N.tmem_alloc(warp, op, slot, allocation.max_cols.data, allocation.cta_group.data)
    warp.clock.fence_before()
    warp.clock.fence_after()
    return read_slot(warp, slot, op)


def read_slot(warp: Warp, slot: int, op: Operation | None = None) -> int:
    value = int(warp.cluster.read(slot, 4).view(np.uint32)[0])
    races.access(warp, op, slot, 4, write=False)
    return value


def wait(warp: Warp, barrier: int, parity: int, fence: bool = True) -> None:
    """The blocking parity wait; then `tcgen05.fence::after_thread_sync` as the strict
    lowering emits it (a no-op under the mojo policy). The plain pipeline waits have no fence."""
    N.mbarrier_wait_parity(warp, barrier, parity)
    if fence:
        warp.clock.fence_after()


def cluster_arrive(warp: Warp, barrier: int, rank: int) -> None:
    """Arrive on the barrier at the same offset in CTA `rank` (mapa + cluster arrive)."""
    N.mbarrier_arrive(warp, (barrier & OFFSET_MASK) | (rank << RANK_SHIFT))


def _signal_targets(warp: Warp, barrier: int, cta_group: int, peer: bool, self_: bool) -> tuple[int, ...]:
    """The barriers `signal` arrives on: the peer CTA's (cta_group 2), then our own."""
    peers = ((barrier & OFFSET_MASK) | ((warp.cta.rank ^ 1) << RANK_SHIFT),) if peer and cta_group == 2 else ()
    return peers + ((barrier,) if self_ else ())


def signal(warp: Warp, barrier: int, cta_group: int, peer: bool, self_: bool) -> None:
    """Arrivals on the dealloc barrier: the peer CTA's (cta_group 2), then our own."""
    warp.clock.fence_before()
    for target in _signal_targets(warp, barrier, cta_group, peer, self_):
        N.mbarrier_arrive(warp, target)


def signal_effect(warp: Warp, barrier: int, cta_group: int, peer: bool, self_: bool) -> Step:
    return Step("arrive", _signal_targets(warp, barrier, cta_group, peer, self_), len(warp.active_lanes()))


def complete_dealloc(warp: Warp, barrier: int, address: int, allocation: tmem.AllocationType) -> None:
    """relinquish → wait the dealloc barrier (parity 0) → dealloc. Relinquishing again
    when the wait is retried is harmless."""
    N.tmem_relinquish(warp, allocation.cta_group.data)
    wait(warp, barrier, 0)
    N.tmem_dealloc(warp, address, allocation.max_cols.data, allocation.cta_group.data)


def mma_create(warp: Warp, op: tmem.MmaCreateOp | tmem.MmaContextOp, args: PythonValues) -> Context:
    """Allocate the context's TMEM (the address is published by `enter_mma`)."""
    slot, barriers, dealloc_barrier, *mask = args
    context_type = cast(tmem.WarpContextType, op.context.type if isinstance(op, tmem.MmaCreateOp) else op.context_type)
    slot = _uniform(warp, slot, f"{op.name} slot")
    address = allocate(warp, op, slot, context_type.allocation_type())
    ring = _new_ring(
        context_type.ring_type(), _uniform(warp, barriers, f"{op.name} barriers"), address, _mask(warp, mask)
    )
    return Context(address, ring, _uniform(warp, dealloc_barrier, f"{op.name} dealloc barrier"))


def epilogue_create(warp: Warp, op: tmem.EpilogueCreateOp | tmem.EpilogueContextOp, args: PythonValues) -> Context:
    """`barrier.sync 1, mma + epilogue threads`, then read the address from the slot."""
    slot, barriers, dealloc_barrier, *mask = args
    context_type = cast(
        tmem.WarpContextType, op.context.type if isinstance(op, tmem.EpilogueCreateOp) else op.context_type
    )
    N.bar_sync(warp, 1, context_type.sync_threads)
    warp.clock.fence_after()
    address = read_slot(warp, _uniform(warp, slot, f"{op.name} slot"), op)
    ring = _new_ring(
        context_type.ring_type(), _uniform(warp, barriers, f"{op.name} barriers"), address, _mask(warp, mask)
    )
    return Context(address, ring, _uniform(warp, dealloc_barrier, f"{op.name} dealloc barrier"))


def enter_mma(warp: Warp, sync_threads: int) -> None:
    """`MmaWarpContext.__enter__`: publish the TMEM address with `barrier.arrive 1, threads`."""
    warp.clock.fence_before()
    N.bar_sync(warp, 1, sync_threads, arrive_only=True)


def _ring_wait(ring: Ring, producer: bool) -> tuple[int, int]:
    """The barrier and parity `acquire` waits on: empty[stage] (producer) or full[stage]."""
    p = ring.pipeline
    side = p.producer if producer else p.consumer
    return (p.empty(side.stage) if producer else p.full(side.stage)), side.phase


def acquire_effect(warp: Warp, ring: Ring, producer: bool, op: Operation | None = None) -> Step:
    barrier, parity = _ring_wait(ring, producer)
    return Step("wait", (barrier,), parity=parity)


def acquire(warp: Warp, ring: Ring, producer: bool, op: Operation | None = None) -> Stage:
    """The producer waits empty[stage] with its phase, the consumer full[stage]. The
    producer then holds the stage instance until it commits it (`release_from_mma`)."""
    p = ring.pipeline
    side = p.producer if producer else p.consumer
    wait(warp, *_ring_wait(ring, producer))
    _stage_event(warp, ring, side.stage, "producer" if producer else "consumer")
    stage = Stage(ring.base, side.stage, ring.stride)
    if producer:
        warp.mma_stages[(p.barriers, side.stage)] = StageHold(side.stage, stage.offset & 0xFFFF, ring.stride, op)
    return stage


def _stage_event(warp: Warp, ring: Ring, index: int, event: str) -> None:
    if warp.cluster.on_stage is not None:
        warp.cluster.on_stage(warp.cta.rank, ring.pipeline.barriers, index, event)


def release_from_mma(warp: Warp, op: Operation, ring: Ring, stage: Stage, leader: Value | None) -> Ring:
    """The leader lanes (default: an elected one) commit on full[index]; every lane steps."""
    if leader is None:  # elect.sync: the lowest active lane
        committing = np.zeros(WARP, dtype=np.bool_)
        committing[int(np.argmax(warp.mask))] = True
    elif isinstance(leader, np.ndarray):
        committing = warp.mask & leader
    else:
        committing = warp.mask if leader else np.zeros(WARP, dtype=np.bool_)
    hold = warp.mma_stages.pop((ring.pipeline.barriers, stage.index), None)
    if committing.any() and hold is not None and not hold.initialised:
        raise Hazard(
            "tmem-stale-accumulator",
            f"{op.name} commits stage {stage.index} (columns {hold.first}-{hold.first + hold.columns - 1}) to its "
            "full barrier, but no MMA with enable_input_d = 0 (nor a tcgen05.st / cp) wrote the stage since it "
            "was acquired: the epilogue would read the previous tile's accumulator (a tile with K = 0)",
            [(hold.acquired_at, "the stage was acquired here")] if hold.acquired_at is not None else [],
        )
    if committing.any():
        outer = warp.mask
        warp.mask = committing
        try:
            N.tcgen05_commit(warp, op, ring.pipeline.full(stage.index), ring.mask, ring.cta_group)
        finally:
            warp.mask = outer
    _stage_event(warp, ring, stage.index, "commit")
    p = ring.pipeline
    return replace(ring, pipeline=replace(p, producer=p.producer.step(p.num_stages)))


def release_from_epilogue(ring: Ring) -> Ring:
    p = ring.pipeline
    return replace(ring, pipeline=replace(p, consumer=p.consumer.step(p.num_stages)))


def arrive_empty(warp: Warp, ring: Ring, stage: Stage) -> None:
    """Every epilogue thread arrives on empty[index]: locally (cta_group 1) or on the
    leader CTA's barrier (cta_group 2)."""
    warp.clock.fence_before()
    N.mbarrier_arrive(warp, _empty_target(warp, ring, stage))
    _stage_event(warp, ring, stage.index, "release")


def _empty_target(warp: Warp, ring: Ring, stage: Stage) -> int:
    """empty[index] of our CTA (cta_group 1) or of the pair's leader CTA (cta_group 2)."""
    empty = ring.pipeline.empty(stage.index)
    return empty if ring.cta_group == 1 else (empty & OFFSET_MASK) | ((warp.cta.rank & ~1) << RANK_SHIFT)


def arrive_empty_effect(warp: Warp, ring: Ring, stage: Stage) -> Step:
    return Step("arrive", (_empty_target(warp, ring, stage),), len(warp.active_lanes()))


def local_effect(*_: object) -> Step:
    """Named-barrier steps and issuing a commit commute with every other agent's steps."""
    return LOCAL


def check_in_stage(op: Operation, stage: Stage, column: int, width: int) -> None:
    """An epilogue access must stay inside the stage it holds: columns [column, column +
    width) of a stage of `stride` columns (docs/semantics.md §9.3)."""
    if column + width > stage.stride:
        raise Hazard(
            "tmem-access-out-of-stage",
            f"{op.name} of columns [{column}, {column + width}) of stage {stage.index} reaches past the end of the "
            f"stage: a stage has {stage.stride} columns (the stride), so the access must satisfy column + "
            f"{width} <= {stage.stride}",
        )


def _has_column(op: tmem.StoreUpperOp | tmem.StoreLowerOp) -> bool:
    return op.column is not None


class LoadStatic(NamedTuple):
    """What a tmem load derives from its op (`WarpFunctions.static`): the optional column
    operand's accessor decodes the operand segment sizes at each read."""

    has_column: bool
    lane_offset: int
    """`tmem.LOWER_HALF_LANE_OFFSET` for the lower half, else 0."""
    plan: LdStPlan
    floats: bool
    """The result is f32 (else i32): the loaded bits are viewed as float32."""


def _load_static(op: tmem.LoadUpperOp | tmem.LoadLowerOp) -> LoadStatic:
    result_type = op.result.type
    return LoadStatic(
        op.column is not None,
        tmem.LOWER_HALF_LANE_OFFSET if isinstance(op, tmem.LoadLowerOp) else 0,
        ldst_plan(nvvm.Tcgen05LdStShape.SHAPE_16X256B, result_type.get_shape()[0]),
        result_type.element_type != tmem.i32,
    )


def _load(warp: Warp, op: tmem.LoadUpperOp | tmem.LoadLowerOp, facts: LoadStatic, stage: Stage, column: int) -> Value:
    address = stage.offset + column + facts.lane_offset
    plan = facts.plan
    check_in_stage(op, stage, column, plan.columns)
    values = N.tmem_ld(warp, op, address, plan)
    return values.view(np.float32) if facts.floats else values


# --------------------------------------------------------------------------------------
# Implementations
# --------------------------------------------------------------------------------------


class TmemFunctions(WarpFunctions):
    def effect(self, warp: Warp, op: Operation, values: Sequence[Value]) -> Step:
        match op:
            case tmem.MmaEnterOp() | tmem.EpilogueCreateOp():
                return LOCAL  # a named-barrier arrival / sync
            case _ if values and isinstance(values[0], np.ndarray):
                return OTHER
            case tmem.ArriveEmptyOp():
                return arrive_empty_effect(warp, values[0], values[1])
            case tmem.AcquireForMmaOp() | tmem.AcquireForEpilogueOp():
                return acquire_effect(warp, values[0], isinstance(op, tmem.AcquireForMmaOp))
            case _:
                return OTHER

    # -- allocation -----------------------------------------------------------------------

    @impl(tmem.AllocOp)
    def run_alloc(self, interp: Interpreter, op: tmem.AllocOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        return (allocate(warp, op, _uniform(warp, args[0], "tmem.alloc slot"), op.allocation.type),)

    @impl(tmem.FromSharedOp)
    def run_from_shared(self, interp: Interpreter, op: tmem.FromSharedOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        return (read_slot(warp, _uniform(warp, args[0], "tmem.from_shared slot"), op),)

    @impl(tmem.RelinquishOp)
    def run_relinquish(self, interp: Interpreter, op: tmem.RelinquishOp, args: PythonValues) -> PythonValues:
        N.tmem_relinquish(as_warp(interp), cast(tmem.AllocationType, op.allocation.type).cta_group.data)
        return ()

    @impl(tmem.DeallocOp)
    def run_dealloc(self, interp: Interpreter, op: tmem.DeallocOp, args: PythonValues) -> PythonValues:
        allocation = cast(tmem.AllocationType, op.allocation.type)
        N.tmem_dealloc(as_warp(interp), args[0], allocation.max_cols.data, allocation.cta_group.data)
        return ()

    @impl(tmem.BaseAddressOp)
    def run_base_address(self, interp: Interpreter, op: tmem.BaseAddressOp, args: PythonValues) -> PythonValues:
        return (args[0],)

    # -- tmem_stage and tensor ------------------------------------------------------------

    @impl(tmem.StageCreateOp)
    def run_stage_create(self, interp: Interpreter, op: tmem.StageCreateOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        base = _uniform(warp, args[0], "tmem.tmem_stage.create base")
        index = _uniform(warp, args[1], "tmem.tmem_stage.create index")
        return (Stage(base, index, op.stage.type.stride.data),)

    @impl(tmem.StageFromAllocOp)
    def run_stage_from_alloc(self, interp: Interpreter, op: tmem.StageFromAllocOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        index = _uniform(warp, args[1], "tmem.tmem_stage.from_alloc index")
        return (Stage(args[0], index, op.stage.type.stride.data),)

    @impl(tmem.StageFromOffsetOp)
    def run_stage_from_offset(
        self, interp: Interpreter, op: tmem.StageFromOffsetOp, args: PythonValues
    ) -> PythonValues:
        warp = as_warp(interp)
        offset = _uniform(warp, args[0], "tmem.tmem_stage.from_offset offset")
        index = _uniform(warp, args[1], "tmem.tmem_stage.from_offset index")
        stride = op.stage.type.stride.data
        return (Stage((offset - index * stride) & 0xFFFFFFFF, index, stride),)

    @impl(tmem.StageIndexOp)
    def run_stage_index(self, interp: Interpreter, op: tmem.StageIndexOp, args: PythonValues) -> PythonValues:
        return (cast(Stage, args[0]).index,)

    def _stage_offset(
        self, interp: Interpreter, op: tmem.StageOffsetOp | tmem.StageAddressOp | tmem.StageTensorOp, args: PythonValues
    ) -> PythonValues:
        """A stage's offset, TMEM address and tensor are one number here: the address of
        its first column."""
        return (cast(Stage, args[0]).offset,)

    run_stage_offset = impl(tmem.StageOffsetOp)(_stage_offset)
    run_stage_address = impl(tmem.StageAddressOp)(_stage_offset)
    run_stage_tensor = impl(tmem.StageTensorOp)(_stage_offset)

    def _tensor_address(
        self, interp: Interpreter, op: tmem.TensorOffsetOp | tmem.TensorAddressOp, args: PythonValues
    ) -> PythonValues:
        """A tensor is its TMEM address, which is also its offset."""
        return (args[0],)

    run_tensor_offset = impl(tmem.TensorOffsetOp)(_tensor_address)
    run_tensor_address = impl(tmem.TensorAddressOp)(_tensor_address)

    @impl(tmem.LoadUpperOp)
    def run_load_upper(self, interp: Interpreter, op: tmem.LoadUpperOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        facts = self.static(op, _load_static)
        column = _uniform(warp, args[1], "tmem_stage.load_upper column") if facts.has_column else 0
        return (_load(warp, op, facts, args[0], column),)

    @impl(tmem.LoadLowerOp)
    def run_load_lower(self, interp: Interpreter, op: tmem.LoadLowerOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        facts = self.static(op, _load_static)
        column = _uniform(warp, args[1], "tmem_stage.load_lower column") if facts.has_column else 0
        return (_load(warp, op, facts, args[0], column),)

    def _store(self, warp: Warp, op: tmem.StoreUpperOp | tmem.StoreLowerOp, args: PythonValues, lower: bool) -> None:
        stage, *rest = args
        column = _uniform(warp, rest.pop(0), f"{op.name} column") if self.static(op, _has_column) else 0
        values = np.asarray(rest[0])
        address = cast(Stage, stage).offset + column + (tmem.LOWER_HALF_LANE_OFFSET if lower else 0)
        plan = ldst_plan(nvvm.Tcgen05LdStShape.SHAPE_16X256B, values.shape[1])
        check_in_stage(op, cast(Stage, stage), column, plan.columns)
        N.tmem_st(warp, op, address, values.view(np.uint32), plan)

    @impl(tmem.StoreUpperOp)
    def run_store_upper(self, interp: Interpreter, op: tmem.StoreUpperOp, args: PythonValues) -> PythonValues:
        self._store(as_warp(interp), op, args, lower=False)
        return ()

    @impl(tmem.StoreLowerOp)
    def run_store_lower(self, interp: Interpreter, op: tmem.StoreLowerOp, args: PythonValues) -> PythonValues:
        self._store(as_warp(interp), op, args, lower=True)
        return ()

    @impl(tmem.WaitLoadOp)
    def run_wait_load(self, interp: Interpreter, op: tmem.WaitLoadOp, args: PythonValues) -> PythonValues:
        N.tmem_wait(as_warp(interp), "ld")
        return ()

    @impl(tmem.WaitStoreOp)
    def run_wait_store(self, interp: Interpreter, op: tmem.WaitStoreOp, args: PythonValues) -> PythonValues:
        N.tmem_wait(as_warp(interp), "st")
        return ()

    # -- pipeline and output_ring ---------------------------------------------------------

    def _init_barriers(
        self, warp: Warp, op: tmem.PipelineInitBarriersOp | tmem.RingInitBarriersOp, storage: Value
    ) -> None:
        n = op.ring_type.num_stages.data
        for i in range(n):
            N.mbarrier_init(warp, storage + MBAR_BYTES * i, op.producer_arv_count.value.data, op=op)
        for i in range(n):
            N.mbarrier_init(warp, storage + MBAR_BYTES * (n + i), op.consumer_arv_count.value.data, op=op)

    @impl(tmem.PipelineInitBarriersOp)
    def run_pipeline_init(
        self, interp: Interpreter, op: tmem.PipelineInitBarriersOp, args: PythonValues
    ) -> PythonValues:
        self._init_barriers(as_warp(interp), op, args[0])
        return ()

    @impl(tmem.RingInitBarriersOp)
    def run_ring_init(self, interp: Interpreter, op: tmem.RingInitBarriersOp, args: PythonValues) -> PythonValues:
        self._init_barriers(as_warp(interp), op, args[0])
        return ()

    @impl(tmem.PipelineCreateOp)
    def run_pipeline_create(self, interp: Interpreter, op: tmem.PipelineCreateOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        storage = _uniform(warp, args[0], "tmem.pipeline.create storage")
        return (Pipeline(storage, op.pipeline.type.num_stages.data),)

    @impl(tmem.WaitProducerOp)
    def run_wait_producer(self, interp: Interpreter, op: tmem.WaitProducerOp, args: PythonValues) -> PythonValues:
        p = cast(Pipeline, args[0])
        wait(as_warp(interp), p.full(p.consumer.stage), p.consumer.phase, fence=False)
        return ()

    @impl(tmem.WaitConsumerOp)
    def run_wait_consumer(self, interp: Interpreter, op: tmem.WaitConsumerOp, args: PythonValues) -> PythonValues:
        p = cast(Pipeline, args[0])
        wait(as_warp(interp), p.empty(p.producer.stage), p.producer.phase, fence=False)
        return ()

    @impl(tmem.ProducerStageOp)
    def run_producer_stage(self, interp: Interpreter, op: tmem.ProducerStageOp, args: PythonValues) -> PythonValues:
        return (cast(Pipeline, args[0]).producer.stage,)

    @impl(tmem.ConsumerStageOp)
    def run_consumer_stage(self, interp: Interpreter, op: tmem.ConsumerStageOp, args: PythonValues) -> PythonValues:
        return (cast(Pipeline, args[0]).consumer.stage,)

    @impl(tmem.ProducerStepOp)
    def run_producer_step(self, interp: Interpreter, op: tmem.ProducerStepOp, args: PythonValues) -> PythonValues:
        p = cast(Pipeline, args[0])
        return (replace(p, producer=p.producer.step(p.num_stages)),)

    @impl(tmem.ConsumerStepOp)
    def run_consumer_step(self, interp: Interpreter, op: tmem.ConsumerStepOp, args: PythonValues) -> PythonValues:
        p = cast(Pipeline, args[0])
        return (replace(p, consumer=p.consumer.step(p.num_stages)),)

    @impl(tmem.ProducerMbarOp)
    def run_producer_mbar(self, interp: Interpreter, op: tmem.ProducerMbarOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        return (cast(Pipeline, args[0]).full(_uniform(warp, args[1], "tmem.pipeline.producer_mbar index")),)

    @impl(tmem.ConsumerMbarOp)
    def run_consumer_mbar(self, interp: Interpreter, op: tmem.ConsumerMbarOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        return (cast(Pipeline, args[0]).empty(_uniform(warp, args[1], "tmem.pipeline.consumer_mbar index")),)

    @impl(tmem.RingCreateOp)
    def run_ring_create(self, interp: Interpreter, op: tmem.RingCreateOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        storage = _uniform(warp, args[0], "tmem.output_ring.create storage")
        mask = _uniform(warp, args[2], "tmem.output_ring.create mask") if op.mask is not None else None
        return (_new_ring(op.ring.type, storage, args[1], mask),)

    @impl(tmem.AcquireForMmaOp)
    def run_acquire_for_mma(self, interp: Interpreter, op: tmem.AcquireForMmaOp, args: PythonValues) -> PythonValues:
        return (acquire(as_warp(interp), args[0], producer=True, op=op),)

    @impl(tmem.AcquireForEpilogueOp)
    def run_acquire_for_epilogue(
        self, interp: Interpreter, op: tmem.AcquireForEpilogueOp, args: PythonValues
    ) -> PythonValues:
        return (acquire(as_warp(interp), args[0], producer=False),)

    @impl(tmem.ReleaseFromMmaOp)
    def run_release_from_mma(self, interp: Interpreter, op: tmem.ReleaseFromMmaOp, args: PythonValues) -> PythonValues:
        leader = args[2] if op.leader is not None else None
        return (release_from_mma(as_warp(interp), op, args[0], args[1], leader),)

    @impl(tmem.ReleaseFromEpilogueOp)
    def run_release_from_epilogue(
        self, interp: Interpreter, op: tmem.ReleaseFromEpilogueOp, args: PythonValues
    ) -> PythonValues:
        return (release_from_epilogue(args[0]),)

    @impl(tmem.ArriveEmptyOp)
    def run_arrive_empty(self, interp: Interpreter, op: tmem.ArriveEmptyOp, args: PythonValues) -> PythonValues:
        arrive_empty(as_warp(interp), args[0], args[1])
        return ()

    # -- dealloc barrier ------------------------------------------------------------------

    @impl(tmem.DeallocBarrierInitOp)
    def run_dealloc_barrier_init(
        self, interp: Interpreter, op: tmem.DeallocBarrierInitOp, args: PythonValues
    ) -> PythonValues:
        N.mbarrier_init(as_warp(interp), args[0], op.arrival_count.value.data, op=op)
        return ()

    @impl(tmem.DeallocBarrierCreateOp)
    def run_dealloc_barrier_create(
        self, interp: Interpreter, op: tmem.DeallocBarrierCreateOp, args: PythonValues
    ) -> PythonValues:
        warp = as_warp(interp)
        return (_uniform(warp, args[0], "tmem.dealloc_barrier.create barrier"),)

    def _cta_group(self, value: Attribute) -> int:
        return cast(tmem.DeallocBarrierType, value).cta_group.data

    @impl(tmem.SignalPeerOp)
    def run_signal_peer(self, interp: Interpreter, op: tmem.SignalPeerOp, args: PythonValues) -> PythonValues:
        signal(as_warp(interp), args[0], self._cta_group(op.dealloc_barrier.type), peer=True, self_=False)
        return ()

    @impl(tmem.SignalSelfOp)
    def run_signal_self(self, interp: Interpreter, op: tmem.SignalSelfOp, args: PythonValues) -> PythonValues:
        signal(as_warp(interp), args[0], 1, peer=False, self_=True)
        return ()

    @impl(tmem.SignalCompleteOp)
    def run_signal_complete(self, interp: Interpreter, op: tmem.SignalCompleteOp, args: PythonValues) -> PythonValues:
        signal(as_warp(interp), args[0], self._cta_group(op.dealloc_barrier.type), peer=True, self_=True)
        return ()

    @impl(tmem.DeallocBarrierWaitOp)
    def run_dealloc_barrier_wait(
        self, interp: Interpreter, op: tmem.DeallocBarrierWaitOp, args: PythonValues
    ) -> PythonValues:
        wait(as_warp(interp), args[0], 0)
        return ()

    @impl(tmem.CompleteDeallocOp)
    def run_complete_dealloc(self, interp: Interpreter, op: tmem.CompleteDeallocOp, args: PythonValues) -> PythonValues:
        complete_dealloc(as_warp(interp), args[0], args[1], cast(tmem.AllocationType, op.allocation.type))
        return ()

    # -- warp contexts --------------------------------------------------------------------

    @impl(tmem.MmaCreateOp)
    def run_mma_create(self, interp: Interpreter, op: tmem.MmaCreateOp, args: PythonValues) -> PythonValues:
        return (mma_create(as_warp(interp), op, args),)

    @impl(tmem.EpilogueCreateOp)
    def run_epilogue_create(self, interp: Interpreter, op: tmem.EpilogueCreateOp, args: PythonValues) -> PythonValues:
        return (epilogue_create(as_warp(interp), op, args),)

    @impl(tmem.MmaEnterOp)
    def run_mma_enter(self, interp: Interpreter, op: tmem.MmaEnterOp, args: PythonValues) -> PythonValues:
        """`barrier.arrive 1, mma + epilogue threads`: the address is in shared memory."""
        enter_mma(as_warp(interp), cast(tmem.WarpContextType, op.context.type).sync_threads)
        return ()

    @impl(tmem.MmaExitOp)
    def run_mma_exit(self, interp: Interpreter, op: tmem.MmaExitOp, args: PythonValues) -> PythonValues:
        ctx = cast(Context, args[0])
        allocation = cast(tmem.WarpContextType, op.context.type).allocation_type()
        complete_dealloc(as_warp(interp), ctx.dealloc_barrier, ctx.allocation, allocation)
        return ()

    @impl(tmem.EpilogueExitOp)
    def run_epilogue_exit(self, interp: Interpreter, op: tmem.EpilogueExitOp, args: PythonValues) -> PythonValues:
        ctx = cast(Context, args[0])
        signal(as_warp(interp), ctx.dealloc_barrier, ctx.ring.cta_group, peer=True, self_=True)
        return ()

    @impl(tmem.ContextOutputRingOp)
    def run_context_output_ring(
        self, interp: Interpreter, op: tmem.ContextOutputRingOp, args: PythonValues
    ) -> PythonValues:
        return (cast(Context, args[0]).ring,)

    @impl(tmem.ContextTmemOp)
    def run_context_tmem(self, interp: Interpreter, op: tmem.ContextTmemOp, args: PythonValues) -> PythonValues:
        return (cast(Context, args[0]).allocation,)

    @impl(tmem.ContextDeallocBarrierOp)
    def run_context_dealloc_barrier(
        self, interp: Interpreter, op: tmem.ContextDeallocBarrierOp, args: PythonValues
    ) -> PythonValues:
        return (cast(Context, args[0]).dealloc_barrier,)

    # -- region forms: Mojo's `with` blocks (the same steps tmem-expand-regions inlines) ---

    @impl_structured(tmem.ProducerOp)
    def run_producer(self, warp: Warp, op: tmem.ProducerOp, args: PythonValues) -> StructuredGen:
        return (yield from _producer_region(warp, op, args))

    @impl_structured(tmem.PerKProducerOp)
    def run_per_k_producer(self, warp: Warp, op: tmem.PerKProducerOp, args: PythonValues) -> StructuredGen:
        return (yield from _producer_region(warp, op, args))

    @impl_structured(tmem.MmaPerKStageOp)
    def run_mma_per_k_stage(self, warp: Warp, op: tmem.MmaPerKStageOp, args: PythonValues) -> StructuredGen:
        return (yield from _producer_region(warp, op, args[1:]))

    @impl_structured(tmem.ConsumerOp)
    def run_consumer(self, warp: Warp, op: tmem.ConsumerOp, args: PythonValues) -> StructuredGen:
        """`OutputConsumer`: acquire; body; release_from_epilogue (no arrive)."""
        (ring,) = args
        stage = yield Perform(acquire, (warp, ring, False), acquire_effect)
        outs = yield RunBlock(op.body.block, (stage,))
        return (release_from_epilogue(ring), *outs)

    @impl_structured(tmem.PerKConsumerOp)
    def run_per_k_consumer(self, warp: Warp, op: tmem.PerKConsumerOp, args: PythonValues) -> StructuredGen:
        """`PerKConsumerStage`: acquire; body; arrive_empty; release_from_epilogue."""
        (ring,) = args
        stage = yield Perform(acquire, (warp, ring, False), acquire_effect)
        outs = yield RunBlock(op.body.block, (stage,))
        yield Perform(arrive_empty, (warp, ring, stage), arrive_empty_effect)
        return (release_from_epilogue(ring), *outs)

    @impl_structured(tmem.EpiloguePerKStageOp)
    def run_epilogue_per_k_stage(self, warp: Warp, op: tmem.EpiloguePerKStageOp, args: PythonValues) -> StructuredGen:
        """`EpilogueKContext`: acquire and the input stage; body; input consumer_step,
        arrive_empty, release_from_epilogue."""
        _, ring, pipeline = args
        stage = yield Perform(acquire, (warp, ring, False), acquire_effect)
        outs = yield RunBlock(op.body.block, (stage, cast(Pipeline, pipeline).consumer.stage))
        p = cast(Pipeline, pipeline)
        stepped = replace(p, consumer=p.consumer.step(p.num_stages))
        yield Perform(arrive_empty, (warp, ring, stage), arrive_empty_effect)
        return (release_from_epilogue(ring), stepped, *outs)

    @impl_structured(tmem.MmaContextOp)
    def run_mma_context(self, warp: Warp, op: tmem.MmaContextOp, args: PythonValues) -> StructuredGen:
        """`with MmaWarpContext.create(...)`: create (allocate), enter; body; exit."""
        context = yield Perform(mma_create, (warp, op, args))
        yield Perform(enter_mma, (warp, op.context_type.sync_threads), local_effect)
        outs = yield RunBlock(op.body.block, (context,))
        allocation = op.context_type.allocation_type()
        yield Perform(complete_dealloc, (warp, context.dealloc_barrier, context.allocation, allocation))
        return tuple(outs)

    @impl_structured(tmem.EpilogueContextOp)
    def run_epilogue_context(self, warp: Warp, op: tmem.EpilogueContextOp, args: PythonValues) -> StructuredGen:
        """`with EpilogueWarpContext.create(...)`: create (sync, read the address); body; exit."""
        context = yield Perform(epilogue_create, (warp, op, args), local_effect)
        outs = yield RunBlock(op.body.block, (context,))
        yield Perform(signal, (warp, context.dealloc_barrier, context.ring.cta_group, True, True), signal_effect)
        return tuple(outs)

    @impl_terminator(tmem.YieldOp)
    def run_yield(
        self, interp: Interpreter, op: tmem.YieldOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()


register_impls(TmemFunctions)


def _mask(warp: Warp, mask: list[Value]) -> int | None:
    return _uniform(warp, mask[0], "mma_complete_mask") if mask else None


def _producer_region(
    warp: Warp, op: tmem.ProducerOp | tmem.PerKProducerOp | tmem.MmaPerKStageOp, args: PythonValues
) -> StructuredGen:
    """acquire_for_mma; body; release_from_mma (with the op's `leader`)."""
    ring, *leader = args
    stage = yield Perform(acquire, (warp, ring, True, op), acquire_effect)
    outs = yield RunBlock(op.body.block, (stage,))
    new_ring = yield Perform(release_from_mma, (warp, op, ring, stage, leader[0] if leader else None), local_effect)
    return (new_ring, *outs)
