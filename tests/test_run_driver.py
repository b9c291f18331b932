"""`xdsl-tmem-run`: exit codes, argument specs, reports, and no tracebacks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from gemm_reference import epilogue_rows, kmajor_matrix
from support import EXAMPLES, LIT_TESTS

from xdsl_tmem.tools import run

REF = LIT_TESTS / "nvvm" / "ref_pipeline.mlir"
GEMM_ARGS = ["--arg", "a=rand:f16:4096:1", "--arg", "b=rand:f16:8192:2", "--arg", "ntiles=2"]


@dataclass
class RunOutput:
    code: int
    out: str
    err: str


Runner = Callable[..., RunOutput]


@pytest.fixture
def xrun(capsys: pytest.CaptureFixture[str]) -> Runner:
    def invoke(*args: str | Path) -> RunOutput:
        capsys.readouterr()
        code = run.main([str(a) for a in args])
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        return RunOutput(code, captured.out, captured.err)

    return invoke


def test_runs_the_reference_pipeline_and_writes_outputs(xrun: Runner, tmp_path: Path) -> None:
    result = xrun(
        REF, "--kernel", "ref_pipeline", "--block", "160", "--arg", "out=zeros:f32:2x128x256", *GEMM_ARGS,
        "--out", tmp_path,
    )  # fmt: skip
    assert result.code == 0, result.err
    assert result.out.startswith("ran @ref_pipeline: grid (1, 1, 1), cluster (1, 1, 1), block (160, 1, 1); ")
    out = np.load(tmp_path / "out.npy")
    a, b = np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy")
    # rand:f16:SHAPE:SEED is numpy's standard normal with that seed.
    np.testing.assert_array_equal(a, np.random.default_rng(1).standard_normal(4096).astype(np.float16))
    d = (
        kmajor_matrix(a, 128, 32, 128, 512).astype(np.float32)
        @ kmajor_matrix(b, 256, 32, 128, 512).astype(np.float32).T
    )
    np.testing.assert_allclose(out, np.tile(epilogue_rows(d), (2, 1, 1)), rtol=1e-5, atol=1e-4)


def test_runs_an_example_after_lowering_with_a_random_schedule(xrun: Runner) -> None:
    result = xrun(
        EXAMPLES / "matmul_cg2.mlir", "-p", "lower-tmem", "--kernel", "matmul_cg2", "--block", "160",
        "--arg", "out=zeros:f32:2x256x256", "--arg", "a=rand:f16:8192:1", "--arg", "b=rand:f16:8192:2",
        "--arg", "ntiles=2", "--schedule", "random", "--seed", "9",
    )  # fmt: skip
    assert result.code == 0, result.err
    assert "cluster (2, 1, 1)" in result.out
    assert "schedule random (seed 9)" in result.out


def test_deadlock_exit_code_and_report(xrun: Runner, tmp_path: Path) -> None:
    source = tmp_path / "stuck.mlir"
    source.write_text(
        """llvm.mlir.global internal @bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64
llvm.func @k() attributes {nvvm.kernel} {
  %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
  %one = arith.constant 1 : i32
  %zero = arith.constant 0 : i32
  nvvm.mbarrier.init %bar, %one : !llvm.ptr<3>, i32
  nvvm.mbarrier.try_wait.parity %bar, %zero, %zero : !llvm.ptr<3>, i32, i32
  llvm.return
}
"""
    )
    result = xrun(source, "--kernel", "k", "--block", "32")
    assert result.code == run.EXIT_DEADLOCK
    lines = result.err.splitlines()
    assert lines[0].startswith("error: deadlock:")
    assert lines[1] == (
        f"{source}:7:3: note: warp 0 blocked at 'nvvm.mbarrier.try_wait.parity': waits on mbarrier @bar for "
        "parity 0; barrier phase bit 0 (0 completed), pending 1 of 1"
    )


def test_hazard_exit_code_is_located(xrun: Runner, tmp_path: Path) -> None:
    source = tmp_path / "divergent.mlir"
    source.write_text(
        """llvm.mlir.global internal @slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32
llvm.func @k() attributes {nvvm.kernel} {
  %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
  %cols = arith.constant 32 : i32
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c16 = arith.constant 16 : i32
  %low = arith.cmpi ult, %tid, %c16 : i32
  scf.if %low {
    nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
  }
  llvm.return
}
"""
    )
    result = xrun(source, "--kernel", "k", "--block", "32")
    assert result.code == run.EXIT_HAZARD
    assert result.err.startswith(
        f"{source}:9:5: error: hazard divergent-sync-aligned: tcgen05.alloc is .sync.aligned but warp 0 executes it "
        "with lanes 0-15 of 0-31 active"
    )


def test_step_limit_exit_code(xrun: Runner) -> None:
    result = xrun(REF, "--kernel", "ref_pipeline", "--block", "160", "--arg", "out=zeros:f32:65536", *GEMM_ARGS,
                  "--max-steps", "50")  # fmt: skip
    assert result.code == run.EXIT_LIMIT
    assert result.err.startswith("error: step limit: stopped after 50 warp-instructions")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--block", "160"], "error: the following arguments are required: --kernel"),
        (["--kernel", "nope", "--block", "160"], "error: no function @nope in the module (functions: ref_pipeline)"),
        (["--kernel", "ref_pipeline", "--block", "0"], "error: --block must be 1 to 3 positive integers; got '0'"),
        (["--kernel", "ref_pipeline", "--block", "160"], "error: missing argument 'out' of type !llvm.ptr<1>"),
        (
            ["--kernel", "ref_pipeline", "--block", "192", "--arg", "out=zeros:f32:4"],
            "error: the block has 192 threads but the kernel declares nvvm.maxntid = [160, 1, 1] (160)",
        ),
        (
            ["--kernel", "ref_pipeline", "--block", "160", "--arg", "out=zeros:q8:4"],
            "error: --arg out: expected zeros:DTYPE:SHAPE with DTYPE one of",
        ),
        (["--kernel", "ref_pipeline", "--block", "160", "--arg", "out"], "error: --arg expects name=value, got 'out'"),
        (
            ["--kernel", "ref_pipeline", "--block", "160", "--arg", "ntiles=x"],
            "error: --arg ntiles: 'x' is not a .npy file, zeros:..., rand:... or a number",
        ),
        (
            [
                "--kernel",
                "ref_pipeline",
                "--block",
                "160",
                "--arg",
                "out=1",
                "--arg",
                "a=1",
                "--arg",
                "b=1",
                "--arg",
                "ntiles=1",
            ],
            "argument 'out' is a pointer (!llvm.ptr<1>); pass a numpy array",
        ),
        (["--kernel", "ref_pipeline", "--block", "160", "-p", "no-such-pass"], "error: invalid pass pipeline"),
    ],
)
def test_usage_errors_exit_1(xrun: Runner, args: list[str], message: str) -> None:
    result = xrun(REF, *args)
    assert result.code == run.EXIT_ERROR
    assert message in result.err


def test_parse_error_is_located(xrun: Runner, tmp_path: Path) -> None:
    source = tmp_path / "bad.mlir"
    source.write_text("llvm.func @k() {\n  %x = arith.constant : i32\n  llvm.return\n}\n")
    result = xrun(source, "--kernel", "k", "--block", "32")
    assert result.code == run.EXIT_ERROR
    assert result.err.startswith(f"{source}:2:")


def test_missing_file(xrun: Runner, tmp_path: Path) -> None:
    result = xrun(tmp_path / "none.mlir", "--kernel", "k", "--block", "32")
    assert result.code == run.EXIT_ERROR
    assert result.err == f"error: cannot read '{tmp_path / 'none.mlir'}': No such file or directory\n"


def test_unsupported_op_is_reported_before_running(xrun: Runner, tmp_path: Path) -> None:
    source = tmp_path / "unsupported.mlir"
    source.write_text("llvm.func @k(%x: f32) attributes {nvvm.kernel} {\n  %f = math.sqrt %x : f32\n  llvm.return\n}\n")
    result = xrun(source, "--kernel", "k", "--block", "32", "--arg", "x=2.0")
    assert result.code == run.EXIT_ERROR
    assert result.err.startswith(f"{source}:2:3: error: xdsl-tmem-run: no interpreter implementation for 'math.sqrt'")


def test_npy_argument(xrun: Runner, tmp_path: Path) -> None:
    np.save(tmp_path / "a.npy", np.zeros(4096, np.float16))
    args = ["--arg", "out=zeros:f32:128x256", "--arg", f"a={tmp_path / 'a.npy'}", "--arg", "b=rand:f16:8192:2"]
    result = xrun(REF, "--kernel", "ref_pipeline", "--block", "160", *args, "--arg", "ntiles=1")
    assert result.code == 0, result.err
    assert "out: float32 [128, 256], sum 0" in result.out
