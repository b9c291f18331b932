"""Rules for the `nvvm` dialect's special registers, barriers, fences, elect, mapa
and mbarriers.

Mnemonics are llc-22's (`mbarrier.init.shared.b64`, `barrier.cluster.arrive`, ...), so that
they compare one for one with llc-22's output (`tests/test_ptx_backend.py`).
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import (
    IntegerAttr,
    i32,
)
from xdsl.ir import SSAValue

from xdsl_tmem.backend.isel.core import (
    Address,
    FunctionSelector,
    address_space,
    rule,
)
from xdsl_tmem.dialects import nvvm, ptx
from xdsl_tmem.dialects.ptx import (
    BarrierClusterKind,
    CmpOp,
    MbarrierTxKind,
    MbarrierWaitKind,
    MemSemantic,
    PtxType,
    StateSpace,
)

# --------------------------------------------------------------------------------------
# Special registers
# --------------------------------------------------------------------------------------


def _special(fs: FunctionSelector, op: nvvm.SpecialRegisterOp) -> None:
    (result,) = op.results
    wide = result.type != i32
    register = fs.fresh("b64" if wide else "b32")
    source = fs.special(op.ptx_register())
    fs.define(result, [fs.emit(ptx.MovOp(PtxType.U64 if wide else PtxType.U32, register, source)).res])


# `%warpsize` is the constant 32 (below), as llc-22 emits it.
for _op in nvvm.NVVM.operations:
    if issubclass(_op, nvvm.SpecialRegisterOp) and _op is not nvvm.WarpSizeOp:
        rule(_op)(_special)


@rule(nvvm.WarpSizeOp)
def _warp_size(fs: FunctionSelector, op: nvvm.WarpSizeOp) -> None:
    fs.define(op.res, [fs.imm(32)])


# --------------------------------------------------------------------------------------
# Barriers, fences, elect, mapa
# --------------------------------------------------------------------------------------


@rule(nvvm.Barrier0Op)
def _barrier0(fs: FunctionSelector, op: nvvm.Barrier0Op) -> None:
    fs.emit(ptx.BarSyncOp(fs.imm(0)))


@rule(nvvm.BarrierOp)
def _barrier(fs: FunctionSelector, op: nvvm.BarrierOp) -> None:
    barrier_id = fs.scalar(op.barrier_id) if op.barrier_id is not None else fs.imm(0)
    count = fs.scalar(op.number_of_threads) if op.number_of_threads is not None else None
    if op.reduction_op is None:
        fs.emit(ptx.BarSyncOp(barrier_id, count))
        return
    # bar.red: the i32 predicate operand is tested against zero.
    assert op.reduction_predicate is not None
    assert op.res is not None
    predicate = fs.emit(
        ptx.SetpOp(CmpOp.NE, PtxType.B32, fs.fresh("pred"), fs.reg(op.reduction_predicate), fs.imm(0))
    ).res
    reduction = op.reduction_op.data
    if reduction is nvvm.BarrierReduction.POPC:
        result = fs.emit(ptx.BarRedOp(reduction, fs.fresh("b32"), barrier_id, count, predicate)).res
    else:
        flag = fs.emit(ptx.BarRedOp(reduction, fs.fresh("pred"), barrier_id, count, predicate)).res
        result = fs.emit(ptx.SelpOp(PtxType.B32, fs.fresh("b32"), fs.imm(1), fs.imm(0), flag)).res
    fs.define(op.res, [result])


@rule(nvvm.BarrierArriveOp)
def _barrier_arrive(fs: FunctionSelector, op: nvvm.BarrierArriveOp) -> None:
    barrier_id = fs.scalar(op.barrier_id) if op.barrier_id is not None else fs.imm(0)
    fs.emit(ptx.BarArriveOp(barrier_id, fs.scalar(op.number_of_threads)))


@rule(nvvm.SyncWarpOp)
def _bar_warp_sync(fs: FunctionSelector, op: nvvm.SyncWarpOp) -> None:
    fs.emit(ptx.BarWarpSyncOp(fs.scalar(op.mask)))


def _cluster_barrier(
    fs: FunctionSelector, op: nvvm.NVVMOp, kind: BarrierClusterKind, sem: MemSemantic | None = None
) -> None:
    fs.emit(ptx.BarrierClusterOp(kind, sem=sem, aligned=op.properties.get("aligned") is not None))


@rule(nvvm.ClusterArriveOp)
def _cluster_arrive(fs: FunctionSelector, op: nvvm.ClusterArriveOp) -> None:
    _cluster_barrier(fs, op, BarrierClusterKind.ARRIVE)


@rule(nvvm.ClusterArriveRelaxedOp)
def _cluster_arrive_relaxed(fs: FunctionSelector, op: nvvm.ClusterArriveRelaxedOp) -> None:
    _cluster_barrier(fs, op, BarrierClusterKind.ARRIVE, MemSemantic.RELAXED)


@rule(nvvm.ClusterWaitOp)
def _cluster_wait(fs: FunctionSelector, op: nvvm.ClusterWaitOp) -> None:
    _cluster_barrier(fs, op, BarrierClusterKind.WAIT)


@rule(nvvm.FenceMbarrierInitOp)
def _fence_mbarrier_init(fs: FunctionSelector, op: nvvm.FenceMbarrierInitOp) -> None:
    fs.emit(ptx.FenceMbarrierInitOp())


@rule(nvvm.FenceProxyOp)
def _fence_proxy(fs: FunctionSelector, op: nvvm.FenceProxyOp) -> None:
    kind = op.kind.data
    space = None
    if kind is nvvm.ProxyKind.ASYNC_SHARED:
        space = op.space.data if op.space is not None else nvvm.SharedSpace.CTA
    elif kind not in (nvvm.ProxyKind.ALIAS, nvvm.ProxyKind.ASYNC, nvvm.ProxyKind.ASYNC_GLOBAL):
        raise fs.error(op, f"nvvm.fence.proxy kind {kind.value} has no PTX lowering")
    fs.emit(ptx.FenceProxyOp(kind, space))


@rule(nvvm.ElectSyncOp)
def _elect_sync(fs: FunctionSelector, op: nvvm.ElectSyncOp) -> None:
    mask = fs.scalar(op.membermask) if op.membermask is not None else fs.imm(-1)
    fs.define(op.pred, [fs.emit(ptx.ElectSyncOp(fs.fresh("pred"), mask)).res])


@rule(nvvm.MapaOp)
def _mapa(fs: FunctionSelector, op: nvvm.MapaOp) -> None:
    generic = address_space(op.a.type) != 3
    address = fs.reg(fs.address(op.a))
    result = fs.fresh("b64" if generic else "b32")
    fs.define(
        op.res,
        [
            Address(
                fs.emit(
                    ptx.MapaOp(
                        None if generic else StateSpace.SHARED_CLUSTER,
                        PtxType.U64 if generic else PtxType.U32,
                        result,
                        address,
                        fs.scalar(op.b),
                    )
                ).res
            )
        ],
    )


# --------------------------------------------------------------------------------------
# mbarrier
# --------------------------------------------------------------------------------------


def _space(fs: FunctionSelector, op: nvvm.NVVMOp, pointer: SSAValue) -> StateSpace | None:
    """The state-space qualifier llc spells for an mbarrier pointer (None: generic)."""
    space = address_space(pointer.type)
    if space == 3:
        return StateSpace.SHARED
    if space == 7:
        return StateSpace.SHARED_CLUSTER
    if space == 0:
        return None
    raise fs.error(op, f"{op.name} on an address-space-{space} pointer has no PTX lowering")


def _shared_address(fs: FunctionSelector, op: nvvm.NVVMOp, pointer: SSAValue) -> tuple[Address, StateSpace]:
    """The barrier address and space for arrive and the probes: as upstream does, a
    generic address is converted to a shared one (`cvta.to.shared.u64`)."""
    address, space = fs.address(pointer), _space(fs, op, pointer)
    if space is None:
        shared = fs.emit(ptx.CvtaOp(StateSpace.SHARED, fs.fresh("b64"), fs.reg(address))).res
        return Address(shared), StateSpace.SHARED
    return address, space


def _sem_scope(op: nvvm.NVVMOp, default_sem: MemSemantic) -> ptx.Ordering | None:
    """`.sem.scope` as llc prints it: nothing for the default (sem, cta)."""
    scope = cast(nvvm.MemScopeKindAttr, op.properties["scope"]).data
    relaxed_attr = op.properties.get("relaxed")
    relaxed = isinstance(relaxed_attr, IntegerAttr) and relaxed_attr.value.data != 0
    if relaxed:
        return ptx.Ordering(MemSemantic.RELAXED, scope)
    if scope is nvvm.MemScopeKind.CTA:
        return None
    return ptx.Ordering(default_sem, scope)


@rule(nvvm.MBarrierInitOp)
def _mbarrier_init(fs: FunctionSelector, op: nvvm.MBarrierInitOp) -> None:
    address = fs.address(op.addr)
    init = ptx.MbarrierInitOp(_space(fs, op, op.addr), address.base, fs.scalar(op.count), address.offset)
    if op.predicate is not None:
        init.set_guard(fs.reg(op.predicate, "pred"))
    fs.emit(init)


@rule(nvvm.MBarrierInvalOp)
def _mbarrier_inval(fs: FunctionSelector, op: nvvm.MBarrierInvalOp) -> None:
    address = fs.address(op.addr)
    fs.emit(ptx.MbarrierInvalOp(_space(fs, op, op.addr), address.base, address.offset))


def _arrive(
    fs: FunctionSelector,
    op: nvvm.NVVMOp,
    addr: SSAValue,
    count: SSAValue | None,
    expect_tx: bool,
    predicate: SSAValue | None = None,
) -> None:
    address, space = _shared_address(fs, op, addr)
    results = op.results
    used = bool(results) and bool(results[0].uses)
    if space is StateSpace.SHARED_CLUSTER:
        used = False  # the cluster form only takes the sink `_`
        if count is None:
            count_value: SSAValue | None = fs.imm(1)
        else:
            count_value = fs.scalar(count)
    else:
        count_value = None if count is None else fs.scalar(count)
    state = fs.fresh("b64") if used and predicate is None else None
    order = _sem_scope(op, MemSemantic.RELEASE)
    arrive = ptx.MbarrierArriveOp(
        space, address.base, count_value, state, address.offset, expect_tx=expect_tx, order=order
    )
    if predicate is not None:
        arrive.set_guard(fs.reg(predicate, "pred"))
    fs.emit(arrive)
    if results:
        fs.define(results[0], [arrive.state] if arrive.state is not None else [fs.imm(0, results[0].type)])


@rule(nvvm.MBarrierArriveOp)
def _mbarrier_arrive(fs: FunctionSelector, op: nvvm.MBarrierArriveOp) -> None:
    _arrive(fs, op, op.addr, op.count, expect_tx=False)


@rule(nvvm.MBarrierArriveExpectTxOp)
def _mbarrier_arrive_expect_tx(fs: FunctionSelector, op: nvvm.MBarrierArriveExpectTxOp) -> None:
    _arrive(fs, op, op.addr, op.txcount, expect_tx=True, predicate=op.predicate)


def _tx(fs: FunctionSelector, op: nvvm.MBarrierExpectTxOp | nvvm.MBarrierCompleteTxOp, kind: MbarrierTxKind) -> None:
    address = fs.address(op.addr)
    order = ptx.Ordering(MemSemantic.RELAXED, op.scope.data)
    space = _space(fs, op, op.addr)
    fs.emit(ptx.MbarrierExpectTxOp(kind, space, address.base, fs.scalar(op.txcount), address.offset, order=order))


@rule(nvvm.MBarrierExpectTxOp)
def _mbarrier_expect_tx(fs: FunctionSelector, op: nvvm.MBarrierExpectTxOp) -> None:
    _tx(fs, op, MbarrierTxKind.EXPECT_TX)


@rule(nvvm.MBarrierCompleteTxOp)
def _mbarrier_complete_tx(fs: FunctionSelector, op: nvvm.MBarrierCompleteTxOp) -> None:
    _tx(fs, op, MbarrierTxKind.COMPLETE_TX)


@rule(nvvm.MBarrierTryWaitParityOp)
def _mbarrier_try_wait_parity(fs: FunctionSelector, op: nvvm.MBarrierTryWaitParityOp) -> None:
    """The blocking wait: `L: try_wait.parity p, [bar], phase, ticks; @!p bra L`."""
    address = fs.address(op.addr)
    again = fs.label()
    fs.emit(ptx.LabelOp(again))
    probe = fs.emit(
        ptx.MbarrierWaitOp(
            ptx.MbarrierWaitForm(MbarrierWaitKind.TRY_WAIT, parity=True, space=_space(fs, op, op.addr)),
            fs.fresh("pred"),
            address.base,
            fs.scalar(op.phase),
            fs.scalar(op.ticks),
            address.offset,
        )
    )
    fs.emit(ptx.BraOp(again, probe.res, negated=True))


def _probe(fs: FunctionSelector, op: nvvm.MBarrierTryWaitOp | nvvm.MBarrierTestWaitOp, kind: MbarrierWaitKind) -> None:
    address, space = _shared_address(fs, op, op.addr)
    parity = op.state_or_phase.type == i32
    form = ptx.MbarrierWaitForm(kind, parity, space, _sem_scope(op, MemSemantic.ACQUIRE))
    ticks = getattr(op, "ticks", None)
    probe = fs.emit(
        ptx.MbarrierWaitOp(
            form,
            fs.fresh("pred"),
            address.base,
            fs.scalar(op.state_or_phase),
            None if ticks is None else fs.scalar(cast(SSAValue, ticks)),
            address.offset,
        )
    )
    fs.define(op.res, [probe.res])


@rule(nvvm.MBarrierTryWaitOp)
def _mbarrier_try_wait(fs: FunctionSelector, op: nvvm.MBarrierTryWaitOp) -> None:
    _probe(fs, op, MbarrierWaitKind.TRY_WAIT)


@rule(nvvm.MBarrierTestWaitOp)
def _mbarrier_test_wait(fs: FunctionSelector, op: nvvm.MBarrierTestWaitOp) -> None:
    _probe(fs, op, MbarrierWaitKind.TEST_WAIT)
