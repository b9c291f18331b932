"""TMA at the PTX level: `cp.async.bulk.tensor` (tile mode), `cp.async.bulk`, their bulk groups,
`prefetch.tensormap`.

The box itself is `interpreter/tma.py`'s model (pinned by the H100 fixtures); this module
finds its operands and models *when* it happens:

* A load (`.shared::{cta,cluster}.global ... .mbarrier::complete_tx::bytes`) writes its
  box when it is issued, as a write of the issuing warp, and then completes the box's
  bytes on the mbarrier (`tma.TensorMap.box_bytes`), releasing the issuing warp's clock
  (PTX ISA 9.0, cp.async.bulk.tensor: the data is visible to the threads that observe the
  phase completion). A thread of another warp that reads the stage without being ordered
  after that phase races with the box (`smem-data-race`); a load that overwrites a stage
  whose reads are not ordered before the issue races with them; a read of bytes no copy
  has landed in yet is `smem-read-uninitialized`. The bytes land in box order; when the
  mbarrier's phase expects fewer bytes than the box (`expect_tx` too low, its arrivals
  done), the phase completes once those have landed and the rest lands later, in a new
  epoch of the issuing warp: a consumer that passed the phase reads them unordered, a
  race. `expect_tx` too high leaves the phase incomplete: a deadlock naming the barrier.
  Limitation: the landing is ordered before the issuing warp's later releases too, so a
  consumer ordered after the copy's issue only through another barrier of the issuing
  warp is not reported (the kernels synchronise stages through the mbarrier).
* `.multicast::cluster` writes the box at the same offset in each CTA of the 16-bit
  ctaMask and completes it on the mbarrier at the same offset in each (H100:
  `tma_multicast_*`). `.cta_group::2` lets the mbarrier be in the destination's CTA or its
  peer (PTX ISA 9.0, cp.async.bulk.tensor, ".cta_group"); without it the mbarrier must be
  in the destination's CTA. Multicast with `.cta_group::2` is refused (its barrier mapping
  is unverified). `.L2::cache_hint` has no visible effect.
* A store (`.global.shared::cta.bulk_group`) reads the shared box and writes global
  memory when issued (its reads and writes race-checked as the issuing warp's); so
  `cp.async.bulk.commit_group` / `wait_group[.read]` have nothing left to wait for. Not
  reported, therefore: overwriting the source before `wait_group.read`, or reading the
  destination before `wait_group` (a known gap).
* The tensor-map operand is the address of a byval tensor-map kernel parameter (`mov` of
  the parameter, `cvta.param`: `program.PARAM_BASE`), or the parameter's name; the
  launch describes the map (`tma.TensorMapArgument`).

Global bytes a load reads are not race-checked (every CTA reads the same A and B tiles;
recording each reader would dominate the run). What silicon refuses (`tma.TmaFault`: a
misaligned shared address, a coordinate off a 16-byte unit, a negative store coordinate)
and what the model does not cover (`tma.TensorMapError`) are `tma-invalid` hazards at the
instruction; a box outside shared memory or the tensor's buffer is `out-of-bounds`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from xdsl_tmem.dialects import ptx
from xdsl_tmem.interpreter import nvvm as machine
from xdsl_tmem.interpreter import races, tma
from xdsl_tmem.interpreter.machine import OFFSET_MASK, RANK_SHIFT, Buffer, Cta, Hazard
from xdsl_tmem.interpreter.ptx.base import Lanes
from xdsl_tmem.interpreter.ptx.program import (
    PARAM_BASE,
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


def _signed(value: int) -> int:
    """A `.b32` tensor coordinate as the signed number it is (boxes may start before 0)."""
    value &= 0xFFFF_FFFF
    return value - (1 << 32) if value >= 1 << 31 else value


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
    tmap = d.tensor_maps.get(address - PARAM_BASE)
    if tmap is None:
        described = ", ".join(f"{PARAM_BASE + o:#x}" for o in sorted(d.tensor_maps)) or "none"
        raise Hazard(
            "tma-invalid",
            f"{op.mnemonic()}: tensor-map operand {address:#x} is not the address of a tensor-map kernel parameter "
            f"(the launch describes those at {described}; pass them as tensormap:... arguments)",
        )
    return tmap


def _fault(op: TensorOp, e: Exception) -> Hazard:
    return Hazard("tma-invalid", f"{op.mnemonic()}: {e}")


def _buffer(w: PtxWarp, tmap: tma.TensorMap) -> Buffer:
    buffer, _ = w.cluster.memory.locate(tmap.global_address, 1)
    return buffer


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

    def run(w: PtxWarp) -> int:
        R = w.regs
        lanes = exec_mask(w, R, guard)
        for lane in np.flatnonzero(lanes).tolist():  # each executing thread issues its own copy
            tmap = _tensor_map(d, op, machine.at(tmap_at(w, R), lane))
            at = [_signed(machine.at(c(w, R), lane)) for c in coords]
            dst = machine.at(smem(w, R), lane)
            if not load:
                _store(w, op, tmap, at, dst)
                continue
            assert mbar is not None
            bar = machine.at(mbar(w, R), lane)
            if mask is None:
                _load(w, op, tmap, at, dst, bar)
                continue
            ranks = machine.at(mask(w, R), lane) & 0xFFFF
            for rank in range(16):
                if ranks >> rank & 1:
                    offset = rank << RANK_SHIFT
                    _load(w, op, tmap, at, offset | (dst & OFFSET_MASK), offset | (bar & OFFSET_MASK))
        return nxt

    return run, None


def _load(w: PtxWarp, op: ptx.CpAsyncBulkTensorOp, tmap: tma.TensorMap, coords: Sequence[int], dst: int,
          bar_address: int) -> None:  # fmt: skip
    cta, offset = w.cluster.cta_of(dst)
    bar_cta, _ = w.cluster.cta_of(bar_address)
    peers = (cta.rank, cta.rank ^ 1) if op.cta_group is not None else (cta.rank,)
    if bar_cta.rank not in peers:
        allowed = "the destination's CTA or its peer" if op.cta_group is not None else "the destination's CTA"
        raise Hazard(
            "tma-invalid",
            f"{op.mnemonic()}: the box goes to CTA {cta.rank} but the mbarrier is in CTA {bar_cta.rank} (PTX ISA: "
            f"it must be in {allowed})",
        )
    try:
        plan, block = tma.load_plan(tmap, coords, offset)
    except (tma.TmaFault, tma.TensorMapError) as e:
        raise _fault(op, e) from None
    _check_top(cta, block + plan.high - 1, op)
    buffer = _buffer(w, tmap)
    bar = machine.use_barrier(w, bar_address, "cp.async.bulk.tensor complete_tx")
    total = plan.shared.size
    # expect_tx lower than the box: the phase completes after its first `early` bytes land
    early = bar.tx if bar.pending == 0 and 0 < bar.tx < total else total
    # the written bytes (the CTA's shadow starts at its shared byte 0), in box order
    index: Callable[[], NDArray[np.int64]] = lambda: plan.shared + block  # noqa: E731
    if early == total and plan.contiguous:
        races.check_span(w, op, cta.shadow, (block + plan.low, block + plan.high), index)
    else:
        races.check(w, op, cta.shadow, index()[:early], write=True)
    try:
        tma.load_box(tmap, buffer.data, buffer.base, coords, cta.smem, offset)
    except tma.TmaFault as e:
        raise Hazard("out-of-bounds", f"{op.mnemonic()}: {e}") from None
    bar.add_tx(-early, w.clock.release())
    if early < total:
        races.check(w, op, cta.shadow, index()[early:], write=True)
        bar.add_tx(early - total, w.clock.release())


def _check_inside(cta: Cta, addresses: NDArray[np.int64], op: TensorOp | ptx.CpAsyncBulkOp) -> None:
    _check_top(cta, int(addresses.max()) if addresses.size else 0, op)


def _check_top(cta: Cta, top: int, op: TensorOp | ptx.CpAsyncBulkOp) -> None:
    """The highest shared byte a copy touches, `top`, must be inside the CTA's shared memory."""
    if top >= cta.layout.size:
        raise Hazard(
            "out-of-bounds",
            f"{op.mnemonic()}: the box reaches shared byte {top:#x} of CTA {cta.rank}, past its "
            f"{cta.layout.size} bytes of shared memory",
        )


def _store(w: PtxWarp, op: TensorOp, tmap: tma.TensorMap, coords: Sequence[int], src: int) -> None:
    """A tensor store, or (`cp.reduce`) a reduction into the box: global = op(global, shared)."""
    cta, offset = w.cluster.cta_of(src)
    if cta is not w.cta:
        raise Hazard("tma-invalid", f"{op.mnemonic()}: the source {src:#x} is in CTA {cta.rank}, not the issuing "
                                    f"CTA {w.cta.rank} (.shared::cta)")  # fmt: skip
    buffer = _buffer(w, tmap)
    try:
        if isinstance(op, ptx.CpReduceAsyncBulkTensorOp):
            dst, read = tma.reduce_box(op.kind.data.value, tmap, buffer.data, buffer.base, coords, cta.smem, offset)
        else:
            dst, read = tma.store_bytes(tmap, buffer.data, buffer.base, coords, offset)
    except tma.TmaFault as e:
        kind = "out-of-bounds" if "outside the memory" in str(e) else "tma-invalid"
        raise Hazard(kind, f"{op.mnemonic()}: {e}") from None
    except tma.TensorMapError as e:
        raise _fault(op, e) from None
    if not dst.size:  # wholly past the end of the tensor: nothing is written
        return
    _check_inside(cta, read, op)
    races.check(w, op, cta.shadow, read, write=False)
    races.check(w, op, buffer.shadow, dst, write=True)
    if not isinstance(op, ptx.CpReduceAsyncBulkTensorOp):  # (a reduction wrote its result above)
        buffer.data[dst] = cta.smem[read]


@decodes(ptx.CpReduceAsyncBulkTensorOp)
def _reduce_tensor(d: Decoder, op: ptx.CpReduceAsyncBulkTensorOp, index: int, labels: dict[str, int],
                   rpc: int) -> Decoding:  # fmt: skip
    """As a tensor store (above), the box combined with global memory by `tma.reduce_box`."""
    smem = d.address(op.smem, op.offset.data)
    tmap_at = _tensor_map_operand(d, op)
    coords = [d.integer(c) for c in op.coords]
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        R = w.regs
        for lane in np.flatnonzero(exec_mask(w, R, guard)).tolist():
            tmap = _tensor_map(d, op, machine.at(tmap_at(w, R), lane))
            _store(w, op, tmap, [_signed(machine.at(c(w, R), lane)) for c in coords], machine.at(smem(w, R), lane))
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
            if n % 16 or at % 16 or to % 16:
                raise Hazard("tma-invalid", f"{op.mnemonic()}: source {at:#x}, destination {to:#x} and size {n} "
                                            "must be multiples of 16 (PTX ISA 9.0, cp.async.bulk)")  # fmt: skip
            if mbar is None:
                _bulk_store(w, op, to, at, n)
            else:
                _bulk_load(w, op, to, at, n, machine.at(mbar(w, R), lane))
        return nxt

    return run, None


def _bulk_load(w: PtxWarp, op: ptx.CpAsyncBulkOp, dst: int, src: int, size: int, bar_address: int) -> None:
    cta, offset = w.cluster.cta_of(dst)
    if w.cluster.cta_of(bar_address)[0] is not cta:
        raise Hazard("tma-invalid", f"{op.mnemonic()}: the mbarrier {bar_address:#x} is not in the destination's CTA "
                                    f"{cta.rank} (PTX ISA: it must be)")  # fmt: skip
    buffer, start = w.cluster.memory.locate(src, size)
    written = np.arange(offset, offset + size, dtype=np.int64)
    _check_inside(cta, written, op)
    bar = machine.use_barrier(w, bar_address, "cp.async.bulk complete_tx")
    races.check(w, op, cta.shadow, written, write=True)
    cta.smem[offset : offset + size] = buffer.data[start : start + size]
    bar.add_tx(-size, w.clock.release())


def _bulk_store(w: PtxWarp, op: ptx.CpAsyncBulkOp, dst: int, src: int, size: int) -> None:
    cta, offset = w.cluster.cta_of(src)
    if cta is not w.cta:
        raise Hazard("tma-invalid", f"{op.mnemonic()}: the source {src:#x} is in CTA {cta.rank}, not the issuing "
                                    f"CTA {w.cta.rank} (.shared::cta)")  # fmt: skip
    buffer, start = w.cluster.memory.locate(dst, size)
    read = np.arange(offset, offset + size, dtype=np.int64)
    _check_inside(cta, read, op)
    races.check(w, op, cta.shadow, read, write=False)
    races.check(w, op, buffer.shadow, np.arange(start, start + size, dtype=np.int64), write=True)
    buffer.data[start : start + size] = cta.smem[offset : offset + size]


# --------------------------------------------------------------------------------------
# bulk async-groups, prefetch.tensormap
# --------------------------------------------------------------------------------------


def bulk_group(d: Decoder, op: ptx.Instruction, index: int) -> Decoding:
    """`cp.async.bulk.commit_group` / `cp.async.bulk.wait_group[.read] N`: the model's
    bulk stores complete when issued (above), so a group has nothing left to wait for."""
    nxt = index + 1
    return (lambda w: nxt), None


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
            at = machine.at(address(w, R), lane)
            if at - PARAM_BASE not in d.tensor_maps:
                raise Hazard("tma-invalid", f"{op.mnemonic()}: {at:#x} is not the address of a tensor-map kernel "
                                            "parameter the launch describes")  # fmt: skip
        return nxt

    return run, None
