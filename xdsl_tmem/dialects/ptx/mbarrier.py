"""mbarrier instructions: init, inval, arrive (with its variants), expect/complete_tx,
pending_count, test_wait/try_wait (PTX ISA 9.0, Parallel Synchronization and
Communication Instructions: mbarrier)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    IntAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
)

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.ptx.base import (
    Address,
    Instruction,
    Namer,
    Reg,
    RegisterType,
    RegOrImm,
    address_text,
)
from xdsl_tmem.dialects.ptx.qualifiers import (
    SHARED_CTA_SPACES,
    SHARED_SPACES,
    MbarrierTxKind,
    MbarrierTxKindAttr,
    MbarrierWaitKind,
    MbarrierWaitKindAttr,
    MemSemantic,
    MemSemanticAttr,
    StateSpace,
    StateSpaceAttr,
    check_only_register,
    check_register,
    check_space,
    register_class,
    reject,
    space_suffix,
    spell,
)
from xdsl_tmem.dialects.ptx.sync import SYNC_RULE
from xdsl_tmem.dialects.traits import Synchronizes, SyncPoint, WarpLocal


def check_mbarrier_address(op: Instruction, space: StateSpaceAttr | None, addr: SSAValue, rule: str) -> None:
    """A generic mbarrier address is a 64-bit register (`.address_size 64`)."""
    if space is None and isinstance(addr.type, RegisterType) and register_class(addr.type.kind.data) != "b64":
        raise reject(op, f"generic address {addr.type.register_name}", "a generic address is a .b64 register", rule)


# ---- mbarrier ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Ordering:
    """`.sem.scope` of an mbarrier operation; PTX takes both or neither."""

    sem: MemSemantic
    scope: nvvm.MemScopeKind


_MBARRIER_SCOPES = frozenset({nvvm.MemScopeKind.CTA, nvvm.MemScopeKind.CLUSTER})


def _ordering_properties(order: Ordering | None) -> dict[str, Attribute]:
    if order is None:
        return {}
    return {"sem": MemSemanticAttr(order.sem), "scope": nvvm.MemScopeKindAttr(order.scope)}


def _ordering_text(sem: MemSemanticAttr | None, scope: nvvm.MemScopeKindAttr | None) -> str:
    return ("" if sem is None else f".{sem.data.value}") + ("" if scope is None else f".{scope.data.value}")


def _check_ordering(
    op: Instruction,
    sem: MemSemanticAttr | None,
    scope: nvvm.MemScopeKindAttr | None,
    allowed: frozenset[MemSemantic],
    rule: str,
) -> None:
    """`.sem` and `.scope` come together (ptxas: "requires scope" / "requires order");
    the scope is `.cta` or `.cluster`; the semantics are per instruction."""
    if (sem is None) != (scope is None):
        given = f".{sem.data.value}" if sem is not None else f".{scope.data.value}" if scope is not None else ""
        raise reject(op, f"{given} alone", "semantics and scope are given together", rule)
    if sem is not None and sem.data not in allowed:
        order = [s for s in MemSemantic if s in allowed]
        raise reject(op, f"semantics .{sem.data.value}", f"it takes {spell(order)}", rule)
    if scope is not None and scope.data not in _MBARRIER_SCOPES:
        raise reject(op, f"scope .{scope.data.value}", "mbarrier scopes are .cta/.cluster", rule)


@irdl_op_definition
class MbarrierInitOp(Instruction):
    """`mbarrier.init[.shared{::cta}].b64 [addr], count`."""

    name = "ptx.mbarrier_init"
    traits = traits_def(SyncPoint())
    space = opt_prop_def(StateSpaceAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    count = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{SYNC_RULE}: mbarrier.init"

    def __init__(self, space: StateSpace | None, addr: SSAValue, count: SSAValue, offset: int = 0):
        props: dict[str, Attribute] = {"offset": IntAttr(offset)}
        if space is not None:
            props["space"] = StateSpaceAttr(space)
        super().__init__(operands=[addr, count, None], properties=props)

    def mnemonic(self) -> str:
        return f"mbarrier.init{space_suffix(self.space)}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data), name(self.count)]

    def verify_(self) -> None:
        check_space(self, self.space, SHARED_CTA_SPACES, self.RULE)
        check_mbarrier_address(self, self.space, self.addr, self.RULE)
        check_register(self, "count", self.count, "b32", self.RULE)


@irdl_op_definition
class MbarrierInvalOp(Instruction):
    """`mbarrier.inval[.shared{::cta}].b64 [addr]`."""

    name = "ptx.mbarrier_inval"
    traits = traits_def(Synchronizes())
    space = opt_prop_def(StateSpaceAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)

    RULE: ClassVar[str] = f"{SYNC_RULE}: mbarrier.inval"

    def __init__(self, space: StateSpace | None, addr: SSAValue, offset: int = 0):
        props: dict[str, Attribute] = {"offset": IntAttr(offset)}
        if space is not None:
            props["space"] = StateSpaceAttr(space)
        super().__init__(operands=[addr, None], properties=props)

    def mnemonic(self) -> str:
        return f"mbarrier.inval{space_suffix(self.space)}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data)]

    def verify_(self) -> None:
        check_space(self, self.space, SHARED_CTA_SPACES, self.RULE)
        check_mbarrier_address(self, self.space, self.addr, self.RULE)


@dataclass(frozen=True)
class ArriveVariant:
    """`mbarrier.arrive_drop` (`drop`) and `.noComplete` (`no_complete`)."""

    drop: bool = False
    no_complete: bool = False


@irdl_op_definition
class MbarrierArriveOp(Instruction):
    """`mbarrier.arrive{,_drop}[.noComplete][.expect_tx][.sem.scope][.space].b64 state|_, [addr][, count]`.

    Without a `state` result the sink `_` is printed; the `.shared::cluster` form only
    takes the sink; `.expect_tx` needs its count (the transaction bytes). `arrive_drop`
    also lowers the expected arrival count of this and every later phase by the count;
    `.noComplete` (the caller promises the arrive does not complete the phase) needs a
    count and takes neither `.expect_tx`, `.relaxed`, `.cluster` nor `.shared::cluster`
    (ptxas 13: "cannot be combined with modifier '.noComplete'")."""

    name = "ptx.mbarrier_arrive"
    traits = traits_def(Synchronizes())
    drop = opt_prop_def(UnitAttr)
    no_complete = opt_prop_def(UnitAttr)
    expect_tx = opt_prop_def(UnitAttr)
    sem = opt_prop_def(MemSemanticAttr)
    scope = opt_prop_def(nvvm.MemScopeKindAttr)
    space = opt_prop_def(StateSpaceAttr)
    offset = prop_def(IntAttr)
    state = opt_result_def(Reg)
    addr = operand_def(Address)
    count = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{SYNC_RULE}: mbarrier.arrive"

    def __init__(
        self,
        space: StateSpace | None,
        addr: SSAValue,
        count: SSAValue | None = None,
        state: RegisterType | None = None,
        offset: int = 0,
        *,
        expect_tx: bool = False,
        order: Ordering | None = None,
        variant: ArriveVariant = ArriveVariant(),
    ):
        props: dict[str, Attribute] = {"offset": IntAttr(offset), **_ordering_properties(order)}
        if space is not None:
            props["space"] = StateSpaceAttr(space)
        flags = (("drop", variant.drop), ("no_complete", variant.no_complete), ("expect_tx", expect_tx))
        for flag, on in flags:
            if on:
                props[flag] = UnitAttr()
        super().__init__(
            operands=[addr, count, None], result_types=[[state] if state is not None else []], properties=props
        )

    def mnemonic(self) -> str:
        drop = "_drop" if self.drop else ""
        no_complete = ".noComplete" if self.no_complete else ""
        expect_tx = ".expect_tx" if self.expect_tx else ""
        order = _ordering_text(self.sem, self.scope)
        return f"mbarrier.arrive{drop}{no_complete}{expect_tx}{order}{space_suffix(self.space)}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        state = "_" if self.state is None else name(self.state)
        count = [] if self.count is None else [name(self.count)]
        return [state, address_text(name, self.addr, self.offset.data), *count]

    def verify_(self) -> None:
        rule = self.RULE
        check_space(self, self.space, SHARED_SPACES, rule)
        _check_ordering(self, self.sem, self.scope, frozenset({MemSemantic.RELEASE, MemSemantic.RELAXED}), rule)
        check_mbarrier_address(self, self.space, self.addr, rule)
        cluster = self.space is not None and self.space.data is StateSpace.SHARED_CLUSTER
        if cluster and self.state is not None:
            raise reject(self, f"state register {self.state.type}", "the .shared::cluster form writes the sink _", rule)
        if self.expect_tx and self.count is None:
            raise reject(self, ".expect_tx without a count", "it takes the transaction count", rule)
        if self.no_complete:
            self._verify_no_complete(cluster)
        if self.state is not None:
            check_only_register(self, "state", self.state, "b64", rule)
        check_register(self, "count", self.count, "b32", rule)

    def _verify_no_complete(self, cluster: bool) -> None:
        rule, without = self.RULE, "it takes neither .expect_tx nor .shared::cluster"
        if self.count is None:
            raise reject(self, ".noComplete without a count", "it takes the arrival count", rule)
        if self.expect_tx:
            raise reject(self, ".noComplete with .expect_tx", without, rule)
        if cluster:
            raise reject(self, ".noComplete on .shared::cluster", without, rule)
        ordering = "it takes .release.cta or no ordering"
        if self.sem is not None and self.sem.data is not MemSemantic.RELEASE:
            raise reject(self, f".noComplete with .{self.sem.data.value}", ordering, rule)
        if self.scope is not None and self.scope.data is not nvvm.MemScopeKind.CTA:
            raise reject(self, f".noComplete with .{self.scope.data.value}", ordering, rule)


@irdl_op_definition
class MbarrierPendingCountOp(Instruction):
    """`mbarrier.pending_count.b64 count, state`: the pending arrival count held in the
    `.b64` state an arrive returned (the count before that arrive: docs/silicon.md)."""

    name = "ptx.mbarrier_pending_count"
    traits = traits_def(WarpLocal())  # reads the state register only, never the barrier
    res = result_def(Reg)
    state = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{SYNC_RULE}: mbarrier.pending_count"

    def __init__(self, res: RegisterType, state: SSAValue):
        super().__init__(operands=[state, None], result_types=[res])

    def mnemonic(self) -> str:
        return "mbarrier.pending_count.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.state)]

    def verify_(self) -> None:
        check_only_register(self, "destination", self.res, "b32", self.RULE)
        check_only_register(self, "state", self.state, "b64", self.RULE)


@irdl_op_definition
class MbarrierExpectTxOp(Instruction):
    """`mbarrier.{expect_tx,complete_tx}[.relaxed.scope][.space].b64 [addr], tx`."""

    name = "ptx.mbarrier_tx"
    traits = traits_def(Synchronizes())
    kind = prop_def(MbarrierTxKindAttr)
    sem = opt_prop_def(MemSemanticAttr)
    scope = opt_prop_def(nvvm.MemScopeKindAttr)
    space = opt_prop_def(StateSpaceAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    tx = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{SYNC_RULE}: mbarrier.expect_tx / mbarrier.complete_tx"

    def __init__(
        self,
        kind: MbarrierTxKind,
        space: StateSpace | None,
        addr: SSAValue,
        tx: SSAValue,
        offset: int = 0,
        *,
        order: Ordering | None = None,
    ):
        props: dict[str, Attribute] = {"kind": MbarrierTxKindAttr(kind), "offset": IntAttr(offset)}
        props.update(_ordering_properties(order))
        if space is not None:
            props["space"] = StateSpaceAttr(space)
        super().__init__(operands=[addr, tx, None], properties=props)

    def mnemonic(self) -> str:
        order = _ordering_text(self.sem, self.scope)
        return f"mbarrier.{self.kind.data.value}{order}{space_suffix(self.space)}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data), name(self.tx)]

    def verify_(self) -> None:
        check_space(self, self.space, SHARED_SPACES, self.RULE)
        _check_ordering(self, self.sem, self.scope, frozenset({MemSemantic.RELAXED}), self.RULE)
        check_mbarrier_address(self, self.space, self.addr, self.RULE)
        check_register(self, "transaction count", self.tx, "b32", self.RULE)


@dataclass(frozen=True)
class MbarrierWaitForm:
    """The qualifiers of an mbarrier probe: `mbarrier.<kind>[.parity][.sem.scope][.space]`."""

    kind: MbarrierWaitKind
    parity: bool = True
    space: StateSpace | None = StateSpace.SHARED
    order: Ordering | None = None


@irdl_op_definition
class MbarrierWaitOp(Instruction):
    """`mbarrier.{try_wait,test_wait}[.parity][.sem.scope][.space].b64 p, [addr], phase|state[, ticks]`.

    One probe; the blocking wait is this plus `@!p bra` back to it. With `.parity` the
    phase is a `.b32` register or immediate, else the `.b64` state of an arrive;
    `test_wait` never suspends, so it takes no time hint."""

    name = "ptx.mbarrier_wait"
    traits = traits_def(Synchronizes())
    kind = prop_def(MbarrierWaitKindAttr)
    parity = opt_prop_def(UnitAttr)
    sem = opt_prop_def(MemSemanticAttr)
    scope = opt_prop_def(nvvm.MemScopeKindAttr)
    space = opt_prop_def(StateSpaceAttr)
    offset = prop_def(IntAttr)
    res = result_def(Reg)
    addr = operand_def(Address)
    phase = operand_def(RegOrImm)
    ticks = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{SYNC_RULE}: mbarrier.test_wait / mbarrier.try_wait"

    def __init__(
        self,
        form: MbarrierWaitForm,
        res: RegisterType,
        addr: SSAValue,
        phase: SSAValue,
        ticks: SSAValue | None = None,
        offset: int = 0,
    ):
        props: dict[str, Attribute] = {"kind": MbarrierWaitKindAttr(form.kind), "offset": IntAttr(offset)}
        props.update(_ordering_properties(form.order))
        if form.parity:
            props["parity"] = UnitAttr()
        if form.space is not None:
            props["space"] = StateSpaceAttr(form.space)
        super().__init__(operands=[addr, phase, ticks, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        parity = ".parity" if self.parity else ""
        order = _ordering_text(self.sem, self.scope)
        return f"mbarrier.{self.kind.data.value}{parity}{order}{space_suffix(self.space)}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        ticks = [] if self.ticks is None else [name(self.ticks)]
        return [name(self.res), address_text(name, self.addr, self.offset.data), name(self.phase), *ticks]

    def verify_(self) -> None:
        rule = self.RULE
        check_space(self, self.space, SHARED_CTA_SPACES, rule)
        _check_ordering(self, self.sem, self.scope, frozenset({MemSemantic.ACQUIRE, MemSemantic.RELAXED}), rule)
        check_mbarrier_address(self, self.space, self.addr, rule)
        check_only_register(self, "destination", self.res, "pred", rule)
        if self.parity:
            check_register(self, "phase parity", self.phase, "b32", rule)
        else:
            check_only_register(self, "state", self.phase, "b64", rule)
        if self.ticks is not None and self.kind.data is MbarrierWaitKind.TEST_WAIT:
            raise reject(self, "a time hint on test_wait", "only try_wait takes suspendTimeHint", rule)
        check_register(self, "time hint", self.ticks, "b32", rule)
