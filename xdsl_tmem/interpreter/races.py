"""Happens-before race detection for ordinary shared and global memory.

Every byte of shared memory and of each kernel buffer has a shadow (FastTrack style,
Flanagan & Freund, PLDI 2009): the epoch of its last write and of its last read, an
epoch being the accessing warp's ordinary-instruction clock component
(`WarpClock.generic`) and its value at the access, packed into one int64 with the access
site. A warp knows an epoch when its vector clock has reached it (`hazards.py`: mbarrier
phases, named and cluster barriers, commits carry clocks; a release starts a new epoch).
A write and another access of the same byte, by different warps, where the later one
does not know the earlier one, is a data race (PTX ISA, "Memory Consistency Model":
conflicting accesses not ordered by causality order); the byte's value then depends on
the schedule. Reads by several warps that do not know
each other are all kept (`Shadow.readers`) until the next write.

Lanes of one warp act together in one instruction (one epoch), and a warp's program
order orders its own accesses, so accesses of one warp never race with each other.

Same-value writes. The PTX memory model does not require data-race freedom: two
unordered writes of one byte are both in its coherence order, in some order, and when
the later-checked one writes the bytes the other left, every order leaves the same
bytes (Lustig et al., "A Formal Analysis of the NVIDIA PTX Memory Consistency Model",
ASPLOS 2019). Such a write (a store whose bytes the check is given, racing only with
writes of those same bytes) is therefore not reported by default but counted
(`Sites.same_value`, printed as a note), and `RacePolicy.STRICT` reports it. The byte
then keeps every such writer (`Shadow.writers`, `write` = SHARED) and what the first of
them replaced (`Shadow.prev`), so that later accesses stay checked against each: a
write must be ordered after all of them (or write the same bytes again); a read after
one of them and after what the first replaced, else it may read a write older than the
group (docs/verification.md, "Same-value writes", gives the argument).

Shared memory starts uninitialised: reading a byte no write (`st`, `mbarrier.init`, the
address `tcgen05.alloc` writes) produced is reported as `smem-read-uninitialized`. Kernel
buffers are written by the host before the launch.

The clusters of a grid run one after another here, but concurrently on the hardware
with nothing ordering them: when a new cluster starts, the earlier clusters' accesses to
global memory become foreign (epoch `FOREIGN_EPOCH`), known to no warp.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
from numpy.typing import NDArray
from xdsl.ir import Operation

from xdsl_tmem.dialects.traits import Atomic
from xdsl_tmem.interpreter.machine import GLOBAL_BASE, SHARED_LIMIT, Cluster, Cta, GlobalMemory, Hazard
from xdsl_tmem.interpreter.shadow import (
    COMP_MASK,
    COMP_SHIFT,
    EPOCH_MASK,
    FOREIGN_EPOCH,
    NONE,
    PAGE,
    SHARED,
    SITE_SHIFT,
    UNIT,
    PendingRead,
    SameValueRace,
    Shadow,
    Spans,
    Summary,
    Values,
    Writers,
)
from xdsl_tmem.interpreter.tcgen05 import ELEMENT_BYTES, SmemDescriptor, operand_addresses
from xdsl_tmem.interpreter.values import UnsupportedValue

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.executor import Warp


def _stamp(warp: Warp, op: Any) -> int:
    """The int64 recording an access by `warp` now."""
    clock = warp.clock
    me, value = clock.generic, int(clock.vc[clock.generic])
    if me > COMP_MASK or value >= FOREIGN_EPOCH:
        raise UnsupportedValue("the race checks support 4096 clock components and 2^28 synchronisations per warp")
    site = warp.site_bits.get(id(op))
    if site is None:
        site = warp.site_bits[id(op)] = warp.cluster.memory.sites.of(op, warp.name) << SITE_SHIFT
    return site | (me << COMP_SHIFT) | value


def _unordered(vc: NDArray[np.int64], packed: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Which recorded accesses `vc` does not know. A warp knows its own (its component
    only grows), never a foreign one."""
    return (packed > SHARED) & (vc[(packed >> COMP_SHIFT) & COMP_MASK] < (packed & EPOCH_MASK))


def _knows(vc: NDArray[np.int64], packed: int) -> bool:
    """`_unordered` of one recorded access, negated."""
    return int(vc[(packed >> COMP_SHIFT) & COMP_MASK]) >= packed & EPOCH_MASK


def _foreign(packed: int) -> int:
    return (packed >> SITE_SHIFT << SITE_SHIFT) | FOREIGN_EPOCH


def new_cluster(memory: GlobalMemory) -> None:
    """Another cluster of the grid starts: what earlier ones did to global memory is
    unordered with everything it does (their accesses become foreign). Only the pages the
    cluster that ends accessed change (`Shadow.touch`; a byte of such a page no access
    touched holds no record of this cluster, and converting a foreign one again changes
    nothing), gathered as rows of a page. A byte's reads become one foreign read
    (`Shadow.foreign`), the first of them: the one a race report names; its earliest
    foreign read where it has one already. (No record appears where there was none, so
    `Shadow.used` stays true of the records.)"""
    for buffer in memory.buffers:
        shadow = buffer.shadow
        kept = shadow.used_gen == shadow.gen
        _convert_pages(shadow)
        if kept:
            shadow.used_gen = shadow.gen


def _convert_pages(shadow: Shadow) -> None:
    """`new_cluster` of one kernel buffer's shadow."""
    pages = shadow.touched_pages()
    if not pages.size:
        return
    if _pages(shadow.write, pages).any():
        write = shadow.own_write()
        _set_pages(write, pages, _as_foreign(_pages(write, pages)))
        if shadow.prev is not None:
            _set_pages(shadow.prev, pages, _as_foreign(_pages(shadow.prev, pages)))
        for byte, (members, before) in shadow.writers.items():
            shadow.writers[byte] = Writers([_foreign(p) for p in members], tuple(_foreign(p) for p in before))
        for displaced in shadow.displaced.values():
            displaced[:] = [_foreign(p) for p in displaced]
    if not _pages(shadow.read, pages).any():
        return
    read = shadow.own_read()
    foreign = shadow.own_foreign()
    for byte, reads in shadow.readers.items():
        read[byte] = reads[0]
    shadow.readers.clear()
    part, known = _pages(read, pages), _pages(foreign, pages)
    seen = (part > SHARED) & (known == NONE)
    known[seen] = (part[seen] >> SITE_SHIFT << SITE_SHIFT) | FOREIGN_EPOCH
    _set_pages(foreign, pages, known)
    part.fill(NONE)
    _set_pages(read, pages, part)


def _pages(records: NDArray[np.int64], pages: NDArray[np.int64]) -> NDArray[np.int64]:
    """The records of `pages` (ascending page numbers), one after the other, or of more
    pages: a view of `records` (changing it changes them) of all pages from the first to
    the last where those are at most twice as many (a tile's rows, all of B's K x N columns),
    or of rows of a page where the pages are whole and evenly spaced (every k-th page);
    else a copy; the last page may be short. (`new_cluster`: a page the cluster did not
    touch holds no record of it, so converting it, or testing it for records before
    converting, changes nothing.)"""
    first, last, count = int(pages[0]), int(pages[-1]), pages.size
    if 2 * count > last - first:
        return records[first * PAGE : (last + 1) * PAGE]
    whole = records.size // PAGE
    rows = records[: whole * PAGE].reshape(whole, PAGE)
    step = (last - first) // (count - 1) if count > 1 else 1
    if last < whole and step * (count - 1) == last - first and not np.count_nonzero(np.diff(pages) != step):
        return rows[first : last + 1 : step]
    inside = pages[pages < whole]
    gathered = rows[inside].reshape(-1)
    return np.concatenate([gathered, records[whole * PAGE :]]) if inside.size < pages.size else gathered


def _set_pages(records: NDArray[np.int64], pages: NDArray[np.int64], values: NDArray[np.int64]) -> None:
    """Write `_pages(records, pages)` back: `values` (nothing to do for its view)."""
    if np.may_share_memory(values, records):
        return
    whole = records.size // PAGE
    inside = pages[pages < whole]
    records[: whole * PAGE].reshape(whole, PAGE)[inside] = values[: inside.size * PAGE].reshape(-1, PAGE)
    if inside.size < pages.size:
        records[whole * PAGE :] = values[inside.size * PAGE :]


def _as_foreign(records: NDArray[np.int64]) -> NDArray[np.int64]:
    """Recorded accesses (in place) as an earlier cluster's."""
    seen = records > SHARED
    records[seen] = (records[seen] >> SITE_SHIFT << SITE_SHIFT) | FOREIGN_EPOCH
    return records


# --------------------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------------------


def locate(cluster: Cluster, address: int) -> Shadow:
    """The shadow of the memory `address` is in (already bounds-checked by the access)."""
    if address < SHARED_LIMIT:
        cta, _ = cluster.cta_of(address)
        return cta.shadow
    buffer, _ = cluster.memory.locate(address, 1)
    return buffer.shadow


def access(warp: Warp, op: Any, address: int, size: int, write: bool, values: NDArray[Any] | None = None) -> None:
    """A warp-uniform access of `size` bytes at `address` (`values`: as `check`'s)."""
    shadow = locate(warp.cluster, address)
    start = address - shadow.base
    check(warp, op, shadow, np.arange(start, start + size, dtype=np.int64), write, values)


def record_write(warp: Warp, op: Any, address: int, size: int) -> None:
    """A write made on `warp`'s behalf by the collective it takes part in (the peer's half
    of a `tcgen05.alloc.cta_group::2`): recorded as `warp`'s, not checked."""
    shadow = locate(warp.cluster, address)
    start = address - shadow.base
    stamp = _stamp(warp, op)
    warp.cluster.memory.sites.inexact.add(stamp >> SITE_SHIFT)
    _overwrite(shadow, np.arange(start, start + size, dtype=np.int64), stamp)
    shadow.own_read()[start : start + size] = NONE
    if shadow.host:
        shadow.touch(start, start + size)
    if shadow.foreign is not None:
        shadow.foreign[start : start + size] = NONE
    for byte in range(start, start + size):
        shadow.readers.pop(byte, None)


def check(
    warp: Warp, op: Any, shadow: Shadow, index: NDArray[np.int64], write: bool, values: NDArray[Any] | None = None
) -> None:
    """Check an access by `warp` of the bytes `index` of `shadow`, then record it. (The
    `.any()` tests skip the work for bytes nothing has accessed yet: the common case.)
    `values`: what a write writes, lane by lane, its bytes in the order of `index` (a
    store's (lanes, elements) array); a write given none (an async copy's claim, a TMA box,
    mbarrier.init) is never taken for a same-value one, nor is a write racing with it."""
    index = index.reshape(-1)
    shadow.touch_index(index)
    same = _check_last_writes(warp, op, shadow, index, write, values)
    if not write:
        _record_read(warp, op, shadow, index)
        return
    stamp = _stamp(warp, op)
    if values is None:
        warp.cluster.memory.sites.inexact.add(stamp >> SITE_SHIFT)
    _check_reads(warp, op, shadow, index, same)
    if same is None:
        _overwrite(shadow, index, stamp)
    else:
        _overwrite(shadow, index[~same], stamp)
        _join(warp, shadow, index[same], stamp)


def write_records(shadow: Shadow, index: NDArray[np.int64]) -> NDArray[np.int64]:
    """The last writes of the bytes `index`: each byte's record, and where that is SHARED
    the unordered writes it stands for (`Shadow.writers`)."""
    write = shadow.write[index]
    several: list[int] = np.unique(index[write == SHARED]).tolist() if shadow.writers else []
    members = [np.array(shadow.writers[b].members, dtype=np.int64) for b in several if b in shadow.writers]
    return np.concatenate([write, *members]) if members else write


def own_since(packed: NDArray[np.int64], me: int, issued: int) -> int | None:
    """The first of the recorded accesses `packed` by clock component `me` newer than its
    epoch `issued`: an access the warp made after an asynchronous operation it issued
    then (whose clock ticked at the issue), or None."""
    if not packed.size:
        return None
    # Component `me` and an epoch past `issued` but not foreign, in one range of the low bits.
    low = packed & LOW_BITS
    mine = (low > (me << COMP_SHIFT | issued)) & (low < (me << COMP_SHIFT | FOREIGN_EPOCH))
    if not me and not issued:  # (only then can the range hold SHARED)
        mine &= packed > SHARED
    return int(packed[int(np.argmax(mine))]) if mine.any() else None


def _overwrite(shadow: Shadow, index: NDArray[np.int64], stamp: int) -> None:
    """Record a write ordered after every recorded write of the bytes `index`, keeping
    what it replaces (`Shadow.prev`)."""
    write = shadow.own_write()
    old = write[index]
    if old.any():
        prev = shadow.own_prev()
        if shadow.displaced:
            for byte in np.unique(index[prev[index] == SHARED]).tolist():
                shadow.displaced.pop(byte, None)
        if shadow.writers:
            for byte in np.unique(index[old == SHARED]).tolist():
                shadow.displaced[byte] = shadow.writers.pop(byte).members
        prev[index] = old
    write[index] = stamp


def _join(warp: Warp, shadow: Shadow, index: NDArray[np.int64], stamp: int) -> None:
    """Record a same-value write racing with the recorded writes of the bytes `index`: it
    joins their writers (`Shadow.writers`), which keep the ones it does not know (those it
    knows are ordered before it: an access ordered after it is after them, one that is not
    is checked against it)."""
    vc = warp.clock.vc
    write = shadow.own_write()
    for byte in np.unique(index).tolist():
        writers = shadow.writers.get(byte)
        if writers is None:
            writers = Writers([int(write[byte])], _replaced(shadow, byte))
            write[byte] = SHARED
        members = [packed for packed in writers.members if not _knows(vc, packed)]
        shadow.writers[byte] = Writers([*members, stamp], writers.before)


def _replaced(shadow: Shadow, byte: int) -> tuple[int, ...]:
    """What the last write of `byte` replaced (`Shadow.prev`)."""
    prev = NONE if shadow.prev is None else int(shadow.prev[byte])
    if prev == NONE:
        return ()
    return tuple(shadow.displaced[byte]) if prev == SHARED else (prev,)


def check_span(
    warp: Warp, op: Any, shadow: Shadow, span: tuple[int, int], index: Callable[[], NDArray[np.int64]]
) -> None:
    """`check` of a write of the bytes [start, stop) of `span`, which `index()` lists in
    access order (a permutation of the range: a TMA box without row padding), on slices of
    the shadow instead of a gathered index: the same verdict and records. Where there is
    something to report or concurrent readers to forget, `check(index())` does it, so
    that reports name the same byte (the first in access order). A box refilling the range
    an earlier box wrote (`Spans`: one write value throughout, no recorded read since)
    reads none of its records."""
    start, stop = span
    vc = warp.clock.vc
    # the tensor core's reads not in `read` yet
    kept = _pending_known(vc, shadow, start, stop) if shadow.pending else []
    if kept is None:
        check(warp, op, shadow, index(), write=True)
        return
    refill = _refill(vc, shadow, span)
    if refill is not None and not (refill > NONE and shadow.displaced):
        _refilled(warp, op, shadow, span, refill, kept)
        return
    if refill is not None:
        # (`last` is `refill` throughout; `seen_reads` and `shadow.writers` are empty)
        last: NDArray[np.int64] | int = refill
        last_write, seen_reads = refill, False
    else:
        last, reads = shadow.write[start:stop], shadow.recorded_read[start:stop]
        # (each reduction once: a 16 KiB box's records are 128 KiB to scan)
        first_write, last_write = int(last.min()), int(last.max())
        first_read, last_read = int(reads.min()), int(reads.max())
        seen_reads = last_read > NONE
        if (
            shadow.writers  # same-value writer groups: `check` keeps them
            or _unordered_between(vc, last, first_write, last_write)
            or (
                seen_reads
                and (
                    _unordered_between(vc, reads, first_read, last_read)
                    or (first_read <= SHARED and bool((reads == SHARED).any()))  # concurrent readers
                )
            )
        ):
            check(warp, op, shadow, index(), write=True)
            return
    stamp = _stamp(warp, op)
    warp.cluster.memory.sites.inexact.add(stamp >> SITE_SHIFT)  # a box's bytes are not given (`check`)
    spans = _current_spans(shadow)  # (before the changes, which it is then told of)
    if shadow.pending:
        shadow.pending = kept  # (the box writes every byte the others read)
    if seen_reads:
        shadow.own_read()[start:stop] = NONE
    write = shadow.own_write()  # (first: `own_prev` shares its copying)
    if last_write > NONE:  # as `_overwrite`: what the box replaces
        prev = shadow.own_prev()
        if shadow.displaced:
            for byte in (start + np.flatnonzero(prev[start:stop] == SHARED)).tolist():
                shadow.displaced.pop(byte, None)
        prev[start:stop] = last
    write[start:stop] = stamp
    _wrote_span(spans, span, stamp)
    spans.gen = shadow.gen
    spans.unread.add(span)  # (no recorded read is left in it)


def _refilled(warp: Warp, op: Any, shadow: Shadow, span: tuple[int, int], refill: int, kept: list[PendingRead]) -> None:
    """The end of `check_span` for a box refilling `span` (`_refill` found the range's
    write `refill`, and no displaced writes where it is one): no record to read, so the
    write is kept as one fill of the range until one is read (`Shadow.fills`)."""
    stamp = _stamp(warp, op)
    warp.cluster.memory.sites.inexact.add(stamp >> SITE_SHIFT)  # a box's bytes are not given (`check`)
    spans = shadow.spans  # (current, and `span` in its `unread`: `_refill` found them so)
    if shadow.pending:
        shadow.pending = kept  # (the box writes every byte the others read)
    shadow.defer_fill(span[0], span[1], stamp, refill if refill > NONE else None)
    _wrote_span(spans, span, stamp)
    spans.gen = shadow.gen


def _pending_known(vc: NDArray[np.int64], shadow: Shadow, start: int, stop: int) -> list[PendingRead] | None:
    """`Shadow.pending_within` and `drop_pending` in one pass: the pending reads of other
    bytes than [start, stop) (what `drop_pending` keeps), if `vc` knows the stamps of
    those of bytes in it (else None, the pending reads left as they are)."""
    kept: list[PendingRead] = []
    stamps: set[int] = set()
    for p in shadow.pending:
        _, _, stamp, low, high = p
        if low < stop and start < high:
            if not (start <= low and high <= stop):
                shadow.pending_within(start, stop)  # (records every pending read: none is left)
                return []
            stamps.add(stamp)
        else:
            kept.append(p)
    for packed in stamps:
        if vc.item((packed >> COMP_SHIFT) & COMP_MASK) < packed & EPOCH_MASK:  # (not `_knows`)
            return None
    return kept


def _refill(vc: NDArray[np.int64], shadow: Shadow, span: tuple[int, int]) -> int | None:
    """The write record every byte of `span` holds, if its summary (`Spans`) says there is
    one, no recorded read (`Spans.unread`) and no same-value group, and `vc` knows it (or
    it is none): then `check_span`'s tests pass without reading a record. Else None."""
    spans = shadow.spans
    if spans.gen != shadow.gen or span not in spans.unread or shadow.writers:
        return None
    summary = spans.ranges.get(span)
    if summary is None or len(summary[0]) != 1:
        return None
    (value,) = summary[0]  # (a superset of the bytes' values: they all hold it)
    return value if value == NONE or (value > SHARED and _knows(vc, value)) else None


def _any_unordered(vc: NDArray[np.int64], packed: NDArray[np.int64]) -> bool:
    """`_unordered(vc, packed).any()` with a few reductions in the common cases: one access
    throughout (a box's bytes, the reads of one commit group's MMAs), or the accesses of one
    clock component (one warp's writes), where only the latest epoch matters."""
    top = int(_max(packed, axis=None))
    return top > SHARED and _unordered_between(vc, packed, int(_min(packed, axis=None)), top)


# The ufuncs' reductions, called directly: `ndarray.min()` / `.any()` and `np.take` add a
# Python-level wrapper to each call (a third to a half of its cost for a warp's 32 lanes
# or 512 records), and these are the race checks' hot calls. Same results.
_min, _max = np.minimum.reduce, np.maximum.reduce


def _bounds(packed: NDArray[np.int64]) -> tuple[int, int]:
    """(min, max) of a non-empty array of records: where all are one (a copy's units, one
    stamp each), a bytes comparison instead of two reductions."""
    first = packed.item(0)
    if first == packed.item(-1):
        data = packed.tobytes()
        if data == data[:8] * packed.size:
            return first, first
    return int(_min(packed, axis=None)), int(_max(packed, axis=None))


def _unordered_between(vc: NDArray[np.int64], packed: NDArray[np.int64], bottom: int, top: int) -> bool:
    """`_any_unordered` given `packed`'s min and max (`bottom`, `top`), already computed."""
    if top <= SHARED:
        return False
    if bottom == top:
        return int(vc[(top >> COMP_SHIFT) & COMP_MASK]) < top & EPOCH_MASK
    if bottom > SHARED:
        low = packed & LOW_BITS
        first, last = int(_min(low, axis=None)), int(_max(low, axis=None))
        if first >> COMP_SHIFT == last >> COMP_SHIFT:
            return int(vc[first >> COMP_SHIFT]) < last & EPOCH_MASK
    return bool(np.count_nonzero(_unordered(vc, packed)))


def _any_shared(packed: NDArray[np.int64]) -> bool:
    """Whether some byte has concurrent readers (`Shadow.readers`)."""
    return int(_min(packed, axis=None)) <= SHARED and bool(np.count_nonzero(packed == SHARED))


LOW_BITS = (1 << SITE_SHIFT) - 1
"""An access's component and epoch (`shadow.py`: site << 40 | component << 28 | epoch)."""


def _check_last_writes(
    warp: Warp, op: Any, shadow: Shadow, index: NDArray[np.int64], write: bool, values: NDArray[Any] | None
) -> NDArray[np.bool_] | None:
    """An access races with a write it does not know; a read of shared memory nothing
    wrote is uninitialised. A write given its `values` that races only with writes of the
    bytes it writes is a same-value race: which of `index` it races at (they join the
    byte's writers), or None where it races with none."""
    last = shadow.write[index]
    if not last.any():
        if not write and not shadow.host:
            _uninitialised(warp, op, shadow, int(index[0]))
        return None
    if not write and not shadow.host and not last.all():
        _uninitialised(warp, op, shadow, int(index[int(np.argmax(last == NONE))]))
    vc = warp.clock.vc
    unordered = _unordered(vc, last)
    if shadow.writers:
        grouped = last == SHARED
        if grouped.any():
            unordered |= _unordered_writers(vc, shadow, index, grouped, write)
    if not unordered.any():
        return None
    if write and values is not None:
        return _same_value(warp, op, shadow, index, unordered, values)
    byte = int(index[int(np.argmax(unordered))])
    _race(warp, op, shadow, byte, write, _racing_write(vc, shadow, byte, write), True)


def _unordered_writers(
    vc: NDArray[np.int64], shadow: Shadow, index: NDArray[np.int64], grouped: NDArray[np.bool_], write: bool
) -> NDArray[np.bool_]:
    """Of the bytes `index` with several writers (`grouped`), which an access with clock
    `vc` races with: a write with any writer it does not know; a read unless it knows
    one of them and what the first replaced (then every write before the group is
    ordered before one it knows, so it reads the group's bytes: races.py)."""
    unordered = np.zeros(index.size, dtype=np.bool_)
    for k in np.flatnonzero(grouped).tolist():
        members, before = shadow.writers[int(index[k])]
        if write:
            unordered[k] = not all(_knows(vc, packed) for packed in members)
        else:
            unordered[k] = not (any(_knows(vc, p) for p in members) and all(_knows(vc, p) for p in before))
    return unordered


def _racing_write(vc: NDArray[np.int64], shadow: Shadow, byte: int, write: bool) -> int:
    """The recorded write of `byte` an access with clock `vc` races with (for its report):
    the last one, or of several writers the first it does not know (for a read that knows
    one, the write before them it does not know)."""
    last = int(shadow.write[byte])
    if last != SHARED:
        return last
    members, before = shadow.writers[byte]
    unknown = [p for p in members if not _knows(vc, p)]
    if write or len(unknown) == len(members):
        return unknown[0]
    return next(p for p in before if not _knows(vc, p))


def _same_value(
    warp: Warp, op: Any, shadow: Shadow, index: NDArray[np.int64], unordered: NDArray[np.bool_], values: NDArray[Any]
) -> NDArray[np.bool_]:
    """A write racing at `unordered` of `index` with recorded writes: a same-value race if,
    at each of those bytes, what lands (the last lane's byte) is what memory holds — the
    bytes the racing writes left, all of them writes whose bytes memory holds (not
    `Sites.inexact`). Else, or under `RacePolicy.STRICT`, a data race. Returns `unordered`."""
    sites = warp.cluster.memory.sites
    vc = warp.clock.vc
    new = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
    racing = np.flatnonzero(unordered)
    last = shadow.write[index[racing]]
    if new.size == index.size:
        differ = _landed(index, new)[racing] != _memory(warp.cluster, shadow)[index[racing]]
    else:  # (not a store's bytes in the order of its index: never the same value)
        differ = np.ones(racing.size, dtype=np.bool_)
    plain = last != SHARED
    if sites.inexact and plain.any():
        differ |= plain & np.isin(last >> SITE_SHIFT, np.fromiter(sites.inexact, np.int64, len(sites.inexact)))
    same = not differ.any()
    if not same or sites.strict:
        byte = int(index[int(racing[int(np.argmax(differ))])])
        _race(warp, op, shadow, byte, True, _racing_write(vc, shadow, byte, True), True, same)
    byte = int(index[int(racing[0])])
    if sites.first_same_value is None:
        message = _race_message(warp, op, shadow, byte, True, _racing_write(vc, shadow, byte, True), True)
        sites.first_same_value = SameValueRace(op, message)
    sites.same_value += 1
    return unordered


def _landed(index: NDArray[np.int64], new: NDArray[np.uint8]) -> NDArray[np.uint8]:
    """For each position of `index`, the byte that lands at its address: the one of the last
    position with that address (a later lane wins)."""
    order = np.argsort(index, kind="stable")
    ordered = index[order]
    ends = np.flatnonzero(np.append(ordered[1:] != ordered[:-1], True))
    if ends.size == index.size:
        return new
    lengths = np.diff(np.append(-1, ends))
    landed = np.empty_like(new)
    landed[order] = np.repeat(new[order[ends]], lengths)
    return landed


def _memory(cluster: Cluster, shadow: Shadow) -> NDArray[np.uint8]:
    """The bytes `shadow` describes (a CTA's shared memory or a kernel buffer)."""
    if shadow.base < SHARED_LIMIT:
        return cluster.cta_of(shadow.base)[0].smem
    return cluster.memory.locate(shadow.base, 1)[0].data


def _check_reads(
    warp: Warp, op: Any, shadow: Shadow, index: NDArray[np.int64], keep: NDArray[np.bool_] | None = None
) -> None:
    """A write races with the reads it does not know (the last one, or each of several
    concurrent ones); it then forgets them, but at `keep` (where it joins the byte's
    writers: an access not ordered after an earlier writer must still meet them). An
    earlier cluster's read of a byte (`Shadow.foreign`) counts as its last read where this
    cluster has none, else as the first of several."""
    reads = shadow.read[index]
    foreign = shadow.foreign[index] if shadow.foreign is not None else None
    if foreign is not None and foreign.any():
        reads = np.where(foreign != NONE, np.where(reads == NONE, foreign, SHARED), reads)
    else:
        foreign = None
        if not reads.any():
            return
    vc = warp.clock.vc
    unordered = _unordered(vc, reads)
    if unordered.any():
        k = int(np.argmax(unordered))
        _race(warp, op, shadow, int(index[k]), True, int(reads[k]), False)
    several = reads == SHARED
    if several.any():
        for byte in np.unique(index[several]).tolist():
            first = NONE if foreign is None or shadow.foreign is None else int(shadow.foreign[byte])
            recorded = np.array([first] if first != NONE else shadow.readers[byte], dtype=np.int64)
            unordered = _unordered(vc, recorded)
            if unordered.any():
                _race(warp, op, shadow, byte, True, int(recorded[int(np.argmax(unordered))]), False)
    if keep is not None:
        index, several = index[~keep], several[~keep]
    shadow.own_read()
    if several.any():
        for byte in np.unique(index[several]).tolist():
            shadow.readers.pop(byte, None)
    if foreign is not None:
        shadow.own_foreign()[index] = NONE
    shadow.own_read()[index] = NONE


def _record_read(
    warp: Warp,
    op: Any,
    shadow: Shadow,
    index: NDArray[np.int64],
    stamp: int | None = None,
    knows: NDArray[np.int64] | None = None,
) -> None:
    """A read replaces the recorded read it knows; reads it does not know are kept.
    `stamp`, `knows`: the read's epoch and clock when it is not `warp`'s own (the tensor
    core's)."""
    reads = shadow.read[index]
    if stamp is None:
        stamp = _stamp(warp, op)
    read = shadow.own_read()
    if reads.any():
        keep = _unordered(warp.clock.vc if knows is None else knows, reads) | (reads == SHARED)
        if keep.any():
            for byte in np.unique(index[keep]).tolist():
                readers = shadow.readers.get(byte)
                if readers is None:
                    readers = shadow.readers[byte] = [int(read[byte])]
                    read[byte] = SHARED
                readers.append(stamp)
            index = index[~keep]
    read[index] = stamp


def check_atomic(warp: Warp, op: Any, address: int, size: int) -> None:
    """An atomic read-modify-write of `size` bytes at `address` (`Atomic` ops): checked as
    a write against plain accesses, never against other atomics (PTX ISA, "Memory
    Consistency Model": atomic operations on the same location are morally strong and
    do not form a data race), then recorded as a write, so a later plain access not
    ordered after it races. Only the last write is kept per byte: a plain access ordered
    after the last of several concurrent atomics but not after an earlier one is not
    reported (the FastTrack write epoch holds one access)."""
    shadow = locate(warp.cluster, address)
    start = address - shadow.base
    index = np.arange(start, start + size, dtype=np.int64)
    last = shadow.write[index]
    if not shadow.host and not last.all():
        _uninitialised(warp, op, shadow, int(index[int(np.argmax(last == NONE))]))
    vc = warp.clock.vc
    unordered = _unordered(vc, last)
    if unordered.any():
        sites = warp.cluster.memory.sites.sites
        for k in np.flatnonzero(unordered).tolist():
            other = sites[int(last[k]) >> SITE_SHIFT].op
            if not (isinstance(other, Operation) and other.has_trait(Atomic)):
                _race(warp, op, shadow, int(index[k]), True, int(last[k]), True)
    grouped = last == SHARED
    if shadow.writers and grouped.any():  # several plain writers: an atomic races with each it does not know
        several = _unordered_writers(vc, shadow, index, grouped, True)
        if several.any():
            byte = int(index[int(np.argmax(several))])
            _race(warp, op, shadow, byte, True, _racing_write(vc, shadow, byte, True), True)
    _check_reads(warp, op, shadow, index)
    shadow.touch_index(index)
    stamp = _stamp(warp, op)
    warp.cluster.memory.sites.inexact.add(stamp >> SITE_SHIFT)
    _overwrite(shadow, index, stamp)


def check_lanes(
    warp: Warp,
    op: Any,
    shadow: Shadow,
    offsets: NDArray[np.int64],
    size: int,
    write: bool,
    values: NDArray[Any] | None = None,
) -> None:
    """Check an access by `warp` of `size` bytes at each of the byte `offsets` of
    `shadow` (one per active lane), then record it: `check` of their bytes, with a fast
    path for the common case of a warp touching fresh bytes (its lanes' bytes evenly
    spaced, none of them accessed yet, nothing to report): the shadow is then viewed as
    (lanes, size) and stamped without building and gathering a per-byte index."""
    # (Comparing Python lists: for 32 lanes cheaper than a few numpy operations.)
    starts: list[int] = offsets.tolist()
    lanes, first = len(starts), starts[0]
    stride = starts[1] - first if lanes > 1 else size
    if stride >= size and starts == list(range(first, first + lanes * stride, stride)):
        check_strided(warp, op, shadow, range(first, first + lanes * stride, stride), size, write, values)
        return
    check(warp, op, shadow, (offsets[:, None] + np.arange(size, dtype=np.int64)).reshape(-1), write, values)


def check_strided(
    warp: Warp, op: Any, shadow: Shadow, starts: range, size: int, write: bool, values: NDArray[Any] | None = None
) -> None:
    """`check_lanes` of accesses of `size` bytes at byte offsets `starts` (`starts.step >=
    size`: they do not overlap), given as such by the caller (a per-lane address that is
    an arithmetic progression, memory.py): the fast path, with `check` of the bytes where
    it does not apply."""
    first, lanes, stride = starts.start, len(starts), starts.step
    if write or shadow.host:
        # Own (copy if shared) the array to stamp first: harmless if the fast path does
        # not apply, and its view then serves both the test and the stamping. (The
        # views of the shadow are made inline: this is the stores' hot path.) `used`
        # first: `own_write` / `own_read` count a change.
        grains = shadow.used_grains(first, lanes, stride, size)
        if write:
            mine = shadow.own_write() if shadow.shared_write else shadow.write
        else:
            mine = shadow.own_read() if shadow.shared_read else shadow.read
        shape, strides, offset = (lanes, size), (stride * 8, 8), first * 8
        target = np.ndarray(shape, np.int64, mine, offset, strides)
        if grains is not None and not np.count_nonzero(grains):  # (no record there: `Shadow.used`)
            _stamp_fresh(warp, op, shadow, starts, size, write and values is None, target, grains)
            return
        other = shadow.read if write else shadow.write
        foreign = shadow.foreign if write else None  # an earlier cluster's reads, which a write races with
        if (
            not np.count_nonzero(target)
            and not np.count_nonzero(np.ndarray(shape, np.int64, other, offset, strides))
            and (foreign is None or not np.count_nonzero(np.ndarray(shape, np.int64, foreign, offset, strides)))
        ):
            _stamp_fresh(warp, op, shadow, starts, size, write and values is None, target, grains)
            return
    index = np.arange(first, first + lanes * stride, stride, dtype=np.int64)
    check(warp, op, shadow, (index[:, None] + np.arange(size, dtype=np.int64)).reshape(-1), write, values)


def _stamp_fresh(
    warp: Warp,
    op: Any,
    shadow: Shadow,
    starts: range,
    size: int,
    inexact: bool,
    target: NDArray[np.int64],
    grains: NDArray[np.bool_] | None,
) -> None:
    """`check_strided` of bytes without a recorded access, as `check` does it: no write
    to race with or to have been uninitialised (a read of a host buffer), no read to
    keep; `target` is their records to stamp (`inexact`: a write whose bytes the check is
    not given), `grains` their entries of `Shadow.used` if it is valid."""
    stamp = _stamp(warp, op)
    if inexact:
        warp.cluster.memory.sites.inexact.add(stamp >> SITE_SHIFT)
    shadow.gen += 1  # (`target` is changed without `own_write` / `own_read`: `Spans`)
    target.fill(stamp)
    if grains is not None:  # (still valid: nothing else changed the history)
        grains[...] = True
        shadow.used_gen = shadow.gen
    if shadow.host:
        shadow.touch_strided(starts.start, len(starts), starts.step, size)


def unit_index(units: NDArray[np.int64], size: int) -> NDArray[np.int64]:
    """The bytes of the `size`-byte units `units`, unit after unit (`check_units`' order)."""
    return (units[:, None] * size + np.arange(size, dtype=np.int64)).reshape(-1)


def check_units(
    warp: Warp,
    op: Any,
    shadow: Shadow,
    units: NDArray[np.int64],
    size: int,
    write: bool,
    values: NDArray[Any] | None = None,
    found: tuple[NDArray[np.int64], Known | None] | None = None,
) -> None:
    """`check` of the bytes of the aligned `size`-byte units `units` of `shadow` (unit u:
    bytes u * size .. u * size + size - 1; `unit_index` lists them), on the shadow viewed
    as rows of `size` records: a warp's aligned per-lane accesses at any addresses (a
    cp.async's lanes). Where there is a race, an uninitialised read, or same-value or
    concurrent records to keep or forget, `check` of the bytes does it all, so the verdict,
    the report and the records are always `check`'s. (A repeated unit is recorded twice
    alike, as `check` records a repeated byte.) `found`: the units' rows of `shadow.write`
    where the caller has them, and what it found of them (`units_clean`'s `last`, `known`)."""
    last, known = (None, None) if found is None else found
    clean = units_clean(warp, shadow, units, size, write, last, None, known)
    if clean is None:
        check(warp, op, shadow, unit_index(units, size), write, values)
        return
    stamp = _stamp(warp, op)
    if write and values is None:
        warp.cluster.memory.sites.inexact.add(stamp >> SITE_SHIFT)
    record_units(shadow, units, size, write, stamp, clean)


Clean = tuple[NDArray[np.int64], bool, bool]
"""What `units_clean` found: the units' last writes, whether any was written, whether any read."""


def units_clean(
    warp: Warp,
    shadow: Shadow,
    units: NDArray[np.int64],
    size: int,
    write: bool,
    last: NDArray[np.int64] | None = None,
    reads: NDArray[np.int64] | None = None,
    known: Known | None = None,
) -> Clean | None:
    """Whether `check` of the units' bytes (`check_units`) by `warp` now would find nothing
    to report and only records to replace (no race, no uninitialised read, no same-value
    group, no concurrent reads, no foreign read or displaced writers to look at): then
    what `record_units` needs; else None. Changes nothing. `last`, `reads`: the units' rows
    of `shadow.write` and `shadow.read`, where the caller has taken them. `known`: what
    the caller found of them (`Known`). (Records are never negative: a maximum of NONE
    means none recorded, a minimum above NONE all recorded.)"""
    if shadow.displaced or (shadow.foreign is not None and write):  # (`_overwrite`'s; `_check_reads`)
        return None
    if known is None:
        listed: list[int] = units.tolist()
        if not listed or max(listed) >= shadow.write.size // size or min(listed) < 0:
            return None
        last_values = read_values = None
    else:
        _, last_values, read_values = known
    if last is None:
        last = unit_rows(shadow.write, size).take(units, axis=0)
    vc = warp.clock.vc
    bottom, top = _bounds(last) if last_values is None else (min(last_values), max(last_values))
    written = top > NONE
    if (not write and not shadow.host and bottom == NONE) or (
        written
        and (
            (_unordered_between(vc, last, bottom, top) if last_values is None else _any_unknown(vc, last_values))
            or (shadow.writers and bottom <= SHARED and _holds_shared(last, last_values))
        )
    ):
        return None
    if reads is None:
        reads = unit_rows(shadow.read, size).take(units, axis=0)
    bottom, top = _bounds(reads) if read_values is None else (min(read_values), max(read_values))
    seen = top > NONE
    # (a write races with a read it does not know; a read keeps those beside its own)
    if seen and (
        (bottom <= SHARED and _holds_shared(reads, read_values))
        or (_unordered_between(vc, reads, bottom, top) if read_values is None else _any_unknown(vc, read_values))
    ):
        return None
    return last, written, seen


Known = tuple[tuple[int, int] | None, list[int] | None, list[int] | None]
"""What a caller of `units_clean` found of the units (cp.async's claim and landing): they
are inside the shadow's whole units (none negative), their least and greatest (None: not
found), and every record of their rows of `write` and of `read` (a list of them, repeats
allowed; None: not found)."""


def _holds_shared(packed: NDArray[np.int64], values: list[int] | None) -> bool:
    return SHARED in values if values is not None else bool(np.count_nonzero(packed == SHARED))


def _any_unknown(vc: NDArray[np.int64], values: list[int]) -> bool:
    """`_any_unordered` of an array that holds exactly the records `values`."""
    return any(v > SHARED and int(vc[(v >> COMP_SHIFT) & COMP_MASK]) < v & EPOCH_MASK for v in set(values))


def record_units(
    shadow: Shadow,
    units: NDArray[np.int64],
    size: int,
    write: bool,
    stamp: int | NDArray[np.int64],
    clean: Clean,
    span: tuple[int, int] | None = None,
) -> None:
    """Record the access `units_clean` found clean, as `check` does: a read replaces the
    units' reads; a write forgets them and replaces their writes, keeping what it replaces
    (`Shadow.prev`). `stamp`: the access (`stamp`), or one per unit (a column: several
    copies' units checked together). `span`: the least and greatest unit, where the
    caller has them."""
    last, written, seen = clean
    if shadow.host:  # (the bytes `check` touches)
        if span is None:
            listed: list[int] = units.tolist()
            span = min(listed), max(listed)
        shadow.touch(span[0] * size, span[1] * size + size)
    if not write:
        unit_rows(shadow.own_read(), size)[units] = stamp
        return
    if seen:
        unit_rows(shadow.own_read(), size)[units] = NONE
    target = unit_rows(shadow.own_write(), size)
    if written:  # as `_overwrite`: what the write replaces (no byte has several writers here)
        unit_rows(shadow.own_prev(), size)[units] = last
    target[units] = stamp


def stamp(warp: Warp, op: Any) -> int:
    """The record of an access by `warp` now at the site `op`."""
    return _stamp(warp, op)


def unit_rows(history: NDArray[np.int64], size: int) -> NDArray[np.int64]:
    """A shadow array's whole `size`-byte units as rows of records (a view)."""
    whole = history.size - history.size % size
    return (history if whole == history.size else history[:whole]).reshape(-1, size)


def check_operand(
    warp: Warp, op: Any, cta: Cta, desc: SmemDescriptor, rows: int, k: int, fmt: str, mn_major: bool
) -> None:
    """The tensor core reads a rows x k operand tile (an MMA's A or B, a tcgen05.cp
    source) from `cta`'s shared memory, asynchronously: at some time between the issue
    and the completion of the tcgen05.commit that tracks the op (PTX ISA, tcgen05
    "Memory consistency model": the async tcgen05 operations' shared-memory reads). Every
    byte must have been written, by a write ordered before the issue (the issuing warp's
    clock then: the thread's stores, a TMA or cp.async whose completion it observed), and
    the read is recorded as the tensor core's, completed by that commit, so that a later
    write (the producer refilling the stage) must be ordered after the commit's arrival."""
    index = _operand_bytes(desc, rows, k, ELEMENT_BYTES[fmt], mn_major)
    shadow = cta.shadow
    written = shadow.write[index]
    if not shadow.host and not written.all():
        byte = int(index[int(np.argmax(written == NONE))])
        raise Hazard(
            "smem-read-uninitialized",
            f"{_name(op)} by {warp.name} reads its {rows}x{k} operand tile from shared memory, but "
            f"{_where(warp, shadow, byte)} in it was never written since the launch (shared memory starts with "
            "undefined contents)",
        )
    vc = warp.clock.vc
    if shadow.writers or _any_unordered(vc, written):
        unordered = _unordered(vc, written)
        if shadow.writers:
            grouped = written == SHARED
            if grouped.any():
                unordered |= _unordered_writers(vc, shadow, index, grouped, False)
        if unordered.any():
            byte = int(index[int(np.argmax(unordered))])
            _race(warp, op, shadow, byte, False, _racing_write(vc, shadow, byte, False), True)
    stamp = _tensor_core_stamp(warp, op)
    # What the read knows: the issuing warp's clock, and the tensor core's earlier reads
    # (completed by earlier commits), so that re-reading a tile does not pile up readers.
    knows = warp.clock.vc.copy()
    comp = (stamp >> COMP_SHIFT) & COMP_MASK
    knows[comp] = max(int(knows[comp]), stamp & EPOCH_MASK)
    _record_read(warp, op, shadow, index, stamp, knows)


Tile = tuple[SmemDescriptor, int, int, str, bool]
"""An operand tile: descriptor, rows, k, format, MN-major."""


def check_operands(warp: Warp, op: Any, cta: Cta, tiles: Sequence[Tile]) -> None:
    """`check_operand` of each tile in turn (an MMA's A then B), with one gather of the
    shadow for all of them in the common case: every byte written, by writes the warp
    knows, no read to keep. Otherwise the tiles are checked one by one, so that reports
    are the same. (The tiles' bytes are whole 16-byte units in the canonical layouts: the
    shadow is gathered by unit, and each tile's part is tested on its own, one TMA box
    having usually written it all.) Before the gather: where each tile lies in a range a
    TMA box wrote whose summary (`Spans`: the values its records hold) passes those
    tests value by value, every byte passes them, and no byte's record is read."""
    plan = _plan_of(tiles)
    shadow = cta.shadow
    if _summaries_pass(warp, shadow, plan):
        _record_tensor_core_read(shadow, plan, _tensor_core_stamp(warp, op))
        return
    if plan.units is not None and plan.top_unit < shadow.size // UNIT:
        write, read = _unit_view(shadow.write), _unit_view(shadow.read)
        index = plan.units
    else:
        write, read, index = shadow.write, shadow.read, plan.index
    written = np.take(write, index, axis=0).reshape(-1)
    vc = warp.clock.vc
    for lo, hi in plan.parts:
        part = written[lo:hi]
        # (same-value writer groups, `Shadow.writers`, are check_operand's to read)
        if shadow.writers or (not shadow.host and int(part.min()) == NONE) or _any_unordered(vc, part):
            for tile in tiles:
                check_operand(warp, op, cta, *tile)
            return
    stamp = _tensor_core_stamp(warp, op)
    reads = np.take(read, index, axis=0).reshape(-1)
    if int(reads.max()) > NONE:
        knows = warp.clock.vc.copy()  # as check_operand: the tensor core's earlier reads are known
        comp = (stamp >> COMP_SHIFT) & COMP_MASK
        knows[comp] = max(int(knows[comp]), stamp & EPOCH_MASK)
        if _any_unordered(knows, reads) or _any_shared(reads):
            for tile in tiles:
                check_operand(warp, op, cta, *tile)
            return
    _record_tensor_core_read(shadow, plan, stamp)


def _record_tensor_core_read(shadow: Shadow, plan: TilesPlan, stamp: int) -> None:
    """Record the tensor core's read `stamp` of every byte of the tiles (they have no read
    to keep), and add it to the summaries of the ranges they overlap."""
    spans = _current_spans(shadow)
    # (one pending read per tile: a box refills one; by unit where the tiles are whole units)
    parts = plan.unit_parts if plan.unit_parts is not None and plan.top_unit < shadow.size // UNIT else None
    units = parts is not None
    for where, (low, high) in zip(plan.byte_parts if parts is None else parts, plan.bounds, strict=True):
        shadow.defer_read(PendingRead(where, units, stamp, low, high))
    ranges = spans.ranges
    for bounds in plan.bounds:
        for key in _lookup(spans, bounds)[1]:
            summary = ranges[key]
            if summary is not None and stamp not in summary[1]:
                ranges[key] = _union(summary, None, stamp)
    spans.gen = shadow.gen


def _summaries_pass(warp: Warp, shadow: Shadow, plan: TilesPlan) -> bool:
    """Whether each tile lies in a summarised range (`Spans`) whose values pass
    `check_operands`' tests: every write one the warp knows (or, in a kernel buffer, none),
    every read none or one the reading tensor core knows (the warp's clock and the tensor
    core's earlier completions, as `check_operand`). Then every byte passes them."""
    if shadow.writers:
        return False
    spans = _current_spans(shadow)
    if not spans.ranges:
        return False
    vc = warp.clock.vc
    cluster, rank = warp.cluster, warp.cta.rank
    tc_comp, tc_epoch = cluster.tc_base + rank, cluster.tc_count[rank] + len(warp.cta.commits) + 1
    for bounds in plan.bounds:
        inside = _lookup(spans, bounds)[0]
        summary = None if inside is None else spans.ranges[inside]
        if summary is None:
            return False
        for packed in summary[0]:
            if packed <= SHARED:
                if packed == SHARED or not shadow.host:
                    return False
            elif int(vc[(packed >> COMP_SHIFT) & COMP_MASK]) < packed & EPOCH_MASK:  # (`_knows`, inline)
                return False
        for packed in summary[1]:
            if packed == NONE:
                continue
            comp, epoch = (packed >> COMP_SHIFT) & COMP_MASK, packed & EPOCH_MASK
            if packed == SHARED or (int(vc[comp]) < epoch and not (comp == tc_comp and epoch <= tc_epoch)):
                return False
    return True


MAX_VALUES = 8
"""Values a range's summary keeps of its writes and of its reads (more: none kept). A
k-block's MMAs are one site each: a stage read by four of them holds five read values."""
MAX_SPANS = 64
"""Ranges summarised per shadow (more: all are dropped)."""


def _current_spans(shadow: Shadow) -> Spans:
    """The shadow's range summaries, new (empty) if a change left them stale."""
    spans = shadow.spans
    if spans.gen != shadow.gen:
        spans = shadow.spans = Spans(shadow.gen)
    return spans


def _wrote_span(spans: Spans, span: tuple[int, int], stamp: int) -> None:
    """Update the summaries for a write `stamp` of every byte of `span` that leaves them no
    read: the ranges it contains hold only those now, those it overlaps one value more;
    `span` is summarised from now on."""
    start, stop = span
    ranges = spans.ranges
    exact: Summary = (frozenset((stamp,)), NO_READ)
    for lo, hi in _lookup(spans, span)[1]:  # (the ranges it overlaps)
        ranges[lo, hi] = exact if start <= lo and hi <= stop else _union(ranges[lo, hi], stamp, NONE)
    if span not in ranges:
        if len(ranges) >= MAX_SPANS:
            ranges.clear()
            spans.unread.clear()
        ranges[span] = exact
        spans.lookup.clear()


NO_READ: Values = frozenset((NONE,))
"""A summary's reads where no byte has one."""


def _union(summary: Summary, write: int | None, read: int) -> Summary:
    """`summary` with one more write value (None: none) and read value."""
    if summary is None:
        return None
    writes = summary[0] if write is None else summary[0] | {write}
    reads = summary[1] | {read}
    return None if len(writes) > MAX_VALUES or len(reads) > MAX_VALUES else (writes, reads)


def _lookup(spans: Spans, bounds: tuple[int, int]) -> tuple[tuple[int, int] | None, tuple[tuple[int, int], ...]]:
    """`Spans.lookup` of a tile's byte bounds."""
    found = spans.lookup.get(bounds)
    if found is None:
        lo, hi = bounds
        overlapping = tuple(key for key in spans.ranges if key[0] < hi and lo < key[1])
        inside = next((key for key in overlapping if key[0] <= lo and hi <= key[1]), None)
        found = spans.lookup[bounds] = (inside, overlapping)
    return found


def _unit_view(history: NDArray[np.int64]) -> NDArray[np.int64]:
    """A shadow array as rows of 16 bytes' records (a view of its whole units)."""
    return history[: history.size - history.size % UNIT].reshape(-1, UNIT)


@dataclass(frozen=True)
class TilesPlan:
    index: NDArray[np.int64]
    """The tiles' bytes, one tile after the other (each in `check_operand`'s order)."""
    units: NDArray[np.int64] | None
    """The same as 16-byte units, where `index` is made of whole aligned units in order."""
    top_unit: int
    parts: tuple[tuple[int, int], ...]
    """Each tile's [start, stop) in `index`."""
    bounds: tuple[tuple[int, int], ...]
    """Each tile's lowest byte and one past its highest."""
    byte_parts: tuple[NDArray[np.int64], ...]
    """Each tile's part of `index`."""
    unit_parts: tuple[NDArray[np.int64], ...] | None
    """Each tile's part of `units`, where each part is whole units (else None)."""


_PLANS: dict[int, tuple[Sequence[Tile], TilesPlan]] = {}


def _plan_of(tiles: Sequence[Tile]) -> TilesPlan:
    """`_tiles_plan`, looked up by the identity of a tuple `tiles` first (an MMA passes its
    `MmaPlan.tiles`: hashing the descriptors costs more than the check they skip; the
    entry keeps the tuple, so its identity is not reused while cached)."""
    found = _PLANS.get(id(tiles))
    if found is not None and found[0] is tiles:
        return found[1]
    plan = _tiles_plan(tuple(tiles))
    if not isinstance(tiles, tuple):  # (a list may change under the same identity)
        return plan
    if len(_PLANS) >= 256:
        _PLANS.clear()
    _PLANS[id(tiles)] = (tiles, plan)
    return plan


@lru_cache(maxsize=64)
def _tiles_plan(tiles: tuple[Tile, ...]) -> TilesPlan:
    """Cached as `_operand_bytes`."""
    pieces = [_operand_bytes(desc, rows, k, ELEMENT_BYTES[fmt], mn_major) for desc, rows, k, fmt, mn_major in tiles]
    index = np.concatenate(pieces)
    bounds = np.cumsum([0] + [p.size for p in pieces]).tolist()
    units: NDArray[np.int64] | None = None
    if index.size % UNIT == 0:
        rows = index.reshape(-1, UNIT)
        if not (rows[:, 0] % UNIT).any() and np.array_equal(rows, rows[:, :1] + np.arange(UNIT)):
            units = rows[:, 0] // UNIT
            units.flags.writeable = False
    index.flags.writeable = False
    top = int(units.max()) if units is not None else -1
    extent = tuple((int(p.min()), int(p.max()) + 1) for p in pieces)
    parts = tuple(pairwise(bounds))
    byte_parts = tuple(index[lo:hi] for lo, hi in parts)
    unit_parts = None
    if units is not None and not any(hi % UNIT for _, hi in parts):
        unit_parts = tuple(units[lo // UNIT : hi // UNIT] for lo, hi in parts)
    return TilesPlan(index, units, top, parts, extent, byte_parts, unit_parts)


def _tensor_core_stamp(warp: Warp, op: Any) -> int:
    """The epoch of an async tcgen05 op's completion: the tensor core component of the
    issuing CTA at the commit that will track it. Commits complete in issue order
    (`Cluster.complete_commit`), so that is the one after the commits now pending, when
    the issuing thread's next commit is the CTA's next one (the usual single MMA thread;
    another thread's commit in between makes the epoch a lower bound: a race with a
    write ordered between the two commits is then missed)."""
    cluster = warp.cluster
    rank = warp.cta.rank
    comp = cluster.tc_base + rank
    epoch = cluster.tc_count[rank] + len(warp.cta.commits) + 1
    if comp > COMP_MASK or epoch >= FOREIGN_EPOCH:
        raise UnsupportedValue("the race checks support 4096 clock components and 2^28 synchronisations per warp")
    key = ~id(op)  # (the tensor core's site of `op` issued by this warp, beside the warp's own: `_stamp`)
    site = warp.site_bits.get(key)
    if site is None:
        who = f"the tensor core of CTA {rank} (issued by {warp.name})"
        site = warp.site_bits[key] = cluster.memory.sites.of(op, who) << SITE_SHIFT
    return site | (comp << COMP_SHIFT) | epoch


@lru_cache(maxsize=64)
def _operand_bytes(desc: SmemDescriptor, rows: int, k: int, element: int, mn_major: bool) -> NDArray[np.int64]:
    """The shared-memory bytes of an operand tile. Cached (read-only): a pipeline's MMAs
    use a few descriptors over and over, and computing the layout costs more than the
    check (at most 64 tiles of 256 x 16 elements of 2 bytes, 64 KiB each, are kept)."""
    index = (operand_addresses(desc, rows, k, element, mn_major)[..., None] + np.arange(element)).reshape(-1)
    index.flags.writeable = False
    return index


# --------------------------------------------------------------------------------------
# Reports
# --------------------------------------------------------------------------------------


def _where(warp: Warp, shadow: Shadow, byte: int) -> str:
    address = shadow.base + byte
    if address >= GLOBAL_BASE:
        buffer, offset = warp.cluster.memory.locate(address, 1)
        return f"address 0x{address:x} (buffer '{buffer.name}' + {offset})"
    cta, offset = warp.cluster.cta_of(address)
    for name, (start, size) in cta.layout.symbols.items():
        if start <= offset < start + size:
            symbol = f"@{name}+{offset - start}"
            break
    else:
        symbol = f"shared offset 0x{offset:x}"
    return f"shared address 0x{address:x} ({symbol}" + (f" of CTA {cta.rank})" if len(warp.cluster.ctas) > 1 else ")")


def _uninitialised(warp: Warp, op: Any, shadow: Shadow, byte: int) -> NoReturn:
    raise Hazard(
        "smem-read-uninitialized",
        f"{_name(op)} by {warp.name} reads {_where(warp, shadow, byte)}, which nothing has written since the "
        "launch (shared memory starts with undefined contents)",
    )


def _name(op: Any) -> str:
    return op.name if op is not None and hasattr(op, "name") else "an access"


def _race(
    warp: Warp,
    op: Any,
    shadow: Shadow,
    byte: int,
    write: bool,
    packed: int,
    earlier_writes: bool,
    same: bool = False,
) -> NoReturn:
    """Report a data race of `warp`'s access with the recorded access `packed`; `same`: a
    write of the bytes the earlier write left (reported under `RacePolicy.STRICT`)."""
    other = warp.cluster.memory.sites.sites[packed >> SITE_SHIFT]
    kind = "global-data-race" if shadow.base >= GLOBAL_BASE else "smem-data-race"
    what = "write" if earlier_writes else "read"
    message = _race_message(warp, op, shadow, byte, write, packed, earlier_writes)
    if same:
        message += (
            "; both write the same bytes, so every order leaves them (the default race policy, same-value, "
            "notes this and goes on; --race-policy strict reports it)"
        )
    raise Hazard(kind, message, [(other.op, f"the earlier access: {_name(other.op)} by {other.who} ({what})")])


def _race_message(
    warp: Warp, op: Any, shadow: Shadow, byte: int, write: bool, packed: int, earlier_writes: bool
) -> str:
    other = warp.cluster.memory.sites.sites[packed >> SITE_SHIFT]
    where = _where(warp, shadow, byte)
    if packed & EPOCH_MASK == FOREIGN_EPOCH:
        order = " in a cluster that ran earlier (the clusters of a grid run concurrently and nothing orders them)"
    else:
        order = ": no barrier, mbarrier phase or cluster barrier orders the two accesses" + (
            f" ({warp.name} last synchronised on {warp.last_sync})" if warp.last_sync else ""
        )
    return (
        f"{_name(op)} by {warp.name} {'writes' if write else 'reads'} {where}, which {_name(other.op)} by "
        f"{other.who} {'wrote' if earlier_writes else 'read'}{order}"
    )
