"""The tmem → nvvm lowering, checked by upstream MLIR 22, llc-22, ptxas and the spec.

* Every example, under both fence policies, lowers to text that mlir-opt-22 parses and
  that mlir-opt-22 → mlir-translate-22 → llc-22 → ptxas turns into an sm_100a cubin.
* The barrier traffic of the lowered pipeline reproduces the worked example of
  semantics.md §8.5 (cta_group 1, 2 stages, 3 tiles): which barrier each wait is on,
  with which parity, and which waits pass at once and which block.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from support import EXAMPLES, OptResult, ptxas_assemble
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.parser import Parser

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.tools.external import Upstream
from xdsl_tmem.tools.opt import TmemOptMain

RunOpt = Callable[..., OptResult]
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.mlir"))
POLICIES = ("strict", "mojo")


def lower(run_opt: RunOpt, path: Path, policy: str) -> str:
    result = run_opt(None, "-p", f"lower-tmem{{fence-policy={policy}}}", path=path)
    assert result.code == 0, result.err
    return result.out


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.name)
def test_lowered_example_compiles_upstream_and_assembles(
    run_opt: RunOpt, upstream: Upstream, ptxas: str, tmp_path: Path, example: Path, policy: str
) -> None:
    lowered = lower(run_opt, example, policy)
    assert "tmem." not in lowered
    upstream.parse(lowered)
    ptx = upstream.to_ptx(lowered)
    # The pipeline's tcgen05 traffic is all there ...
    for instruction in ("tcgen05.alloc", "tcgen05.commit", "tcgen05.ld", "tcgen05.dealloc", "mbarrier.try_wait"):
        assert instruction in ptx
    # ... with fences exactly under the strict policy.
    assert ("tcgen05.fence::" in ptx) == (policy == "strict")
    ptxas_assemble(ptxas, ptx, tmp_path)


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.name)
def test_lowered_generic_form_is_read_by_upstream(run_opt: RunOpt, upstream: Upstream, example: Path) -> None:
    result = run_opt(None, "-p", "lower-tmem", "--print-op-generic", path=example)
    assert result.code == 0, result.err
    upstream.parse(result.out)


# --------------------------------------------------------------------------------------
# semantics.md §8.5: the barrier traffic of a 3-tile, 2-stage run
# --------------------------------------------------------------------------------------

PIPELINE = """
func.func @mma(%bars: !llvm.ptr<3>, %slot: !llvm.ptr<3>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %a = tmem.from_shared %slot : !tmem.allocation<1, 512>
  %r0 = tmem.output_ring.create %bars, %a : !tmem.allocation<1, 512> -> !tmem.output_ring<2, 256, 1>
  %end = scf.for %t = %c0 to %n step %c1 iter_args(%ring = %r0) -> (!tmem.output_ring<2, 256, 1>) : i32 {
    %next = tmem.output_ring.producer %ring : !tmem.output_ring<2, 256, 1> {
    ^bb0(%s: !tmem.tmem_stage<2, 256, 1>):
      tmem.yield
    }
    scf.yield %next : !tmem.output_ring<2, 256, 1>
  }
  func.return
}
func.func @epilogue(%bars: !llvm.ptr<3>, %slot: !llvm.ptr<3>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %a = tmem.from_shared %slot : !tmem.allocation<1, 512>
  %r0 = tmem.output_ring.create %bars, %a : !tmem.allocation<1, 512> -> !tmem.output_ring<2, 256, 1>
  %end = scf.for %t = %c0 to %n step %c1 iter_args(%ring = %r0) -> (!tmem.output_ring<2, 256, 1>) : i32 {
    %next = tmem.output_ring.consumer %ring : !tmem.output_ring<2, 256, 1> {
    ^bb0(%s: !tmem.tmem_stage<2, 256, 1>):
      tmem.output_ring.arrive_empty %ring, %s : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
      tmem.yield
    }
    scf.yield %next : !tmem.output_ring<2, 256, 1>
  }
  func.return
}
"""

Event = tuple[str, int, int]  # (kind, barrier index, parity or -1)


@register_impls
@dataclass
class BarrierTraffic(InterpreterFunctions):
    """Runs one thread of lowered code, recording its barrier operations. Shared
    pointers are byte addresses with the barrier array at 0, so barrier i is at 8i."""

    events: list[Event] = field(default_factory=list[Event])

    @impl(llvm.GEPOp)
    def run_gep(self, interpreter: Interpreter, op: llvm.GEPOp, args: PythonValues) -> PythonValues:
        base, *dynamic = args
        (index,) = [i if i != llvm.GEP_USE_SSA_VAL else dynamic[0] for i in op.rawConstantIndices.iter_values()]
        return (base + 8 * index,)

    @impl(llvm.LoadOp)
    def run_load(self, interpreter: Interpreter, op: llvm.LoadOp, args: PythonValues) -> PythonValues:
        return (0,)  # the TMEM base address read from the slot

    @impl(arith.ExtUIOp)
    def run_extui(self, interpreter: Interpreter, op: arith.ExtUIOp, args: PythonValues) -> PythonValues:
        return (int(args[0]) & 1,)

    @impl(nvvm.ElectSyncOp)
    def run_elect(self, interpreter: Interpreter, op: nvvm.ElectSyncOp, args: PythonValues) -> PythonValues:
        return (True,)

    @impl(nvvm.Tcgen05FenceOp)
    def run_fence(self, interpreter: Interpreter, op: nvvm.Tcgen05FenceOp, args: PythonValues) -> PythonValues:
        return ()

    @impl(nvvm.MBarrierTryWaitParityOp)
    def run_wait(self, interpreter: Interpreter, op: nvvm.MBarrierTryWaitParityOp, args: PythonValues) -> PythonValues:
        self.events.append(("wait", args[0] // 8, args[1]))
        return ()

    @impl(nvvm.Tcgen05CommitOp)
    def run_commit(self, interpreter: Interpreter, op: nvvm.Tcgen05CommitOp, args: PythonValues) -> PythonValues:
        self.events.append(("arrive", args[0] // 8, -1))
        return ()

    @impl(nvvm.MBarrierArriveOp)
    def run_arrive(self, interpreter: Interpreter, op: nvvm.MBarrierArriveOp, args: PythonValues) -> PythonValues:
        self.events.append(("arrive", args[0] // 8, -1))
        return ()


def barrier_traffic(module: ModuleOp, function: str, tiles: int) -> list[Event]:
    interpreter = Interpreter(module, index_bitwidth=32)
    traffic = BarrierTraffic()
    for functions in (FuncFunctions(), ArithFunctions(), ScfFunctions(), traffic):
        interpreter.register_implementations(functions)
    interpreter.call_op(function, (0, 1 << 20, tiles))
    return traffic.events


@dataclass
class MBarrier:
    """The mbarrier model of semantics.md §1.1: a phase completes when the pending
    count reaches zero; `try_wait.parity(p)` succeeds iff the current phase bit != p."""

    expected: int
    pending: int = 0
    phase_bit: int = 0

    def __post_init__(self) -> None:
        self.pending = self.expected

    def arrive(self, count: int) -> None:
        self.pending -= count
        if self.pending == 0:
            self.phase_bit ^= 1
            self.pending = self.expected


@pytest.mark.parametrize("policy", POLICIES)
def test_barrier_traffic_matches_the_worked_example(policy: str) -> None:
    tool = TmemOptMain(["-p", f"lower-tmem{{fence-policy={policy}}}"])
    module = Parser(tool.ctx, PIPELINE).parse_module()
    tool.apply_passes(module)
    mma = barrier_traffic(module, "mma", 3)
    epilogue = barrier_traffic(module, "epilogue", 3)
    full0, full1, empty0, empty1 = 0, 1, 2, 3

    # §8.5, MMA warp: wait empty[0] par 1, commit full[0]; wait empty[1] par 1, commit
    # full[1]; wait empty[0] par 0, commit full[0].
    assert mma == [
        ("wait", empty0, 1), ("arrive", full0, -1),
        ("wait", empty1, 1), ("arrive", full1, -1),
        ("wait", empty0, 0), ("arrive", full0, -1),
    ]  # fmt: skip
    # §8.5, epilogue: wait full[0] par 0, full[1] par 0, full[0] par 1; each followed
    # by the arrive on the stage's empty barrier.
    assert epilogue == [
        ("wait", full0, 0), ("arrive", empty0, -1),
        ("wait", full1, 0), ("arrive", empty1, -1),
        ("wait", full0, 1), ("arrive", empty0, -1),
    ]  # fmt: skip

    # Replay both roles on the §1.1 barrier model (full = 1 arrival, the commit;
    # empty = 128, every epilogue thread), MMA first, switching when a role blocks.
    barriers = [MBarrier(1), MBarrier(1), MBarrier(128), MBarrier(128)]
    arrivals = {"mma": 1, "epilogue": 128}
    roles = {"mma": list(mma), "epilogue": list(epilogue)}
    outcome: list[tuple[str, int, int, str]] = []
    blocked: dict[str, bool] = {"mma": False, "epilogue": False}
    current = "mma"
    while roles["mma"] or roles["epilogue"]:
        kind, index, parity = roles[current][0]
        if kind == "wait":
            passes = barriers[index].phase_bit != parity
            if not passes:
                if not blocked[current]:
                    outcome.append((current, index, parity, "blocks"))
                blocked[current] = True
                current = "epilogue" if current == "mma" else "mma"
                continue
            if not blocked[current]:
                outcome.append((current, index, parity, "passes"))
            blocked[current] = False
        else:
            barriers[index].arrive(arrivals[current])
        roles[current].pop(0)
        if not roles[current]:
            current = "epilogue" if current == "mma" else "mma"

    assert outcome == [
        ("mma", empty0, 1, "passes"),  # tile 0: fresh barrier, parity 1 passes
        ("mma", empty1, 1, "passes"),  # tile 1
        ("mma", empty0, 0, "blocks"),  # tile 2: until empty[0] has 1 completion
        ("epilogue", full0, 0, "passes"),  # tile 0, after the first commit
        ("epilogue", full1, 0, "passes"),  # tile 1
        ("epilogue", full0, 1, "blocks"),  # tile 2: needs full[0]'s 2nd completion
    ]
    # At the end: empty[0] completed twice, empty[1] once (§8.5 "end" row), both
    # full barriers consumed as many times as committed.
    assert [b.phase_bit for b in barriers] == [0, 1, 0, 1]
