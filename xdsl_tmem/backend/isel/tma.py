"""Rules for the `nvvm` TMA and bulk-copy ops (`dialects/nvvm/tma.py`).

Forms follow llc-22's (`mlir-translate-22 | llc-22 -mcpu=sm_100a`): intrinsic-lowered
tensor copies write `.tile`; the predicated forms, which upstream lowers to inline PTX,
do not (`@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes`).
Our shared-memory addresses are 32-bit registers where llc's are 64-bit (the whole
backend's convention, `isel/__init__.py`).

Not lowered (a located error, never skipped), because no typed `ptx` op models them
yet: the im2col / im2col_w / tile_gather4 / tile_scatter4 modes (also of the TMA
reduction), the non-tensor bulk copies' multicast mask, L2 cache hint and byte mask, and
the tensormap proxy fences (`fence.proxy.tensormap::generic`).
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from xdsl_tmem.backend.isel.core import FunctionSelector, address_space, rule
from xdsl_tmem.dialects import nvvm, ptx
from xdsl_tmem.dialects.ptx import BulkTensorDirection, StateSpace


def _tile_only(fs: FunctionSelector, op: nvvm.NVVMOp, mode: str) -> None:
    if mode != "tile":
        raise fs.error(op, f"{op.name} with mode {mode} has no PTX lowering here (supported: mode tile)")


def _guard(fs: FunctionSelector, inst: ptx.Instruction, predicate: SSAValue | None) -> None:
    if predicate is not None:
        inst.set_guard(fs.reg(predicate, "pred"))


@rule(nvvm.CpAsyncBulkTensorSharedClusterGlobalOp)
def _tensor_load(fs: FunctionSelector, op: nvvm.CpAsyncBulkTensorSharedClusterGlobalOp) -> None:
    _tile_only(fs, op, op.mode.data.value)
    direction = BulkTensorDirection.TO_SHARED_CTA if op.cta_only() else BulkTensorDirection.TO_SHARED_CLUSTER
    group = None if op.group is None else op.group.as_int()
    form = ptx.BulkTensorForm(direction, tile=op.predicate is None, cta_group=group)
    dst = fs.address(op.dst_mem)
    inst = ptx.CpAsyncBulkTensorOp(
        form,
        dst.base,
        fs.reg(op.tma_descriptor),
        [fs.scalar(c) for c in op.coordinates],
        fs.reg(op.mbar),
        cta_mask=None if op.multicast_mask is None else fs.reg(op.multicast_mask),
        policy=None if op.l2_cache_hint is None else fs.reg(op.l2_cache_hint),
        offset=dst.offset,
    )
    _guard(fs, inst, op.predicate)
    fs.emit(inst)


@rule(nvvm.CpAsyncBulkTensorGlobalSharedCtaOp)
def _tensor_store(fs: FunctionSelector, op: nvvm.CpAsyncBulkTensorGlobalSharedCtaOp) -> None:
    _tile_only(fs, op, op.mode.data.value)
    form = ptx.BulkTensorForm(BulkTensorDirection.TO_GLOBAL, tile=op.predicate is None)
    src = fs.address(op.src_mem)
    inst = ptx.CpAsyncBulkTensorOp(
        form,
        src.base,
        fs.reg(op.tma_descriptor),
        [fs.scalar(c) for c in op.coordinates],
        policy=None if op.l2_cache_hint is None else fs.reg(op.l2_cache_hint),
        offset=src.offset,
    )
    _guard(fs, inst, op.predicate)
    fs.emit(inst)


@rule(nvvm.CpAsyncBulkTensorReduceOp)
def _tensor_reduce(fs: FunctionSelector, op: nvvm.CpAsyncBulkTensorReduceOp) -> None:
    _tile_only(fs, op, op.mode.data.value)
    src = fs.address(op.src_mem)
    fs.emit(
        ptx.CpReduceAsyncBulkTensorOp(
            op.red_kind.data,
            src.base,
            fs.reg(op.tma_descriptor),
            [fs.scalar(c) for c in op.coordinates],
            tile=True,
            policy=None if op.l2_cache_hint is None else fs.reg(op.l2_cache_hint),
            offset=src.offset,
        )
    )


def _no_options(fs: FunctionSelector, op: nvvm.NVVMOp, options: dict[str, SSAValue | None]) -> None:
    given = [name for name, value in options.items() if value is not None]
    if given:
        raise fs.error(op, f"{op.name} with {' and '.join(given)} has no PTX lowering here (supported: without "
                           f"{', '.join(options)})")  # fmt: skip


@rule(nvvm.CpAsyncBulkSharedClusterGlobalOp)
def _bulk_load(fs: FunctionSelector, op: nvvm.CpAsyncBulkSharedClusterGlobalOp) -> None:
    _no_options(fs, op, {"multicast_mask": op.multicast_mask, "l2_cache_hint": op.l2_cache_hint})
    cta = address_space(op.dst_mem.type) == 3  # (as llc-22: a `ptr<3>` destination is `.shared::cta`)
    direction = BulkTensorDirection.TO_SHARED_CTA if cta else BulkTensorDirection.TO_SHARED_CLUSTER
    dst, src = fs.address(op.dst_mem), fs.address(op.src_mem)
    fs.emit(ptx.CpAsyncBulkOp(direction, dst.base, src.base, fs.scalar(op.size), fs.reg(op.mbar), offset=dst.offset,
                              src_offset=src.offset))  # fmt: skip


@rule(nvvm.CpAsyncBulkGlobalSharedCtaOp)
def _bulk_store(fs: FunctionSelector, op: nvvm.CpAsyncBulkGlobalSharedCtaOp) -> None:
    _no_options(fs, op, {"l2_cache_hint": op.l2_cache_hint, "byte_mask": op.byte_mask})
    dst, src = fs.address(op.dst_mem), fs.address(op.src_mem)
    fs.emit(ptx.CpAsyncBulkOp(BulkTensorDirection.TO_GLOBAL, dst.base, src.base, fs.scalar(op.size),
                              offset=dst.offset, src_offset=src.offset))  # fmt: skip


@rule(nvvm.FenceProxyAcquireOp, nvvm.FenceProxyReleaseOp)
def _not_modelled(fs: FunctionSelector, op: nvvm.NVVMOp) -> None:
    raise fs.error(op, f"{op.name} has no PTX lowering yet (no typed ptx op models its instruction)")


@rule(nvvm.CpAsyncBulkCommitGroupOp)
def _commit_group(fs: FunctionSelector, op: nvvm.CpAsyncBulkCommitGroupOp) -> None:
    fs.emit(ptx.CpAsyncCommitGroupOp(bulk=True))


@rule(nvvm.CpAsyncBulkWaitGroupOp)
def _wait_group(fs: FunctionSelector, op: nvvm.CpAsyncBulkWaitGroupOp) -> None:
    pending = fs.imm(op.group.value.data)
    fs.emit(ptx.CpAsyncWaitGroupOp(pending, bulk=True, read=op.read is not None))


@rule(nvvm.PrefetchTensormapOp)
def _prefetch_tensormap(fs: FunctionSelector, op: nvvm.PrefetchTensormapOp) -> None:
    address = fs.address(op.addr)
    space = StateSpace.CONST if address_space(op.addr.type) == 4 else None
    base, offset = address.base, address.offset
    if op.in_param_space is not None:  # as llc-22: the generic address converted first
        base, offset = fs.emit(ptx.CvtaOp(StateSpace.PARAM, fs.fresh("b64"), fs.materialize_address(address))).res, 0
        space = StateSpace.PARAM
    inst = ptx.PrefetchOp(space, base, tensormap=True, offset=offset)
    _guard(fs, inst, op.predicate)
    fs.emit(inst)
