"""The PTX level of the machine model (docs/ptx-level.md): our backend's PTX runs on the
same machine model as the NVVM level and computes the same numbers (numpy), reaches the
same verdicts (the corpus headers), and agrees with the NVVM level bit for bit
(`--validate-lowering` through `convert-to-ptx`); SIMT reconvergence, its hazards,
parameters and refusals on hand-built PTX."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from gemm_reference import epilogue_rows, kmajor_matrix, parse
from numpy.typing import NDArray
from support import CLEAN, CORPUS, EXAMPLES, LIT_TESTS, ROOT, SCHEDULES, header, run_cli
from xdsl.dialects.builtin import ArrayAttr, IntAttr, IntegerAttr, ModuleOp, i32
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from xdsl_tmem.backend.target import ConvertToPtxPass, emit_ptx
from xdsl_tmem.dialects import nvvm, ptx
from xdsl_tmem.dialects.ptx.generic import ArgInt
from xdsl_tmem.dialects.ptx.qualifiers import CmpOp, IntMode, MbarrierTxKind, MbarrierWaitKind, PtxType, StateSpace
from xdsl_tmem.dialects.traits import SyncPoint, WarpLocal
from xdsl_tmem.interpreter import KernelDeadlock, KernelHazard, LaunchError, run_kernel
from xdsl_tmem.interpreter.ptx.cfg import EXIT, Flow, reconvergence_points
from xdsl_tmem.interpreter.ptx.program import DECODERS
from xdsl_tmem.passes.lower_tmem import LowerTmemPass
from xdsl_tmem.tools import run
from xdsl_tmem.tools.run import make_context

PROGRAMS = sorted(CORPUS.glob("*.mlir"))
SAFE = ROOT / "tests" / "safe"
UNSELECTABLE = {"mixed_cta_group": "a device function (@release), which the PTX backend does not select"}
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
    bit (`xdsl-tmem-run -t ptx --validate-lowering`); the blockwise FP8 example's random
    bytes include e4m3 NaN codes, so NaNs (whose payloads may differ) are compared too."""
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
    """`bar.red` (not modelled) on a path no lane takes does not stop the run; on a path
    one lane takes it is refused, naming the instruction and its PTX line."""

    def body(k: Builder, bound: int) -> None:
        k.emit(ptx.SetpOp(CmpOp.LT, PtxType.U32, R("pred", 1), k.reg("b32", 1), k.imm(bound)))
        k.emit(ptx.BraOp("SKIP", guard=k.reg("pred", 1), negated=True))
        k.emit(ptx.BarRedOp(nvvm.BarrierReduction.POPC, R("b32", 20), k.imm(0), None, k.reg("pred", 1)))
        k.emit(ptx.LabelOp("SKIP"))

    np.testing.assert_array_equal(_run_lanes(_lane_kernel(lambda k: body(k, 0))), np.zeros(32))
    with pytest.raises(LaunchError) as caught:
        _run_lanes(_lane_kernel(lambda k: body(k, 1)))
    assert "bar.red.popc.u32" in caught.value.message
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
