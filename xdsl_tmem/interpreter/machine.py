"""The Blackwell machine model: the state every warp's ops read and write.

One `Cluster` of `Cta`s. Per CTA: shared memory (bytes), TMEM (128 lanes x 512
columns of 32-bit cells), the TMEM allocator, mbarriers, named barriers and the
tensor core's queue of asynchronous work. Global memory is shared by all CTAs.

Addresses (a model choice; the hardware's shared-window encoding is not documented):

* shared::cta and shared::cluster addresses are `rank << 24 | offset`, so a CTA's
  own shared addresses are valid shared::cluster addresses (as PTX requires) and
  `mapa` only rewrites the rank bits. Mojo's `umma_arrive_leader_cta` (clear bit 24)
  works on this encoding too.
* global (and generic) addresses of kernel buffers start at `GLOBAL_BASE`.
* a TMEM address is `lane << 16 | column` (docs/ptx-nvvm.md §1.2).

The mbarrier model is docs/semantics.md §1.1: `init(n)` sets expected = pending = n,
phase bit 0; an arrive decrements pending; when pending and the tx-count are both 0
the phase completes (phase bit flips, pending = expected). `try_wait.parity(p)`
succeeds iff the phase bit != p.
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, TypeAlias, TypeVar

import numpy as np
from numpy.typing import NDArray

from xdsl_tmem.interpreter.shadow import Shadow, Sites
from xdsl_tmem.interpreter.tcgen05 import DeferredProduct, MmaForm
from xdsl_tmem.interpreter.tma import TensorMap

TMEM_LANES = 128
TMEM_COLUMNS = 512
RANK_SHIFT = 24
OFFSET_MASK = (1 << RANK_SHIFT) - 1
GLOBAL_BASE = 1 << 40
SHARED_LIMIT = 1 << 32
PARAM_BASE = 0xFF00_0000
"""The address of the kernel's parameter space (a byval parameter's address is PARAM_BASE + its
offset; at the PTX level `mov %r, param_name` gives it and `cvta.param` keeps the number, as the
model's other spaces do): 32 bits, as Triton's `mov.b32` of a parameter needs, and in no CTA's
shared-memory window (rank 255)."""
MAX_SHARED_BYTES = 232448  # 227 KiB per CTA on sm_100
INF = 1 << 62
"""The completion epoch of an access still in flight."""
TMEM_POISON = 0xFFFFFFFF
"""What an unwritten TMEM cell holds in the model: a NaN as f32, -1 as s32, so that a
result computed from uninitialised TMEM is visibly wrong (the hardware's content is
undefined: PTX's tcgen05.alloc says nothing of the content of the columns it allocates)."""
Clock: TypeAlias = NDArray[np.int64]
_T = TypeVar("_T")


def shallow_copy(value: _T) -> _T:
    """`copy.copy` of an object whose state is its `__dict__` (no slots, no `__copy__`):
    a few times cheaper than `copy.copy`'s `__reduce_ex__` protocol (state copies)."""
    clone = object.__new__(type(value))
    clone.__dict__.update(value.__dict__)
    return clone


class Hazard(Exception):
    """The program did something the hardware does not define (exit code 3).

    `kind` is a stable class name (`divergent-sync-aligned`, `out-of-bounds`, ...)."""

    def __init__(self, kind: str, message: str, related: list[tuple[Any, str]] | None = None):
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.related = related or []
        """(op, what it is) pairs the report points at besides the failing op."""


@dataclass(frozen=True)
class Wake:
    """What a blocked warp waits for, as data (machine states can be copied):
    `phase` of mbarrier (cta, offset=key) past `count` completions; `named` barrier
    (cta, id=key) past generation `count`; the `cluster` barrier past generation `count`;
    the `pair` allocation of `cta`; `columns` (key = ncols) free in every CTA of `ctas`."""

    kind: str
    cta: int = 0
    key: int = 0
    count: int = 0
    ctas: tuple[int, ...] = ()


class Blocked(Exception):
    """Raised by an op that cannot complete yet; the warp retries it later.

    An op that raises it must not have changed any state (or must record in
    `Warp.op_state` what it already did, as `bar.sync` records its arrival).
    `wake`, if given, says what the retry waits for (`Cluster.ready`); without it the
    warp retries after any change."""

    def __init__(self, reason: str, wake: Wake | None = None, wait: tuple[int, int] | None = None):
        super().__init__(reason)
        self.reason = reason
        self.wake = wake
        self.wait = wait
        """(barrier address, parity) when blocked at an mbarrier wait."""


# --------------------------------------------------------------------------------------
# Synchronisation objects
# --------------------------------------------------------------------------------------


@dataclass
class MBarrier:
    """One mbarrier object (8 bytes of shared memory)."""

    cta: int
    offset: int
    expected: int
    pending: int
    tx: int = 0
    completed: int = 0
    """Number of completed phases; the phase bit is `completed & 1`."""
    init: tuple[int, int] = (0, 0)
    """The (clock component, value) of the mbarrier.init event."""
    init_fence: tuple[int, int] | None = None
    """The fence.mbarrier_init event that publishes the init to the cluster."""
    clock: Clock | None = None
    """Everything released into the current phase."""
    history: PhaseReleases = field(default_factory=lambda: PhaseReleases())
    """The clock each completed phase released to its waiters (the latest only)."""
    commit_arrivals: int = 0
    name: str = ""
    """How reports name it (`@full_bar[1]`)."""
    arrivals: list[tuple[str, Any]] = field(default_factory=list[tuple[str, Any]])
    """(who, op) of each arrival counted into the current phase."""
    last_arrivals: list[tuple[str, Any]] = field(default_factory=list[tuple[str, Any]])
    """Those of the last completed phase (for reports)."""
    invalidated: tuple[str, Any] | None = None
    """(who, op) of the `mbarrier.inval` that ended the object's life, if one did."""

    @property
    def phase_bit(self) -> int:
        return self.completed & 1

    def arrive(
        self, count: int, clock: Clock | None = None, who: str = "", op: Any = None, since: int | None = None
    ) -> None:
        """`count` arrivals releasing `clock`. Arrivals beyond the pending count go to the
        next phase. `since`: the completed phases when the arriving instruction started,
        if its arrivals (several lanes, or a count) are unordered with each other."""
        while count > 0:
            if self.completed:
                self._check_order(clock, who, op, since, count)
            self.clock = _join(self.clock, clock)
            take = min(count, self.pending)
            self.pending -= take
            count -= take
            if take:
                self.arrivals.append((who, op))
            if self.pending == 0 and self.tx == 0:
                self.complete_phase()
            elif take == 0:
                break

    def _check_order(self, clock: Clock | None, who: str, op: Any, since: int | None, count: int) -> None:
        """An arrival counted into phase p + 1 must happen after phase p completed (its
        thread observed that phase, directly or through others). One concurrent with the
        completion was meant for phase p: the expected count is lower than the arrivals a
        phase gets, and waiters on phase p + 1 pass early some laps later."""
        previous = self.history[self.completed - 1]
        if since is not None and since < self.completed:
            why = (
                f"{count} of them land{'s' if count == 1 else ''} in phase {self.completed}, after the same "
                f"instruction's other arrivals completed phase {self.completed - 1}"
            )
        elif clock is not None and previous is not None and bool((clock < previous).any()):
            why = (
                f"they land in phase {self.completed}, but the thread is not ordered after the completion of phase "
                f"{self.completed - 1} (it did not observe it)"
            )
        else:
            return
        raise Hazard(
            "mbarrier-phase-overrun",
            f"{who or 'an arrival'} arrives on mbarrier {self.name} (expected count {self.expected}): {why}; "
            "an arrival concurrent with a phase's completion was meant for that phase, so the barrier's count is "
            "lower than the arrivals each phase gets (or the thread arrives without waiting for the phase before)",
            [
                (o, f"an arrival counted into phase {self.completed - 1}: {w}")
                for w, o in self.last_arrivals[-4:]
                if o is not None
            ],
        )

    def add_tx(self, delta: int, clock: Clock | None = None) -> None:
        self.clock = _join(self.clock, clock)
        self.tx += delta
        if self.pending == 0 and self.tx == 0:
            self.complete_phase()

    def complete_phase(self) -> None:
        self.completed += 1
        self.pending = self.expected
        self.history.append(self.clock)
        self.clock = None
        self.last_arrivals, self.arrivals = self.arrivals, []

    def copy(self) -> MBarrier:
        clone = shallow_copy(self)  # (`replace` would run `__init__` and look up the fields)
        clone.history, clone.arrivals = self.history.copy(), list(self.arrivals)
        return clone

    def parity_passes(self, parity: int) -> bool:
        return self.phase_bit != (parity & 1)

    def state(self) -> str:
        return f"phase bit {self.phase_bit} ({self.completed} completed), pending {self.pending} of {self.expected}" + (
            f", tx {self.tx}" if self.tx else ""
        )


class PhaseReleases:
    """What each completed phase of an mbarrier released, indexed by phase. A wait passes
    on the latest completed phase and acquires what it released, so only that one is
    kept: a list of every phase would grow with the run. Asking for an older phase is an
    error, not a silent answer."""

    __slots__ = ("count", "last")

    def __init__(self, count: int = 0, last: Clock | None = None):
        self.count = count
        self.last = last

    def append(self, clock: Clock | None) -> None:
        self.count += 1
        self.last = clock

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, phase: int) -> Clock | None:
        if phase < 0:
            phase += self.count
        if phase != self.count - 1:
            raise IndexError(f"phase {phase}: only the latest completed phase ({self.count - 1}) is kept")
        return self.last

    def copy(self) -> PhaseReleases:
        return PhaseReleases(self.count, self.last)


@dataclass
class NamedBarrier:
    """`bar.sync` / `bar.arrive` / `bar.red` barrier `id` of one CTA; counts threads in
    warps of 32. `bar.red` arrivals carry predicate votes: each generation's count of
    true and false votes is kept for its waiters (PTX ISA 9.0, bar/barrier: every
    participating thread gets the reduction over all of them)."""

    expected: int = 0
    arrived: int = 0
    generation: int = 0
    clock: Clock | None = None
    released: dict[int, Clock | None] = field(default_factory=dict[int, Clock | None])
    """Generation → the clock its completion released."""
    votes: tuple[int, int] = (0, 0)
    """(true, false) predicate votes of the current generation's `bar.red` arrivals."""
    reduced: dict[int, tuple[int, int]] = field(default_factory=dict[int, tuple[int, int]])
    """Generation → its (true, false) votes."""
    partial: dict[int, PartialArrival] = field(default_factory=dict[int, "PartialArrival"])
    """Warp index → the lanes of that warp that reached this (non-`.aligned`) barrier so
    far, while the others have not (nvvm.py `barrier_partial`)."""

    def copy(self) -> NamedBarrier:
        clone = shallow_copy(self)
        clone.released, clone.reduced = dict(self.released), dict(self.reduced)
        clone.partial = {w: shallow_copy(p) for w, p in self.partial.items()}
        return clone

    def arrive(self, threads: int, clock: Clock | None, votes: tuple[int, int] = (0, 0)) -> bool:
        """Count `threads` (with their predicate votes); True when this arrival completes
        the generation."""
        self.clock = _join(self.clock, clock)
        self.arrived += threads
        self.votes = (self.votes[0] + votes[0], self.votes[1] + votes[1])
        if self.arrived < self.expected:
            return False
        self.released[self.generation] = self.clock
        self.reduced[self.generation] = self.votes
        self.generation += 1
        self.arrived = 0
        self.clock = None
        self.votes = (0, 0)
        return True


@dataclass
class PartialArrival:
    """A non-`.aligned` barrier reached by some lanes of a warp (the others are on another
    path): the warp arrives once all its non-exited lanes reached it (PTX ISA 9.0,
    barrier: the executing thread waits for all non-exited threads of its warp, and the
    warp's arrival is marked)."""

    lanes: NDArray[np.bool_]
    """Lanes that reached the barrier."""
    waiting: NDArray[np.bool_]
    """Those of them that wait for the generation (`barrier.sync`/`.red`, not `.arrive`)."""
    votes: tuple[int, int] = (0, 0)
    threads: int | None = None
    """The thread count the lanes gave (all must give the same)."""
    generation: int | None = None
    """The generation the warp's arrival joined; None until every lane reached the barrier."""


def _join(clock: Clock | None, other: Clock | None) -> Clock | None:
    if other is None:
        return clock
    if clock is None:
        return other.copy()
    return np.maximum(clock, other)


@dataclass
class TmemAllocator:
    """Column allocator of one CTA's TMEM (docs/ptx-nvvm.md §1.3)."""

    allocations: dict[int, int] = field(default_factory=dict[int, int])
    """start column → number of columns."""
    relinquished: bool = False

    def copy(self) -> TmemAllocator:
        return TmemAllocator(dict(self.allocations), self.relinquished)

    def is_free(self, start: int, ncols: int) -> bool:
        return all(start + ncols <= s or s + n <= start for s, n in self.allocations.items())


@dataclass(slots=True)
class AsyncOp:
    """An asynchronous tcgen05 operation (mma, cp, shift) in flight until its commit completes;
    or a tcgen05.ld / st in flight until the issuing thread's wait::ld / wait::st."""

    kind: str
    op: Any
    cta: int
    warp: int
    lane: int
    issue_step: int
    lanes: tuple[int, int]
    """Bounding range [start, end) of the TMEM lanes touched (reports, timelines)."""
    columns: tuple[int, int]
    """Bounding range [start, end) of the TMEM columns touched."""
    writes: bool
    lane_set: int = 0
    """The exact lanes touched, as a bit set (bit i: lane i); the cells are lane_set x column_set."""
    column_set: int = 0
    """The exact columns touched, as a bit set."""
    accumulates: bool = False
    """An MMA with enable_input_d: it also reads its D cells."""
    issuer_cta: int = 0
    issuer: int = -1
    """Issuing thread (CTA-relative) of a tensor-pipe op (mma, cp); -1 for ld / st."""
    pipe: bool = False
    comp: int = -1
    """The clock component of the event that completes the access."""
    epoch: int = INF
    """Its value; INF while the access is in flight."""
    complete_step: int | None = None
    completed_by: str = ""
    commit_op: Any = None
    released_in_flight: bool = False
    """A load whose warp released (arrived, synced) before its wait::ld."""
    observed: str = ""
    """The issuing warp's last synchronisation, for reports."""


@dataclass(frozen=True)
class StageHold:
    """An accumulator stage an MMA warp acquired (tmem level): until it commits the stage,
    whether an MMA (or tcgen05.st / cp) has overwritten it since (docs/semantics.md §9.12)."""

    index: int
    first: int
    """First TMEM column of the stage."""
    columns: int
    acquired_at: Any
    """The op that acquired it (for reports)."""
    initialised: bool = False


@dataclass
class PendingCommit:
    """A `tcgen05.commit` waiting for the tensor core to finish the ops it tracks."""

    ops: list[AsyncOp]
    barriers: list[tuple[int, int]]
    """(cta rank, barrier offset) to arrive on once the ops are complete."""
    op: Any
    warp: int
    lane: int
    clock: Clock | None = None
    """What the committing warp released."""


def _copy_commit(commit: PendingCommit, ops: list[AsyncOp]) -> PendingCommit:
    """`replace(commit, ops=ops)` without `replace`'s field look-ups (state copies)."""
    clone = shallow_copy(commit)
    clone.ops = ops
    return clone


# --------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------


@dataclass
class Buffer:
    name: str
    base: int
    data: NDArray[np.uint8]
    shadow: Shadow
    """Its access history (races.py)."""
    views: dict[np.dtype[Any], NDArray[Any]] = field(default_factory=dict[np.dtype[Any], NDArray[Any]])
    """`data` viewed as whole elements of a dtype (for aligned accesses)."""


class GlobalMemory:
    """Kernel buffers at distinct, 256-byte-aligned addresses from `GLOBAL_BASE`."""

    def __init__(self) -> None:
        self.buffers: list[Buffer] = []
        self._next = GLOBAL_BASE
        self.sites = Sites()
        """Every memory access site of the launch (shared by copies: it only grows)."""
        self.tensor_maps: dict[int, TensorMap] = {}
        """The tensor-map parameters the launch describes, by offset from PARAM_BASE (fixed
        for the launch: copies share it)."""

    def copy(self) -> GlobalMemory:
        clone = GlobalMemory()
        clone.buffers = [Buffer(b.name, b.base, b.data.copy(), b.shadow.copy()) for b in self.buffers]
        clone._next = self._next
        clone.sites = self.sites
        clone.tensor_maps = self.tensor_maps
        return clone

    def add(self, name: str, array: NDArray[Any]) -> int:
        data = np.ascontiguousarray(array).view(np.uint8).reshape(-1)
        base = self._next
        self.buffers.append(Buffer(name, base, data, Shadow(data.size, base, host=True)))
        self._next = (base + max(data.size, 1) + 255) // 256 * 256 + 256
        return base

    def locate(self, address: int, size: int) -> tuple[Buffer, int]:
        for buffer in self.buffers:
            if buffer.base <= address and address + size <= buffer.base + buffer.data.size:
                return buffer, address - buffer.base
        raise Hazard(
            "out-of-bounds",
            f"global access of {size} bytes at 0x{address:x} is outside every kernel buffer ("
            + ", ".join(f"{b.name}: 0x{b.base:x}+{b.data.size}" for b in self.buffers)
            + ")",
        )


@dataclass
class SharedLayout:
    """Where each `llvm.mlir.global` of address space 3 lives: declaration order, aligned."""

    symbols: dict[str, tuple[int, int]] = field(default_factory=dict[str, tuple[int, int]])
    """name → (offset, size)."""
    size: int = 0

    def add(self, name: str, size: int, alignment: int) -> None:
        offset = (self.size + alignment - 1) // alignment * alignment
        self.symbols[name] = (offset, size)
        self.size = offset + size

    def add_dynamic(self, names: Sequence[tuple[str, int]], size: int) -> None:
        """The launch's dynamic shared memory of `size` bytes: every extern array `names`
        (name, alignment) starts at one address after the static variables (CUDA Programming
        Guide, "Shared Memory": all extern shared arrays start at the same address)."""
        if not names:
            return
        align = max(a for _, a in names)
        start = (self.size + align - 1) // align * align
        for name, _ in names:
            self.symbols[name] = (start, size)
        self.size = start + size

    def describe(self, offset: int) -> str:
        """`@full_bar[1]` style name of an 8-byte slot (for barrier diagnostics)."""
        for name, (start, size) in self.symbols.items():
            if start <= offset < start + size:
                index, rest = divmod(offset - start, 8)
                suffix = f"[{index}]" if size > 8 else ""
                return f"@{name}{suffix}" + (f"+{rest}" if rest else "")
        return f"shared+0x{offset:x}"


# --------------------------------------------------------------------------------------
# CTA and cluster
# --------------------------------------------------------------------------------------


_ASYNC_FIELDS = attrgetter(*AsyncOp.__slots__)
"""`AsyncOp`'s fields in `__init__` order (a slots dataclass: `__slots__` lists them so)."""


class Memo:
    """Copies of the mutable objects several parts of a machine state share (access
    records, mbarriers, pair allocations), made once each while copying the state."""

    def __init__(self) -> None:
        self._copies: dict[int, Any] = {}

    def copy(self, value: _T, make: Callable[[_T], _T] = _copy.copy) -> _T:
        clone = self._copies.get(id(value))
        if clone is None:
            clone = self._copies[id(value)] = make(value)
        return clone

    def record(self, value: AsyncOp) -> AsyncOp:
        """`copy` of an access record, without `copy.copy`'s `__reduce_ex__` protocol (tens
        of records per state copy)."""
        clone = self._copies.get(id(value))
        if clone is None:
            clone = self._copies[id(value)] = AsyncOp(*_ASYNC_FIELDS(value))
        return clone


class Cta:
    """One CTA's on-chip state."""

    def __init__(self, rank: int, ctaid: tuple[int, int, int], layout: SharedLayout):
        self.rank = rank
        self.ctaid = ctaid
        self.layout = layout
        # Contents are undefined until written: the shadow reports such reads; the zeros
        # only make runs reproducible.
        self.smem = np.zeros(max(layout.size, 1), dtype=np.uint8)
        self.shadow = Shadow(self.smem.size, rank << RANK_SHIFT, host=False)
        """Who accessed each byte of shared memory (races.py)."""
        self.smem_views: dict[np.dtype[Any], NDArray[Any]] = {}
        self._tmem = np.full((TMEM_LANES, TMEM_COLUMNS), TMEM_POISON, dtype=np.uint32)
        self.deferred: DeferredProduct | None = None
        """The MMA run whose product is not in `_tmem` yet (at most one: `defer_mma`)."""
        self.allocator = TmemAllocator()
        self.mbarriers: dict[int, MBarrier] = {}
        self.named: dict[int, NamedBarrier] = {}
        self.inflight: dict[int, list[AsyncOp]] = {}
        """thread id → its async tcgen05 ops not yet tracked by a commit."""
        self.issued: dict[int, int] = {}
        """thread id → number of async tcgen05 ops it issued."""
        self.last_commit: dict[tuple[int, int, int], int] = {}
        """(thread, target CTA, barrier offset) → `issued` at that thread's last commit to it."""
        self.commits: list[PendingCommit] = []
        self.tmem_written = np.zeros((TMEM_LANES, TMEM_COLUMNS), dtype=np.bool_)
        """Cells some write produced since they were allocated (reading others is a hazard)."""
        self.tmem_reader = np.full((TMEM_LANES, TMEM_COLUMNS), -1, dtype=np.int8)
        """Per cell: the warp whose tcgen05.ld last read the value the cell holds, or -1 if no
        load read it since it was written (the stale-accumulator check, hazards.py)."""
        self.tmem_read_sync = np.zeros((TMEM_LANES, TMEM_COLUMNS), dtype=np.int32)
        """Per cell: that reader's `Warp.acquires` at the read."""
        self.tmem_full = 0
        """Columns (a bit set) whose every lane some write produced since their allocation
        (`tmem_written` there is all True): hazards.py reads none of their cells' flags."""
        self.tmem_read_columns: dict[int, int] = {}
        """Warp index x 8 + block of 16 lanes (`hazards._read_keys`) → the columns (a bit set) where `tmem_reader` of
        those lanes may name that warp (a superset: where it names none, the
        stale-accumulator check reads no cell)."""
        self.tmem_live: list[list[AsyncOp]] = [[] for _ in range(TMEM_COLUMNS // 32)]
        """Live TMEM accesses by 32-column bucket (hazards.py)."""
        self.cta_group: int | None = None
        """The cta_group of the CTA's tcgen05 operations (one per kernel, as ptxas requires)."""
        self.exited_at: int | None = None
        self.alloc_sites: dict[int, Any] = {}
        """First column → the op that allocated it (for missing-dealloc reports)."""
        """The step at which the CTA's last warp exited."""

    def copy(self, memo: Memo) -> Cta:
        clone = _copy.copy(self)
        clone.smem, clone.smem_views = self.smem.copy(), {}
        clone.shadow = self.shadow.copy()
        # The deferred run copied, not applied: which MMAs form a run must not depend on
        # where an exploration copies the state.
        clone._tmem = self._tmem.copy()
        clone.deferred = None if self.deferred is None else self.deferred.copy()
        clone.tmem_written = self.tmem_written.copy()
        clone.tmem_reader, clone.tmem_read_sync = self.tmem_reader.copy(), self.tmem_read_sync.copy()
        clone.tmem_read_columns = dict(self.tmem_read_columns)
        clone.allocator = self.allocator.copy()
        clone.mbarriers = {offset: memo.copy(bar, MBarrier.copy) for offset, bar in self.mbarriers.items()}
        clone.named = {i: bar.copy() for i, bar in self.named.items()}
        record = memo.record
        clone.inflight = {t: [record(r) for r in records] for t, records in self.inflight.items()}
        clone.issued, clone.last_commit = dict(self.issued), dict(self.last_commit)
        clone.commits = [_copy_commit(commit, [record(r) for r in commit.ops]) for commit in self.commits]
        clone.tmem_live = [[record(r) for r in bucket] if bucket else [] for bucket in self.tmem_live]
        clone.alloc_sites = dict(self.alloc_sites)
        return clone

    def release(self) -> None:
        """Free this copy's memories now (`Cluster.release`)."""
        empty = np.zeros(0, dtype=np.uint8)
        self.smem, self.smem_views, self.deferred = empty, {}, None
        self._tmem, self.tmem_written = np.zeros((0, 0), np.uint32), np.zeros((0, 0), np.bool_)
        self.tmem_reader, self.tmem_read_sync = np.zeros((0, 0), np.int8), np.zeros((0, 0), np.int32)
        self.shadow.drop()

    @property
    def tmem(self) -> NDArray[np.uint32]:
        """The TMEM cells (lanes x columns), with the deferred MMA product in them: every
        read or write of TMEM goes through this or `tmem_cells`."""
        self.settle()
        return self._tmem

    def tmem_cells(self, lanes: tuple[int, int], columns: tuple[int, int]) -> NDArray[np.uint32]:
        """`tmem` for an access within lanes x columns: the deferred product is computed
        only if its rectangle overlaps them (an access elsewhere leaves the run growing)."""
        run = self.deferred
        if run is not None and run.overlaps(lanes, columns):
            self.settle()
        return self._tmem

    def settle(self) -> None:
        """Compute the deferred MMA product into TMEM."""
        run, self.deferred = self.deferred, None
        if run is not None:
            run.apply(self._tmem)

    def defer_mma(self, d: tuple[int, int, int, int], accumulate: bool, form: MmaForm, k: int) -> DeferredProduct:
        """The run an MMA into the f32 rectangle d = (lane0, col0, rows, n) of this form and
        K `k` joins (`DeferredProduct`): the current one if the MMA accumulates into its
        rectangle and it has room, else a new one, the current one's product computed first."""
        run = self.deferred
        if run is not None and accumulate and run.matches(*d, form, k):
            return run
        self.settle()
        run = self.deferred = DeferredProduct(*d, accumulate, form)
        return run

    @property
    def tmem_nbytes(self) -> int:
        """The memory TMEM takes, the deferred run's operands included."""
        return self._tmem.nbytes + (0 if self.deferred is None else self.deferred.nbytes)

    def barrier(self, offset: int) -> MBarrier:
        bar = self.mbarriers.get(offset)
        if bar is None:
            raise Hazard(
                "barrier-before-init",
                f"mbarrier {self.describe(offset)} of CTA {self.rank} is used before mbarrier.init",
            )
        if bar.invalidated is not None:
            who, op = bar.invalidated
            raise Hazard(
                "mbarrier-invalid-lifecycle",
                f"mbarrier {self.describe(offset)} of CTA {self.rank} is used after {who} invalidated it (PTX ISA, "
                "mbarrier.inval: any mbarrier operation but mbarrier.init on an invalidated object is undefined)",
                [(op, "the mbarrier.inval")] if op is not None else [],
            )
        return bar

    def describe(self, offset: int) -> str:
        return self.layout.describe(offset)

    def shared_slice(self, offset: int, size: int) -> NDArray[np.uint8]:
        if offset < 0 or offset + size > self.smem.size:
            raise Hazard(
                "out-of-bounds",
                f"shared access of {size} bytes at offset 0x{offset:x} of CTA {self.rank} is outside its "
                f"{self.layout.size} bytes of shared memory",
            )
        return self.smem[offset : offset + size]


class Cluster:
    """The CTAs that run together, and global memory."""

    def __init__(self, ctas: list[Cta], memory: GlobalMemory, total_threads: int):
        self.ctas = ctas
        self.memory = memory
        self.version = 0
        """Bumped by every change another warp could be waiting for."""
        self.cluster_barrier = NamedBarrier(expected=total_threads)
        self.keep_log = True
        """Keep `async_log` and `tmem_events` (reports and timelines only; they grow with the run)."""
        self.replayable = True
        """Keep what a copy of the warps needs (`GenFrame.sent`, one entry per loop iteration)."""
        self.async_log: list[AsyncOp] = []
        """Every asynchronous tcgen05 operation with its in-flight interval (steps), if `keep_log`."""
        self.tmem_events: list[tuple[str, int, int, int, int]] = []
        """(alloc | dealloc, CTA rank, first column, columns, cta_group) in order, if `keep_log`."""
        self.mma_count = 0
        self.clock_size = 0
        self.tc_base = 0
        """Clock component of CTA 0's tensor core (hazards.py); set by the launcher."""
        self.tc_count = [0] * len(ctas)
        self.pair_allocs: dict[int, dict[int, Any]] = {}
        """Even CTA rank → the pair's pending cta_group::2 allocations by rank."""
        self.step = 0
        self.on_stage: Callable[[int, int, int, str], None] | None = None
        """Told (CTA rank, ring barriers, stage, event) about each output-ring stage hand-over
        at the tmem level: `producer` / `consumer` acquired it, `commit`, `release` (trace.py)."""

    def changed(self) -> None:
        self.version += 1

    def copy(self, memo: Memo) -> Cluster:
        """An independent copy of the state (for schedule exploration)."""
        clone = _copy.copy(self)
        clone.ctas = [cta.copy(memo) for cta in self.ctas]
        clone.memory = self.memory.copy()
        clone.cluster_barrier = self.cluster_barrier.copy()
        clone.async_log, clone.tmem_events = list(self.async_log), list(self.tmem_events)  # reports only
        clone.tc_count = list(self.tc_count)
        clone.pair_allocs = {
            even: {rank: memo.copy(p) for rank, p in pending.items()} for even, pending in self.pair_allocs.items()
        }
        return clone

    def release(self) -> None:
        """Free the memories (shared, TMEM, global, their shadows) of a copy nothing will
        run or read again (a state exhaustive exploration met before), now: the cycles
        between a state's parts (warps and their generators, the cluster's warps by CTA)
        keep a dropped copy until the garbage collector's next full collection, and the
        copies it shares access histories with (`Shadow.copy`) may then own them without
        copying."""
        for cta in self.ctas:
            cta.release()
        for buffer in self.memory.buffers:
            buffer.data, buffer.views = np.zeros(0, dtype=np.uint8), {}
            buffer.shadow.drop()

    def ready(self, wake: Wake) -> bool:
        """Whether what a blocked warp waits for (its `Blocked.wake`) may have happened."""
        match wake.kind:
            case "phase":
                bar = self.ctas[wake.cta].mbarriers.get(wake.key)
                return bar is None or bar.invalidated is not None or bar.completed != wake.count
            case "named":
                return self.ctas[wake.cta].named[wake.key].generation > wake.count
            case "cluster":
                return self.cluster_barrier.generation > wake.count
            case "pair":
                pending = self.pair_allocs.get(wake.cta & ~1, {})
                return wake.cta not in pending or (wake.cta ^ 1) in pending
            case _:  # "columns": ncols free at the same start in every CTA of `ctas`
                return any(
                    all(self.ctas[r].allocator.is_free(start, wake.key) for r in wake.ctas)
                    for start in range(0, TMEM_COLUMNS, wake.key)
                )

    def cta_of(self, address: int) -> tuple[Cta, int]:
        """The CTA and offset a shared::cluster address refers to."""
        rank = address >> RANK_SHIFT
        if rank >= len(self.ctas) or address >= SHARED_LIMIT:
            raise Hazard(
                "out-of-bounds",
                f"shared::cluster address 0x{address:x} names CTA rank {rank}, but the cluster has "
                f"{len(self.ctas)} CTA(s)",
            )
        return self.ctas[rank], address & OFFSET_MASK

    def mbarrier(self, address: int) -> MBarrier:
        cta, offset = self.cta_of(address)
        return cta.barrier(offset)

    def describe_barrier(self, address: int) -> str:
        cta, offset = self.cta_of(address)
        where = cta.describe(offset)
        return where if len(self.ctas) == 1 else f"{where} of CTA {cta.rank}"

    def read(self, address: int, size: int) -> NDArray[np.uint8]:
        """`size` bytes at a generic, shared or global address (a view)."""
        if address < SHARED_LIMIT:
            cta, offset = self.cta_of(address)
            return cta.shared_slice(offset, size)
        buffer, offset = self.memory.locate(address, size)
        return buffer.data[offset : offset + size]

    def complete_commit(self, cta: Cta) -> None:
        """The tensor core finishes the oldest pending commit's ops (in issue order) and
        arrives, releasing the committing warp's clock and this completion."""
        commit = cta.commits.pop(0)
        comp = self.tc_base + cta.rank
        self.tc_count[cta.rank] += 1
        epoch = self.tc_count[cta.rank]
        name = commit.op.name if commit.op is not None else "tcgen05.commit"
        for record in commit.ops:
            record.comp, record.epoch, record.complete_step = comp, epoch, self.step
            record.completed_by = f"{name} of warp {commit.warp} lane {commit.lane}"
        clock = np.zeros(self.clock_size, dtype=np.int64) if commit.clock is None else commit.clock.copy()
        clock[comp] = max(int(clock[comp]), epoch)
        for rank, offset in commit.barriers:
            target = self.ctas[rank]
            if target.exited_at is not None:
                raise Hazard(
                    "exit-with-pending-remote",
                    f"the commit's arrival on mbarrier {target.describe(offset)} of CTA {rank} comes after that CTA "
                    f"exited (step {target.exited_at})",
                )
            bar = target.barrier(offset)
            bar.commit_arrivals += 1
            bar.arrive(1, clock, f"{name} of warp {commit.warp} lane {commit.lane}", commit.op)
        self.changed()
