"""Happens-before race detection for ordinary shared and global memory.

Every byte of shared memory and of each kernel buffer has a shadow (FastTrack style,
Flanagan & Freund, PLDI 2009): the epoch of its last write and of its last read, an
epoch being (clock component, value) packed into one int64 — the accessing warp's
ordinary-instruction component (`WarpClock.generic`) and its value at the access. A warp
knows an epoch when its vector clock has reached it (`hazards.py`: mbarrier phases, named
and cluster barriers, commits carry clocks). A write and another access of the same byte,
by different warps, where the later one does not know the earlier one, is a data race
(PTX ISA 9.0 §8.7, "Data races": conflicting accesses not ordered by causality order);
the byte's value then depends on the schedule. Reads by several warps that do not know
each other are all kept (`Shadow.readers`) until the next write.

Lanes of one warp act together in one instruction (one epoch), and a warp's program
order orders its own accesses, so accesses of one warp never race with each other.

Shared memory starts uninitialised: reading a byte no write (`st`, `mbarrier.init`, the
address `tcgen05.alloc` writes) produced is reported as `smem-read-uninitialized`. Kernel
buffers are written by the host before the launch.

The clusters of a grid run one after another here, but concurrently on the hardware
with nothing ordering them: when a new cluster starts, the earlier clusters' accesses to
global memory become `FOREIGN`, known to no warp.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from numpy.typing import NDArray

from xdsl_tmem.interpreter.machine import GLOBAL_BASE, SHARED_LIMIT, Buffer, Cluster, GlobalMemory, Hazard

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.executor import Warp

NONE = -1
"""No access recorded (for a write: never written since the launch)."""
SHARED = -2
"""Reads by several warps that do not know each other: `Shadow.readers` has them."""
FOREIGN = -3
"""An access by a cluster that ran before this one: no warp here knows it."""
_LOW = (1 << 32) - 1


class Site(NamedTuple):
    """Who made an access, for reports."""

    op: Any
    who: str


class Sites:
    """The access sites of a launch, numbered (shadows store the numbers)."""

    def __init__(self) -> None:
        self.sites: list[Site] = [Site(None, "the host")]
        self._index: dict[tuple[int, str], int] = {}

    def of(self, op: Any, who: str) -> int:
        key = (id(op), who)
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self.sites)
            self.sites.append(Site(op, who))
        return index


class Shadow:
    """The access history of one memory (a CTA's shared memory or one kernel buffer)."""

    __slots__ = ("base", "host", "read", "readers", "rsite", "write", "wsite")

    def __init__(self, size: int, base: int, host: bool):
        self.write: NDArray[np.int64] = np.full(size, NONE, dtype=np.int64)
        self.read: NDArray[np.int64] = np.full(size, NONE, dtype=np.int64)
        self.wsite: NDArray[np.int32] = np.zeros(size, dtype=np.int32)
        self.rsite: NDArray[np.int32] = np.zeros(size, dtype=np.int32)
        self.readers: dict[int, dict[int, tuple[int, int]]] = {}
        """byte → component → (value, site) of concurrent reads (where `read` is SHARED)."""
        self.base = base
        """The address of byte 0."""
        self.host = host
        """Written by the host before the launch (kernel buffers)."""

    def copy(self) -> Shadow:
        clone = Shadow.__new__(Shadow)
        clone.write, clone.read = self.write.copy(), self.read.copy()
        clone.wsite, clone.rsite = self.wsite.copy(), self.rsite.copy()
        clone.readers = {byte: dict(r) for byte, r in self.readers.items()}
        clone.base, clone.host = self.base, self.host
        return clone

    @property
    def nbytes(self) -> int:
        return self.write.nbytes + self.read.nbytes + self.wsite.nbytes + self.rsite.nbytes

    def written(self, offset: int, size: int) -> bool:
        return self.host or bool((self.write[offset : offset + size] != NONE).all())


def new_cluster(memory: GlobalMemory) -> None:
    """Another cluster of the grid starts: what earlier ones did to global memory is
    unordered with everything it does."""
    for buffer in memory.buffers:
        shadow = buffer.shadow
        shadow.write[shadow.write >= 0] = FOREIGN
        shadow.read[(shadow.read >= 0) | (shadow.read == SHARED)] = FOREIGN
        shadow.readers.clear()


# --------------------------------------------------------------------------------------
# The checks
# --------------------------------------------------------------------------------------


def locate(cluster: Cluster, address: int) -> tuple[Shadow, Buffer | None]:
    """The shadow of the memory `address` is in (already bounds-checked by the access)."""
    if address < SHARED_LIMIT:
        cta, _ = cluster.cta_of(address)
        return cta.shadow, None
    buffer, _ = cluster.memory.locate(address, 1)
    return buffer.shadow, buffer


def access(warp: Warp, op: Any, address: int, size: int, write: bool) -> None:
    """A warp-uniform access of `size` bytes at `address`."""
    shadow, _ = locate(warp.cluster, address)
    start = address - shadow.base
    check(warp, op, shadow, np.arange(start, start + size, dtype=np.int64), write)


def record_write(warp: Warp, op: Any, address: int, size: int) -> None:
    """A write made on `warp`'s behalf by the collective it takes part in (the peer's half
    of a `tcgen05.alloc.cta_group::2`): recorded as `warp`'s, not checked."""
    shadow, _ = locate(warp.cluster, address)
    start = address - shadow.base
    shadow.write[start : start + size] = (warp.clock.generic << 32) | int(warp.clock.vc[warp.clock.generic])
    shadow.wsite[start : start + size] = warp.cluster.memory.sites.of(op, warp.name)
    shadow.read[start : start + size] = NONE
    for byte in range(start, start + size):
        shadow.readers.pop(byte, None)


def check(warp: Warp, op: Any, shadow: Shadow, index: NDArray[np.int64], write: bool) -> None:
    """Check an access by `warp` of the bytes `index` of `shadow`, then record it."""
    index = index.reshape(-1)
    clock = warp.clock
    vc = clock.vc
    me = clock.generic
    stamp = (me << 32) | int(vc[me])
    last = shadow.write[index]
    if not shadow.host and (last == NONE).any():
        _uninitialised(warp, op, shadow, index, int(np.argmax(last == NONE)), write)
    unordered = (last == FOREIGN) | ((last >= 0) & (vc[last >> 32] < (last & _LOW)))
    if unordered.any():
        k = int(np.argmax(unordered))
        _race(warp, op, shadow, int(index[k]), write, int(last[k]), int(shadow.wsite[index[k]]), True)
    site = warp.cluster.memory.sites.of(op, warp.name)
    reads = shadow.read[index]
    if write:
        unordered = (reads == FOREIGN) | ((reads >= 0) & (vc[reads >> 32] < (reads & _LOW)))
        if unordered.any():
            k = int(np.argmax(unordered))
            _race(warp, op, shadow, int(index[k]), write, int(reads[k]), int(shadow.rsite[index[k]]), False)
        shared = reads == SHARED
        if shared.any():
            for byte in np.unique(index[shared]).tolist():
                for comp, (value, other) in shadow.readers.pop(byte).items():
                    if comp != me and (comp < 0 or int(vc[comp]) < value):
                        _race(
                            warp, op, shadow, byte, write, (comp << 32) | value if comp >= 0 else FOREIGN, other, False
                        )
        shadow.write[index] = stamp
        shadow.wsite[index] = site
        shadow.read[index] = NONE
        return
    # A read replaces the recorded read it knows; reads it does not know are kept.
    replace = (reads == NONE) | ((reads >= 0) & (vc[reads >> 32] >= (reads & _LOW)))
    if not replace.all():
        for byte in np.unique(index[~replace]).tolist():
            _add_reader(shadow, byte, me, int(vc[me]), site)
        index = index[replace]
    shadow.read[index] = stamp
    shadow.rsite[index] = site


def _add_reader(shadow: Shadow, byte: int, comp: int, value: int, site: int) -> None:
    readers = shadow.readers.get(byte)
    if readers is None:
        previous = int(shadow.read[byte])
        before = int(shadow.rsite[byte])
        readers = shadow.readers[byte] = {}
        if previous == FOREIGN:
            readers[-1] = (0, before)
        else:
            readers[previous >> 32] = (previous & _LOW, before)
        shadow.read[byte] = SHARED
    readers[comp] = (value, site)


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


def _uninitialised(warp: Warp, op: Any, shadow: Shadow, index: NDArray[np.int64], k: int, write: bool) -> None:
    if write:
        return
    raise Hazard(
        "smem-read-uninitialized",
        f"{_name(op)} by {warp.name} reads {_where(warp, shadow, int(index[k]))}, which nothing has written since "
        "the launch (shared memory starts with undefined contents)",
    )


def _name(op: Any) -> str:
    return op.name if op is not None and hasattr(op, "name") else "an access"


def _race(
    warp: Warp, op: Any, shadow: Shadow, byte: int, write: bool, epoch: int, site: int, earlier_writes: bool
) -> None:
    other = warp.cluster.memory.sites.sites[site]
    where = _where(warp, shadow, byte)
    kind = "global-data-race" if shadow.base >= GLOBAL_BASE else "smem-data-race"
    if epoch == FOREIGN:
        order = " in a cluster that ran earlier (the clusters of a grid run concurrently and nothing orders them)"
    else:
        order = ": no barrier, mbarrier phase or cluster barrier orders the two accesses" + (
            f" ({warp.name} last synchronised on {warp.last_sync})" if warp.last_sync else ""
        )
    raise Hazard(
        kind,
        f"{_name(op)} by {warp.name} {'writes' if write else 'reads'} {where}, which {_name(other.op)} by "
        f"{other.who} {'wrote' if earlier_writes else 'read'}{order}",
        [(other.op, f"the earlier access: {_name(other.op)} by {other.who} ({'write' if earlier_writes else 'read'})")],
    )
