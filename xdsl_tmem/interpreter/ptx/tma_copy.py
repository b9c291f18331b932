"""TMA at the PTX level: `cp.async.bulk.tensor` (tile mode), `cp.async.bulk`, their bulk groups,
`prefetch.tensormap`.

This module decodes the instructions' operands; what a copy does (when its bytes land, as
whose write, how it completes on its mbarrier, multicast, the hazards) is
`interpreter/bulk_copy.py`'s, shared with the NVVM level, and the box itself is
`interpreter/tma.py`'s model. The tensor-map operand is the address of a byval tensor-map
kernel parameter (`mov` of the parameter, `cvta.param`: `machine.PARAM_BASE`), or the
parameter's name; the launch describes the map (`tma.TensorMapArgument`). Multicast with
`.cta_group::2` is refused (its barrier mapping is unverified).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from xdsl_tmem.dialects import ptx
from xdsl_tmem.interpreter import bulk_copy, tma
from xdsl_tmem.interpreter import nvvm as machine
from xdsl_tmem.interpreter.machine import PARAM_BASE
from xdsl_tmem.interpreter.ptx.base import Lanes
from xdsl_tmem.interpreter.ptx.program import (
    Decoder,
    Decoding,
    Refused,
    decodes,
    exec_mask,
)
from xdsl_tmem.interpreter.values import Value

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.ptx.warp import PtxWarp

Operand = Callable[["PtxWarp", list[Lanes]], Value]


TensorOp = ptx.CpAsyncBulkTensorOp | ptx.CpReduceAsyncBulkTensorOp


def _tensor_map_operand(d: Decoder, op: TensorOp) -> Operand:
    """The tensor-map address: a register, or a parameter named directly."""
    owner = op.tensor_map.owner
    if isinstance(owner, ptx.SymbolOp):
        param = d.params.get(owner.symbol.data)
        if param is None:
            raise Refused(f"{op.mnemonic()}: tensor map '{owner.symbol.data}' is not a parameter of the kernel")
        constant = PARAM_BASE + param.offset
        return lambda w, R: constant
    return d.address(op.tensor_map, 0)


def _tensor_map(d: Decoder, op: TensorOp, address: int) -> tma.TensorMap:
    return bulk_copy.tensor_map_at(d.tensor_maps, address, op.mnemonic())


@decodes(ptx.CpAsyncBulkTensorOp)
def _bulk_tensor(d: Decoder, op: ptx.CpAsyncBulkTensorOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    if op.cta_mask is not None and op.cta_group is not None:
        raise Refused(f"{op.mnemonic()}: multicast with .cta_group::2 is not modelled (its mbarrier mapping is "
                      "unverified)")  # fmt: skip
    smem = d.address(op.smem, op.offset.data)
    tmap_at = _tensor_map_operand(d, op)
    coords = [d.integer(c) for c in op.coords]
    mbar = d.address(op.mbar, _mbar_offset(op)) if op.mbar is not None else None
    mask = d.integer(op.cta_mask) if op.cta_mask is not None else None
    load = op.direction.data.load
    guard = d.guard(op)
    nxt = index + 1

    what = op.mnemonic()
    pair = op.cta_group is not None and op.cta_group.as_int() == 2  # (::1: the destination's CTA)

    def run(w: PtxWarp) -> int:
        R = w.regs
        lanes = exec_mask(w, R, guard)
        for lane in np.flatnonzero(lanes).tolist():  # each executing thread issues its own copy
            tmap = _tensor_map(d, op, machine.at(tmap_at(w, R), lane))
            at = [bulk_copy.signed32(machine.at(c(w, R), lane)) for c in coords]
            dst = machine.at(smem(w, R), lane)
            if not load:
                bulk_copy.tensor_store(w, op, what, tmap, at, dst, None, lane)
                continue
            assert mbar is not None
            ranks = None if mask is None else machine.at(mask(w, R), lane) & 0xFFFF
            for to, bar in bulk_copy.multicast_targets(ranks, dst, machine.at(mbar(w, R), lane)):
                bulk_copy.tensor_load(w, op, what, tmap, at, to, bar, pair)
        return nxt

    return run, None


@decodes(ptx.CpReduceAsyncBulkTensorOp)
def _reduce_tensor(d: Decoder, op: ptx.CpReduceAsyncBulkTensorOp, index: int, labels: dict[str, int],
                   rpc: int) -> Decoding:  # fmt: skip
    """As a tensor store (above), the box combined with global memory by `tma.reduce_box`."""
    kind = op.kind.data.value
    smem = d.address(op.smem, op.offset.data)
    tmap_at = _tensor_map_operand(d, op)
    coords = [d.integer(c) for c in op.coords]
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        for lane in np.flatnonzero(exec_mask(w, R, guard)).tolist():
            tmap = _tensor_map(d, op, machine.at(tmap_at(w, R), lane))
            at = [bulk_copy.signed32(machine.at(c(w, R), lane)) for c in coords]
            bulk_copy.tensor_store(w, op, op.mnemonic(), tmap, at, machine.at(smem(w, R), lane), kind, lane)
        return nxt

    return run, None


def _mbar_offset(op: ptx.CpAsyncBulkTensorOp | ptx.CpAsyncBulkOp) -> int:
    return 0 if op.mbar_offset is None else op.mbar_offset.data


# --------------------------------------------------------------------------------------
# cp.async.bulk (non-tensor): `size` contiguous bytes
# --------------------------------------------------------------------------------------


@decodes(ptx.CpAsyncBulkOp)
def _bulk(d: Decoder, op: ptx.CpAsyncBulkOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """As a tensor copy of a 1-D box (above): a load writes its bytes when issued and
    completes them on the mbarrier; a store writes global memory when issued."""
    dst = d.address(op.dst, op.offset.data)
    src = d.address(op.src, op.src_offset.data)
    size = d.integer(op.size)
    mbar = d.address(op.mbar, _mbar_offset(op)) if op.mbar is not None else None
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        for lane in np.flatnonzero(exec_mask(w, R, guard)).tolist():
            at, to, n = machine.at(src(w, R), lane), machine.at(dst(w, R), lane), machine.at(size(w, R), lane)
            if mbar is None:
                bulk_copy.bulk_store(w, op, op.mnemonic(), to, at, n, lane)
            else:
                bulk_copy.bulk_load(w, op, op.mnemonic(), to, at, n, machine.at(mbar(w, R), lane))
        return nxt

    return run, None


# --------------------------------------------------------------------------------------
# bulk async-groups, prefetch.tensormap
# --------------------------------------------------------------------------------------


def bulk_group(d: Decoder, op: ptx.Instruction, index: int, pending: int | None) -> Decoding:
    """`cp.async.bulk.commit_group` (`pending` None) / `cp.async.bulk.wait_group[.read]
    pending` in the executing threads (bulk_copy.py: the stores' reads of shared memory
    are pending until a wait completes them)."""
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        lanes = np.flatnonzero(exec_mask(w, w.regs, guard)).tolist()
        if pending is None:
            bulk_copy.bulk_commit(w, lanes)
        else:
            bulk_copy.bulk_wait(w, lanes, pending)
        return nxt

    return run, None


@decodes(ptx.PrefetchOp)
def _prefetch(d: Decoder, op: ptx.PrefetchOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """`prefetch.L1/.L2`: a cache hint, no effect. `prefetch.tensormap [a]`: the operand must
    be a tensor map the launch describes (PTX ISA 9.0, prefetch: a tensormap address)."""
    nxt = index + 1
    if not op.tensormap:
        return (lambda w: nxt), None
    owner = op.addr.owner
    if isinstance(owner, ptx.SymbolOp):
        param = d.params.get(owner.symbol.data)
        if param is None:
            raise Refused(f"prefetch.tensormap of '{owner.symbol.data}', which is not a parameter of the kernel")
        constant = PARAM_BASE + param.offset + op.offset.data
        address: Operand = lambda w, R: constant  # noqa: E731
    else:
        address = d.address(op.addr, op.offset.data)
    guard = d.guard(op)

    def run(w: PtxWarp) -> int:
        R = w.regs
        for lane in np.flatnonzero(exec_mask(w, R, guard)).tolist():
            bulk_copy.check_prefetch(d.tensor_maps, machine.at(address(w, R), lane), op.mnemonic())
        return nxt

    return run, None
