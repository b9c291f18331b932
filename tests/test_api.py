"""The public Python API (`xdsl_tmem`, docs/api.md): what it exports and how lazily, and
each call against independent expectations: numpy's GEMM (with Higham's f32 bound) for
the shipped cg1 matmul, ptxas's own `-v` output, the source lines of bad input, and the
drivers' messages for the same mistakes."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from support import CORPUS, EXAMPLES, OptResult, missing, run_cli

import xdsl_tmem
from xdsl_tmem import CompileError, KernelFailure
from xdsl_tmem.reference import (
    epilogue_rows,
    f32_summation_bound,
    kmajor_matrix,
    reference_gemm,
    within_f32_bound,
)
from xdsl_tmem.tools import opt

CG1 = EXAMPLES / "matmul_cg1.mlir"
PUBLIC = {
    "parse", "lower", "apply_passes", "emit_ptx", "ptxas", "run", "explore", "validate", "describe_failure",
    "CompileError", "KernelFailure", "KernelStats", "RunResult", "RunReport", "Exploration", "Validation", "Stage",
    "Launch", "LaunchOptions", "BufferArgument", "ScalarArgument", "PointerArgument", "StructArgument",
    "ScalarField", "TensorMapArgument", "FencePolicy", "make_context",
    "MatmulConfig", "KernelConfigError", "build_matmul", "kernel_text",
}  # fmt: skip
"""docs/api.md's list."""


def cg1_args(tiles: int) -> tuple[dict[str, Any], NDArray[np.float16], NDArray[np.float16]]:
    """The README's launch of matmul_cg1 (`--arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2`:
    numpy default_rng(seed) standard normals)."""
    a = np.random.default_rng(1).standard_normal(4096).astype(np.float16)
    b = np.random.default_rng(2).standard_normal(8192).astype(np.float16)
    return {"out": np.zeros((tiles, 128, 256), np.float32), "a": a, "b": b, "ntiles": tiles}, a, b


def opt_cli(capsys: pytest.CaptureFixture[str], *args: str) -> OptResult:
    capsys.readouterr()
    code = opt.main(list(args))
    captured = capsys.readouterr()
    return OptResult(code, captured.out, captured.err)


def line_of(path: Path, pattern: str) -> int:
    """The 1-based number of the first line of `path` that matches `pattern`."""
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if re.search(pattern, line):
            return number
    raise AssertionError(f"no line of {path} matches {pattern!r}")


def where(error: CompileError) -> str:
    return error.location or ""


# --------------------------------------------------------------------------------------
# Exports
# --------------------------------------------------------------------------------------


def test_the_exported_names_are_the_documented_ones() -> None:
    assert set(xdsl_tmem.__all__) == PUBLIC
    assert sorted(xdsl_tmem.__all__) == xdsl_tmem.__all__
    docs = (Path(xdsl_tmem.__file__).parent.parent / "docs" / "api.md").read_text()
    assert not [name for name in PUBLIC if f"`{name}" not in docs], "docs/api.md must list every public name"
    assert xdsl_tmem.__getattr__("reference") is importlib.import_module("xdsl_tmem.reference")
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        _ = xdsl_tmem.nonesuch  # pyright: ignore[reportAttributeAccessIssue]


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_each_name_is_its_defining_modules_object(name: str) -> None:
    value = getattr(xdsl_tmem, name)
    assert getattr(importlib.import_module(value.__module__), name) is value
    doc = value.__doc__ or ""
    assert doc, f"{name} has no docstring"
    assert not doc.startswith(f"{name}("), f"{name} has only the docstring dataclass writes"


def test_import_is_lazy() -> None:
    """`import xdsl_tmem` (the drivers' start-up) imports neither xDSL nor the machine
    model; each public name then loads on its own."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import xdsl_tmem"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    imported = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if "|" in line]
    assert "xdsl_tmem" in imported
    assert not [m for m in imported if m in ("xdsl", "numpy") or m.startswith(("xdsl_tmem.", "xdsl.", "numpy."))]
    script = (
        "import sys, xdsl_tmem\n"
        "from xdsl_tmem import parse, KernelStats\n"
        "assert 'xdsl_tmem.interpreter' not in sys.modules, 'parse loaded the machine model'\n"
        "for name in xdsl_tmem.__all__:\n"
        "    getattr(xdsl_tmem, name)\n"
        "assert 'xdsl_tmem.interpreter' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)


# --------------------------------------------------------------------------------------
# parse
# --------------------------------------------------------------------------------------


SMALL_PTX = ".version 8.6\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n  ret;\n}\n"


def test_parse_reads_files_and_text(tmp_path: Path) -> None:
    by_path = xdsl_tmem.parse(CG1)
    by_name = xdsl_tmem.parse(str(CG1))
    by_text = xdsl_tmem.parse(CG1.read_text())
    assert str(by_path) == str(by_name) == str(by_text)
    (tmp_path / "k.ptx").write_text(SMALL_PTX)
    for ptx in (xdsl_tmem.parse(tmp_path / "k.ptx"), xdsl_tmem.parse(SMALL_PTX, language="ptx")):
        assert [op.name for op in ptx.body.block.ops] == ["ptx.module"]
        assert xdsl_tmem.emit_ptx(ptx).count(".entry k") == 1


def test_a_verification_error_is_located_as_the_readme_shows(capsys: pytest.CaptureFixture[str]) -> None:
    """README's transcript: examples/errors/stage_index.mlir:5:3, the source line, a caret;
    the same text as xdsl-tmem-opt's."""
    bad = EXAMPLES / "errors" / "stage_index.mlir"
    with pytest.raises(CompileError) as caught:
        xdsl_tmem.parse(bad)
    assert caught.value.location == f"{bad}:5:3"
    lines = str(caught.value).splitlines()
    assert lines[0].startswith(f"{bad}:5:3: error: tmem.tmem_stage.create: stage index 2 out of range [0, 2)")
    assert lines[1] == bad.read_text().splitlines()[4]
    assert lines[2] == "  ^"
    assert opt_cli(capsys, str(bad)).err == str(caught.value) + "\n"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("module {\n  %x = arith.constant 1 : i32\n  %y = arith.addi %x, %z : i32\n}\n", 3, "undefined value %z"),
        ("module {\n\n\n  %x = arith.constant 1 : i32\n  %y = nosuch.op %x : i32\n}\n", 5, "unregistered operation"),
        ("module {\n  %x = arith.constant 1 : i32 {\n}\n", 2, ""),
    ],
    ids=["undefined", "unregistered", "unbalanced"],
)
def test_parse_errors_name_the_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    for source, name in ((path, str(path)), (text, "<string>")):
        with pytest.raises(CompileError) as caught:
            xdsl_tmem.parse(source)
        assert where(caught.value).startswith(f"{name}:{line}:"), str(caught.value)
        assert message in caught.value.message
        assert "Traceback" not in str(caught.value)


def test_ptx_errors_name_the_line(tmp_path: Path) -> None:
    text = ".version 8.6\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n  frobnicate.u32 %r1;\n}\n"
    path = tmp_path / "bad.ptx"
    path.write_text(text)
    with pytest.raises(CompileError) as caught:
        xdsl_tmem.parse(path)
    assert where(caught.value).startswith(f"{path}:6:")
    with pytest.raises(CompileError) as again:
        xdsl_tmem.parse(text, language="ptx", name="k.ptx")
    assert where(again.value).startswith("k.ptx:6:")


def test_parse_misuse() -> None:
    for source in (5, b"module {}", None):
        with pytest.raises(CompileError, match="expected a file path or program text"):
            xdsl_tmem.parse(source)  # pyright: ignore[reportArgumentType]
    with pytest.raises(CompileError, match=r"cannot read 'nonexistent\.mlir': No such file"):
        xdsl_tmem.parse("nonexistent.mlir")
    with pytest.raises(CompileError, match="language must be 'mlir' or 'ptx'"):
        xdsl_tmem.parse("module {}", language="c")  # pyright: ignore[reportArgumentType]


# --------------------------------------------------------------------------------------
# Passes
# --------------------------------------------------------------------------------------


def test_lower_returns_a_new_nvvm_module() -> None:
    module = xdsl_tmem.parse(CG1)
    before = str(module)
    strict = xdsl_tmem.lower(module)
    mojo = xdsl_tmem.lower(module, fence_policy="mojo")
    assert str(module) == before
    for lowered in (strict, mojo):
        assert not [op.name for op in lowered.walk() if op.name.startswith("tmem.")]
    # docs/verification.md: strict emits the tcgen05 fences the PTX memory model asks for, mojo none
    assert "nvvm.tcgen05.fence" in str(strict)
    assert "nvvm.tcgen05.fence" not in str(mojo)
    with pytest.raises(CompileError, match="fence_policy must be 'strict' or 'mojo', got 'lax'"):
        xdsl_tmem.lower(module, fence_policy="lax")  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize(
    "pipeline", ["lower-tmm", "lower-tmem{fence-policy=lax}", "lower-tmem{colour=red}", "lower-tmem{"]
)
def test_pipeline_misuse_is_the_drivers_message(capsys: pytest.CaptureFixture[str], pipeline: str) -> None:
    module = xdsl_tmem.parse(CG1)
    with pytest.raises(CompileError) as caught:
        xdsl_tmem.apply_passes(module, pipeline)
    result = opt_cli(capsys, str(CG1), "-p", pipeline)
    assert result.code == 1
    assert result.err == str(caught.value) + "\n"
    assert caught.value.location is None


def test_apply_passes_runs_the_pipeline_on_a_copy() -> None:
    module = xdsl_tmem.parse(CG1)
    before = str(module)
    selected = xdsl_tmem.apply_passes(module, "lower-tmem,convert-to-ptx")
    assert str(module) == before
    assert [op.name for op in selected.body.block.ops] == ["ptx.module"]
    with pytest.raises(CompileError, match=r"expected a builtin\.module"):
        xdsl_tmem.apply_passes("module {}", "lower-tmem")  # pyright: ignore[reportArgumentType]


# --------------------------------------------------------------------------------------
# PTX and ptxas
# --------------------------------------------------------------------------------------


def test_emit_ptx_of_the_tmem_level_names_the_first_tmem_op() -> None:
    """Instruction selection needs the NVVM level: the error points at the first tmem op."""
    with pytest.raises(CompileError) as caught:
        xdsl_tmem.emit_ptx(xdsl_tmem.parse(CG1))
    line = line_of(CG1, r"^\s*(%\S+ = )?tmem\.")
    assert where(caught.value).startswith(f"{CG1}:{line}:")
    assert "add -p lower-tmem" in caught.value.message
    with pytest.raises(CompileError, match="unsupported PTX target 'sm_90a'; supported: sm_100a, sm_100f"):
        xdsl_tmem.emit_ptx(xdsl_tmem.parse(CG1), "sm_90a")


@pytest.mark.parametrize("arch", ["sm_100a", "sm_103a"])
def test_ptxas_stats_are_ptxas_own(tmp_path: Path, arch: str) -> None:
    """The figures `ptxas` returns are those ptxas -v prints itself for the same PTX."""
    tool = shutil.which("ptxas")
    if tool is None:
        missing("ptxas", "CUDA 13 on PATH")
        return
    nvvm = xdsl_tmem.lower(xdsl_tmem.parse(CG1))
    before = str(nvvm)
    text = xdsl_tmem.emit_ptx(nvvm, arch)
    assert str(nvvm) == before
    assert f".target {arch}" in text
    (tmp_path / "k.ptx").write_text(text)
    done = subprocess.run(
        [tool, f"-arch={arch}", "-v", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
        capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    log = done.stdout + done.stderr
    used = re.search(r"Used (\d+) registers, used (\d+) barriers, (\d+) bytes smem", log)
    spills = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert used is not None, log
    assert spills is not None, log
    cubin = tmp_path / "api.cubin"
    (stats,) = xdsl_tmem.ptxas(text, arch, cubin=cubin)
    assert (stats.kernel, stats.arch) == ("matmul_cg1", arch)
    assert (stats.registers, stats.barriers, stats.shared_bytes) == tuple(int(g) for g in used.groups())
    assert (stats.stack_frame, stats.spill_stores, stats.spill_loads) == tuple(int(g) for g in spills.groups())
    assert cubin.read_bytes() == (tmp_path / "k.cubin").read_bytes()


def test_ptxas_rejection_is_a_compile_error() -> None:
    if shutil.which("ptxas") is None:
        missing("ptxas", "CUDA 13 on PATH")
        return
    with pytest.raises(CompileError, match=r"ptxas rejected the PTX for sm_100a:\n.*Missing .version directive"):
        xdsl_tmem.ptxas("frobnicate;\n")


# --------------------------------------------------------------------------------------
# run, explore, validate
# --------------------------------------------------------------------------------------


def expected_cg1(a: NDArray[np.float16], b: NDArray[np.float16]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(exact tile, its f32 bound), each in the per-thread order the cg1 epilogue stores
    (the example's header: K-major operands with LBO 128 B, SBO 512 B; 16x256b loads)."""
    a_tile, b_tile = kmajor_matrix(a, 128, 32, 128, 512), kmajor_matrix(b, 256, 32, 128, 512)
    return epilogue_rows(reference_gemm(a_tile, b_tile)), epilogue_rows(f32_summation_bound(a_tile, b_tile))


@pytest.mark.parametrize("lowered", [False, True], ids=["tmem", "nvvm"])
def test_run_computes_numpys_gemm(lowered: bool) -> None:
    module = xdsl_tmem.parse(CG1)
    if lowered:
        module = xdsl_tmem.lower(module)
    args, a, b = cg1_args(4)
    result = xdsl_tmem.run(module, "matmul_cg1", block=160, args=args)
    exact, bound = expected_cg1(a, b)
    out = result.outputs["out"]
    assert out.shape == (4, 128, 256)
    assert np.all(np.abs(out.astype(np.float64) - exact) <= bound)
    assert result.report.mma_count == 8  # 4 tiles, K = 32 in two K = 16 MMAs
    assert not args["out"].any()


def test_arguments_keep_the_input_names_after_the_passes() -> None:
    """Instruction selection renames the parameters (`matmul_cg1_param_0`, ...): a module
    from `apply_passes` still takes and returns them under the input's names; our PTX
    computes numpy's GEMM too."""
    selected = xdsl_tmem.apply_passes(xdsl_tmem.parse(CG1), "lower-tmem,convert-to-ptx")
    assert "matmul_cg1_param_0" in xdsl_tmem.emit_ptx(selected)
    args, a, b = cg1_args(2)
    result = xdsl_tmem.run(selected, "matmul_cg1", block=160, args=args)
    assert list(result.outputs) == ["out", "a", "b"]
    exact, bound = expected_cg1(a, b)
    assert np.all(np.abs(result.outputs["out"].astype(np.float64) - exact) <= bound)


@pytest.mark.parametrize(
    ("launch", "message"),
    [
        ({}, "the block must be given"),
        ({"block": 0}, "block must be 1 to 3 positive integers, got 0"),
        ({"block": 160, "grid": "x"}, "grid must be 1 to 3 positive integers, got 'x'"),
        ({"block": 160, "seed": "a"}, "seed must be a non-negative integer, got 'a'"),
        ({"block": 160, "max_steps": -1}, "max_steps must be a positive integer, got -1"),
        ({"block": 160, "schedule": "fifo"}, "unknown schedule 'fifo'"),
        ({"block": 160, "blocks": 2}, "unknown launch keyword 'blocks'; the keywords: block, grid"),
        ({"block": 160, "args": {"a": "zeros"}}, "argument 'a' must be a numpy array"),
        ({"block": 160, "args": {"q": 1}}, "no parameter named q"),
    ],
)
def test_bad_launches_are_compile_errors(launch: dict[str, Any], message: str) -> None:
    with pytest.raises(CompileError, match=re.escape(message)):
        xdsl_tmem.run(xdsl_tmem.parse(CG1), "matmul_cg1", **launch)


def test_the_step_limit_is_a_kernel_failure() -> None:
    args, _, _ = cg1_args(1)
    with pytest.raises(KernelFailure) as caught:
        xdsl_tmem.run(xdsl_tmem.parse(CG1), "matmul_cg1", block=160, args=args, max_steps=100)
    assert (caught.value.exit_code, caught.value.verdict) == (4, "step limit")
    assert str(caught.value).startswith("error: step limit: stopped after 100 warp-instructions")


def test_run_misuse_is_located() -> None:
    module = xdsl_tmem.parse(CG1)
    with pytest.raises(CompileError) as caught:
        xdsl_tmem.run(module, "matmul_cg1")
    assert caught.value.location == f"{CG1}:{line_of(CG1, r'llvm.func @matmul_cg1')}:3"
    assert "the block must be given" in caught.value.message
    with pytest.raises(CompileError, match="no function @mm in the module; its kernels: matmul_cg1"):
        xdsl_tmem.run(module, "mm", block=160)
    args, _, _ = cg1_args(1)
    with pytest.raises(CompileError) as missing_argument:
        xdsl_tmem.run(module, "matmul_cg1", block=160, args={"out": args["out"]})
    assert where(missing_argument.value) == f"{CG1}:{line_of(CG1, r'llvm.func @matmul_cg1')}:3"
    assert missing_argument.value.message == "missing argument 'a' of type !llvm.ptr<1>"


def test_a_hazard_is_a_kernel_failure(capsys: pytest.CaptureFixture[str]) -> None:
    """The seeded alloc-after-relinquish: exit code 3 in the driver, the second
    tmem.alloc's line, the driver's report."""
    program = CORPUS / "alloc_after_relinquish.mlir"
    with pytest.raises(KernelFailure) as caught:
        xdsl_tmem.run(xdsl_tmem.parse(program), "k", block=32)
    failure = caught.value
    assert (failure.exit_code, failure.verdict) == (3, "hazard alloc-after-relinquish")
    second_alloc = line_of(program, r"%b = tmem.alloc")
    assert str(failure).startswith(f"{program}:{second_alloc}:")
    assert run_cli(capsys, str(program), "--kernel", "k", "--block", "32").err == str(failure) + "\n"


def test_explore() -> None:
    module = xdsl_tmem.parse(CG1)
    args, _, _ = cg1_args(2)
    exhaustive = xdsl_tmem.explore(module, "matmul_cg1", "exhaustive", block=160, args=args)
    assert (exhaustive.verdict, exhaustive.mode, exhaustive.complete) == ("SAFE", "exhaustive", True)
    assert exhaustive.explored > 1
    random = xdsl_tmem.explore(module, "matmul_cg1", 3, block=160, args=args, seed=5)
    assert (random.verdict, random.explored) == ("SAFE", 3)
    limited = xdsl_tmem.explore(module, "matmul_cg1", "exhaustive", max_states=5, block=160, args=args)
    assert (limited.verdict, limited.limit) == ("INCOMPLETE", "states")
    for mode in (0, -1, True, "random"):
        with pytest.raises(CompileError, match="mode must be 'exhaustive' or a positive number"):
            xdsl_tmem.explore(module, "matmul_cg1", mode, block=160, args=args)  # pyright: ignore[reportArgumentType]
    with pytest.raises(CompileError, match="jobs must be a positive integer, got 0"):
        xdsl_tmem.explore(module, "matmul_cg1", 2, jobs=0, block=160, args=args)


def test_explore_finds_the_seeded_deadlock() -> None:
    program = CORPUS / "missing_commit.mlir"
    module = xdsl_tmem.parse(program)
    args = {"out": np.zeros((4, 128, 256), np.float32), "a": np.ones(4096, np.float16),
            "b": np.ones(8192, np.float16), "ntiles": 4}  # fmt: skip
    found = xdsl_tmem.explore(module, "ref_pipeline", 2, block=160, args=args)
    assert (found.verdict, found.seed) == ("UNSAFE", 0)
    assert found.failure is not None
    report = xdsl_tmem.describe_failure(module, found.failure)
    assert report.startswith("error: deadlock:")
    assert f"{program}:" in report  # the blocked warps' notes name the file


def test_validate() -> None:
    module = xdsl_tmem.parse(CG1)
    before = str(module)
    args, _, _ = cg1_args(2)
    result = xdsl_tmem.validate(module, "lower-tmem,convert-to-ptx", "matmul_cg1", block=160, args=args)
    assert str(module) == before
    assert [s.pass_spec for s in result.stages] == [None, "lower-tmem", "convert-to-ptx"]
    assert [s.outcome.verdict for s in result.stages] == ["ran to completion"] * 3
    assert result.failed is None
    with pytest.raises(CompileError, match="unknown pass 'lower'"):
        xdsl_tmem.validate(module, "lower", "matmul_cg1", block=160, args=args)
    ptx = xdsl_tmem.apply_passes(module, "lower-tmem,convert-to-ptx")
    with pytest.raises(CompileError, match="the module is PTX already"):
        xdsl_tmem.validate(ptx, "lower-tmem", "matmul_cg1", block=160, args=args)


def test_validate_against_llc() -> None:
    """`llc=True`: llc-22's PTX of the NVVM level runs too, as the last stage."""
    if shutil.which("llc-22") is None or shutil.which("mlir-opt-22") is None:
        missing("llc-22 / mlir-opt-22", "apt-get install -y mlir-22-tools llvm-22")
        return
    args, _, _ = cg1_args(1)
    result = xdsl_tmem.validate(xdsl_tmem.parse(CG1), "lower-tmem", "matmul_cg1", llc=True, block=160, args=args)
    assert [(s.pass_spec, s.reference) for s in result.stages] == [(None, None), ("lower-tmem", None),
                                                                   ("llc-22", "lower-tmem")]  # fmt: skip
    assert result.failed is None


# --------------------------------------------------------------------------------------
# xdsl_tmem.reference
# --------------------------------------------------------------------------------------


def test_the_f32_bound() -> None:
    """gamma_{K-1} * sum |a b|: for K = 4 ones, 3u / (1 - 3u) * 4; numpy's f32 GEMM of
    f16 data lies within it, and an error of a few ulps beyond it does not."""
    u = 2.0**-24
    ones = np.ones((1, 4), np.float16)
    assert f32_summation_bound(ones, ones)[0, 0] == pytest.approx(3 * u / (1 - 3 * u) * 4, rel=1e-12)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 256)).astype(np.float16)
    b = rng.standard_normal((32, 256)).astype(np.float16)
    c = a.astype(np.float32) @ b.astype(np.float32).T
    assert within_f32_bound(c, a, b)
    worse = c.copy()
    worse[3, 7] += np.float32(2 * f32_summation_bound(a, b)[3, 7] + abs(c[3, 7]) * 1e-6)
    assert not within_f32_bound(worse, a, b)


def test_reference_is_independent_of_the_model() -> None:
    """The reference module imports numpy alone: what it checks cannot leak into it."""
    source = (Path(xdsl_tmem.__file__).parent / "reference.py").read_text()
    imports = set(re.findall(r"^(?:from|import) ([\w.]+)", source, re.M))
    assert imports <= {"__future__", "collections.abc", "typing", "numpy", "numpy.typing"}
