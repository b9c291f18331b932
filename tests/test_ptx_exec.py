"""The PTX level of the machine model (docs/ptx-level.md): our backend's PTX runs on the
same machine model as the NVVM level and computes the same numbers (numpy), reaches the
same verdicts (the corpus headers), and agrees with the NVVM level bit for bit
(`--validate-lowering` through `convert-to-ptx`); SIMT reconvergence, its hazards,
parameters and refusals on hand-built PTX."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from external import Upstream
from gemm_reference import epilogue_rows, kmajor_matrix, parse
from numpy.typing import NDArray
from support import CLEAN, CORPUS, EXAMPLES, LIT_TESTS, ROOT, SCHEDULES, OptResult, header, run_cli
from xdsl.dialects.builtin import ArrayAttr, IntAttr, IntegerAttr, ModuleOp, i32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from xdsl_tmem.backend.target import ConvertToPtxPass, emit_ptx
from xdsl_tmem.dialects import ptx
from xdsl_tmem.dialects.ptx.generic import ArgInt
from xdsl_tmem.dialects.ptx.qualifiers import (
    BarrierKind,
    CacheLevel,
    CmpOp,
    IntMode,
    MatchMode,
    MbarrierTxKind,
    MbarrierWaitKind,
    PackedFloat,
    PrmtMode,
    PtxType,
    Rounding,
    SetmaxnregAction,
    ShfDirection,
    ShflMode,
    ShfMode,
    StateSpace,
    VoteMode,
)
from xdsl_tmem.dialects.ptx.qualifiers import TestpKind as PtxTestp
from xdsl_tmem.dialects.traits import SyncPoint, WarpLocal
from xdsl_tmem.interpreter import KernelDeadlock, KernelHazard, LaunchError, run_kernel
from xdsl_tmem.interpreter.ptx.base import LANE_DTYPE
from xdsl_tmem.interpreter.ptx.cfg import EXIT, Flow, reconvergence_points
from xdsl_tmem.interpreter.ptx.program import DECODERS
from xdsl_tmem.interpreter.ptx.semantics import decode
from xdsl_tmem.interpreter.run import parameter_names
from xdsl_tmem.passes.lower_tmem import LowerTmemPass
from xdsl_tmem.tools import run
from xdsl_tmem.tools.run import make_context

RunOpt = Callable[..., OptResult]
PROGRAMS = sorted(CORPUS.glob("*.mlir"))
SAFE = ROOT / "tests" / "safe"
UNSELECTABLE: dict[str, str] = {}
"""Corpus programs our PTX backend cannot emit (reported at isel, before any run)."""


def to_ptx(path: Path, lower: bool) -> ModuleOp:
    module = parse(path.read_text())
    ctx = make_context()
    if lower:
        LowerTmemPass().apply(ctx, module)
    ConvertToPtxPass().apply(ctx, module)
    module.verify()
    return module


# --------------------------------------------------------------------------------------
# Every example and the reference pipeline: numpy results, and bit for bit as the NVVM level
# --------------------------------------------------------------------------------------


def _f16(seed: int, rows: int) -> NDArray[np.float16]:
    return np.random.default_rng(seed).standard_normal(rows * 32).astype(np.float16)


@pytest.mark.parametrize(("path", "kernel"), [(LIT_TESTS / "nvvm" / "ref_pipeline.mlir", "ref_pipeline"),
                                              (EXAMPLES / "matmul_cg1.mlir", "matmul_cg1")])  # fmt: skip
def test_cg1_gemm_at_ptx_level(path: Path, kernel: str) -> None:
    """A(128x32) . B(256x32)^T per tile, each thread storing its 16x256b registers."""
    tiles = 2
    a, b = _f16(1, 128), _f16(2, 256)
    module = to_ptx(path, lower=path.parent == EXAMPLES)
    out = np.zeros(tiles * 128 * 256, np.float32)
    result = run_kernel(module, kernel, block=160, args={"arg0": out, "arg1": a, "arg2": b, "arg3": tiles})
    d = (
        kmajor_matrix(a, 128, 32, 128, 512).astype(np.float32)
        @ kmajor_matrix(b, 256, 32, 128, 512).astype(np.float32).T
    )
    expected = np.tile(epilogue_rows(d), (tiles, 1, 1))
    got = next(iter(result.outputs.values())).reshape(expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)
    assert result.report.mma_count == 2 * tiles


def test_cg2_gemm_at_ptx_level() -> None:
    """M = 256 over a CTA pair (the cluster shape from `.reqnctapercluster`)."""
    tiles = 2
    a, b = _f16(1, 256), _f16(2, 256)
    module = to_ptx(EXAMPLES / "matmul_cg2.mlir", lower=True)
    out = np.zeros(tiles * 256 * 256, np.float32)
    result = run_kernel(module, "matmul_cg2", block=160, args={"arg0": out, "arg1": a, "arg2": b, "arg3": tiles})
    assert result.report.launch.cluster == (2, 1, 1)
    halves_a = [kmajor_matrix(a[4096 * r : 4096 * (r + 1)], 128, 32, 128, 512) for r in range(2)]
    halves_b = [kmajor_matrix(b[4096 * r : 4096 * (r + 1)], 128, 32, 128, 512) for r in range(2)]
    d = np.concatenate(halves_a).astype(np.float32) @ np.concatenate(halves_b).astype(np.float32).T
    expected = np.concatenate([epilogue_rows(d[128 * r : 128 * (r + 1)]) for r in range(2)])
    got = next(iter(result.outputs.values())).reshape(tiles, 256, 256)
    for tile in range(tiles):
        np.testing.assert_allclose(got[tile], expected, rtol=1e-5, atol=1e-4)


def test_blockwise_fp8_at_ptx_level() -> None:
    tiles, kblocks = 2, 3
    rng = np.random.default_rng(4)
    a = rng.integers(0, 256, tiles * kblocks * 4096).astype(np.uint8)
    b = rng.integers(0, 256, tiles * kblocks * 2048).astype(np.uint8)
    a[(a & 0x7F) == 0x7F] = 0x38  # e4m3 without its NaN codes
    b[(b & 0x7F) == 0x7F] = 0x38
    scales = rng.uniform(0.5, 2.0, tiles * kblocks).astype(np.float32)
    out = np.zeros(tiles * 128 * 64, np.float32)
    module = to_ptx(EXAMPLES / "blockwise_fp8_cg1.mlir", lower=True)
    args = {"arg0": out, "arg1": a, "arg2": b, "arg3": scales, "arg4": tiles, "arg5": kblocks}
    result = run_kernel(module, "blockwise_fp8_cg1", block=192, args=args)
    got = next(iter(result.outputs.values())).reshape(tiles, 128, 64)
    for tile in range(tiles):
        accumulator = np.zeros((128, 64), np.float32)
        for k in range(kblocks):
            block = tile * kblocks + k
            a_block = a[4096 * block : 4096 * (block + 1)].view(ml_dtypes.float8_e4m3fn)
            b_block = b[2048 * block : 2048 * (block + 1)].view(ml_dtypes.float8_e4m3fn)
            partial = kmajor_matrix(a_block, 128, 32, 128, 256).astype(np.float32) @ (
                kmajor_matrix(b_block, 64, 32, 128, 256).astype(np.float32).T
            )
            accumulator = accumulator + partial * scales[block]
        np.testing.assert_allclose(got[tile], epilogue_rows(accumulator, column_tiles=2), rtol=1e-6)


@pytest.mark.parametrize(("program", "args"), CLEAN, ids=[p.stem for p, _ in CLEAN])
def test_clean_programs_validate_through_ptx(capsys: pytest.CaptureFixture[str], program: Path, args: str) -> None:
    """The NVVM level and our PTX run on the same inputs and schedule and agree bit for
    bit (`xdsl-tmem-run -t ptx --validate-lowering`), NaN payloads included: the blockwise
    FP8 example's random bytes include e4m3 NaN codes."""
    passes = ["-p", "lower-tmem"] if program.parent == EXAMPLES else []
    result = run_cli(capsys, str(program), *passes, *shlex.split(args), "-t", "ptx", "--validate-lowering")
    assert result.code == run.EXIT_OK, result.err
    assert "after convert-to-ptx: ran to completion, outputs and verdict unchanged" in result.out


def test_driver_runs_ptx_with_the_input_names(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program, args = CLEAN[3]
    result = run_cli(capsys, str(program), *shlex.split(args), "-t", "ptx", "--out", str(tmp_path))
    assert result.code == run.EXIT_OK, result.err
    assert "  out: float32 [4, 128, 256]" in result.out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "b.npy", "out.npy"]


# --------------------------------------------------------------------------------------
# The seeded-bug corpus at the PTX level
# --------------------------------------------------------------------------------------


def _ptx_verdict(capsys: pytest.CaptureFixture[str], program: Path, passes: list[str]) -> tuple[int, str]:
    result = run_cli(capsys, str(program), *passes, *shlex.split(header(program, "Run")))
    match = re.search(r"hazard ([a-z-]+):", result.err)
    return result.code, match.group(1) if match else ""


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_corpus_keeps_its_class_at_ptx_level(capsys: pytest.CaptureFixture[str], program: Path) -> None:
    """NVVM-level programs keep their header's class and exit code; tmem-level ones the
    class of their `Lowered:` header, else the NVVM level's verdict after lower-tmem."""
    if program.stem in UNSELECTABLE:
        pytest.skip(UNSELECTABLE[program.stem])
    level = header(program, "Level")
    passes = ["-p", level[level.index("(") + 1 : -1]] if "(" in level else []
    if level.startswith("tmem"):
        passes = ["-p", "lower-tmem"]
    code, klass = _ptx_verdict(capsys, program, [*passes, "-t", "ptx"])
    if level.startswith("nvvm"):
        assert (code, klass) == (int(header(program, "Exit")), header(program, "Hazard class"))
    elif re.search(r"^// Lowered: ", program.read_text(), re.M):
        assert (code, klass) == (run.EXIT_HAZARD, header(program, "Lowered"))
    else:
        assert (code, klass) == _ptx_verdict(capsys, program, passes)
        assert klass


def test_hazard_reports_name_the_ptx_line(capsys: pytest.CaptureFixture[str]) -> None:
    """The note names the line of the printed PTX (`xdsl-tmem-opt -t ptx`) the hazard is at."""
    program = CORPUS / "divergent_sync_aligned.mlir"
    result = run_cli(capsys, str(program), "-p", "lower-tmem", "-t", "ptx", *shlex.split(header(program, "Run")))
    assert result.code == run.EXIT_HAZARD
    match = re.search(r"note: in warp \d+ at PTX line (\d+), after", result.err)
    assert match, result.err
    module = parse(program.read_text())
    LowerTmemPass().apply(make_context(), module)
    line = emit_ptx(module).splitlines()[int(match.group(1)) - 1]
    assert "tcgen05.alloc" in line, line


# --------------------------------------------------------------------------------------
# Hand-built PTX: SIMT reconvergence, its hazards, parameters, refusals
# --------------------------------------------------------------------------------------


class Builder:
    """A PTX kernel (`.entry`) written instruction by instruction; registers by (class, index)."""

    def __init__(self, params: list[ptx.DeclAttr]):
        self.params = params
        self.ops: list[Operation] = []
        self.values: dict[tuple[str, int], SSAValue] = {}

    def reg(self, kind: str, index: int) -> SSAValue:
        key = (kind, index)
        if key not in self.values:
            handle = ptx.RegisterOp(ptx.RegisterType(kind, index))
            self.ops.insert(0, handle)
            self.values[key] = handle.result
        return self.values[key]

    def imm(self, value: int) -> SSAValue:
        op = ptx.ImmOp(IntegerAttr(value, i32))
        self.ops.insert(0, op)
        return op.result

    def special(self, name: str) -> SSAValue:
        op = ptx.SpecialOp(name)
        self.ops.insert(0, op)
        return op.result

    def symbol(self, name: str) -> SSAValue:
        op = ptx.SymbolOp(name)
        self.ops.insert(0, op)
        return op.result

    def emit(self, op: Operation) -> Operation:
        self.ops.append(op)
        return op

    def module(
        self, name: str = "k", reqntid: int | None = None, variables: tuple[ptx.VariableOp, ...] = ()
    ) -> ModuleOp:
        properties: dict[str, Attribute] = {"params": ArrayAttr(self.params)}
        if reqntid is not None:
            properties["reqntid"] = ArrayAttr([IntAttr(reqntid), IntAttr(1), IntAttr(1)])
        entry = ptx.FunctionOp(name, "entry", Region(Block(self.ops)), properties)
        body = Region(Block([*variables, entry]))
        module = ModuleOp([ptx.ModuleOp("8.6", "sm_100a", body, address_size=64)])
        module.verify()
        return module


R = ptx.RegisterType


def _lane_kernel(body: Callable[[Builder], None], store_reg: tuple[str, int] = ("b32", 10)) -> ModuleOp:
    """`out[laneid] = %r10` after `body`, with %r1 = %laneid and %rd1 = out (param 0)."""
    k = Builder([ptx.DeclAttr("param", "u64", "out", ptr=ptx.Pointee("global", 1))])
    k.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B64, [R("b64", 1)], k.symbol("out")))
    k.emit(ptx.MovOp(PtxType.U32, R("b32", 1), k.special("%laneid")))
    k.emit(ptx.MovOp(PtxType.U32, R("b32", 10), k.imm(0)))
    body(k)
    k.emit(ptx.MulOp(PtxType.U32, R("b64", 2), k.reg("b32", 1), k.imm(4), mode=IntMode.WIDE))
    k.emit(ptx.AddOp(PtxType.S64, R("b64", 3), k.reg("b64", 1), k.reg("b64", 2)))
    k.emit(ptx.StOp(StateSpace.GLOBAL, PtxType.U32, k.reg("b64", 3), [k.reg(*store_reg)]))
    k.emit(ptx.RetOp())
    return k.module()


def _run_lanes(module: ModuleOp) -> NDArray[np.uint32]:
    result = run_kernel(module, "k", block=32, args={"out": np.zeros(32, np.uint32)})
    return result.outputs["out"]


def _if_else(k: Builder, inner: Callable[[Builder], None] | None = None) -> None:
    """if (lane < 16) r10 = 100 + lane else r10 = 200; [inner after the join]."""
    k.emit(ptx.SetpOp(CmpOp.LT, PtxType.U32, R("pred", 1), k.reg("b32", 1), k.imm(16)))
    k.emit(ptx.BraOp("ELSE", guard=k.reg("pred", 1), negated=True))
    k.emit(ptx.AddOp(PtxType.U32, R("b32", 10), k.reg("b32", 1), k.imm(100)))
    k.emit(ptx.BraOp("JOIN"))
    k.emit(ptx.LabelOp("ELSE"))
    k.emit(ptx.MovOp(PtxType.U32, R("b32", 10), k.imm(200)))
    k.emit(ptx.LabelOp("JOIN"))
    if inner is not None:
        inner(k)


def test_divergent_branches_compute_per_lane_and_reconverge() -> None:
    """Each path runs under its lanes; after the join the warp is converged again, so an
    aligned `bar.sync` there is no hazard."""

    def barrier(k: Builder) -> None:
        k.emit(ptx.BarSyncOp(k.imm(0)))

    got = _run_lanes(_lane_kernel(lambda k: _if_else(k, barrier)))
    lanes = np.arange(32)
    np.testing.assert_array_equal(got, np.where(lanes < 16, 100 + lanes, 200))


def test_divergent_loop() -> None:
    """for (i = 0; i < lane; i++) r10 += i: lane-varying trip counts, then a barrier."""

    def body(k: Builder) -> None:
        k.emit(ptx.MovOp(PtxType.U32, R("b32", 2), k.imm(0)))
        k.emit(ptx.SetpOp(CmpOp.GE, PtxType.U32, R("pred", 2), k.reg("b32", 2), k.reg("b32", 1)))
        k.emit(ptx.BraOp("DONE", guard=k.reg("pred", 2)))
        k.emit(ptx.LabelOp("LOOP"))
        k.emit(ptx.AddOp(PtxType.U32, R("b32", 10), k.reg("b32", 10), k.reg("b32", 2)))
        k.emit(ptx.AddOp(PtxType.U32, R("b32", 2), k.reg("b32", 2), k.imm(1)))
        k.emit(ptx.SetpOp(CmpOp.LT, PtxType.U32, R("pred", 3), k.reg("b32", 2), k.reg("b32", 1)))
        k.emit(ptx.BraOp("LOOP", guard=k.reg("pred", 3)))
        k.emit(ptx.LabelOp("DONE"))
        k.emit(ptx.BarSyncOp(k.imm(0)))

    got = _run_lanes(_lane_kernel(body))
    lanes = np.arange(32)
    np.testing.assert_array_equal(got, lanes * (lanes - 1) // 2)


def test_aligned_barrier_inside_a_divergent_path_is_a_hazard() -> None:
    def body(k: Builder) -> None:
        k.emit(ptx.SetpOp(CmpOp.LT, PtxType.U32, R("pred", 1), k.reg("b32", 1), k.imm(16)))
        k.emit(ptx.BraOp("SKIP", guard=k.reg("pred", 1), negated=True))
        k.emit(ptx.BarSyncOp(k.imm(0)))
        k.emit(ptx.LabelOp("SKIP"))

    with pytest.raises(KernelHazard) as caught:
        _run_lanes(_lane_kernel(body))
    assert caught.value.kind == "divergent-sync-aligned"
    assert "lanes 0-15 of 0-31" in caught.value.message
    assert isinstance(caught.value.op, ptx.BarSyncOp)


def test_bra_uni_with_a_lane_varying_predicate_is_a_hazard() -> None:
    def body(k: Builder) -> None:
        k.emit(ptx.SetpOp(CmpOp.LT, PtxType.U32, R("pred", 1), k.reg("b32", 1), k.imm(3)))
        k.emit(ptx.BraOp("SKIP", guard=k.reg("pred", 1), uniform=True))
        k.emit(ptx.LabelOp("SKIP"))

    with pytest.raises(KernelHazard) as caught:
        _run_lanes(_lane_kernel(body))
    assert caught.value.kind == "bra-uni-divergent"
    assert "true in lanes 0-2 and false in lanes 3-31" in caught.value.message


def test_bra_uni_with_a_uniform_predicate_is_fine() -> None:
    def body(k: Builder) -> None:
        k.emit(ptx.SetpOp(CmpOp.LT, PtxType.U32, R("pred", 1), k.reg("b32", 1), k.imm(99)))
        k.emit(ptx.BraOp("SKIP", guard=k.reg("pred", 1), uniform=True))
        k.emit(ptx.MovOp(PtxType.U32, R("b32", 10), k.imm(7)))
        k.emit(ptx.LabelOp("SKIP"))

    np.testing.assert_array_equal(_run_lanes(_lane_kernel(body)), np.zeros(32))


def test_guarded_ret_leaves_the_other_lanes_running() -> None:
    """`@p ret` in lanes 16-31: the others go on (and store); the exited lanes no longer
    count for a later aligned barrier."""

    def body(k: Builder) -> None:
        k.emit(ptx.MovOp(PtxType.U32, R("b32", 10), k.imm(5)))
        k.emit(ptx.SetpOp(CmpOp.GE, PtxType.U32, R("pred", 1), k.reg("b32", 1), k.imm(16)))
        ret = ptx.RetOp()
        ret.set_guard(k.reg("pred", 1))
        k.emit(ret)
        k.emit(ptx.BarSyncOp(k.imm(0), k.imm(32)))

    got = _run_lanes(_lane_kernel(body))
    np.testing.assert_array_equal(got, np.where(np.arange(32) < 16, 5, 0))


def test_an_unexecuted_instruction_is_refused_only_when_it_runs() -> None:
    """`tcgen05.shift` (not modelled) on a path no lane takes does not stop the run; on a
    path one lane takes it is refused, naming the instruction and its PTX line. (This
    was `bar.red` until the model executed it.)"""

    def body(k: Builder, bound: int) -> None:
        k.emit(ptx.SetpOp(CmpOp.LT, PtxType.U32, R("pred", 1), k.reg("b32", 1), k.imm(bound)))
        k.emit(ptx.BraOp("SKIP", guard=k.reg("pred", 1), negated=True))
        k.emit(ptx.Tcgen05ShiftOp(1, k.reg("b32", 1)))
        k.emit(ptx.LabelOp("SKIP"))

    np.testing.assert_array_equal(_run_lanes(_lane_kernel(lambda k: body(k, 0))), np.zeros(32))
    with pytest.raises(LaunchError) as caught:
        _run_lanes(_lane_kernel(lambda k: body(k, 1)))
    assert "tcgen05.shift" in caught.value.message
    assert re.search(r"at PTX line \d+", caught.value.message), caught.value.message


def test_a_generic_instruction_is_refused_with_its_opcode() -> None:
    """A parsed instruction not mapped to a typed op (`ptx.inst`) is refused when it runs."""

    def body(k: Builder) -> None:
        k.emit(ptx.InstOp("nanosleep", ["u32"], [ArgInt(IntAttr(100), IntAttr(0))], []))

    with pytest.raises(LaunchError) as caught:
        _run_lanes(_lane_kernel(body))
    assert re.search(r"nanosleep\.u32 at PTX line \d+: opcode nanosleep is a generic instruction", caught.value.message)


def test_parameters_by_name_and_position() -> None:
    """`ld.param` reads the launch's arguments: a pointer, a .u32 and a .f32 scalar."""
    k = Builder(
        [
            ptx.DeclAttr("param", "u64", "out", ptr=ptx.Pointee("global", 1)),
            ptx.DeclAttr("param", "u32", "n"),
            ptx.DeclAttr("param", "f32", "x"),
        ]
    )
    k.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B64, [R("b64", 1)], k.symbol("out")))
    k.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B32, [R("b32", 1)], k.symbol("n")))
    k.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B32, [R("b32", 2)], k.symbol("x")))
    k.emit(ptx.StOp(StateSpace.GLOBAL, PtxType.U32, k.reg("b64", 1), [k.reg("b32", 1)]))
    k.emit(ptx.StOp(StateSpace.GLOBAL, PtxType.U32, k.reg("b64", 1), [k.reg("b32", 2)], offset=4))
    k.emit(ptx.RetOp())
    module = k.module(reqntid=32)
    for args in ({"out": np.zeros(2, np.uint32), "n": 7, "x": 1.5}, {"arg0": np.zeros(2, np.uint32), "arg1": 7,
                                                                        "arg2": 1.5}):  # fmt: skip
        got = next(iter(run_kernel(module, "k", block=32, args=args).outputs.values()))
        assert got.tolist() == [7, int(np.array([1.5], np.float32).view(np.uint32)[0])]
    with pytest.raises(LaunchError, match=r"requires \.reqntid = \[32, 1, 1\]"):
        run_kernel(module, "k", block=64, args={"out": np.zeros(2, np.uint32), "n": 7, "x": 1.5})
    with pytest.raises(LaunchError, match="no parameter named m"):
        run_kernel(module, "k", block=32, args={"out": np.zeros(2, np.uint32), "m": 7, "x": 1.5})


# --------------------------------------------------------------------------------------
# Post-dominators, traits
# --------------------------------------------------------------------------------------


def test_reconvergence_points() -> None:
    """0: @p bra 3 | 1 | 2: bra 4 | 3 | 4 (join) | 5: @q bra 4 (loop back) | 6: @r ret | 7."""
    flows = [
        Flow((3,), falls_through=True), Flow(), Flow((4,), falls_through=False), Flow(), Flow(),
        Flow((4,), falls_through=True), Flow(falls_through=True, exits=True), Flow(),
    ]  # fmt: skip
    assert reconvergence_points(flows) == {0: 4, 2: 4, 5: 6}
    # Both paths leave the kernel: they meet only at its exit.
    assert reconvergence_points([Flow((2,)), Flow(falls_through=False, exits=True), Flow(exits=True)]) == {0: EXIT}


def test_every_ptx_instruction_declares_its_scheduling() -> None:
    """Sync point or warp-local (`WritesOnlyRegisters` instructions touch registers only)."""
    for op in ptx.PTX.operations:
        if issubclass(op, ptx.Instruction) and op is not ptx.InstOp:  # generic: refused when it runs
            local = op.has_trait(WarpLocal) or op.has_trait(ptx.WritesOnlyRegisters) or op in (ptx.BraOp, ptx.RetOp)
            assert local != op.has_trait(SyncPoint), op.name


# --------------------------------------------------------------------------------------
# Exploration, traces and step limits at the PTX level
# --------------------------------------------------------------------------------------

REF_TWO_TILES = (
    "--kernel ref_pipeline --block 160 --arg out=zeros:f32:2x128x256 --arg a=rand:f16:4096:1 "
    "--arg b=rand:f16:8192:2 --arg ntiles=2"
)


def test_exhaustive_exploration_of_ptx(capsys: pytest.CaptureFixture[str]) -> None:
    """The reference pipeline's PTX is safe under every interleaving; without its commit
    it deadlocks in every schedule, with the NVVM level's cause."""
    program = LIT_TESTS / "nvvm" / "ref_pipeline.mlir"
    result = run_cli(capsys, str(program), "-t", "ptx", *shlex.split(REF_TWO_TILES), "--explore", "exhaustive")
    assert result.code == run.EXIT_OK, result.err
    assert result.out.startswith("explore exhaustive: SAFE:")
    seeded = CORPUS / "missing_commit.mlir"
    result = run_cli(capsys, str(seeded), "-t", "ptx", *shlex.split(header(seeded, "Run")), "--explore", "exhaustive")
    assert result.code == run.EXIT_DEADLOCK, result.err
    assert "note: cause: hazard missing-commit: " in result.err
    assert re.search(r"blocked at 'ptx\.mbarrier_wait': waits on mbarrier .* \(PTX line \d+\)", result.err)


def test_trace_and_step_limit_of_ptx(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    program = LIT_TESTS / "nvvm" / "ref_pipeline.mlir"
    trace = tmp_path / "t.json"
    result = run_cli(capsys, str(program), "-t", "ptx", *shlex.split(REF_TWO_TILES), "--trace", str(trace))
    assert result.code == run.EXIT_OK, result.err
    assert "tcgen05_mma" in trace.read_text()
    result = run_cli(capsys, str(program), "-t", "ptx", *shlex.split(REF_TWO_TILES), "--max-steps", "100")
    assert result.code == run.EXIT_LIMIT
    assert re.search(r"note: warp 0 was at 'ptx\.", result.err), result.err


def test_schedule_dependent_failures_at_ptx_level(capsys: pytest.CaptureFixture[str]) -> None:
    """tests/schedules: a deadlock only the order of two `tcgen05.alloc`s reaches, and a
    result that depends on whether an arrival precedes a non-blocking `test_wait` probe
    (race free): both found by exhaustive exploration of the PTX, as at the NVVM level."""
    deadlock = SCHEDULES / "alloc_order_deadlock.mlir"
    args = ["--kernel", "k", "--block", "64", "-p", "lower-tmem", "-t", "ptx"]
    assert run_cli(capsys, str(deadlock), *args).code == run.EXIT_OK
    result = run_cli(capsys, str(deadlock), *args, "--explore", "exhaustive")
    assert result.code == run.EXIT_DEADLOCK, result.err
    allocations = re.findall(r"note: step \d+: (warp \d) runs 'ptx\.tcgen05_alloc'", result.err)
    assert allocations[:1] == ["warp 1"], result.err
    probe = SCHEDULES / "schedule_dependent_probe.mlir"
    args = ["--kernel", "k", "--block", "64", "--arg", "out=zeros:i32:1", "-t", "ptx"]
    assert run_cli(capsys, str(probe), *args).code == run.EXIT_OK
    result = run_cli(capsys, str(probe), *args, "--explore", "exhaustive")
    assert result.code == run.EXIT_HAZARD
    assert re.search(r"error: hazard schedule-dependent-result: .*index 0", result.err), result.err


@pytest.mark.parametrize("program", sorted(SAFE.glob("*.mlir")), ids=lambda p: p.stem)
def test_safe_programs_validate_through_ptx(capsys: pytest.CaptureFixture[str], program: Path) -> None:
    """tests/safe (M=64 interleaved stages, the .16x32bx2 shape): PTX and NVVM agree."""
    passes = ["-p", "lower-tmem"] if "tmem." in program.read_text() else []
    result = run_cli(
        capsys, str(program), *passes, *shlex.split(header(program, "Run")), "-t", "ptx", "--validate-lowering"
    )
    assert result.code == run.EXIT_OK, result.err


def test_every_typed_instruction_has_a_decoder() -> None:
    """The PTX level executes every instruction our backend can emit (bar.red and
    tcgen05.shift are decoded to a refusal, as the NVVM level refuses them)."""
    typed = {op for op in ptx.PTX.operations if issubclass(op, ptx.Instruction) and op is not ptx.InstOp}
    assert typed <= set(DECODERS), sorted(op.name for op in typed - set(DECODERS))


def _guarded(op: ptx.Instruction, guard: SSAValue) -> ptx.Instruction:
    op.set_guard(guard)
    return op


def _tx_kernel(complete: bool) -> ModuleOp:
    """Lane 0 inits a barrier of count 1 and arrives with expect_tx 16, then (if
    `complete`) complete_tx 16; the warp waits for phase 0 (`try_wait.parity` loop), probes
    it (`test_wait`), invalidates the barrier and stores the probe's result through a
    `cvta.to.global` of the output address."""
    k = Builder([ptx.DeclAttr("param", "u64", "out", ptr=ptx.Pointee("global", 1))])
    k.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B64, [R("b64", 1)], k.symbol("out")))
    k.emit(ptx.CvtaOp(StateSpace.GLOBAL, R("b64", 2), k.reg("b64", 1)))
    k.emit(ptx.MovOp(PtxType.U32, R("b32", 1), k.special("%laneid")))
    k.emit(ptx.SetpOp(CmpOp.EQ, PtxType.U32, R("pred", 1), k.reg("b32", 1), k.imm(0)))
    lane0 = k.reg("pred", 1)
    bar = k.symbol("bar")
    k.emit(_guarded(ptx.MbarrierInitOp(StateSpace.SHARED, bar, k.imm(1)), lane0))
    k.emit(_guarded(ptx.MbarrierArriveOp(StateSpace.SHARED, bar, k.imm(16), expect_tx=True), lane0))
    if complete:
        tx = ptx.MbarrierExpectTxOp(MbarrierTxKind.COMPLETE_TX, StateSpace.SHARED, bar, k.imm(16))
        k.emit(_guarded(tx, lane0))
    k.emit(ptx.LabelOp("WAIT"))
    k.emit(ptx.MbarrierWaitOp(ptx.MbarrierWaitForm(MbarrierWaitKind.TRY_WAIT), R("pred", 2), bar, k.imm(0)))
    k.emit(ptx.BraOp("WAIT", guard=k.reg("pred", 2), negated=True))
    k.emit(ptx.MbarrierWaitOp(ptx.MbarrierWaitForm(MbarrierWaitKind.TEST_WAIT), R("pred", 3), bar, k.imm(0)))
    k.emit(ptx.SelpOp(PtxType.U32, R("b32", 2), k.imm(1), k.imm(0), k.reg("pred", 3)))
    k.emit(_guarded(ptx.MbarrierInvalOp(StateSpace.SHARED, bar), lane0))
    k.emit(_guarded(ptx.StOp(StateSpace.GLOBAL, PtxType.U32, k.reg("b64", 2), [k.reg("b32", 2)]), lane0))
    k.emit(ptx.RetOp())
    return k.module(variables=(ptx.VariableOp(ptx.DeclAttr("shared", "b64", "bar", align=8)),))


def test_mbarrier_transaction_counts() -> None:
    """PTX ISA, mbarrier: a phase completes when its pending arrivals and its tx-count are
    both zero; the arrival alone leaves 16 bytes expected, so without complete_tx the
    wait never passes."""
    out = {"out": np.zeros(1, np.uint32)}
    assert run_kernel(_tx_kernel(True), "k", block=32, args=out).outputs["out"].tolist() == [1]
    with pytest.raises(KernelDeadlock) as caught:
        run_kernel(_tx_kernel(False), "k", block=32, args=out)
    assert isinstance(caught.value.blocked[0].op, ptx.MbarrierWaitOp)


def test_cvta_to_a_space_the_address_is_not_in_is_a_hazard() -> None:
    k = Builder([ptx.DeclAttr("param", "u64", "out", ptr=ptx.Pointee("global", 1))])
    k.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B64, [R("b64", 1)], k.symbol("out")))
    k.emit(ptx.CvtaOp(StateSpace.SHARED, R("b64", 2), k.reg("b64", 1)))
    k.emit(ptx.RetOp())
    with pytest.raises(KernelHazard) as caught:
        run_kernel(k.module(), "k", block=32, args={"out": np.zeros(2, np.uint32)})
    assert caught.value.kind == "out-of-bounds"
    assert "cvta.to.shared.u64: address 0x" in caught.value.message


def test_byval_array_parameter() -> None:
    """`.param .align 8 .b8 s[8]`: the argument's bytes; `ld.param.u32 [s+4]` reads the second word."""
    k = Builder(
        [
            ptx.DeclAttr("param", "u64", "out", ptr=ptx.Pointee("global", 1)),
            ptx.DeclAttr("param", "b8", "s", align=8, dims=[8]),
        ]
    )
    k.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B64, [R("b64", 1)], k.symbol("out")))
    k.emit(ptx.LdOp(StateSpace.PARAM, PtxType.U32, [R("b32", 1)], k.symbol("s"), offset=4))
    k.emit(ptx.StOp(StateSpace.GLOBAL, PtxType.U32, k.reg("b64", 1), [k.reg("b32", 1)]))
    k.emit(ptx.RetOp())
    module = k.module()
    words = np.array([7, 0xDEADBEEF], np.uint32)
    got = run_kernel(module, "k", block=32, args={"out": np.zeros(1, np.uint32), "s": words}).outputs["out"]
    assert got.tolist() == [0xDEADBEEF]
    with pytest.raises(LaunchError, match=r"has 4 bytes; the byval \.param takes 8"):
        run_kernel(module, "k", block=32, args={"out": np.zeros(1, np.uint32), "s": words[:1]})


# --------------------------------------------------------------------------------------
# The typed ops of issue 13: values, warp-level exchange, barriers, refusals
# --------------------------------------------------------------------------------------

LANES = np.arange(32, dtype=np.uint32)
SEED_A, SEED_B = 0x3E3779B9, 0x05EBCA6B


def _pair_kernel(
    body: Callable[[Builder], object], block: int = 32, variables: tuple[ptx.VariableOp, ...] = ()
) -> NDArray[np.uint32]:
    """Runs `body` after %r1 = %laneid, %r2 = lane * SEED_A + 0x12345, %r3 = lane * SEED_B,
    %rd4 = {%r2, %r3}, %rd5 = {%r3, %r2}; stores {%r10, %r11} at out[2 * thread]. Returns
    out as (threads, 2)."""
    k = Builder([ptx.DeclAttr("param", "u64", "out", ptr=ptx.Pointee("global", 1))])
    k.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B64, [R("b64", 1)], k.symbol("out")))
    k.emit(ptx.MovOp(PtxType.U32, R("b32", 1), k.special("%laneid")))
    k.emit(ptx.MovOp(PtxType.U32, R("b32", 9), k.special("%tid.x")))
    k.emit(ptx.MulOp(PtxType.U32, R("b32", 2), k.reg("b32", 1), k.imm(SEED_A), mode=IntMode.LO))
    k.emit(ptx.AddOp(PtxType.U32, R("b32", 2), k.reg("b32", 2), k.imm(0x12345)))
    k.emit(ptx.MulOp(PtxType.U32, R("b32", 3), k.reg("b32", 1), k.imm(SEED_B), mode=IntMode.LO))
    k.emit(ptx.MovPackOp(PtxType.B64, R("b64", 4), [k.reg("b32", 2), k.reg("b32", 3)]))
    k.emit(ptx.MovPackOp(PtxType.B64, R("b64", 5), [k.reg("b32", 3), k.reg("b32", 2)]))
    k.emit(ptx.MovOp(PtxType.U32, R("b32", 10), k.imm(0)))
    k.emit(ptx.MovOp(PtxType.U32, R("b32", 11), k.imm(0)))
    body(k)
    k.emit(ptx.MulOp(PtxType.U32, R("b64", 2), k.reg("b32", 9), k.imm(8), mode=IntMode.WIDE))
    k.emit(ptx.AddOp(PtxType.S64, R("b64", 3), k.reg("b64", 1), k.reg("b64", 2)))
    k.emit(ptx.StOp(StateSpace.GLOBAL, PtxType.U32, k.reg("b64", 3), [k.reg("b32", 10), k.reg("b32", 11)]))
    k.emit(ptx.RetOp())
    result = run_kernel(k.module(variables=variables), "k", block=block, args={"out": np.zeros(2 * block, np.uint32)})
    return result.outputs["out"].reshape(block, 2)


A_LANES = (LANES * np.uint32(SEED_A) + np.uint32(0x12345)).astype(np.uint32)
B_LANES = (LANES * np.uint32(SEED_B)).astype(np.uint32)
AB_LANES = (A_LANES.astype(np.uint64) | (B_LANES.astype(np.uint64) << np.uint64(32))).astype(np.uint64)
BA_LANES = (B_LANES.astype(np.uint64) | (A_LANES.astype(np.uint64) << np.uint64(32))).astype(np.uint64)


def _unpack_into_10_11(k: Builder, wide: SSAValue) -> None:
    k.emit(ptx.MovUnpackOp(PtxType.B64, [R("b32", 10), R("b32", 11)], wide))


def _r(k: Builder, i: int) -> SSAValue:
    return k.reg("b32", i)


# (name, the instruction writing %r10 from %r2 %r3 %r1 / %rd4 %rd5, the semantics' spelling, its inputs in PTX order)
VALUE_OPS: list[tuple[str, Callable[[Builder], object], str, dict[str, int], list[NDArray[np.generic] | int]]] = [
    ("popc", lambda k: k.emit(ptx.PopcOp(PtxType.B32, R("b32", 10), _r(k, 2))), "popc.b32", {}, [A_LANES]),
    ("clz.b64", lambda k: k.emit(ptx.ClzOp(PtxType.B64, R("b32", 10), k.reg("b64", 4))), "clz.b64", {}, [AB_LANES]),
    ("bfind.shiftamt", lambda k: k.emit(ptx.BfindOp(PtxType.S32, R("b32", 10), _r(k, 3), shiftamt=True)),
     "bfind.shiftamt.s32", {}, [B_LANES.view(np.int32)]),
    ("brev", lambda k: k.emit(ptx.BrevOp(PtxType.B32, R("b32", 10), _r(k, 2))), "brev.b32", {}, [A_LANES]),
    ("bfe.s32", lambda k: k.emit(ptx.BfeOp(PtxType.S32, R("b32", 10), (_r(k, 2), _r(k, 1), k.imm(9)))),
     "bfe.s32", {}, [A_LANES.view(np.int32), LANES, np.full(32, 9, np.uint32)]),
    ("bfi", lambda k: k.emit(ptx.BfiOp(PtxType.B32, R("b32", 10), (_r(k, 2), _r(k, 3), _r(k, 1), k.imm(5)))),
     "bfi.b32", {}, [A_LANES, B_LANES, LANES, np.full(32, 5, np.uint32)]),
    ("prmt", lambda k: k.emit(ptx.PrmtOp(R("b32", 10), (_r(k, 2), _r(k, 3), _r(k, 1)))), "prmt.b32", {},
     [A_LANES, B_LANES, LANES]),
    ("prmt.f4e", lambda k: k.emit(ptx.PrmtOp(R("b32", 10), (_r(k, 2), _r(k, 3), _r(k, 1)), PrmtMode.F4E)),
     "prmt.b32.f4e", {}, [A_LANES, B_LANES, LANES]),
    ("lop3", lambda k: k.emit(ptx.Lop3Op(R("b32", 10), (_r(k, 2), _r(k, 3), _r(k, 1)), k.imm(0x96))), "lop3.b32",
     {}, [A_LANES, B_LANES, LANES, 0x96]),
    ("shf.r.clamp", lambda k: k.emit(ptx.ShfOp(ShfDirection.R, ShfMode.CLAMP, R("b32", 10),
                                                (_r(k, 2), _r(k, 3), _r(k, 1)))),
     "shf.r.clamp.b32", {}, [A_LANES, B_LANES, LANES]),
    ("ex2", lambda k: k.emit(ptx.Ex2Op(PtxType.F32, R("b32", 10), _r(k, 2))), "ex2.approx.f32", {},
     [A_LANES.view(np.float32)]),
    ("abs.s32", lambda k: k.emit(ptx.AbsOp(PtxType.S32, R("b32", 10), _r(k, 3))), "abs.s32", {},
     [B_LANES.view(np.int32)]),
    ("rcp.rn", lambda k: k.emit(ptx.RcpOp(PtxType.F32, R("b32", 10), _r(k, 2), rounding=Rounding.RN)),
     "rcp.rn.f32", {}, [A_LANES.view(np.float32)]),
    ("sqrt.approx", lambda k: k.emit(ptx.SqrtOp(PtxType.F32, R("b32", 10), _r(k, 2), approx=True)),
     "sqrt.approx.f32", {}, [A_LANES.view(np.float32)]),
    ("copysign", lambda k: k.emit(ptx.CopysignOp(PtxType.F32, R("b32", 10), _r(k, 3), _r(k, 2))), "copysign.f32",
     {}, [B_LANES.view(np.float32), A_LANES.view(np.float32)]),
    ("testp", lambda k: (k.emit(ptx.TestpOp(PtxTestp.NORMAL, PtxType.F32, R("pred", 5), _r(k, 2))),
                         k.emit(ptx.SelpOp(PtxType.U32, R("b32", 10), k.imm(1), k.imm(0), k.reg("pred", 5)))),
     "testp.normal.f32", {}, [A_LANES.view(np.float32)]),
    ("cvt.rn.f16x2", lambda k: k.emit(ptx.CvtPackOp(PackedFloat.F16X2, R("b32", 10), _r(k, 2), _r(k, 3))),
     "cvt.rn.f16x2.f32", {}, [A_LANES.view(np.float32), B_LANES.view(np.float32)]),
    ("mov.b64 pack/unpack", lambda k: _unpack_into_10_11(k, k.reg("b64", 5)), "mov.b64", {"unpack": 2}, [BA_LANES]),
    ("mov.b64 pack 4", lambda k: (
        k.emit(ptx.MovUnpackOp(PtxType.B64, [R("b16", 1), None, R("b16", 3), R("b16", 4)], k.reg("b64", 4))),
        k.emit(ptx.MovPackOp(PtxType.B64, R("b64", 7), [k.reg("b16", 4), k.reg("b16", 3), k.imm(0x5A),
                                                          k.reg("b16", 1)])),
        _unpack_into_10_11(k, k.reg("b64", 7))),
     "mov.b64", {"pack": 4}, [(AB_LANES >> np.uint64(48)) & np.uint64(0xFFFF), (AB_LANES >> np.uint64(32)) &
                              np.uint64(0xFFFF), np.full(32, 0x5A, np.uint16), AB_LANES & np.uint64(0xFFFF)]),
]  # fmt: skip


@pytest.mark.parametrize(("name", "body", "spelling", "form", "inputs"), VALUE_OPS, ids=[v[0] for v in VALUE_OPS])
def test_typed_value_ops_execute_as_their_semantics(
    name: str,
    body: Callable[[Builder], object],
    spelling: str,
    form: dict[str, int],
    inputs: list[NDArray[np.generic] | int],
) -> None:
    """Each op decodes and runs, and agrees bit for bit with the value semantics applied to
    its operands in PTX order (the semantics themselves are checked against silicon in
    test_ptx_semantics_silicon.py): this pins the decoders' operand order and views."""
    opcode, *modifiers = spelling.split(".")
    sem = decode(opcode, tuple(modifiers), **form)
    typed: list[object] = [
        x if isinstance(x, int) else np.asarray(x).view(LANE_DTYPE[t]) if np.asarray(x).dtype.itemsize ==
        LANE_DTYPE[t].itemsize else np.asarray(x).astype(LANE_DTYPE[t]) for x, t in zip(inputs, sem.operands,
                                                                                        strict=True)
    ]  # fmt: skip
    with np.errstate(all="ignore"):
        out = sem.fn(*typed)
    results = out if len(sem.results) > 1 else (out,)
    words: list[NDArray[np.uint32]] = []
    for value, t in zip(results, sem.results, strict=True):
        dtype = LANE_DTYPE[t]
        bits = np.asarray(value, dtype=dtype).view(f"u{dtype.itemsize}").astype(np.uint64)
        words += [(bits & np.uint64(0xFFFFFFFF)).astype(np.uint32)]
        if dtype.itemsize == 8:  # a .b64 result: unpacked into %r10 (low), %r11 (high)
            words += [(bits >> np.uint64(32)).astype(np.uint32)]
    got = _pair_kernel(body)
    np.testing.assert_array_equal(got[:, : len(words)], np.stack(words, axis=1), err_msg=name)


def _round_f32(q: Fraction) -> np.float32:
    """The float32 nearest the rational `q`, ties to even (IEEE round to nearest)."""
    f = np.float32(float(q))
    candidates = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    return min(candidates, key=lambda c: (abs(Fraction(float(c)) - q), int(np.array(c).view(np.uint32)) & 1))


@pytest.mark.parametrize("mnemonic", ["add", "sub", "mul", "fma"])
def test_f32x2_is_the_f32_op_on_each_half(mnemonic: str) -> None:
    """PTX ISA 9.0, add/sub/mul/fma `.f32x2` (`.rn`): element-wise on the two `.f32` halves
    of the `.b64` operands; the expectation is the exact result rounded once to float32."""
    sign_mantissa = np.uint32(0x807FFFFF)
    x = (np.stack([A_LANES, B_LANES], axis=1) & sign_mantissa) | np.uint32(0x3F800000)  # +-[1, 2)
    y = (np.stack([B_LANES, A_LANES], axis=1) & sign_mantissa) | ((np.uint32(127) + (LANES[:, None] % 8)) << 23)

    def body(k: Builder) -> None:
        for i, lanes in enumerate((x[:, 0], x[:, 1], y[:, 0], y[:, 1])):
            _load_lane_table(k, R("b32", 20 + i), lanes.astype(np.uint32))
        k.emit(ptx.MovPackOp(PtxType.B64, R("b64", 4), [k.reg("b32", 20), k.reg("b32", 21)]))
        k.emit(ptx.MovPackOp(PtxType.B64, R("b64", 5), [k.reg("b32", 22), k.reg("b32", 23)]))
        rn = Rounding.RN
        if mnemonic == "fma":
            k.emit(ptx.FmaF32x2Op(R("b64", 6), (k.reg("b64", 4), k.reg("b64", 5), k.reg("b64", 4)), rounding=rn))
        else:
            cls = {"add": ptx.AddF32x2Op, "sub": ptx.SubF32x2Op, "mul": ptx.MulF32x2Op}[mnemonic]
            k.emit(cls(R("b64", 6), k.reg("b64", 4), k.reg("b64", 5), rounding=rn))
        _unpack_into_10_11(k, k.reg("b64", 6))

    got = _pair_kernel(body)
    exact: dict[str, Callable[[Fraction, Fraction], Fraction]] = {
        "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "fma": lambda a, b: a * b + a,
    }  # fmt: skip
    xf, yf = x.astype(np.uint32).view(np.float32), y.astype(np.uint32).view(np.float32)
    expected = np.array(
        [[_round_f32(exact[mnemonic](Fraction(float(xf[i, h])), Fraction(float(yf[i, h])))) for h in range(2)]
         for i in range(32)], np.float32,
    )  # fmt: skip
    np.testing.assert_array_equal(got, expected.view(np.uint32))


def _load_lane_table(k: Builder, dest: R, values: NDArray[np.uint32]) -> None:
    """dest = values[laneid], by a chain of `selp` on `setp.eq laneid, i` (no memory)."""
    k.emit(ptx.MovOp(PtxType.U32, dest, k.imm(int(values[0]) - (1 << 32) if values[0] >= 1 << 31 else int(values[0]))))
    for i in range(1, 32):
        v = int(values[i])
        k.emit(ptx.SetpOp(CmpOp.EQ, PtxType.U32, R("pred", 30), k.reg("b32", 1), k.imm(i)))
        k.emit(ptx.SelpOp(PtxType.U32, dest, k.imm(v - (1 << 32) if v >= 1 << 31 else v), k.reg(dest.kind.data,
                          dest.index.data), k.reg("pred", 30)))  # fmt: skip


def _imm32(k: Builder, value: int) -> SSAValue:
    """A .b32 immediate from its unsigned bits (i32 attributes are signed)."""
    value &= 0xFFFFFFFF
    return k.imm(value - (1 << 32) if value >= 1 << 31 else value)


def _halves(k: Builder, low: Callable[[Builder], object], high: Callable[[Builder], object]) -> None:
    """if (lane < 16) low else high: two divergent paths, then the join."""
    k.emit(ptx.SetpOp(CmpOp.LT, PtxType.U32, R("pred", 1), k.reg("b32", 1), k.imm(16)))
    k.emit(ptx.BraOp("HIGH", guard=k.reg("pred", 1), negated=True))
    low(k)
    k.emit(ptx.BraOp("JOIN"))
    k.emit(ptx.LabelOp("HIGH"))
    high(k)
    k.emit(ptx.LabelOp("JOIN"))


def _pred_to_r11(k: Builder, p: SSAValue) -> None:
    k.emit(ptx.SelpOp(PtxType.U32, R("b32", 11), k.imm(1), k.imm(0), p))


def _groups(split: bool) -> list[list[int]]:
    """The lanes executing together: the whole warp, or the two halves of `_halves`."""
    return [list(range(16)), list(range(16, 32))] if split else [list(range(32))]


def _mask_of(lanes: list[int]) -> int:
    return sum(1 << i for i in lanes)


def _shfl_reference(mode: str, a: NDArray[np.uint32], b: int, c: int) -> tuple[list[int], list[int]]:
    """PTX ISA 9.0, shfl.sync, its pseudocode per lane: (d, p) of every lane."""
    d: list[int] = []
    p: list[int] = []
    for lane in range(32):
        bval, cval, segmask = b & 0x1F, c & 0x1F, (c >> 8) & 0x1F
        max_lane = (lane & segmask) | (cval & ~segmask)
        min_lane = lane & segmask
        if mode == "up":
            j, pval = lane - bval, lane - bval >= max_lane
        elif mode == "down":
            j, pval = lane + bval, lane + bval <= max_lane
        elif mode == "bfly":
            j, pval = lane ^ bval, (lane ^ bval) <= max_lane
        else:
            j = min_lane | (bval & ~segmask)
            pval = j <= max_lane
        d.append(int(a[j if pval else lane]))
        p.append(int(pval))
    return d, p


SHFL_CASES = [
    ("up", 1, 0x0), ("up", 2, 0x1800), ("down", 3, 0x1F), ("down", 2, 0x181F), ("bfly", 1, 0x1F), ("bfly", 5, 0x1F),
    ("bfly", 4, 0x0A1F), ("idx", 7, 0x1F), ("idx", 35, 0x1F), ("idx", 3, 0x181F), ("idx", 9, 0x1A05),
]  # fmt: skip


@pytest.mark.parametrize(("mode", "b", "c"), SHFL_CASES, ids=[f"{m}-{b}-{c:#x}" for m, b, c in SHFL_CASES])
def test_shfl_sync_follows_the_isa_pseudocode(mode: str, b: int, c: int) -> None:
    """All modes, clamps, 8-lane segments (c = 0x18xx), a segment mask that is not a power
    of two and source lanes with bits above 4 (as docs/silicon.md's warp_ops recorded)."""

    def body(k: Builder) -> None:
        shfl = ptx.ShflSyncOp(ShflMode(mode), R("b32", 10), (k.reg("b32", 2), k.imm(b), k.imm(c)), _imm32(k, -1),
                              pred=R("pred", 4))  # fmt: skip
        k.emit(shfl)
        _pred_to_r11(k, k.reg("pred", 4))

    got = _pair_kernel(body)
    d, p = _shfl_reference(mode, A_LANES, b, c)
    assert got[:, 0].tolist() == d
    assert got[:, 1].tolist() == p
    if (mode, c) == ("bfly", 0x1F):  # the butterfly in words: lane i reads lane i ^ b
        assert got[:, 0].tolist() == A_LANES[LANES ^ b].tolist()


def _vote_expect(mode: str, pred: NDArray[np.bool_], split: bool) -> list[int]:
    """PTX ISA 9.0, vote.sync over the lanes taking part: .ballot bit i = lane i's
    predicate; .all / .any / .uni (all equal) as 0/1."""
    out = [0] * 32
    for group in _groups(split):
        votes = [bool(pred[i]) for i in group]
        value = {"ballot": _mask_of([i for i in group if pred[i]]), "all": int(all(votes)), "any": int(any(votes)),
                 "uni": int(all(votes) or not any(votes))}[mode]  # fmt: skip
        for i in group:
            out[i] = value
    return out


@pytest.mark.parametrize("split", [False, True], ids=["converged", "divergent"])
@pytest.mark.parametrize("negate", [False, True])
@pytest.mark.parametrize("mode", ["ballot", "all", "any", "uni"])
def test_vote_sync(mode: str, negate: bool, split: bool) -> None:
    """p = (lane % 3 == 0) (or lane < 16 for a uniform half), voted by the warp or by each
    divergent half under its own membermask."""

    def vote(k: Builder, member: int) -> None:
        if mode == "ballot":
            k.emit(ptx.VoteSyncOp(VoteMode.BALLOT, R("b32", 10), k.reg("pred", 6), _imm32(k, member), negate=negate))
        else:
            op = ptx.VoteSyncOp(VoteMode(mode), R("pred", 7), k.reg("pred", 6), _imm32(k, member), negate=negate)
            k.emit(op)
            k.emit(ptx.SelpOp(PtxType.U32, R("b32", 10), k.imm(1), k.imm(0), k.reg("pred", 7)))

    def body(k: Builder) -> None:
        k.emit(ptx.RemOp(PtxType.U32, R("b32", 5), k.reg("b32", 1), k.imm(3)))
        k.emit(ptx.SetpOp(CmpOp.EQ, PtxType.U32, R("pred", 6), k.reg("b32", 5), k.imm(0)))
        if split:
            _halves(k, lambda k: vote(k, 0x0000FFFF), lambda k: vote(k, 0xFFFF0000))
        else:
            vote(k, 0xFFFFFFFF)

    pred = (LANES % 3 == 0) != negate
    assert _pair_kernel(body)[:, 0].tolist() == _vote_expect(mode, pred, split)


@pytest.mark.parametrize("split", [False, True], ids=["converged", "divergent"])
def test_match_sync(split: bool) -> None:
    """PTX ISA 9.0, match.sync: `.any` d = the lanes taking part whose value equals this
    lane's (value lane % 4); `.all` d = all of them and p when every value is equal
    (value lane / 32 = 0), else d = 0 and not p (value lane % 4)."""

    def match(k: Builder, member: int, src: SSAValue, every: bool) -> None:
        if every:
            k.emit(ptx.MatchSyncOp(MatchMode.ALL, PtxType.B32, R("b32", 10), src, _imm32(k, member), R("pred", 8)))
            _pred_to_r11(k, k.reg("pred", 8))
        else:
            k.emit(ptx.MatchSyncOp(MatchMode.ANY, PtxType.B32, R("b32", 10), src, _imm32(k, member)))

    def kernel(src_reg: int, every: bool) -> NDArray[np.uint32]:
        def body(k: Builder) -> None:
            k.emit(ptx.RemOp(PtxType.U32, R("b32", 5), k.reg("b32", 1), k.imm(4)))
            k.emit(ptx.ShrOp(PtxType.U32, R("b32", 6), k.reg("b32", 1), k.imm(5)))
            src = k.reg("b32", src_reg)
            if split:
                _halves(k, lambda k: match(k, 0x0000FFFF, src, every), lambda k: match(k, 0xFFFF0000, src, every))
            else:
                match(k, 0xFFFFFFFF, src, every)

        return _pair_kernel(body)

    groups = _groups(split)
    group_of = {i: g for g in groups for i in g}
    any_expected = [_mask_of([j for j in group_of[i] if j % 4 == i % 4]) for i in range(32)]
    assert kernel(5, every=False)[:, 0].tolist() == any_expected
    uniform = kernel(6, every=True)
    assert uniform[:, 0].tolist() == [_mask_of(group_of[i]) for i in range(32)]
    assert uniform[:, 1].tolist() == [1] * 32
    varying = kernel(5, every=True)
    assert varying[:, 0].tolist() == [0] * 32
    assert varying[:, 1].tolist() == [0] * 32


def test_activemask_and_elect_with_the_leader_lane() -> None:
    """activemask: the lanes on this path (0xFFFF / 0xFFFF0000), and after lanes 20-31
    exited (0x000FFFFF); elect.sync d|p: every lane gets the elected lane's number, p in
    that lane only — the lowest lane of the membermask (docs/silicon.md: recorded on an
    H100; the ISA leaves the choice open)."""

    def elect(k: Builder, member: int) -> None:
        k.emit(ptx.ElectSyncOp(R("pred", 9), _imm32(k, member), lane=R("b32", 10)))
        _pred_to_r11(k, k.reg("pred", 9))

    got = _pair_kernel(lambda k: _halves(k, lambda k: elect(k, 0x0000FFF0), lambda k: elect(k, 0xFFFFFFFF)))
    assert got[:, 0].tolist() == [4] * 16 + [16] * 16
    assert got[:, 1].tolist() == [int(i in (4, 16)) for i in range(32)]

    def active(k: Builder) -> None:
        k.emit(ptx.ActivemaskOp(R("b32", 10)))

    got = _pair_kernel(lambda k: _halves(k, active, active))
    assert got[:, 0].tolist() == [0x0000FFFF] * 16 + [0xFFFF0000] * 16

    def after_exit(k: Builder) -> None:
        k.emit(ptx.SetpOp(CmpOp.GE, PtxType.U32, R("pred", 2), k.reg("b32", 1), k.imm(20)))
        k.emit(_guarded(ptx.RetOp(), k.reg("pred", 2)))
        k.emit(ptx.ActivemaskOp(R("b32", 10)))

    assert _pair_kernel(after_exit)[:20, 0].tolist() == [0x000FFFFF] * 20


def test_warp_sync_ops_check_their_membermask() -> None:
    """An executing lane outside the membermask is undefined behaviour (PTX ISA 9.0,
    shfl.sync): a hazard. A live member lane on the other divergent path would be waited
    for on the GPU, which the model does not do: refused, located."""

    def shfl(member: int) -> Callable[[Builder], None]:
        def emit(k: Builder) -> None:
            k.emit(ptx.ShflSyncOp(ShflMode.BFLY, R("b32", 10), (k.reg("b32", 2), k.imm(1), k.imm(0x1F)),
                                  _imm32(k, member)))  # fmt: skip

        return emit

    with pytest.raises(KernelHazard) as caught:
        _pair_kernel(shfl(0x0000FFFF))
    assert caught.value.kind == "warp-sync-membermask"
    assert "lanes 16-31 not in membermask 0x0000ffff" in caught.value.message
    with pytest.raises(LaunchError) as refused:
        _pair_kernel(lambda k: _halves(k, shfl(0xFFFFFFFF), lambda k: None))
    assert re.search(r"shfl\.sync\.bfly\.b32 at PTX line \d+: membermask lanes 16-31 are live but do not execute it",
                     refused.value.message), refused.value.message  # fmt: skip


def test_barrier_sync_and_arrive() -> None:
    """`barrier.sync` / `barrier.arrive` are bar.sync / bar.arrive (bar is the `.aligned`
    form): a 64-thread hand-off — warp 1 writes r10 = 7 to shared memory, arrives on
    barrier 1; warp 0 waits there and reads it. Divergent: with `.aligned` a hazard;
    without, each half of the warp reaches barrier 0 from its own instruction and the warp
    arrives once both did (PTX ISA 9.0, barrier: a thread waits for all non-exited threads
    of its warp): the low half, which got there first, reads what the high half stored
    before its own barrier (r10 = 100 + its partner lane). A warp whose high half never
    reaches the barrier never arrives: a deadlock."""
    slot = ptx.VariableOp(ptx.DeclAttr("shared", "b32", "slot", align=4))

    def handoff(aligned: bool) -> NDArray[np.uint32]:
        k = Builder([ptx.DeclAttr("param", "u64", "out", ptr=ptx.Pointee("global", 1))])
        k.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B64, [R("b64", 1)], k.symbol("out")))
        k.emit(ptx.MovOp(PtxType.U32, R("b32", 9), k.special("%tid.x")))
        k.emit(ptx.SetpOp(CmpOp.GE, PtxType.U32, R("pred", 1), k.reg("b32", 9), k.imm(32)))
        k.emit(ptx.BraOp("CONSUMER", guard=k.reg("pred", 1), negated=True))
        k.emit(ptx.StOp(StateSpace.SHARED, PtxType.U32, k.symbol("slot"), [k.imm(7)]))
        k.emit(ptx.BarrierOp(BarrierKind.ARRIVE, k.imm(1), k.imm(64), aligned=aligned))
        k.emit(ptx.RetOp())
        k.emit(ptx.LabelOp("CONSUMER"))
        k.emit(ptx.BarrierOp(BarrierKind.SYNC, k.imm(1), k.imm(64), aligned=aligned))
        k.emit(ptx.LdOp(StateSpace.SHARED, PtxType.U32, [R("b32", 10)], k.symbol("slot")))
        k.emit(ptx.MulOp(PtxType.U32, R("b64", 2), k.reg("b32", 9), k.imm(4), mode=IntMode.WIDE))
        k.emit(ptx.AddOp(PtxType.S64, R("b64", 3), k.reg("b64", 1), k.reg("b64", 2)))
        k.emit(ptx.StOp(StateSpace.GLOBAL, PtxType.U32, k.reg("b64", 3), [k.reg("b32", 10)]))
        k.emit(ptx.RetOp())
        module = k.module(variables=(slot.clone(),))
        return run_kernel(module, "k", block=64, args={"out": np.zeros(32, np.uint32)}).outputs["out"]

    for aligned in (False, True):
        assert handoff(aligned).tolist() == [7] * 32

    def divergent(aligned: bool, high_arrives: bool = True) -> Callable[[Builder], None]:
        def barrier(k: Builder) -> None:
            k.emit(ptx.BarrierOp(BarrierKind.SYNC, k.imm(0), aligned=aligned))

        def high(k: Builder) -> None:
            k.emit(ptx.AddOp(PtxType.U32, R("b32", 12), k.reg("b32", 1), k.imm(100)))
            k.emit(ptx.MulOp(PtxType.U32, R("b32", 13), k.reg("b32", 1), k.imm(4), mode=IntMode.LO))
            k.emit(ptx.StOp(StateSpace.SHARED, PtxType.U32, k.reg("b32", 13), [k.reg("b32", 12)]))
            if high_arrives:
                barrier(k)

        def low(k: Builder) -> None:
            barrier(k)
            k.emit(ptx.MulOp(PtxType.U32, R("b32", 13), k.reg("b32", 1), k.imm(4), mode=IntMode.LO))
            k.emit(ptx.LdOp(StateSpace.SHARED, PtxType.U32, [R("b32", 10)], k.reg("b32", 13), offset=64))

        def emit(k: Builder) -> None:
            _halves(k, low, high)

        return emit

    def buf() -> tuple[ptx.VariableOp]:
        return (ptx.VariableOp(ptx.DeclAttr("shared", "b32", "buf", align=4, dims=(32,))),)

    got = _pair_kernel(divergent(False), variables=buf())[:, 0]
    np.testing.assert_array_equal(got, np.where(np.arange(32) < 16, np.arange(32) + 116, 0))
    with pytest.raises(KernelDeadlock) as stuck:
        _pair_kernel(divergent(False, high_arrives=False), variables=buf())
    assert "lanes 16-31 of the warp have not reached it" in stuck.value.blocked[0].reason, stuck.value.blocked
    with pytest.raises(KernelHazard) as caught:
        _pair_kernel(divergent(True), variables=buf())
    assert caught.value.kind == "divergent-sync-aligned"


def test_no_effect_ops_trap_and_setmaxnreg() -> None:
    """nanosleep and prefetch change nothing the model tracks; setmaxnreg is `.sync.aligned`
    (a divergent warp is a hazard); a trap in lane 5 aborts the kernel, located."""

    def quiet(k: Builder) -> None:
        k.emit(ptx.NanosleepOp(k.imm(100)))
        k.emit(ptx.PrefetchOp(StateSpace.GLOBAL, k.reg("b64", 1), level=CacheLevel.L2))
        k.emit(ptx.SetmaxnregOp(SetmaxnregAction.INC, k.imm(240)))
        k.emit(ptx.MovOp(PtxType.U32, R("b32", 10), k.imm(3)))

    assert _pair_kernel(quiet)[:, 0].tolist() == [3] * 32
    with pytest.raises(KernelHazard) as caught:
        _pair_kernel(lambda k: _halves(k, lambda k: k.emit(ptx.SetmaxnregOp(SetmaxnregAction.DEC, k.imm(40))),
                                       lambda k: None))  # fmt: skip
    assert caught.value.kind == "divergent-sync-aligned"

    def trap(k: Builder) -> None:
        k.emit(ptx.SetpOp(CmpOp.EQ, PtxType.U32, R("pred", 2), k.reg("b32", 1), k.imm(5)))
        k.emit(_guarded(ptx.TrapOp(), k.reg("pred", 2)))

    with pytest.raises(KernelHazard) as caught:
        _pair_kernel(trap)
    assert caught.value.kind == "trap"
    assert "trap executed by lanes 5 of" in caught.value.message
    assert isinstance(caught.value.op, ptx.TrapOp)


@pytest.mark.parametrize("which", ["cp.async.bulk.commit_group", "cp.async.bulk.wait_group"])
def test_bulk_groups_run_without_effect(which: str) -> None:
    """Bulk async-groups execute since issue 14: the model's bulk stores complete when
    issued (interpreter/ptx/tma_copy.py), so committing and waiting change nothing. (Before,
    they were refused.)"""

    def body(k: Builder) -> None:
        if which == "cp.async.bulk.commit_group":
            k.emit(ptx.CpAsyncCommitGroupOp(bulk=True))
        else:
            k.emit(ptx.CpAsyncWaitGroupOp(k.imm(0), bulk=True))
        k.emit(ptx.MovOp(PtxType.U32, R("b32", 10), k.imm(3)))

    assert _pair_kernel(body)[:, 0].tolist() == [3] * 32


# --------------------------------------------------------------------------------------
# llc-22's PTX of the same NVVM
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("program", "args"), CLEAN, ids=[p.stem for p, _ in CLEAN])
def test_llc_ptx_computes_what_the_nvvm_level_computes(
    capsys: pytest.CaptureFixture[str], upstream: Upstream, tmp_path: Path, program: Path, args: str
) -> None:
    """llc-22's PTX of the NVVM-level kernel (parsed, recognized, run as a `.ptx` file)
    writes the NVVM level's output bit for bit (the FP8 inputs' NaN codes included: both
    levels compute float ops as the same PTX instructions): the same inputs, passed by
    position since llc-22 names parameters `K_param_N`."""
    module = parse(program.read_text())
    if program.parent == EXAMPLES:
        LowerTmemPass().apply(make_context(), module)
    source = tmp_path / f"{program.stem}.ptx"
    source.write_text(upstream.to_ptx(str(module)))
    words = shlex.split(args)
    kernel = words[words.index("--kernel") + 1]
    names = [w.split("=", 1)[0] for w in words if "=" in w]
    assert names[0] == "out"  # the output is the first parameter of every CLEAN kernel
    positional = [re.sub(r"^([^=]+)=", lambda m: f"arg{names.index(m.group(1))}=", w) if "=" in w else w for w in words]
    nvvm_dir, ptx_dir = tmp_path / "nvvm", tmp_path / "ptx"
    nvvm = run_cli(capsys, str(program), *(["-p", "lower-tmem"] if program.parent == EXAMPLES else []), *words,
                   "--out", str(nvvm_dir))  # fmt: skip
    assert nvvm.code == run.EXIT_OK, nvvm.err
    llc = run_cli(capsys, str(source), *positional, "--out", str(ptx_dir))
    assert llc.code == run.EXIT_OK, llc.err
    expected, got = np.load(nvvm_dir / "out.npy"), np.load(ptx_dir / f"{kernel}_param_0.npy")
    assert got.shape == expected.shape
    assert got.tobytes() == expected.tobytes()


def _nvvm_level(run_opt: RunOpt, program: Path) -> tuple[str, list[str]]:
    """A corpus program at the NVVM level (after the `-p` of its level) and the flags that
    get there from the file itself."""
    level = header(program, "Level")
    passes = ["-p", level[level.index("(") + 1 : -1]] if "(" in level else []
    if level.startswith("tmem"):
        passes = ["-p", "lower-tmem"]
    if not passes:
        return program.read_text(), []
    lowered = run_opt(None, *passes, path=program)
    assert lowered.code == 0, lowered.err
    return lowered.out, passes


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_corpus_keeps_its_class_through_llc(
    capsys: pytest.CaptureFixture[str], run_opt: RunOpt, upstream: Upstream, tmp_path: Path, program: Path
) -> None:
    """llc-22's PTX of each corpus program's NVVM level, read by our front end and run as a
    `.ptx` file (arguments by position: llc-22 names parameters `K_param_N`), ends as the
    NVVM level does: the same exit code and hazard class (`test_corpus_keeps_its_class_at_ptx_level`
    holds our PTX to the same)."""
    text, passes = _nvvm_level(run_opt, program)
    source = tmp_path / f"{program.stem}.ptx"
    source.write_text(upstream.to_ptx(text))
    words = shlex.split(header(program, "Run"))
    kernel = words[words.index("--kernel") + 1]
    names = parameter_names(parse(text), kernel)
    assert names is not None
    position = {name: i for i, name in enumerate(names)}
    by_position = [re.sub(r"^([^=]+)=", lambda m: f"arg{position[m.group(1)]}=", w) if "=" in w else w for w in words]
    result = run_cli(capsys, str(source), *by_position)
    match = re.search(r"hazard ([a-z-]+):", result.err)
    assert (result.code, match.group(1) if match else "") == _ptx_verdict(capsys, program, passes), result.err


_ACCUMULATOR_KERNEL = """
llvm.func @k(%g: !llvm.ptr<1>, %o: !llvm.ptr<1>, %p: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %x = llvm.load %g {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
  %zero = arith.constant dense<0.0> : vector<4xf32>
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (vector<4xf32>) : i32 {
    %sq = arith.mulf %x, %x : vector<4xf32>
    %next = arith.addf %acc, %sq : vector<4xf32>
    scf.yield %next : vector<4xf32>
  }
  llvm.store %sum, %o {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
  %y = llvm.load %g {alignment = 4 : i64} : !llvm.ptr<1> -> vector<3xf32>
  %odd = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %y) -> (vector<3xf32>) : i32 {
    %next = arith.addf %acc, %y : vector<3xf32>
    scf.yield %next : vector<3xf32>
  }
  llvm.store %odd, %p {alignment = 4 : i64} : vector<3xf32>, !llvm.ptr<1>
  llvm.return
}
"""


def test_accumulator_carried_as_pairs_computes_as_numpy(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Loop-carried f32x2 accumulators (lane pairs carried as `.b64`, stored as `.v2.b64`;
    an odd lane carried alone) run at the PTX level give numpy's float32 sums, rounded
    after each addition, bit for bit (a subnormal, an overflow to inf, NaN)."""
    program = tmp_path / "k.mlir"
    program.write_text(_ACCUMULATOR_KERNEL)
    x = np.array([1 / 3, 1e-20, 2e19, np.nan], dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    ptx_text = emit_ptx(parse(_ACCUMULATOR_KERNEL), "sm_100a")
    assert "st.global.v2.b64" in ptx_text, ptx_text
    out = tmp_path / "out"
    args = ["--kernel", "k", "--block", "1", "--arg", f"g={tmp_path / 'x.npy'}", "--arg", "n=5"]
    outputs = ["--arg", "o=zeros:f32:4", "--arg", "p=zeros:f32:3"]
    result = run_cli(capsys, str(program), *args, *outputs, "-t", "ptx", "--out", str(out))
    assert result.code == 0, result.err
    total, odd = np.zeros(4, np.float32), x[:3].copy()
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        for _ in range(5):
            total = total + x * x
            odd = odd + x[:3]
    assert np.load(out / "o.npy").view(np.uint32).tolist()[:3] == total.view(np.uint32).tolist()[:3]
    assert np.isinf(total[2])
    assert np.isnan(np.load(out / "o.npy")[3])
    assert np.load(out / "p.npy").view(np.uint32).tolist() == odd.view(np.uint32).tolist()


_PACKED_KERNEL = """
llvm.func @k(%g: !llvm.ptr<1>, %h: !llvm.ptr<1>, %o: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %a = llvm.load %g {alignment = 16 : i64} : !llvm.ptr<1> -> vector<5xf32>
  %b = llvm.load %h {alignment = 16 : i64} : !llvm.ptr<1> -> vector<5xf32>
  %m = arith.mulf %a, %b : vector<5xf32>
  %s = arith.addf %m, %a : vector<5xf32>
  %d = arith.subf %s, %b : vector<5xf32>
  llvm.store %d, %o {alignment = 16 : i64} : vector<5xf32>, !llvm.ptr<1>
  llvm.return
}
"""


def test_selected_f32x2_computes_each_lane_as_numpy(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The backend's `.f32x2` selection (two pairs and a scalar lane of vector<5xf32>) run at
    the PTX level gives numpy's float32 `(a * b + a) - b`, rounded after each op, bit for
    bit: signed zeros, a subnormal, overflow to inf, NaN."""
    program = tmp_path / "k.mlir"
    program.write_text(_PACKED_KERNEL)
    a = np.array([1.5, -0.0, 1e-39, 3e38, np.nan], dtype=np.float32)
    b = np.array([2.25, 0.0, -7.0, 4.0, 1.0], dtype=np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    ptx_text = emit_ptx(parse(_PACKED_KERNEL), "sm_100a")
    assert len(re.findall(r"\.f32x2", ptx_text)) == 6, ptx_text
    out = tmp_path / "out"
    args = ["--kernel", "k", "--block", "1", "--arg", f"g={tmp_path / 'a.npy'}", "--arg", f"h={tmp_path / 'b.npy'}"]
    result = run_cli(capsys, str(program), *args, "--arg", "o=zeros:f32:5", "-t", "ptx", "--out", str(out))
    assert result.code == 0, result.err
    with np.errstate(over="ignore", invalid="ignore"):
        expected = (a * b + a) - b
    assert np.load(out / "o.npy").view(np.uint32).tolist()[:4] == expected.view(np.uint32).tolist()[:4]
    assert np.isnan(np.load(out / "o.npy")[4])
