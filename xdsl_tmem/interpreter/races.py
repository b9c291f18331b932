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

Shared memory starts uninitialised: reading a byte no write (`st`, `mbarrier.init`, the
address `tcgen05.alloc` writes) produced is reported as `smem-read-uninitialized`. Kernel
buffers are written by the host before the launch.

The clusters of a grid run one after another here, but concurrently on the hardware
with nothing ordering them: when a new cluster starts, the earlier clusters' accesses to
global memory become foreign (epoch `FOREIGN_EPOCH`), known to no warp.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

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
    SHARED,
    SITE_SHIFT,
    Shadow,
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


def new_cluster(memory: GlobalMemory) -> None:
    """Another cluster of the grid starts: what earlier ones did to global memory is
    unordered with everything it does (their accesses become foreign). A byte's earlier
    reads become one foreign read (`Shadow.foreign`), the first of them: the one a race
    report names; its earliest foreign read where it has one already."""
    for buffer in memory.buffers:
        shadow = buffer.shadow
        lo, hi = shadow.lo, shadow.hi  # what this cluster accessed (Shadow.touch): nothing else changed
        shadow.lo, shadow.hi = shadow.write.size, 0
        if lo >= hi:
            continue
        if shadow.write[lo:hi].any():
            write = shadow.own_write()[lo:hi]
            seen = write > SHARED
            write[seen] = (write[seen] >> SITE_SHIFT << SITE_SHIFT) | FOREIGN_EPOCH
        if not shadow.read[lo:hi].any():
            continue
        read = shadow.own_read()
        foreign = shadow.own_foreign()[lo:hi]
        for byte, reads in shadow.readers.items():
            read[byte] = reads[0]
        shadow.readers.clear()
        read = read[lo:hi]
        seen = (read > SHARED) & (foreign == NONE)
        foreign[seen] = (read[seen] >> SITE_SHIFT << SITE_SHIFT) | FOREIGN_EPOCH
        read.fill(NONE)


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


def access(warp: Warp, op: Any, address: int, size: int, write: bool) -> None:
    """A warp-uniform access of `size` bytes at `address`."""
    shadow = locate(warp.cluster, address)
    start = address - shadow.base
    check(warp, op, shadow, np.arange(start, start + size, dtype=np.int64), write)


def record_write(warp: Warp, op: Any, address: int, size: int) -> None:
    """A write made on `warp`'s behalf by the collective it takes part in (the peer's half
    of a `tcgen05.alloc.cta_group::2`): recorded as `warp`'s, not checked."""
    shadow = locate(warp.cluster, address)
    start = address - shadow.base
    shadow.own_write()[start : start + size] = _stamp(warp, op)
    shadow.own_read()[start : start + size] = NONE
    if shadow.host:
        shadow.touch(start, start + size)
    if shadow.foreign is not None:
        shadow.foreign[start : start + size] = NONE
    for byte in range(start, start + size):
        shadow.readers.pop(byte, None)


def check(warp: Warp, op: Any, shadow: Shadow, index: NDArray[np.int64], write: bool) -> None:
    """Check an access by `warp` of the bytes `index` of `shadow`, then record it. (The
    `.any()` tests skip the work for bytes nothing has accessed yet: the common case.)"""
    index = index.reshape(-1)
    shadow.touch_index(index)
    _check_last_writes(warp, op, shadow, index, write)
    if write:
        stamp = _stamp(warp, op)
        _check_reads(warp, op, shadow, index)
        shadow.own_write()[index] = stamp
    else:
        _record_read(warp, op, shadow, index)


def _check_last_writes(warp: Warp, op: Any, shadow: Shadow, index: NDArray[np.int64], write: bool) -> None:
    """An access races with a write it does not know; a read of shared memory nothing
    wrote is uninitialised."""
    last = shadow.write[index]
    if last.any():
        if not write and not shadow.host and not last.all():
            _uninitialised(warp, op, shadow, int(index[int(np.argmax(last == NONE))]))
        unordered = _unordered(warp.clock.vc, last)
        if unordered.any():
            k = int(np.argmax(unordered))
            _race(warp, op, shadow, int(index[k]), write, int(last[k]), True)
    elif not write and not shadow.host:
        _uninitialised(warp, op, shadow, int(index[0]))


def _check_reads(warp: Warp, op: Any, shadow: Shadow, index: NDArray[np.int64]) -> None:
    """A write races with the reads it does not know (the last one, or each of several
    concurrent ones); it then forgets them. An earlier cluster's read of a byte
    (`Shadow.foreign`) counts as its last read where this cluster has none, else as the
    first of several."""
    reads = shadow.read[index]
    foreign = shadow.foreign[index] if shadow.foreign is not None else None
    if foreign is not None and foreign.any():
        earlier = foreign != NONE
        reads = np.where(earlier, np.where(reads == NONE, foreign, SHARED), reads)
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
        bytes_: list[int] = np.unique(index[several]).tolist()
        for byte in bytes_:
            first = int(shadow.foreign[byte]) if foreign is not None and shadow.foreign is not None else NONE
            recorded = np.array([first] if first != NONE else shadow.readers[byte], dtype=np.int64)
            unordered = _unordered(vc, recorded)
            if unordered.any():
                _race(warp, op, shadow, byte, True, int(recorded[int(np.argmax(unordered))]), False)
        shadow.own_read()
        for byte in bytes_:
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
    unordered = _unordered(warp.clock.vc, last)
    if unordered.any():
        sites = warp.cluster.memory.sites.sites
        for k in np.flatnonzero(unordered).tolist():
            other = sites[int(last[k]) >> SITE_SHIFT].op
            if not (isinstance(other, Operation) and other.has_trait(Atomic)):
                _race(warp, op, shadow, int(index[k]), True, int(last[k]), True)
    _check_reads(warp, op, shadow, index)
    shadow.touch_index(index)
    shadow.own_write()[index] = _stamp(warp, op)


def check_lanes(warp: Warp, op: Any, shadow: Shadow, offsets: NDArray[np.int64], size: int, write: bool) -> None:
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
        check_strided(warp, op, shadow, first, lanes, stride, size, write)
        return
    check(warp, op, shadow, (offsets[:, None] + np.arange(size, dtype=np.int64)).reshape(-1), write)


def check_strided(
    warp: Warp, op: Any, shadow: Shadow, first: int, lanes: int, stride: int, size: int, write: bool
) -> None:
    """`check_lanes` of `lanes` accesses of `size` bytes at byte offsets `first + i *
    stride` (`stride >= size`: they do not overlap), given as such by the caller (a
    per-lane address that is an arithmetic progression, memory.py): the fast path, with
    `check` of the bytes where it does not apply."""
    if write or shadow.host:
        # Own (copy if shared) the array to stamp first: harmless if the fast path does
        # not apply, and its view then serves both the test and the stamping. (The
        # views of the shadow are made inline: this is the stores' hot path.)
        if write:
            mine, other = shadow.own_write() if shadow.shared_write else shadow.write, shadow.read
        else:
            mine, other = shadow.own_read() if shadow.shared_read else shadow.read, shadow.write
        shape, strides, offset = (lanes, size), (stride * 8, 8), first * 8
        target = np.ndarray(shape, np.int64, mine, offset, strides)
        foreign = shadow.foreign if write else None  # an earlier cluster's reads, which a write races with
        if (
            not np.count_nonzero(target)
            and not np.count_nonzero(np.ndarray(shape, np.int64, other, offset, strides))
            and (foreign is None or not np.count_nonzero(np.ndarray(shape, np.int64, foreign, offset, strides)))
        ):
            # As `check` for bytes without a recorded access: no write to race with or
            # to have been uninitialised (a read of a host buffer), no read to keep.
            target.fill(_stamp(warp, op))
            if shadow.host:
                shadow.touch(first, first + (lanes - 1) * stride + size)
            return
    starts = np.arange(first, first + lanes * stride, stride, dtype=np.int64)
    check(warp, op, shadow, (starts[:, None] + np.arange(size, dtype=np.int64)).reshape(-1), write)


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
    unordered = _unordered(warp.clock.vc, written)
    if unordered.any():
        k_ = int(np.argmax(unordered))
        _race(warp, op, shadow, int(index[k_]), False, int(written[k_]), True)
    stamp = _tensor_core_stamp(warp, op)
    # What the read knows: the issuing warp's clock, and the tensor core's earlier reads
    # (completed by earlier commits), so that re-reading a tile does not pile up readers.
    knows = warp.clock.vc.copy()
    comp = (stamp >> COMP_SHIFT) & COMP_MASK
    knows[comp] = max(int(knows[comp]), stamp & EPOCH_MASK)
    _record_read(warp, op, shadow, index, stamp, knows)


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
    site = cluster.memory.sites.of(op, f"the tensor core of CTA {rank} (issued by {warp.name})")
    return (site << SITE_SHIFT) | (comp << COMP_SHIFT) | epoch


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


def _uninitialised(warp: Warp, op: Any, shadow: Shadow, byte: int) -> None:
    raise Hazard(
        "smem-read-uninitialized",
        f"{_name(op)} by {warp.name} reads {_where(warp, shadow, byte)}, which nothing has written since the "
        "launch (shared memory starts with undefined contents)",
    )


def _name(op: Any) -> str:
    return op.name if op is not None and hasattr(op, "name") else "an access"


def _race(warp: Warp, op: Any, shadow: Shadow, byte: int, write: bool, packed: int, earlier_writes: bool) -> None:
    other = warp.cluster.memory.sites.sites[packed >> SITE_SHIFT]
    where = _where(warp, shadow, byte)
    kind = "global-data-race" if shadow.base >= GLOBAL_BASE else "smem-data-race"
    if packed & EPOCH_MASK == FOREIGN_EPOCH:
        order = " in a cluster that ran earlier (the clusters of a grid run concurrently and nothing orders them)"
    else:
        order = ": no barrier, mbarrier phase or cluster barrier orders the two accesses" + (
            f" ({warp.name} last synchronised on {warp.last_sync})" if warp.last_sync else ""
        )
    what = "write" if earlier_writes else "read"
    raise Hazard(
        kind,
        f"{_name(op)} by {warp.name} {'writes' if write else 'reads'} {where}, which {_name(other.op)} by "
        f"{other.who} {'wrote' if earlier_writes else 'read'}{order}",
        [(other.op, f"the earlier access: {_name(other.op)} by {other.who} ({what})")],
    )
