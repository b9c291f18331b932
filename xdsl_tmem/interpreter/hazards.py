"""Happens-before tracking and the hazard checks built on it.

Vector clocks with one component per warp for its ordinary instructions, one per warp
for its tcgen05 stream, and one per CTA for its tensor core. Synchronisation carries
clocks: an mbarrier arrive releases the arriving warp's clock into the barrier's current
phase and a wait that observes a completed phase acquires it; `bar.sync` / `bar.arrive`
and the cluster barrier likewise; a `tcgen05.commit` releases the committing warp's
clock plus the tensor core's completion of the MMAs it tracks.

The fence policy decides what a thread synchronisation orders about tcgen05 work
(docs/semantics.md §9.1, docs/ptx-nvvm.md §1.5):

* `strict` (the PTX memory model): a release publishes the warp's tcgen05 work only up
  to its last `tcgen05.fence::before_thread_sync`, and an acquire orders the warp's
  later tcgen05 operations only after a `tcgen05.fence::after_thread_sync`;
* `mojo`: thread synchronisation orders tcgen05 work without fences (what Mojo's kernels
  assume).

Every TMEM access (a tcgen05.ld / st, an MMA or cp write) is a record with the cells it
touches and the event that completes it (the warp's wait::ld / wait::st, or the tensor
core completing the tracking commit). A new access conflicting with a record (one of
them writes) must be ordered after that completion, or it is a hazard.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from xdsl_tmem.fence_policy import FencePolicy
from xdsl_tmem.interpreter.machine import INF, TMEM_LANES, TMEM_POISON, AsyncOp, Cta, Hazard

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.executor import Warp

Clock = NDArray[np.int64]
BUCKET = 32
"""TMEM columns per bucket of the access index."""
ALL_LANES = (1 << TMEM_LANES) - 1
"""The lane set of every TMEM lane."""


class WarpClock:
    """One warp's knowledge: `vc` for its ordinary instructions, `vc_tc` for its tcgen05
    operations (the same array under the mojo policy)."""

    __slots__ = ("fenced", "generic", "strict", "tc", "vc", "vc_tc")

    def __init__(self, size: int, generic: int, tc: int, policy: FencePolicy):
        strict = policy is FencePolicy.STRICT
        self.vc: Clock = np.zeros(size, dtype=np.int64)
        if size:
            self.vc[generic] = 1  # the warp's first epoch: 0 is known to every clock (races.py)
        self.vc_tc: Clock = np.zeros(size, dtype=np.int64) if strict else self.vc
        self.generic = generic
        self.tc = tc
        self.strict = strict
        self.fenced = 0
        """The warp's tcgen05 counter at its last fence::before_thread_sync."""

    def tick(self) -> int:
        """A new ordinary event (an mbarrier init, a fence.mbarrier_init) of this warp."""
        self.vc[self.generic] += 1
        return int(self.vc[self.generic])

    def tc_tick(self) -> int:
        """A new tcgen05 event (the completion of this warp's loads or stores)."""
        self.vc[self.tc] += 1
        value = int(self.vc[self.tc])
        self.vc_tc[self.tc] = value
        return value

    def release(self) -> Clock:
        """The clock a thread synchronisation publishes. The warp's later accesses get a new
        epoch, which the published clock does not cover (races.py)."""
        clock = self.vc.copy()
        if self.strict:
            clock[self.tc] = min(int(clock[self.tc]), self.fenced)
        self.vc[self.generic] += 1
        return clock

    def acquire(self, clock: Clock | None) -> None:
        if clock is not None:
            np.maximum(self.vc, clock, out=self.vc)

    def fence_before(self) -> None:
        self.fenced = int(self.vc[self.tc])

    def fence_after(self) -> None:
        if self.strict:
            np.maximum(self.vc_tc, self.vc, out=self.vc_tc)

    def knowing(self, known: Clock) -> WarpClock:
        """This clock as it was when it knew `known` of the others (an asynchronous
        operation's issue), its own component the current epoch: an access checked with it
        is newer than everything the warp did but ordered after only what it knew then."""
        clone = self.copy()
        np.copyto(clone.vc, known)
        clone.vc[self.generic] = self.vc[self.generic]
        return clone

    def copy(self) -> WarpClock:
        clone = WarpClock.__new__(WarpClock)
        clone.vc = self.vc.copy()
        clone.vc_tc = self.vc_tc.copy() if self.strict else clone.vc
        clone.generic, clone.tc, clone.strict, clone.fenced = self.generic, self.tc, self.strict, self.fenced
        return clone


# --------------------------------------------------------------------------------------
# TMEM accesses
# --------------------------------------------------------------------------------------


def span(start: int, count: int) -> int:
    """The bit set of [start, start + count)."""
    return ((1 << count) - 1) << start


def members(bits: int) -> NDArray[np.int64]:
    """The elements of a bit set, ascending."""
    raw = np.frombuffer(bits.to_bytes((bits.bit_length() + 7) // 8 or 1, "little"), dtype=np.uint8)
    return np.flatnonzero(np.unpackbits(raw, bitorder="little")).astype(np.int64)


def runs(bits: int) -> str:
    """`0-15, 32-47` for a bit set."""
    parts: list[str] = []
    index = members(bits)
    if index.size == 0:
        return "none"
    breaks = np.flatnonzero(np.diff(index) != 1)
    starts = [int(index[0]), *(int(index[b + 1]) for b in breaks)]
    ends = [*(int(index[b]) for b in breaks), int(index[-1])]
    for first, last in zip(starts, ends, strict=True):
        parts.append(str(first) if first == last else f"{first}-{last}")
    return ", ".join(parts)


def _covers(a: AsyncOp, b: AsyncOp) -> bool:
    return not (b.lane_set & ~a.lane_set) and not (b.column_set & ~a.column_set)


Axis = slice | NDArray[np.int64]
Cells = tuple[Axis, Axis]
"""An index of a record's cells in a (lanes, columns) TMEM array."""


def _axis(bits: int) -> Axis:
    """A bit set as an index along one axis: a slice when its members are contiguous (the
    common case), so that indexing makes a view instead of gathering cells."""
    low = bits & -bits
    if bits and not (bits + low) & bits:  # one run of ones: adding its lowest bit clears it
        return slice(low.bit_length() - 1, bits.bit_length())
    index = members(bits)
    index.flags.writeable = False  # cached and shared
    return index


@lru_cache(maxsize=4096)
def cell_index(lane_set: int, column_set: int) -> Cells:
    """The index of the cells lane_set x column_set. Cached: a kernel's accesses use a few
    shapes at a few addresses, and building an index costs more than using it."""
    lanes, columns = _axis(lane_set), _axis(column_set)
    if isinstance(lanes, slice) or isinstance(columns, slice):
        return lanes, columns  # one index array and a slice select its outer product
    return lanes[:, None], columns[None, :]  # np.ix_


def cells_of(record: AsyncOp) -> Cells:
    """The index of the exact cells of a record."""
    return cell_index(record.lane_set, record.column_set)


def describe_cells(lane_set: int, column_set: int) -> str:
    return f"TMEM lanes {runs(lane_set)}, columns {runs(column_set)}"


def describe(record: AsyncOp, cluster_size: int) -> str:
    who = f"warp {record.warp}" + (f" lane {record.lane}" if record.lane >= 0 else "")
    if cluster_size > 1:
        who = f"CTA {record.issuer_cta} {who}"
    cells = describe_cells(record.lane_set, record.column_set) + (f" of CTA {record.cta}" if cluster_size > 1 else "")
    name = record.op.name if record.op is not None else record.kind
    return f"{name} by {who} ({cells})"


def _uninitialised(cta: Cta, record: AsyncOp, cells: Cells) -> str | None:
    """The never-written cells among the record's `cells`, described, or None."""
    if not record.column_set & ~cta.tmem_full:  # (every lane of its columns written)
        return None
    written = cta.tmem_written[cells]
    if np.count_nonzero(written) == written.size:  # `.all()`, at a third of the cost for a view
        return None
    missing = ~written
    lanes, columns = members(record.lane_set), members(record.column_set)
    lane_bits = sum(1 << int(lane) for lane in lanes[missing.any(axis=1)])
    column_bits = sum(1 << int(column) for column in columns[missing.any(axis=0)])
    return describe_cells(lane_bits, column_bits)


def check_access(warp: Warp, cta: Cta, record: AsyncOp, knowledge: Clock) -> None:
    """Check `record` (just issued) against every live access it overlaps, then index it.
    `knowledge` is what the issuer knows (its tcgen05 clock).

    Besides the races: a read (a load, an accumulating MMA) of cells no write produced
    since their allocation is `tmem-read-uninitialized`, and a read of an accumulator an
    epilogue already consumed is `tmem-stale-accumulator` (see `_check_stale`)."""
    size = len(warp.cluster.ctas)
    cells = cells_of(record)
    superseded, conflict, repeat = overlapping(cta, record, knowledge)
    if not repeat and (not record.writes or record.accumulates):
        if (missing := _uninitialised(cta, record, cells)) is not None:
            action = "accumulates onto (enable_input_d = 1)" if record.writes else "reads"
            raise Hazard(
                "tmem-read-uninitialized",
                f"{describe(record, size)} {action} TMEM cells that no write has produced since they were "
                f"allocated ({missing}): their content is undefined"
                + (
                    "; if an MMA is meant to produce them, this load is not ordered after it"
                    if not record.writes
                    else "; the first MMA into an accumulator must have enable_input_d = 0"
                )
                + (f"; the warp last synchronised on {record.observed}" if record.observed else ""),
            )
    if conflict is not None:
        other = conflict
        related = [(other.op, f"the earlier access: {describe(other, size)}")]
        if other.commit_op is not None:
            related.append((other.commit_op, "the tcgen05.commit tracking it"))
        raise Hazard(_conflict_kind(other, record), _conflict_message(other, record, size), related)
    if not repeat:
        _check_stale(warp, cta, record, cells)
    _mark_cells(warp, cta, record, cells)
    buckets = range(record.columns[0] // BUCKET, (record.columns[1] - 1) // BUCKET + 1)
    if len(superseded) == 1:  # (the usual MMA after MMA: one record replaced in each bucket)
        only = superseded[0]
        for bucket in buckets:
            live = cta.tmem_live[bucket]
            if len(live) == 1 and live[0] is only:
                live[0] = record
            else:
                live[:] = [r for r in live if r is not only]
                live.append(record)
        return
    gone = {id(r) for r in superseded}
    for bucket in buckets:
        live = cta.tmem_live[bucket]
        if len(live) == 1 and id(live[0]) in gone:  # (the usual MMA after MMA: one record replaced)
            live[0] = record
            continue
        if gone:
            live[:] = [r for r in live if id(r) not in gone]
        live.append(record)


READ_BLOCK = 16
"""TMEM lanes per block of `Cta.tmem_read_columns` (a 16x256b load reads 16 lanes)."""
READ_BLOCKS = TMEM_LANES // READ_BLOCK


@lru_cache(maxsize=1024)
def _read_blocks(lane_set: int) -> range:
    """The blocks of `READ_BLOCK` lanes that the lanes `lane_set` touch."""
    if not lane_set:
        return range(0)
    low, high = ((lane_set & -lane_set).bit_length() - 1) // READ_BLOCK, (lane_set.bit_length() - 1) // READ_BLOCK
    return range(low, high + 1)


def _read_keys(warp: int, lane_set: int) -> range:
    """The keys of `Cta.tmem_read_columns` of `warp`'s reads of the lanes `lane_set`."""
    blocks = _read_blocks(lane_set)
    first = warp * READ_BLOCKS
    return range(first + blocks.start, first + blocks.stop)


def _forget_readers(cta: Cta, column_set: int) -> None:
    """No cell of the columns `column_set` has a reader any more (`Cta.tmem_read_columns`)."""
    read = cta.tmem_read_columns
    for index, columns in read.items():
        if columns & column_set:
            read[index] = columns & ~column_set


def _mark_cells(warp: Warp, cta: Cta, record: AsyncOp, cells: Cells) -> None:
    """Record in the cells' flags (and their summaries) what `record` did to them."""
    if record.writes and not record.accumulates:
        cta.tmem_written[cells] = True
        cta.tmem_reader[cells] = -1
        if record.lane_set == ALL_LANES:  # (the summaries of whole columns)
            cta.tmem_full |= record.column_set
            _forget_readers(cta, record.column_set)
    elif not record.writes:
        cta.tmem_reader[cells] = warp.index
        cta.tmem_read_sync[cells] = warp.acquires
        read = cta.tmem_read_columns
        for key in _read_keys(warp.index, record.lane_set):
            read[key] = read.get(key, 0) | record.column_set
    # (An accumulating write changes neither: its cells were all written, none read since,
    # or `_uninitialised` / `_check_stale` raised.)


def overlapping(cta: Cta, record: AsyncOp, knowledge: Clock) -> tuple[list[AsyncOp], AsyncOp | None, bool]:
    """The live records `record` supersedes (its write covers their cells), the first it
    conflicts with (not ordered before it) if any, and whether it repeats one: an
    accumulating tensor-pipe write whose every overlapping live record is a tensor-pipe
    write of the same thread with exactly its cells (the next MMA of a K loop). Then no
    access of those cells came between (it would be live, or superseded by a later live
    write: either overlaps them), so the cells are as that write left them: all written,
    none read since (`_uninitialised` and `_check_stale` pass), and nothing else changed
    them (only `check_access` and a dealloc, which drops the records, change them)."""
    superseded: list[AsyncOp] = []
    repeat = record.writes and record.accumulates and record.pipe
    writes, lane_set, column_set = record.writes, record.lane_set, record.column_set
    for other in _live_records(cta, record.columns[0] // BUCKET, (record.columns[1] - 1) // BUCKET):
        # Two reads never conflict; the others must share cells (tested inline: a
        # load checks every live record of its columns).
        if not (writes or other.writes) or not (other.lane_set & lane_set and other.column_set & column_set):
            continue
        if other.pipe and record.pipe and other.issuer == record.issuer and other.issuer_cta == record.issuer_cta:
            ordered = True  # the tensor pipe executes one thread's MMAs / copies in issue order
            repeat = repeat and other.writes and other.lane_set == lane_set and other.column_set == column_set
        else:
            ordered = other.epoch != INF and other.epoch <= int(knowledge[other.comp])
            repeat = False
        if not ordered:
            return superseded, other, False
        if writes and _covers(record, other):
            superseded.append(other)
    return superseded, None, repeat and bool(superseded)


def _live_records(cta: Cta, first: int, last: int) -> list[AsyncOp]:
    """The live records of buckets `first`..`last`, each once, in the order of their first
    bucket: a record spans every bucket of its columns, and its tests do not depend on
    the bucket (an MMA of 256 columns after another: one record in 8 buckets, tested once)."""
    live = cta.tmem_live
    head = live[first]
    if first == last:  # (a bucket holds a record once)
        return head
    if len(head) == 1:
        only = head[0]
        for bucket in range(first + 1, last + 1):
            records = live[bucket]
            if len(records) != 1 or records[0] is not only:
                break
        else:
            return head
    seen: set[int] = set()
    found: list[AsyncOp] = []
    for bucket in range(first, last + 1):
        for other in live[bucket]:
            if id(other) not in seen:
                seen.add(id(other))
                found.append(other)
    return found


def _check_stale(warp: Warp, cta: Cta, record: AsyncOp, cells: Cells) -> None:
    """docs/semantics.md §9.12 at the level of cells (no stages needed, so it holds after lowering).

    A value a tcgen05.ld has read was handed to the epilogue. Two reads are stale:

    * a tcgen05.ld by warp W of a cell whose value W itself already read, when W completed
      an mbarrier wait since that read: W acquired a new hand-over (a `full` phase), yet
      nothing wrote the cell since (a tile committed without an MMA, K = 0). Re-reading
      a value within one hand-over (no wait in between) is fine;
    * an MMA accumulating (enable_input_d = 1) onto a cell whose value a load already
      read: the tile's first MMA adds to the previous tile's accumulator.

    What is not caught: a stale value read by a different warp than the one that read it
    before (warps w and w + 4 share a lane quarter), and a kernel that deliberately reads a
    partial accumulator and then keeps accumulating onto it is reported (no example does)."""
    if record.writes and not record.accumulates:
        return
    # (`Cta.tmem_read_columns`: no cell read by the warp, or for an MMA by any warp.)
    if record.writes:
        if not any(columns & record.column_set for columns in cta.tmem_read_columns.values()):
            return
    else:
        read, column_set = cta.tmem_read_columns, record.column_set
        if not any(read.get(key, 0) & column_set for key in _read_keys(warp.index, record.lane_set)):
            return
    reader = cta.tmem_reader[cells]
    if record.writes:
        if int(reader.max()) >= 0:  # (no temporary: the common case is none)
            stale = reader >= 0
            raise Hazard(
                "tmem-stale-accumulator",
                f"{describe(record, len(warp.cluster.ctas))} accumulates (enable_input_d = 1) onto an accumulator "
                f"a tcgen05.ld of warp {int(reader[stale][0])} already read, and nothing has written those cells "
                "since: the tile adds to the previous tile's result (its first MMA must have enable_input_d = 0)",
            )
        return
    mine = reader == warp.index
    if np.count_nonzero(mine) and np.count_nonzero(mine & (cta.tmem_read_sync[cells] < warp.acquires)):
        raise Hazard(
            "tmem-stale-accumulator",
            f"{describe(record, len(warp.cluster.ctas))} reads values this warp already read before its last "
            "mbarrier wait, and no MMA, tcgen05.st or tcgen05.cp has written those cells since: the hand-over "
            "it waited for carries no new accumulator (a tile committed without an MMA with enable_input_d = 0, "
            "K = 0)" + (f"; the warp last synchronised on {record.observed}" if record.observed else ""),
        )


def _conflict_kind(earlier: AsyncOp, later: AsyncOp) -> str:
    if not later.writes:
        return "tmem-read-before-commit"
    if not earlier.writes:
        return "release-before-wait-ld" if earlier.released_in_flight else "tmem-write-after-read"
    return "tmem-write-after-write"


def _conflict_message(earlier: AsyncOp, later: AsyncOp, size: int) -> str:
    if earlier.epoch == INF:
        state = (
            "still in flight (its tcgen05.wait has not run)"
            if not earlier.pipe
            else "still in flight (no tcgen05.commit tracking it has completed)"
        )
    else:
        done = f"completed by {earlier.completed_by}" if earlier.completed_by else "completed"
        state = f"{done}, but that completion is not ordered before the new access"
    ordering = f"; the later access's warp last synchronised on {later.observed}" if later.observed else ""
    return (
        f"{describe(later, size)} is not ordered after {describe(earlier, size)}: the earlier access is "
        f"{state}{ordering}"
    )


def check_dealloc(warp: Warp, cta: Cta, columns: tuple[int, int]) -> None:
    """Every access to the columns must be complete and ordered before the dealloc."""
    knowledge = warp.clock.vc_tc
    size = len(warp.cluster.ctas)
    for bucket in range(columns[0] // BUCKET, (columns[1] - 1) // BUCKET + 1):
        for other in cta.tmem_live[bucket]:
            if not other.column_set & span(columns[0], columns[1] - columns[0]):
                continue
            if other.epoch == INF or other.epoch > int(knowledge[other.comp]):
                raise Hazard(
                    "dealloc-while-in-use",
                    f"tcgen05.dealloc of columns {columns[0]}-{columns[1] - 1} by {warp.name} is not ordered after "
                    f"{describe(other, size)} ("
                    + ("still in flight" if other.epoch == INF else f"completed by {other.completed_by}")
                    + ")",
                    [(other.op, f"the access: {describe(other, size)}")],
                )
        cta.tmem_live[bucket] = [
            r for r in cta.tmem_live[bucket] if not r.column_set & span(columns[0], columns[1] - columns[0])
        ]
    # Freed columns are uninitialised again (a later allocation must not see this kernel's values).
    cta.tmem_written[:, columns[0] : columns[1]] = False
    cta.tmem_reader[:, columns[0] : columns[1]] = -1
    freed = span(columns[0], columns[1] - columns[0])
    cta.tmem_full &= ~freed
    _forget_readers(cta, freed)
    cta.tmem_cells((0, TMEM_LANES), columns)[:, columns[0] : columns[1]] = TMEM_POISON


def complete(record: AsyncOp, comp: int, epoch: int, by: str, step: int) -> None:
    record.comp = comp
    record.epoch = epoch
    record.completed_by = by
    record.complete_step = step
