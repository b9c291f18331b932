"""warp_context (Mojo `TmemDeallocBarrier`, `MmaWarpContext`, `EpilogueWarpContext`): the
dealloc barrier and the warp contexts that own the allocation; their `with` blocks are
in `regions`.
"""

from __future__ import annotations

from abc import ABC
from typing import cast

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    I32,
    IntegerAttr,
    i16,
    i32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
)

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.tmem.base import TmemOp, check_mma_complete_mask
from xdsl_tmem.dialects.tmem.types import (
    AllocationType,
    DeallocBarrierType,
    EpilogueWarpContextType,
    MmaWarpContextType,
    OutputRingType,
    WarpContextType,
)
from xdsl_tmem.dialects.traits import Synchronizes, SyncPoint, WarpLocal
from xdsl_tmem.dialects.utils import (
    SHARED_PTR,
    check_arrival_count,
    enclosing_function,
    function_name,
    max_threads_per_block,
)

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

    def __init__(self, barrier: SSAValue, arrival_count: int, barrier_type: DeallocBarrierType):
        super().__init__(
            operands=[barrier],
            properties={"arrival_count": IntegerAttr(arrival_count, i32), "barrier_type": barrier_type},
        )

    def verify_tmem(self) -> None:
        error = check_arrival_count("arrival_count", self.arrival_count.value.data)
        if error is not None:
            raise self.error(error)
        check_count_against_contexts(
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

    def __init__(self, barrier: SSAValue, barrier_type: DeallocBarrierType):
        super().__init__(operands=[barrier], result_types=[barrier_type])


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


def check_count_against_contexts(
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
        if not isinstance(context, ContextCreateOp) or not _same_storage(getattr(context, operand), storage):
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


class ContextCreateOp(TmemOp, ABC):
    slot = operand_def(SHARED_PTR)
    accum_barriers = operand_def(SHARED_PTR)
    dealloc_barrier = operand_def(SHARED_PTR)
    mask = opt_operand_def(i16)

    def get_context_type(self) -> WarpContextType:
        raise NotImplementedError

    def verify_tmem(self) -> None:
        context_type = self.get_context_type()
        check_mma_complete_mask(self, context_type.config()[2], self.mask)
        _check_context_threads(self, context_type)


class _ContextCreateValueOp(ContextCreateOp, ABC):
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
