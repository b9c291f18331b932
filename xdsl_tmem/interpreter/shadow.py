"""The access history (shadow) of a memory for the race checks of `races.py`: per byte,
the last write and the last read, each an access packed into one int64 (site, clock
component, epoch), or several of either where they are unordered and all kept. Apart
from `races.py` so that the machine (`machine.py`), which holds a shadow per memory, and
the checks, which read the machine, do not import each other.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from xdsl_tmem.interpreter.values import UnsupportedValue

NONE = 0
"""No access recorded (for a write: never written since the launch)."""
SHARED = 1
"""Reads by several warps that do not know each other: `Shadow.readers` has them; as a
write, several unordered writes of the same bytes: `Shadow.writers` has them."""
# An access is one int64: site << 40 | component << 28 | epoch, site >= 1 (so > SHARED).
SITE_SHIFT, COMP_SHIFT = 40, 28
COMP_MASK = (1 << 12) - 1
EPOCH_MASK = FOREIGN_EPOCH = (1 << COMP_SHIFT) - 1
"""The epoch of an access by a cluster that ran before this one: no warp here knows it."""
MAX_SITES = 1 << 23


class Site(NamedTuple):
    """Who made an access, for reports."""

    op: Any
    who: str


class SameValueRace(NamedTuple):
    """An unordered write that wrote the bytes the write it races with had left (the first
    one of a launch, for its report)."""

    op: Any
    """The later write."""
    message: str


class Sites:
    """The access sites of a launch, numbered from 1 (shadows store the numbers), and what
    the race checks note about the launch (shared by copies of its state: it only grows)."""

    def __init__(self) -> None:
        self.sites: list[Site] = [Site(None, "nobody")]
        self._index: dict[tuple[int, str], int] = {}
        self.inexact: set[int] = set()
        """Sites that recorded a write whose bytes the check did not see (an async copy
        claiming its destination before it lands, mbarrier.init, a TMA box): memory need
        not hold what they wrote, so a write racing with theirs is never taken as the same
        value (races.py)."""
        self.strict = False
        """`RacePolicy.STRICT`: an unordered write of the same bytes is a race too."""
        self.same_value = 0
        """Same-value write-write races met (a warp's instruction counts once)."""
        self.first_same_value: SameValueRace | None = None

    def of(self, op: Any, who: str) -> int:
        key = (id(op), who)
        index = self._index.get(key)
        if index is None:
            index = len(self.sites)
            if index >= MAX_SITES:
                raise UnsupportedValue(f"more than {MAX_SITES} memory access sites (op and warp pairs)")
            self._index[key] = index
            self.sites.append(Site(op, who))
        return index


class Writers(NamedTuple):
    """Unordered writes of one byte that all wrote the bytes it holds (races.py,
    "Same-value writes")."""

    members: list[int]
    """The writes, none ordered after another."""
    before: tuple[int, ...]
    """The write(s) the first of them replaced: a member ordered after these is ordered
    after every earlier write of the byte (an access knowing such a member reads the
    group's bytes)."""


PAGE = 1024
"""Bytes per page of `Shadow.touched` (a GEMM epilogue's warp stores 128 bytes per row into
rows kilobytes apart: `races.new_cluster` converts whole pages)."""
UNIT = 16
UNIT_RECORDS = np.dtype((np.void, 8 * UNIT))
"""One 16-byte unit's 16 int64 records as one item."""


GRAIN = 16
"""Bytes per entry of `Shadow.used` (a store's lanes write whole 16-byte vectors)."""


MAX_PENDING = 64
"""Pending reads kept (`Shadow.pending`); more are recorded first."""
MAX_FILLS = 16
"""Pending box writes kept (`Shadow.fills`); more are written first."""


class PendingRead(NamedTuple):
    """A read by the tensor core of the same stamp at each byte of `where`."""

    where: NDArray[np.int64]
    """Byte offsets, or 16-byte unit numbers (`units`)."""
    units: bool
    stamp: int
    low: int
    """The lowest byte read."""
    high: int
    """One past the highest byte read."""


Fill = tuple[int, int | None]
"""A TMA box's write of every byte of a range not yet in `Shadow.write` (`Shadow.fills`):
the write record of each byte, and what it replaced, for `Shadow.prev` (None: `prev`
is left as it is, the bytes held no write)."""


Values = frozenset[int]
Summary = tuple[Values, Values] | None
"""Of a byte range: every value its bytes' `write` records hold, and every value of their
`read` records (each set a superset: it may name values no byte holds any more); None
where there were too many to keep."""


class Spans:
    """Summaries of the ranges TMA boxes wrote (`races.check_span`), which the MMA operand
    check reads instead of each byte's records when a tile lies in one range
    (`races.check_operands`). Valid while `gen` is the shadow's: any change of the history
    that does not update them (`own_write`, `own_read`) leaves them stale, and they are
    then dropped before the next use."""

    __slots__ = ("gen", "lookup", "ranges", "unread")

    def __init__(self, gen: int) -> None:
        self.gen = gen
        self.ranges: dict[tuple[int, int], Summary] = {}
        """[start, stop) → its summary."""
        self.unread: set[tuple[int, int]] = set()
        """Ranges whose bytes have no recorded read (`Shadow.recorded_read`: the tensor
        core's pending reads aside), as the box that wrote them left them: recording the
        pending reads (`Shadow._record_pending`) forgets them all."""
        self.lookup: dict[tuple[int, int], tuple[tuple[int, int] | None, tuple[tuple[int, int], ...]]] = {}
        """A tile's byte bounds → the range containing them (if any) and the ranges they
        overlap: cached until a range is added or removed."""


class Shadow:
    """The access history of one memory (a CTA's shared memory or one kernel buffer):
    per byte, the last write and the last read (or SHARED). Copies share the arrays
    until one of them changes (exploration copies whole machine states)."""

    __slots__ = (
        "_prev", "_read", "_write", "base", "displaced", "fills", "foreign", "gen", "host", "pending",
        "readers", "shared_read", "shared_write", "spans", "touched", "used", "used_gen", "writers",
    )  # fmt: skip

    def __init__(self, size: int, base: int, host: bool):
        self._write: NDArray[np.int64] = np.zeros(size, dtype=np.int64)
        self._read: NDArray[np.int64] = np.zeros(size, dtype=np.int64)
        self.fills: dict[tuple[int, int], Fill] = {}
        """Writes of whole ranges by TMA boxes (`races.check_span`) not yet in `write` and
        `prev`: written there when either is next looked at (`write`, `prev`,
        `own_write`), so that a pipeline refilling its stages box after box, whose
        records nothing reads in between (the MMA operand checks read the range
        summaries, `Spans`), writes no record. Disjoint ranges."""
        self.pending: list[PendingRead] = []
        """Reads by the tensor core (`races.check_operands`) not yet in `read`: recorded
        there when `read` is next looked at (`read`, `own_read`), or dropped unrecorded
        when a write of every byte they read supersedes them (`races.check_span`)."""
        self.readers: dict[int, list[int]] = {}
        """byte → the concurrent reads of it (where `read` is SHARED)."""
        self.writers: dict[int, Writers] = {}
        """byte → the unordered writes of its current bytes (where `write` is SHARED)."""
        self._prev: NDArray[np.int64] | None = None
        """`prev`: per byte, the write(s) its last write replaced (NONE: none; SHARED: several,
        `displaced` has them): what a same-value write must be ordered after to be
        complete (races.py). Made when a write first replaces one."""
        self.displaced: dict[int, list[int]] = {}
        self.foreign: NDArray[np.int64] | None = None
        """Per byte, a read by a cluster that ran before this one (epoch FOREIGN_EPOCH;
        NONE: none), kept apart from `read`, which holds this cluster's reads (None until a
        second cluster starts: `races.new_cluster`). A byte with both is one read
        concurrently by both; apart, a cluster's reads of bytes every earlier cluster read
        too need no per-byte `readers` entry."""
        self.base = base
        """The address of byte 0."""
        self.host = host
        """Written by the host before the launch (kernel buffers)."""
        self.shared_write = self.shared_read = False
        """`write` (`read` and `readers`) is shared with a copy: copy it before changing it."""
        self.gen = 0
        """Counts the changes of `write` and `read` (each `own_write` / `own_read` is one):
        every change goes through them, or counts itself (`Spans`)."""
        self.spans = Spans(0)
        self.touched: NDArray[np.bool_] | None = None
        """Of a kernel buffer (`host`), per page of `PAGE` bytes: whether the current
        cluster recorded an access in it (`touch`), so that `races.new_cluster` looks at no
        other (a cluster of a large grid touches a few tiles of each operand, spread over
        the buffer: one range around them would be most of it). Made at the first touch."""
        self.used: NDArray[np.bool_] | None = np.zeros(-(-size // GRAIN), dtype=np.bool_)
        """Per `GRAIN` bytes, False where none of them holds a record in `write`, `read`
        or `foreign` (True: it may), valid while `used_gen` is `gen`: kept by the strided
        fast path (`races.check_strided`), which then reads no record of such bytes; any
        other change of the history leaves it stale (it is then never used again)."""
        self.used_gen = 0

    def copy(self) -> Shadow:
        clone = Shadow.__new__(Shadow)
        clone._write, clone.read, clone.readers, clone.writers = self.write, self.read, self.readers, self.writers
        clone.pending, clone.fills = [], {}
        clone._prev, clone.displaced, clone.foreign = self._prev, self.displaced, self.foreign
        clone.base, clone.host = self.base, self.host
        clone.touched = None if self.touched is None else self.touched.copy()
        clone.gen, clone.spans = 0, Spans(0)
        clone.used, clone.used_gen = None, -1  # (not copied: the records' own tests serve)
        self.shared_write = self.shared_read = clone.shared_write = clone.shared_read = True
        return clone

    @property
    def size(self) -> int:
        """Bytes of the memory (without writing the pending fills, as `write.size` would)."""
        return self._write.size

    @property
    def write(self) -> NDArray[np.int64]:
        if self.fills:
            self._write_fills()
        return self._write

    @write.setter
    def write(self, value: NDArray[np.int64]) -> None:
        if self.fills:
            self._write_fills()
        self._write = value

    @property
    def prev(self) -> NDArray[np.int64] | None:
        if self.fills:
            self._write_fills()
        return self._prev

    @prev.setter
    def prev(self, value: NDArray[np.int64] | None) -> None:
        if self.fills:
            self._write_fills()
        self._prev = value

    def own_write(self) -> NDArray[np.int64]:
        self.gen += 1
        return self._own_write()

    def _own_write(self) -> NDArray[np.int64]:
        if self.shared_write:
            self._write, self.shared_write = self._write.copy(), False
            self.writers = {byte: Writers(list(w.members), w.before) for byte, w in self.writers.items()}
            self._prev = None if self._prev is None else self._prev.copy()
            self.displaced = {byte: list(d) for byte, d in self.displaced.items()}
        if self.fills:
            self._write_fills()
        return self._write

    def own_prev(self) -> NDArray[np.int64]:
        """`prev`, made if there is none yet (after `own_write`: it shares its copying)."""
        if self.fills:
            self._write_fills()
        if self._prev is None:
            self._prev = np.zeros(self._write.size, dtype=np.int64)
        return self._prev

    def defer_fill(self, start: int, stop: int, stamp: int, before: int | None) -> None:
        """A write `stamp` of every byte of [start, stop), which held no other write than
        `before` (None: none) and no recorded read, with no same-value writer group or
        displaced writes in the range: kept in `fills` (a change: `gen` counts it). A
        fill of the same range supersedes the pending one (its `prev` is the one it
        replaced, when the bytes held a write)."""
        self.gen += 1
        fills = self.fills
        old = fills.get((start, stop))
        if old is None and fills and (len(fills) >= MAX_FILLS or any(lo < stop and start < hi for lo, hi in fills)):
            self._write_fills()  # (a new dict)
        self.fills[start, stop] = (stamp, old[1] if before is None and old is not None else before)

    def _write_fills(self) -> None:
        """Write the pending fills into `write` and `prev` (not a change: `gen` stays)."""
        fills, self.fills = self.fills, {}
        write = self._own_write()
        for (start, stop), (stamp, before) in fills.items():
            write[start:stop] = stamp
            if before is not None:
                self.own_prev()[start:stop] = before

    @property
    def read(self) -> NDArray[np.int64]:
        if self.pending:
            self._record_pending()
        return self._read

    @read.setter
    def read(self, value: NDArray[np.int64]) -> None:
        self._read = value

    def own_read(self) -> NDArray[np.int64]:
        if self.pending:
            self._record_pending()
        self.gen += 1
        return self._own_read()

    def _own_read(self) -> NDArray[np.int64]:
        if self.shared_read:
            self._read, self.shared_read = self._read.copy(), False
            self.readers = {byte: list(r) for byte, r in self.readers.items()}
            if self.foreign is not None:
                self.foreign = self.foreign.copy()
        return self._read

    def defer_read(self, read: PendingRead) -> None:
        """A read by the tensor core of bytes with no read to keep (each record it replaces
        is known to it: `races.check_operands`), recorded when `read` is next looked at."""
        self.gen += 1
        if len(self.pending) >= MAX_PENDING:
            self._record_pending()
        self.pending.append(read)

    def pending_within(self, start: int, stop: int) -> frozenset[int]:
        """The stamps of the pending reads of bytes in [start, stop), each of which reads
        only bytes in it (else every pending read is recorded now, and there are none)."""
        stamps: set[int] = set()
        for p in self.pending:
            if p.low < stop and start < p.high:
                if not (start <= p.low and p.high <= stop):
                    self._record_pending()
                    return frozenset()
                stamps.add(p.stamp)
        return frozenset(stamps)

    def drop_pending(self, start: int, stop: int) -> None:
        """Forget the pending reads of bytes in [start, stop) (after `pending_within`: a
        write of every byte there supersedes them; the others read none of its bytes)."""
        if self.pending:
            self.pending = [p for p in self.pending if not (p.low < stop and start < p.high)]

    @property
    def recorded_read(self) -> NDArray[np.int64]:
        """`read` without the pending reads."""
        return self._read

    def _record_pending(self) -> None:
        """Write the pending reads into `read` (not a change of the history: `gen` stays)."""
        read = self._own_read()
        self.spans.unread.clear()
        units = read[: read.size - read.size % UNIT].view(UNIT_RECORDS)
        for pending in self.pending:
            if pending.units:
                units[pending.where] = np.full(UNIT, pending.stamp, dtype=np.int64).view(UNIT_RECORDS)[0]
            else:
                read[pending.where] = pending.stamp
        self.pending.clear()

    def own_foreign(self) -> NDArray[np.int64]:
        """`foreign`, made if there is none yet, owned as `own_read` owns `read`."""
        self.own_read()
        if self.foreign is None:
            self.foreign = np.zeros(self.read.size, dtype=np.int64)
        return self.foreign

    def touch(self, lo: int, hi: int) -> None:
        """Bytes `lo`..`hi` - 1 have an access recorded in this cluster."""
        pages = self.touched
        if pages is None:
            pages = self.touched = np.zeros(self._write.size // PAGE + 1, dtype=np.bool_)
        pages[lo // PAGE : (hi - 1) // PAGE + 1] = True

    def touch_strided(self, first: int, count: int, stride: int, size: int) -> None:
        """`touch` of `count` accesses of `size` bytes, `stride` bytes apart from `first`:
        the pages of each (not the pages between them: a warp's stores to the rows of a tile)."""
        if stride <= PAGE or size > PAGE:
            self.touch(first, first + (count - 1) * stride + size)
            return
        if self.touched is None:
            self.touched = np.zeros(self._write.size // PAGE + 1, dtype=np.bool_)
        starts = np.arange(first, first + count * stride, stride, dtype=np.int64)
        self.touched[starts // PAGE] = True  # (an access of at most a page spans two)
        self.touched[(starts + (size - 1)) // PAGE] = True

    def used_grains(self, first: int, count: int, stride: int, size: int) -> NDArray[np.bool_] | None:
        """The entries of `used` covering `count` accesses of `size` bytes, `stride` bytes
        apart from `first` (a strided view; every entry from the first to the last where
        `stride` is not a multiple of `GRAIN`), or None where `used` is stale."""
        used = self.used
        if used is None or self.used_gen != self.gen:
            return None
        low = first // GRAIN
        if stride % GRAIN:
            return used[low : (first + (count - 1) * stride + size - 1) // GRAIN + 1]
        span = (first + size - 1) // GRAIN - low + 1
        return np.ndarray((count, span), np.bool_, used, low, (stride // GRAIN, 1))

    def touched_pages(self) -> NDArray[np.int64]:
        """The pages `touch` marked, ascending, and forget them."""
        if self.touched is None:
            return np.zeros(0, dtype=np.int64)
        pages = np.flatnonzero(self.touched)
        if pages.size:
            self.touched.fill(False)
        return pages

    def touch_index(self, index: NDArray[np.int64]) -> None:
        """`touch` of the bytes `index` (a kernel buffer's: shared memory needs no range)."""
        if self.host and index.size:
            self.touch(int(index.min()), int(index.max()) + 1)

    def drop(self) -> None:
        """Free the history now (the launch is over)."""
        self.fills, self.pending = {}, []
        self.write = self.read = np.zeros(0, dtype=np.int64)
        self.readers, self.writers, self.prev, self.displaced, self.foreign = {}, {}, None, {}, None
        self.shared_write = self.shared_read = False
        self.gen += 1
        self.used = None

    @property
    def nbytes(self) -> int:
        """The memory this copy holds alone (shared arrays are counted by no copy)."""
        write = self._write.nbytes + (0 if self._prev is None else self._prev.nbytes)
        read = self.read.nbytes + (0 if self.foreign is None else self.foreign.nbytes)
        return (0 if self.shared_write else write) + (0 if self.shared_read else read)
