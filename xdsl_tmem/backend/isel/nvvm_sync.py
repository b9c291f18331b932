"""Rules for the `nvvm` dialect's special registers, barriers, fences, elect, mapa
and mbarriers.

Mnemonics are llc-22's (`mbarrier.init.shared.b64`, `barrier.cluster.arrive`, ...), so that
they compare one for one with llc-22's output (`tests/test_ptx_backend.py`).
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import (
    IntegerAttr,
    StringAttr,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, SSAValue

from xdsl_tmem.backend.isel.core import (
    Address,
    FunctionSelector,
    address_space,
    rule,
)
from xdsl_tmem.dialects import nvvm, ptx

# --------------------------------------------------------------------------------------
# Special registers
# --------------------------------------------------------------------------------------

_SPECIAL: dict[type[nvvm.NVVMOp], str] = {
    nvvm.ThreadIdXOp: "%tid.x",
    nvvm.ThreadIdYOp: "%tid.y",
    nvvm.ThreadIdZOp: "%tid.z",
    nvvm.BlockDimXOp: "%ntid.x",
    nvvm.BlockDimYOp: "%ntid.y",
    nvvm.BlockDimZOp: "%ntid.z",
    nvvm.BlockIdXOp: "%ctaid.x",
    nvvm.BlockIdYOp: "%ctaid.y",
    nvvm.BlockIdZOp: "%ctaid.z",
    nvvm.GridDimXOp: "%nctaid.x",
    nvvm.GridDimYOp: "%nctaid.y",
    nvvm.GridDimZOp: "%nctaid.z",
    nvvm.LaneIdOp: "%laneid",
    nvvm.WarpIdOp: "%warpid",
    nvvm.WarpDimOp: "%nwarpid",
    nvvm.SmIdOp: "%smid",
    nvvm.SmDimOp: "%nsmid",
    nvvm.GridIdOp: "%gridid",
    nvvm.ClusterIdXOp: "%clusterid.x",
    nvvm.ClusterIdYOp: "%clusterid.y",
    nvvm.ClusterIdZOp: "%clusterid.z",
    nvvm.ClusterDimXOp: "%nclusterid.x",
    nvvm.ClusterDimYOp: "%nclusterid.y",
    nvvm.ClusterDimZOp: "%nclusterid.z",
    nvvm.BlockInClusterIdXOp: "%cluster_ctaid.x",
    nvvm.BlockInClusterIdYOp: "%cluster_ctaid.y",
    nvvm.BlockInClusterIdZOp: "%cluster_ctaid.z",
    nvvm.ClusterDimBlocksXOp: "%cluster_nctaid.x",
    nvvm.ClusterDimBlocksYOp: "%cluster_nctaid.y",
    nvvm.ClusterDimBlocksZOp: "%cluster_nctaid.z",
    nvvm.ClusterCtaRankOp: "%cluster_ctarank",
    nvvm.ClusterNctaRankOp: "%cluster_nctarank",
    nvvm.LaneMaskEqOp: "%lanemask_eq",
    nvvm.LaneMaskLeOp: "%lanemask_le",
    nvvm.LaneMaskLtOp: "%lanemask_lt",
    nvvm.LaneMaskGeOp: "%lanemask_ge",
    nvvm.LaneMaskGtOp: "%lanemask_gt",
    nvvm.ClockOp: "%clock",
    nvvm.Clock64Op: "%clock64",
    nvvm.GlobalTimerOp: "%globaltimer",
}


def _special(fs: FunctionSelector, op: nvvm.NVVMOp) -> None:
    (result,) = op.results
    wide = result.type != i32
    register = fs.fresh("b64" if wide else "b32")
    source = fs.special(_SPECIAL[type(op)])
    fs.define(result, [fs.emit(ptx.MovOp("u64" if wide else "u32", register, source)).res])


for _op in _SPECIAL:
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
    predicate = fs.emit(ptx.SetpOp("ne", "b32", fs.fresh("pred"), fs.reg(op.reduction_predicate), fs.imm(0))).res
    reduction = op.reduction_op.data.value
    if reduction == "popc":
        result = fs.emit(ptx.BarRedOp("popc.u32", fs.fresh("b32"), barrier_id, count, predicate)).res
    else:
        flag = fs.emit(ptx.BarRedOp(f"{reduction}.pred", fs.fresh("pred"), barrier_id, count, predicate)).res
        result = fs.emit(ptx.SelpOp("b32", fs.fresh("b32"), fs.imm(1), fs.imm(0), flag)).res
    fs.define(op.res, [result])


@rule(nvvm.BarrierArriveOp)
def _barrier_arrive(fs: FunctionSelector, op: nvvm.BarrierArriveOp) -> None:
    barrier_id = fs.scalar(op.barrier_id) if op.barrier_id is not None else fs.imm(0)
    fs.emit(ptx.BarArriveOp(barrier_id, fs.scalar(op.number_of_threads)))


@rule(nvvm.SyncWarpOp)
def _bar_warp_sync(fs: FunctionSelector, op: nvvm.SyncWarpOp) -> None:
    fs.emit(ptx.BarWarpSyncOp(fs.scalar(op.mask)))


def _cluster_barrier(fs: FunctionSelector, op: nvvm.NVVMOp, kind: str) -> None:
    properties: dict[str, Attribute] = {"kind": StringAttr(kind)}
    if op.properties.get("aligned") is not None:
        properties["aligned"] = UnitAttr()
    fs.emit(ptx.BarrierClusterOp(properties))


@rule(nvvm.ClusterArriveOp)
def _cluster_arrive(fs: FunctionSelector, op: nvvm.ClusterArriveOp) -> None:
    _cluster_barrier(fs, op, "arrive")


@rule(nvvm.ClusterArriveRelaxedOp)
def _cluster_arrive_relaxed(fs: FunctionSelector, op: nvvm.ClusterArriveRelaxedOp) -> None:
    _cluster_barrier(fs, op, "arrive.relaxed")


@rule(nvvm.ClusterWaitOp)
def _cluster_wait(fs: FunctionSelector, op: nvvm.ClusterWaitOp) -> None:
    _cluster_barrier(fs, op, "wait")


@rule(nvvm.FenceMbarrierInitOp)
def _fence_mbarrier_init(fs: FunctionSelector, op: nvvm.FenceMbarrierInitOp) -> None:
    fs.emit(ptx.FenceOp({"text": StringAttr("fence.mbarrier_init.release.cluster")}))


@rule(nvvm.FenceProxyOp)
def _fence_proxy(fs: FunctionSelector, op: nvvm.FenceProxyOp) -> None:
    kind = op.kind.data.value
    text = f"fence.proxy.{kind}"
    if kind == "async.shared":
        space = op.space.data.value if op.space is not None else "cta"
        text = f"fence.proxy.async.shared::{space}"
    elif kind not in ("alias", "async", "async.global"):
        raise fs.error(op, f"nvvm.fence.proxy kind {kind} has no PTX lowering")
    fs.emit(ptx.FenceOp({"text": StringAttr(text)}))


@rule(nvvm.ElectSyncOp)
def _elect_sync(fs: FunctionSelector, op: nvvm.ElectSyncOp) -> None:
    mask = fs.scalar(op.membermask) if op.membermask is not None else fs.imm(-1)
    fs.define(op.pred, [fs.emit(ptx.ElectSyncOp(fs.fresh("pred"), mask)).res])


@rule(nvvm.MapaOp)
def _mapa(fs: FunctionSelector, op: nvvm.MapaOp) -> None:
    generic = address_space(op.a.type) != 3
    address = fs.reg(fs.address(op.a))
    result = fs.fresh("b64" if generic else "b32")
    fs.define(op.res, [Address(fs.emit(ptx.MapaOp(result, address, fs.scalar(op.b), generic)).res)])


# --------------------------------------------------------------------------------------
# mbarrier
# --------------------------------------------------------------------------------------


def _space(fs: FunctionSelector, op: nvvm.NVVMOp, pointer: SSAValue) -> str:
    """The state-space qualifier llc spells for an mbarrier pointer."""
    space = address_space(pointer.type)
    if space == 3:
        return "shared"
    if space == 7:
        return "shared::cluster"
    if space == 0:
        return ""
    raise fs.error(op, f"{op.name} on an address-space-{space} pointer has no PTX lowering")


def _shared_address(fs: FunctionSelector, op: nvvm.NVVMOp, pointer: SSAValue) -> tuple[Address, str]:
    """The barrier address and space for arrive and the probes: as upstream does, a
    generic address is converted to a shared one (`cvta.to.shared.u64`)."""
    address, space = fs.address(pointer), _space(fs, op, pointer)
    if space == "":
        shared = fs.emit(ptx.CvtaOp("shared", fs.fresh("b64"), fs.reg(address))).res
        return Address(shared), "shared"
    return address, space


def _sem_scope(op: nvvm.NVVMOp, default_sem: str) -> str:
    """`.sem.scope` as llc prints it: nothing for the default (sem, cta)."""
    scope = cast(nvvm.MemScopeKindAttr, op.properties["scope"]).data.value
    relaxed_attr = op.properties.get("relaxed")
    relaxed = isinstance(relaxed_attr, IntegerAttr) and relaxed_attr.value.data != 0
    if relaxed:
        return f".relaxed.{scope}"
    if scope == "cta":
        return ""
    return f".{default_sem}.{scope}"


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
    qualifiers = (".expect_tx" if expect_tx else "") + _sem_scope(op, "release") + f".{space}"
    results = op.results
    used = bool(results) and bool(results[0].uses)
    if space == "shared::cluster":
        used = False  # the cluster form only takes the sink `_`
        if count is None:
            count_value: SSAValue | None = fs.imm(1)
        else:
            count_value = fs.scalar(count)
    else:
        count_value = None if count is None else fs.scalar(count)
    state = fs.fresh("b64") if used and predicate is None else None
    arrive = ptx.MbarrierArriveOp(qualifiers, address.base, count_value, state, address.offset)
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


def _tx(fs: FunctionSelector, op: nvvm.MBarrierExpectTxOp | nvvm.MBarrierCompleteTxOp, verb: str) -> None:
    address = fs.address(op.addr)
    scope = op.scope.data.value
    text = f"mbarrier.{verb}.relaxed.{scope}.{_space(fs, op, op.addr)}.b64"
    fs.emit(ptx.MbarrierExpectTxOp(text, address.base, fs.scalar(op.txcount), address.offset))


@rule(nvvm.MBarrierExpectTxOp)
def _mbarrier_expect_tx(fs: FunctionSelector, op: nvvm.MBarrierExpectTxOp) -> None:
    _tx(fs, op, "expect_tx")


@rule(nvvm.MBarrierCompleteTxOp)
def _mbarrier_complete_tx(fs: FunctionSelector, op: nvvm.MBarrierCompleteTxOp) -> None:
    _tx(fs, op, "complete_tx")


@rule(nvvm.MBarrierTryWaitParityOp)
def _mbarrier_try_wait_parity(fs: FunctionSelector, op: nvvm.MBarrierTryWaitParityOp) -> None:
    """The blocking wait: `L: try_wait.parity p, [bar], phase, ticks; @!p bra L`."""
    address = fs.address(op.addr)
    again = fs.label()
    fs.emit(ptx.LabelOp(again))
    probe = fs.emit(
        ptx.MbarrierWaitOp(
            "try_wait.parity",
            _space(fs, op, op.addr),
            fs.fresh("pred"),
            address.base,
            fs.scalar(op.phase),
            fs.scalar(op.ticks),
            address.offset,
        )
    )
    fs.emit(ptx.BraOp(again, probe.res, negated=True))


def _probe(fs: FunctionSelector, op: nvvm.MBarrierTryWaitOp | nvvm.MBarrierTestWaitOp, verb: str) -> None:
    address, space = _shared_address(fs, op, op.addr)
    parity = op.state_or_phase.type == i32
    kind = verb + (".parity" if parity else "") + _sem_scope(op, "acquire")
    ticks = getattr(op, "ticks", None)
    probe = fs.emit(
        ptx.MbarrierWaitOp(
            kind,
            space,
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
    _probe(fs, op, "try_wait")


@rule(nvvm.MBarrierTestWaitOp)
def _mbarrier_test_wait(fs: FunctionSelector, op: nvvm.MBarrierTestWaitOp) -> None:
    _probe(fs, op, "test_wait")
