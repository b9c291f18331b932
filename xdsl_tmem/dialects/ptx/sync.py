"""Barriers, fences, mbarriers and warp election."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    IntAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
)

from xdsl_tmem.dialects.ptx.base import (
    Address,
    FixedInstruction,
    Instruction,
    Namer,
    Reg,
    RegisterType,
    RegOrImm,
    address_text,
)

# ---- barriers and fences ------------------------------------------------------------


@irdl_op_definition
class BarSyncOp(Instruction):
    """`bar.sync id[, count]` (`barrier.sync.aligned`)."""

    name = "ptx.bar_sync"
    id = operand_def(RegOrImm)
    count = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, id: SSAValue, count: SSAValue | None = None):
        super().__init__(operands=[id, count, None])

    def mnemonic(self) -> str:
        return "bar.sync"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.id)] + ([] if self.count is None else [name(self.count)])


@irdl_op_definition
class BarRedOp(Instruction):
    """`bar.red.{popc.u32,and.pred,or.pred} d, id[, count], p`."""

    name = "ptx.bar_red"
    reduction = prop_def(StringAttr)  # "popc.u32", "and.pred", "or.pred"
    res = result_def(Reg)
    id = operand_def(RegOrImm)
    count = opt_operand_def(RegOrImm)
    pred = operand_def(Reg)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, reduction: str, res: RegisterType, id: SSAValue, count: SSAValue | None, pred: SSAValue):
        super().__init__(
            operands=[id, count, pred, None], result_types=[res], properties={"reduction": StringAttr(reduction)}
        )

    def mnemonic(self) -> str:
        return f"bar.red.{self.reduction.data}"

    def ptx_operands(self, name: Namer) -> list[str]:
        count = [] if self.count is None else [name(self.count)]
        return [name(self.res), name(self.id), *count, name(self.pred)]


@irdl_op_definition
class BarArriveOp(Instruction):
    """`bar.arrive id, count`."""

    name = "ptx.bar_arrive"
    id = operand_def(RegOrImm)
    count = operand_def(RegOrImm)

    def __init__(self, id: SSAValue, count: SSAValue):
        super().__init__(operands=[id, count, None])

    def mnemonic(self) -> str:
        return "bar.arrive"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.id), name(self.count)]


@irdl_op_definition
class BarWarpSyncOp(Instruction):
    """`bar.warp.sync membermask`."""

    name = "ptx.bar_warp_sync"
    mask = operand_def(RegOrImm)

    def __init__(self, mask: SSAValue):
        super().__init__(operands=[mask, None])

    def mnemonic(self) -> str:
        return "bar.warp.sync"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.mask)]


@irdl_op_definition
class BarrierClusterOp(FixedInstruction):
    """`barrier.cluster.{arrive,wait}[.relaxed][.aligned]`."""

    name = "ptx.barrier_cluster"
    kind = prop_def(StringAttr)  # "arrive", "arrive.relaxed", "wait"
    aligned = opt_prop_def(UnitAttr)

    def mnemonic(self) -> str:
        return f"barrier.cluster.{self.kind.data}" + (".aligned" if self.aligned else "")


@irdl_op_definition
class FenceOp(FixedInstruction):
    """`fence.proxy.async.shared::cta`, `fence.mbarrier_init.release.cluster`, ...
    (the whole mnemonic in `text`)."""

    name = "ptx.fence"
    text = prop_def(StringAttr)

    def mnemonic(self) -> str:
        return self.text.data


# ---- mbarrier ---------------------------------------------------------------------------


@irdl_op_definition
class MbarrierInitOp(Instruction):
    """`mbarrier.init[.shared].b64 [addr], count`."""

    name = "ptx.mbarrier_init"
    space = prop_def(StringAttr)  # "shared" or "" (generic)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    count = operand_def(RegOrImm)

    def __init__(self, space: str, addr: SSAValue, count: SSAValue, offset: int = 0):
        super().__init__(
            operands=[addr, count, None], properties={"space": StringAttr(space), "offset": IntAttr(offset)}
        )

    def mnemonic(self) -> str:
        return "mbarrier.init" + (f".{self.space.data}" if self.space.data else "") + ".b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data), name(self.count)]


@irdl_op_definition
class MbarrierArriveOp(Instruction):
    """`mbarrier.arrive[.expect_tx][.sem.scope][.space].b64 state|_, [addr][, count]`.

    `qualifiers` is everything between `mbarrier.arrive` and `.b64` (e.g. `.shared`,
    `.release.cluster.shared::cluster`, `.expect_tx.shared`); without a `state`
    result the sink `_` is printed.
    """

    name = "ptx.mbarrier_arrive"
    qualifiers = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    state = opt_result_def(Reg)
    addr = operand_def(Address)
    count = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        qualifiers: str,
        addr: SSAValue,
        count: SSAValue | None = None,
        state: RegisterType | None = None,
        offset: int = 0,
    ):
        super().__init__(
            operands=[addr, count, None],
            result_types=[[state] if state is not None else []],
            properties={"qualifiers": StringAttr(qualifiers), "offset": IntAttr(offset)},
        )

    def mnemonic(self) -> str:
        return f"mbarrier.arrive{self.qualifiers.data}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        state = "_" if self.state is None else name(self.state)
        count = [] if self.count is None else [name(self.count)]
        return [state, address_text(name, self.addr, self.offset.data), *count]


@irdl_op_definition
class MbarrierExpectTxOp(Instruction):
    """`mbarrier.{expect_tx,complete_tx}.relaxed.cta.shared.b64 [addr], tx`."""

    name = "ptx.mbarrier_tx"
    text = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    tx = operand_def(RegOrImm)

    def __init__(self, text: str, addr: SSAValue, tx: SSAValue, offset: int = 0):
        super().__init__(operands=[addr, tx, None], properties={"text": StringAttr(text), "offset": IntAttr(offset)})

    def mnemonic(self) -> str:
        return self.text.data

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data), name(self.tx)]


@irdl_op_definition
class MbarrierInvalOp(Instruction):
    """`mbarrier.inval[.shared].b64 [addr]`."""

    name = "ptx.mbarrier_inval"
    space = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)

    def __init__(self, space: str, addr: SSAValue, offset: int = 0):
        super().__init__(operands=[addr, None], properties={"space": StringAttr(space), "offset": IntAttr(offset)})

    def mnemonic(self) -> str:
        return "mbarrier.inval" + (f".{self.space.data}" if self.space.data else "") + ".b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data)]


@irdl_op_definition
class MbarrierWaitOp(Instruction):
    """`mbarrier.{try_wait,test_wait}[.parity][.space].b64 p, [addr], phase[, ticks]`.

    One probe; the blocking wait is this plus `@!p bra` back to it.
    """

    name = "ptx.mbarrier_wait"
    kind = prop_def(StringAttr)  # "try_wait.parity", "test_wait.parity", "try_wait", ...
    space = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    res = result_def(Reg)
    addr = operand_def(Address)
    phase = operand_def(RegOrImm)
    ticks = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        kind: str,
        space: str,
        res: RegisterType,
        addr: SSAValue,
        phase: SSAValue,
        ticks: SSAValue | None = None,
        offset: int = 0,
    ):
        super().__init__(
            operands=[addr, phase, ticks, None],
            result_types=[res],
            properties={"kind": StringAttr(kind), "space": StringAttr(space), "offset": IntAttr(offset)},
        )

    def mnemonic(self) -> str:
        return f"mbarrier.{self.kind.data}" + (f".{self.space.data}" if self.space.data else "") + ".b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        ticks = [] if self.ticks is None else [name(self.ticks)]
        return [name(self.res), address_text(name, self.addr, self.offset.data), name(self.phase), *ticks]


@irdl_op_definition
class ElectSyncOp(Instruction):
    """`elect.sync _|p, membermask`."""

    name = "ptx.elect_sync"
    res = result_def(Reg)
    mask = operand_def(RegOrImm)

    def __init__(self, res: RegisterType, mask: SSAValue):
        super().__init__(operands=[mask, None], result_types=[res])

    def mnemonic(self) -> str:
        return "elect.sync"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [f"_|{name(self.res)}", name(self.mask)]
