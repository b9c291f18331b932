"""mbarrier: init, inval, arrive (with expect_tx), expect_tx, complete_tx, the waits,
and fence.mbarrier_init.
"""

from __future__ import annotations

from abc import ABC

from xdsl.dialects.builtin import (
    I1,
    I32,
    I64,
    BoolAttr,
    IntegerAttr,
    i1,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import SSAValue
from xdsl.irdl import (
    operand_def,
    opt_operand_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
)

from xdsl_tmem.dialects.nvvm.attributes import MemScopeKind, MemScopeKindAttr
from xdsl_tmem.dialects.nvvm.base import NVVMOp, check_pointer
from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.traits import (
    LaneVarying,
    Synchronizes,
    SyncPoint,
    WarpLocal,
)
from xdsl_tmem.dialects.utils import (
    check_arrival_count,
    constant_int,
)

_CTA_SCOPE = MemScopeKindAttr(MemScopeKind.CTA)
_FALSE = IntegerAttr.from_bool(False)


# --------------------------------------------------------------------------------------
# mbarrier
# --------------------------------------------------------------------------------------


def _check_mbarrier_scope(op: NVVMOp, scope: MemScopeKindAttr) -> None:
    if scope.data not in (MemScopeKind.CTA, MemScopeKind.CLUSTER):
        raise op.error(f"scope must be cta or cluster, got {scope.data.value}")


def _check_no_cluster_state(op: NVVMOp, space: int, res: SSAValue | None) -> None:
    # A shared::cluster arrive has no state result (PTX needs the `_` sink).
    if space == 7 and res is not None:
        raise op.error(
            "an arrive on a !llvm.ptr<7> (shared::cluster) mbarrier cannot return a state; remove the result"
        )


@irdl_op_definition
class MBarrierInitOp(NVVMOp):
    """`mbarrier.init[.shared].b64 [addr], count;` (inline PTX if predicated)."""

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.mbarrier.init"
    addr = operand_def(LLVMPointerType)
    count = operand_def(I32)
    predicate = opt_operand_def(I1)
    assembly_format = "$addr `,` $count (`,` `predicate` `=` $predicate^)? attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue, count: SSAValue, predicate: SSAValue | None = None):
        super().__init__(operands=[addr, count, predicate])

    def verify_nvvm(self) -> None:
        check_pointer(self, "addr", self.addr, (0, 3))
        # [D] PTX ISA: the count is in [1, 2^20 - 1]; ptxas cannot check a register.
        if (count := constant_int(self.count)) is not None and (
            error := check_arrival_count("count", count)
        ) is not None:
            raise self.error(error)


@irdl_op_definition
class MBarrierInvalOp(NVVMOp):
    """`mbarrier.inval[.shared].b64 [addr];`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.inval"
    addr = operand_def(LLVMPointerType)
    assembly_format = "$addr attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue):
        super().__init__(operands=[addr])

    def verify_nvvm(self) -> None:
        check_pointer(self, "addr", self.addr, (0, 3))


@irdl_op_definition
class MBarrierArriveOp(NVVMOp):
    """`mbarrier.arrive[.relaxed][.<scope>][.shared[::cluster]].b64 state|_, [addr][, count];`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.arrive"
    addr = operand_def(LLVMPointerType)
    count = opt_operand_def(I32)
    res = opt_result_def(I64)
    scope = prop_def(MemScopeKindAttr, default_value=_CTA_SCOPE)
    relaxed = prop_def(BoolAttr, default_value=_FALSE)
    assembly_format = "$addr (`,` $count^)? attr-dict `:` type($addr) (`->` type($res)^)?"

    def __init__(
        self,
        addr: SSAValue,
        count: SSAValue | None = None,
        *,
        has_state: bool = False,
        scope: MemScopeKind = MemScopeKind.CTA,
        relaxed: bool = False,
    ):
        super().__init__(
            operands=[addr, count],
            result_types=[[i64] if has_state else []],
            properties={
                "scope": MemScopeKindAttr(scope),
                "relaxed": IntegerAttr.from_bool(relaxed),
            },
        )

    def verify_nvvm(self) -> None:
        space = check_pointer(self, "addr", self.addr, (0, 3, 7))
        _check_mbarrier_scope(self, self.scope)
        _check_no_cluster_state(self, space, self.res)


@irdl_op_definition
class MBarrierArriveExpectTxOp(NVVMOp):
    """`mbarrier.arrive.expect_tx[...].b64 state|_, [addr], txcount;`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.arrive.expect_tx"
    addr = operand_def(LLVMPointerType)
    txcount = operand_def(I32)
    predicate = opt_operand_def(I1)
    res = opt_result_def(I64)
    scope = prop_def(MemScopeKindAttr, default_value=_CTA_SCOPE)
    relaxed = prop_def(BoolAttr, default_value=_FALSE)
    assembly_format = (
        "$addr `,` $txcount (`,` `predicate` `=` $predicate^)? attr-dict `:` type(operands) (`->` type($res)^)?"
    )

    def __init__(
        self,
        addr: SSAValue,
        txcount: SSAValue,
        predicate: SSAValue | None = None,
        *,
        has_state: bool = False,
        scope: MemScopeKind = MemScopeKind.CTA,
        relaxed: bool = False,
    ):
        super().__init__(
            operands=[addr, txcount, predicate],
            result_types=[[i64] if has_state else []],
            properties={
                "scope": MemScopeKindAttr(scope),
                "relaxed": IntegerAttr.from_bool(relaxed),
            },
        )

    def verify_nvvm(self) -> None:
        space = check_pointer(self, "addr", self.addr, (0, 3, 7))
        _check_mbarrier_scope(self, self.scope)
        _check_no_cluster_state(self, space, self.res)


class _TxCountOp(NVVMOp, ABC):
    addr = operand_def(LLVMPointerType)
    txcount = operand_def(I32)
    scope = prop_def(MemScopeKindAttr, default_value=_CTA_SCOPE)
    assembly_format = "$addr `,` $txcount attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue, txcount: SSAValue, scope: MemScopeKind = MemScopeKind.CTA):
        super().__init__(operands=[addr, txcount], properties={"scope": MemScopeKindAttr(scope)})

    def verify_nvvm(self) -> None:
        check_pointer(self, "addr", self.addr, (3, 7))
        _check_mbarrier_scope(self, self.scope)


@irdl_op_definition
class MBarrierExpectTxOp(_TxCountOp):
    """`mbarrier.expect_tx.relaxed.<scope>.shared[::cluster].b64 [addr], txcount;`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.expect_tx"


@irdl_op_definition
class MBarrierCompleteTxOp(_TxCountOp):
    """`mbarrier.complete_tx.relaxed.<scope>.shared[::cluster].b64 [addr], txcount;`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.complete_tx"


@irdl_op_definition
class MBarrierTryWaitParityOp(NVVMOp):
    """Blocking wait: a `mbarrier.try_wait.parity` retry loop in inline PTX (needs
    `--convert-nvvm-to-llvm`; docs/ptx-nvvm.md §2). `ticks` is the suspend-time hint."""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.try_wait.parity"
    addr = operand_def(LLVMPointerType)
    phase = operand_def(I32)
    ticks = operand_def(I32)
    assembly_format = "$addr `,` $phase `,` $ticks attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue, phase: SSAValue, ticks: SSAValue):
        super().__init__(operands=[addr, phase, ticks])

    def verify_nvvm(self) -> None:
        check_pointer(self, "addr", self.addr, (0, 3))


class _ProbeOp(NVVMOp, ABC):
    """A single non-blocking probe returning i1; `state_or_phase` is the i64 state
    of an earlier arrive or the i32 phase parity. (Operands are defined in the
    subclasses: xDSL orders a subclass's operand definitions before its base's.)"""

    res = result_def(I1)
    scope = prop_def(MemScopeKindAttr, default_value=_CTA_SCOPE)
    relaxed = prop_def(BoolAttr, default_value=_FALSE)

    def verify_probe(self, addr: SSAValue) -> None:
        check_pointer(self, "addr", addr, (0, 3))
        _check_mbarrier_scope(self, self.scope)


@irdl_op_definition
class MBarrierTryWaitOp(_ProbeOp):
    """`mbarrier.try_wait[.parity].<sem>.<scope>.shared.b64 p, [addr], state|phase[, ticks];`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.try_wait"
    addr = operand_def(LLVMPointerType)
    state_or_phase = operand_def(I32 | I64)
    ticks = opt_operand_def(I32)
    assembly_format = "$addr `,` $state_or_phase (`,` $ticks^)? attr-dict `:` type(operands) `->` type($res)"

    def __init__(
        self,
        addr: SSAValue,
        state_or_phase: SSAValue,
        ticks: SSAValue | None = None,
        *,
        scope: MemScopeKind = MemScopeKind.CTA,
        relaxed: bool = False,
    ):
        super().__init__(
            operands=[addr, state_or_phase, ticks],
            result_types=[i1],
            properties={
                "scope": MemScopeKindAttr(scope),
                "relaxed": IntegerAttr.from_bool(relaxed),
            },
        )

    def verify_nvvm(self) -> None:
        self.verify_probe(self.addr)


@irdl_op_definition
class MBarrierTestWaitOp(_ProbeOp):
    """`mbarrier.test_wait[.parity].<sem>.<scope>.shared.b64 p, [addr], state|phase;`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.test.wait"
    addr = operand_def(LLVMPointerType)
    state_or_phase = operand_def(I32 | I64)
    assembly_format = "$addr `,` $state_or_phase attr-dict `:` type(operands) `->` type($res)"

    def __init__(
        self,
        addr: SSAValue,
        state_or_phase: SSAValue,
        *,
        scope: MemScopeKind = MemScopeKind.CTA,
        relaxed: bool = False,
    ):
        super().__init__(
            operands=[addr, state_or_phase],
            result_types=[i1],
            properties={
                "scope": MemScopeKindAttr(scope),
                "relaxed": IntegerAttr.from_bool(relaxed),
            },
        )

    def verify_nvvm(self) -> None:
        self.verify_probe(self.addr)


@irdl_op_definition
class FenceMbarrierInitOp(NVVMOp):
    """`fence.mbarrier_init.release.cluster;`"""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.fence.mbarrier.init"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()
