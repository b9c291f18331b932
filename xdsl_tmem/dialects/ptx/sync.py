"""Barriers, fences, mbarriers and warp election.

Qualifiers are typed (`.sem` a `MemSemantic`, `.scope` the nvvm dialect's
`MemScopeKind`, state spaces a `StateSpace`, `bar.red`'s operation the nvvm dialect's
`BarrierReduction`); each verifier states the PTX ISA 9.0 rule (Parallel
Synchronization and Communication Instructions) and is checked against ptxas.
"""

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
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
)

from xdsl_tmem.dialects import nvvm
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
    BarrierClusterKind,
    BarrierClusterKindAttr,
    BarrierKind,
    BarrierKindAttr,
    MatchMode,
    MatchModeAttr,
    MbarrierTxKind,
    MbarrierTxKindAttr,
    MbarrierWaitKind,
    MbarrierWaitKindAttr,
    MemSemantic,
    MemSemanticAttr,
    PtxType,
    PtxTypeAttr,
    ReduxKind,
    ReduxKindAttr,
    SetmaxnregAction,
    SetmaxnregActionAttr,
    ShflMode,
    ShflModeAttr,
    StateSpace,
    StateSpaceAttr,
    VoteMode,
    VoteModeAttr,
    check_only_register,
    check_register,
    check_type,
    immediate,
    operand_text,
    register_class,
    reject,
    spell,
    types,
)
from xdsl_tmem.dialects.traits import Synchronizes, SyncPoint, ThreadBarrier, WarpLocal

SYNC_RULE = "PTX ISA 9.0, Parallel Synchronization and Communication Instructions"


def _space_suffix(space: StateSpaceAttr | None) -> str:
    return "" if space is None else f".{space.data.value}"


def _check_space(op: Instruction, space: StateSpaceAttr | None, allowed: frozenset[StateSpace], rule: str) -> None:
    if space is not None and space.data not in allowed:
        order = [s for s in StateSpace if s in allowed]
        raise reject(op, f"state space .{space.data.value}", f"it takes {spell(order)} or none (generic)", rule)


def _check_mbarrier_address(op: Instruction, space: StateSpaceAttr | None, addr: SSAValue, rule: str) -> None:
    """A generic mbarrier address is a 64-bit register (`.address_size 64`)."""
    if space is None and isinstance(addr.type, RegisterType) and register_class(addr.type.kind.data) != "b64":
        raise reject(op, f"generic address {addr.type.register_name}", "a generic address is a .b64 register", rule)


# ---- barriers -------------------------------------------------------------------------------


def _check_barrier_operands(op: Instruction, id: SSAValue, count: SSAValue | None, rule: str) -> None:
    """`bar`: the barrier number is 0..15 and a thread count a multiple of the warp size
    (both `.u32` registers or immediates)."""
    check_register(op, "barrier number", id, "b32", rule)
    check_register(op, "thread count", count, "b32", rule)
    if (number := immediate(id)) is not None and not 0 <= number <= 15:
        raise reject(op, f"barrier number {number}", "barriers are numbered 0..15", rule)
    if (threads := immediate(count)) is not None and (threads <= 0 or threads % 32):
        raise reject(op, f"thread count {threads}", "it must be a positive multiple of the warp size (32)", rule)


@irdl_op_definition
class BarSyncOp(Instruction):
    """`bar.sync id[, count]` (`barrier.sync.aligned`)."""

    name = "ptx.bar_sync"
    traits = traits_def(ThreadBarrier())
    id = operand_def(RegOrImm)
    count = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{SYNC_RULE}: bar.sync"

    def __init__(self, id: SSAValue, count: SSAValue | None = None):
        super().__init__(operands=[id, count, None])

    def mnemonic(self) -> str:
        return "bar.sync"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.id)] + ([] if self.count is None else [name(self.count)])

    def verify_(self) -> None:
        _check_barrier_operands(self, self.id, self.count, self.RULE)


@irdl_op_definition
class BarRedOp(Instruction):
    """`bar.red.popc.u32 d, id[, count], p` (`d` a `.b32` register) or
    `bar.red.{and,or}.pred d, id[, count], p` (`d` a predicate); `p` is a predicate."""

    name = "ptx.bar_red"
    traits = traits_def(ThreadBarrier())
    reduction = prop_def(nvvm.BarrierReductionAttr)
    res = result_def(Reg)
    id = operand_def(RegOrImm)
    count = opt_operand_def(RegOrImm)
    pred = operand_def(Reg)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{SYNC_RULE}: bar.red"

    def __init__(
        self, reduction: nvvm.BarrierReduction, res: RegisterType, id: SSAValue, count: SSAValue | None, pred: SSAValue
    ):
        super().__init__(
            operands=[id, count, pred, None],
            result_types=[res],
            properties={"reduction": nvvm.BarrierReductionAttr(reduction)},
        )

    def popc(self) -> bool:
        return self.reduction.data is nvvm.BarrierReduction.POPC

    def mnemonic(self) -> str:
        return f"bar.red.{self.reduction.data.value}.{'u32' if self.popc() else 'pred'}"

    def ptx_operands(self, name: Namer) -> list[str]:
        count = [] if self.count is None else [name(self.count)]
        return [name(self.res), name(self.id), *count, name(self.pred)]

    def verify_(self) -> None:
        _check_barrier_operands(self, self.id, self.count, self.RULE)
        check_only_register(self, "destination", self.res, "b32" if self.popc() else "pred", self.RULE)
        check_only_register(self, "predicate operand", self.pred, "pred", self.RULE)


@irdl_op_definition
class BarArriveOp(Instruction):
    """`bar.arrive id, count` (the thread count is required)."""

    name = "ptx.bar_arrive"
    traits = traits_def(ThreadBarrier())
    id = operand_def(RegOrImm)
    count = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{SYNC_RULE}: bar.arrive"

    def __init__(self, id: SSAValue, count: SSAValue):
        super().__init__(operands=[id, count, None])

    def mnemonic(self) -> str:
        return "bar.arrive"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.id), name(self.count)]

    def verify_(self) -> None:
        _check_barrier_operands(self, self.id, self.count, self.RULE)


@irdl_op_definition
class BarWarpSyncOp(Instruction):
    """`bar.warp.sync membermask` (a `.b32` register or immediate)."""

    name = "ptx.bar_warp_sync"
    traits = traits_def(WarpLocal())
    mask = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{SYNC_RULE}: bar.warp.sync"

    def __init__(self, mask: SSAValue):
        super().__init__(operands=[mask, None])

    def mnemonic(self) -> str:
        return "bar.warp.sync"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.mask)]

    def verify_(self) -> None:
        check_register(self, "member mask", self.mask, "b32", self.RULE)


_CLUSTER_SEMANTICS = {
    BarrierClusterKind.ARRIVE: frozenset({MemSemantic.RELEASE, MemSemantic.RELAXED}),
    BarrierClusterKind.WAIT: frozenset({MemSemantic.ACQUIRE}),
}


@irdl_op_definition
class BarrierClusterOp(Instruction):
    """`barrier.cluster.arrive[.release|.relaxed][.aligned]`,
    `barrier.cluster.wait[.acquire][.aligned]`."""

    name = "ptx.barrier_cluster"
    traits = traits_def(ThreadBarrier())
    kind = prop_def(BarrierClusterKindAttr)
    sem = opt_prop_def(MemSemanticAttr)
    aligned = opt_prop_def(UnitAttr)

    RULE: ClassVar[str] = f"{SYNC_RULE}: barrier.cluster"

    def __init__(self, kind: BarrierClusterKind, *, sem: MemSemantic | None = None, aligned: bool = False):
        props: dict[str, Attribute] = {"kind": BarrierClusterKindAttr(kind)}
        if sem is not None:
            props["sem"] = MemSemanticAttr(sem)
        if aligned:
            props["aligned"] = UnitAttr()
        super().__init__(operands=[None], properties=props)

    def mnemonic(self) -> str:
        sem = "" if self.sem is None else f".{self.sem.data.value}"
        return f"barrier.cluster.{self.kind.data.value}{sem}" + (".aligned" if self.aligned else "")

    def ptx_operands(self, name: Namer) -> list[str]:
        return []

    def verify_(self) -> None:
        allowed = _CLUSTER_SEMANTICS[self.kind.data]
        if self.sem is not None and self.sem.data not in allowed:
            order = [s for s in MemSemantic if s in allowed]
            raise reject(self, f".{self.sem.data.value} on barrier.cluster.{self.kind.data.value}",
                         f"it takes {spell(order)}", self.RULE)  # fmt: skip


# ---- fences ---------------------------------------------------------------------------------


_FENCE_SEMANTICS = frozenset({MemSemantic.SC, MemSemantic.ACQ_REL, MemSemantic.ACQUIRE, MemSemantic.RELEASE})


@irdl_op_definition
class FenceOp(Instruction):
    """`fence.sem.scope`: a memory fence (`.sc`, `.acq_rel`, `.acquire`, `.release`;
    the scope is required)."""

    name = "ptx.fence"
    traits = traits_def(WarpLocal())
    sem = prop_def(MemSemanticAttr)
    scope = prop_def(nvvm.MemScopeKindAttr)

    RULE: ClassVar[str] = f"{SYNC_RULE}: membar/fence"

    def __init__(self, sem: MemSemantic, scope: nvvm.MemScopeKind):
        super().__init__(
            operands=[None], properties={"sem": MemSemanticAttr(sem), "scope": nvvm.MemScopeKindAttr(scope)}
        )

    def mnemonic(self) -> str:
        return f"fence.{self.sem.data.value}.{self.scope.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return []

    def verify_(self) -> None:
        if self.sem.data not in _FENCE_SEMANTICS:
            order = [s for s in MemSemantic if s in _FENCE_SEMANTICS]
            raise reject(self, f"semantics .{self.sem.data.value}", f"fence takes {spell(order)}", self.RULE)


_PROXY_KINDS = frozenset({nvvm.ProxyKind.ALIAS, nvvm.ProxyKind.ASYNC, nvvm.ProxyKind.ASYNC_GLOBAL})


@irdl_op_definition
class FenceProxyOp(Instruction):
    """`fence.proxy.{alias,async,async.global}` and
    `fence.proxy.async.shared::{cta,cluster}` (the shared form needs its space, the
    others take none). The `tensormap` proxy fences have another syntax (not modelled)."""

    name = "ptx.fence_proxy"
    traits = traits_def(WarpLocal())
    kind = prop_def(nvvm.ProxyKindAttr)
    space = opt_prop_def(nvvm.SharedSpaceAttr)

    RULE: ClassVar[str] = f"{SYNC_RULE}: membar/fence (fence.proxy)"

    def __init__(self, kind: nvvm.ProxyKind, space: nvvm.SharedSpace | None = None):
        props: dict[str, Attribute] = {"kind": nvvm.ProxyKindAttr(kind)}
        if space is not None:
            props["space"] = nvvm.SharedSpaceAttr(space)
        super().__init__(operands=[None], properties=props)

    def mnemonic(self) -> str:
        space = "" if self.space is None else f"::{self.space.data.value}"
        return f"fence.proxy.{self.kind.data.value}{space}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return []

    def verify_(self) -> None:
        kind = self.kind.data
        if kind is nvvm.ProxyKind.ASYNC_SHARED:
            if self.space is None:
                raise reject(self, "fence.proxy.async.shared without ::cta/::cluster", "the space is required",
                             self.RULE)  # fmt: skip
            return
        if kind not in _PROXY_KINDS:
            allowed = spell([k for k in nvvm.ProxyKind if k in _PROXY_KINDS or k is nvvm.ProxyKind.ASYNC_SHARED])
            raise reject(self, f"proxy kind .{kind.value}", f"fence.proxy takes {allowed}", self.RULE)
        if self.space is not None:
            raise reject(self, f"space ::{self.space.data.value} on .{kind.value}", "only async.shared takes a space",
                         self.RULE)  # fmt: skip


@irdl_op_definition
class FenceMbarrierInitOp(Instruction):
    """`fence.mbarrier_init.release.cluster` (the only semantics and scope it takes)."""

    name = "ptx.fence_mbarrier_init"
    traits = traits_def(WarpLocal())

    def __init__(self):
        super().__init__(operands=[None])

    def mnemonic(self) -> str:
        return "fence.mbarrier_init.release.cluster"

    def ptx_operands(self, name: Namer) -> list[str]:
        return []


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
        return f"mbarrier.init{_space_suffix(self.space)}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data), name(self.count)]

    def verify_(self) -> None:
        _check_space(self, self.space, SHARED_CTA_SPACES, self.RULE)
        _check_mbarrier_address(self, self.space, self.addr, self.RULE)
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
        return f"mbarrier.inval{_space_suffix(self.space)}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data)]

    def verify_(self) -> None:
        _check_space(self, self.space, SHARED_CTA_SPACES, self.RULE)
        _check_mbarrier_address(self, self.space, self.addr, self.RULE)


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
        return f"mbarrier.arrive{drop}{no_complete}{expect_tx}{order}{_space_suffix(self.space)}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        state = "_" if self.state is None else name(self.state)
        count = [] if self.count is None else [name(self.count)]
        return [state, address_text(name, self.addr, self.offset.data), *count]

    def verify_(self) -> None:
        rule = self.RULE
        _check_space(self, self.space, SHARED_SPACES, rule)
        _check_ordering(self, self.sem, self.scope, frozenset({MemSemantic.RELEASE, MemSemantic.RELAXED}), rule)
        _check_mbarrier_address(self, self.space, self.addr, rule)
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
        return f"mbarrier.{self.kind.data.value}{order}{_space_suffix(self.space)}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data), name(self.tx)]

    def verify_(self) -> None:
        _check_space(self, self.space, SHARED_SPACES, self.RULE)
        _check_ordering(self, self.sem, self.scope, frozenset({MemSemantic.RELAXED}), self.RULE)
        _check_mbarrier_address(self, self.space, self.addr, self.RULE)
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
        return f"mbarrier.{self.kind.data.value}{parity}{order}{_space_suffix(self.space)}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        ticks = [] if self.ticks is None else [name(self.ticks)]
        return [name(self.res), address_text(name, self.addr, self.offset.data), name(self.phase), *ticks]

    def verify_(self) -> None:
        rule = self.RULE
        _check_space(self, self.space, SHARED_CTA_SPACES, rule)
        _check_ordering(self, self.sem, self.scope, frozenset({MemSemantic.ACQUIRE, MemSemantic.RELAXED}), rule)
        _check_mbarrier_address(self, self.space, self.addr, rule)
        check_only_register(self, "destination", self.res, "pred", rule)
        if self.parity:
            check_register(self, "phase parity", self.phase, "b32", rule)
        else:
            check_only_register(self, "state", self.phase, "b64", rule)
        if self.ticks is not None and self.kind.data is MbarrierWaitKind.TEST_WAIT:
            raise reject(self, "a time hint on test_wait", "only try_wait takes suspendTimeHint", rule)
        check_register(self, "time hint", self.ticks, "b32", rule)


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


@irdl_op_definition
class BarrierOp(Instruction):
    """`barrier.sync[.aligned] id[, count]` / `barrier.arrive[.aligned] id, count`. Without
    `.aligned` the threads of a warp may reach it at different instructions (divergence);
    `bar.sync`/`bar.arrive` (`ptx.bar_sync`, `ptx.bar_arrive`) are the `.aligned` forms."""

    traits = traits_def(ThreadBarrier())
    name = "ptx.barrier"
    kind = prop_def(BarrierKindAttr)
    aligned = opt_prop_def(UnitAttr)
    id = operand_def(RegOrImm)
    count = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{SYNC_RULE}: barrier"

    def __init__(self, kind: BarrierKind, id: SSAValue, count: SSAValue | None = None, *, aligned: bool = False):
        props: dict[str, Attribute] = {"kind": BarrierKindAttr(kind)}
        if aligned:
            props["aligned"] = UnitAttr()
        super().__init__(operands=[id, count, None], properties=props)

    def mnemonic(self) -> str:
        return f"barrier.{self.kind.data.value}{'.aligned' if self.aligned else ''}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.id)] + ([] if self.count is None else [name(self.count)])

    def verify_(self) -> None:
        if self.kind.data is BarrierKind.ARRIVE and self.count is None:
            raise reject(self, "barrier.arrive without a thread count", "barrier.arrive takes id, count", self.RULE)
        _check_barrier_operands(self, self.id, self.count, self.RULE)


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
