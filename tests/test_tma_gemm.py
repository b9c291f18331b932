"""The real TMA GEMMs (examples/tma_gemm_cg1.mlir, tma_gemm_cg2.mlir; docs/tma.md, "A real TMA
GEMM"): C = A @ B.T for non-square shapes and several K, equal to the exact product within the
f32 summation bound; the same bits at the tmem level, after lower-tmem (NVVM level), through
our PTX backend and through llc-22's PTX; SAFE under schedule exploration; seeded protocol bugs
caught with their class.

The expectations are independent of the kernels: numpy's f64 product and Higham's bound for
the GEMM; for the seeded bugs, the PTX ISA's mbarrier rules (a phase completes when its pending
arrivals and its transaction count are both zero; a tensor-core read of shared memory is ordered
after a TMA write only through the phase the copy completes)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from external import Upstream
from numpy.typing import NDArray
from support import EXAMPLES, run_cli
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xdsl_tmem.backend.target import ConvertToPtxPass
from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.frontend import load_ptx
from xdsl_tmem.interpreter import KernelDeadlock, KernelHazard, RunResult, run_kernel
from xdsl_tmem.interpreter.tma import parse_tensor_map_arg
from xdsl_tmem.passes.lower_tmem import LowerTmemPass
from xdsl_tmem.reference import f32_summation_bound, reference_gemm
from xdsl_tmem.tools import run
from xdsl_tmem.tools.run import make_context

BLOCK = (192, 1, 1)
CG1, CG2 = EXAMPLES / "tma_gemm_cg1.mlir", EXAMPLES / "tma_gemm_cg2.mlir"
SHAPES = {
    # (M, N, K, CTAs): several tiles per CTA (the persistent loop), K of 1, 2 and 5 blocks of
    # 64 (5 > the 4 input stages: the ring wraps and its phases flip), M != N.
    CG1: [(256, 512, 128, 2), (384, 256, 64, 2), (128, 768, 320, 1)],
    # M a multiple of 256 (the pair's tile); 2 CTAs = one pair, 4 = two pairs.
    CG2: [(512, 256, 128, 2), (256, 768, 320, 4), (768, 256, 64, 2)],
}
DYNAMIC_SHARED = {CG1: 4 * (16384 + 32768), CG2: 4 * (16384 + 16384)}
"""The operand ring: 4 stages of the A and B boxes (bytes of one CTA)."""
CASES = [(p, *s) for p, shapes in SHAPES.items() for s in shapes]
IDS = [f"{p.stem}-{m}x{n}x{k}-grid{g}" for p, m, n, k, g in CASES]


def _operands(m: int, n: int, k: int, seed: int = 0) -> tuple[NDArray[np.float16], NDArray[np.float16]]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((m, k)).astype(np.float16), rng.standard_normal((n, k)).astype(np.float16)


def _box_rows(program: Path) -> tuple[int, int]:
    """Rows of the A and B boxes: cg1 loads 128 x 64 of A and 256 x 64 of B per stage; each
    CTA of a cg2 pair its 128-row halves of both."""
    return (128, 256) if program == CG1 else (128, 128)


def _arguments(program: Path, m: int, n: int, k: int) -> dict[str, Any]:
    a, b = _operands(m, n, k)
    rows_a, rows_b = _box_rows(program)
    # cuTensorMapEncodeTiled's view of a row-major (rows x K) f16 matrix: dimension 0 is K,
    # rows are 2K bytes apart; a box row is 64 f16 = 128 bytes, the 128B swizzle span.
    return {
        "a": a,
        "b": b,
        "arg0": parse_tensor_map_arg(f"tensormap:a:f16:{k}x{m}:{2 * k}:64x{rows_a}:swizzle=128B"),
        "arg1": parse_tensor_map_arg(f"tensormap:b:f16:{k}x{n}:{2 * k}:64x{rows_b}:swizzle=128B"),
        "arg2": np.zeros((m, n), np.float32),
        "arg3": m,
        "arg4": n,
        "arg5": k,
    }


def _c(result: RunResult) -> NDArray[np.float32]:
    (c,) = [v for name, v in result.outputs.items() if name not in ("a", "b")]
    return c


def _tmem(program: Path) -> ModuleOp:
    module = Parser(make_context(), program.read_text(), str(program)).parse_module()
    module.verify()
    return module


def _nvvm(program: Path) -> ModuleOp:
    module = _tmem(program)
    LowerTmemPass().apply(make_context(), module)
    module.verify()
    return module


def _ours(program: Path) -> ModuleOp:
    module = _nvvm(program)
    ConvertToPtxPass().apply(make_context(), module)
    module.verify()
    return module


def _llc(program: Path, upstream: Upstream) -> ModuleOp:
    return load_ptx(upstream.to_ptx(str(_nvvm(program))), "llc-22.ptx", SourceMap())


def _run(module: ModuleOp, program: Path, m: int, n: int, k: int, grid: int, **launch: Any) -> RunResult:
    return run_kernel(module, program.stem, block=BLOCK, grid=(grid, 1, 1), args=_arguments(program, m, n, k),
                      dynamic_shared_bytes=DYNAMIC_SHARED[program], **launch)  # fmt: skip


@pytest.mark.parametrize(("program", "m", "n", "k", "grid"), CASES, ids=IDS)
def test_tma_gemm_is_numpys_gemm_at_every_level(
    upstream: Upstream, program: Path, m: int, n: int, k: int, grid: int
) -> None:
    """The tmem level computes A @ B.T within the f32 summation bound of the exact product
    (every element written: C starts at zero, and every exact product farther from zero
    than its bound is non-zero in C), and the NVVM level, our PTX and llc-22's PTX give the
    same bits."""
    a, b = _operands(m, n, k)
    result = _run(_tmem(program), program, m, n, k, grid)
    c = _c(result)
    # f32_summation_bound: gamma_{K-1} * sum_k |a_ik b_jk| (Higham; f16 products are exact in f32)
    exact, bound = reference_gemm(a, b), f32_summation_bound(a, b)
    assert np.all(np.abs(c.astype(np.float64) - exact) <= bound)
    assert np.all((c != 0) | (np.abs(exact) <= bound))
    # 4 MMAs (K = 16 each) per 64-wide K block of every output tile
    tiles = (m // (128 if program == CG1 else 256)) * (n // 256)
    assert result.report.mma_count == tiles * (k // 64) * 4
    for name, module in (("nvvm", _nvvm(program)), ("ours", _ours(program)), ("llc", _llc(program, upstream))):
        other = _c(_run(module, program, m, n, k, grid))
        assert other.tobytes() == c.tobytes(), f"{name} differs from the tmem level"


def _cli_args(tmp_path: Path, program: Path, m: int, n: int, k: int, grid: int) -> list[str]:
    a, b = _operands(m, n, k)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    rows_a, rows_b = _box_rows(program)
    return [
        str(program), "--kernel", program.stem, "--block", "192", "--grid", str(grid),
        "--dynamic-shared", str(DYNAMIC_SHARED[program]),
        "--arg", f"a={tmp_path / 'a.npy'}", "--arg", f"b={tmp_path / 'b.npy'}",
        "--arg", f"tma_a=tensormap:a:f16:{k}x{m}:{2 * k}:64x{rows_a}:swizzle=128B",
        "--arg", f"tma_b=tensormap:b:f16:{k}x{n}:{2 * k}:64x{rows_b}:swizzle=128B",
        "--arg", f"c=zeros:f32:{m}x{n}", "--arg", f"m={m}", "--arg", f"n={n}", "--arg", f"k={k}",
    ]  # fmt: skip


@pytest.mark.parametrize("level", [[], ["-p", "lower-tmem"]], ids=["tmem", "nvvm"])
@pytest.mark.parametrize(("program", "grid"), [(CG1, 2), (CG2, 4)], ids=["cg1", "cg2"])
def test_tma_gemm_is_safe_under_random_schedules(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, program: Path, grid: int, level: list[str]
) -> None:
    m = 256 if program == CG1 else 512
    args = _cli_args(tmp_path, program, m, 256, 320, grid)
    result = run_cli(capsys, *args, *level, "--explore", "random:5")
    assert result.code == run.EXIT_OK, result.err
    assert result.out.startswith("explore random: SAFE: 5 schedules"), result.out


@pytest.mark.parametrize(("n", "k"), [(256, 64), (512, 128)], ids=["1-tile-1-block", "2-tiles-2-blocks"])
def test_small_tma_gemms_are_safe_under_exhaustive_exploration(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, n: int, k: int
) -> None:
    """One CTA, one or two 128 x 256 tiles (both accumulator stages), one or two K blocks:
    every interleaving of the six warps' sync points. (The cg2 pair's twelve warps outgrow
    the exploration's memory limit even for one tile.)"""
    result = run_cli(capsys, *_cli_args(tmp_path, CG1, 128, n, k, 1), "--explore", "exhaustive")
    assert result.code == run.EXIT_OK, result.err
    assert re.match(r"explore exhaustive: SAFE: \d+ states", result.out), result.out


def _seeded(program: Path, old: str, new: str, count: int = 1) -> ModuleOp:
    text = program.read_text()
    assert text.count(old) == count, old
    module = Parser(make_context(), text.replace(old, new), str(program)).parse_module()
    module.verify()
    return module


EXPECT_TX = {CG1: "%stage_tx = arith.constant 49152 : i32", CG2: "%pair_tx = arith.constant 65536 : i32"}


@pytest.mark.parametrize("program", [CG1, CG2], ids=["cg1", "cg2"])
def test_expect_tx_above_the_stages_bytes_deadlocks(program: Path) -> None:
    """16 bytes more than the stage's boxes deliver: the first full[s] phase keeps a
    transaction count of 16 after every byte has landed, so it never completes and the MMA
    warp waits on it for ever (the model completes a phase when its pending arrivals and
    its tx-count are both zero, as the H100's tma_mbarrier_tx fixtures pin it)."""
    old = EXPECT_TX[program]
    value = int(old.split()[3])
    module = _seeded(program, old, old.replace(str(value), str(value + 16)))
    m = 256 if program == CG1 else 512
    with pytest.raises(KernelDeadlock) as caught:
        _run(module, program, m, 256, 128, 2)
    # The MMA warp waits on the first full barrier, its arrival done and 16 bytes owed.
    stuck = [w.reason for w in caught.value.blocked if "@input_bars[0]" in w.reason and "tx 16" in w.reason]
    assert stuck, [w.reason for w in caught.value.blocked]


@pytest.mark.parametrize("program", [CG1, CG2], ids=["cg1", "cg2"])
def test_mma_without_the_full_wait_reads_unlanded_operands(program: Path) -> None:
    """The MMA warp skips `wait_producer` (its wait on full[s]): its MMAs read the stage
    with nothing ordering them after the TMA boxes that fill it, a read of bytes not yet
    written (the box not issued) or unordered with their write (issued, not waited for)."""
    module = _seeded(program, "            tmem.pipeline.wait_producer %p : !tmem.pipeline<4>\n", "")
    m = 256 if program == CG1 else 512
    with pytest.raises(KernelHazard) as caught:
        _run(module, program, m, 256, 128, 2)
    assert caught.value.kind in ("smem-read-uninitialized", "smem-data-race"), caught.value
