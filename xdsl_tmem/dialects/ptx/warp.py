"""Warp-level instructions: elect, shfl, vote, redux, match, activemask, setmaxnreg and
nanosleep (PTX ISA 9.0, Parallel Synchronization and Communication Instructions;
Miscellaneous Instructions)."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    UnitAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
)

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.ptx.base import (
    Instruction,
    Namer,
    Reg,
    RegisterType,
    RegOrImm,
)
from xdsl_tmem.dialects.ptx.qualifiers import (
    MatchMode,
    MatchModeAttr,
    PtxType,
    PtxTypeAttr,
    ReduxKind,
    ReduxKindAttr,
    SetmaxnregAction,
    SetmaxnregActionAttr,
    ShflMode,
    ShflModeAttr,
    VoteMode,
    VoteModeAttr,
    check_only_register,
    check_register,
    check_type,
    immediate,
    operand_text,
    reject,
    types,
)
from xdsl_tmem.dialects.ptx.sync import SYNC_RULE
from xdsl_tmem.dialects.traits import WarpLocal


@irdl_op_definition
class ElectSyncOp(Instruction):
    """`elect.sync d|p, membermask`: `p` a predicate (true in the elected lane), `d` the
    elected lane's number (a `.b32` register) or the sink `_`; the mask a `.b32` register
    or immediate."""

    name = "ptx.elect_sync"
    traits = traits_def(WarpLocal())
    res = result_def(Reg)
    lane = opt_result_def(Reg)
    mask = operand_def(RegOrImm)

    RULE: ClassVar[str] = "PTX ISA 9.0, Parallel Synchronization and Communication Instructions: elect.sync"

    def __init__(self, res: RegisterType, mask: SSAValue, lane: RegisterType | None = None):
        super().__init__(operands=[mask, None], result_types=[res, lane])

    def mnemonic(self) -> str:
        return "elect.sync"

    def ptx_operands(self, name: Namer) -> list[str]:
        lane = "_" if self.lane is None else name(self.lane)
        return [f"{lane}|{name(self.res)}", name(self.mask)]

    def verify_(self) -> None:
        check_only_register(self, "destination", self.res, "pred", self.RULE)
        check_only_register(self, "lane destination", self.lane, "b32", self.RULE)
        check_register(self, "member mask", self.mask, "b32", self.RULE)


_SETMAXNREG_RANGE = (24, 256)


@irdl_op_definition
class SetmaxnregOp(Instruction):
    """`setmaxnreg.{inc,dec}.sync.aligned.u32 imm`: the warp's register budget; the count
    is an immediate in [24, 256], a multiple of 8."""

    traits = traits_def(WarpLocal())
    name = "ptx.setmaxnreg"
    action = prop_def(SetmaxnregActionAttr)
    count = operand_def(RegOrImm)

    RULE: ClassVar[str] = "PTX ISA 9.0, Miscellaneous Instructions: setmaxnreg"

    def __init__(self, action: SetmaxnregAction, count: SSAValue):
        super().__init__(operands=[count, None], properties={"action": SetmaxnregActionAttr(action)})

    def mnemonic(self) -> str:
        return f"setmaxnreg.{self.action.data.value}.sync.aligned.u32"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.count)]

    def verify_(self) -> None:
        count = immediate(self.count)
        low, high = _SETMAXNREG_RANGE
        if count is None:
            raise reject(self, f"register count {operand_text(self.count)}", "it is an integer immediate", self.RULE)
        if not low <= count <= high or count % 8:
            raise reject(self, f"register count {count}", f"it must be a multiple of 8 in [{low}, {high}]", self.RULE)


@irdl_op_definition
class ShflSyncOp(Instruction):
    """`shfl.sync.mode.b32 d[|p], a, b, c, membermask`: `d` gets `a` from the lane `mode`
    selects with `b` (lane or offset) and `c` (clamp and segment mask); `p` whether that
    lane was in range. `b`, `c` and the mask are `.b32` registers or immediates."""

    traits = traits_def(WarpLocal())
    name = "ptx.shfl_sync"
    mode = prop_def(ShflModeAttr)
    res = result_def(Reg)
    pred = opt_result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    c = operand_def(RegOrImm)
    mask = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{SYNC_RULE}: shfl.sync"

    def __init__(
        self,
        mode: ShflMode,
        res: RegisterType,
        abc: tuple[SSAValue, SSAValue, SSAValue],
        mask: SSAValue,
        pred: RegisterType | None = None,
    ):
        super().__init__(operands=[*abc, mask, None], result_types=[res, pred], properties={"mode": ShflModeAttr(mode)})

    def mnemonic(self) -> str:
        return f"shfl.sync.{self.mode.data.value}.b32"

    def ptx_operands(self, name: Namer) -> list[str]:
        d = name(self.res) if self.pred is None else f"{name(self.res)}|{name(self.pred)}"
        return [d, name(self.a), name(self.b), name(self.c), name(self.mask)]

    def verify_(self) -> None:
        check_only_register(self, "destination", self.res, "b32", self.RULE)
        check_only_register(self, "predicate destination", self.pred, "pred", self.RULE)
        for role, value in (("operand a", self.a), ("operand b", self.b), ("operand c", self.c),
                            ("member mask", self.mask)):  # fmt: skip
            check_register(self, role, value, "b32", self.RULE)


@irdl_op_definition
class VoteSyncOp(Instruction):
    """`vote.sync.{all,any,uni}.pred d, [!]a, membermask` / `vote.sync.ballot.b32 d, [!]a,
    membermask`: `.ballot` (and only it) writes a `.b32` mask."""

    traits = traits_def(WarpLocal())
    name = "ptx.vote_sync"
    mode = prop_def(VoteModeAttr)
    negate_source = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    src = operand_def(Reg)
    mask = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{SYNC_RULE}: vote.sync"

    def __init__(self, mode: VoteMode, res: RegisterType, src: SSAValue, mask: SSAValue, *, negate: bool = False):
        props: dict[str, Attribute] = {"mode": VoteModeAttr(mode)}
        if negate:
            props["negate_source"] = UnitAttr()
        super().__init__(operands=[src, mask, None], result_types=[res], properties=props)

    def ballot(self) -> bool:
        return self.mode.data is VoteMode.BALLOT

    def mnemonic(self) -> str:
        return f"vote.sync.{self.mode.data.value}.{'b32' if self.ballot() else 'pred'}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), f"{'!' if self.negate_source else ''}{name(self.src)}", name(self.mask)]

    def verify_(self) -> None:
        check_only_register(self, "destination", self.res, "b32" if self.ballot() else "pred", self.RULE)
        check_only_register(self, "source", self.src, "pred", self.RULE)
        check_register(self, "member mask", self.mask, "b32", self.RULE)


@irdl_op_definition
class ReduxSyncOp(Instruction):
    """`redux.sync.op.type d, a, membermask`: `a` reduced over the member lanes, the result
    in every one; `.add .min .max` take `.u32/.s32`, `.and .or .xor` take `.b32` (ptxas 13:
    "Incorrect type ... for operation"; the `.f32` min/max forms are not typed)."""

    traits = traits_def(WarpLocal())
    name = "ptx.redux_sync"
    kind = prop_def(ReduxKindAttr)
    type = prop_def(PtxTypeAttr)
    res = result_def(Reg)
    src = operand_def(RegOrImm)
    mask = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{SYNC_RULE}: redux.sync"

    def __init__(self, kind: ReduxKind, type: PtxType, res: RegisterType, src: SSAValue, mask: SSAValue):
        props: dict[str, Attribute] = {"kind": ReduxKindAttr(kind), "type": PtxTypeAttr(type)}
        super().__init__(operands=[src, mask, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        return f"redux.sync.{self.kind.data.value}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src), name(self.mask)]

    def verify_(self) -> None:
        bitwise = self.kind.data in (ReduxKind.AND, ReduxKind.OR, ReduxKind.XOR)
        allowed = types("b32") if bitwise else types("u32", "s32")
        check_type(self, self.type.data, allowed, f"redux.sync.{self.kind.data.value}", self.RULE)
        check_only_register(self, "destination", self.res, "b32", self.RULE)
        check_register(self, "source", self.src, "b32", self.RULE)
        check_register(self, "member mask", self.mask, "b32", self.RULE)


@irdl_op_definition
class MatchSyncOp(Instruction):
    """`match.any.sync.type d, a, membermask` / `match.all.sync.type d[|p], a, membermask`:
    `d` the `.b32` mask of lanes whose `a` (`.b32`/`.b64`) equals this lane's; only
    `.all` writes the predicate (ptxas: "Predicate output not allowed")."""

    traits = traits_def(WarpLocal())
    name = "ptx.match_sync"
    mode = prop_def(MatchModeAttr)
    type = prop_def(PtxTypeAttr)
    res = result_def(Reg)
    pred = opt_result_def(Reg)
    src = operand_def(RegOrImm)
    mask = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{SYNC_RULE}: match.sync"

    def __init__(
        self, mode: MatchMode, type: PtxType, res: RegisterType, src: SSAValue, mask: SSAValue,
        pred: RegisterType | None = None,
    ):  # fmt: skip
        props: dict[str, Attribute] = {"mode": MatchModeAttr(mode), "type": PtxTypeAttr(type)}
        super().__init__(operands=[src, mask, None], result_types=[res, pred], properties=props)

    def mnemonic(self) -> str:
        return f"match.{self.mode.data.value}.sync.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        d = name(self.res) if self.pred is None else f"{name(self.res)}|{name(self.pred)}"
        return [d, name(self.src), name(self.mask)]

    def verify_(self) -> None:
        t = self.type.data
        check_type(self, t, types("b32", "b64"), "match.sync", self.RULE)
        if self.pred is not None and self.mode.data is MatchMode.ANY:
            raise reject(self, "a predicate destination on match.any", "only match.all writes one", self.RULE)
        check_only_register(self, "destination", self.res, "b32", self.RULE)
        check_only_register(self, "predicate destination", self.pred, "pred", self.RULE)
        check_register(self, "source", self.src, t.register_kind, self.RULE)
        check_register(self, "member mask", self.mask, "b32", self.RULE)


@irdl_op_definition
class ActivemaskOp(Instruction):
    """`activemask.b32 d`: the mask of the warp's active lanes."""

    traits = traits_def(WarpLocal())
    name = "ptx.activemask"
    res = result_def(Reg)

    RULE: ClassVar[str] = f"{SYNC_RULE}: activemask"

    def __init__(self, res: RegisterType):
        super().__init__(operands=[None], result_types=[res])

    def mnemonic(self) -> str:
        return "activemask.b32"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res)]

    def verify_(self) -> None:
        check_only_register(self, "destination", self.res, "b32", self.RULE)


@irdl_op_definition
class NanosleepOp(Instruction):
    """`nanosleep.u32 t`: suspend the thread for about `t` ns (a `.b32` register or immediate)."""

    traits = traits_def(WarpLocal())
    name = "ptx.nanosleep"
    time = operand_def(RegOrImm)

    RULE: ClassVar[str] = "PTX ISA 9.0, Miscellaneous Instructions: nanosleep"

    def __init__(self, time: SSAValue):
        super().__init__(operands=[time, None])

    def mnemonic(self) -> str:
        return "nanosleep.u32"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.time)]

    def verify_(self) -> None:
        check_register(self, "time", self.time, "b32", self.RULE)
