"""allocation (Mojo `TmemAllocation`): `tmem.alloc`, `tmem.from_shared`, `tmem.relinquish`,
`tmem.dealloc`, `tmem.base_address`.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    i32,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.tmem.base import TmemOp
from xdsl_tmem.dialects.tmem.types import AllocationType
from xdsl_tmem.dialects.traits import Synchronizes, SyncPoint
from xdsl_tmem.dialects.utils import (
    SHARED_PTR,
)

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

    Only valid after the named-barrier sync that publishes it (docs/semantics.md §5.2).
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
