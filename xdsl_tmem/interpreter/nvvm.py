"""`nvvm`: mbarriers, named and cluster barriers, special registers, and tcgen05.

The module-level functions are the machine actions (one per PTX behaviour); the
`NvvmFunctions` methods decode an op and call them, and the tmem dialect's
implementations call the same actions its lowering emits ops for. Per-thread
instructions (mbarrier ops, tcgen05.mma, tcgen05.commit) act once per active lane;
`.sync.aligned` ones (tcgen05.alloc/ld/st/wait, bar.sync) act once per warp and
require every live lane to be active.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import IntegerType, VectorType
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.ir import Operation

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.dialects.llvm_ext import ConstantRangeAttr
from xdsl_tmem.dialects.nvvm import BarrierReduction
from xdsl_tmem.dialects.traits import ThreadBarrier
from xdsl_tmem.dialects.utils import check_alloc_columns
from xdsl_tmem.interpreter import races
from xdsl_tmem.interpreter.executor import LOCAL, OTHER, Step, Warp, WarpFunctions, as_warp, present
from xdsl_tmem.interpreter.hazards import check_access, check_dealloc, complete, span
from xdsl_tmem.interpreter.machine import (
    OFFSET_MASK,
    RANK_SHIFT,
    TMEM_COLUMNS,
    AsyncOp,
    Blocked,
    Clock,
    Cluster,
    Cta,
    Hazard,
    MBarrier,
    NamedBarrier,
    PartialArrival,
    PendingCommit,
    Wake,
)
from xdsl_tmem.interpreter.tcgen05 import (
    DescriptorError,
    InstrDescriptor,
    LdStPlan,
    MmaPlan,
    SmemDescriptor,
    check_bounds,
    gather_into,
    gather_operand,
    gather_raw,
    ldst_plan,
    mma_plan,
    mma_product,
    product_into,
    scratch,
)
from xdsl_tmem.interpreter.values import WARP, Lanes, UnsupportedValue, Value, canonical, format_lanes, uniform

# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------


def at(value: Value, lane: int) -> int:
    """One lane's integer value."""
    return int(value[lane]) if isinstance(value, np.ndarray) else int(value)


def warp_uniform(warp: Warp, value: Value, what: str) -> int:
    """A value every active lane must agree on (TMEM addresses, column counts)."""
    if not isinstance(value, np.ndarray):
        return int(value)
    if warp.mask is warp.live and warp.full and value.ndim == 1:
        # (A Python list: for 32 lanes cheaper than comparing in numpy.)
        lanes: list[Any] = value.tolist()
        if lanes.count(lanes[0]) == len(lanes):
            return int(lanes[0])
    common = uniform(value, warp.mask)
    if common is None:
        raise Hazard(
            "non-uniform-operand",
            f"{what} must be the same in every lane of the warp; lanes {format_lanes(warp.mask)} of {warp.name} "
            f"disagree ({sorted({int(v) for v in cast(Lanes, value)[warp.mask]})[:4]}...)",
        )
    return int(common)


def thread_id(warp: Warp, lane: int) -> int:
    return warp.index * WARP + lane


# --------------------------------------------------------------------------------------
# mbarrier actions
# --------------------------------------------------------------------------------------


def mbarrier_init(
    warp: Warp, address: Value, count: Value, predicate: Value = True, op: Operation | None = None
) -> None:
    this: dict[tuple[int, int], int] = {}  # barriers this instruction initialised: their count
    for lane in warp.active_lanes():
        if not at(predicate, lane):
            continue
        cta, offset = warp.cluster.cta_of(at(address, lane))
        if offset % 8:
            raise Hazard("misaligned-mbarrier", f"mbarrier.init at shared offset 0x{offset:x}, not 8-byte aligned")
        n = at(count, lane)
        if not 1 <= n < (1 << 20):
            raise Hazard("mbarrier-count-invalid", f"mbarrier.init count must be in [1, 2^20 - 1], got {n}")
        if this.get((cta.rank, offset)) == n:
            continue  # lanes of one instruction initialising one object alike: one initialisation
        this[cta.rank, offset] = n
        old = cta.mbarriers.get(offset)
        if old is not None and old.invalidated is None:
            raise Hazard(
                "mbarrier-invalid-lifecycle",
                f"mbarrier.init by {warp.name} of mbarrier {warp.cluster.describe_barrier(at(address, lane))}, "
                f"which is a valid mbarrier object ({old.state()}): PTX ISA, mbarrier.init: initialising a valid "
                "object is undefined; mbarrier.inval it first",
            )
        bar = MBarrier(cta.rank, offset, expected=n, pending=n, init=(warp.clock.generic, warp.clock.tick()))
        bar.name = warp.cluster.describe_barrier(at(address, lane))
        cta.mbarriers[offset] = bar
        races.access(warp, op, at(address, lane), 8, write=True)
        warp.unpublished_inits.append(bar)


def mbarrier_inval(warp: Warp, address: Value, op: Operation | None = None) -> None:
    """`mbarrier.inval`: the object's life ends (PTX ISA, mbarrier.inval: any operation but
    mbarrier.init on it is then undefined). Asynchronous operations still due to arrive on
    it (transactions of its current phase, a tcgen05.commit whose ops have not completed)
    would operate on the invalidated object: `mbarrier-invalid-lifecycle` at the inval.
    Warps blocked on it wake and report the same class at their wait (`Cta.barrier`)."""
    for lane in warp.active_lanes():
        addr = at(address, lane)
        bar = use_barrier(warp, addr, "mbarrier.inval")
        where = warp.cluster.describe_barrier(addr)
        key = (bar.cta, bar.offset)
        due = [c for cta in warp.cluster.ctas for c in cta.commits if key in c.barriers]
        if bar.tx or due:
            what = (
                f"{bar.tx} transaction bytes of its current phase are still to complete on it"
                if bar.tx
                else f"the arrival of tcgen05.commit of warp {due[0].warp} lane {due[0].lane} (its MMAs have not "
                "completed) is still due"
            )
            raise Hazard(
                "mbarrier-invalid-lifecycle",
                f"mbarrier.inval by {warp.name} of mbarrier {where} while {what}: that asynchronous operation would "
                "operate on an invalidated mbarrier (PTX ISA, mbarrier.inval)",
                [(due[0].op, "the pending commit")] if due and not bar.tx and due[0].op is not None else [],
            )
        bar.invalidated = (warp.name, op)
        warp.cluster.changed()


def fence_mbarrier_init(warp: Warp) -> None:
    """`fence.mbarrier_init.release.cluster`: publishes this warp's earlier inits to the cluster."""
    stamp = (warp.clock.generic, warp.clock.tick())
    for bar in warp.unpublished_inits:
        bar.init_fence = stamp
    warp.unpublished_inits.clear()


def use_barrier(warp: Warp, address: int, what: str, knowledge: Clock | None = None) -> MBarrier:
    """The mbarrier at `address`, which `warp` may use only after its init (docs/semantics.md
    §9.15): locally, ordered after the mbarrier.init; from another CTA, ordered after a
    fence.mbarrier_init that followed it (and the cluster barrier that carries it)."""
    cluster = warp.cluster
    cta, offset = cluster.cta_of(address)
    bar = cta.barrier(offset)
    vc = warp.clock.vc if knowledge is None else knowledge
    if cta is not warp.cta:
        fence = bar.init_fence
        if fence is None or int(vc[fence[0]]) < fence[1]:
            raise Hazard(
                "remote-arrive-before-fence",
                f"{what} by {warp.name} on mbarrier {cluster.describe_barrier(address)} of CTA {cta.rank} is not "
                "ordered after a "
                "fence.mbarrier_init following its init (publish inits with fence.mbarrier_init and a cluster "
                "barrier before any remote arrive)",
            )
    elif int(vc[bar.init[0]]) < bar.init[1]:
        raise Hazard(
            "barrier-before-init",
            f"{what} by {warp.name} uses mbarrier {cluster.describe_barrier(address)}, but its mbarrier.init is not "
            "ordered before this use "
            "(no barrier synchronises the initialising thread with this warp)",
        )
    if cta.exited_at is not None:
        raise Hazard(
            "exit-with-pending-remote",
            f"{what} by {warp.name} on mbarrier {cluster.describe_barrier(address)}: CTA {cta.rank} exited at step "
            f"{cta.exited_at}",
        )
    return bar


def release_reads(warp: Warp) -> None:
    """A thread synchronisation while this warp's loads are in flight (hazard class
    release-before-wait-ld if another warp then writes the cells)."""
    for record in warp.pending_tmem:
        if not record.writes:
            record.released_in_flight = True


# The `.b64` state an arrive returns (opaque in the PTX ISA): the phases completed before
# the arrive in the low 32 bits (what test_wait compares), the pending arrival count
# before it in the high 32 bits (what mbarrier.pending_count reads: an H100 returns the
# count before the arrive, docs/silicon.md).
STATE_PHASE_MASK = 0xFFFFFFFF
STATE_PENDING_SHIFT = 32


def _state(bar: MBarrier) -> int:
    return (bar.completed & STATE_PHASE_MASK) | (bar.pending << STATE_PENDING_SHIFT)


def mbarrier_pending_count(state: Value) -> Value:
    """`mbarrier.pending_count` of a state from `mbarrier_arrive`."""
    if isinstance(state, np.ndarray):
        return (state.astype(np.uint64) >> np.uint64(STATE_PENDING_SHIFT)).astype(np.uint32)
    return (int(state) >> STATE_PENDING_SHIFT) & 0xFFFFFFFF


def mbarrier_arrive(
    warp: Warp,
    address: Value,
    count: Value = 1,
    op: Operation | None = None,
    *,
    drop: bool = False,
    no_complete: bool = False,
) -> Value:
    """Arrive from every active lane; returns the state token (`_state`). `drop`
    (`arrive_drop`) first lowers the expected count of this and every later phase by the
    count; `no_complete` (`.noComplete`) is the hazard `mbarrier-nocomplete-completes` if
    the arrive completes the phase (PTX ISA, mbarrier.arrive: undefined behaviour)."""
    lanes = warp.active_lanes()
    release_reads(warp)
    clock = warp.clock.release()

    def arrive(bar: MBarrier, n: int, who: str, since: int) -> None:
        if drop:
            bar.expected -= n  # the phase's pending count drops with the arrive itself
        before = bar.completed
        bar.arrive(n, clock, who, op, since)
        if no_complete and bar.completed != before:
            raise Hazard(
                "mbarrier-nocomplete-completes",
                f"mbarrier.arrive.noComplete by {who} completes phase {before} of mbarrier {bar.name or bar.offset}",
            )

    if not isinstance(address, np.ndarray) and not isinstance(count, np.ndarray):
        bar = use_barrier(warp, int(address), "mbarrier.arrive")
        token = _state(bar)
        arrive(bar, int(count) * len(lanes), _arrivers(warp, lanes), bar.completed)
        return token
    tokens = np.zeros(WARP, dtype=np.uint64)
    since: dict[int, int] = {}
    for lane in lanes:
        bar = use_barrier(warp, at(address, lane), "mbarrier.arrive")
        tokens[lane] = _state(bar)
        start = since.setdefault(id(bar), bar.completed)
        arrive(bar, at(count, lane), f"{warp.name} lane {lane}", start)
    return tokens


def _arrivers(warp: Warp, lanes: list[int]) -> str:
    if len(lanes) == 1:
        return f"{warp.name} lane {lanes[0]}"
    named = warp.arrivers
    if named is not None and named[0] is lanes:  # (the live lanes, the common case: named once)
        return named[1]
    name = f"{warp.name} lanes {format_lanes(warp.mask)}"
    if lanes is warp.live_lanes:
        warp.arrivers = (lanes, name)
    return name


def mbarrier_add_tx(warp: Warp, address: Value, delta: Value, sign: int) -> None:
    clock = warp.clock.release()
    for lane in warp.active_lanes():
        use_barrier(warp, at(address, lane), "mbarrier tx-count").add_tx(sign * at(delta, lane), clock)


def mbarrier_wait_reason(cluster: Cluster, address: int, parity: int) -> str:
    """Why a wait on the mbarrier at `address` for `parity` blocks, with the barrier's state
    now (a deadlock report rebuilds it: bytes may land after the warp blocked)."""
    bar = cluster.mbarrier(address)
    return f"waits on mbarrier {cluster.describe_barrier(address)} for parity {parity & 1}; barrier {bar.state()}"


def mbarrier_wait_parity(warp: Warp, address: Value, parity: Value) -> None:
    """Block until, in every active lane, the barrier's phase with parity `parity` completed;
    then acquire what that phase released."""
    varying = isinstance(address, np.ndarray) or isinstance(parity, np.ndarray)
    lanes = warp.active_lanes() if varying else [0]
    for lane in lanes:
        addr, p = at(address, lane), at(parity, lane)
        bar = use_barrier(warp, addr, "mbarrier.try_wait.parity")
        if not bar.parity_passes(p):
            raise Blocked(
                mbarrier_wait_reason(warp.cluster, addr, p),
                Wake("phase", bar.cta, bar.offset, bar.completed),
                (addr, p),
            )
    for lane in lanes:
        observe(warp, at(address, lane), at(parity, lane))


def observe(warp: Warp, address: int, parity: int) -> None:
    """A successful wait: acquire the completed phase it observed, and check that the
    waiter is at most one phase behind (docs/semantics.md §9.11, parity aliasing)."""
    cluster = warp.cluster
    cta, offset = cluster.cta_of(address)
    bar = cta.barrier(offset)
    parity &= 1
    key = (cta.rank, offset)
    seen = warp.seen_phases.get(key, 0)
    target = seen if (seen & 1) != parity else seen + 1
    if bar.completed >= target + 2:
        raise Hazard(
            "parity-aliasing",
            f"{warp.name}'s wait on mbarrier {cluster.describe_barrier(address)} for parity {parity} passes with "
            f"{bar.completed} phases completed, but it needed phase {target - 1 if target else 0} "
            f"({target} completed): the barrier is {bar.completed - target} phases ahead, so the wait passed on a "
            "later lap",
        )
    warp.seen_phases[key] = target
    warp.acquires += 1
    if bar.completed:
        warp.clock.acquire(bar.history[bar.completed - 1])
        warp.last_sync = f"mbarrier {cluster.describe_barrier(address)} phase {bar.completed - 1}"


def mbarrier_probe(warp: Warp, address: Value, state_or_phase: Value, is_state: bool) -> Value:
    """Non-blocking test: a phase parity (i32) or a state token from arrive (i64)."""
    out = np.zeros(WARP, dtype=np.bool_)
    for lane in warp.active_lanes():
        addr = at(address, lane)
        bar = use_barrier(warp, addr, "mbarrier test")
        value = at(state_or_phase, lane)
        out[lane] = bar.completed > (value & STATE_PHASE_MASK) if is_state else bar.parity_passes(value)
        if not out[lane]:
            what = f"state {value}" if is_state else f"parity {value & 1}"
            warp.poll_failed = (
                f"polls mbarrier {warp.cluster.describe_barrier(addr)} for {what} (test failed); barrier {bar.state()}"
            )
        elif bar.completed:
            warp.acquires += 1
            warp.clock.acquire(bar.history[bar.completed - 1])
    return out


# --------------------------------------------------------------------------------------
# Named and cluster barriers
# --------------------------------------------------------------------------------------


def bar_sync(
    warp: Warp, barrier_id: int, threads: int | None, arrive_only: bool = False, votes: tuple[int, int] = (0, 0)
) -> tuple[int, int]:
    """`bar.sync` / `bar.arrive` / `bar.red`: the warp counts as 32 threads (barriers are
    per warp). `votes`: the warp's (true, false) `bar.red` predicate votes. Returns the
    completed generation's votes (a `.arrive` returns (0, 0))."""
    what = "bar.arrive" if arrive_only else "bar.sync"
    warp.require_converged(f"{what} {barrier_id}")
    bar = _named(warp, what, barrier_id)
    if warp.op_state is None:
        _join_count(warp, bar, what, barrier_id, threads)
        generation = bar.generation
        release_reads(warp)
        if bar.arrive(WARP, warp.clock.release(), votes) and not arrive_only:
            return _acquire_generation(warp, bar, generation, f"named barrier {barrier_id}")
        if arrive_only:
            return (0, 0)
        warp.op_state = generation
    generation = cast(int, warp.op_state)
    if bar.generation > generation:
        return _acquire_generation(warp, bar, generation, f"named barrier {barrier_id}")
    raise Blocked(
        f"waits at named barrier {barrier_id}: {bar.arrived} of {bar.expected} threads arrived",
        Wake("named", warp.cta.rank, barrier_id, generation),
    )


def barrier_votes(warp: Warp, predicate: NDArray[np.bool_]) -> tuple[int, int]:
    """The active lanes' (true, false) `bar.red` votes (a uniform predicate is 0-d)."""
    active = int(warp.mask.sum())
    if predicate.ndim == 0:
        return (active, 0) if bool(predicate) else (0, active)
    true = int((predicate & warp.mask).sum())
    return true, active - true


def reduce_votes(reduction: BarrierReduction, votes: tuple[int, int]) -> int:
    """What `bar.red` gives every participating thread (PTX ISA 9.0, bar/barrier):
    `.popc` the number of true predicates, `.and` whether all are true, `.or` whether
    any is."""
    true, false = votes
    if reduction is BarrierReduction.POPC:
        return true
    return int(false == 0) if reduction is BarrierReduction.AND else int(true > 0)


def _named(warp: Warp, what: str, barrier_id: int) -> NamedBarrier:
    if not 0 <= barrier_id < 16:
        raise Hazard("barrier-id-invalid", f"{what}: barrier id must be in [0, 15], got {barrier_id}")
    return warp.cta.named.setdefault(barrier_id, NamedBarrier())


def _join_count(warp: Warp, bar: NamedBarrier, what: str, barrier_id: int, threads: int | None) -> None:
    """Check a warp's thread count against the barrier's, before the warp arrives."""
    expected = threads if threads is not None else len(cta_warps(warp)) * WARP
    if expected % WARP or expected <= 0:
        raise Hazard(
            "barrier-count-invalid", f"{what} {barrier_id}: thread count {expected} is not a positive multiple of 32"
        )
    if bar.arrived == 0:
        bar.expected = expected
    elif bar.expected != expected:
        raise Hazard(
            "barrier-count-mismatch",
            f"{what} {barrier_id} with {expected} threads, but warps already waiting expect {bar.expected}",
        )


def barrier_partial(
    warp: Warp, barrier_id: int, threads: int | None, arrive_only: bool, votes: tuple[int, int]
) -> tuple[int, int]:
    """A non-`.aligned` barrier executed by the warp's active lanes, which are not all its
    non-exited lanes (the others are on another path, PTX ISA 9.0, barrier: such a
    barrier may be executed divergently). The lanes' votes are added to the warp's
    partial arrival; once every non-exited lane of the warp reached the barrier (from
    any instruction), the warp arrives as a whole, as at an aligned barrier. A waiting
    path (not `.arrive`) raises `Blocked` until that arrival's generation completed, then
    gets its votes. A path that already reached the barrier (its lanes are in the record)
    is resuming: it only waits."""
    what = "barrier.arrive" if arrive_only else "barrier.sync"
    bar = _named(warp, what, barrier_id)
    mask = warp.mask
    part = bar.partial.get(warp.index)
    if part is None or not (part.lanes & mask).any():
        if part is None:
            part = bar.partial[warp.index] = PartialArrival(np.zeros(WARP, np.bool_), np.zeros(WARP, np.bool_))
        elif part.threads != threads:
            raise Hazard(
                "barrier-count-mismatch",
                f"{what} {barrier_id} in {warp.name}: lanes {format_lanes(mask)} give thread count {threads}, "
                f"lanes {format_lanes(part.lanes)} of the same warp gave {part.threads}",
            )
        part.lanes, part.threads = part.lanes | mask, threads
        part.votes = (part.votes[0] + votes[0], part.votes[1] + votes[1])
        if not arrive_only:
            part.waiting = part.waiting | mask
    if part.generation is None and bool((part.lanes | ~warp.live).all()):
        # Every non-exited lane is there (the last ones arrived now, or the missing ones exited).
        _join_count(warp, bar, what, barrier_id, part.threads)
        part.generation = bar.generation
        release_reads(warp)
        bar.arrive(WARP, warp.clock.release(), part.votes)
    if arrive_only or (part.generation is not None and bar.generation > part.generation):
        generation = part.generation
        part.waiting = part.waiting & ~mask
        if generation is not None and not part.waiting.any():
            del bar.partial[warp.index]
        if arrive_only or generation is None:
            return (0, 0)
        return _acquire_generation(warp, bar, generation, f"named barrier {barrier_id}")
    missing = warp.live & ~part.lanes
    raise Blocked(
        f"waits at named barrier {barrier_id} with lanes {format_lanes(mask)}: "
        + (
            f"lanes {format_lanes(missing)} of the warp have not reached it"
            if missing.any()
            else f"{bar.arrived} of {bar.expected} threads arrived"
        ),
        None if missing.any() else Wake("named", warp.cta.rank, barrier_id, cast(int, part.generation)),
    )


def _acquire_generation(warp: Warp, bar: NamedBarrier, generation: int, what: str) -> tuple[int, int]:
    """Acquire what generation `generation` released; its (true, false) votes."""
    warp.clock.acquire(bar.released[generation])
    warp.last_sync = f"{what} (generation {generation})"
    return bar.reduced.get(generation, (0, 0))


def cta_warps(warp: Warp) -> list[Warp]:
    return warp.cluster_warps[warp.cta.rank]


def cluster_arrive(warp: Warp, aligned: bool) -> None:
    if aligned:
        warp.require_converged("barrier.cluster.arrive.aligned")
    bar = warp.cluster.cluster_barrier
    warp.cluster_arrival = bar.generation
    release_reads(warp)
    bar.arrive(int(warp.mask.sum()), warp.clock.release())


def cluster_wait(warp: Warp, aligned: bool) -> None:
    if aligned:
        warp.require_converged("barrier.cluster.wait.aligned")
    bar = warp.cluster.cluster_barrier
    if warp.cluster_arrival is None:
        raise Hazard("cluster-wait-without-arrive", f"{warp.name} waits on the cluster barrier without arriving first")
    arrival = warp.cluster_arrival
    if bar.generation <= arrival:
        raise Blocked(
            f"waits at the cluster barrier: {bar.arrived} of {bar.expected} threads arrived",
            Wake("cluster", count=arrival),
        )
    _acquire_generation(warp, bar, arrival, "the cluster barrier")
    warp.cluster_arrival = None


def warp_sync(warp: Warp, member_mask: Value) -> None:
    """`bar.warp.sync`: every live lane of the member mask must be active."""
    member = warp_uniform(warp, member_mask, "bar.warp.sync membermask")
    wanted = ((member >> np.arange(WARP)) & 1).astype(bool) & warp.live
    if (wanted & ~warp.mask).any():
        raise Hazard(
            "divergent-sync-aligned",
            f"bar.warp.sync 0x{member:08x} in {warp.name} with only lanes {format_lanes(warp.mask)} active",
        )


def elect_one(warp: Warp, member: int) -> NDArray[np.bool_]:
    """`elect.sync`: one active lane of the member mask (PTX elects "one" thread; the
    lowest lane is our deterministic choice)."""
    candidates = warp.mask & ((member >> np.arange(WARP)) & 1).astype(bool)
    elected = np.zeros(WARP, dtype=np.bool_)
    if candidates.any():
        elected[int(np.argmax(candidates))] = True
    return elected


def mapa(warp: Warp, address: Value, rank: Value) -> Value:
    """`mapa`: the same shared offset in the CTA of rank `rank`."""
    size = len(warp.cluster.ctas)
    for lane in warp.active_lanes():
        if at(rank, lane) >= size:
            raise Hazard("out-of-bounds", f"mapa to CTA rank {at(rank, lane)} in a cluster of {size} CTAs")
    if isinstance(address, np.ndarray) or isinstance(rank, np.ndarray):
        offset = np.asarray(address, dtype=np.uint64) & np.uint64(OFFSET_MASK)
        shifted = np.asarray(rank, dtype=np.uint64) << np.uint64(RANK_SHIFT)
        return np.broadcast_to(offset | shifted, (WARP,)).copy()
    return (int(address) & OFFSET_MASK) | (int(rank) << RANK_SHIFT)


# --------------------------------------------------------------------------------------
# TMEM allocation
# --------------------------------------------------------------------------------------


@dataclass
class PairAlloc:
    """One CTA's half of a `tcgen05.alloc.cta_group::2` rendezvous."""

    rank: int
    slot: int
    ncols: int
    done: bool = False


def tmem_alloc(warp: Warp, op: Operation, slot: Value, ncols: Value, cta_group: int) -> None:
    """`tcgen05.alloc`: the lowest free, aligned column range; blocks while none is free.

    cta_group::2 is modelled as a collective of one warp in each CTA of the pair (PTX:
    "one warp from each of the peer CTAs must perform it collectively" [D]): it completes
    when both have issued it, with the same columns in both CTAs and the address written
    to each CTA's slot."""
    warp.require_converged("tcgen05.alloc")
    use_cta_group(warp, warp.cta, cta_group, "tcgen05.alloc")
    n = warp_uniform(warp, ncols, "tcgen05.alloc ncols")
    if (error := check_alloc_columns(n)) is not None:
        raise Hazard("ncols-invalid", f"tcgen05.alloc: {error}")
    address = warp_uniform(warp, slot, "tcgen05.alloc destination")
    if cta_group == 1:
        _allocate(warp, op, [(warp.cta, address)], n, "tcgen05.alloc", cta_group)
        return
    pending = warp.cluster.pair_allocs.setdefault(cta_pair(warp, 2)[0].rank, {})
    me = cast(PairAlloc | None, warp.op_state)
    if me is None:
        if warp.cta.rank in pending:
            raise Hazard(
                "mixed-cta-group",
                f"CTA {warp.cta.rank} issues a second tcgen05.alloc.cta_group::2 before its peer joined the first",
            )
        me = warp.op_state = pending[warp.cta.rank] = PairAlloc(warp.cta.rank, address, n)
    if me.done:
        races.record_write(warp, op, me.slot, 4)  # the peer wrote this CTA's slot for this warp
        return
    peer = pending.get(warp.cta.rank ^ 1)
    if peer is None:
        raise Blocked(
            f"tcgen05.alloc.cta_group::2 waits for the peer CTA {warp.cta.rank ^ 1} to join",
            Wake("pair", warp.cta.rank),
        )
    if peer.ncols != n:
        raise Hazard(
            "mixed-cta-group",
            f"tcgen05.alloc.cta_group::2 of {n} columns in CTA {warp.cta.rank}, {peer.ncols} in its peer",
        )
    ctas = warp.cluster.ctas
    targets: list[tuple[Cta, int]] = [(ctas[me.rank], me.slot), (ctas[peer.rank], peer.slot)]
    _allocate(warp, op, targets, n, "tcgen05.alloc.cta_group::2", cta_group)
    me.done = peer.done = True
    del pending[me.rank], pending[peer.rank]


def _allocate(warp: Warp, op: Operation, targets: list[tuple[Cta, int]], n: int, what: str, cta_group: int) -> None:
    """Take the same `n` columns in every target CTA and write their address to its slot."""
    for cta, _ in targets:
        if cta.allocator.relinquished:
            raise Hazard(
                "alloc-after-relinquish", f"{what} in CTA {cta.rank} after it relinquished its allocation permit"
            )
    start = next((c for c in range(0, TMEM_COLUMNS, n) if all(cta.allocator.is_free(c, n) for cta, _ in targets)), None)
    if start is None:
        used = "; ".join(
            f"CTA {cta.rank}: " + ", ".join(f"[{s}, {s + c})" for s, c in sorted(cta.allocator.allocations.items()))
            for cta, _ in targets
        )
        raise Blocked(
            f"{what} of {n} columns waits for free TMEM columns ({used})",
            Wake("columns", key=n, ctas=tuple(cta.rank for cta, _ in targets)),
        )
    for cta, slot in targets:
        cta.allocator.allocations[start] = n
        cta.alloc_sites[start] = op
        warp.cluster.read(slot, 4).view(np.uint32)[0] = start
        if cta is warp.cta:
            races.access(warp, op, slot, 4, write=True)
        else:  # recorded as the peer warp's when it resumes
            races.record_write(warp, op, slot, 4)
        if warp.cluster.keep_log:
            warp.cluster.tmem_events.append(("alloc", cta.rank, start, n, cta_group))


def tmem_dealloc(warp: Warp, taddr: Value, ncols: Value, cta_group: int) -> None:
    warp.require_converged("tcgen05.dealloc")
    use_cta_group(warp, warp.cta, cta_group, "tcgen05.dealloc")
    address = warp_uniform(warp, taddr, "tcgen05.dealloc address")
    n = warp_uniform(warp, ncols, "tcgen05.dealloc ncols")
    allocator = warp.cta.allocator
    lane, column = address >> 16, address & 0xFFFF
    if lane != 0 or allocator.allocations.get(column) != n:
        held = ", ".join(f"{c} columns at {s}" for s, c in sorted(allocator.allocations.items())) or "nothing"
        raise Hazard(
            "dealloc-invalid",
            f"tcgen05.dealloc of {n} columns at TMEM address 0x{address:x} does not match an allocation "
            f"(CTA {warp.cta.rank} holds {held})",
        )
    check_dealloc(warp, warp.cta, (column, column + n))
    del allocator.allocations[column]
    if warp.cluster.keep_log:
        warp.cluster.tmem_events.append(("dealloc", warp.cta.rank, column, n, cta_group))


def tmem_relinquish(warp: Warp, cta_group: int) -> None:
    warp.require_converged("tcgen05.relinquish_alloc_permit")
    use_cta_group(warp, warp.cta, cta_group, "tcgen05.relinquish_alloc_permit")
    warp.cta.allocator.relinquished = True


def use_cta_group(warp: Warp, cta: Cta, cta_group: int, what: str) -> None:
    """A CTA's tcgen05 operations use one cta_group (ptxas rejects a kernel mixing them;
    across function boundaries only a run can tell)."""
    if cta.cta_group is None:
        cta.cta_group = cta_group
    elif cta.cta_group != cta_group:
        raise Hazard(
            "mixed-cta-group",
            f"{what}.cta_group::{cta_group} by {warp.name} in CTA {cta.rank}, whose tcgen05 operations so far used "
            f"cta_group::{cta.cta_group}",
        )


# --------------------------------------------------------------------------------------
# TMEM loads and stores
# --------------------------------------------------------------------------------------


def tmem_rows(warp: Warp, address: int, rows: int, what: str) -> tuple[int, int]:
    """(first lane, first column) a warp's access at `address` reaches.

    A warp reaches only the 32 lanes of its quarter, 32·(warp % 4) … +31 (docs/ptx-nvvm.md
    §1.2). An address whose lane field has no quarter bits (as Mojo's epilogue uses)
    selects the warp's own quarter; one naming another quarter is a hazard."""
    lane, column = address >> 16, address & 0xFFFF
    quarter = warp.index % 4
    if lane >> 5 not in (0, quarter) or lane >= 128:
        raise Hazard(
            "lane-quarter-violation",
            f"{what} by {warp.name} (lanes {32 * quarter}-{32 * quarter + 31}) addresses TMEM lane {lane}",
        )
    offset = lane & 31
    if offset + rows > 32:
        raise Hazard(
            "lane-quarter-violation",
            f"{what} by {warp.name} reaches TMEM lanes {32 * quarter + offset}-{32 * quarter + offset + rows - 1}, "
            f"beyond its quarter {32 * quarter}-{32 * quarter + 31}",
        )
    return 32 * quarter + offset, column


def check_columns(cta: Cta, first: int, count: int, what: str) -> None:
    """[first, first + count) must lie inside one live allocation."""
    for start, n in cta.allocator.allocations.items():
        if start <= first and first + count <= start + n:
            return
    held = ", ".join(f"[{s}, {s + n})" for s, n in sorted(cta.allocator.allocations.items())) or "none"
    raise Hazard(
        "tmem-unallocated-access",
        f"{what} touches TMEM columns [{first}, {first + count}) of CTA {cta.rank}, outside its allocations ({held})",
    )


def tmem_ld(warp: Warp, op: Operation, taddr: Value, plan: LdStPlan) -> NDArray[np.uint32]:
    """`tcgen05.ld`: the (32, registers) register values (read at issue)."""
    warp.require_converged("tcgen05.ld")
    lane0, col0 = tmem_rows(warp, warp_uniform(warp, taddr, "tcgen05.ld address"), plan.rows, "tcgen05.ld")
    check_columns(warp.cta, col0, plan.columns, "tcgen05.ld")
    record = _record(warp, "ld", op, lane0, plan, col0, writes=False)
    check_access(warp, warp.cta, record, warp.clock.vc_tc)
    warp.pending_tmem.append(record)
    # The plan's offsets into a view starting at the address (cheaper than adding it to them).
    tmem = warp.cta.tmem_cells(record.lanes, record.columns)
    cells = tmem.reshape(-1)[lane0 * TMEM_COLUMNS + col0 :]
    value = cells[plan.flat]
    if plan.pack:
        value = (value & np.uint32(0xFFFF)) | ((cells[1:][plan.flat] & np.uint32(0xFFFF)) << np.uint32(16))
    return value


def tmem_st(warp: Warp, op: Operation, taddr: Value, values: NDArray[Any], plan: LdStPlan) -> None:
    """`tcgen05.st` of (32, registers) register values."""
    warp.require_converged("tcgen05.st")
    lane0, col0 = tmem_rows(warp, warp_uniform(warp, taddr, "tcgen05.st address"), plan.rows, "tcgen05.st")
    check_columns(warp.cta, col0, plan.columns, "tcgen05.st")
    record = _record(warp, "st", op, lane0, plan, col0, writes=True)
    initialise_stages(warp, col0, plan.columns)
    check_access(warp, warp.cta, record, warp.clock.vc_tc)
    warp.pending_tmem.append(record)
    cells = warp.cta.tmem_cells(record.lanes, record.columns).reshape(-1)
    index = plan.flat + (lane0 * TMEM_COLUMNS + col0)
    bits = values.astype(np.uint32, copy=False)
    if plan.pack:
        # [U] the upper 16 bits of each TMEM cell after .unpack::16b are written as 0.
        cells[index] = bits & np.uint32(0xFFFF)
        cells[index + 1] = bits >> np.uint32(16)
    else:
        cells[index] = bits


def tmem_wait(warp: Warp, kind: str) -> None:
    """`tcgen05.wait::ld` / `::st`: this warp's loads (stores) are complete."""
    warp.require_converged(f"tcgen05.wait::{kind}")
    epoch = warp.clock.tc_tick()
    still: list[AsyncOp] = []
    by = f"tcgen05.wait::{kind} of {warp.name}"
    for record in warp.pending_tmem:
        if record.kind == kind:
            complete(record, warp.clock.tc, epoch, by, warp.cluster.step)
        else:
            still.append(record)
    warp.pending_tmem = still


def _record(warp: Warp, kind: str, op: Operation, lane0: int, plan: LdStPlan, col0: int, writes: bool) -> AsyncOp:
    record = AsyncOp(
        kind=kind,
        op=op,
        cta=warp.cta.rank,
        warp=warp.index,
        lane=-1,
        issue_step=warp.cluster.step,
        lanes=(lane0, lane0 + plan.rows),
        columns=(col0, col0 + plan.columns),
        writes=writes,
        lane_set=plan.lane_set << lane0,
        column_set=plan.column_set << col0,
        issuer_cta=warp.cta.rank,
        comp=warp.clock.tc,
        observed=warp.last_sync,
    )
    if warp.cluster.keep_log:
        warp.cluster.async_log.append(record)
    return record


@cache
def _pipe_kind(name: str) -> str:
    """An async record's kind: the op's name without its dialect prefix."""
    return name.removeprefix("nvvm.tcgen05.").removeprefix("ptx.tcgen05_")


def issue_pipe(
    warp: Warp,
    op: Operation,
    cta: Cta,
    lane: int,
    lanes: tuple[int, int],
    columns: tuple[int, int],
    cells: tuple[int, int],
    accumulates: bool = False,
) -> None:
    """A tensor-pipe write (mma, cp) by `lane` into `cta`'s TMEM: checked against the live
    accesses it overlaps, then in flight until a commit of the issuing thread completes.
    `lanes` / `columns` bound the cells; `cells` is the exact (lane, column) bit sets."""
    if cta.exited_at is not None:
        raise Hazard(
            "exit-with-pending-remote",
            f"{op.name} by {warp.name} writes the TMEM of CTA {cta.rank}, which exited at step {cta.exited_at}",
        )
    check_columns(cta, columns[0], columns[1] - columns[0], op.name)
    thread = thread_id(warp, lane)
    record = AsyncOp(
        kind=_pipe_kind(op.name),
        op=op,
        cta=cta.rank,
        warp=warp.index,
        lane=lane,
        issue_step=warp.cluster.step,
        lanes=lanes,
        columns=columns,
        writes=True,
        lane_set=cells[0],
        column_set=cells[1],
        accumulates=accumulates,
        issuer_cta=warp.cta.rank,
        issuer=thread,
        pipe=True,
        comp=warp.cluster.tc_base + warp.cta.rank,
        observed=warp.last_sync,
    )
    check_access(warp, cta, record, warp.clock.vc_tc)
    if warp.cluster.keep_log:
        warp.cluster.async_log.append(record)
    warp.cta.inflight.setdefault(thread, []).append(record)
    warp.cta.issued[thread] = warp.cta.issued.get(thread, 0) + 1


# --------------------------------------------------------------------------------------
# tcgen05.mma, cp, commit
# --------------------------------------------------------------------------------------


def check_stage_accumulate(warp: Warp, op: Operation, d_col: int, columns: int, accumulate: bool) -> None:
    """docs/semantics.md §9.12 per stage instance (tmem level: the warp holds the stage it
    acquired for MMA): the first MMA into the stage after its acquisition must overwrite
    D (enable_input_d = 0); an accumulating one adds to the previous tile's result."""
    for key, hold in warp.mma_stages.items():
        if hold.first <= d_col and d_col + columns <= hold.first + hold.columns:
            if not accumulate:
                warp.mma_stages[key] = replace(hold, initialised=True)
            elif not hold.initialised:
                raise Hazard(
                    "tmem-stale-accumulator",
                    f"{op.name} by {warp.name} accumulates (enable_input_d = 1) into stage {hold.index} (columns "
                    f"{hold.first}-{hold.first + hold.columns - 1}) before any MMA overwrote it since the stage was "
                    "acquired: the tile is added to the previous tile's accumulator (the first MMA of a tile needs "
                    "enable_input_d = 0)",
                    [(hold.acquired_at, "the stage was acquired here")],
                )


def initialise_stages(warp: Warp, first: int, columns: int) -> None:
    """A tcgen05.st / cp by the warp holding a stage writes it as an initialising MMA does."""
    for key, hold in warp.mma_stages.items():
        if hold.first <= first and first + columns <= hold.first + hold.columns:
            warp.mma_stages[key] = replace(hold, initialised=True)


def cta_pair(warp: Warp, cta_group: int) -> list[Cta]:
    if cta_group == 1:
        return [warp.cta]
    ctas = warp.cluster.ctas
    even = warp.cta.rank & ~1
    if even + 1 >= len(ctas):
        raise Hazard(
            "mixed-cta-group",
            f"cta_group::2 needs a CTA pair, but CTA {warp.cta.rank} has no peer in a cluster of {len(ctas)}",
        )
    return [ctas[even], ctas[even + 1]]


@dataclass(frozen=True)
class MmaOperands:
    """The operand values of one `tcgen05.mma` (per lane, as the op's operands read)."""

    d: Value
    """The TMEM address of D."""
    a: Value
    """A: a shared-memory descriptor, or a TMEM address when `a_in_tmem`."""
    b: Value
    """B's shared-memory descriptor."""
    idesc: Value
    """The instruction descriptor."""
    enable_input_d: Value
    """Accumulate into D (else overwrite it)."""
    a_in_tmem: bool = False
    scale_input_d: Value | None = None
    disable_output_lane: Value | None = None


def tcgen05_mma(warp: Warp, op: Operation, kind: str, cta_group: int, operands: MmaOperands) -> None:
    """One MMA per active lane (normally one elected lane): compute at issue, write D,
    and leave it in flight until the issuing thread's next commit completes."""
    a = operands.a
    if cta_group == 2 and warp.cta.rank % 2:
        raise Hazard(
            "mma-from-non-leader-cta",
            f"{op.name} (cta_group::2) by {warp.name}, in the odd CTA of the pair ({warp.cta.rank - 1}, "
            f"{warp.cta.rank}): pair MMAs are issued from the leader, the even-rank CTA, "
            "whose barriers the epilogues of both CTAs arrive on (Mojo's elect_one_cta, CUTLASS's MMA leader CTA); "
            "PTX only says a single thread of the pair issues it",
        )
    for lane in warp.active_lanes():
        if operands.disable_output_lane is not None and np.asarray(operands.disable_output_lane)[lane].any():
            raise UnsupportedValue(
                "tcgen05.mma with a non-zero disable-output-lane mask is not modelled (its bit order is undocumented)",
            )
        try:
            a_value = None if operands.a_in_tmem else at(a, lane)
            plan = mma_plan(kind, cta_group, at(operands.idesc, lane), a_value, at(operands.b, lane))
        except DescriptorError as e:
            raise Hazard("descriptor-invalid", f"tcgen05.mma: {e}") from None
        idesc, a_desc, b_desc, k = plan.idesc, plan.a_desc, plan.b_desc, plan.k
        ctas = cta_pair(warp, cta_group)
        d_address = at(operands.d, lane)
        d_lane, d_col = d_address >> 16, d_address & 0xFFFF
        if d_lane not in (0, 16) or (d_lane == 16 and not (cta_group == 1 and idesc.m == 64)):
            raise Hazard(
                "descriptor-invalid",
                f"tcgen05.mma: D address 0x{d_address:x} has lane {d_lane}; only lane 0 (or 16 for M=64) is valid",
            )
        layout = plan.layout
        accumulate = bool(at(operands.enable_input_d, lane))
        scale = at(operands.scale_input_d, lane) if operands.scale_input_d is not None else 0
        # The product of an f32 rectangle from shared operands is deferred (DeferredProduct),
        # but for an accumulation scaling D (its D is needed now).
        runs = None
        if plan.in_place and a_desc is not None and not (accumulate and scale):
            runs = [c.defer_mma((d_lane, d_col, layout.rows, layout.n), accumulate, plan.form, k) for c in ctas]
        blocks: list[NDArray[np.float32]] = []
        a_parts: list[NDArray[Any]] = []
        b_full: NDArray[Any] | None = None
        if runs:
            _gather_raw(ctas, plan, [r.block(k) for r in runs])
        elif plan.in_place:
            shape = (layout.rows + idesc.n, k)
            blocks = [scratch(f"ab{v}", shape, "f4") for v in range(len(ctas))]
            _gather_in_place(ctas, operands, lane, plan, blocks)
        else:
            a_parts, b_full = _gather(ctas, operands, lane, idesc, (a_desc, b_desc), k)
        for c in ctas:
            races.check_operands(warp, op, c, plan.tiles)
        check_stage_accumulate(warp, op, d_col, layout.column_span, accumulate)
        cells = (layout.lane_set << d_lane, layout.column_set << d_col)
        for v, cta in enumerate(ctas):
            use_cta_group(warp, cta, cta_group, "tcgen05.mma")
            issue_pipe(
                warp,
                op,
                cta,
                lane,
                (d_lane, d_lane + layout.lane_span),
                (d_col, d_col + layout.column_span),
                cells,
                accumulate,
            )
            if runs:
                runs[v].extend(k)
                continue
            if plan.in_place:
                tmem = cta.tmem_cells((d_lane, d_lane + layout.rows), (d_col, d_col + layout.n))
                d = tmem[d_lane : d_lane + layout.rows, d_col : d_col + layout.n].view(np.float32)
                block = blocks[v]
                product_into(d, block[: layout.rows], block[layout.rows :], scale if accumulate else None)
                continue
            assert b_full is not None
            old = layout.read(cta.tmem, d_lane, d_col) if accumulate else None
            product = mma_product(a_parts[v], b_full, old, idesc, scale)
            layout.write(cta.tmem, d_lane, d_col, product)
        warp.cluster.mma_count += 1


Descriptors = tuple[SmemDescriptor | None, SmemDescriptor]
"""A's (None: A is in TMEM) and B's shared-memory descriptors."""


def _gather(
    ctas: list[Cta], operands: MmaOperands, lane: int, idesc: InstrDescriptor, descs: Descriptors, k: int
) -> tuple[list[NDArray[Any]], NDArray[Any]]:
    """Each CTA's A rows and all of B (the pair's B rows, CTA 0's first), decoded."""
    a_desc, b_desc = descs
    cta_group = len(ctas)
    rows_a, rows_b = idesc.m // cta_group, idesc.n // cta_group
    try:
        a_parts = [
            _tmem_operand(c, at(operands.a, lane), rows_a, k, idesc)
            if a_desc is None
            else gather_operand(c.smem, a_desc, rows_a, k, idesc.a_format, idesc.a_mn_major)
            for c in ctas
        ]
        b_parts = [gather_operand(c.smem, b_desc, rows_b, k, idesc.b_format, idesc.b_mn_major) for c in ctas]
    except DescriptorError as e:
        raise Hazard("out-of-bounds", f"tcgen05.mma: {e}") from None
    return a_parts, np.concatenate(b_parts)


def _gather_in_place(
    ctas: list[Cta], operands: MmaOperands, lane: int, plan: MmaPlan, blocks: list[NDArray[np.float32]]
) -> None:
    """`_gather` into float32 blocks (`product_into`'s operands), one per CTA of the pair:
    that CTA's A rows, then the pair's B rows (CTA 0's first), each (rows_a + n, k),
    negated where the instruction descriptor says: no temporaries of the operands' size."""
    idesc, k, rows_a, rows_b = plan.idesc, plan.k, plan.rows_a, plan.rows_b
    if plan.ab_plan is not None and plan.a_plan is not None and plan.a_desc is not None:
        smem = ctas[0].smem
        try:
            check_bounds(plan.a_plan, smem, plan.a_desc, (rows_a, k), idesc.a_format)
            check_bounds(plan.b_plan, smem, plan.b_desc, (rows_b, k), idesc.b_format)
        except DescriptorError as e:
            raise Hazard("out-of-bounds", f"tcgen05.mma: {e}") from None
        (both,) = blocks
        gather_into(smem, plan.ab_plan, idesc.a_format, both)
        _negated(both[:rows_a], idesc.negate_a)
        _negated(both[rows_a:], idesc.negate_b)
        return
    b_full = blocks[0][rows_a:]
    try:
        for v, c in enumerate(ctas):
            a_rows = blocks[v][:rows_a]
            if plan.a_desc is None or plan.a_plan is None:
                a_rows[...] = _tmem_operand(c, at(operands.a, lane), rows_a, k, idesc)
            else:
                check_bounds(plan.a_plan, c.smem, plan.a_desc, (rows_a, k), idesc.a_format)
                gather_into(c.smem, plan.a_plan, idesc.a_format, a_rows)
            _negated(a_rows, idesc.negate_a)
        for v, c in enumerate(ctas):
            check_bounds(plan.b_plan, c.smem, plan.b_desc, (rows_b, k), idesc.b_format)
            gather_into(c.smem, plan.b_plan, idesc.b_format, b_full[v * rows_b : (v + 1) * rows_b])
    except DescriptorError as e:
        raise Hazard("out-of-bounds", f"tcgen05.mma: {e}") from None
    _negated(b_full, idesc.negate_b)
    for block in blocks[1:]:
        block[rows_a:] = b_full


def _gather_raw(ctas: list[Cta], plan: MmaPlan, blocks: list[NDArray[Any]]) -> None:
    """`_gather_in_place` for a deferred product (A in shared memory): the element bits,
    undecoded (`DeferredProduct.apply` decodes and negates them)."""
    idesc, k, rows_a, rows_b = plan.idesc, plan.k, plan.rows_a, plan.rows_b
    assert plan.a_plan is not None
    assert plan.a_desc is not None
    b_full = blocks[0][rows_a:]
    try:
        if plan.ab_plan is not None:
            smem = ctas[0].smem
            check_bounds(plan.a_plan, smem, plan.a_desc, (rows_a, k), idesc.a_format)
            check_bounds(plan.b_plan, smem, plan.b_desc, (rows_b, k), idesc.b_format)
            gather_raw(smem, plan.ab_plan, blocks[0], ctas[0].smem_views)
            return
        for v, c in enumerate(ctas):
            check_bounds(plan.a_plan, c.smem, plan.a_desc, (rows_a, k), idesc.a_format)
            gather_raw(c.smem, plan.a_plan, blocks[v][:rows_a], c.smem_views)
        for v, c in enumerate(ctas):
            check_bounds(plan.b_plan, c.smem, plan.b_desc, (rows_b, k), idesc.b_format)
            gather_raw(c.smem, plan.b_plan, b_full[v * rows_b : (v + 1) * rows_b], c.smem_views)
    except DescriptorError as e:
        raise Hazard("out-of-bounds", f"tcgen05.mma: {e}") from None
    for block in blocks[1:]:
        block[rows_a:] = b_full


def _negated(values: NDArray[np.float32], negate: bool) -> NDArray[np.float32]:
    """The instruction descriptor's negate bit, in place."""
    if negate:
        np.negative(values, out=values)
    return values


def _tmem_operand(cta: Cta, address: int, rows: int, k: int, idesc: InstrDescriptor) -> NDArray[Any]:
    """A from TMEM: row m in lane m, K packed in columns at the element width [M: CUTLASS
    `tmem_frg_1sm<a_type>`; not documented in PTX]."""
    from xdsl_tmem.interpreter.tcgen05 import ELEMENT_BYTES, decode_elements

    element = ELEMENT_BYTES[idesc.a_format]
    per_cell = 4 // element
    lane0, col0 = address >> 16, address & 0xFFFF
    columns = (col0, col0 + (k + per_cell - 1) // per_cell)
    cells = cta.tmem_cells((lane0, lane0 + rows), columns)[lane0 : lane0 + rows, columns[0] : columns[1]]
    raw = np.ascontiguousarray(cells).view(np.uint8).reshape(rows, -1)[:, : k * element]
    return decode_elements(raw.reshape(rows, k, element), idesc.a_format)


def tcgen05_cp(
    warp: Warp, op: Operation, taddr: Value, desc_value: Value, shape: str, multicast: str, cta_group: int
) -> None:
    """`tcgen05.cp` of 128x256b / 128x128b (and 32x128b.warpx4): the shared-memory matrix
    the descriptor describes, read as a K-major canonical tile of 32-bit words (row i of
    the tile to lane `lane0 + i`, word w to column `col0 + w`) and copied bit for bit
    (docs/tcgen05_layouts.md §7, [M])."""
    for lane in warp.active_lanes():
        words = {"shape_128x256b": 8, "shape_128x128b": 4, "shape_32x128b": 4}.get(shape)
        if words is None or (shape == "shape_32x128b") != (multicast == "warpx4"):
            raise UnsupportedValue(
                f"tcgen05.cp {shape} {multicast} is not modelled (128x256b, 128x128b, 32x128b.warpx4 are)",
            )
        try:
            desc = SmemDescriptor.decode(at(desc_value, lane))
        except DescriptorError as e:
            raise Hazard("descriptor-invalid", f"tcgen05.cp: {e}") from None
        rows = 32 if shape == "shape_32x128b" else 128
        address = at(taddr, lane)
        lane0, col0 = address >> 16, address & 0xFFFF
        for cta in cta_pair(warp, cta_group):
            try:
                tile = gather_operand(cta.smem, desc, rows, words, "b32", mn_major=False)
            except DescriptorError as e:
                raise Hazard("out-of-bounds", f"tcgen05.cp: {e}") from None
            races.check_operand(warp, op, cta, desc, rows, words, "b32", False)
            use_cta_group(warp, cta, cta_group, "tcgen05.cp")
            issue_pipe(
                warp, op, cta, lane, (lane0, lane0 + 128), (col0, col0 + words), (span(lane0, 128), span(col0, words))
            )
            initialise_stages(warp, col0, words)
            if rows == 32:
                tile = np.tile(tile, (4, 1))  # warpx4: the 32 rows go to every lane quarter
            cta.tmem_cells((lane0, lane0 + 128), (col0, col0 + words))[lane0 : lane0 + 128, col0 : col0 + words] = tile


def tcgen05_commit(warp: Warp, op: Operation, address: Value, mask: Value | None, cta_group: int) -> None:
    """Per active lane: track that thread's async ops; the tensor core arrives (count 1)
    on the barrier — at the same offset in every CTA of `mask` for the multicast form —
    once they are complete."""
    use_cta_group(warp, warp.cta, cta_group, "tcgen05.commit")
    for lane in warp.active_lanes():
        target = at(address, lane)
        cta, offset = warp.cluster.cta_of(target)
        if mask is None:
            barriers = [(cta.rank, offset)]
        else:
            bits = at(mask, lane)
            barriers = [(rank, offset) for rank in range(16) if bits >> rank & 1]
            for rank, _ in barriers:
                if rank >= len(warp.cluster.ctas):
                    raise Hazard(
                        "out-of-bounds",
                        f"tcgen05.commit multicast mask 0x{bits:04x} names CTA {rank}; "
                        f"the cluster has {len(warp.cluster.ctas)}",
                    )
        thread = thread_id(warp, lane)
        issued = warp.cta.issued.get(thread, 0)
        for rank, off in barriers:
            use_barrier(warp, (rank << RANK_SHIFT) | off, "tcgen05.commit")
            key = (thread, rank, off)
            if warp.cta.last_commit.get(key) == issued:
                raise Hazard(
                    "duplicate-commit",
                    f"tcgen05.commit by {warp.name} lane {lane} on mbarrier "
                    f"{warp.cluster.describe_barrier((rank << RANK_SHIFT) | off)}: the thread issued no MMA or copy "
                    "since its last commit to this barrier, so the barrier gets an extra arrival and its phase runs "
                    "ahead of the work",
                )
            warp.cta.last_commit[key] = issued
        ops = warp.cta.inflight.pop(thread, [])
        for record in ops:
            record.commit_op = op
        release_reads(warp)
        warp.cta.commits.append(PendingCommit(ops, barriers, op, warp.index, lane, warp.clock.release()))


# --------------------------------------------------------------------------------------
# Implementations
# --------------------------------------------------------------------------------------


def _ld_static(op: nvvm.Tcgen05LdOp) -> tuple[LdStPlan, bool, bool]:
    """(plan with split 0, has a split operand, returns a vector)."""
    registers = nvvm.ldst_register_count(op.res.type)
    assert registers is not None  # the verifier admits only i32 and vector<N x i32>
    plan = ldst_plan(op.shape.data, registers, 0, op.pack is not None)
    return plan, op.offset is not None, isinstance(op.res.type, VectorType)


def _mma_static(op: nvvm.Tcgen05MMAOp) -> tuple[str, int, bool, bool, bool]:
    """(kind, cta_group, A in TMEM, has scale_input_d, has disable_output_lane)."""
    parts = present(op)
    a_in_tmem = not isinstance(op.matrix_a.type, IntegerType)
    kind, cta_group = op.kind.data.value, op.cta_group.as_int()
    return kind, cta_group, a_in_tmem, "scale_input_d" in parts, "disable_output_lane" in parts


def _lane_masks(shift: int, complement: bool) -> Value:
    """`%lanemask_*` (PTX ISA, special registers): the lanes below lane + `shift`, or the
    others when `complement`."""
    below = (np.uint64(1) << (np.arange(WARP, dtype=np.uint64) + np.uint64(shift))) - np.uint64(1)
    return (~below if complement else below).astype(np.uint32)


# What each special register holds in a warp (PTX ISA, "Special Registers"). Model
# choices where the ISA leaves the value to the hardware: the clocks read the cluster's
# step counter; %warpid (a volatile slot id) is the warp's index and %nwarpid (the
# slot count) the CTA's warp count; %smid and %gridid are 0, %nsmid 148 (an SM100 part).
# %is_explicit_cluster is 1 where the cluster has more than one CTA: an H100 read 1 for a
# kernel launched with a cluster dimension (docs/silicon.md, cluster_dsmem); the model does
# not tell an explicit 1x1x1 cluster from none and reads 0 there (unverified on silicon).
_PER_AXIS: dict[str, Callable[[Warp, int], Value]] = {
    "tid": lambda warp, axis: warp.thread_coords[axis].copy(),
    "ntid": lambda warp, axis: warp.launch.block[axis],
    "ctaid": lambda warp, axis: warp.cta.ctaid[axis],
    "nctaid": lambda warp, axis: warp.launch.grid[axis],
    "cluster.ctaid": lambda warp, axis: warp.cta.ctaid[axis] % warp.launch.cluster[axis],
    "cluster.nctaid": lambda warp, axis: warp.launch.cluster[axis],
    "clusterid": lambda warp, axis: warp.cta.ctaid[axis] // warp.launch.cluster[axis],
    "nclusterid": lambda warp, axis: warp.launch.grid[axis] // warp.launch.cluster[axis],
}
_SCALAR: dict[str, Callable[[Warp], Value]] = {
    "laneid": lambda warp: np.arange(WARP, dtype=np.uint32),
    "warpsize": lambda warp: WARP,
    "warpid": lambda warp: warp.index,
    "nwarpid": lambda warp: len(cta_warps(warp)),
    "cluster.ctarank": lambda warp: warp.cta.rank,
    "cluster.nctarank": lambda warp: len(warp.cluster.ctas),
    "is.explicit.cluster": lambda warp: int(len(warp.cluster.ctas) > 1),
    "lanemask.eq": lambda warp: (np.uint32(1) << np.arange(WARP, dtype=np.uint32)).astype(np.uint32),
    "lanemask.lt": lambda warp: _lane_masks(0, complement=False),
    "lanemask.le": lambda warp: _lane_masks(1, complement=False),
    "lanemask.gt": lambda warp: _lane_masks(1, complement=True),
    "lanemask.ge": lambda warp: _lane_masks(0, complement=True),
    "clock": lambda warp: warp.cluster.step,
    "clock64": lambda warp: warp.cluster.step,
    "globaltimer": lambda warp: warp.cluster.step,
    "smid": lambda warp: 0,
    "gridid": lambda warp: 0,
    "nsmid": lambda warp: 148,
}


def special_register(warp: Warp, op: Operation) -> Value:
    """The value of a `nvvm.read.ptx.sreg.*` op in this warp."""
    assert isinstance(op, nvvm.SpecialRegisterOp)
    register, axis = op.special_register()
    value = special_register_value(warp, register, axis)
    if value is None:
        raise UnsupportedValue(f"{op.name}: the special register is not modelled")
    return value


def special_register_value(warp: Warp, register: str, axis: int | None) -> Value | None:
    """The value of special register `register` (`"cluster.ctaid"`, axis 1 for y) in this
    warp, or None if it is not modelled (the NVVM and PTX levels share this table)."""
    if axis is not None and register in _PER_AXIS:
        return _PER_AXIS[register](warp, axis)
    if axis is None and register in _SCALAR:
        return _SCALAR[register](warp)
    return None


class NvvmFunctions(WarpFunctions):
    def effect(self, warp: Warp, op: Operation, values: Sequence[Value]) -> Step:
        if op.has_trait(ThreadBarrier):
            return LOCAL  # arrivals only count; a passed generation stays passed
        if values and isinstance(values[0], np.ndarray):
            return OTHER
        match op:
            case nvvm.MBarrierTryWaitParityOp():
                parity = values[1]
                return OTHER if isinstance(parity, np.ndarray) else Step("wait", (int(values[0]),), parity=int(parity))
            case nvvm.MBarrierArriveOp() if op.count is None:
                return Step("arrive", (int(values[0]),), len(warp.active_lanes()))
            case _:
                return OTHER

    # -- mbarrier -----------------------------------------------------------------------

    @impl(nvvm.MBarrierInitOp)
    def run_mbarrier_init(self, interp: Interpreter, op: nvvm.MBarrierInitOp, args: PythonValues) -> PythonValues:
        mbarrier_init(as_warp(interp), args[0], args[1], args[2] if op.predicate is not None else True, op)
        return ()

    @impl(nvvm.MBarrierInvalOp)
    def run_mbarrier_inval(self, interp: Interpreter, op: nvvm.MBarrierInvalOp, args: PythonValues) -> PythonValues:
        mbarrier_inval(as_warp(interp), args[0], op)
        return ()

    @impl(nvvm.MBarrierArriveOp)
    def run_mbarrier_arrive(self, interp: Interpreter, op: nvvm.MBarrierArriveOp, args: PythonValues) -> PythonValues:
        parts = self.static(op, present)
        token = mbarrier_arrive(as_warp(interp), args[0], args[1] if "count" in parts else 1, op)
        return (token,) if "res" in parts else ()

    @impl(nvvm.MBarrierArriveExpectTxOp)
    def run_mbarrier_arrive_expect_tx(
        self, interp: Interpreter, op: nvvm.MBarrierArriveExpectTxOp, args: PythonValues
    ) -> PythonValues:
        warp = as_warp(interp)
        parts = self.static(op, present)
        predicate = args[2] if "predicate" in parts else True
        if not (predicate.any() if isinstance(predicate, np.ndarray) else predicate):
            return (0,) if "res" in parts else ()
        mbarrier_add_tx(warp, args[0], args[1], +1)
        token = mbarrier_arrive(warp, args[0], op=op)
        return (token,) if "res" in parts else ()

    @impl(nvvm.MBarrierExpectTxOp)
    def run_mbarrier_expect_tx(
        self, interp: Interpreter, op: nvvm.MBarrierExpectTxOp, args: PythonValues
    ) -> PythonValues:
        mbarrier_add_tx(as_warp(interp), args[0], args[1], +1)
        return ()

    @impl(nvvm.MBarrierCompleteTxOp)
    def run_mbarrier_complete_tx(
        self, interp: Interpreter, op: nvvm.MBarrierCompleteTxOp, args: PythonValues
    ) -> PythonValues:
        mbarrier_add_tx(as_warp(interp), args[0], args[1], -1)
        return ()

    @impl(nvvm.MBarrierTryWaitParityOp)
    def run_mbarrier_try_wait_parity(
        self, interp: Interpreter, op: nvvm.MBarrierTryWaitParityOp, args: PythonValues
    ) -> PythonValues:
        mbarrier_wait_parity(as_warp(interp), args[0], args[1])
        return ()

    def _mbarrier_probe(
        self, interp: Interpreter, op: nvvm.MBarrierTryWaitOp | nvvm.MBarrierTestWaitOp, args: PythonValues
    ) -> PythonValues:
        """`try_wait` (which the hardware may suspend for a time) and `test_wait`, by state
        (i64) or by phase, probe alike here: neither blocks in the model."""
        is_state = cast(IntegerType, op.state_or_phase.type).width.data == 64
        return (mbarrier_probe(as_warp(interp), args[0], args[1], is_state),)

    run_mbarrier_try_wait = impl(nvvm.MBarrierTryWaitOp)(_mbarrier_probe)
    run_mbarrier_test_wait = impl(nvvm.MBarrierTestWaitOp)(_mbarrier_probe)

    # -- fences -------------------------------------------------------------------------

    @impl(nvvm.FenceMbarrierInitOp)
    def run_fence_mbarrier_init(
        self, interp: Interpreter, op: nvvm.FenceMbarrierInitOp, args: PythonValues
    ) -> PythonValues:
        fence_mbarrier_init(as_warp(interp))
        return ()

    @impl(nvvm.FenceProxyOp)
    def run_fence_proxy(self, interp: Interpreter, op: nvvm.FenceProxyOp, args: PythonValues) -> PythonValues:
        return ()

    @impl(nvvm.Tcgen05FenceOp)
    def run_tcgen05_fence(self, interp: Interpreter, op: nvvm.Tcgen05FenceOp, args: PythonValues) -> PythonValues:
        clock = as_warp(interp).clock
        if op.kind.data == nvvm.Tcgen05FenceKind.BEFORE:
            clock.fence_before()
        else:
            clock.fence_after()
        return ()

    # -- barriers -----------------------------------------------------------------------

    @impl(nvvm.Barrier0Op)
    def run_barrier0(self, interp: Interpreter, op: nvvm.Barrier0Op, args: PythonValues) -> PythonValues:
        bar_sync(as_warp(interp), 0, None)
        return ()

    @impl(nvvm.BarrierOp)
    def run_barrier(self, interp: Interpreter, op: nvvm.BarrierOp, args: PythonValues) -> PythonValues:
        values = iter(args)
        barrier_id = int(next(values)) if op.barrier_id is not None else 0
        threads = int(next(values)) if op.number_of_threads is not None else None
        warp = as_warp(interp)
        if op.reduction_op is None:
            bar_sync(warp, barrier_id, threads)
            return ()
        predicate = next(values)  # an i32: a thread votes true when it is non-zero
        votes = barrier_votes(warp, np.asarray(predicate) != 0)
        return (reduce_votes(op.reduction_op.data, bar_sync(warp, barrier_id, threads, votes=votes)),)

    @impl(nvvm.BarrierArriveOp)
    def run_barrier_arrive(self, interp: Interpreter, op: nvvm.BarrierArriveOp, args: PythonValues) -> PythonValues:
        values = iter(args)
        barrier_id = int(next(values)) if op.barrier_id is not None else 0
        bar_sync(as_warp(interp), barrier_id, int(next(values)), arrive_only=True)
        return ()

    @impl(nvvm.SyncWarpOp)
    def run_bar_warp_sync(self, interp: Interpreter, op: nvvm.SyncWarpOp, args: PythonValues) -> PythonValues:
        warp_sync(as_warp(interp), args[0])
        return ()

    @impl(nvvm.ClusterArriveOp)
    def run_cluster_arrive(self, interp: Interpreter, op: nvvm.ClusterArriveOp, args: PythonValues) -> PythonValues:
        cluster_arrive(as_warp(interp), op.aligned is not None)
        return ()

    @impl(nvvm.ClusterArriveRelaxedOp)
    def run_cluster_arrive_relaxed(
        self, interp: Interpreter, op: nvvm.ClusterArriveRelaxedOp, args: PythonValues
    ) -> PythonValues:
        cluster_arrive(as_warp(interp), op.aligned is not None)
        return ()

    @impl(nvvm.ClusterWaitOp)
    def run_cluster_wait(self, interp: Interpreter, op: nvvm.ClusterWaitOp, args: PythonValues) -> PythonValues:
        cluster_wait(as_warp(interp), op.aligned is not None)
        return ()

    # -- lanes, cluster addressing --------------------------------------------------------

    @impl(nvvm.ElectSyncOp)
    def run_elect_sync(self, interp: Interpreter, op: nvvm.ElectSyncOp, args: PythonValues) -> PythonValues:
        return (elect_one(as_warp(interp), int(args[0]) if args else 0xFFFFFFFF),)

    @impl(nvvm.MapaOp)
    def run_mapa(self, interp: Interpreter, op: nvvm.MapaOp, args: PythonValues) -> PythonValues:
        return (mapa(as_warp(interp), args[0], args[1]),)

    # -- tcgen05 --------------------------------------------------------------------------

    @impl(nvvm.Tcgen05AllocOp)
    def run_tcgen05_alloc(self, interp: Interpreter, op: nvvm.Tcgen05AllocOp, args: PythonValues) -> PythonValues:
        tmem_alloc(as_warp(interp), op, args[0], args[1], op.group.as_int())
        return ()

    @impl(nvvm.Tcgen05DeallocOp)
    def run_tcgen05_dealloc(self, interp: Interpreter, op: nvvm.Tcgen05DeallocOp, args: PythonValues) -> PythonValues:
        tmem_dealloc(as_warp(interp), args[0], args[1], op.group.as_int())
        return ()

    @impl(nvvm.Tcgen05RelinquishAllocPermitOp)
    def run_tcgen05_relinquish(
        self, interp: Interpreter, op: nvvm.Tcgen05RelinquishAllocPermitOp, args: PythonValues
    ) -> PythonValues:
        tmem_relinquish(as_warp(interp), op.group.as_int())
        return ()

    @impl(nvvm.Tcgen05LdOp)
    def run_tcgen05_ld(self, interp: Interpreter, op: nvvm.Tcgen05LdOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        plan, dynamic_split, vector = self.static(op, _ld_static)
        if dynamic_split:
            plan = ldst_plan(plan.shape, plan.registers, int(args[1]), plan.pack)
        values = tmem_ld(warp, op, args[0], plan)
        return (values if vector else values[:, 0].copy(),)

    @impl(nvvm.Tcgen05StOp)
    def run_tcgen05_st(self, interp: Interpreter, op: nvvm.Tcgen05StOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        values = np.asarray(args[1])
        if values.ndim == 0:
            values = np.full((WARP, 1), values)
        elif values.ndim == 1:
            values = values[:, None] if not isinstance(op.val.type, VectorType) else np.tile(values, (WARP, 1))
        split = int(args[2]) if op.offset is not None else 0
        tmem_st(warp, op, args[0], values, ldst_plan(op.shape.data, values.shape[1], split, op.unpack is not None))
        return ()

    @impl(nvvm.Tcgen05WaitOp)
    def run_tcgen05_wait(self, interp: Interpreter, op: nvvm.Tcgen05WaitOp, args: PythonValues) -> PythonValues:
        kind = self.static(op, lambda o: "ld" if o.kind.data == nvvm.Tcgen05WaitKind.LOAD else "st")
        tmem_wait(as_warp(interp), kind)
        return ()

    @impl(nvvm.Tcgen05MMAOp)
    def run_tcgen05_mma(self, interp: Interpreter, op: nvvm.Tcgen05MMAOp, args: PythonValues) -> PythonValues:
        d, a, b, idesc, enable_input_d, *optional = args
        kind, cta_group, a_in_tmem, has_scale, has_disable = self.static(op, _mma_static)
        scale = optional.pop(0) if has_scale else None
        disable = optional.pop(0) if has_disable else None
        operands = MmaOperands(d, a, b, idesc, enable_input_d, a_in_tmem, scale, disable)
        tcgen05_mma(as_warp(interp), op, kind, cta_group, operands)
        return ()

    @impl(nvvm.Tcgen05MmaSmemDescOp)
    def run_tcgen05_mma_smem_desc(
        self, interp: Interpreter, op: nvvm.Tcgen05MmaSmemDescOp, args: PythonValues
    ) -> PythonValues:
        """start | LBO << 16 | SBO << 32 | 1 << 46 | base << 49 | mode << 52 | swizzle << 61,
        each field masked to its width (the operands are already encoded, as upstream)."""
        warp = as_warp(interp)
        fields = ((14, 0), (14, 16), (14, 32), (3, 49), (1, 52), (3, 61))
        descriptors = np.zeros(WARP, dtype=np.uint64)
        for lane in warp.active_lanes() if any(isinstance(a, np.ndarray) for a in args) else [0]:
            value = 1 << 46
            for arg, (bits, shift) in zip(args, fields, strict=True):
                value |= (at(arg, lane) & ((1 << bits) - 1)) << shift
            descriptors[lane] = value
        if any(isinstance(a, np.ndarray) for a in args):
            return (descriptors,)
        return (int(descriptors[0]),)

    @impl(nvvm.Tcgen05CpOp)
    def run_tcgen05_cp(self, interp: Interpreter, op: nvvm.Tcgen05CpOp, args: PythonValues) -> PythonValues:
        if op.src_format is not None:
            raise UnsupportedValue("tcgen05.cp with a decompressing source format is not modelled")
        tcgen05_cp(
            as_warp(interp), op, args[0], args[1], op.shape.data.value, op.multicast.data.value, op.group.as_int()
        )
        return ()

    @impl(nvvm.Tcgen05CommitOp)
    def run_tcgen05_commit(self, interp: Interpreter, op: nvvm.Tcgen05CommitOp, args: PythonValues) -> PythonValues:
        multicast, group = self.static(op, lambda o: (o.multicast_mask is not None, o.group.as_int()))
        tcgen05_commit(as_warp(interp), op, args[0], args[1] if multicast else None, group)
        return ()

    @impl(nvvm.Tcgen05ShiftOp)
    def run_tcgen05_shift(self, interp: Interpreter, op: nvvm.Tcgen05ShiftOp, args: PythonValues) -> PythonValues:
        raise UnsupportedValue("tcgen05.shift is not modelled (its column footprint is not documented here)")


def _sreg_impl(self: NvvmFunctions, interp: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
    warp = as_warp(interp)
    value = canonical(special_register(warp, op), cast(IntegerType, op.results[0].type).width.data)
    declared = getattr(op, "range", None)
    if isinstance(declared, ConstantRangeAttr):
        # LLVM treats a value outside the declared `range` as poison: report it.
        lo, hi = declared.lower.data, declared.upper.data
        values = np.asarray(value, dtype=np.int64)[warp.live]
        outside = values[(values < lo) | (values >= hi)]
        if outside.size:
            raise Hazard(
                "range-violation",
                f"{op.name} is declared `range <{lo}, {hi}>` but {warp.name} reads {int(outside[0])} "
                "(is the launch's block size larger than the kernel declares?)",
            )
    return (value,)


# Every special-register read shares one implementation.
for _op_type in nvvm.NVVM.operations:
    if _op_type.name.startswith("nvvm.read.ptx.sreg."):
        setattr(NvvmFunctions, f"run_{_op_type.__name__}", impl(_op_type)(_sreg_impl))
register_impls(NvvmFunctions)
