"""TMA and bulk copies as machine actions, for both levels: the NVVM ops
(interpreter/nvvm_tma.py) and the PTX they select to (interpreter/ptx/tma_copy.py) call
these, so a copy lands, races and completes on its mbarrier the same way at each level.

The box itself is `interpreter/tma.py`'s model (pinned by the H100 fixtures); this module
models *when* it happens (docs/tma.md, "When the box lands"):

* A load writes its box when it is issued, as a write of the issuing warp, and then
  completes the box's bytes on the mbarrier (`tma.TensorMap.box_bytes`), releasing the
  issuing warp's clock (PTX ISA 9.0, cp.async.bulk.tensor: the data is visible to the
  threads that observe the phase completion). The bytes land in box order; when the
  mbarrier's phase expects fewer bytes than the box (`expect_tx` too low, its arrivals
  done), the phase completes once those have landed and the rest lands later, in a new
  epoch of the issuing warp: a consumer that passed the phase reads them unordered, a
  race. `expect_tx` too high leaves the phase incomplete: a deadlock naming the barrier.
* Multicast writes the box at the same offset in each CTA of the 16-bit ctaMask and
  completes it on the mbarrier at the same offset in each (H100: `tma_multicast_*`).
  `.cta_group::2` (`pair`) lets the mbarrier be in the destination's CTA or its peer
  (PTX ISA 9.0, cp.async.bulk.tensor, ".cta_group"); without it the mbarrier must be in
  the destination's CTA.
* A store (or reduction) reads the shared box and writes global memory when issued, its
  reads and writes race-checked as the issuing warp's. The hardware may read the source
  any time until the `cp.async.bulk.wait_group[.read]` that completes the store's bulk
  async-group (PTX ISA 9.0, cp.async.bulk.wait_group: `.read` waits until the sources
  have been read), so the store stays pending in its thread's groups (`BulkReads`) and
  its read is checked again when that wait completes it, with what the warp knew at the
  issue: another warp's write of the source since then is a data race, the issuing
  warp's own an `async-copy-unfinished` hazard. A store no wait completes is checked when
  its warp exits.

What silicon refuses (`tma.TmaFault`) and what the model does not cover
(`tma.TensorMapError`) are `tma-invalid` hazards; a box outside shared memory or the
tensor's buffer is `out-of-bounds`. `what` names the instruction or op in messages; `op`
is the access site race reports point at.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from xdsl_tmem.interpreter import races, tma
from xdsl_tmem.interpreter.executor import Warp
from xdsl_tmem.interpreter.machine import OFFSET_MASK, PARAM_BASE, RANK_SHIFT, Buffer, Cta, Hazard
from xdsl_tmem.interpreter.nvvm import use_barrier
from xdsl_tmem.interpreter.shadow import SITE_SHIFT, Shadow


def signed32(value: int) -> int:
    """A 32-bit tensor coordinate as the signed number it is (boxes may start before 0)."""
    value &= 0xFFFF_FFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def tensor_map_at(maps: Mapping[int, tma.TensorMap], address: int, what: str) -> tma.TensorMap:
    """The tensor map of the kernel parameter at `address` (`maps`: by parameter offset, the
    address less `PARAM_BASE`)."""
    tmap = maps.get(address - PARAM_BASE)
    if tmap is None:
        described = ", ".join(f"{PARAM_BASE + o:#x}" for o in sorted(maps)) or "none"
        raise Hazard(
            "tma-invalid",
            f"{what}: tensor-map operand {address:#x} is not the address of a tensor-map kernel parameter "
            f"(the launch describes those at {described}; pass them as tensormap:... arguments)",
        )
    return tmap


def _fault(what: str, e: Exception) -> Hazard:
    return Hazard("tma-invalid", f"{what}: {e}")


def _buffer(w: Warp, tmap: tma.TensorMap) -> Buffer:
    buffer, _ = w.cluster.memory.locate(tmap.global_address, 1)
    return buffer


def _units(data: NDArray[np.uint8], views: dict[np.dtype[Any], NDArray[Any]]) -> NDArray[np.complex128]:
    """`data`'s whole 16-byte units (`tma.load_box`), made once and kept with its other
    views (a buffer's or a CTA's), where a box load looks first."""
    view = views[tma.UNIT] = tma.units(data)
    return view


def _check_inside(cta: Cta, addresses: NDArray[np.int64], what: str) -> None:
    _check_top(cta, int(addresses.max()) if addresses.size else 0, what)


def _check_top(cta: Cta, top: int, what: str) -> None:
    """The highest shared byte a copy touches, `top`, must be inside the CTA's shared memory."""
    if top >= cta.layout.size:
        raise Hazard(
            "out-of-bounds",
            f"{what}: the box reaches shared byte {top:#x} of CTA {cta.rank}, past its "
            f"{cta.layout.size} bytes of shared memory",
        )


def multicast_targets(mask: int | None, dst: int, bar: int) -> list[tuple[int, int]]:
    """(destination, mbarrier) of each CTA a load writes: its own, or the same offsets in
    each CTA of the 16-bit ctaMask."""
    if mask is None:
        return [(dst, bar)]
    ranks = [r for r in range(16) if mask >> r & 1]
    return [(r << RANK_SHIFT | (dst & OFFSET_MASK), r << RANK_SHIFT | (bar & OFFSET_MASK)) for r in ranks]


def tensor_load(
    w: Warp, op: Any, what: str, tmap: tma.TensorMap, coords: Sequence[int], dst: int, bar_address: int, pair: bool
) -> None:
    """One CTA's part of a tensor load: the box at `coords` into `dst`, completing on the
    mbarrier at `bar_address` (`pair`: `.cta_group::2`)."""
    cluster = w.cluster
    cta, offset = cluster.cta_of(dst)
    bar_cta, _ = cluster.cta_of(bar_address)
    if bar_cta.rank != cta.rank and not (pair and bar_cta.rank == cta.rank ^ 1):
        allowed = "the destination's CTA or its peer" if pair else "the destination's CTA"
        raise Hazard(
            "tma-invalid",
            f"{what}: the box goes to CTA {cta.rank} but the mbarrier is in CTA {bar_cta.rank} (PTX ISA: "
            f"it must be in {allowed})",
        )
    try:
        plan, block = tma.load_plan(tmap, coords, offset)
    except (tma.TmaFault, tma.TensorMapError) as e:
        raise _fault(what, e) from None
    if block + plan.high > cta.layout.size:
        _check_top(cta, block + plan.high - 1, what)  # (raises)
    buffer, _ = cluster.memory.locate(tmap.global_address, 1)
    bar = use_barrier(w, bar_address, f"{what} complete_tx")
    total = plan.shared.size
    # expect_tx lower than the box: the phase completes after its first `early` bytes land
    tx = bar.tx
    early = tx if bar.pending == 0 and 0 < tx < total else total
    # the written bytes (the CTA's shadow starts at its shared byte 0), in box order
    index: Callable[[], NDArray[np.int64]] = lambda: plan.shared + block  # noqa: E731
    if early == total and plan.contiguous:
        races.check_span(w, op, cta.shadow, (block + plan.low, block + plan.high), index)
    else:
        races.check(w, op, cta.shadow, index()[:early], write=True)
    gunits, sunits = buffer.views.get(tma.UNIT), cta.smem_views.get(tma.UNIT)
    if gunits is None:
        gunits = _units(buffer.data, buffer.views)
    if sunits is None:
        sunits = _units(cta.smem, cta.smem_views)
    try:
        tma.load_box(tmap, buffer.data, buffer.base, coords, cta.smem, offset, (plan, block), (gunits, sunits))
    except tma.TmaFault as e:
        raise Hazard("out-of-bounds", f"{what}: {e}") from None
    bar.add_tx(-early, w.clock.release())
    if early < total:
        races.check(w, op, cta.shadow, index()[early:], write=True)
        bar.add_tx(early - total, w.clock.release())


def tensor_store(
    w: Warp, op: Any, what: str, tmap: tma.TensorMap, coords: Sequence[int], src: int, reduction: str | None, lane: int
) -> None:
    """A tensor store by `lane`, or (`reduction`: its kind) a reduction into the box:
    global = op(global, shared)."""
    cta, offset = w.cluster.cta_of(src)
    if cta is not w.cta:
        raise Hazard("tma-invalid", f"{what}: the source {src:#x} is in CTA {cta.rank}, not the issuing "
                                    f"CTA {w.cta.rank} (.shared::cta)")  # fmt: skip
    buffer = _buffer(w, tmap)
    try:
        if reduction is not None:
            dst, read = tma.reduce_box(reduction, tmap, buffer.data, buffer.base, coords, cta.smem, offset)
        else:
            dst, read = tma.store_bytes(tmap, buffer.data, buffer.base, coords, offset)
    except tma.TmaFault as e:
        kind = "out-of-bounds" if "outside the memory" in str(e) else "tma-invalid"
        raise Hazard(kind, f"{what}: {e}") from None
    except tma.TensorMapError as e:
        raise _fault(what, e) from None
    if not dst.size:  # wholly past the end of the tensor: nothing is written
        return
    _check_inside(cta, read, what)
    races.check(w, op, cta.shadow, read, write=False)
    races.check(w, op, buffer.shadow, dst, write=True)
    if reduction is None:  # (a reduction wrote its result above)
        buffer.data[dst] = cta.smem[read]
    _pending(w, lane, BulkRead(op, what, cta.shadow, read, w.clock.vc.copy()))


def check_bulk(what: str, src: int, dst: int, size: int) -> None:
    """Source, destination and size of a non-tensor bulk copy must be multiples of 16."""
    if size % 16 or src % 16 or dst % 16:
        raise Hazard("tma-invalid", f"{what}: source {src:#x}, destination {dst:#x} and size {size} "
                                    "must be multiples of 16 (PTX ISA 9.0, cp.async.bulk)")  # fmt: skip


def bulk_load(w: Warp, op: Any, what: str, dst: int, src: int, size: int, bar_address: int) -> None:
    """`size` global bytes into shared memory, completing `size` on the mbarrier, which
    must be in the destination's CTA."""
    check_bulk(what, src, dst, size)
    cta, offset = w.cluster.cta_of(dst)
    if w.cluster.cta_of(bar_address)[0] is not cta:
        raise Hazard("tma-invalid", f"{what}: the mbarrier {bar_address:#x} is not in the destination's CTA "
                                    f"{cta.rank} (PTX ISA: it must be)")  # fmt: skip
    buffer, start = w.cluster.memory.locate(src, size)
    written = np.arange(offset, offset + size, dtype=np.int64)
    _check_inside(cta, written, what)
    bar = use_barrier(w, bar_address, f"{what} complete_tx")
    races.check(w, op, cta.shadow, written, write=True)
    cta.smem[offset : offset + size] = buffer.data[start : start + size]
    bar.add_tx(-size, w.clock.release())


def bulk_store(w: Warp, op: Any, what: str, dst: int, src: int, size: int, lane: int) -> None:
    """`size` shared bytes of the issuing CTA into global memory, when `lane` issues it."""
    check_bulk(what, src, dst, size)
    cta, offset = w.cluster.cta_of(src)
    if cta is not w.cta:
        raise Hazard("tma-invalid", f"{what}: the source {src:#x} is in CTA {cta.rank}, not the issuing "
                                    f"CTA {w.cta.rank} (.shared::cta)")  # fmt: skip
    buffer, start = w.cluster.memory.locate(dst, size)
    read = np.arange(offset, offset + size, dtype=np.int64)
    _check_inside(cta, read, what)
    races.check(w, op, cta.shadow, read, write=False)
    races.check(w, op, buffer.shadow, np.arange(start, start + size, dtype=np.int64), write=True)
    buffer.data[start : start + size] = cta.smem[offset : offset + size]
    _pending(w, lane, BulkRead(op, what, cta.shadow, read, w.clock.vc.copy()))


class BulkRead(NamedTuple):
    """A bulk store's read of shared memory that no wait has completed yet."""

    op: Any
    what: str
    shadow: Shadow
    where: NDArray[np.int64]
    """The source's bytes in `shadow`."""
    known: NDArray[np.int64]
    """The issuing warp's vector clock at the issue (its own component: the epoch the
    issue ended)."""

    def key(self) -> tuple[int, int, int, bytes]:
        return id(self.op), int(self.where[0]), self.where.size, self.known.tobytes()


BulkGroups = tuple[tuple[BulkRead, ...], ...]
"""One thread's bulk async-groups, oldest first; the last is its open group."""


class BulkReads(NamedTuple):
    """The stores pending in a warp's lanes (`Warp.bulk_reads`; None: none). Never changed
    in place: copies of the machine state share it."""

    lanes: dict[int, BulkGroups]
    """Lane → its groups, for the lanes with a store pending."""

    def key(self) -> tuple[Any, ...]:
        """In a machine state's key (explore.py)."""
        return tuple((lane, tuple(tuple(r.key() for r in g) for g in groups)) for lane, groups in self.lanes.items())

    def finish(self, w: Warp) -> None:
        """The warp exits: its stores have read their sources by now."""
        bulk_wait(w, None, 0)


def _pending(w: Warp, lane: int, read: BulkRead) -> None:
    """`read` joins the open group of `lane`; the warp's later accesses are newer than
    the issue (races.py epochs)."""
    lanes = {} if w.bulk_reads is None else w.bulk_reads.lanes
    groups = lanes.get(lane, ((),))
    w.bulk_reads = BulkReads({**lanes, lane: (*groups[:-1], (*groups[-1], read))})
    w.clock.tick()


def bulk_commit(w: Warp, lanes: Iterable[int]) -> None:
    """`cp.async.bulk.commit_group` in `lanes`: each closes its open group (an empty group
    counts for `wait_group N`)."""
    if w.bulk_reads is not None:
        committing = set(lanes)
        pending = w.bulk_reads.lanes.items()
        w.bulk_reads = BulkReads({lane: (*groups, ()) if lane in committing else groups for lane, groups in pending})


def bulk_wait(w: Warp, lanes: Iterable[int] | None, pending: int) -> None:
    """`cp.async.bulk.wait_group[.read] pending` in `lanes` (None: every lane, at the
    warp's exit, with `pending` 0): each lane's committed groups but its `pending` most
    recent complete, oldest first, and their stores' reads are checked (`_complete`)."""
    if w.bulk_reads is None:
        return
    waiting = None if lanes is None else set(lanes)
    kept: dict[int, BulkGroups] = {}
    for lane, groups in w.bulk_reads.lanes.items():
        if waiting is None or lane in waiting:
            done = max(len(groups) - 1 - pending, 0) if waiting is not None else len(groups)
            for group in groups[:done]:
                for read in group:
                    _complete(w, read)
            groups = groups[done:] or ((),)
        if any(groups):
            kept[lane] = groups
    w.bulk_reads = BulkReads(kept) if kept else None


def _complete(w: Warp, read: BulkRead) -> None:
    """The hardware has read the store's source by now: no write of it may lie between
    the issue and this wait. The issuing warp's own is found by its epoch (newer than the
    issue); another warp's, by checking the read again with the warp's knowledge at the
    issue (its own component the current epoch, as for `cp.async`)."""
    me, issued = w.clock.generic, int(read.known[w.clock.generic])
    late = races.own_since(races.write_records(read.shadow, read.where), me, issued)
    if late is not None:
        site = w.cluster.memory.sites.sites[late >> SITE_SHIFT]
        raise Hazard(
            "async-copy-unfinished",
            f"{getattr(site.op, 'name', 'an access')} by {w.name} writes bytes of the {read.where.size}-byte source "
            f"of its {read.what} after issuing it and before the cp.async.bulk.wait_group that completes it: the "
            "store may read them before or after that write",
            [(read.op, "the bulk store"), (site.op, "the write")],
        )
    clock, w.clock = w.clock, w.clock.knowing(read.known)
    try:
        races.check(w, read.op, read.shadow, read.where, write=False)
    finally:
        w.clock = clock


def check_prefetch(maps: Mapping[int, tma.TensorMap], address: int, what: str) -> None:
    """`prefetch.tensormap`: the operand must be a tensor map the launch describes (PTX ISA
    9.0, prefetch: a tensormap address)."""
    if address - PARAM_BASE not in maps:
        raise Hazard("tma-invalid", f"{what}: {address:#x} is not the address of a tensor-map kernel "
                                    "parameter the launch describes")  # fmt: skip
