"""Barriers, fences, mbarriers and warp election.

Qualifiers are typed (`.sem` a `MemSemantic`, `.scope` the nvvm dialect's
`MemScopeKind`, state spaces a `StateSpace`, `bar.red`'s operation the nvvm dialect's
`BarrierReduction`); each verifier states the PTX ISA 9.0 rule (Parallel
Synchronization and Communication Instructions) and is checked against ptxas.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from xdsl.dialects.builtin import (
    UnitAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.ptx.base import (
    Instruction,
    Namer,
    Reg,
    RegisterType,
    RegOrImm,
)
from xdsl_tmem.dialects.ptx.qualifiers import (
    BarrierClusterKind,
    BarrierClusterKindAttr,
    BarrierKind,
    BarrierKindAttr,
    MemSemantic,
    MemSemanticAttr,
    check_only_register,
    check_register,
    immediate,
    reject,
    spell,
)
from xdsl_tmem.dialects.traits import ThreadBarrier, WarpLocal

SYNC_RULE = "PTX ISA 9.0, Parallel Synchronization and Communication Instructions"


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


@dataclass(frozen=True)
class BarRedSpelling:
    """How a `bar.red` is written: `barrier.` instead of `bar.`, `.cta`, `.aligned`
    (only on `barrier.`)."""

    barrier: bool = False
    cta: bool = False
    aligned: bool = False


@irdl_op_definition
class BarRedOp(Instruction):
    """`bar.red.popc.u32 d, id[, count], {!}p` (`d` a `.b32` register) or
    `bar.red.{and,or}.pred d, id[, count], {!}p` (`d` a predicate); `p` is a predicate,
    negated with `!`. Spelled `barrier.red.op[.aligned].type` with `barrier`; `bar.red`
    is `barrier.red.aligned` (PTX ISA 9.0, bar/barrier)."""

    name = "ptx.bar_red"
    traits = traits_def(ThreadBarrier())
    reduction = prop_def(nvvm.BarrierReductionAttr)
    barrier = opt_prop_def(UnitAttr)
    """Spelled `barrier.red` (else `bar.red`)."""
    cta = opt_prop_def(UnitAttr)
    """`bar.cta.red` / `barrier.cta.red`: the same instruction, the scope spelled out."""
    aligned = opt_prop_def(UnitAttr)
    """`barrier.red...aligned` (`bar.red` is aligned without saying so)."""
    negate_source = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    id = operand_def(RegOrImm)
    count = opt_operand_def(RegOrImm)
    pred = operand_def(Reg)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{SYNC_RULE}: bar.red"

    def __init__(
        self,
        reduction: nvvm.BarrierReduction,
        res: RegisterType,
        id: SSAValue,
        count: SSAValue | None,
        pred: SSAValue,
        *,
        spelling: BarRedSpelling = BarRedSpelling(),
        negate: bool = False,
    ):
        props: dict[str, Attribute] = {"reduction": nvvm.BarrierReductionAttr(reduction)}
        flags = (*((f.name, getattr(spelling, f.name)) for f in fields(spelling)), ("negate_source", negate))
        for flag, on in flags:
            if on:
                props[flag] = UnitAttr()
        super().__init__(operands=[id, count, pred, None], result_types=[res], properties=props)

    def popc(self) -> bool:
        return self.reduction.data is nvvm.BarrierReduction.POPC

    def is_aligned(self) -> bool:
        """Whether every thread of a warp must execute this same instruction."""
        return self.barrier is None or self.aligned is not None

    def mnemonic(self) -> str:
        opcode = ("barrier" if self.barrier else "bar") + (".cta" if self.cta else "")
        aligned = ".aligned" if self.aligned else ""
        return f"{opcode}.red.{self.reduction.data.value}{aligned}.{'u32' if self.popc() else 'pred'}"

    def ptx_operands(self, name: Namer) -> list[str]:
        count = [] if self.count is None else [name(self.count)]
        return [name(self.res), name(self.id), *count, f"{'!' if self.negate_source else ''}{name(self.pred)}"]

    def verify_(self) -> None:
        if self.aligned is not None and self.barrier is None:
            raise reject(
                self, ".aligned on bar.red", "bar.red is aligned; .aligned is spelled on barrier.red", self.RULE
            )
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


@irdl_op_definition
class BarrierOp(Instruction):
    """`barrier.sync[.aligned] id[, count]` / `barrier.arrive[.aligned] id, count`. Without
    `.aligned` the threads of a warp may reach it at different instructions (divergence);
    `bar.sync`/`bar.arrive` (`ptx.bar_sync`, `ptx.bar_arrive`) are the `.aligned` forms."""

    traits = traits_def(ThreadBarrier())
    name = "ptx.barrier"
    kind = prop_def(BarrierKindAttr)
    cta = opt_prop_def(UnitAttr)
    """`barrier.cta.*`: the same instruction, the scope spelled out."""
    aligned = opt_prop_def(UnitAttr)
    id = operand_def(RegOrImm)
    count = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{SYNC_RULE}: barrier"

    def __init__(
        self,
        kind: BarrierKind,
        id: SSAValue,
        count: SSAValue | None = None,
        *,
        aligned: bool = False,
        cta: bool = False,
    ):
        props: dict[str, Attribute] = {"kind": BarrierKindAttr(kind)}
        if aligned:
            props["aligned"] = UnitAttr()
        if cta:
            props["cta"] = UnitAttr()
        super().__init__(operands=[id, count, None], properties=props)

    def mnemonic(self) -> str:
        return f"barrier{'.cta' if self.cta else ''}.{self.kind.data.value}{'.aligned' if self.aligned else ''}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.id)] + ([] if self.count is None else [name(self.count)])

    def verify_(self) -> None:
        if self.kind.data is BarrierKind.ARRIVE and self.count is None:
            raise reject(self, "barrier.arrive without a thread count", "barrier.arrive takes id, count", self.RULE)
        _check_barrier_operands(self, self.id, self.count, self.RULE)
