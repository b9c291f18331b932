"""`cp.async` (non-bulk), its commit and wait groups, and `ldmatrix` at the PTX level.

`cp.async.{ca,cg}.shared{::cta}.global [dst], [src], cp-size{, src-size}` copies from
global to shared memory asynchronously (PTX ISA 9.0, "Data Movement and Conversion
Instructions: cp.async"): each thread's copies join its open group, `cp.async.commit_group`
closes that group, and `cp.async.wait_group N` waits until at most the N most recent of
the thread's committed groups are pending. The model keeps each warp's copies pending
(`AsyncCopies`, per lane) and *lands* them when a wait completes their group: the source
is read and the destination written then, on behalf of the issuing warp, checked for
races with the knowledge the warp had when it issued the copy. So an access of the
destination (or a write of the source) that is not ordered before the issue, or is not
ordered after the wait, is a hazard whatever the copy's real landing time:

* another warp's: a data race (`smem-data-race` / `global-data-race`), as between two
  plain accesses (races.py);
* the issuing warp's own between the issue and the wait: `async-copy-unfinished` (its
  program order does not order it with the copy);
* any read of destination bytes nothing wrote before the copy lands (a thread's, or the
  tensor core's operand read): `smem-read-uninitialized` (`_claim`).

Bytes past `src-size` are zero-filled, and a copy with `src-size` 0 reads no source
byte (the form Triton emits for masked tiles). Copies no wait completes never land.
`ldmatrix` is synchronous: its rows are read at once, as a warp's `ld.shared`.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import IntegerAttr

from xdsl_tmem.dialects import ptx
from xdsl_tmem.interpreter import races
from xdsl_tmem.interpreter.machine import GLOBAL_BASE, OFFSET_MASK, RANK_SHIFT, SHARED_LIMIT, Hazard
from xdsl_tmem.interpreter.memory import Access, load, store
from xdsl_tmem.interpreter.ptx import tma_copy
from xdsl_tmem.interpreter.ptx.program import (
    Decoder,
    Decoding,
    Refused,
    decodes,
    exec_mask,
    with_mask,
)
from xdsl_tmem.interpreter.shadow import (
    COMP_SHIFT,
    FOREIGN_EPOCH,
    NONE,
    SHARED,
    SITE_SHIFT,
    Shadow,
)
from xdsl_tmem.interpreter.values import WARP, Mask, Value, format_lanes

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.ptx.warp import PtxWarp

_LITTLE = sys.byteorder == "little"
_BYTES = np.dtype(np.uint8)
_ByteLanes = NDArray[np.uint8]
_Int64Lanes = NDArray[np.int64]
_RowLanes = NDArray[np.uint16]
"""(Aliases: a subscripted generic in a `cast` of a hot path is built at every call.)"""
_NO_LANES: Mask = np.zeros(WARP, dtype=np.bool_)
_NO_LANES.flags.writeable = False


class Copy(NamedTuple):
    """One `cp.async` as some lanes of a warp issued it (all arrays have 32 lanes).
    (Immutable. The three records of the pending copies are named tuples, not frozen
    dataclasses: one is made per issue, commit and wait, and a tuple is several times
    cheaper to make.)"""

    op: ptx.CpAsyncOp
    lanes: Mask
    dst: NDArray[np.int64]
    src: NDArray[np.int64]
    src_size: NDArray[np.int64]
    size: int
    known: NDArray[np.int64]
    """The warp's vector clock when it issued the copy (its own component: the epoch it
    then had, which the issue ended: later accesses of the warp are newer)."""
    units: Units | None = None
    """Its lanes as whole units (`_issue_units`), where that applies."""

    def only(self, lanes: Mask) -> Copy | None:
        keep = self.lanes & lanes
        if not np.count_nonzero(keep):
            return None
        if keep.tobytes() == self.lanes.tobytes():
            return self  # (immutable: the copy in all its lanes)
        return Copy(self.op, keep, self.dst, self.src, self.src_size, self.size, self.known)


class Units(NamedTuple):
    """A copy's lanes (all it was issued in) as whole `cp-size` units, in lane order: the
    common case of a landing (`_unit_plan`). Memories by base address (their race shadows
    are the state's: exploration copies them)."""

    dst_base: int
    dst: NDArray[np.int64]
    """Distinct units of one shared memory."""
    src_base: int
    src: NDArray[np.int64] | None
    """Units of one kernel buffer; None: the lanes read no source byte (a zero fill)."""
    dst_span: tuple[int, int] | None = None
    """The least and the greatest of `dst` where they are all the units between (a
    swizzled ring stage: its rows are a slice of the shadow's), else None."""


class Group(NamedTuple):
    """A committed group: the lanes that committed it (each its own group) and their copies."""

    lanes: Mask
    copies: tuple[Copy, ...]


class AsyncCopies(NamedTuple):
    """A warp's pending `cp.async` copies: those not committed yet, and the committed
    groups, oldest first. Immutable (updates make a new one), so the copies of a warp that
    schedule exploration makes share it safely."""

    open: tuple[Copy, ...] = ()
    groups: tuple[Group, ...] = ()

    def key(self) -> tuple[Any, ...]:
        """What exploration's state key needs: which copies are pending in which lanes
        and groups (the copies' operands follow from the registers that issued them
        only while those are unchanged)."""

        def copies(cs: tuple[Copy, ...]) -> tuple[Any, ...]:
            return tuple((id(c.op), c.lanes.tobytes(), c.dst.tobytes(), c.src.tobytes(), c.src_size.tobytes())
                         for c in cs)  # fmt: skip

        return copies(self.open), tuple((g.lanes.tobytes(), copies(g.copies)) for g in self.groups)


NO_COPIES = AsyncCopies()


# --------------------------------------------------------------------------------------
# cp.async
# --------------------------------------------------------------------------------------


def _lane_array(value: Value) -> NDArray[np.int64]:
    if isinstance(value, np.ndarray):  # (lane arrays are never written in place: no copy needed)
        return cast(_Int64Lanes, value).astype(np.int64, copy=False)
    number = int(value)
    lanes = _UNIFORM.get(number)
    if lanes is None:
        lanes = np.full(WARP, number, dtype=np.int64)
        lanes.flags.writeable = False
        if len(_UNIFORM) < _UNIFORM_KEPT:
            _UNIFORM[number] = lanes
    return lanes


_UNIFORM: dict[int, _Int64Lanes] = {}
"""A uniform operand's lanes by value (read-only, shared by the copies): src-size is one
of a few values (cp-size, 0), and a lane array found here is uniform (`_issue_from`)."""
_UNIFORM_KEPT = 64


def _immediate(value: Any) -> int | None:
    owner = value.owner
    if isinstance(owner, ptx.ImmOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    return None


@decodes(ptx.CpAsyncOp)
def _cp_async(d: Decoder, op: ptx.CpAsyncOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    size = _immediate(op.size)
    if size is None:  # the verifier requires an immediate
        raise Refused("cp-size is an integer immediate")
    dst = d.address(op.dst, op.dst_offset.data)
    src = d.address(op.src, op.src_offset.data)
    src_size = d.integer(op.src_size, size)
    guard = d.guard(op)
    nxt = index + 1
    planned = _Planned()

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        if not (guard is None and w.all_active) and not np.count_nonzero(mask):
            return nxt
        copy = Copy(op, mask.copy(), _lane_array(dst(w, R)), _lane_array(src(w, R)),
                    _lane_array(src_size(w, R)), size, w.clock.vc.copy())  # fmt: skip
        units = planned.issue(w, copy)
        if units is not None:
            copy = Copy(op, copy.lanes, copy.dst, copy.src, copy.src_size, size, copy.known, units)
        _claim(w, copy)
        w.clock.tick()  # the warp's later accesses are newer than the issue (races.py epochs)
        state = w.async_copies
        w.async_copies = AsyncCopies((*state.open, copy), state.groups)
        return nxt

    return run, None


class _Planned:
    """One `cp.async`'s destinations as units (`_issue_units`) by the lanes' destination
    addresses (and active lanes), for clusters of one shared-memory layout (how many
    CTAs, each one's size: all that the destination checks read): a loop's copies fill
    the same ring stages again and again, in every CTA of the grid. A destination found
    aligned, in one shared memory and distinct passes `_check_issue`'s destination checks
    again; the rest (src-size, the source) is checked at every issue, and where something
    there does not pass (`_issue_from`), `_check_issue` checks it all, in its order, and
    reports."""

    __slots__ = ("cluster", "known", "layout")

    def __init__(self) -> None:
        self.cluster: object = None
        self.layout: tuple[int, ...] = ()
        self.known: dict[bytes, tuple[int, _Int64Lanes, tuple[int, int] | None]] = {}

    def issue(self, w: PtxWarp, copy: Copy) -> Units | None:
        """`_check_issue`, with the destination's checks and units from earlier issues."""
        if self.cluster is not w.cluster:
            layout = tuple(cta.smem.size for cta in w.cluster.ctas)
            if layout != self.layout:
                self.known = {}
            self.cluster, self.layout = w.cluster, layout
        key = copy.dst.tobytes() + copy.lanes.tobytes()
        found = self.known.get(key)
        if found is not None:
            units = _issue_from(w, copy, found[0], found[1])
            if units is not None:
                return Units(units.dst_base, units.dst, units.src_base, units.src, found[2])
        units = _check_issue(w, copy)
        if units is not None and found is None:
            self.known[key] = (units.dst_base, units.dst, units.dst_span)
        return units


def _issue_from(w: PtxWarp, copy: Copy, dst_base: int, dst: _Int64Lanes) -> Units | None:
    """`_check_issue` of a copy whose destinations passed its checks before (`_Planned`),
    where its source and src-size pass them too and it is units; else None."""
    size = copy.size
    full = dst.size == WARP
    sizes = copy.src_size if full else copy.src_size[copy.lanes]
    s = int(sizes[0])
    if s not in (0, size) or (copy.src_size is not _UNIFORM.get(s) and np.count_nonzero(sizes != s)):
        return None
    src = copy.src if full else copy.src[copy.lanes]
    # (aligned even where nothing is read; size is 4, 8 or 16: a multiple of it has no
    # low bit set, in two's complement too)
    if int(np.bitwise_or.reduce(src, axis=None)) & (size - 1):
        return None
    if not s:
        return Units(dst_base, dst, 0, None)
    lo, hi = int(_min(src, axis=None)), int(_max(src, axis=None))
    buffer = _buffer_holding(w.cluster, lo, hi, size) if lo >= GLOBAL_BASE else None
    if buffer is None or buffer.base % size:
        return None
    sources = (src - buffer.base) >> _LOG2[size]  # (// size: the addresses are above the base)
    sources.flags.writeable = False
    return Units(dst_base, dst, buffer.base, sources)


_min, _max = np.minimum.reduce, np.maximum.reduce


def _check_issue(w: PtxWarp, copy: Copy) -> Units | None:
    """What the copy's operands must be when it is issued (PTX ISA, cp.async; "Addresses
    as Operands": an address aligned to the access size), and in bounds: reported at
    the `cp.async`, not at the wait that lands it. Returns the copy as units
    (`_issue_units`), where that applies. (Python lists: for 32 lanes cheaper than numpy.)"""
    size = copy.size
    lanes: list[int] = copy.lanes.nonzero()[0].tolist()
    every: list[list[int]] = [copy.dst.tolist(), copy.src.tolist(), copy.src_size.tolist()]
    dst, src, sizes = every if len(lanes) == WARP else ([values[k] for k in lanes] for values in every)
    bad = next((n for n in sizes if n < 0 or n > size), None)
    if bad is not None:
        raise Hazard(
            "cp-async-invalid",
            f"{copy.op.mnemonic()}: src-size {bad} in lanes {format_lanes(copy.lanes)}; it must be at most cp-size "
            f"{size} (a larger one is undefined behaviour)",
        )
    for what, addresses in (("destination", dst), ("source", src)):
        bad = next((a for a in addresses if a % size), None)
        if bad is not None:
            raise Hazard(
                "cp-async-invalid",
                f"{copy.op.mnemonic()}: {what} address 0x{bad:x} is not aligned to cp-size {size}",
            )
    cluster = w.cluster
    uniform = min(sizes) == max(sizes)
    if _in_one_memory(cluster, min(dst), max(dst), size) and (
        not any(sizes) or (uniform and _in_one_memory(cluster, min(src), max(src), sizes[0]))
    ):
        return _issue_units(cluster, copy, dst, sizes[0]) if uniform else None
    for lane in lanes:  # one lane at a time, to report the first that is out of bounds
        cluster.read(int(copy.dst[lane]), size)  # raises out-of-bounds
        if copy.src_size[lane]:
            cluster.memory.locate(int(copy.src[lane]), int(copy.src_size[lane]))
    return None


def _issue_units(cluster: Any, copy: Copy, dst: list[int], src_size: int) -> Units | None:
    """The copy as `Units` (its addresses in one memory each, aligned, each lane reading
    `src_size` bytes), where that applies: all of cp-size or none read, into distinct
    units of a shared memory, from a kernel buffer whose base is aligned to cp-size.
    (`dst`: the lanes' destinations, as a list; the units are computed on the arrays.)"""
    size = copy.size
    if src_size not in (0, size) or max(dst) >= SHARED_LIMIT or len(set(dst)) != len(dst):
        return None
    full = len(dst) == WARP
    dst_base = dst[0] >> RANK_SHIFT << RANK_SHIFT  # (the CTA's shadow's base)
    units = ((copy.dst if full else copy.dst[copy.lanes]) - dst_base) // size
    units.flags.writeable = False
    lo, hi = (min(dst) - dst_base) // size, (max(dst) - dst_base) // size
    span = (lo, hi) if hi - lo + 1 == len(dst) else None  # (distinct: all between)
    if not src_size:
        return Units(dst_base, units, 0, None, span)
    src = copy.src if full else copy.src[copy.lanes]
    if int(src.min()) < GLOBAL_BASE:
        return None
    buffer, _ = cluster.memory.locate(int(src[0]), 1)
    if buffer.base % size:
        return None
    sources = (src - buffer.base) // size
    sources.flags.writeable = False
    return Units(dst_base, units, buffer.base, sources, span)


def _in_one_memory(cluster: Any, lo: int, hi: int, size: int) -> bool:
    """Whether every access of `size` bytes at addresses `lo`..`hi` is inside one CTA's
    shared memory or one kernel buffer (then none is out of bounds: the memories are
    contiguous); False also where some may be, for the caller to check each."""
    if hi < SHARED_LIMIT:
        rank = lo >> RANK_SHIFT
        return (
            rank == hi >> RANK_SHIFT
            and rank < len(cluster.ctas)
            and ((hi & OFFSET_MASK) + size <= cluster.ctas[rank].smem.size)
        )
    return lo >= GLOBAL_BASE and _buffer_holding(cluster, lo, hi, size) is not None


def _buffer_holding(cluster: Any, lo: int, hi: int, size: int) -> Any:
    """The kernel buffer every access of `size` bytes at `lo`..`hi` is inside, or None."""
    for buffer in cluster.memory.buffers:
        if buffer.base <= lo and hi + size <= buffer.base + buffer.data.size:
            return buffer
    return None


_LOG2 = {4: 2, 8: 3, 16: 4}
"""log2 of each cp-size (PTX ISA, cp.async: 4, 8 or 16)."""


def _claim(w: PtxWarp, copy: Copy) -> None:
    """Destination bytes already written are written by the copy from the issue on (it
    lands at some point up to the wait): recorded as a write of the copy now, in the warp's
    issuing epoch, so that a read by another warp not ordered after the wait races with the
    copy whichever the schedule puts first, and the issuing warp's own reads before the
    wait are reported by `_check_own` when it lands. Bytes nothing wrote yet stay unwritten
    until the copy lands: reading them before is `smem-read-uninitialized`, for a thread
    and for the tensor core's operand reads (races.check_operand). Its data is written
    when it lands."""
    if copy.units is not None:
        shadow, units = races.locate(w.cluster, copy.units.dst_base), copy.units.dst
        if copy.units.dst_span is not None and _claim_span(w, copy, shadow, units, copy.units.dst_span):
            return
        last = races.unit_rows(shadow.write, copy.size).take(units, axis=0)
        found = _values_by_copy(last, [units.size])
        if found is not None:  # (one record throughout, the usual case; NONE: nothing written yet)
            if found[0] != NONE:  # (the units lie in the shadow: `_issue_units`)
                known: races.Known = (None, found, None)
                races.check_units(w, copy.op, shadow, units, copy.size, write=True, found=(last, known))
            return
        count = np.count_nonzero(last)
        if count == last.size:
            races.check_units(w, copy.op, shadow, units, copy.size, write=True, found=(last, None))
        elif count:
            written = races.unit_index(units, copy.size)[last.reshape(-1) != NONE]
            races.check(w, copy.op, shadow, written, write=True)
        return
    for shadow, lanes in _by_memory(w, copy.dst, copy.lanes):
        units = _units_of(copy.dst, lanes, shadow, copy.size)
        if units is not None:  # the common case, as whole units (races.check_units: the same checks)
            last = np.take(races.unit_rows(shadow.write, copy.size), units, axis=0)
            if last.all():
                races.check_units(w, copy.op, shadow, units, copy.size, write=True)
                continue
            if not last.any():
                continue
        index = ((copy.dst[lanes] - shadow.base)[:, None] + np.arange(copy.size, dtype=np.int64)).reshape(-1)
        written = index[shadow.write[index] != NONE]
        if written.size:
            races.check(w, copy.op, shadow, written, write=True)


def _claim_span(w: PtxWarp, copy: Copy, shadow: Shadow, units: _Int64Lanes, span: tuple[int, int]) -> bool:
    """`_claim` of units that are all those of `span` (`Units.dst_span`), where their rows
    hold one record throughout: the checks and records of `races.check_units` on the
    rows as a slice (the checks look at the records, not at their order; each record is
    one value: written to the slice). False (nothing done) where they hold several."""
    size, lo, hi = copy.size, span[0], span[1] + 1
    last = races.unit_rows(shadow.write, size)[lo:hi]
    first, data = last.item(0), last.tobytes()
    if data != data[:8] * last.size or shadow.host:
        return False
    if first == NONE:  # (nothing written yet: the copy writes them when it lands)
        return True
    reads = races.unit_rows(shadow.read, size)[lo:hi]
    clean = races.units_clean(w, shadow, units, size, True, last, reads, (span, [first], _read_values(reads)))
    if clean is None:  # (`check` decides and reports: races.check_units)
        races.check(w, copy.op, shadow, races.unit_index(units, size), write=True)
        return True
    stamp = races.stamp(w, copy.op)
    w.cluster.memory.sites.inexact.add(stamp >> SITE_SHIFT)
    _, written, seen = clean  # (as races.record_units, one record each)
    if seen:
        races.unit_rows(shadow.own_read(), size)[lo:hi] = NONE
    target = races.unit_rows(shadow.own_write(), size)
    if written:
        races.unit_rows(shadow.own_prev(), size)[lo:hi] = first
    target[lo:hi] = stamp
    return True


def _read_values(rows: _Int64Lanes) -> list[int] | None:
    """The records `rows` hold, each once, where they are at most two (a stage two warps'
    reads left, or one's and NONE): a few reductions, where `units_clean` would unpack
    every record; else None."""
    top = int(_max(rows, axis=None))
    if top == NONE:
        return [NONE]
    bottom = int(_min(rows, axis=None))
    if bottom == top:
        return [top]
    if np.count_nonzero(rows == bottom) + np.count_nonzero(rows == top) != rows.size:
        return None
    return [bottom, top]


def _units_of(addresses: NDArray[np.int64], lanes: NDArray[np.intp], shadow: Shadow, size: int) -> _Int64Lanes | None:
    """The lanes' `size`-byte units of `shadow` (their addresses are aligned to `size`:
    `_check_issue`), where they are distinct and the shadow's base is aligned too; else
    None (the per-byte path: later lanes win where they overlap)."""
    if shadow.base % size:
        return None
    units = (addresses[lanes] - shadow.base) // size
    listed: list[int] = units.tolist()
    return units if len(set(listed)) == len(listed) else None


def _by_memory(w: PtxWarp, addresses: NDArray[np.int64], lanes: Mask) -> list[tuple[Shadow, NDArray[np.intp]]]:
    """The lanes `lanes`, grouped by the memory (race shadow) their address is in: one
    group when they are all in one shared memory or one buffer (the usual case)."""
    index = np.flatnonzero(lanes)
    lo, hi = int(addresses[index].min()), int(addresses[index].max())
    shadow = races.locate(w.cluster, lo)
    if hi - shadow.base < shadow.write.size and races.locate(w.cluster, hi) is shadow:
        return [(shadow, index)]
    groups: dict[int, tuple[Shadow, list[int]]] = {}
    for lane in index.tolist():
        found = races.locate(w.cluster, int(addresses[lane]))
        groups.setdefault(id(found), (found, []))[1].append(lane)
    return [(found, np.array(members, dtype=np.intp)) for found, members in groups.values()]


@decodes(ptx.CpAsyncCommitGroupOp)
def _commit_group(d: Decoder, op: ptx.CpAsyncCommitGroupOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    if op.bulk is not None:
        return tma_copy.bulk_group(d, op, index, None)
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        mask = exec_mask(w, w.regs, guard)
        if mask.any():
            commit(w, mask)
        return nxt

    return run, None


def commit(w: PtxWarp, mask: Mask) -> None:
    """`cp.async.commit_group` in the lanes `mask`. An empty group is a group: it counts
    for `wait_group N` (and completes at once)."""
    state = w.async_copies
    lanes = mask.tobytes()
    if all(c.lanes.tobytes() == lanes for c in state.open):  # (the usual case: `Copy.only` keeps each whole)
        committed: tuple[Copy, ...] = state.open
        kept: tuple[Copy, ...] = ()
    else:
        committed = tuple(c for c in (c.only(mask) for c in state.open) if c is not None)
        kept = tuple(c for c in (c.only(~mask) for c in state.open) if c is not None)
    w.async_copies = AsyncCopies(kept, (*state.groups, Group(mask.copy(), committed)))


@decodes(ptx.CpAsyncWaitGroupOp)
def _wait_group(d: Decoder, op: ptx.CpAsyncWaitGroupOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    pending = _immediate(op.pending)
    if pending is None:  # the verifier requires an immediate
        raise Refused("the group count of cp.async.wait_group is an integer immediate")
    if op.bulk is not None:
        return tma_copy.bulk_group(d, op, index, pending)
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        mask = exec_mask(w, w.regs, guard)
        if mask.any():
            wait_groups(w, mask, pending)
        return nxt

    return run, None


@decodes(ptx.CpAsyncWaitAllOp)
def _wait_all(d: Decoder, op: ptx.CpAsyncWaitAllOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """`cp.async.wait_all`: commit the open copies, then wait for every group."""
    guard = d.guard(op)
    nxt = index + 1

    def run(w: PtxWarp) -> int:
        mask = exec_mask(w, w.regs, guard)
        if mask.any():
            commit(w, mask)
            wait_groups(w, mask, 0)
        return nxt

    return run, None


def wait_groups(w: PtxWarp, mask: Mask, pending: int) -> None:
    """`cp.async.wait_group pending` in the lanes `mask`: each lane's committed groups but
    its `pending` most recent complete, oldest first (their copies land)."""
    state = w.async_copies
    lanes = mask.tobytes()
    if all(g.lanes.tobytes() == lanes for g in state.groups):
        # The usual case, every group committed by the lanes that wait: the oldest groups
        # but `pending` complete in all of them, each copy in all its lanes (a group's
        # copies are in its lanes), and the others stay as they are.
        complete = len(state.groups) - pending
        if complete <= 0:
            return
        _land_all(w, [(copy, copy.lanes) for group in state.groups[:complete] for copy in group.copies])
        w.async_copies = AsyncCopies(w.async_copies.open, state.groups[complete:])
        return
    newer = np.zeros(WARP, dtype=np.int64)
    done: list[Mask] = [_NO_LANES] * len(state.groups)
    for i in range(len(state.groups) - 1, -1, -1):
        group = state.groups[i]
        done[i] = mask & group.lanes & (newer >= pending)
        newer += group.lanes
    if not any(m.any() for m in done):
        return
    landing = [(copy, lanes) for group, completes in zip(state.groups, done, strict=True) for copy in group.copies
               if (lanes := copy.lanes & completes).any()]  # fmt: skip
    _land_all(w, landing)
    groups: list[Group] = []
    for group, completes in zip(state.groups, done, strict=True):
        left = group.lanes & ~completes
        if left.any():
            copies = tuple(c for c in (c.only(left) for c in group.copies) if c is not None)
            groups.append(Group(left, copies))
    w.async_copies = AsyncCopies(w.async_copies.open, tuple(groups))


def _land_all(w: PtxWarp, landing: list[tuple[Copy, Mask]]) -> None:
    """Land the copies of a wait, oldest first (each in its completing lanes)."""
    for run in _one_clock_runs(landing, w.clock.generic):
        if not _land_together(w, run):
            for copy, lanes in run:
                _land(w, copy, lanes)


def _land(w: PtxWarp, copy: Copy, lanes: Mask) -> None:
    """The copy completes in `lanes`: its source bytes are read and its destination
    written now, as the warp's accesses but checked with what the warp knew at the issue
    (`Copy.known`; its own component is the warp's current epoch, so the write is newer
    than everything the warp did, and its own accesses since the issue are checked by
    `_check_own`)."""
    plan = _unit_plan(w, copy, lanes)
    _check_own(w, copy, lanes, plan)
    clock, w.clock = w.clock, w.clock.knowing(copy.known)
    try:
        if plan is not None:
            _land_units(w, copy, plan)
            return
        data = np.zeros((WARP, copy.size), dtype=np.uint8)
        sizes = copy.src_size[lanes]
        for s in [int(sizes[0])] if sizes.min() == sizes.max() else np.unique(sizes).tolist():
            reading = lanes & (copy.src_size == s)
            if s:
                access = Access(s, _BYTES, s, True)
                got = with_mask(w, reading, lambda: load(w, copy.op, copy.src, access))  # noqa: B023 (called at once)
                data[reading, :s] = cast(_ByteLanes, got)[reading]
        with_mask(w, lanes, lambda: store(w, copy.op, copy.dst, data, Access(copy.size, _BYTES, copy.size, True)))
    finally:
        w.clock = clock


_UNIT_TYPES = {size: np.dtype((np.void, size)) for size in (4, 8, 16)}
"""cp-size bytes as one item (PTX ISA, cp.async: cp-size is 4, 8 or 16)."""


class _Units(NamedTuple):
    """A copy's lanes as whole `cp-size` units (`_unit_plan`)."""

    dst_shadow: Shadow
    dst: _Int64Lanes
    src_shadow: Shadow | None
    src: _Int64Lanes | None
    """None: the lanes read no source byte (a zero fill)."""


def _unit_plan(w: PtxWarp, copy: Copy, lanes: Mask, shadows: dict[int, Shadow] | None = None) -> _Units | None:
    """The common case of a landing, as whole units: the lanes read all `cp-size` source
    bytes (or none) from one kernel buffer into distinct units of one shared memory.
    None where it does not apply (`_land`'s per-byte path). `shadows`: the shadows found
    so far by base address (a wait's copies share a few memories)."""
    issued = copy.units
    if issued is not None and lanes.tobytes() == copy.lanes.tobytes():
        if shadows is None:
            shadows = {}
        dst_shadow = shadows.get(issued.dst_base)
        if dst_shadow is None:
            dst_shadow = shadows[issued.dst_base] = races.locate(w.cluster, issued.dst_base)
        if issued.src is None:
            return _Units(dst_shadow, issued.dst, None, None)
        src_shadow = shadows.get(issued.src_base)
        if src_shadow is None:
            src_shadow = shadows[issued.src_base] = races.locate(w.cluster, issued.src_base)
        return _Units(dst_shadow, issued.dst, src_shadow, issued.src)
    size = copy.size
    index = np.flatnonzero(lanes)
    sizes: list[int] = copy.src_size[index].tolist()
    s = sizes[0]
    if s not in (0, size) or sizes.count(s) != len(sizes):
        return None
    places = _by_memory(w, copy.dst, lanes)
    dst_shadow = places[0][0]
    if len(places) > 1 or dst_shadow.base >= SHARED_LIMIT:
        return None
    dst = _units_of(copy.dst, index, dst_shadow, size)
    if dst is None:
        return None
    if not s:
        return _Units(dst_shadow, dst, None, None)
    sources = _by_memory(w, copy.src, lanes)
    src_shadow = sources[0][0]
    if len(sources) > 1 or src_shadow.base < GLOBAL_BASE or src_shadow.base % size:
        return None
    return _Units(dst_shadow, dst, src_shadow, (copy.src[index] - src_shadow.base) // size)


def _land_units(w: PtxWarp, copy: Copy, plan: _Units) -> None:
    """`_land`'s reads and writes as whole units (`_unit_plan`): the race checks are
    `load`'s and `store`'s (races.check_units: the same), in the same order; the bytes
    move as units."""
    size = copy.size
    unit = _UNIT_TYPES[size]
    data: NDArray[Any] = np.zeros(plan.dst.size, dtype=unit)
    if plan.src_shadow is not None and plan.src is not None:
        races.check_units(w, copy.op, plan.src_shadow, plan.src, size, write=False)
        data = _unit_array(_buffer_of(w, plan.src_shadow), unit)[plan.src]
    values = data.view(np.uint8).reshape(plan.dst.size, size)
    races.check_units(w, copy.op, plan.dst_shadow, plan.dst, size, write=True, values=values)
    _unit_array(w.cluster.cta_of(plan.dst_shadow.base)[0].smem, unit)[plan.dst] = data


def _buffer_of(w: PtxWarp, shadow: Shadow) -> _ByteLanes:
    return w.cluster.memory.locate(shadow.base, 1)[0].data


def _land_together(w: PtxWarp, landing: list[tuple[Copy, Mask]]) -> bool:
    """Land several copies (a wait's, oldest first) as one: where each is a `_unit_plan`
    case, all of one cp-size into one shared memory, into distinct destination units and
    from distinct source units of each buffer, issued with one clock but their own
    epochs, and nothing is to be reported or kept apart, landing them one after the other
    checks and records the same (none sees another's records: their units differ), so
    the checks and records are made once per memory for all their units, each unit
    stamped by its copy. False (nothing done) otherwise: `_land` lands them one by one.
    (`landing`: a run of `_one_clock_runs`, issued with one clock.)"""
    if len(landing) < 2:
        return False
    size, me = landing[0][0].size, w.clock.generic
    shadows: dict[int, Shadow] = {}
    plans = [_unit_plan(w, copy, lanes, shadows) for copy, lanes in landing]
    units = [p for p in plans if p is not None]
    if len(units) < len(plans) or any(c.size != size for c, _ in landing):
        return False
    if any(p.dst_shadow is not units[0].dst_shadow for p in units):
        return False
    issued = [int(c.known[me]) for c, _ in landing]
    parts = _parts(units, size)
    if parts is None or _any_own(w, parts, issued):
        return False
    clock, w.clock = w.clock, w.clock.knowing(landing[0][0].known)
    try:
        return _record_together(w, landing, parts, size)
    finally:
        w.clock = clock


def _one_clock_runs(landing: list[tuple[Copy, Mask]], me: int) -> list[list[tuple[Copy, Mask]]]:
    """The landing cut into runs of consecutive copies issued with one clock but for the
    warp's own component (`me`: its epochs differ from issue to issue; the clocks'
    bytes compared, a few components: cheaper than numpy's comparisons):
    landing each run in turn lands the copies in their order, and each run may land
    together (a wait that completes the groups of several loop iterations)."""
    runs: list[list[tuple[Copy, Mask]]] = []
    other = np.zeros(0, dtype=np.int64)
    for item in landing:
        known = item[0].known
        if runs and known.size == other.size:  # (against the run's first copy)
            other[me] = known[me]
            if other.tobytes() == known.tobytes():
                runs[-1].append(item)
                continue
        runs.append([item])
        other = known.copy()
    return runs


class _Part(NamedTuple):
    """The units copies land in (or read from) one memory, in landing order, and their
    records (`write`, `read`: the shadow's rows of them, gathered once for the checks of
    `_any_own` and `races.units_clean`, which change nothing)."""

    shadow: Shadow
    units: _Int64Lanes
    copies: list[int]
    """The copies (their index in the landing) whose units these are, in order."""
    counts: list[int]
    """Each one's number of units."""
    write: _Int64Lanes
    read: _Int64Lanes
    span: tuple[int, int]
    """The least and the greatest of `units`."""
    write_values: list[int] | None
    """Per copy (in `copies`' order), the one record all its rows of `write` hold; None
    where some copy's rows hold several (then the checks read the rows)."""
    read_values: list[int] | None
    """The same of `read`."""

    def known(self) -> races.Known:
        """What `races.units_clean` may take as found."""
        return self.span, self.write_values, self.read_values

    def per_unit(self, values: list[int]) -> _Int64Lanes:
        """Each copy's value (of `values`, by landing index) for each of its units."""
        return np.repeat(np.array([values[i] for i in self.copies], dtype=np.int64), self.counts)


_Gathering = tuple[Shadow, list[_Int64Lanes], list[int]]


def _parts(plans: list[_Units], size: int) -> list[_Part] | None:
    """The landing's destination units (one shared memory) and its source units (per
    kernel buffer), with their records; None where the units of one memory are not
    distinct (then the copies land one by one) or lie past the shadow's whole units."""
    groups: dict[int, _Gathering] = {}
    dst: _Gathering = (plans[0].dst_shadow, [p.dst for p in plans], list(range(len(plans))))
    for i, p in enumerate(plans):
        if p.src_shadow is not None and p.src is not None:
            group = groups.setdefault(id(p.src_shadow), (p.src_shadow, [], []))
            group[1].append(p.src)
            group[2].append(i)
    parts: list[_Part] = []
    for shadow, units, copies in (dst, *groups.values()):
        joining = _join(units, shadow.size // size, shadow is dst[0])
        if joining is None:
            return None
        joined, lo, hi = joining
        counts = [u.size for u in units]
        write = races.unit_rows(shadow.write, size).take(joined, axis=0)
        read = races.unit_rows(shadow.read, size).take(joined, axis=0)
        parts.append(_Part(shadow, joined, copies, counts, write, read, (lo, hi),
                           _values_by_copy(write, counts), _values_by_copy(read, counts)))  # fmt: skip
    return parts


def _join(units: list[_Int64Lanes], count: int, keep: bool) -> tuple[_Int64Lanes, int, int] | None:
    """The units joined, their least and greatest, where they are distinct and in
    0..`count` - 1; else None. `keep`: kept for the same unit arrays (the destinations'
    `Units.dst`, one per destination a `cp.async` reissues to: a loop's waits land the
    same stages again)."""
    key = tuple(map(id, units))
    found = _JOINED.get(key)
    if found is not None and found[1] == count and all(a is b for a, b in zip(found[0], units, strict=True)):
        return found[2]
    joined = np.concatenate(units)
    listed: list[int] = joined.tolist()
    lo, hi = min(listed), max(listed)
    result = None if len(set(listed)) != len(listed) or lo < 0 or hi >= count else (joined, lo, hi)
    if keep and all(not u.flags.writeable for u in units):  # (read-only: the same units while the arrays live)
        if len(_JOINED) >= _JOINED_KEPT:
            _JOINED.clear()
        joined.flags.writeable = False
        _JOINED[key] = (units, count, result)
    return result


_JOINED: dict[tuple[int, ...], tuple[list[_Int64Lanes], int, tuple[_Int64Lanes, int, int] | None]] = {}
"""`_join`'s results by the unit arrays' ids (the entry holds the arrays: their ids are not reused)."""
_JOINED_KEPT = 256


def _values_by_copy(rows: _Int64Lanes, counts: list[int]) -> list[int] | None:
    """Per copy (`counts`: its number of rows, in order, each at least one), the one
    record all its rows of `rows` hold, or None where some copy's rows hold several: each
    copy's minimum and maximum, in one reduction each. (Records are never negative: a
    maximum of NONE is NONE throughout, the common case of a read.)"""
    if not int(_max(rows, axis=None)):
        return [NONE] * len(counts)
    width = rows.shape[1]
    starts = [0]
    for count in counts[:-1]:
        starts.append(starts[-1] + count * width)
    flat = rows.reshape(-1)
    lows: list[int] = _min_at(flat, starts).tolist()
    return lows if lows == _max_at(flat, starts).tolist() else None


_min_at, _max_at = np.minimum.reduceat, np.maximum.reduceat


def _any_own(w: PtxWarp, parts: list[_Part], issued: list[int]) -> bool:
    """`_check_own` of several copies at once (`parts`: the destination's first, then the
    sources'; `issued`: each copy's issue epoch): whether some unit has several accesses
    recorded (SHARED) or one of the warp's newer than its copy's issue (the destination's
    writes and reads, the sources' writes). (Each array decided on its copies' one
    record each where `_values_by_copy` found them, else on its rows.)"""
    dst = parts[0]
    me = w.clock.generic << COMP_SHIFT
    top = me | FOREIGN_EPOCH
    checked = [(dst.read, dst.read_values, dst), (dst.write, dst.write_values, dst)]
    for packed, values, part in checked + [(p.write, p.write_values, p) for p in parts[1:]]:
        if values is not None:  # (low bits: as `races.own_since`, each copy against its issue)
            mine = zip(part.copies, values, strict=True)
            if any(v == SHARED or (me | issued[i]) < (v & races.LOW_BITS) < top for i, v in mine):
                return True
            continue
        if np.count_nonzero(packed == SHARED):
            return True
        low = packed & races.LOW_BITS
        if np.count_nonzero((low > (me | part.per_unit(issued))[:, None]) & (low < top)):
            return True
    return False


def _record_together(w: PtxWarp, landing: list[tuple[Copy, Mask]], parts: list[_Part], size: int) -> bool:
    """`_land_together`'s checks (those of `load` and `store`, as `_land_units`) and, where
    they find nothing, its records and data (`parts`: the destination's first). False
    (nothing done) where one finds something."""
    unit = _UNIT_TYPES[size]
    dst, sources = parts[0], parts[1:]
    reads = [races.units_clean(w, part.shadow, part.units, size, False, part.write, part.read, part.known())
             for part in sources]  # fmt: skip
    written = races.units_clean(w, dst.shadow, dst.units, size, True, dst.write, dst.read, dst.known())
    if written is None or any(r is None for r in reads):
        return False
    stamps = [races.stamp(w, copy.op) for copy, _ in landing]  # (in landing order, as one by one)
    starts = [0]
    for count in dst.counts:
        starts.append(starts[-1] + count)
    data: NDArray[Any] = np.zeros(starts[-1], dtype=unit)
    for part, read in zip(sources, reads, strict=True):
        if read is not None:
            races.record_units(part.shadow, part.units, size, False, part.per_unit(stamps)[:, None], read, part.span)
            gathered = _unit_array(_buffer_of(w, part.shadow), unit)[part.units]
            first, last = part.copies[0], part.copies[-1]
            if last - first + 1 == len(part.copies):  # (consecutive copies: one slice)
                data[starts[first] : starts[last + 1]] = gathered
            else:
                where = [np.arange(starts[i], starts[i + 1], dtype=np.int64) for i in part.copies]
                data[np.concatenate(where)] = gathered
    races.record_units(dst.shadow, dst.units, size, True, dst.per_unit(stamps)[:, None], written, dst.span)
    _unit_array(w.cluster.cta_of(dst.shadow.base)[0].smem, unit)[dst.units] = data
    return True


def _unit_array(data: _ByteLanes, unit: np.dtype[Any]) -> NDArray[Any]:
    """`data`'s whole units of `unit.itemsize` bytes (a view)."""
    return data[: data.size - data.size % unit.itemsize].view(unit)


def _check_own(w: PtxWarp, copy: Copy, lanes: Mask, plan: _Units | None) -> None:
    """The issuing warp's own accesses since the issue of the copy's destination bytes
    (any) and source bytes (writes): an access the copy may land before or after
    (PTX ISA, cp.async: the copy's writes are visible to the thread only after the wait)."""
    me, issued = w.clock.generic, int(copy.known[w.clock.generic])
    if plan is not None and _none_own(copy, plan, me, issued):
        return
    reading = lanes & (copy.src_size > 0)
    recorded: list[NDArray[np.int64]] = []  # in the order they are searched: the first found is reported
    for addresses, size, which, reads in ((copy.dst, copy.size, lanes, True), (copy.src, 0, reading, False)):
        if not which.any():
            continue
        for shadow, index in _by_memory(w, addresses, which):
            if size:
                width = np.arange(size, dtype=np.int64)
                bytes_ = (addresses[index] - shadow.base)[:, None] + width
            else:  # each lane's src-size bytes of the source
                starts = addresses - shadow.base
                sizes = copy.src_size[index]
                if sizes.min() == sizes.max():  # one size (the usual case): as the destination
                    bytes_ = starts[index][:, None] + np.arange(int(sizes[0]), dtype=np.int64)
                else:
                    bytes_ = np.concatenate([np.arange(int(copy.src_size[k]), dtype=np.int64) + int(starts[k])
                                             for k in index.tolist()])  # fmt: skip
            bytes_ = bytes_.reshape(-1)
            recorded.append(races.write_records(shadow, bytes_))
            if reads:
                read = shadow.read[bytes_]
                recorded.append(read)
                several = np.unique(bytes_[read == SHARED]).tolist()
                recorded += [np.array(shadow.readers.get(b, []), dtype=np.int64) for b in several]
    late = races.own_since(np.concatenate(recorded), me, issued) if recorded else None
    if late is not None:
        _unfinished(w, copy, lanes, late)


def _none_own(copy: Copy, plan: _Units, me: int, issued: int) -> bool:
    """Whether `_check_own` surely finds nothing, from the records of the copy's units
    (`_unit_plan`): none is SHARED (several accesses, kept apart) and none is the warp's
    since the issue. False where it finds something: then `_check_own` searches (and
    reports the first in its order)."""
    size = copy.size
    recorded = [np.take(races.unit_rows(plan.dst_shadow.write, size), plan.dst, axis=0),
                np.take(races.unit_rows(plan.dst_shadow.read, size), plan.dst, axis=0)]  # fmt: skip
    if plan.src_shadow is not None and plan.src is not None:
        recorded.append(np.take(races.unit_rows(plan.src_shadow.write, size), plan.src, axis=0))
    packed = np.concatenate(recorded, axis=None)
    return not (packed == SHARED).any() and races.own_since(packed, me, issued) is None


def _unfinished(w: PtxWarp, copy: Copy, lanes: Mask, packed: int) -> None:
    site = w.cluster.memory.sites.sites[packed >> SITE_SHIFT]
    what = getattr(site.op, "name", "an access")
    raise Hazard(
        "async-copy-unfinished",
        f"{what} by {w.name} accesses bytes of the {copy.size}-byte {copy.op.mnemonic()} of lanes "
        f"{format_lanes(lanes)} after issuing it and before the cp.async.wait_group that completes it: the copy "
        "may land before or after that access",
        [(copy.op, "the asynchronous copy"), (site.op, "the access")],
    )


# --------------------------------------------------------------------------------------
# ldmatrix
# --------------------------------------------------------------------------------------


@decodes(ptx.LdmatrixOp)
def _ldmatrix(d: Decoder, op: ptx.LdmatrixOp, index: int, labels: dict[str, int], rpc: int) -> Decoding:
    """`ldmatrix.sync.aligned.m8n8.xN[.trans].shared.b16`: lanes 8i..8i+7 give the
    addresses of rows 0..7 of matrix i (16 bytes each); lane t receives, in its i-th
    register, elements (t/4, 2(t%4)) and (t/4, 2(t%4)+1) of matrix i, the first in the
    low half (PTX ISA 9.0, "Warp-level matrix load instruction: ldmatrix", its fragment
    figure); `.trans` delivers the transposed matrix."""
    matrices = len(op.res)
    address = d.address(op.addr, op.offset.data)
    writers = [d.writer(r, "b32") for r in op.res]
    trans = op.trans is not None
    guard = d.guard(op)
    nxt = index + 1
    providers = np.arange(WARP) < 8 * matrices
    row_access = Access(16, np.dtype(np.uint16), 8, True)
    lane = np.arange(WARP)
    group, pair = lane // 4, 2 * (lane % 4)

    def run(w: PtxWarp) -> int:
        R = w.regs
        mask = exec_mask(w, R, guard)
        with_mask(w, mask, lambda: w.require_converged(op.mnemonic()))  # .sync.aligned: every live lane
        rows = cast(_RowLanes, with_mask(w, providers & mask, lambda: load(w, op, address(w, R), row_access)))
        rows = np.asarray(rows).reshape(WARP, 8)
        full = guard is None and w.all_active
        # Without .trans, lane t's register i is the (little-endian) 32-bit word t % 4 of
        # matrix i's row t / 4: the rows' bytes as words, 32 per matrix, in lane order.
        words = np.ascontiguousarray(rows).reshape(-1).view(np.uint32).copy() if _LITTLE and not trans else None
        for i, (slot, _) in enumerate(writers):
            if words is not None:
                value = words[32 * i : 32 * i + 32]
            else:
                m = rows[8 * i : 8 * i + 8]
                lo, hi = (m[pair, group], m[pair + 1, group]) if trans else (m[group, pair], m[group, pair + 1])
                value = lo.astype(np.uint32) | (hi.astype(np.uint32) << 16)
            R[slot] = value if full else np.where(mask, value, R[slot])
        return nxt

    return run, None
