"""The kernel builder (xdsl_tmem.kernels, docs/api.md "Kernel builder"): every shipped
example is the builder's kernel for its configuration; kernels of a sweep of valid
configurations compute numpy's GEMM on the machine model, assemble with ptxas, and a small
one is SAFE under exhaustive exploration; invalid configurations fail with the verifier's
rule as docs/dialect.md states it.

The expectations are independent of the builder: numpy's f64 product within Higham's f32
summation bound (exact for i8), the operand placement of the no-swizzle K-major canonical
layout and the tcgen05.ld register maps of xdsl_tmem.reference (written from CUTLASS and
TVM's tables), the 128B-swizzle TMA boxes of cuTensorMapEncodeTiled."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from support import EXAMPLES

import xdsl_tmem
from xdsl_tmem.interpreter.tma import parse_tensor_map_arg
from xdsl_tmem.kernels import EXAMPLE_CONFIGS, KernelConfigError, MatmulConfig, build_matmul, example_differences
from xdsl_tmem.reference import f32_summation_bound, kmajor_byte_offset, ldst_cell, reference_gemm

# --------------------------------------------------------------------------------------
# The shipped examples
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(EXAMPLE_CONFIGS))
def test_each_example_is_the_builders_kernel(name: str) -> None:
    """Op for op, attribute for attribute and value name for value name (the files add
    only comments and line breaks)."""
    assert example_differences(EXAMPLES / f"{name}.mlir", EXAMPLE_CONFIGS[name]) is None


def test_a_changed_example_is_reported() -> None:
    path = EXAMPLES / "matmul_cg1.mlir"
    other = replace(EXAMPLE_CONFIGS["matmul_cg1"], stages=1, stride=512)
    difference = example_differences(path, other)
    # One stage: two mbarriers (full[0], empty[0]) where the file has four.
    assert difference is not None
    assert "@accum_bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<2 x i64>" in difference, difference


def test_the_examples_are_checked_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    from xdsl_tmem.kernels import main

    assert main(["--check", str(EXAMPLES)]) == 0
    assert main(["--example", "tma_gemm_cg2"]) == 0
    assert "llvm.func @tma_gemm_cg2(" in capsys.readouterr().out
    assert main(["--stages", "3", "--stride", "200"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: "), err
    assert "num_stages * stride = 3 * 200 = 600 exceeds the 512 allocated TMEM columns" in err, err


@pytest.mark.parametrize(
    ("argv", "says"),
    [(["--bogus", "1"], "unrecognized arguments: --bogus 1"), (["--stages", "x"], "argument --stages: invalid int"),
     (["--example", "nope"], "argument --example: invalid choice: 'nope'")],
)  # fmt: skip
def test_misused_flags_are_one_line_and_exit_code_1(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                    says: str) -> None:  # fmt: skip
    from xdsl_tmem.kernels import main

    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: "), err
    assert says in err, err
    assert err.count("\n") == 1, err


def test_help_gives_each_fields_meaning_and_default(capsys: pytest.CaptureFixture[str]) -> None:
    from xdsl_tmem.kernels import main

    with pytest.raises(SystemExit) as caught:
        main(["--help"])
    assert caught.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--stages STAGES Accumulator stages in TMEM. Default: 2." in out
    assert "--input-stages INPUT_STAGES tma: stages of the A/B input pipeline. Default: 4." in out


# --------------------------------------------------------------------------------------
# Operands and expectations (from the configuration's numbers, not the builder's)
# --------------------------------------------------------------------------------------

E4M3 = {0x38: 1.0, 0x40: 2.0, 0xB8: -1.0, 0x30: 0.5, 0xC0: -2.0, 0x3C: 1.5}
"""e4m3 codes and their values (OCP FP8: sign, 4 exponent bits biased by 7, 3 mantissa bits)."""


def _matrix(kind: str, rows: int, k: int, rng: np.random.Generator) -> tuple[NDArray[Any], NDArray[np.float64]]:
    """(the elements as shared memory holds them, their values)."""
    match kind:
        case "f16":
            values = rng.standard_normal((rows, k)).astype(np.float16)
            return values, values.astype(np.float64)
        case "tf32":  # f16 values are exact in tf32 (10 mantissa bits): no truncation matters
            values = rng.standard_normal((rows, k)).astype(np.float16).astype(np.float32)
            return values, values.astype(np.float64)
        case "f8f6f4":
            codes = rng.choice(np.array(list(E4M3), dtype=np.uint8), (rows, k))
            return codes, np.vectorize(E4M3.__getitem__)(codes).astype(np.float64)
        case _:
            values = rng.integers(-8, 8, (rows, k)).astype(np.int8)
            return values, values.astype(np.float64)


def _kmajor(matrix: NDArray[Any]) -> NDArray[np.uint8]:
    """Bytes of a no-swizzle K-major tile: 8-row x 16-byte core matrices, LBO 128 bytes
    (the next along K), SBO 8 rows of K (the next 8-row group)."""
    rows, k = matrix.shape
    element = matrix.dtype.itemsize
    sbo = 8 * k * element
    raw = matrix.view(np.uint8).reshape(rows, k, element)
    out = np.zeros(rows * k * element, np.uint8)
    for i in range(rows):
        for kk in range(k):
            start = kmajor_byte_offset(i, kk * element, 128, sbo)
            out[start : start + element] = raw[i, kk]
    return out


def _copy_rows(config: MatmulConfig, d: NDArray[Any], rank: int) -> NDArray[Any]:
    """What each of a CTA's 128 epilogue threads stores of the accumulator tile `d`
    (M x N): TMEM lane 32w + l of CTA `rank` holds row 128 * rank + 32w + l (M = 64:
    rows 16w + l, l < 16, Layout F); each load step covers 8R (16x256b) or R (32x32b)
    columns, its registers stored in order, the upper half's before the lower's."""
    m, n = config.mma_m or 128 * config.cta_group, config.mma_n
    shape = config.ld_shape or "16x256b"
    repeat = config.ld_repeat or (4 if shape == "16x256b" else 32)
    per_reg = 4 if shape == "16x256b" else 1
    width = 8 * repeat if shape == "16x256b" else repeat
    upper_only = m // config.cta_group == 64
    halves = (0,) if upper_only else ((0, 16) if shape == "16x256b" else (0,))
    rows_per_thread = n // width * per_reg * repeat * len(halves)
    out = np.zeros((128, rows_per_thread), d.dtype)
    for tid in range(128):
        warp, lane = divmod(tid, 32)
        for j in range(n // width):
            for h, half in enumerate(halves):
                for r in range(per_reg * repeat):
                    row, col = ldst_cell(shape, lane, r)
                    tmem_lane = 32 * warp + half + row
                    d_row = 16 * warp + row if upper_only else 128 * rank + tmem_lane
                    out[tid, (j * len(halves) + h) * per_reg * repeat + r] = d[d_row, j * width + col]
    return out


def _run_copy(config: MatmulConfig, ntiles: int = 2, **launch: Any) -> None:
    cg, kind = config.cta_group, config.kind
    m, n, k = config.mma_m or 128 * cg, config.mma_n, config.k or 32
    rng = np.random.default_rng(1)
    a, a_values = _matrix(kind, m, k, rng)
    b, b_values = _matrix(kind, n, k, rng)
    # Each CTA of a pair copies its half: rows 128 * rank.. of A, N / 2 * rank.. of B.
    a_buf = np.concatenate([_kmajor(part) for part in np.split(a, cg)])
    b_buf = np.concatenate([_kmajor(part) for part in np.split(b, cg)])
    integer = kind == "i8"
    module = build_matmul(config)
    name = config.name or f"matmul_cg{cg}"
    per_thread = _copy_rows(config, np.zeros((m, n)), 0).shape[1]
    out = _unwritten((ntiles, cg, 128, per_thread), kind)
    args = {"out": out, "a": a_buf, "b": b_buf, "ntiles": ntiles}
    result = xdsl_tmem.run(module, name, block=160, args=args, **launch)
    got = result.outputs["out"].astype(np.float64)
    exact, bound = reference_gemm(a_values, b_values), f32_summation_bound(a_values, b_values)
    for rank in range(cg):
        want, slack = _copy_rows(config, exact, rank), _copy_rows(config, bound, rank)
        for t in range(ntiles):
            if integer:
                assert np.array_equal(got[t, rank], want)
            else:
                assert np.all(np.abs(got[t, rank] - want) <= slack)
    assert result.report.mma_count == ntiles * k * _element_bytes(kind) // 32


def _unwritten(shape: tuple[int, ...], kind: str) -> NDArray[Any]:
    """An output buffer no GEMM value equals where the kernel did not write: NaN (no
    comparison holds), or i32's minimum (beyond any sum of K <= 512 products of s8 in [-8, 8))."""
    if kind == "i8":
        return np.full(shape, np.iinfo(np.int32).min, np.int32)
    return np.full(shape, np.nan, np.float32)


def _element_bytes(kind: str) -> int:
    return {"f16": 2, "tf32": 4, "f8f6f4": 1, "i8": 1}[kind]


TENSOR_MAP_TYPES = {"f16": "f16", "tf32": "f32", "f8f6f4": "u8", "i8": "u8"}
"""cuTensorMapEncodeTiled's element type of each kind's operands (bytes are bytes to a copy)."""


def _run_tma(config: MatmulConfig, shape: tuple[int, int, int], grid: int) -> None:
    """C = A @ B.T (row-major) over a persistent grid: the tensor maps of the boxes one
    CTA loads per stage, 128 bytes (the swizzle span) of K wide."""
    m, n, k = shape
    cg, kind = config.cta_group, config.kind
    element = _element_bytes(kind)
    rows_a, rows_b = (config.mma_m or 128 * cg) // cg, config.mma_n // cg
    rng = np.random.default_rng(2)
    a, a_values = _matrix(kind, m, k, rng)
    b, b_values = _matrix(kind, n, k, rng)
    dtype, box_k = TENSOR_MAP_TYPES[kind], 128 // element
    args = {
        "a": a,
        "b": b,
        "tma_a": parse_tensor_map_arg(f"tensormap:a:{dtype}:{k}x{m}:{element * k}:{box_k}x{rows_a}:swizzle=128B"),
        "tma_b": parse_tensor_map_arg(f"tensormap:b:{dtype}:{k}x{n}:{element * k}:{box_k}x{rows_b}:swizzle=128B"),
        "c": _unwritten((m, n), kind),
        "m": m,
        "n": n,
        "k": k,
    }
    name = config.name or f"tma_gemm_cg{cg}"
    result = xdsl_tmem.run(
        build_matmul(config),
        name,
        block=192,
        grid=grid,
        args=args,
        dynamic_shared_bytes=config.input_stages * 128 * (rows_a + rows_b),
    )
    c = result.outputs["c"].astype(np.float64)
    exact = reference_gemm(a_values, b_values)
    if kind == "i8":
        assert np.array_equal(c, exact)
    else:
        assert np.all(np.abs(c - exact) <= f32_summation_bound(a_values, b_values))
    # four MMAs (32 bytes of K each) per 128-byte K block of every output tile
    tiles = m // (128 * cg) * (n // config.mma_n)
    assert result.report.mma_count == tiles * (k // box_k) * 4


# --------------------------------------------------------------------------------------
# A sweep of valid configurations
# --------------------------------------------------------------------------------------

COPY = {
    "stages1-stride512": MatmulConfig(stages=1, stride=512, mma_n=64),
    "stages3-stride160-n128": MatmulConfig(stages=3, stride=160, mma_n=128),
    "stages4-stride128-n128": MatmulConfig(stages=4, stride=128, mma_n=128),
    "n64-k64": MatmulConfig(mma_n=64, k=64),
    "n96-x2": MatmulConfig(mma_n=96, ld_repeat=2),
    "m64-n64": MatmulConfig(mma_m=64, mma_n=64, stages=4, stride=128),
    "m64-n40-x1": MatmulConfig(mma_m=64, mma_n=40, ld_repeat=1),
    "32x32b-x16": MatmulConfig(mma_n=64, ld_shape="32x32b", ld_repeat=16),
    "32x32b-x64": MatmulConfig(mma_n=128, ld_shape="32x32b", ld_repeat=64, stages=1),
    "16x256b-x8": MatmulConfig(mma_n=128, ld_repeat=8),
    "tf32-k16": MatmulConfig(kind="tf32", mma_n=64, k=16),
    "f8f6f4-k64": MatmulConfig(kind="f8f6f4", mma_n=64, k=64),
    "i8-k32": MatmulConfig(kind="i8", mma_n=32, ld_repeat=1),
    "cg2-n128": MatmulConfig(cta_group=2, mma_n=128, stages=3, stride=160),
    "cg2-n64-32x32b": MatmulConfig(cta_group=2, mma_n=64, ld_shape="32x32b", ld_repeat=32, name="pair"),
}


@pytest.mark.parametrize("config", COPY.values(), ids=COPY.keys())
def test_copy_kernels_compute_numpys_gemm(config: MatmulConfig) -> None:
    _run_copy(config)


TMA = {
    "cg1-n128-stages3-in2": (MatmulConfig(operands="tma", mma_n=128, stages=3, stride=128, input_stages=2),
                             (256, 256, 192), 2),
    "cg1-n64-x16": (MatmulConfig(operands="tma", mma_n=64, ld_repeat=16, stages=4, stride=64), (128, 192, 64), 2),
    "cg2-n128-in3": (MatmulConfig(cta_group=2, operands="tma", mma_n=128, input_stages=3), (256, 256, 256), 2),
    "tf32-n128": (MatmulConfig(operands="tma", kind="tf32", mma_n=128), (128, 256, 64), 2),
    "i8-n128": (MatmulConfig(operands="tma", kind="i8", mma_n=128), (128, 256, 256), 2),
    "f8f6f4-cg2": (MatmulConfig(cta_group=2, operands="tma", kind="f8f6f4"), (256, 256, 256), 2),
}  # fmt: skip


@pytest.mark.parametrize(("config", "shape", "grid"), TMA.values(), ids=TMA.keys())
def test_tma_kernels_compute_numpys_gemm(config: MatmulConfig, shape: tuple[int, int, int], grid: int) -> None:
    _run_tma(config, shape, grid)


@pytest.mark.parametrize(
    "config",
    [COPY["stages3-stride160-n128"], COPY["cg2-n128"], COPY["i8-k32"], TMA["cg2-n128-in3"][0]],
    ids=["copy-cg1", "copy-cg2", "copy-i8", "tma-cg2"],
)
def test_built_kernels_assemble_with_ptxas(config: MatmulConfig) -> None:
    try:
        ptx = xdsl_tmem.emit_ptx(xdsl_tmem.lower(build_matmul(config)))
        (stats,) = xdsl_tmem.ptxas(ptx)
    except xdsl_tmem.CompileError as e:
        if "ptxas" in str(e) and "not found" in str(e):
            pytest.skip(str(e))
        raise
    assert stats.spill_stores == 0


def test_a_small_kernel_is_safe_under_exhaustive_exploration() -> None:
    config = MatmulConfig(stages=1, stride=64, mma_n=64, ld_repeat=8)
    rng = np.random.default_rng(3)
    a, _ = _matrix("f16", 128, 32, rng)
    b, _ = _matrix("f16", 64, 32, rng)
    args = {"out": np.zeros((2, 128, 64), np.float32), "a": _kmajor(a), "b": _kmajor(b), "ntiles": 2}
    exploration = xdsl_tmem.explore(build_matmul(config), "matmul_cg1", "exhaustive", block=160, args=args)
    assert exploration.verdict == "SAFE", exploration.failure


# --------------------------------------------------------------------------------------
# Invalid configurations: the verifier's rule (docs/dialect.md), or the builder's field
# --------------------------------------------------------------------------------------

OVER_512 = r"!tmem.output_ring: num_stages \* stride = 3 \* 256 = 768 exceeds the 512 allocated TMEM columns"
OVER_128 = r"shape_32x32b needs 1 x num registers \(num a power of two, at most 128 registers\): got vector<256xi32>"
REJECTED = {
    # types: "num_stages * stride <= 512"
    "stages-times-stride": (MatmulConfig(stages=3, stride=256), None, OVER_512),
    # tmem_stage.tensor: "a view's N <= stride"
    "stride-below-n": (MatmulConfig(stride=128), None, r"N = 256 columns exceed the stage stride 128"),
    # !tmem.tensor: "M in {64, 128} for cta_group 1 and {128, 256} for cta_group 2"
    "cg2-m64": (MatmulConfig(cta_group=2, mma_m=64), None, r"M must be 128 or 256 for cta_group 2, got 64"),
    "cg1-m256": (MatmulConfig(mma_m=256), None, r"M must be 64 or 128 for cta_group 1, got 256"),
    # cta_group in {1, 2}
    "cta-group-3": (MatmulConfig(cta_group=3), None, r"cta_group must be 1 or 2, got 3"),
    # 16x256b loads: "repeat a power of two with 4 * repeat <= 128 registers"
    "repeat-3": (MatmulConfig(mma_n=96, ld_repeat=3), None, r"repeat must be a power of two"),
    # tcgen05.ld: 32x32b.x256 is 256 registers, over 128
    "32x32b-x256": (MatmulConfig(mma_n=256, ld_shape="32x32b", ld_repeat=256), None, OVER_128),
    # the instruction descriptor (machine model): N a multiple of 16 in [16, 256] for M = 128
    "n-for-m": (MatmulConfig(mma_n=72, stride=72, ld_shape="32x32b", ld_repeat=8), "mma_n",
                r"N = 72 must be a multiple of 16 in \[16, 256\] for M = 128"),
    # the builder's own rules, naming the field
    "k-not-mma-multiple": (MatmulConfig(k=24), "k",
                           r"MatmulConfig.k = 24: must be a multiple of the K of one kind::f16 MMA \(16\)"),
    "repeat-not-dividing-n": (MatmulConfig(mma_n=80), "ld_repeat", r"covers 32 columns, which must divide N = 80"),
    "tma-k": (MatmulConfig(operands="tma", k=32), "k", r"K = 64"),
    "tma-16x256b": (MatmulConfig(operands="tma", ld_shape="16x256b", ld_repeat=4), "ld_shape", r"32x32b"),
    "m64-32x32b": (MatmulConfig(mma_m=64, mma_n=64, ld_shape="32x32b"), "ld_shape", r"Layout F"),
    "operands": (MatmulConfig(operands="smem"), "operands", r"allowed: 'copy', 'tma'"),  # type: ignore[arg-type]
    "kind": (MatmulConfig(kind="f64"), "kind", r"allowed: 'f16', 'tf32', 'f8f6f4', 'i8'"),  # type: ignore[arg-type]
    "stages-0": (MatmulConfig(stages=0), "stages", r"must be a positive integer"),
    # the machine model's (and sm_100's) 227 KiB of shared memory per CTA
    "copy-k-too-long": (MatmulConfig(k=512), "k", r"A 131072 \+ B 262144 bytes .* more than the 232448 of a CTA"),
    "tma-stages": (MatmulConfig(operands="tma", input_stages=5), "input_stages", r"A 81920 \+ B 163840 bytes"),
    "name": (MatmulConfig(name="my kernel"), "name", r"MatmulConfig.name = 'my kernel': must be an identifier"),
}  # fmt: skip


@pytest.mark.parametrize(("config", "field", "pattern"), REJECTED.values(), ids=REJECTED.keys())
def test_invalid_configurations_are_rejected_with_the_rule(
    config: MatmulConfig, field: str | None, pattern: str
) -> None:
    with pytest.raises(KernelConfigError, match=pattern) as caught:
        build_matmul(config)
    assert caught.value.field == field
    assert isinstance(caught.value, xdsl_tmem.CompileError)
    assert "Traceback" not in str(caught.value)
