"""Unit tests of the interpreter's machine model against independent expectations.

Every expected value here comes from the documentation (the spec's mbarrier model, the
PTX rules in docs/ptx-nvvm.md, the TVM / CUTLASS layout tables written out in
`gemm_reference`), from numpy / ml_dtypes arithmetic, or from plain Python integers;
never from running the code under test. Two ways in:

* tiny kernels run with `run_kernel` (`kernel(...)` wraps a body in `llvm.func @k`);
* the machine actions of `xdsl_tmem.interpreter.nvvm` called on a hand-built machine
  (`make_machine`), with `active(warp, lanes)` choosing the executing lanes.

No tcgen05 code has run on a Blackwell GPU (docs/ptx-nvvm.md: runtime behaviour and data
layout are documentation only, [U]); these tests pin the model to the documents, and
each docstring names the fact it checks and says when that fact is itself only inferred.

Sections: 1 mbarrier phases, 2 TMEM allocator, 3 tcgen05.ld / st, 4 shared-memory
descriptors, 5 tcgen05.mma numerics, 6 divergence, 7 integer arithmetic, 8 named barriers.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from gemm_reference import (
    LDST_REGISTERS_PER_X,
    kmajor_byte_offset,
    ldst_cell,
    mn_major_byte_offset,
    parse,
    place_kmajor_swizzled,
    place_operand,
)
from numpy.typing import NDArray
from xdsl.dialects.builtin import ModuleOp

from xdsl_tmem.fence_policy import FencePolicy
from xdsl_tmem.interpreter import KernelDeadlock, KernelHazard, run_kernel
from xdsl_tmem.interpreter.executor import Program, Warp
from xdsl_tmem.interpreter.launch import Geometry
from xdsl_tmem.interpreter.machine import Blocked, Cluster, Cta, GlobalMemory, Hazard, MBarrier, SharedLayout
from xdsl_tmem.interpreter.nvvm import (
    MmaOperands,
    _arrivers,  # pyright: ignore[reportPrivateUsage]
    mbarrier_add_tx,
    mbarrier_arrive,
    mbarrier_init,
    mbarrier_probe,
    mbarrier_wait_parity,
    tcgen05_commit,
    tcgen05_mma,
    tmem_alloc,
    tmem_dealloc,
    tmem_ld,
    tmem_relinquish,
    tmem_st,
    tmem_wait,
)
from xdsl_tmem.interpreter.run import connect
from xdsl_tmem.interpreter.tcgen05 import DescriptorError, SmemDescriptor, gather_operand, ldst_plan

WARP = 32
ANY_OP = ModuleOp([])
"""The op an action records in its async log (never inspected here)."""
SCHEDULES = [("rr", 0), ("random", 1), ("random", 5)]

# --------------------------------------------------------------------------------------
# Shared helpers: kernels
# --------------------------------------------------------------------------------------


def shared(name: str, type_: str = "i64", alignment: int = 8) -> str:
    return f"llvm.mlir.global internal @{name}() {{addr_space = 3 : i32, alignment = {alignment} : i64}} : {type_}"


BAR = shared("bar")
SLOT = shared("slot", "i32", 4)


def kernel(body: str, *, params: str = "%out: !llvm.ptr<1>", globals_: Iterable[str] = ()) -> ModuleOp:
    """`llvm.func @k(params)` running `body` after `%tid` (tid.x), `%c0`, `%c1`, `%c32` (i32)."""
    return parse(
        "module {\n"
        + "\n".join(globals_)
        + f"""
  llvm.func @k({params}) attributes {{nvvm.kernel}} {{
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c32 = arith.constant 32 : i32
{body}
    llvm.return
  }}
}}"""
    )


def run(module: ModuleOp, block: int = 32, schedule: str = "rr", seed: int = 0, **args: Any) -> dict[str, NDArray[Any]]:
    return run_kernel(module, "k", block=block, args=args, schedule=schedule, seed=seed).outputs


def run_hazard(module: ModuleOp, block: int = 32, **args: Any) -> KernelHazard:
    with pytest.raises(KernelHazard) as caught:
        run(module, block, **args)
    return caught.value


def run_deadlock(module: ModuleOp, block: int = 32, **args: Any) -> KernelDeadlock:
    with pytest.raises(KernelDeadlock) as caught:
        run(module, block, **args)
    return caught.value


def store_lane(value: str, buffer: str = "%out", type_: str = "i32", index: str = "%tid") -> str:
    """MLIR that stores `value` to `buffer[index]`."""
    name = f"%p_{buffer[1:]}_{value[1:]}_{index[1:]}".replace("#", "_")
    return (
        f"    {name} = llvm.getelementptr {buffer}[{index}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {type_}\n"
        f"    llvm.store {value}, {name} : {type_}, !llvm.ptr<1>\n"
    )


# --------------------------------------------------------------------------------------
# Shared helpers: a hand-built machine
# --------------------------------------------------------------------------------------


@dataclass
class Machine:
    """One CTA with shared memory `slot` (8 B), `bars` (8 mbarriers) and a 64 KiB `tile`."""

    cluster: Cluster
    cta: Cta
    warps: list[Warp]

    @property
    def slot(self) -> int:
        return self.cta.layout.symbols["slot"][0]

    @property
    def tile(self) -> int:
        return self.cta.layout.symbols["tile"][0]

    def bar(self, index: int) -> int:
        return self.cta.layout.symbols["bars"][0] + 8 * index

    def mbarrier(self, index: int) -> MBarrier:
        return self.cta.mbarriers[self.bar(index)]

    def slot_value(self) -> int:
        return int(self.cta.smem[self.slot : self.slot + 4].view(np.uint32)[0])

    def put(self, data: NDArray[np.uint8], base: int) -> None:
        """Copy a placed operand (bytes from address 0, meaningful from `base`) into shared memory."""
        self.cta.smem[base : data.size] = data[base:]


def make_machine(warps: int = 8, columns: int | None = 512) -> Machine:
    """`columns` TMEM columns are allocated from column 0 (None: nothing allocated)."""
    layout = SharedLayout()
    layout.add("slot", 8, 8)
    layout.add("bars", 64, 8)
    layout.add("tile", 65536, 1024)
    cta = Cta(0, (0, 0, 0), layout)
    if columns is not None:
        cta.allocator.allocations[0] = columns
    launch = Geometry((WARP * warps, 1, 1))
    cluster = Cluster([cta], GlobalMemory(), launch.threads)
    program = Program(ModuleOp([]), [])
    all_warps = [Warp(program, cluster, cta, index, launch) for index in range(warps)]
    connect(cluster, all_warps, FencePolicy.MOJO)
    # The tests preload TMEM and shared memory directly: count every cell and byte as written.
    cta.tmem_written[:] = True
    cta.shadow.host = True
    return Machine(cluster, cta, all_warps)


@pytest.fixture
def machine() -> Machine:
    return make_machine()


@contextmanager
def active(warp: Warp, lanes: Iterable[int]) -> Generator[Warp]:
    """Run the enclosed actions with only `lanes` of `warp` active (divergence)."""
    mask = np.zeros(WARP, dtype=np.bool_)
    mask[list(lanes)] = True
    saved = warp.mask
    warp.mask = mask
    try:
        yield warp
    finally:
        warp.mask = saved


# ======================================================================================
# 1. mbarrier phases (docs/semantics.md §1.1)
# ======================================================================================


def wait_kernel(count: int, parity: int, arrive: str = "") -> ModuleOp:
    """Thread 0 inits @bar with `count`; every thread runs `arrive`, waits `parity`, stores 1."""
    return kernel(
        f"""
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %count = arith.constant {count} : i32
    %parity = arith.constant {parity} : i32
    %is0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is0 {{
      nvvm.mbarrier.init %bar, %count : !llvm.ptr<3>, i32
    }}
{arrive}
    nvvm.mbarrier.try_wait.parity %bar, %parity, %c0 : !llvm.ptr<3>, i32, i32
"""
        + store_lane("%c1"),
        globals_=[BAR],
    )


def test_fresh_barrier_passes_parity_1() -> None:
    """docs/semantics.md §1.1: on a freshly initialised barrier `wait(1)` passes immediately
    (the phase before the first counts as completed, with parity 1)."""
    out = run(wait_kernel(1, 1), out=np.zeros(WARP, np.int32))["out"]
    np.testing.assert_array_equal(out, 1)


def test_fresh_barrier_blocks_parity_0() -> None:
    """docs/semantics.md §1.1: on a fresh barrier `wait(0)` blocks until the first completion; with
    nobody arriving the kernel deadlocks, and the report names the barrier, the parity
    waited for and the barrier's state (phase bit 0, 1 of 1 arrivals pending)."""
    deadlock = run_deadlock(wait_kernel(1, 0), out=np.zeros(WARP, np.int32))
    (blocked,) = deadlock.blocked
    assert blocked.name == "warp 0"
    assert blocked.op is not None
    assert blocked.op.name == "nvvm.mbarrier.try_wait.parity"
    for part in ("@bar", "parity 0", "phase bit 0", "pending 1 of 1"):
        assert part in blocked.reason


@pytest.mark.parametrize(("count", "completes"), [(32, True), (33, False)])
def test_warp_arrival_counts_every_lane(count: int, completes: bool) -> None:
    """mbarrier.arrive is a per-thread instruction: a full warp arriving counts 32 arrivals,
    so a barrier initialised with 32 completes its phase, one with 33 does not."""
    module = wait_kernel(count, 0, "    nvvm.mbarrier.arrive %bar : !llvm.ptr<3>")
    if completes:
        np.testing.assert_array_equal(run(module, out=np.zeros(WARP, np.int32))["out"], 1)
    else:
        (blocked,) = run_deadlock(module, out=np.zeros(WARP, np.int32)).blocked
        assert f"pending 1 of {count}" in blocked.reason


def test_divergent_arrivals_count_active_lanes() -> None:
    """Per-thread semantics under divergence: only the 5 lanes inside `if tid < 5` arrive,
    which completes a barrier initialised with 5."""
    arrive = """
    %c5 = arith.constant 5 : i32
    %lt5 = arith.cmpi ult, %tid, %c5 : i32
    scf.if %lt5 {
      nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
    }"""
    np.testing.assert_array_equal(run(wait_kernel(5, 0, arrive), out=np.zeros(WARP, np.int32))["out"], 1)


def test_phase_completes_after_count_arrivals(machine: Machine) -> None:
    """docs/semantics.md §1.1: init(n) sets pending = n, phase bit 0; each arrive decrements
    pending; the n-th completes the phase (phase bit flips, pending = n again);
    try_wait.parity(p) succeeds iff phase bit != p."""
    warp = machine.warps[0]
    bar = machine.bar(0)
    with active(warp, [0]):
        mbarrier_init(warp, bar, 3)
        state = machine.mbarrier(0)
        assert (state.phase_bit, state.pending, state.expected, state.tx) == (0, 3, 3, 0)
        for lap in range(2):  # two full phases: the parity alternates
            for arrived in range(1, 3):
                mbarrier_arrive(warp, bar)
                assert (state.phase_bit, state.pending) == (lap, 3 - arrived)
                with pytest.raises(Blocked):
                    mbarrier_wait_parity(warp, bar, lap)
                assert not mbarrier_probe(warp, bar, lap, False)[0]
            mbarrier_arrive(warp, bar)
            assert (state.phase_bit, state.pending) == (1 - lap, 3)
            mbarrier_wait_parity(warp, bar, lap)  # passes
            assert mbarrier_probe(warp, bar, lap, False)[0]
            with pytest.raises(Blocked):
                mbarrier_wait_parity(warp, bar, 1 - lap)


def test_blocked_wait_wakes_on_completion(machine: Machine) -> None:
    """A waiter blocked on parity 0 becomes runnable exactly when the phase completes."""
    warp = machine.warps[0]
    bar = machine.bar(1)
    with active(warp, [0]):
        mbarrier_init(warp, bar, 1)
        with pytest.raises(Blocked) as caught:
            mbarrier_wait_parity(warp, bar, 0)
        wake = caught.value.wake
        assert wake is not None
        assert not machine.cluster.ready(wake)
        mbarrier_arrive(warp, bar)
        assert machine.cluster.ready(wake)


def test_tx_count_holds_the_phase(machine: Machine) -> None:
    """docs/semantics.md §1.1: the phase completes when pending == 0 *and* tx == 0: after
    expect_tx(64) and the last arrival, the phase stays open until complete_tx has
    brought the tx-count back to 0."""
    warp = machine.warps[0]
    bar = machine.bar(2)
    with active(warp, [0]):
        mbarrier_init(warp, bar, 1)
        state = machine.mbarrier(2)
        mbarrier_add_tx(warp, bar, 64, +1)  # expect_tx
        mbarrier_arrive(warp, bar)
        assert (state.pending, state.tx, state.phase_bit) == (0, 64, 0)
        mbarrier_add_tx(warp, bar, 32, -1)  # complete_tx
        assert (state.tx, state.phase_bit) == (32, 0)
        with pytest.raises(Blocked):
            mbarrier_wait_parity(warp, bar, 0)
        mbarrier_add_tx(warp, bar, 32, -1)
        assert (state.pending, state.tx, state.phase_bit) == (1, 0, 1)
        mbarrier_wait_parity(warp, bar, 0)


@pytest.mark.parametrize("complete", [True, False])
def test_arrive_expect_tx_in_a_kernel(complete: bool) -> None:
    """`mbarrier.arrive.expect_tx` = one arrival + tx bytes (docs/semantics.md §1.1 table): the
    waiters pass once `complete_tx` delivers the bytes, and deadlock (tx 64 outstanding)
    without it."""
    finish = "      nvvm.mbarrier.complete_tx %bar, %c64 : !llvm.ptr<3>, i32\n" if complete else ""
    module = kernel(
        f"""
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %c64 = arith.constant 64 : i32
    %is0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is0 {{
      nvvm.mbarrier.init %bar, %c1 : !llvm.ptr<3>, i32
      nvvm.mbarrier.arrive.expect_tx %bar, %c64 : !llvm.ptr<3>, i32
{finish}    }}
    nvvm.mbarrier.try_wait.parity %bar, %c0, %c0 : !llvm.ptr<3>, i32, i32
"""
        + store_lane("%c1"),
        globals_=[BAR],
    )
    if complete:
        np.testing.assert_array_equal(run(module, out=np.zeros(WARP, np.int32))["out"], 1)
    else:
        (blocked,) = run_deadlock(module, out=np.zeros(WARP, np.int32)).blocked
        assert "phase bit 0" in blocked.reason
        assert "pending 0 of 1, tx 64" in blocked.reason


def _probe_kernel(probes: list[str]) -> ModuleOp:
    """Lane 0 initialises a count-1 barrier, arrives (`%state`), then stores each probe."""
    body = "".join(
        f"""      %w{k} = {probe}
      %x{k} = llvm.zext %w{k} : i1 to i32
      %k{k} = arith.constant {k} : i32
      %p{k} = llvm.getelementptr %out[%k{k}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %x{k}, %p{k} : i32, !llvm.ptr<1>
"""
        for k, probe in enumerate(probes)
    )
    return kernel(
        f"""
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %is0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is0 {{
      nvvm.mbarrier.init %bar, %c1 : !llvm.ptr<3>, i32
      %state = nvvm.mbarrier.arrive %bar : !llvm.ptr<3> -> i64
{body}    }}
""",
        globals_=[BAR],
    )


@pytest.mark.parametrize("op", ["nvvm.mbarrier.try_wait", "nvvm.mbarrier.test.wait"])
def test_try_wait_and_test_wait_probe_phases_and_states(op: str) -> None:
    """PTX ISA, mbarrier.test_wait / try_wait: true once the phase named by the parity,
    or by the state an arrive returned, has completed. A count-1 barrier after its one
    arrival: phase 0 (parity 0, the arrive's state) is complete; phase 1 is not: one
    probe returns false and the thread goes on (as on an H100: docs/silicon.md,
    mbarrier_phases), while a warp retrying it in a loop with nothing else left to run is
    deadlocked."""
    probes = [f"{op} %bar, %c0 : !llvm.ptr<3>, i32 -> i1", f"{op} %bar, %state : !llvm.ptr<3>, i64 -> i1"]
    assert run(_probe_kernel(probes), out=np.zeros(2, np.int32))["out"].tolist() == [1, 1]
    parity_1 = _probe_kernel([f"{op} %bar, %c1 : !llvm.ptr<3>, i32 -> i1"])
    assert run(parity_1, out=np.full(1, 7, np.int32))["out"].tolist() == [0]
    spin = kernel(
        f"""
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %is0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is0 {{
      nvvm.mbarrier.init %bar, %c1 : !llvm.ptr<3>, i32
      %state = nvvm.mbarrier.arrive %bar : !llvm.ptr<3> -> i64
      scf.while () : () -> () {{
        %w = {op} %bar, %c1 : !llvm.ptr<3>, i32 -> i1
        %true = arith.constant true
        %again = arith.xori %w, %true : i1
        scf.condition(%again)
      }} do {{
        scf.yield
      }}
    }}
""",
        globals_=[BAR],
    )
    (blocked,) = run_deadlock(spin, out=np.zeros(1, np.int32)).blocked
    assert "polls mbarrier @bar for parity 1" in blocked.reason


@pytest.mark.parametrize(
    "use",
    [
        "nvvm.mbarrier.arrive %bar : !llvm.ptr<3>",
        "nvvm.mbarrier.try_wait.parity %bar, %c0, %c0 : !llvm.ptr<3>, i32, i32",
        "%ok = nvvm.mbarrier.test.wait %bar, %c0 : !llvm.ptr<3>, i32 -> i1",
        "nvvm.mbarrier.expect_tx %bar, %c32 : !llvm.ptr<3>, i32",
        "nvvm.tcgen05.commit %bar : !llvm.ptr<3>",
    ],
    ids=["arrive", "try_wait", "test_wait", "expect_tx", "tcgen05.commit"],
)
def test_use_before_init_is_a_hazard(use: str) -> None:
    """An mbarrier must be initialised ("single thread, before use", docs/semantics.md §1.1)."""
    module = kernel(f"    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>\n    {use}", globals_=[BAR])
    assert run_hazard(module, out=np.zeros(1, np.int32)).kind == "barrier-before-init"


@pytest.mark.parametrize(("count", "valid"), [(0, False), (1, True), ((1 << 20) - 1, True), (1 << 20, False)])
def test_init_count_range(machine: Machine, count: int, valid: bool) -> None:
    """docs/ptx-nvvm.md §1.9: the init count range is 1 ... 2^20 - 1."""
    warp = machine.warps[0]
    with active(warp, [0]):
        if valid:
            mbarrier_init(warp, machine.bar(0), count)
            assert machine.mbarrier(0).pending == count
        else:
            with pytest.raises(Hazard) as caught:
                mbarrier_init(warp, machine.bar(0), count)
            assert caught.value.kind == "mbarrier-count-invalid"


# ======================================================================================
# 2. TMEM allocator (docs/ptx-nvvm.md §1.3)
# ======================================================================================


@pytest.fixture
def empty() -> Machine:
    """A machine with no TMEM allocated."""
    return make_machine(columns=None)


def alloc(m: Machine, ncols: int, warp: int = 0) -> int:
    """tcgen05.alloc by a whole warp; the TMEM address it wrote to the shared slot."""
    tmem_alloc(m.warps[warp], ANY_OP, m.slot, ncols, 1)
    return m.slot_value()


@pytest.mark.parametrize("ncols", [48, 16, 1024, 0, 96, 511])
def test_alloc_ncols_must_be_a_power_of_two_in_32_512(empty: Machine, ncols: int) -> None:
    """docs/ptx-nvvm.md §1.3 [V]: alloc's ncols must be a power of 2 in [32, 512] (ptxas rejects
    16 and 1024 as out of range, 48 and 96 as not a power of 2). A register ncols is not
    checked by ptxas and the run-time behaviour is [U]; the interpreter flags it."""
    with pytest.raises(Hazard) as caught:
        alloc(empty, ncols)
    assert caught.value.kind == "ncols-invalid"
    assert empty.cta.allocator.allocations == {}


@pytest.mark.parametrize("ncols", [32, 64, 128, 256, 512])
def test_alloc_writes_lane_0_and_the_first_column(empty: Machine, ncols: int) -> None:
    """docs/ptx-nvvm.md §1.2: alloc writes the base TMEM address (lane 0 in bits 31..16, the
    first column in bits 15..0) to the shared-memory destination."""
    address = alloc(empty, ncols)
    assert address >> 16 == 0
    assert empty.cta.allocator.allocations == {address & 0xFFFF: ncols}


def test_alloc_after_relinquish_is_a_hazard(empty: Machine) -> None:
    """docs/ptx-nvvm.md §1.3 [D]: relinquishing the permit forbids later allocs by the CTA
    (by any warp of it)."""
    alloc(empty, 32)
    tmem_relinquish(empty.warps[0], 1)
    with pytest.raises(Hazard) as caught:
        alloc(empty, 32, warp=3)
    assert caught.value.kind == "alloc-after-relinquish"


def test_alloc_blocks_until_a_dealloc_frees_columns(empty: Machine) -> None:
    """docs/ptx-nvvm.md §1.3 [D]: alloc blocks until columns are free; a dealloc frees them for a
    later alloc (the blocked alloc becomes runnable and then succeeds)."""
    first = alloc(empty, 512)
    with pytest.raises(Blocked) as caught:
        alloc(empty, 32, warp=1)
    wake = caught.value.wake
    assert wake is not None
    assert not empty.cluster.ready(wake)
    tmem_dealloc(empty.warps[0], first, 512, 1)
    assert empty.cluster.ready(wake)
    # Both allocs write the slot: order warp 1 after warp 0, as a barrier would (races.py).
    empty.warps[1].clock.acquire(empty.warps[0].clock.release())
    second = alloc(empty, 32, warp=1)
    assert empty.cta.allocator.allocations == {second & 0xFFFF: 32}


def test_unsatisfiable_alloc_deadlocks() -> None:
    """An alloc that cannot be satisfied blocks; with nothing to free columns the kernel
    deadlocks, and the report says what the alloc waits for."""
    module = kernel(
        """
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %c512 = arith.constant 512 : i32
    nvvm.tcgen05.alloc %slot, %c512 : !llvm.ptr<3>, i32
    nvvm.tcgen05.alloc %slot, %c32 : !llvm.ptr<3>, i32
""",
        globals_=[SLOT],
    )
    (blocked,) = run_deadlock(module, out=np.zeros(1, np.int32)).blocked
    assert blocked.op is not None
    assert blocked.op.name == "nvvm.tcgen05.alloc"
    assert "tcgen05.alloc of 32 columns waits for free TMEM columns" in blocked.reason


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_alloc_waits_for_another_warps_dealloc(schedule: str, seed: int) -> None:
    """Warp 0 holds all 512 columns; warp 1 (after a named barrier, so it comes second)
    asks for 256: under every schedule its alloc completes only after warp 0's dealloc."""
    module = kernel(
        """
    %slot0 = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %slot1 = llvm.mlir.addressof @slot1 : !llvm.ptr<3>
    %c5 = arith.constant 5 : i32
    %c64 = arith.constant 64 : i32
    %c256 = arith.constant 256 : i32
    %c512 = arith.constant 512 : i32
    %warp = arith.shrui %tid, %c5 : i32
    %w0 = arith.cmpi eq, %warp, %c0 : i32
    scf.if %w0 {
      nvvm.tcgen05.alloc %slot0, %c512 : !llvm.ptr<3>, i32
      nvvm.barrier.arrive id = %c1 number_of_threads = %c64
      %t = llvm.load %slot0 : !llvm.ptr<3> -> i32
      %tp = llvm.inttoptr %t : i32 to !llvm.ptr<6>
      nvvm.tcgen05.dealloc %tp, %c512 : !llvm.ptr<6>, i32
    } else {
      nvvm.barrier id = %c1 number_of_threads = %c64
      nvvm.tcgen05.alloc %slot1, %c256 : !llvm.ptr<3>, i32
      %t = llvm.load %slot1 : !llvm.ptr<3> -> i32
      %tp = llvm.inttoptr %t : i32 to !llvm.ptr<6>
      nvvm.tcgen05.dealloc %tp, %c256 : !llvm.ptr<6>, i32
    }
""",
        globals_=[SLOT, shared("slot1", "i32", 4)],
    )
    result = run_kernel(module, "k", block=64, args={"out": np.zeros(1, np.int32)}, schedule=schedule, seed=seed)
    events = [(kind, n) for kind, _, _, n, _ in result.report.tmem_events]
    assert events == [("alloc", 512), ("dealloc", 512), ("alloc", 256), ("dealloc", 256)]


@pytest.mark.parametrize(
    ("address", "ncols"),
    [(0, 64), (0, 256), (32, 128), (1 << 16, 128), (256, 128)],
    ids=["smaller", "larger", "inside", "lane-field", "never-allocated"],
)
def test_dealloc_must_match_an_allocation(empty: Machine, address: int, ncols: int) -> None:
    """docs/ptx-nvvm.md §1.3: dealloc must name columns returned by alloc, with their size (ptxas
    adds traps `col_being_dealloced_not_returned_by_alloc`, `unallocated_columns_being_dealloced`)."""
    assert alloc(empty, 128) == 0
    with pytest.raises(Hazard) as caught:
        tmem_dealloc(empty.warps[0], address, ncols, 1)
    assert caught.value.kind == "dealloc-invalid"
    assert empty.cta.allocator.allocations == {0: 128}


def test_divergent_alloc_is_a_hazard() -> None:
    """tcgen05.alloc is `.sync.aligned`: the whole warp must execute it (docs/ptx-nvvm.md §1.3)."""
    module = kernel(
        """
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %c16 = arith.constant 16 : i32
    %lt = arith.cmpi ult, %tid, %c16 : i32
    scf.if %lt {
      nvvm.tcgen05.alloc %slot, %c32 : !llvm.ptr<3>, i32
    }
""",
        globals_=[SLOT],
    )
    assert run_hazard(module, out=np.zeros(1, np.int32)).kind == "divergent-sync-aligned"


def test_allocations_never_overlap_and_are_aligned(empty: Machine) -> None:
    """docs/ptx-nvvm.md §1.3: alloc finds an *aligned* free range (`FIND_AND_SET.ALIGN`): over a
    random sequence of allocs and deallocs every live allocation starts at a multiple of its
    size, lies inside the 512 columns, and no two overlap."""
    rng = np.random.default_rng(0)
    live: dict[int, int] = {}
    for _ in range(200):
        if live and rng.random() < 0.4:
            start = int(rng.choice(sorted(live)))
            tmem_dealloc(empty.warps[0], start, live.pop(start), 1)
            continue
        ncols = int(rng.choice([32, 64, 128, 256]))
        try:
            start = alloc(empty, ncols) & 0xFFFF
        except Blocked:
            continue
        assert start % ncols == 0
        assert start + ncols <= 512
        assert all(start + ncols <= s or s + n <= start for s, n in live.items())
        live[start] = ncols
    assert empty.cta.allocator.allocations == live


# ======================================================================================
# 3. tcgen05.ld / tcgen05.st (docs/ptx-nvvm.md §1.2, §1.4; gemm_reference.ldst_cell)
# ======================================================================================


def cell_values() -> NDArray[np.uint32]:
    """TMEM contents with a distinct low half-word per cell, lane << 9 | column, and a
    non-zero high half-word (so .pack::16b must discard it)."""
    lanes = np.arange(128, dtype=np.uint32)[:, None]
    columns = np.arange(512, dtype=np.uint32)[None, :]
    return (lanes << np.uint32(9)) | columns | np.uint32(0x5A5A0000)


def cell(lane: int, column: int) -> int:
    return (lane << 9) | column | 0x5A5A0000


LDST_CASES = [
    (shape, x, pack)
    for shape in ("32x32b", "16x64b", "16x128b", "16x256b", "16x32bx2")
    for x in (1, 4, 32)
    for pack in (False, True)
]


def ldst_id(case: tuple[str, int, bool]) -> str:
    shape, x, pack = case
    return f"{shape}.x{x}" + (".pack" if pack else "")


def ldst_geometry(shape: str, x: int, pack: bool) -> tuple[int, int, int, int]:
    """(registers, split, address lane field, address column) of one test case: 16-row
    shapes address the upper half of the quarter (lane field 16, docs/ptx-nvvm.md §1.2);
    the 16x32bx2 split is N (2N packed), as CUTLASS passes it."""
    registers = LDST_REGISTERS_PER_X[shape] * x
    split = x * (2 if pack else 1) if shape == "16x32bx2" else 0
    lane_field = 0 if shape == "32x32b" else 16
    footprint = {"32x32b": x, "16x64b": 2 * x, "16x128b": 4 * x, "16x256b": 8 * x, "16x32bx2": 2 * x}[shape]
    column = 0 if footprint * (2 if pack else 1) > 256 else 24
    return registers, split, lane_field, column


@pytest.mark.parametrize("case", LDST_CASES, ids=ldst_id)
@pytest.mark.parametrize("warp_index", [1, 6])
def test_ld_register_map(machine: Machine, case: tuple[str, int, bool], warp_index: int) -> None:
    """Every register of every lane of tcgen05.ld <shape>.xN[.pack::16b] holds the TMEM cell
    the TVM "native image" table gives (docs/tcgen05_layouts.md §1), in the warp's lane quarter
    32·(warp % 4) (docs/ptx-nvvm.md §1.2). `.pack::16b` puts the low 16 bits of column 2c in
    bits 0-15 and of column 2c+1 in bits 16-31 (docs/tcgen05_layouts.md §2, from CUTLASS's `_16b` traits;
    PTX gives no bit-level text). The 16x32bx2 split formula for any immediate is the
    notes' generalisation [M] of CUTLASS usage."""
    shape, x, pack = case
    registers, split, lane_field, column = ldst_geometry(shape, x, pack)
    machine.cta.tmem[:] = cell_values()
    warp = machine.warps[warp_index]
    got = tmem_ld(warp, ANY_OP, lane_field << 16 | column, ldst_plan(f"shape_{shape}", registers, split, pack))
    assert got.shape == (WARP, registers)
    first_lane = 32 * (warp_index % 4) + lane_field
    expected = np.zeros((WARP, registers), dtype=np.uint32)
    for lane in range(WARP):
        for register in range(registers):
            row, col = ldst_cell(shape, lane, register, split, pack)
            low = cell(first_lane + row, column + col)
            if pack:
                high = cell(first_lane + row, column + col + 1)
                expected[lane, register] = (low & 0xFFFF) | (high & 0xFFFF) << 16
            else:
                expected[lane, register] = low
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("case", LDST_CASES, ids=ldst_id)
def test_st_register_map(machine: Machine, case: tuple[str, int, bool]) -> None:
    """tcgen05.st is the inverse of tcgen05.ld (docs/tcgen05_layouts.md §1: CUTLASS defines each STORE
    trait as the inverse of the LOAD one): each register lands in the cell of the table,
    `.unpack::16b` splits it into the low 16 bits of columns 2c and 2c+1 (what the high 16
    bits of those cells become is not documented, so only the low halves are compared),
    and no other cell changes."""
    shape, x, pack = case
    registers, split, lane_field, column = ldst_geometry(shape, x, pack)
    sentinel = np.uint32(0xDEADBEEF)
    machine.cta.tmem[:] = sentinel
    warp_index = 2
    lanes = np.arange(WARP, dtype=np.uint32)[:, None]
    regs = np.arange(registers, dtype=np.uint32)[None, :]
    values = (lanes + np.uint32(1)) << np.uint32(16) | (regs + np.uint32(1))
    tmem_st(
        machine.warps[warp_index],
        ANY_OP,
        lane_field << 16 | column,
        values,
        ldst_plan(f"shape_{shape}", registers, split, pack),
    )
    expected = np.full((128, 512), sentinel, dtype=np.uint32)
    halves = np.zeros((128, 512), dtype=np.bool_)
    first_lane = 64 + lane_field
    for lane in range(WARP):
        for register in range(registers):
            row, col = ldst_cell(shape, lane, register, split, pack)
            value = int(values[lane, register])
            if pack:
                expected[first_lane + row, column + col] = value & 0xFFFF
                expected[first_lane + row, column + col + 1] = value >> 16
                halves[first_lane + row, column + col : column + col + 2] = True
            else:
                expected[first_lane + row, column + col] = value
    got = machine.cta.tmem.copy()
    got[halves] &= np.uint32(0xFFFF)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("split", [0, 3, 100])
@pytest.mark.parametrize("pack", [False, True])
def test_16x32bx2_with_any_split(machine: Machine, split: int, pack: bool) -> None:
    """16x32bx2.x2: lanes 0-15 read TMEM lanes 0-15 from the address's column, lanes 16-31
    the same TMEM lanes `immHalfSplitoff` columns further (docs/ptx-nvvm.md §1.4 footprint:
    "the second at taddr + immHalfSplitoff columns"). The per-register formula for a split
    CUTLASS never uses (here 0, 3, 100) is docs/tcgen05_layouts.md's generalisation [M]."""
    machine.cta.tmem[:] = cell_values()
    got = tmem_ld(machine.warps[0], ANY_OP, 10, ldst_plan("shape_16x32bx2", 2, split, pack))
    for lane in range(WARP):
        for register in range(2):
            column = 10 + (lane // 16) * split + (2 * register if pack else register)
            low = cell(lane % 16, column)
            value = (low & 0xFFFF) | (cell(lane % 16, column + 1) & 0xFFFF) << 16 if pack else low
            assert int(got[lane, register]) == value, (lane, register)


@pytest.mark.parametrize("warp_index", range(8))
def test_lane_field_0_selects_the_warps_own_quarter(machine: Machine, warp_index: int) -> None:
    """docs/ptx-nvvm.md §1.2: warp w reaches TMEM lanes 32·(w % 4) … +31; an address whose lane
    field is 0 (or names the warp's own quarter) reaches exactly those lanes."""
    machine.cta.tmem[:] = cell_values()
    warp = machine.warps[warp_index]
    quarter = warp_index % 4
    for lane_field in (0, 32 * quarter):
        got = tmem_ld(warp, ANY_OP, lane_field << 16 | 7, ldst_plan("shape_32x32b", 1))
        np.testing.assert_array_equal(got[:, 0], [cell(32 * quarter + lane, 7) for lane in range(WARP)])


@pytest.mark.parametrize("odd_lane", [0, 17, 31])
def test_a_tmem_address_must_be_warp_uniform(machine: Machine, odd_lane: int) -> None:
    """docs/ptx-nvvm.md §1: TMEM operands are warp-uniform (ptxas keeps them in uniform
    registers). A per-lane address equal in all 32 lanes loads what the plain address
    does; one lane disagreeing (first, middle, last) is `non-uniform-operand`."""
    machine.cta.tmem[:] = cell_values()
    warp = machine.warps[1]
    plan = ldst_plan("shape_32x32b", 1)
    lanes = np.full(WARP, 7, dtype=np.uint32)
    got = tmem_ld(warp, ANY_OP, lanes, plan)
    np.testing.assert_array_equal(got[:, 0], [cell(32 + lane, 7) for lane in range(WARP)])
    lanes[odd_lane] = 8
    with pytest.raises(Hazard) as caught:
        tmem_ld(warp, ANY_OP, lanes, plan)
    assert caught.value.kind == "non-uniform-operand"


@pytest.mark.parametrize(
    ("warp_index", "lane_field", "shape"),
    [
        (1, 64, "32x32b"),
        (1, 96, "16x256b"),
        (0, 32, "16x64b"),
        (5, 64, "32x32b"),
        (2, 16, "32x32b"),
        (3, 80, "16x128b"),
    ],
)
def test_other_quarters_are_a_hazard(machine: Machine, warp_index: int, lane_field: int, shape: str) -> None:
    """docs/ptx-nvvm.md §1.2: a warp may only tcgen05.ld/st the lanes of its quarter; an address
    naming another quarter, or a 32-row access from lane 16 (which would run into the next
    quarter), is a hazard, for loads and stores alike."""
    warp = machine.warps[warp_index]
    plan = ldst_plan(f"shape_{shape}", LDST_REGISTERS_PER_X[shape])
    with pytest.raises(Hazard) as caught:
        tmem_ld(warp, ANY_OP, lane_field << 16, plan)
    assert caught.value.kind == "lane-quarter-violation"
    with pytest.raises(Hazard) as caught:
        tmem_st(warp, ANY_OP, lane_field << 16, np.zeros((WARP, plan.registers), np.uint32), plan)
    assert caught.value.kind == "lane-quarter-violation"


@pytest.mark.parametrize(
    ("column", "shape", "registers", "ok"),
    [
        (0, "32x32b", 64, True),
        (32, "32x32b", 64, False),
        (64, "32x32b", 1, False),
        (56, "16x256b", 4, True),
        (60, "16x256b", 4, False),
        (96, "16x64b", 1, True),
        (127, "16x64b", 1, False),
    ],
)
def test_access_outside_allocated_columns(column: int, shape: str, registers: int, ok: bool) -> None:
    """tcgen05.ld/st may only touch allocated columns (TMEM is allocated per column range,
    docs/ptx-nvvm.md §1.2-1.3). Allocated here: [0, 64) and [96, 128); the footprints are
    32x32b.xN N columns, 16x256b.xN 8N, 16x64b.xN 2N (§1.4)."""
    m = make_machine(columns=None)
    m.cta.allocator.allocations.update({0: 64, 96: 32})
    plan = ldst_plan(f"shape_{shape}", registers)
    if ok:
        tmem_ld(m.warps[0], ANY_OP, column, plan)
        tmem_wait(m.warps[0], "ld")  # the store may not overwrite cells a load still reads
        tmem_st(m.warps[0], ANY_OP, column, np.zeros((WARP, registers), np.uint32), plan)
        return
    with pytest.raises(Hazard) as caught:
        tmem_ld(m.warps[0], ANY_OP, column, plan)
    assert caught.value.kind == "tmem-unallocated-access"
    with pytest.raises(Hazard) as caught:
        tmem_st(m.warps[0], ANY_OP, column, np.zeros((WARP, registers), np.uint32), plan)
    assert caught.value.kind == "tmem-unallocated-access"


def test_ld_st_ops_in_a_kernel() -> None:
    """The nvvm.tcgen05.ld / st ops: the result type gives the register count, `pack` and
    the 16x32bx2 offset operand are honoured, a scalar result is one 32x32b register
    (docs/ptx-nvvm.md §2). TMEM is filled by a 32x32b.x64 store of `inp` (lane l, column c =
    inp[l, c]); the loads must follow the table, and a 16x32bx2 store with offset 8 at
    column 32 writes back what the 16x32bx2 load read."""
    module = kernel(
        """
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %c5 = arith.constant 5 : i32
    %c64 = arith.constant 64 : i32
    %lane16 = arith.constant 1048576 : i32
    nvvm.tcgen05.alloc %slot, %c64 : !llvm.ptr<3>, i32
    %t = llvm.load %slot : !llvm.ptr<3> -> i32
    %tp = llvm.inttoptr %t : i32 to !llvm.ptr<6>
    %t16 = arith.addi %t, %lane16 : i32
    %tp16 = llvm.inttoptr %t16 : i32 to !llvm.ptr<6>
    %t5 = arith.addi %t, %c5 : i32
    %tp5 = llvm.inttoptr %t5 : i32 to !llvm.ptr<6>
    %t32 = arith.addi %t, %c32 : i32
    %tp32 = llvm.inttoptr %t32 : i32 to !llvm.ptr<6>
    %src = llvm.getelementptr %inp[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<64xi32>
    %v = llvm.load %src : !llvm.ptr<1> -> vector<64xi32>
    nvvm.tcgen05.st %tp, %v {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<64xi32>
    nvvm.tcgen05.wait <store>
    %a = nvvm.tcgen05.ld %tp {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<32xi32>
    %b = nvvm.tcgen05.ld %tp16 pack {shape = #nvvm.tcgen05_ldst_shape<shape_16x64b>} : vector<4xi32>
    %off = llvm.mlir.constant(8 : i64) : i64
    %c = nvvm.tcgen05.ld %tp, %off {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<4xi32>
    %d = nvvm.tcgen05.ld %tp16 {shape = #nvvm.tcgen05_ldst_shape<shape_16x128b>} : vector<8xi32>
    %e = nvvm.tcgen05.ld %tp5 {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
    nvvm.tcgen05.wait <load>
    nvvm.tcgen05.st %tp32, %c, %off {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<4xi32>
    nvvm.tcgen05.wait <store>
    %f = nvvm.tcgen05.ld %tp32 {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<16xi32>
    nvvm.tcgen05.wait <load>
    nvvm.tcgen05.dealloc %tp, %c64 : !llvm.ptr<6>, i32
"""
        + store_lane("%a", "%outa", "vector<32xi32>")
        + store_lane("%b", "%outb", "vector<4xi32>")
        + store_lane("%c", "%outc", "vector<4xi32>")
        + store_lane("%d", "%outd", "vector<8xi32>")
        + store_lane("%e", "%oute", "i32")
        + store_lane("%f", "%outf", "vector<16xi32>"),
        params=", ".join(f"%{name}: !llvm.ptr<1>" for name in ("inp", "outa", "outb", "outc", "outd", "oute", "outf")),
        globals_=[SLOT],
    )
    tmem = cell_values()[:32, :64]
    shapes = {"outa": 32, "outb": 4, "outc": 4, "outd": 8, "oute": 1, "outf": 16}
    buffers: dict[str, NDArray[Any]] = {name: np.zeros((WARP, n), np.uint32) for name, n in shapes.items()}
    out = run_kernel(module, "k", block=WARP, args={"inp": tmem, **buffers}).outputs

    def expect(
        shape: str, registers: int, lane_field: int = 0, split: int = 0, pack: bool = False
    ) -> NDArray[np.uint32]:
        expected = np.zeros((WARP, registers), dtype=np.uint32)
        for lane in range(WARP):
            for register in range(registers):
                row, col = ldst_cell(shape, lane, register, split, pack)
                low = int(tmem[lane_field + row, col])
                high = int(tmem[lane_field + row, col + 1]) if pack else 0
                expected[lane, register] = (low & 0xFFFF) | (high & 0xFFFF) << 16 if pack else low
        return expected

    np.testing.assert_array_equal(out["outa"], expect("16x256b", 32))
    np.testing.assert_array_equal(out["outb"], expect("16x64b", 4, lane_field=16, pack=True))
    np.testing.assert_array_equal(out["outc"], expect("16x32bx2", 4, split=8))
    np.testing.assert_array_equal(out["outd"], expect("16x128b", 8, lane_field=16))
    np.testing.assert_array_equal(out["oute"][:, 0], tmem[:, 5])
    written = tmem[:, 32:48].copy()
    for lane in range(16):  # 16x32bx2.x4, offset 8: columns 32-35 and 40-43 of lanes 0-15
        written[lane, 0:4] = tmem[lane, 0:4]
        written[lane, 8:12] = tmem[lane, 8:12]
    np.testing.assert_array_equal(out["outf"], written)


# ======================================================================================
# 4. Shared-memory matrix descriptors (docs/ptx-nvvm.md §1.7; docs/tcgen05_layouts.md §5-6)
# ======================================================================================

SWIZZLE_CODES = {0: 0, 128: 2, 64: 4, 32: 6}
"""Swizzle field (bits 61-63): 0 none, 2 128B, 4 64B, 6 32B (docs/ptx-nvvm.md §1.7)."""


def smem_desc(start: int, lbo: int, sbo: int, swizzle: int = 0) -> int:
    """A shared-memory descriptor by the bit table of docs/ptx-nvvm.md §1.7: bits 0-13 start >> 4,
    16-29 LBO >> 4, 32-45 SBO >> 4, 46-48 fixed 0b001, 49-51 base offset (0), 52 LBO mode
    (0), 61-63 swizzle."""
    for value in (start, lbo, sbo):
        assert value % 16 == 0
        assert value >> 4 < 1 << 14
    return start >> 4 | (lbo >> 4) << 16 | (sbo >> 4) << 32 | 1 << 46 | SWIZZLE_CODES[swizzle] << 61


@pytest.mark.parametrize(
    ("start", "lbo", "sbo", "swizzle"),
    [(0, 0, 1024, 128), (1024, 128, 256, 0), (0x3FFF0, 0x3FFF0, 16, 64), (512, 16, 512, 32)],
)
def test_smem_desc_op_matches_the_bit_table(start: int, lbo: int, sbo: int, swizzle: int) -> None:
    """`nvvm.tcgen05.mma_smem_desc` (operands already shifted right by 4, as upstream's
    lowering expects: `and 16383`, shifts 0/16/32, `or 1 << 46`, ...) builds the descriptor
    of the §1.7 bit table; decoding it gives back the fields."""
    module = kernel(
        """
    %z8 = llvm.mlir.constant(0 : i8) : i8
    %f = llvm.mlir.constant(false) : i1
    %desc = nvvm.tcgen05.mma_smem_desc (%s, %l, %b, %z8, %f, %sw) : (i32, i32, i32, i8, i1, i8) -> i64
    llvm.store %desc, %out : i64, !llvm.ptr<1>
""",
        params="%out: !llvm.ptr<1>, %s: i32, %l: i32, %b: i32, %sw: i8",
    )
    out = run(module, out=np.zeros(1, np.uint64), s=start >> 4, l=lbo >> 4, b=sbo >> 4, sw=SWIZZLE_CODES[swizzle])
    assert int(out["out"][0]) == smem_desc(start, lbo, sbo, swizzle)
    decoded = SmemDescriptor.decode(smem_desc(start, lbo, sbo, swizzle))
    assert (decoded.start, decoded.lbo, decoded.sbo, decoded.swizzle) == (start, lbo, sbo, SWIZZLE_CODES[swizzle])


def test_smem_desc_version_bits_are_required() -> None:
    """docs/ptx-nvvm.md §1.7: bits 46-48 are fixed 0b001 on sm_100 (new vs. Hopper's wgmma
    descriptors); a descriptor without them is rejected."""
    with pytest.raises(DescriptorError):
        SmemDescriptor.decode(smem_desc(0, 0, 1024, 128) & ~(1 << 46))


FORMATS: dict[str, Any] = {
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
    "tf32": np.float32,
    "e4m3": ml_dtypes.float8_e4m3fn,
    "e5m2": ml_dtypes.float8_e5m2,
    "s8": np.int8,
    "u8": np.uint8,
}


def random_operand(fmt: str, rows: int, k: int, rng: np.random.Generator, small: bool = False) -> NDArray[Any]:
    """rows x k finite values of `fmt`: every bit pattern of the 8-bit formats but NaN / inf;
    with `small`, normally distributed values instead (sums that fit an f16 D); tf32:
    float32 values with the low 13 mantissa bits clear, i.e. exactly representable."""
    if fmt in ("s8", "u8"):
        info = np.iinfo(FORMATS[fmt])
        return rng.integers(int(info.min), int(info.max) + 1, (rows, k)).astype(FORMATS[fmt])
    if fmt in ("e4m3", "e5m2") and not small:
        raw = rng.integers(0, 256, (rows, k)).astype(np.uint8)
        bad = (raw & 0x7F) == 0x7F if fmt == "e4m3" else (raw & 0x7C) == 0x7C  # NaN (and inf for e5m2)
        raw[bad] = 0x38
        return raw.view(FORMATS[fmt])
    values = rng.standard_normal((rows, k)).astype(np.float32)
    if fmt == "tf32":
        return (values.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    return values.astype(FORMATS[fmt])


def numbers(matrix: NDArray[Any]) -> NDArray[Any]:
    """Exact values: int64 for integers, float64 otherwise (ml_dtypes converts exactly)."""
    return matrix.astype(np.int64) if matrix.dtype.kind in "iu" else matrix.astype(np.float64)


@dataclass(frozen=True)
class Tile:
    """An operand tile: format, rows (M or N) x k, major-ness, swizzle width, LBO, SBO, start."""

    fmt: str
    rows: int
    k: int
    mn_major: bool
    swizzle: int
    lbo: int
    sbo: int
    base: int = 0

    def place(self, matrix: NDArray[Any]) -> NDArray[np.uint8]:
        """Bytes from address 0 holding `matrix` in this tile's canonical layout."""
        element = matrix.dtype.itemsize
        if self.mn_major:
            return place_operand(
                matrix,
                lambda i, k: mn_major_byte_offset(i, k, element, self.lbo, self.sbo, self.swizzle),
                self.swizzle,
                self.base,
            )
        if self.swizzle:
            return place_kmajor_swizzled(matrix, self.swizzle, self.sbo, self.base)
        return place_operand(matrix, lambda i, k: kmajor_byte_offset(i, k * element, self.lbo, self.sbo), 0, self.base)

    def desc(self) -> int:
        return smem_desc(self.base, self.lbo, self.sbo, self.swizzle)


TILES = [
    Tile("f16", 128, 16, False, 128, 0, 1024),
    Tile("f16", 64, 16, False, 64, 0, 512, base=1024),
    Tile("f16", 32, 16, False, 32, 0, 256, base=256),
    Tile("e4m3", 64, 32, False, 128, 0, 1024, base=2048),
    Tile("tf32", 32, 8, False, 128, 0, 1024),
    Tile("s8", 16, 32, False, 32, 0, 256),
    Tile("f16", 32, 16, False, 0, 128, 256),
    Tile("bf16", 32, 16, False, 0, 512, 128, base=96),
    Tile("f16", 32, 16, True, 0, 512, 128),
    Tile("e4m3", 32, 32, True, 0, 128, 512, base=16),
    Tile("f16", 128, 16, True, 128, 2048, 1024),
    Tile("tf32", 32, 8, True, 64, 512, 1024, base=512),
    Tile("e5m2", 64, 32, True, 32, 256, 512, base=256),
    Tile("u8", 32, 32, True, 64, 512, 1024),
]


def tile_id(tile: Tile) -> str:
    major = "mn" if tile.mn_major else "k"
    return f"{tile.fmt}-{major}-sw{tile.swizzle}-lbo{tile.lbo}-sbo{tile.sbo}-at{tile.base}"


@pytest.mark.parametrize("tile", TILES, ids=tile_id)
def test_gather_operand_reads_the_canonical_layouts(tile: Tile) -> None:
    """`gather_operand` reads back a tile placed by the canonical layouts of CUTLASS
    `make_umma_desc` (docs/tcgen05_layouts.md §5), written independently in gemm_reference:
    K-major swizzled (rows of W bytes, 8-row atoms SBO apart), K-major without swizzle
    (core matrices 8 rows x 16 B; LBO between K chunks, SBO between 8-row groups),
    MN-major without swizzle ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)) and swizzled
    ((T,W/16,m),(8,k)):((1,T,LBO),((W/16)T,SBO)); swizzles XOR the absolute address.
    The LBO / SBO roles are CUTLASS's convention ([D/U] in docs/ptx-nvvm.md §1.7: not checked on
    hardware). The tf32 values are tf32-exact (whether the hardware truncates or rounds is [U])."""
    matrix = random_operand(tile.fmt, tile.rows, tile.k, np.random.default_rng(tile.rows + tile.k + tile.base))
    smem = np.zeros(16384, dtype=np.uint8)
    placed = tile.place(matrix)
    smem[: placed.size] = placed
    got = gather_operand(smem, SmemDescriptor.decode(tile.desc()), tile.rows, tile.k, tile.fmt, tile.mn_major)
    np.testing.assert_array_equal(got, numbers(matrix))


@pytest.mark.parametrize("base", [0, 1024])
def test_k_advanced_descriptor_in_a_128b_swizzled_tile(base: int) -> None:
    """DeepGEMM's `advance_umma_desc_lo` (docs/tcgen05_layouts.md §6): inside a 1024-byte-aligned
    128B-swizzled K-major tile of 64 f16 K values per row, start + 32·j bytes (LBO, SBO and
    swizzle unchanged) addresses K slice [16j, 16j + 16), because the swizzle XORs bits
    of the absolute address."""
    matrix = random_operand("f16", 128, 64, np.random.default_rng(base))
    smem = np.zeros(32768, dtype=np.uint8)
    placed = place_kmajor_swizzled(matrix, 128, 1024, base)
    smem[: placed.size] = placed
    for j in range(4):
        desc = SmemDescriptor.decode(smem_desc(base + 32 * j, 0, 1024, 128))
        got = gather_operand(smem, desc, 128, 16, "f16", False)
        np.testing.assert_array_equal(got, numbers(matrix[:, 16 * j : 16 * j + 16]))


# ======================================================================================
# 5. tcgen05.mma numerics (docs/ptx-nvvm.md §1.7; docs/tcgen05_layouts.md §3-4, §8)
# ======================================================================================

KIND_OF = {"f16": "f16", "bf16": "f16", "tf32": "tf32", "e4m3": "f8f6f4", "e5m2": "f8f6f4", "s8": "i8", "u8": "i8"}
AB_CODES = {"f16": 0, "bf16": 1, "tf32": 2, "e4m3": 0, "e5m2": 1, "u8": 0, "s8": 1}
"""A/B format codes (bits 7-9 / 10-12) per kind, docs/ptx-nvvm.md §1.7."""
D_CODES = {"f16": 0, "f32": 1, "s32": 2}
K_OF = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32}
"""K per instruction: 32 bytes of A / B (docs/ptx-nvvm.md §1.7)."""
A_AT, B_AT = 0, 32768
"""Where the operands go, relative to the machine's 1024-aligned `tile`."""


def instr_desc(
    m: int,
    n: int,
    d: str,
    a: str,
    b: str,
    *,
    negate_a: bool = False,
    negate_b: bool = False,
    a_mn_major: bool = False,
    b_mn_major: bool = False,
) -> int:
    """An instruction descriptor by the bit table of docs/ptx-nvvm.md §1.7: D format at 4-5, A / B
    format at 7-9 / 10-12, negate A / B at 13 / 14, A / B MN-major at 15 / 16, N >> 3 at
    17-22, M >> 4 at 24-28."""
    return (
        D_CODES[d] << 4
        | AB_CODES[a] << 7
        | AB_CODES[b] << 10
        | negate_a << 13
        | negate_b << 14
        | a_mn_major << 15
        | b_mn_major << 16
        | (n >> 3) << 17
        | (m >> 4) << 24
    )


def test_instr_desc_encoder_matches_the_spec_example() -> None:
    """docs/ptx-nvvm.md §1.7: f16 x f16 -> f32, both K-major, M=128, N=256 is 0x08400010."""
    assert instr_desc(128, 256, "f32", "f16", "f16") == 0x08400010


def place_kmajor_128b(m: Machine, matrix: NDArray[Any], offset: int) -> int:
    """Put `matrix` K-major with the 128B swizzle (SBO 1024) at `tile + offset`; its descriptor."""
    base = m.tile + offset
    m.put(place_kmajor_swizzled(matrix, 128, 1024, base), base)
    return smem_desc(base, 0, 1024, 128)


def mma(
    m: Machine,
    a: NDArray[Any],
    b: NDArray[Any],
    idesc: int,
    *,
    kind: str,
    accumulate: bool = False,
    d: int = 0,
    a_desc: int | None = None,
) -> None:
    """tcgen05.mma.cta_group::1 issued by lane 0 of warp 0: A (K-major 128B unless `a_desc`
    is given) and B (N x K, K-major 128B) from shared memory, D at TMEM address `d`."""
    if a_desc is None:
        a_desc = place_kmajor_128b(m, a, A_AT)
    b_desc = place_kmajor_128b(m, b, B_AT)
    warp = m.warps[0]
    with active(warp, [0]):
        tcgen05_mma(warp, ANY_OP, kind, 1, MmaOperands(d, a_desc, b_desc, idesc, accumulate))


def d_values(m: Machine, rows: int, n: int, d: str, column: int = 0) -> NDArray[Any]:
    """D rows x n from TMEM lanes 0.., as its format (f16: the low 16 bits of each cell)."""
    cells = m.cta.tmem[:rows, column : column + n]
    if d == "f16":
        return (cells & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float64)
    if d == "s32":
        return cells.view(np.int32).astype(np.int64)
    return cells.view(np.float32).astype(np.float64)


def assert_mma_result(
    got: NDArray[Any], a: NDArray[Any], b: NDArray[Any], d_fmt: str, *, c: NDArray[Any] | None = None, sign: float = 1.0
) -> None:
    """`got` is sign·A·Bᵀ (+ C) in the D format: exactly for s32; otherwise within the error
    of summing the K products (and C) in f32, K·2^-23·Σ|terms| (the hardware's internal
    precision and order are undocumented), plus one f16 rounding (2^-10 relative) for an
    f16 D."""
    old = np.zeros(got.shape) if c is None else numbers(c)
    exact = sign * (numbers(a) @ numbers(b).T) + old
    if d_fmt == "s32":
        np.testing.assert_array_equal(got, exact)
        return
    magnitude = np.abs(numbers(a)) @ np.abs(numbers(b)).T + np.abs(old)
    bound = (a.shape[1] + 1) * 2.0**-23 * magnitude
    if d_fmt == "f16":
        bound = bound + 2.0**-10 * np.abs(exact) + 2.0**-24
    excess = np.abs(got - exact) - bound
    assert (excess <= 0).all(), (
        f"{int((excess > 0).sum())} elements off; worst at {np.unravel_index(excess.argmax(), excess.shape)}"
    )


MMA_CASES = [
    ("f16", "f16", "f32"),
    ("bf16", "bf16", "f32"),
    ("f16", "f16", "f16"),
    ("bf16", "bf16", "f16"),
    ("tf32", "tf32", "f32"),
    ("e4m3", "e4m3", "f32"),
    ("e5m2", "e5m2", "f32"),
    ("e4m3", "e5m2", "f32"),
    ("e4m3", "e4m3", "f16"),
    ("s8", "s8", "s32"),
    ("u8", "u8", "s32"),
]


@pytest.mark.parametrize(("a_fmt", "b_fmt", "d_fmt"), MMA_CASES, ids=["-".join(c) for c in MMA_CASES])
def test_mma_matches_numpy(machine: Machine, a_fmt: str, b_fmt: str, d_fmt: str) -> None:
    """D = A·Bᵀ (B stored N x K) for each kind and format (docs/ptx-nvvm.md §1.7, docs/tcgen05_layouts.md §8),
    M=128 cta_group::1 (layout D: row m in lane m, column n), against float64 (int64)
    numpy on the values ml_dtypes decodes. f32 / s32 results must agree to f32 rounding
    (exactly for integers); an f16 D (low 16 bits of each cell, docs/tcgen05_layouts.md §3) to f16 rounding
    (the hardware's internal precision and summation order are undocumented). i8 sums
    stay inside int32 and f16 sums inside the f16 range here (overflow is undocumented)."""
    rng = np.random.default_rng(len(a_fmt) + 7 * len(d_fmt))
    kind, n = KIND_OF[a_fmt], 64
    a = random_operand(a_fmt, 128, K_OF[kind], rng, small=d_fmt == "f16")
    b = random_operand(b_fmt, n, K_OF[kind], rng, small=d_fmt == "f16")
    machine.cta.tmem[:] = np.uint32(0x7FC00000)
    mma(machine, a, b, instr_desc(128, n, d_fmt, a_fmt, b_fmt), kind=kind)
    assert_mma_result(d_values(machine, 128, n, d_fmt), a, b, d_fmt)
    np.testing.assert_array_equal(machine.cta.tmem[:, n : n + 8], np.uint32(0x7FC00000))  # beyond N: untouched


def test_mma_enable_input_d(machine: Machine) -> None:
    """docs/ptx-nvvm.md §1.7 / docs/tcgen05_layouts.md §8: with enable_input_d false D = A·B (the old D is
    ignored), with it true D = A·B + D."""
    rng = np.random.default_rng(3)
    a1, a2 = random_operand("f16", 128, 16, rng), random_operand("f16", 128, 16, rng)
    b1, b2 = random_operand("f16", 32, 16, rng), random_operand("f16", 32, 16, rng)
    idesc = instr_desc(128, 32, "f32", "f16", "f16")
    machine.cta.tmem[:, :32] = rng.standard_normal((128, 32)).astype(np.float32).view(np.uint32)
    mma(machine, a1, b1, idesc, kind="f16", accumulate=False)
    first = d_values(machine, 128, 32, "f32")
    assert_mma_result(first, a1, b1, "f32")
    mma(machine, a2, b2, idesc, kind="f16", accumulate=True)
    assert_mma_result(d_values(machine, 128, 32, "f32"), a2, b2, "f32", c=first)


def test_mma_f16_accumulate_into_f16(machine: Machine) -> None:
    """An f16 D is read back from (and written to) the low 16 bits of each cell when
    accumulating (PTX §9.7.16.10.4.1 via docs/tcgen05_layouts.md §3: 16-bit D elements are not packed)."""
    rng = np.random.default_rng(4)
    a, b = random_operand("f16", 128, 16, rng), random_operand("f16", 16, 16, rng)
    c = rng.standard_normal((128, 16)).astype(np.float16)
    machine.cta.tmem[:, :16] = c.view(np.uint16).astype(np.uint32)
    mma(machine, a, b, instr_desc(128, 16, "f16", "f16", "f16"), kind="f16", accumulate=True)
    assert_mma_result(d_values(machine, 128, 16, "f16"), a, b, "f16", c=c)


@pytest.mark.parametrize(("negate_a", "negate_b"), [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("fmt", ["f16", "e4m3"])
def test_mma_negate_bits(machine: Machine, negate_a: bool, negate_b: bool, fmt: str) -> None:
    """Instruction-descriptor bits 13 / 14 multiply A / B by -1 (docs/tcgen05_layouts.md §8; float kinds)."""
    rng = np.random.default_rng(5)
    kind = KIND_OF[fmt]
    a, b = random_operand(fmt, 128, K_OF[kind], rng), random_operand(fmt, 32, K_OF[kind], rng)
    mma(machine, a, b, instr_desc(128, 32, "f32", fmt, fmt, negate_a=negate_a, negate_b=negate_b), kind=kind)
    sign = -1.0 if negate_a != negate_b else 1.0
    assert_mma_result(d_values(machine, 128, 32, "f32"), a, b, "f32", sign=sign)


@pytest.mark.parametrize("lane_field", [0, 16])
def test_mma_m64_uses_data_path_layout_f(machine: Machine, lane_field: int) -> None:
    """M=64, cta_group::1 (PTX §9.7.16.10.5 layout F, docs/tcgen05_layouts.md §3): D row m is at TMEM lane
    m % 16 + 32·(m // 16) (+16 when the D address names lane 16, the other half of each
    quarter), column n; no other lane is written. N = 24 is valid for M = 64 (multiple of 8)."""
    rng = np.random.default_rng(6)
    a, b = random_operand("f16", 64, 16, rng), random_operand("f16", 24, 16, rng)
    sentinel = np.uint32(0xDEADBEEF)
    machine.cta.tmem[:] = sentinel
    column = 40
    mma(machine, a, b, instr_desc(64, 24, "f32", "f16", "f16"), kind="f16", d=lane_field << 16 | column)
    region = machine.cta.tmem[:, column : column + 24]
    lanes = [lane_field + row % 16 + 32 * (row // 16) for row in range(64)]
    assert_mma_result(region[lanes].view(np.float32).astype(np.float64), a, b, "f32")
    written = np.zeros(128, dtype=np.bool_)
    written[lanes] = True
    np.testing.assert_array_equal(region[~written], sentinel)
    np.testing.assert_array_equal(np.delete(machine.cta.tmem, np.s_[column : column + 24], axis=1), sentinel)


def test_mma_mn_major_a(machine: Machine) -> None:
    """Bit 15 (A MN-major): A is read from the MN-major 128B-swizzled canonical layout
    ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)) (docs/tcgen05_layouts.md §5)."""
    rng = np.random.default_rng(8)
    a, b = random_operand("f16", 128, 16, rng), random_operand("f16", 16, 16, rng)
    tile = Tile("f16", 128, 16, True, 128, 2048, 1024, base=machine.tile + 8192)
    machine.put(tile.place(a), tile.base)
    mma(machine, a, b, instr_desc(128, 16, "f32", "f16", "f16", a_mn_major=True), kind="f16", a_desc=tile.desc())
    assert_mma_result(d_values(machine, 128, 16, "f32"), a, b, "f32")


INVALID_IDESCS = [
    ("f16", instr_desc(48, 64, "f32", "f16", "f16"), "M=48"),
    ("f16", instr_desc(256, 64, "f32", "f16", "f16"), "M=256 with cta_group::1"),
    ("f16", instr_desc(32, 64, "f32", "f16", "f16"), "M=32 (.ws only)"),
    ("f16", instr_desc(128, 0, "f32", "f16", "f16"), "N=0"),
    ("f16", instr_desc(128, 264, "f32", "f16", "f16"), "N=264"),
    ("f16", instr_desc(128, 24, "f32", "f16", "f16"), "N=24 with M=128"),
    ("f16", instr_desc(128, 64, "f32", "tf32", "f16"), "tf32 A in kind::f16"),
    ("f16", instr_desc(128, 64, "s32", "f16", "f16"), "s32 D in kind::f16"),
    ("tf32", instr_desc(128, 64, "f16", "tf32", "tf32"), "f16 D in kind::tf32"),
    ("i8", instr_desc(128, 64, "f32", "s8", "s8"), "f32 D in kind::i8"),
    ("i8", instr_desc(128, 64, "s32", "s8", "s8", negate_a=True), "negate in kind::i8"),
]


@pytest.mark.parametrize(("kind", "idesc", "why"), INVALID_IDESCS, ids=[c[2] for c in INVALID_IDESCS])
def test_invalid_instruction_descriptor(machine: Machine, kind: str, idesc: int, why: str) -> None:
    """docs/ptx-nvvm.md §1.7 [D]: cta_group::1 M ∈ {64, 128}; N a multiple of 8 (M=64) or 16, up
    to 256; the A/B and D format codes valid for the kind (tf32: D f32 only; i8: D s32
    only; f16: D f16 or f32); negate bits only for float kinds (docs/tcgen05_layouts.md §4). ptxas does not
    check an immediate descriptor, so the interpreter must."""
    operand = np.zeros((128, 32), dtype=np.uint8)
    with pytest.raises(Hazard) as caught:
        mma(machine, operand, operand, idesc, kind=kind)
    assert caught.value.kind == "descriptor-invalid", why


def test_mma_d_address_lane_must_be_0_for_m128(machine: Machine) -> None:
    """PTX §9.7.16.10.5 (docs/tcgen05_layouts.md §3): layout D (M=128, cta_group::1) has lane alignment 0."""
    operand = np.zeros((128, 16), dtype=np.float16)
    with pytest.raises(Hazard) as caught:
        mma(machine, operand, operand, instr_desc(128, 16, "f32", "f16", "f16"), kind="f16", d=16 << 16)
    assert caught.value.kind == "descriptor-invalid"


def test_commit_arrives_once_when_the_mma_completes(machine: Machine) -> None:
    """docs/ptx-nvvm.md §1.6 [D]: tcgen05.commit makes one arrive (count 1) on the mbarrier once
    every earlier asynchronous tcgen05 op issued by this thread has completed: nothing
    arrives at the commit itself, one arrival when the tensor core finishes."""
    rng = np.random.default_rng(9)
    a, b = random_operand("f16", 128, 16, rng), random_operand("f16", 16, 16, rng)
    warp = machine.warps[0]
    with active(warp, [0]):
        mbarrier_init(warp, machine.bar(0), 2)
    mma(machine, a, b, instr_desc(128, 16, "f32", "f16", "f16"), kind="f16")
    with active(warp, [0]):
        tcgen05_commit(warp, ANY_OP, machine.bar(0), None, 1)
    state = machine.mbarrier(0)
    assert (state.pending, state.phase_bit) == (2, 0)
    machine.cluster.complete_commit(machine.cta)
    assert (state.pending, state.phase_bit) == (1, 0)


# ======================================================================================
# 6. Divergence (executor, scf)
# ======================================================================================

LANES = np.arange(WARP)


def test_if_runs_both_sides_and_merges_per_lane() -> None:
    """scf.if on a lane-varying condition: the then-side runs for exactly the lanes where it
    holds (here also a nested, again divergent if), the else-side for the others, and each
    lane gets the result of its own side."""
    module = kernel(
        """
    %c2 = arith.constant 2 : i32
    %c3 = arith.constant 3 : i32
    %c10 = arith.constant 10 : i32
    %c100 = arith.constant 100 : i32
    %lt = arith.cmpi ult, %tid, %c10 : i32
    %r = scf.if %lt -> (i32) {
      %bit = arith.andi %tid, %c1 : i32
      %odd = arith.cmpi ne, %bit, %c0 : i32
      %x = scf.if %odd -> (i32) {
        %y = arith.muli %tid, %c3 : i32
        scf.yield %y : i32
      } else {
        %y = arith.muli %tid, %c2 : i32
        scf.yield %y : i32
      }
"""
        + store_lane("%c1", "%side")
        + """
      scf.yield %x : i32
    } else {
      %x = arith.addi %tid, %c100 : i32
"""
        + store_lane("%c2", "%side")
        + """
      scf.yield %x : i32
    }
"""
        + store_lane("%r"),
        params="%out: !llvm.ptr<1>, %side: !llvm.ptr<1>",
    )
    out = run(module, out=np.zeros(WARP, np.int32), side=np.zeros(WARP, np.int32))
    np.testing.assert_array_equal(
        out["out"], np.where(LANES < 10, np.where(LANES % 2 == 1, 3 * LANES, 2 * LANES), LANES + 100)
    )
    np.testing.assert_array_equal(out["side"], np.where(LANES < 10, 1, 2))


def test_for_with_lane_varying_bounds() -> None:
    """scf.for with per-lane bounds (a strided loop `for i = tid; i < 40; i += 32`, and
    `for i = 0; i < tid`): each lane runs its own trip count, sees its own induction
    values and carries its own iter_args."""
    module = kernel(
        """
    %c40 = arith.constant 40 : i32
    %n = scf.for %i = %tid to %c40 step %c32 iter_args(%acc = %c0) -> (i32) : i32 {
"""
        + store_lane("%tid", "%visits", index="%i")
        + """
      %a = arith.addi %acc, %c1 : i32
      scf.yield %a : i32
    }
    %sum = scf.for %j = %c0 to %tid step %c1 iter_args(%s = %c0) -> (i32) : i32 {
      %t = arith.addi %s, %j : i32
      scf.yield %t : i32
    }
"""
        + store_lane("%n")
        + store_lane("%sum", "%sums"),
        params="%out: !llvm.ptr<1>, %visits: !llvm.ptr<1>, %sums: !llvm.ptr<1>",
    )
    out = run(module, out=np.zeros(WARP, np.int32), visits=np.full(40, -1, np.int32), sums=np.zeros(WARP, np.int32))
    np.testing.assert_array_equal(out["out"], [len(range(t, 40, 32)) for t in range(WARP)])
    np.testing.assert_array_equal(out["visits"], np.arange(40) % 32)
    np.testing.assert_array_equal(out["sums"], [sum(range(t)) for t in range(WARP)])


def test_while_with_per_lane_trip_count() -> None:
    """scf.while: each lane leaves when its own condition fails, with the values it had then
    (x += 3 while x < tid: n = ceil(tid / 3) trips, x = 3n)."""
    module = kernel(
        """
    %c3 = arith.constant 3 : i32
    %res:2 = scf.while (%x = %c0, %n = %c0) : (i32, i32) -> (i32, i32) {
      %go = arith.cmpi ult, %x, %tid : i32
      scf.condition(%go) %x, %n : i32, i32
    } do {
    ^bb0(%x2: i32, %n2: i32):
      %x3 = arith.addi %x2, %c3 : i32
      %n3 = arith.addi %n2, %c1 : i32
      scf.yield %x3, %n3 : i32, i32
    }
"""
        + store_lane("%res#0", "%xs")
        + store_lane("%res#1"),
        params="%out: !llvm.ptr<1>, %xs: !llvm.ptr<1>",
    )
    out = run(module, out=np.zeros(WARP, np.int32), xs=np.zeros(WARP, np.int32))
    trips = (LANES + 2) // 3
    np.testing.assert_array_equal(out["out"], trips)
    np.testing.assert_array_equal(out["xs"], 3 * trips)


@pytest.mark.parametrize(
    "op",
    [
        "nvvm.barrier0",
        "nvvm.barrier id = %c1 number_of_threads = %c32",
        "nvvm.tcgen05.alloc %slot, %c32 : !llvm.ptr<3>, i32",
        "nvvm.tcgen05.relinquish_alloc_permit",
        "nvvm.tcgen05.wait <load>",
    ],
    ids=["barrier0", "bar.sync", "tcgen05.alloc", "relinquish", "tcgen05.wait"],
)
def test_sync_aligned_op_in_a_divergent_branch(op: str) -> None:
    """`.sync.aligned` instructions (bar.sync, tcgen05.alloc / relinquish / wait) must be
    executed by every thread of the warp (docs/ptx-nvvm.md §1.3, §1.5): inside `if tid < 16`
    they are a hazard."""
    module = kernel(
        f"""
    %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
    %c16 = arith.constant 16 : i32
    %lt = arith.cmpi ult, %tid, %c16 : i32
    scf.if %lt {{
      {op}
    }}
""",
        globals_=[SLOT],
    )
    assert run_hazard(module, out=np.zeros(1, np.int32)).kind == "divergent-sync-aligned"


def test_elect_sync_picks_exactly_one_lane() -> None:
    """elect.sync elects one leader among the threads of its member mask (docs/ptx-nvvm.md §1.9):
    with the full mask exactly one lane is true; with mask 0xFFFF0000 exactly one, and it is
    one of lanes 16-31."""
    module = kernel(
        """
    %upper = arith.constant -65536 : i32
    %e = nvvm.elect.sync -> i1
    %f = nvvm.elect.sync %upper -> i1
    %ei = arith.extui %e : i1 to i32
    %fi = arith.extui %f : i1 to i32
"""
        + store_lane("%ei")
        + store_lane("%fi", "%upper_out"),
        params="%out: !llvm.ptr<1>, %upper_out: !llvm.ptr<1>",
    )
    out = run(module, out=np.zeros(WARP, np.int32), upper_out=np.zeros(WARP, np.int32))
    assert out["out"].sum() == 1
    assert out["upper_out"].sum() == 1
    assert out["upper_out"][:16].sum() == 0


# ======================================================================================
# 7. Integer arithmetic as the hardware does it
# ======================================================================================

INT_OPS = ("addi", "subi", "muli", "divsi", "remsi", "divui", "remui", "shli", "shrui", "shrsi")
SHIFTS = ("shli", "shrui", "shrsi")


def int_expected(op: str, a: int, b: int, shift: int, width: int) -> int:
    """Two's-complement `width`-bit semantics in Python integers: add / sub / mul wrap;
    divsi / remsi truncate toward zero (C, PTX div.s / rem.s); the u-forms use the unsigned
    reading; shifts take the amount as unsigned and clamp amounts >= width (PTX shl / shr:
    0, or the sign fill for shr.s). Returns the unsigned bit pattern."""
    modulus = 1 << width
    ua, ub, amount = a % modulus, b % modulus, shift % modulus
    match op:
        case "addi":
            r = a + b
        case "subi":
            r = a - b
        case "muli":
            r = a * b
        case "divsi" | "remsi":
            quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            r = quotient if op == "divsi" else a - b * quotient
        case "divui":
            r = ua // ub
        case "remui":
            r = ua % ub
        case "shli":
            r = ua << amount if amount < width else 0
        case "shrui":
            r = ua >> amount if amount < width else 0
        case _:
            r = a >> amount  # Python's >> on a negative int fills with the sign
    return r % modulus


def arith_kernel(width: int) -> ModuleOp:
    """`out[k, tid]` = op_k(lhs[tid], rhs[tid] or shift[tid]) with lane-varying operands, and
    `uni[k, j]` the same with warp-uniform operands (loaded at a loop index)."""
    t = f"i{width}"

    def ops(index: str, buffer: str) -> str:
        lines = [
            f"    %pa{index} = llvm.getelementptr %lhs[%{index}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {t}",
            f"    %a{index} = llvm.load %pa{index} : !llvm.ptr<1> -> {t}",
            f"    %pb{index} = llvm.getelementptr %rhs[%{index}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {t}",
            f"    %b{index} = llvm.load %pb{index} : !llvm.ptr<1> -> {t}",
            f"    %ps{index} = llvm.getelementptr %shift[%{index}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {t}",
            f"    %s{index} = llvm.load %ps{index} : !llvm.ptr<1> -> {t}",
        ]
        for k, op in enumerate(INT_OPS):
            rhs = f"%s{index}" if op in SHIFTS else f"%b{index}"
            lines += [
                f"    %r{k}{index} = arith.{op} %a{index}, {rhs} : {t}",
                f"    %o{k}{index} = arith.constant {k * WARP} : i32",
                f"    %i{k}{index} = arith.addi %{index}, %o{k}{index} : i32",
            ]
            lines.append(store_lane(f"%r{k}{index}", buffer, t, f"%i{k}{index}"))
        return "\n".join(lines)

    body = ops("tid", "%out") + "\n    scf.for %j = %c0 to %c32 step %c1 : i32 {\n" + ops("j", "%uni") + "\n    }\n"
    params = ", ".join(f"%{name}: !llvm.ptr<1>" for name in ("out", "uni", "lhs", "rhs", "shift"))
    return kernel(body, params=params)


def arith_inputs(width: int) -> tuple[list[int], list[int], list[int]]:
    """32 (a, b, shift) triples: extremes, sign combinations, random values; b != 0 and
    never (MIN, -1) (undefined); shift amounts around the width, huge and 'negative'."""
    lo, hi = -(1 << (width - 1)), (1 << (width - 1)) - 1
    a = [lo, hi, -1, 0, 1, 7, -7, 7, -7, 100, -100, hi, lo, lo + 1, 12345, -12345]
    b = [3, -1, 5, 9, -1, 2, 2, -2, -2, -7, 7, hi, hi, -1, 1 << (width // 2), lo]
    shifts = [0, 1, width - 1, width, width + 1, 40, 63, 64, 255, -1, 5, 17, 3, width - 2, 31, 1 << (width - 1)]
    rng = np.random.default_rng(width)
    for _ in range(WARP - len(a)):
        a.append(int(rng.integers(lo, hi, endpoint=True)))
        b.append(int(rng.integers(1, 1 << 20)) * (1 if rng.random() < 0.5 else -1))
        shifts.append(int(rng.integers(0, width + 8)))
    return a, b, shifts


@pytest.mark.parametrize("width", [32, 64])
def test_integer_arithmetic(width: int) -> None:
    """arith on iN with the hardware's semantics, for lane-varying and warp-uniform operands
    (two representations in the interpreter): wrap-around on addi / subi / muli, divsi and
    remsi truncating toward zero, divui / remui unsigned, shrsi filling with the sign, and
    shifts by >= N giving 0 (sign fill for shrsi) as PTX shl / shr clamp the amount. (MLIR's
    arith makes such shifts poison; the interpreter follows PTX, which the programs run on.)"""
    a, b, shifts = arith_inputs(width)
    dtype = np.int32 if width == 32 else np.int64
    unsigned = np.uint32 if width == 32 else np.uint64
    out = run(
        arith_kernel(width),
        out=np.zeros((len(INT_OPS), WARP), unsigned),
        uni=np.zeros((len(INT_OPS), WARP), unsigned),
        lhs=np.array(a, dtype),
        rhs=np.array(b, dtype),
        shift=np.array([s % (1 << width) for s in shifts], unsigned),
    )
    expected = np.array(
        [[int_expected(op, a[i], b[i], shifts[i], width) for i in range(WARP)] for op in INT_OPS], dtype=unsigned
    )
    for name in ("out", "uni"):
        for k, op in enumerate(INT_OPS):
            np.testing.assert_array_equal(out[name][k], expected[k], err_msg=f"{name}: arith.{op} i{width}")


# ======================================================================================
# 8. Named barriers (bar.sync / bar.arrive with a thread count)
# ======================================================================================


def named_barrier_kernel(first: str, second: str) -> ModuleOp:
    """Warp 0 stores 42 to shared @val, then runs `first`; warp 1 runs `second`, then loads
    @val into out[tid]; warp 2 (if any) does neither."""
    return kernel(
        f"""
    %val = llvm.mlir.addressof @val : !llvm.ptr<3>
    %c5 = arith.constant 5 : i32
    %c42 = arith.constant 42 : i32
    %c64 = arith.constant 64 : i32
    %c96 = arith.constant 96 : i32
    %warp = arith.shrui %tid, %c5 : i32
    %w0 = arith.cmpi eq, %warp, %c0 : i32
    %w1 = arith.cmpi eq, %warp, %c1 : i32
    scf.if %w0 {{
      llvm.store %c42, %val : i32, !llvm.ptr<3>
      {first}
    }}
    scf.if %w1 {{
      {second}
      %x = llvm.load %val : !llvm.ptr<3> -> i32
"""
        + store_lane("%x")
        + "    }\n",
        params="%out: !llvm.ptr<1>, %n: i32",
        globals_=[shared("val", "i32", 4)],
    )


SYNC_64 = "nvvm.barrier id = %c1 number_of_threads = %c64"


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
@pytest.mark.parametrize(
    "first", [SYNC_64, "nvvm.barrier.arrive id = %c1 number_of_threads = %c64"], ids=["bar.sync", "bar.arrive"]
)
def test_named_barrier_releases_after_its_thread_count(first: str, schedule: str, seed: int) -> None:
    """`bar.sync 1, 64` (docs/semantics.md §1.2) releases once 64 threads (two whole warps) have
    arrived, not the whole CTA: warp 2 never takes part, yet warps 0 and 1 get through;
    and warp 1 passes only after warp 0 arrived, so it reads warp 0's store under every
    schedule. `bar.arrive` counts towards the barrier without waiting."""
    out = run(
        named_barrier_kernel(first, SYNC_64), block=96, schedule=schedule, seed=seed, out=np.zeros(64, np.int32), n=0
    )
    np.testing.assert_array_equal(out["out"][32:], 42)


def test_named_barrier_short_of_threads_deadlocks() -> None:
    """With only one warp (32 threads) at `bar.sync 1, 64`, it never releases."""
    (blocked,) = run_deadlock(named_barrier_kernel(SYNC_64, ""), block=32, out=np.zeros(64, np.int32), n=0).blocked
    assert blocked.name == "warp 0"
    assert "named barrier 1" in blocked.reason
    assert "32 of 64 threads" in blocked.reason


def test_named_barrier_count_mismatch_is_a_hazard() -> None:
    """Every thread arriving at a barrier instance must give the same thread count (PTX
    bar.sync); warps 0 and 1 disagree (64 vs 96)."""
    module = named_barrier_kernel(SYNC_64, "nvvm.barrier id = %c1 number_of_threads = %c96")
    assert run_hazard(module, block=96, out=np.zeros(64, np.int32), n=0).kind == "barrier-count-mismatch"


def test_named_barrier_count_must_be_whole_warps() -> None:
    """PTX bar.sync: the thread count must be a multiple of the warp size. A constant 48 is
    rejected by the verifier; one only known at run time (a kernel argument) is a hazard."""
    module = named_barrier_kernel("nvvm.barrier id = %c1 number_of_threads = %n", "")
    assert run_hazard(module, block=32, out=np.zeros(64, np.int32), n=48).kind == "barrier-count-invalid"


# ======================================================================================
# Ordinary memory: initialisation and data races (races.py); mbarrier phase overrun
# ======================================================================================

VAL = shared("val", "i32", 4)
WARP_IS = """
    %c2 = arith.constant 2 : i32
    %c64 = arith.constant 64 : i32
    %w = arith.divui %tid, %c32 : i32
    %w0 = arith.cmpi eq, %w, %c0 : i32
    %w1 = arith.cmpi eq, %w, %c1 : i32
    %w2 = arith.cmpi eq, %w, %c2 : i32
    %val = llvm.mlir.addressof @val : !llvm.ptr<3>
"""


def test_shared_memory_is_uninitialised_until_written() -> None:
    """PTX: `.shared` variables cannot be initialised and start undefined; a load of a
    byte no store wrote is reported, naming the variable."""
    module = kernel(WARP_IS + "    %x = llvm.load %val : !llvm.ptr<3> -> i32\n" + store_lane("%x"), globals_=[VAL])
    hazard = run_hazard(module, out=np.zeros(WARP, np.int32))
    assert hazard.kind == "smem-read-uninitialized"
    assert "@val+0" in hazard.message
    assert "warp 0" in hazard.message


def test_a_partly_written_word_is_uninitialised() -> None:
    """Bytes 2-3 of @val were never written: the 4-byte load reads undefined bytes."""
    body = (
        WARP_IS
        + """
    %c7 = arith.constant 7 : i16
    llvm.store %c7, %val : i16, !llvm.ptr<3>
    %x = llvm.load %val : !llvm.ptr<3> -> i32
"""
        + store_lane("%x")
    )
    assert run_hazard(kernel(body, globals_=[VAL]), out=np.zeros(WARP, np.int32)).kind == "smem-read-uninitialized"


def test_kernel_buffers_are_initialised_by_the_host() -> None:
    """`--arg` buffers hold the host's data: reading them before any store is fine."""
    body = """
    %p = llvm.getelementptr %out[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
    %x = llvm.load %p : !llvm.ptr<1> -> i32
    %y = arith.addi %x, %c1 : i32
    llvm.store %y, %p : i32, !llvm.ptr<1>
"""
    np.testing.assert_array_equal(run(kernel(body), out=np.arange(WARP, dtype=np.int32))["out"], np.arange(1, 33))


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_unordered_writes_of_two_warps_are_a_race(schedule: str, seed: int) -> None:
    """PTX memory model (ISA §8.7): two writes of one location by different threads,
    unordered by any synchronisation, are a data race, whichever runs first."""
    body = WARP_IS + "    llvm.store %w, %val : i32, !llvm.ptr<3>\n"
    hazard = run_hazard_schedule(kernel(body, globals_=[VAL]), 64, schedule, seed)
    assert hazard.kind == "smem-data-race"
    assert re.search(
        r"llvm.store by warp [01] writes shared address 0x[0-9a-f]+ \(@val\+0\), which llvm.store", hazard.message
    )
    assert [text for _, text in hazard.related] in (
        ["the earlier access: llvm.store by warp 0 (write)"],
        ["the earlier access: llvm.store by warp 1 (write)"],
    )


def test_lanes_of_one_warp_do_not_race_with_each_other() -> None:
    """All 32 lanes store to the same word in one instruction, then load it: one warp,
    one instruction, no race (the value is some lane's)."""
    body = WARP_IS + "    llvm.store %tid, %val : i32, !llvm.ptr<3>\n    %x = llvm.load %val : !llvm.ptr<3> -> i32\n"
    body += store_lane("%x")
    out = run(kernel(body, globals_=[VAL]), out=np.zeros(WARP, np.int32))["out"]
    assert len(set(out.tolist())) == 1
    assert 0 <= out[0] < WARP


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
@pytest.mark.parametrize(
    "sync",
    [
        "nvvm.barrier0",
        "nvvm.barrier id = %c1 number_of_threads = %c64",
    ],
    ids=["bar.sync 0", "bar.sync 1, 64"],
)
def test_a_barrier_orders_a_store_before_another_warps_load(sync: str, schedule: str, seed: int) -> None:
    """bar.sync has release/acquire semantics among its participants (PTX ISA, barrier):
    warp 0's store is visible to, and ordered before, warp 1's load."""
    body = (
        WARP_IS
        + f"""
    scf.if %w0 {{
      %c42 = arith.constant 42 : i32
      llvm.store %c42, %val : i32, !llvm.ptr<3>
    }}
    {sync}
    %x = llvm.load %val : !llvm.ptr<3> -> i32
"""
        + store_lane("%x")
    )
    out = run(kernel(body, globals_=[VAL]), block=64, schedule=schedule, seed=seed, out=np.zeros(64, np.int32))
    np.testing.assert_array_equal(out["out"], 42)


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_a_store_after_the_release_is_not_published_by_it(schedule: str, seed: int) -> None:
    """Warp 0 stores, arrives on named barrier 1 (bar.arrive: release), and stores again;
    warp 1 syncs and loads. The second store is not ordered before the load: a race
    (the release publishes only what preceded it)."""
    body = (
        WARP_IS
        + """
    scf.if %w0 {
      llvm.store %c1, %val : i32, !llvm.ptr<3>
      nvvm.barrier.arrive id = %c1 number_of_threads = %c64
      llvm.store %c32, %val : i32, !llvm.ptr<3>
    }
    scf.if %w1 {
      nvvm.barrier id = %c1 number_of_threads = %c64
      %x = llvm.load %val : !llvm.ptr<3> -> i32
    }
"""
    )
    hazard = run_hazard_schedule(kernel(body, globals_=[VAL]), 64, schedule, seed)
    assert hazard.kind == "smem-data-race"


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_a_write_races_with_a_read_it_is_not_ordered_after(schedule: str, seed: int) -> None:
    """Warps 0 and 1 read out[0] (the host's value); warp 2 waits on an mbarrier only warp
    0 arrives on, then writes out[0]: ordered after warp 0's read, not warp 1's."""
    body = (
        WARP_IS
        + """
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %t0 {
      nvvm.mbarrier.init %bar, %c32 : !llvm.ptr<3>, i32
    }
    nvvm.barrier0
    %lt2 = arith.cmpi ult, %w, %c2 : i32
    scf.if %lt2 {
      %x = llvm.load %out : !llvm.ptr<1> -> i32
    }
    scf.if %w0 {
      nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
    }
    scf.if %w2 {
      nvvm.mbarrier.try_wait.parity %bar, %c0, %c0 : !llvm.ptr<3>, i32, i32
      llvm.store %c1, %out : i32, !llvm.ptr<1>
    }
"""
    )
    hazard = run_hazard_schedule(kernel(body, globals_=[BAR, VAL]), 96, schedule, seed)
    assert hazard.kind == "global-data-race"
    assert "warp 1" in hazard.message
    assert "warp 2" in hazard.message
    assert "buffer 'out' + 0" in hazard.message


def test_clusters_of_a_grid_are_unordered() -> None:
    """The clusters of a grid run concurrently on the hardware: two CTAs (clusters of 1)
    writing their ctaid into one word race (the word keeps the one that lands last);
    writing their own words does not. Both writing the same value (%tid of the last lane,
    31) is a same-value race: noted by default, a race under the strict race policy."""
    ctaid = kernel("""
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    llvm.store %cta, %out : i32, !llvm.ptr<1>
""")
    with pytest.raises(KernelHazard) as caught:
        run_kernel(ctaid, "k", block=32, grid=2, args={"out": np.zeros(1, np.int32)})
    assert caught.value.kind == "global-data-race"
    assert "cluster that ran earlier" in caught.value.message
    same = kernel("    llvm.store %tid, %out : i32, !llvm.ptr<1>\n")
    result = run_kernel(same, "k", block=32, grid=2, args={"out": np.zeros(1, np.int32)})
    assert result.outputs["out"].tolist() == [31]
    assert result.report.same_value_races == 1
    with pytest.raises(KernelHazard) as caught:
        run_kernel(same, "k", block=32, grid=2, args={"out": np.zeros(1, np.int32)}, race_policy="strict")
    assert caught.value.kind == "global-data-race"
    assert "cluster that ran earlier" in caught.value.message
    assert "both write the same bytes" in caught.value.message
    own = kernel("""
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %p = llvm.getelementptr %out[%cta] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
    llvm.store %tid, %p : i32, !llvm.ptr<1>
""")
    run_kernel(own, "k", block=32, grid=2, args={"out": np.zeros(2, np.int32)})


@pytest.mark.parametrize("last_reads", [True, False])
def test_a_write_races_with_the_reads_of_earlier_clusters(last_reads: bool) -> None:
    """Reads are kept across the clusters of a grid: CTAs 0 and 1 read out[0] (two warps
    each, unordered), CTA 2's warps read it again (or not), then its warp 1 writes it
    after a barrier. The barrier orders CTA 2's own reads before the write, nothing orders
    the earlier clusters' reads: the race names the first of them, (CTA 0's) warp 0's."""
    module = kernel(f"""
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %c2 = arith.constant 2 : i32
    %reads = arith.cmpi {"ule" if last_reads else "ult"}, %cta, %c2 : i32
    scf.if %reads {{
      %x = llvm.load %out : !llvm.ptr<1> -> i32
    }}
    nvvm.barrier0
    %last = arith.cmpi eq, %cta, %c2 : i32
    %w1 = arith.cmpi eq, %tid, %c32 : i32
    %writer = arith.andi %last, %w1 : i1
    scf.if %writer {{
      llvm.store %c1, %out : i32, !llvm.ptr<1>
    }}
""")
    with pytest.raises(KernelHazard) as caught:
        run_kernel(module, "k", block=64, grid=3, args={"out": np.zeros(1, np.int32)})
    assert caught.value.kind == "global-data-race"
    message = caught.value.message
    assert message.startswith("llvm.store by warp 1 writes address"), message
    assert "which llvm.load by warp 0 read in a cluster that ran earlier" in message, message


_SREGS_PER_AXIS = ("tid", "ntid", "ctaid", "nctaid", "cluster.ctaid", "cluster.nctaid", "clusterid", "nclusterid")
_SREGS_SCALAR = (
    "laneid", "warpsize", "cluster.ctarank", "cluster.nctarank",
    "lanemask.eq", "lanemask.lt", "lanemask.le", "lanemask.gt", "lanemask.ge",
)  # fmt: skip


def _sreg_expected(name: str, tid: tuple[int, int, int], ctaid: tuple[int, int, int]) -> int:
    """PTX ISA 9.0, "Special Registers", for block (64, 2, 1), grid (4, 2, 1), cluster (2, 1, 1)."""
    block, grid, cluster = (64, 2, 1), (4, 2, 1), (2, 1, 1)
    base, _, axis = name.rpartition(".")
    if axis in ("x", "y", "z"):
        i = "xyz".index(axis)
        return {
            "tid": tid[i], "ntid": block[i], "ctaid": ctaid[i], "nctaid": grid[i],
            "cluster.ctaid": ctaid[i] % cluster[i], "cluster.nctaid": cluster[i],
            "clusterid": ctaid[i] // cluster[i], "nclusterid": grid[i] // cluster[i],
        }[base]  # fmt: skip
    lane = (tid[0] + tid[1] * block[0]) % 32  # a warp is 32 consecutive linear thread ids
    in_cluster = [c % n for c, n in zip(ctaid, cluster, strict=True)]
    return {
        "laneid": lane,
        "warpsize": 32,
        "cluster.ctarank": in_cluster[0] + in_cluster[1] * cluster[0] + in_cluster[2] * cluster[0] * cluster[1],
        "cluster.nctarank": cluster[0] * cluster[1] * cluster[2],
        "lanemask.eq": 1 << lane,
        "lanemask.lt": (1 << lane) - 1,
        "lanemask.le": (1 << (lane + 1)) - 1,
        "lanemask.gt": 0xFFFFFFFF & ~((1 << (lane + 1)) - 1),
        "lanemask.ge": 0xFFFFFFFF & ~((1 << lane) - 1),
    }[name]


def test_special_registers_hold_the_ptx_isa_values() -> None:
    """Every thread of a 2-CTA-cluster grid stores each special register the PTX ISA
    defines for a launch (not the model's choices: %warpid, %nwarpid, clocks, %smid)."""
    names = [f"{r}.{a}" for r in _SREGS_PER_AXIS for a in "xyz"] + list(_SREGS_SCALAR)
    body = """
    %tx = nvvm.read.ptx.sreg.tid.x : i32
    %ty = nvvm.read.ptx.sreg.tid.y : i32
    %cx = nvvm.read.ptx.sreg.ctaid.x : i32
    %cy = nvvm.read.ptx.sreg.ctaid.y : i32
    %c4 = arith.constant 4 : i32
    %c64 = arith.constant 64 : i32
    %c128 = arith.constant 128 : i32
    %cn = arith.constant NREGS : i32
    %cta0 = arith.muli %cy, %c4 : i32
    %cta = arith.addi %cta0, %cx : i32
    %t0 = arith.muli %ty, %c64 : i32
    %t1 = arith.addi %t0, %tx : i32
    %g0 = arith.muli %cta, %c128 : i32
    %g1 = arith.addi %g0, %t1 : i32
    %base = arith.muli %g1, %cn : i32
""".replace("NREGS", str(len(names)))
    for k, name in enumerate(names):
        body += f"""    %r{k} = nvvm.read.ptx.sreg.{name} : i32
    %k{k} = arith.constant {k} : i32
    %i{k} = arith.addi %base, %k{k} : i32
    %p{k} = llvm.getelementptr %out[%i{k}] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
    llvm.store %r{k}, %p{k} : i32, !llvm.ptr<1>
"""
    threads, ctas = 128, 8
    out = run_kernel(
        kernel(body), "k", block=(64, 2, 1), grid=(4, 2, 1), cluster=(2, 1, 1),
        args={"out": np.zeros(threads * ctas * len(names), np.uint32)},
    ).outputs["out"].reshape(ctas, threads, len(names))  # fmt: skip
    for cta in range(ctas):
        for thread in range(threads):
            tid, ctaid = (thread % 64, thread // 64, 0), (cta % 4, cta // 4, 0)
            expected = [_sreg_expected(name, tid, ctaid) for name in names]
            assert out[cta, thread].tolist() == expected, (tid, ctaid)


def test_every_special_register_op_is_modelled_under_its_ptx_name() -> None:
    """Which register an op reads is derived from the op's name; PTX's spelling of it
    (PTX ISA, "Special Registers") for a sample, and every `nvvm.read.ptx.sreg.*` op of
    the dialect runs. (The backend's spelling is compared with llc-22's output.)"""
    from xdsl_tmem.dialects import nvvm

    ops = [op for op in nvvm.NVVM.operations if issubclass(op, nvvm.SpecialRegisterOp)]
    assert {op for op in nvvm.NVVM.operations if op.name.startswith("nvvm.read.ptx.sreg.")} == set(ops)
    spelled = {op.ptx_register() for op in ops}
    assert {"%tid.x", "%cluster_ctaid.y", "%cluster_nctarank", "%lanemask_eq", "%clock64", "%nwarpid"} <= spelled
    assert len(spelled) == len(ops)
    body = "".join(f"    %s{k} = {op.name} : i32\n" for k, op in enumerate(ops))
    run(kernel(body + store_lane(f"%s{len(ops) - 1}")), out=np.zeros(WARP, np.int32))


def run_hazard_schedule(module: ModuleOp, block: int, schedule: str, seed: int) -> KernelHazard:
    with pytest.raises(KernelHazard) as caught:
        run(module, block, schedule=schedule, seed=seed, out=np.zeros(WARP, np.int32))
    return caught.value


def _clock(*values: int) -> NDArray[np.int64]:
    return np.array(values, dtype=np.int64)


def test_arrivals_ordered_after_the_previous_phase_are_fine() -> None:
    """A ring protocol: each arrival of phase p + 1 comes from a thread that observed the
    completion of phase p, so its clock covers the clocks phase p released."""
    bar = MBarrier(0, 0, expected=2, pending=2, name="@b")
    bar.arrive(1, _clock(1, 0), "A")
    bar.arrive(1, _clock(0, 1), "B")  # completes phase 0, releasing (1, 1)
    bar.arrive(1, _clock(2, 1), "A")  # A waited on phase 0: it knows (1, 1)
    bar.arrive(1, _clock(1, 2), "B")
    assert bar.completed == 2


def test_phase_0_arrivals_are_exempt() -> None:
    """The first phase has no phase before it: its arrivals are not checked."""
    bar = MBarrier(0, 0, expected=2, pending=2, name="@b")
    bar.arrive(1, _clock(5, 0), "A")
    bar.arrive(1, _clock(0, 5), "B")
    assert bar.completed == 1


def test_an_arrival_concurrent_with_the_completion_overruns_the_phase() -> None:
    """Count 2 for three arriving threads: A and B complete phase 0; C, which did not
    observe that completion (its clock does not cover B's), lands in phase 1."""
    bar = MBarrier(0, 0, expected=2, pending=2, name="@b")
    first, second = ModuleOp([]), ModuleOp([])
    bar.arrive(1, _clock(1, 0, 0), "A", first)
    bar.arrive(1, _clock(0, 1, 0), "B", second)
    with pytest.raises(Hazard) as caught:
        bar.arrive(1, _clock(1, 0, 1), "C")
    assert caught.value.kind == "mbarrier-phase-overrun"
    assert "C arrives on mbarrier @b (expected count 2)" in caught.value.message
    assert "not ordered after the completion of phase 0" in caught.value.message
    assert [op for op, _ in caught.value.related] == [first, second]


def test_one_instruction_arriving_past_the_pending_count_overruns_the_phase() -> None:
    """The lanes of one instruction are unordered with each other: 32 arrivals on a
    barrier with 31 pending complete the phase with 31 and put the 32nd in the next."""
    bar = MBarrier(0, 0, expected=31, pending=31, name="@b")
    with pytest.raises(Hazard) as caught:
        bar.arrive(32, _clock(1), "warp 3 lanes 0-31", None, since=0)
    assert caught.value.kind == "mbarrier-phase-overrun"
    assert "1 of them lands in phase 1" in caught.value.message


def test_a_warp_arriving_on_a_wrong_count_in_a_kernel() -> None:
    """mbarrier.init with count 16 and a whole warp (32 threads) arriving: the phase
    completes after 16 lanes and the other 16 overrun it."""
    body = """
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %c16 = arith.constant 16 : i32
    %t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %t0 {
      nvvm.mbarrier.init %bar, %c16 : !llvm.ptr<3>, i32
    }
    nvvm.barrier0
    nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
"""
    hazard = run_hazard(kernel(body, globals_=[BAR]), out=np.zeros(WARP, np.int32))
    assert hazard.kind == "mbarrier-phase-overrun"
    assert "16 of them land in phase 1" in hazard.message


def test_arrivers_name_follows_the_live_lanes(machine: Machine) -> None:
    """An arrival by all live lanes is named once per warp; when lanes exit (the PTX level
    replaces `live` and `live_lanes`), the name is the remaining lanes', and a divergent
    arrival names its own lanes."""
    warp = machine.warps[1]
    assert _arrivers(warp, warp.active_lanes()) == "warp 1 lanes 0-31"
    assert _arrivers(warp, warp.active_lanes()) == "warp 1 lanes 0-31"
    with active(warp, [2, 3, 7]):
        assert _arrivers(warp, warp.active_lanes()) == "warp 1 lanes 2-3,7"
    with active(warp, [5]):
        assert _arrivers(warp, warp.active_lanes()) == "warp 1 lane 5"
    warp.live = np.arange(WARP) < 16
    warp.live_lanes = list(range(16))
    warp.mask = warp.live
    assert _arrivers(warp, warp.active_lanes()) == "warp 1 lanes 0-15"
