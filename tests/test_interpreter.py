"""The shipped kernels on the machine model: real GEMM numbers, at the tmem level and
after lowering, under round-robin and random schedules; seeded deadlocks."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from gemm_reference import epilogue_rows, kmajor_matrix, parse
from numpy.typing import NDArray
from support import EXAMPLES, LIT_TESTS
from xdsl.dialects.builtin import ModuleOp

from xdsl_tmem.interpreter import KernelDeadlock, KernelStepLimit, RunResult, run_kernel
from xdsl_tmem.passes.lower_tmem import LowerTmemPass
from xdsl_tmem.tools.run import make_context

REF_PIPELINE = LIT_TESTS / "nvvm" / "ref_pipeline.mlir"
SCHEDULES = [("rr", 0), ("random", 1), ("random", 7)]


def load(path: Path, lowered: bool = False, policy: str = "strict") -> ModuleOp:
    module = parse(path.read_text())
    if lowered:
        LowerTmemPass(fence_policy=policy).apply(make_context(), module)
        module.verify()
    return module


def f16_operands(seed: int, a_rows: int, b_rows: int) -> tuple[NDArray[np.float16], NDArray[np.float16]]:
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal(a_rows * 32).astype(np.float16),
        rng.standard_normal(b_rows * 32).astype(np.float16),
    )


# --------------------------------------------------------------------------------------
# cta_group 1: the reference pipeline and the cg1 example
# --------------------------------------------------------------------------------------


def expected_cg1(a: NDArray[np.float16], b: NDArray[np.float16], tiles: int) -> NDArray[np.float32]:
    """Every tile computes A(128x32) . B(256x32)^T from the K-major buffers (LBO 128 B,
    SBO 512 B); each thread stores its registers in 16x256b order."""
    d = (
        kmajor_matrix(a, 128, 32, 128, 512).astype(np.float32)
        @ kmajor_matrix(b, 256, 32, 128, 512).astype(np.float32).T
    )
    return np.tile(epilogue_rows(d), (tiles, 1, 1))


def run_cg1(
    module: ModuleOp, kernel: str, tiles: int, schedule: str, seed: int, policy: str = "strict"
) -> tuple[RunResult, Any]:
    a, b = f16_operands(seed, 128, 256)
    out = np.zeros(tiles * 128 * 256, np.float32)
    args = {"out": out, "a": a, "b": b, "ntiles": tiles}
    result = run_kernel(module, kernel, block=160, args=args, schedule=schedule, seed=seed, fence_policy=policy)
    return result, expected_cg1(a, b, tiles)


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_reference_pipeline(schedule: str, seed: int) -> None:
    result, expected = run_cg1(load(REF_PIPELINE), "ref_pipeline", 5, schedule, seed)
    np.testing.assert_allclose(result.outputs["out"].reshape(expected.shape), expected, rtol=1e-5, atol=1e-4)
    assert result.report.mma_count == 10


@pytest.mark.parametrize("lowered", [False, True], ids=["tmem", "nvvm"])
@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_matmul_cg1(lowered: bool, schedule: str, seed: int) -> None:
    module = load(EXAMPLES / "matmul_cg1.mlir", lowered)
    result, expected = run_cg1(module, "matmul_cg1", 3, schedule, seed)
    np.testing.assert_allclose(result.outputs["out"].reshape(expected.shape), expected, rtol=1e-5, atol=1e-4)


def test_mojo_fence_policy_computes_the_same() -> None:
    module = load(EXAMPLES / "matmul_cg1.mlir", True, "mojo")
    result, expected = run_cg1(module, "matmul_cg1", 2, "random", 3, policy="mojo")
    np.testing.assert_allclose(result.outputs["out"].reshape(expected.shape), expected, rtol=1e-5, atol=1e-4)


# --------------------------------------------------------------------------------------
# cta_group 2: a CTA pair
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("lowered", [False, True], ids=["tmem", "nvvm"])
@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_matmul_cg2(lowered: bool, schedule: str, seed: int) -> None:
    """M = 256 over the pair: CTA r holds A rows and B rows [128r, 128r + 128) at the same
    shared offsets; its TMEM gets D rows [128r, 128r + 128) (data-path layout A)."""
    tiles = 2
    a, b = f16_operands(seed, 256, 256)
    out = np.zeros(tiles * 256 * 256, np.float32)
    module = load(EXAMPLES / "matmul_cg2.mlir", lowered)
    result = run_kernel(
        module,
        "matmul_cg2",
        block=160,
        args={"out": out, "a": a, "b": b, "ntiles": tiles},
        schedule=schedule,
        seed=seed,
    )
    assert result.report.launch.cluster == (2, 1, 1)  # from nvvm.cluster_dim
    halves_a = [kmajor_matrix(a[4096 * r : 4096 * (r + 1)], 128, 32, 128, 512) for r in range(2)]
    halves_b = [kmajor_matrix(b[4096 * r : 4096 * (r + 1)], 128, 32, 128, 512) for r in range(2)]
    d = np.concatenate(halves_a).astype(np.float32) @ np.concatenate(halves_b).astype(np.float32).T
    expected = np.concatenate([epilogue_rows(d[128 * r : 128 * (r + 1)]) for r in range(2)])
    got = result.outputs["out"].reshape(tiles, 256, 256)
    for tile in range(tiles):
        np.testing.assert_allclose(got[tile], expected, rtol=1e-5, atol=1e-4)


# --------------------------------------------------------------------------------------
# Blockwise FP8: kind::f8f6f4, an input pipeline, a load warp
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("lowered", [False, True], ids=["tmem", "nvvm"])
@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_blockwise_fp8(lowered: bool, schedule: str, seed: int) -> None:
    tiles, kblocks = 2, 3
    rng = np.random.default_rng(seed)
    # e4m3 bytes without the NaN codes (S.1111.111).
    a = rng.integers(0, 256, tiles * kblocks * 4096).astype(np.uint8)
    b = rng.integers(0, 256, tiles * kblocks * 2048).astype(np.uint8)
    a[(a & 0x7F) == 0x7F] = 0x38
    b[(b & 0x7F) == 0x7F] = 0x38
    scales = rng.uniform(0.5, 2.0, tiles * kblocks).astype(np.float32)
    out = np.zeros(tiles * 128 * 64, np.float32)
    result = run_kernel(
        load(EXAMPLES / "blockwise_fp8_cg1.mlir", lowered),
        "blockwise_fp8_cg1",
        block=192,
        args={"out": out, "a": a, "b": b, "scales": scales, "ntiles": tiles, "nk": kblocks},
        schedule=schedule,
        seed=seed,
    )
    got = result.outputs["out"].reshape(tiles, 128, 64)
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


# --------------------------------------------------------------------------------------
# Deadlocks and the step limit
# --------------------------------------------------------------------------------------


def _without(path: Path, pattern: str) -> ModuleOp:
    text = path.read_text()
    edited = re.sub(pattern, "", text)
    assert edited != text, pattern
    return parse(edited)


def _run_deadlocked(module: ModuleOp, kernel: str) -> KernelDeadlock:
    a, b = f16_operands(0, 128, 256)
    with pytest.raises(KernelDeadlock) as caught:
        run_kernel(
            module, kernel, block=160, args={"out": np.zeros(3 * 128 * 256, np.float32), "a": a, "b": b, "ntiles": 3}
        )
    return caught.value


def test_missing_commit_deadlocks() -> None:
    """No commit: full[0] never completes; the epilogue waits parity 0 on a fresh barrier,
    the MMA warp waits for the first tile's release (empty[0], parity 0)."""
    deadlock = _run_deadlocked(_without(REF_PIPELINE, r"nvvm\.tcgen05\.commit[^\n]*\n"), "ref_pipeline")
    reasons = {w.name: w.reason for w in deadlock.blocked}
    assert set(reasons) == {f"warp {i}" for i in range(5)}
    for warp in range(4):
        assert reasons[f"warp {warp}"] == (
            "waits on mbarrier @full_bar[0] for parity 0; barrier phase bit 0 (0 completed), pending 1 of 1"
        )
    assert reasons["warp 4"] == (
        "waits on mbarrier @empty_bar[0] for parity 0; barrier phase bit 0 (0 completed), pending 128 of 128"
    )
    assert all(w.op is not None and w.op.name == "nvvm.mbarrier.try_wait.parity" for w in deadlock.blocked)


@pytest.mark.parametrize("lowered", [False, True], ids=["tmem", "nvvm"])
def test_missing_epilogue_arrive_deadlocks(lowered: bool) -> None:
    """Without the epilogue's arrive on empty[s], the MMA warp blocks at tile 2 (stage 0,
    parity 0) and the epilogue at tile 1's successor: full[0] for its second phase."""
    module = _without(EXAMPLES / "matmul_cg1.mlir", r"tmem\.output_ring\.arrive_empty[^\n]*\n")
    if lowered:
        LowerTmemPass().apply(make_context(), module)
    deadlock = _run_deadlocked(module, "matmul_cg1")
    reasons = {w.name: w.reason for w in deadlock.blocked}
    assert "@accum_bars[2] for parity 0; barrier phase bit 0 (0 completed), pending 128 of 128" in reasons["warp 4"]
    for warp in range(4):
        assert (
            "@accum_bars[0] for parity 1; barrier phase bit 1 (1 completed), pending 1 of 1" in reasons[f"warp {warp}"]
        )


def test_step_limit() -> None:
    a, b = f16_operands(0, 128, 256)
    with pytest.raises(KernelStepLimit) as caught:
        run_kernel(
            load(REF_PIPELINE),
            "ref_pipeline",
            block=160,
            args={"out": np.zeros(128 * 256, np.float32), "a": a, "b": b, "ntiles": 1},
            max_steps=100,
        )
    assert caught.value.report.instructions == 100


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
def test_schedules_are_reproducible(schedule: str, seed: int) -> None:
    """The same module, inputs, schedule and seed give the same interleaving and output."""
    module = load(EXAMPLES / "matmul_cg1.mlir")
    first, _ = run_cg1(module, "matmul_cg1", 2, schedule, seed)
    second, _ = run_cg1(module, "matmul_cg1", 2, schedule, seed)
    assert first.report.schedule_trace == second.report.schedule_trace
    np.testing.assert_array_equal(first.outputs["out"], second.outputs["out"])


def test_random_schedules_differ() -> None:
    module = load(EXAMPLES / "matmul_cg1.mlir")
    traces = {tuple(run_cg1(module, "matmul_cg1", 2, "random", seed)[0].report.schedule_trace) for seed in range(4)}
    assert len(traces) > 1
