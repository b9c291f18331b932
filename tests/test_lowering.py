"""The tmem → nvvm lowering, checked by upstream MLIR 22, llc-22, ptxas and the spec.

* Every example, under both fence policies, lowers to text that mlir-opt-22 parses and
  that mlir-opt-22 → mlir-translate-22 → llc-22 → ptxas turns into an sm_100a cubin.
* The barrier traffic of the lowered pipeline reproduces the worked example of
  docs/semantics.md §8.5 (cta_group 1, 2 stages, 3 tiles): which barrier each wait is on,
  with which parity, and which waits pass at once and which block.
* Every tmem type carried through `scf.if`, `scf.for` and `scf.while` lowers to the
  values docs/dialect.md lists for it, and a whole kernel threading its state through
  them computes numpy's GEMM at the tmem level and lowered, and assembles.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np
import pytest
from external import Upstream
from gemm_reference import epilogue_rows, kmajor_matrix, parse
from support import EXAMPLES, LIT_TESTS, OptResult, ptxas_assemble
from xdsl.dialects import arith, llvm, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.traits import HasParent

from xdsl_tmem.dialects import nvvm, tmem
from xdsl_tmem.dialects.tmem import Tmem, TmemRegionOp
from xdsl_tmem.interpreter import run_kernel
from xdsl_tmem.passes import convert_tmem_to_nvvm
from xdsl_tmem.passes.convert_tmem_to_nvvm import (
    OP_LOWERINGS,
    AllocLowering,
    Emitter,
    Lowered,
    TmemLowering,
    WaitLoadLowering,
)
from xdsl_tmem.passes.expand_tmem_regions import EXPAND_PATTERNS
from xdsl_tmem.passes.lower_tmem import LowerTmemPass
from xdsl_tmem.tools.opt import TmemOptMain
from xdsl_tmem.tools.run import make_context

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
# docs/semantics.md §8.5: the barrier traffic of a 3-tile, 2-stage run
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
    """The mbarrier model of docs/semantics.md §1.1: a phase completes when the pending
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


# --------------------------------------------------------------------------------------
# tmem values through scf.if / scf.for / scf.while
# --------------------------------------------------------------------------------------

STORE = "llvm.store %u, %slot : i32, !llvm.ptr<3>"  # keeps a pure use alive

# Per tmem type: how to make one from the function's plain arguments, how to use one,
# and how many values it lowers to (the "Values" table of docs/dialect.md).
CARRIED: dict[str, tuple[str, str, str, int]] = {
    "allocation": (
        "!tmem.allocation<1, 512>",
        "%v = tmem.from_shared %slot : !tmem.allocation<1, 512>",
        "%u = tmem.base_address %w : !tmem.allocation<1, 512>\n" + STORE,
        1,
    ),
    "tmem_stage": (
        "!tmem.tmem_stage<2, 256, 1>",
        "%v = tmem.tmem_stage.create %base, %idx : !tmem.tmem_stage<2, 256, 1>",
        "%u = tmem.tmem_stage.offset %w : !tmem.tmem_stage<2, 256, 1>\n" + STORE,
        2,  # base, index
    ),
    "tensor": (
        "!tmem.tensor<128x256xf32, 1>",
        "%s = tmem.tmem_stage.create %base, %idx : !tmem.tmem_stage<2, 256, 1>\n"
        "%v = tmem.tmem_stage.tensor %s : !tmem.tmem_stage<2, 256, 1> -> !tmem.tensor<128x256xf32, 1>",
        "%u = tmem.tensor.offset %w : !tmem.tensor<128x256xf32, 1>\n" + STORE,
        1,
    ),
    "pipeline": (
        "!tmem.pipeline<3>",
        "%v = tmem.pipeline.create %bars : !tmem.pipeline<3>",
        "%u = tmem.pipeline.consumer_stage %w : !tmem.pipeline<3>\n" + STORE,
        5,  # barriers, producer (stage, phase), consumer (stage, phase)
    ),
    "output_ring": (
        "!tmem.output_ring<2, 256, 1>",
        "%a = tmem.from_shared %slot : !tmem.allocation<1, 512>\n"
        "%v = tmem.output_ring.create %bars, %a : !tmem.allocation<1, 512> -> !tmem.output_ring<2, 256, 1>",
        "%u = tmem.output_ring.acquire_for_epilogue %w : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>",
        6,  # barriers, TMEM base, two (stage, phase)
    ),
    "output_ring_cg2": (
        "!tmem.output_ring<2, 256, 2>",
        "%a = tmem.from_shared %slot : !tmem.allocation<2, 512>\n"
        "%v = tmem.output_ring.create %bars, %a mma_complete_mask %mask "
        ": !tmem.allocation<2, 512> -> !tmem.output_ring<2, 256, 2>",
        "%u = tmem.output_ring.acquire_for_epilogue %w : !tmem.output_ring<2, 256, 2> -> !tmem.tmem_stage<2, 256, 2>",
        7,  # ... and the i16 mma_complete_mask
    ),
    "dealloc_barrier": (
        "!tmem.dealloc_barrier<1>",
        "%v = tmem.dealloc_barrier.create %dbar : !tmem.dealloc_barrier<1>",
        "tmem.dealloc_barrier.signal_self %w : !tmem.dealloc_barrier<1>",
        1,
    ),
    "mma_warp_context": (
        "!tmem.mma_warp_context<2, 256, 1, 32, 128>",
        "%v = tmem.warp_context.mma_create %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128>",
        "tmem.warp_context.mma_exit %w : !tmem.mma_warp_context<2, 256, 1, 32, 128>",
        8,  # allocation, the ring's 6, dealloc barrier
    ),
    "epilogue_warp_context": (
        "!tmem.epilogue_warp_context<2, 256, 1, 32, 128>",
        "%v = tmem.warp_context.epilogue_create %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>",
        "tmem.warp_context.epilogue_exit %w : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>",
        8,
    ),
}

CARRIERS: dict[str, str] = {
    "if": """%w = scf.if %c -> ({t}) {{
    scf.yield %v : {t}
  }} else {{
    scf.yield %v : {t}
  }}""",
    "for": """%w = scf.for %i = %idx to %n step %idx iter_args(%x = %v) -> ({t}) : i32 {{
    scf.yield %x : {t}
  }}""",
    "while": """%w = scf.while (%x = %v) : ({t}) -> {t} {{
    scf.condition(%c) %x : {t}
  }} do {{
  ^bb0(%y: {t}):
    scf.yield %y : {t}
  }}""",
}


def carried_program(kind: str, carrier: str) -> str:
    t, make, use, _ = CARRIED[kind]
    return f"""llvm.func @f(%slot: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %dbar: !llvm.ptr<3>, %base: i32, %idx: i32,
             %n: i32, %c: i1, %mask: i16) attributes {{nvvm.kernel, nvvm.maxntid = array<i32: 160, 1, 1>}} {{
  {make}
  {CARRIERS[carrier].format(t=t)}
  {use}
  llvm.return
}}
"""


@pytest.mark.parametrize("carrier", CARRIERS)
@pytest.mark.parametrize("kind", CARRIED)
def test_tmem_value_through_scf_lowers_to_its_values(
    run_opt: RunOpt, upstream: Upstream, kind: str, carrier: str
) -> None:
    result = run_opt(carried_program(kind, carrier), "-p", "lower-tmem")
    assert result.code == 0, result.err
    assert "tmem." not in result.out
    upstream.parse(result.out)
    if carrier != "for":  # scf.for drops loop-invariant values afterwards
        header = next(line for line in result.out.splitlines() if f"scf.{carrier}" in line)
        results = header.split("=")[0].count("%")
        assert results == CARRIED[kind][3], header


CONTROL_FLOW = LIT_TESTS / "lower" / "control_flow.mlir"


@pytest.mark.parametrize("lowered", [False, True], ids=["tmem", "nvvm"])
@pytest.mark.parametrize(("schedule", "seed"), [("rr", 0), ("random", 3)])
def test_control_flow_kernel_matches_numpy(lowered: bool, schedule: str, seed: int) -> None:
    module = parse(CONTROL_FLOW.read_text())
    if lowered:
        LowerTmemPass().apply(make_context(), module)
        module.verify()
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(128 * 32).astype(np.float16)
    b = rng.standard_normal(256 * 32).astype(np.float16)
    tiles = 3
    out = np.zeros(tiles * 128 * 256, np.float32)
    args = {"out": out, "a": a, "b": b, "ntiles": tiles}
    result = run_kernel(module, "control_flow_cg1", block=160, args=args, schedule=schedule, seed=seed)
    # Every tile is A(128x32) . B(256x32)^T from the K-major buffers (LBO 128 B, SBO 512 B).
    d = (
        kmajor_matrix(a, 128, 32, 128, 512).astype(np.float32)
        @ kmajor_matrix(b, 256, 32, 128, 512).astype(np.float32).T
    )
    expected = np.tile(epilogue_rows(d), (tiles, 1, 1))
    np.testing.assert_allclose(result.outputs["out"].reshape(expected.shape), expected, rtol=1e-5, atol=1e-4)
    assert result.report.mma_count == 2 * tiles


@pytest.mark.parametrize("policy", POLICIES)
def test_control_flow_kernel_compiles_upstream_and_assembles(
    run_opt: RunOpt, upstream: Upstream, ptxas: str, tmp_path: Path, policy: str
) -> None:
    lowered = lower(run_opt, CONTROL_FLOW, policy)
    assert "tmem." not in lowered
    ptxas_assemble(ptxas, upstream.to_ptx(upstream.parse(lowered)), tmp_path)
    # ... and through our own PTX backend.
    ours = run_opt(None, "-p", f"lower-tmem{{fence-policy={policy}}}", "-t", "ptx", path=CONTROL_FLOW)
    assert ours.code == 0, ours.err
    ptxas_assemble(ptxas, ours.out, tmp_path)


# --------------------------------------------------------------------------------------
# The pattern registry against the dialect
# --------------------------------------------------------------------------------------


def _in_expanded_parent(op: type[Operation], expanded: set[type[Operation]]) -> bool:
    """An op whose `HasParent` trait allows only expanded ops (`tmem.yield`) is removed
    with its parent."""
    parents = op.get_traits_of_type(HasParent)
    return bool(parents) and all(set(t.op_types) <= expanded for t in parents)


def test_every_tmem_op_is_lowered_or_expanded_by_exactly_one_pattern() -> None:
    """Derived from the dialect's op list: each op of `tmem.Tmem` is rewritten by one
    pattern of `OP_LOWERINGS` or of `EXPAND_PATTERNS` (or goes with its expanded parent),
    never by two; the expanded ops are exactly the region ops that convert-tmem-to-nvvm
    refuses; each lowering is named after its op."""
    dialect_ops = set(Tmem.operations)
    lowered = Counter(t for pattern in OP_LOWERINGS for t in pattern.op_types)
    expanded = Counter(t for pattern in EXPAND_PATTERNS for t in pattern.op_types)
    assert set(lowered) | set(expanded) <= dialect_ops
    handled = {op for op in dialect_ops if lowered[op] + expanded[op] > 0}
    unhandled = [op.name for op in dialect_ops - handled if not _in_expanded_parent(op, set(expanded))]
    assert unhandled == []
    twice = [op.name for op in dialect_ops if lowered[op] + expanded[op] > 1]
    assert twice == []
    assert set(expanded) == {op for op in dialect_ops if issubclass(op, TmemRegionOp)}
    for pattern in OP_LOWERINGS:
        (op,) = pattern.op_types
        assert pattern.__name__ == op.__name__.removesuffix("Op") + "Lowering"


WAIT_LOAD = """func.func @f() {
  tmem.wait_load
  func.return
}
"""

ALLOC = """func.func @f(%slot: !llvm.ptr<3>) {
  %a = tmem.alloc %slot : !tmem.allocation<1, 512>
  tmem.relinquish %a : !tmem.allocation<1, 512>
  func.return
}
"""


def test_every_scf_op_is_forwarding_or_refused() -> None:
    """`FORWARDING_OPS` are the ops upstream's SCF structural type conversion rewrites
    (StructuralTypeConversions.cpp: for, if, while, condition, yield); every other scf op
    is refused when it carries a tmem value (`lit_tests/lower/errors.mlir`). A new scf op
    in xDSL fails here until someone decides which it is."""
    refused = {"scf.execute_region", "scf.index_switch", "scf.parallel", "scf.reduce", "scf.reduce.return"}
    forwarding = {op.name for op in convert_tmem_to_nvvm.FORWARDING_OPS}
    assert forwarding == {"scf.for", "scf.if", "scf.while", "scf.condition", "scf.yield"}
    assert {op.name for op in scf.Scf.operations} == forwarding | refused


@pytest.mark.parametrize(
    ("missing", "program", "line"),
    [(WaitLoadLowering, WAIT_LOAD, 2), (AllocLowering, ALLOC, 2)],
    ids=["no-tmem-value", "tmem-result"],
)
def test_an_op_without_a_lowering_is_a_located_error(
    run_opt: RunOpt, monkeypatch: pytest.MonkeyPatch, missing: type[TmemLowering[Any]], program: str, line: int
) -> None:
    """Fail closed: with its pattern removed, the op is reported at its own line, also
    when it carries no tmem value (which the value check alone would let through)."""
    remaining = tuple(p for p in OP_LOWERINGS if p is not missing)
    monkeypatch.setattr(convert_tmem_to_nvvm, "OP_LOWERINGS", remaining)
    result = run_opt(program, "-p", "lower-tmem")
    assert result.code == 1
    (op,) = missing.op_types
    assert f"input.mlir:{line}:3: error: convert-tmem-to-nvvm: {op.name} has no lowering pattern" in result.err
    assert "Traceback" not in result.err


_SomeOp = TypeVar("_SomeOp", bound=tmem.WaitLoadOp | tmem.WaitStoreOp)


class _SharedLowering(TmemLowering[_SomeOp], Generic[_SomeOp]):
    def lower(self, op: _SomeOp, b: Emitter) -> Sequence[Lowered]:
        return []


class _WaitStoreLowering(_SharedLowering[tmem.WaitStoreOp]):
    pass


def test_a_lowering_names_its_op_class_through_generic_bases() -> None:
    """A base shared by several ops (as the load, store and init_barriers lowerings are)
    binds no op and cannot be instantiated; its subclass binds the one it names."""
    assert _SharedLowering.op_types == ()
    with pytest.raises(TypeError, match="_SharedLowering names no op class"):
        _SharedLowering[tmem.WaitStoreOp]()
    assert _WaitStoreLowering.op_types == (tmem.WaitStoreOp,)
    assert _WaitStoreLowering().matches(tmem.WaitStoreOp())
    assert not _WaitStoreLowering().matches(tmem.WaitLoadOp())
