"""Instruction selection rules for the `nvvm` dialect (registered into `isel._RULES`).

Mnemonics are llc-22's (../shared/ref/nvvm_ops_examples.ptx and the NVVM lit files):
`mbarrier.init.shared.b64`, `tcgen05.mma...collector::a::discard`, ... A feature the
target lacks (`kind::i8`, `tcgen05.shift` on `f` targets) is reported here, at the
op, instead of as a ptxas error.
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import IntegerAttr, VectorType, i1, i32, i64
from xdsl.ir import Attribute, SSAValue

from xdsl_tmem.backend.isel import (
    Address,
    FunctionSelector,
    _address_space,  # pyright: ignore[reportPrivateUsage]
    _set_guard,  # pyright: ignore[reportPrivateUsage]
    rule,
)
from xdsl_tmem.dialects import nvvm, ptx
from xdsl_tmem.dialects.utils import constant_int

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
    properties: dict[str, Attribute] = {"kind": ptx.StringAttr(kind)}
    if op.properties.get("aligned") is not None:
        properties["aligned"] = ptx.UnitAttr()
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
    fs.emit(ptx.FenceOp({"text": ptx.StringAttr("fence.mbarrier_init.release.cluster")}))


@rule(nvvm.FenceProxyOp)
def _fence_proxy(fs: FunctionSelector, op: nvvm.FenceProxyOp) -> None:
    kind = op.kind.data.value
    text = f"fence.proxy.{kind}"
    if kind == "async.shared":
        space = op.space.data.value if op.space is not None else "cta"
        text = f"fence.proxy.async.shared::{space}"
    elif kind not in ("alias", "async", "async.global"):
        raise fs.error(op, f"nvvm.fence.proxy kind {kind} has no PTX lowering")
    fs.emit(ptx.FenceOp({"text": ptx.StringAttr(text)}))


@rule(nvvm.ElectSyncOp)
def _elect_sync(fs: FunctionSelector, op: nvvm.ElectSyncOp) -> None:
    mask = fs.scalar(op.membermask) if op.membermask is not None else fs.imm(-1)
    fs.define(op.pred, [fs.emit(ptx.ElectSyncOp(fs.fresh("pred"), mask)).res])


@rule(nvvm.MapaOp)
def _mapa(fs: FunctionSelector, op: nvvm.MapaOp) -> None:
    generic = _address_space(op.a.type) != 3
    address = fs.reg(fs.address(op.a))
    result = fs.fresh("b64" if generic else "b32")
    fs.define(op.res, [Address(fs.emit(ptx.MapaOp(result, address, fs.scalar(op.b), generic)).res)])


# --------------------------------------------------------------------------------------
# mbarrier
# --------------------------------------------------------------------------------------


def _space(fs: FunctionSelector, op: nvvm.NVVMOp, pointer: SSAValue) -> str:
    """The state-space qualifier llc spells for an mbarrier pointer."""
    space = _address_space(pointer.type)
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
        _set_guard(init, fs.reg(op.predicate, "pred"))
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
        _set_guard(arrive, fs.reg(predicate, "pred"))
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


# --------------------------------------------------------------------------------------
# tcgen05
# --------------------------------------------------------------------------------------


def _cta_group(op: nvvm.NVVMOp) -> int:
    group = op.properties.get("group") or op.properties.get("ctaGroup")
    return group.as_int() if isinstance(group, nvvm.CTAGroupKindAttr) else 1


@rule(nvvm.Tcgen05AllocOp)
def _tcgen05_alloc(fs: FunctionSelector, op: nvvm.Tcgen05AllocOp) -> None:
    address = fs.address(op.addr)
    shared = _address_space(op.addr.type) == 3
    fs.emit(ptx.Tcgen05AllocOp(_cta_group(op), shared, address.base, fs.scalar(op.n_cols), address.offset))


@rule(nvvm.Tcgen05DeallocOp)
def _tcgen05_dealloc(fs: FunctionSelector, op: nvvm.Tcgen05DeallocOp) -> None:
    fs.emit(ptx.Tcgen05DeallocOp(_cta_group(op), fs.reg(fs.address(op.taddr)), fs.scalar(op.n_cols)))


@rule(nvvm.Tcgen05RelinquishAllocPermitOp)
def _tcgen05_relinquish(fs: FunctionSelector, op: nvvm.Tcgen05RelinquishAllocPermitOp) -> None:
    text = f"tcgen05.relinquish_alloc_permit.cta_group::{_cta_group(op)}.sync.aligned"
    fs.emit(ptx.Tcgen05TextOp({"text": ptx.StringAttr(text)}))


@rule(nvvm.Tcgen05FenceOp)
def _tcgen05_fence(fs: FunctionSelector, op: nvvm.Tcgen05FenceOp) -> None:
    text = f"tcgen05.fence::{op.kind.data.value}_thread_sync"
    fs.emit(ptx.Tcgen05TextOp({"text": ptx.StringAttr(text)}))


@rule(nvvm.Tcgen05WaitOp)
def _tcgen05_wait(fs: FunctionSelector, op: nvvm.Tcgen05WaitOp) -> None:
    which = "ld" if op.kind.data == nvvm.Tcgen05WaitKind.LOAD else "st"
    fs.emit(ptx.Tcgen05TextOp({"text": ptx.StringAttr(f"tcgen05.wait::{which}.sync.aligned")}))


@rule(nvvm.Tcgen05CommitOp)
def _tcgen05_commit(fs: FunctionSelector, op: nvvm.Tcgen05CommitOp) -> None:
    address = fs.address(op.addr)
    mask = None if op.multicast_mask is None else fs.reg(op.multicast_mask, "b16")
    fs.emit(ptx.Tcgen05CommitOp(_cta_group(op), address.base, mask, address.offset))


def _shape_name(shape: nvvm.Tcgen05LdStShape) -> str:
    return shape.value.removeprefix("shape_")


def _split_offset(fs: FunctionSelector, op: nvvm.NVVMOp, offset: SSAValue | None) -> SSAValue | None:
    if offset is None:
        return None
    if (value := constant_int(offset)) is None:
        raise fs.error(op, "the 16x32bx2 half-split offset must be a constant")
    return fs.imm(value)


@rule(nvvm.Tcgen05LdOp)
def _tcgen05_ld(fs: FunctionSelector, op: nvvm.Tcgen05LdOp) -> None:
    shape = op.shape.data
    count = _register_count(op.res.type)
    registers = [fs.fresh("b32") for _ in range(count)]
    load = fs.emit(
        ptx.Tcgen05LdOp(
            _shape_name(shape),
            count // shape.registers_per_num,
            registers,
            fs.reg(fs.address(op.tmem_addr)),
            _split_offset(fs, op, op.offset),
            pack=op.pack is not None,
        )
    )
    fs.define(op.res, list(load.res))


@rule(nvvm.Tcgen05StOp)
def _tcgen05_st(fs: FunctionSelector, op: nvvm.Tcgen05StOp) -> None:
    shape = op.shape.data
    values = [fs.reg(v, "b32") for v in fs.get(op.val)]
    fs.emit(
        ptx.Tcgen05StOp(
            _shape_name(shape),
            len(values) // shape.registers_per_num,
            fs.reg(fs.address(op.tmem_addr)),
            values,
            _split_offset(fs, op, op.offset),
            unpack=op.unpack is not None,
        )
    )


def _register_count(t: object) -> int:
    return t.get_shape()[0] if isinstance(t, VectorType) else 1


@rule(nvvm.Tcgen05MMAOp)
def _tcgen05_mma(fs: FunctionSelector, op: nvvm.Tcgen05MMAOp) -> None:
    kind = op.kind.data.value
    if kind == "i8" and not fs.arch.mma_i8:
        raise fs.error(op, f"tcgen05.mma kind::i8 is not available on {fs.arch.name} (only sm_100a and sm_110a)")
    collector = op.collector_op.data.value
    a_tmem = _address_space(op.matrix_a.type) == 6
    a = fs.reg(fs.address(op.matrix_a)) if a_tmem else fs.reg(op.matrix_a)
    enable = fs.scalar(op.enable_input_d)
    if not isinstance(enable.type, ptx.RegisterType) and enable.type != i1:
        enable = fs.reg(enable, "pred")
    mask = [] if op.disable_output_lane is None else [fs.reg(v, "b32") for v in fs.get(op.disable_output_lane)]
    scale = None
    if op.scale_input_d is not None:
        if not fs.arch.mma_scale:
            raise fs.error(op, f"the tcgen05.mma scale-input-d operand is not available on {fs.arch.name}")
        if (value := constant_int(op.scale_input_d)) is None:
            raise fs.error(op, "the scale-input-d operand must be a constant")
        scale = fs.imm(value)
    fs.emit(
        ptx.Tcgen05MmaOp(
            _cta_group(op),
            kind,
            collector,
            fs.reg(fs.address(op.matrix_d)),
            a,
            fs.reg(op.matrix_b),
            fs.scalar(op.idesc),
            enable,
            a_tmem=a_tmem,
            ashift=op.a_shift is not None,
            mask=mask,
            scale=scale,
        )
    )


@rule(nvvm.Tcgen05CpOp)
def _tcgen05_cp(fs: FunctionSelector, op: nvvm.Tcgen05CpOp) -> None:
    qualifiers = f".cta_group::{_cta_group(op)}.{op.shape.data.value.removeprefix('shape_')}"
    multicast = op.multicast.data.value
    if multicast.startswith("warpx2"):
        qualifiers += f".warpx2::{multicast.removeprefix('warpx2_')}"
    elif multicast != "none":
        qualifiers += f".{multicast}"
    if op.src_format is not None:
        qualifiers += f".b8x16.{op.src_format.data.value}"
    fs.emit(ptx.Tcgen05CpOp(qualifiers, fs.reg(fs.address(op.taddr)), fs.reg(op.smem_desc)))


@rule(nvvm.Tcgen05ShiftOp)
def _tcgen05_shift(fs: FunctionSelector, op: nvvm.Tcgen05ShiftOp) -> None:
    if not fs.arch.shift:
        raise fs.error(op, f"tcgen05.shift is not available on {fs.arch.name} (only the 'a' targets)")
    fs.emit(ptx.Tcgen05ShiftOp(_cta_group(op), fs.reg(fs.address(op.taddr))))


@rule(nvvm.Tcgen05MmaSmemDescOp)
def _tcgen05_mma_smem_desc(fs: FunctionSelector, op: nvvm.Tcgen05MmaSmemDescOp) -> None:
    """Bit packing as upstream's lowering does it (ptx-nvvm.md §1.7): the start, LBO and
    SBO operands are already encoded (>> 4); start | LBO << 16 | SBO << 32 | 1 << 46 |
    base << 49 | mode << 52 | swizzle << 61, each field masked to its width."""

    def field(value: SSAValue, bits: int, shift: int) -> SSAValue:
        source = fs.reg(value)
        kind = cast(ptx.RegisterType, source.type).kind.data
        width = {"pred": 1, "b16": 16, "b32": 32, "b64": 64}[kind]
        if kind == "pred":
            source = fs.emit(ptx.SelpOp("b32", fs.fresh("b32"), fs.imm(1), fs.imm(0), source)).res
            width = 32
        if width != 64:
            source = fs.emit(ptx.CvtOp("u64", f"u{width}", fs.fresh("b64"), source)).res
        masked = fs.emit(ptx.AndOp("b64", fs.fresh("b64"), source, fs.imm((1 << bits) - 1, i64))).res
        if shift == 0:
            return masked
        return fs.emit(ptx.ShlOp("b64", fs.fresh("b64"), masked, fs.imm(shift, i32))).res

    parts = [
        field(op.start_addr, 14, 0),
        field(op.leading_dim_offset, 14, 16),
        field(op.stride_dim_offset, 14, 32),
        field(op.base_offset, 3, 49),
        field(op.leading_dim_mode, 1, 52),
        field(op.swizzle_mode, 3, 61),
    ]
    descriptor = fs.emit(ptx.OrOp("b64", fs.fresh("b64"), parts[0], fs.imm(1 << 46, i64))).res
    for part in parts[1:]:
        descriptor = fs.emit(ptx.OrOp("b64", fs.fresh("b64"), descriptor, part)).res
    fs.define(op.res, [descriptor])
