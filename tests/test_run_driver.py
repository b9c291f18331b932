"""`xdsl-tmem-run`: exit codes, argument specs, reports, and no tracebacks."""

from __future__ import annotations

import signal
import subprocess
import sys
import tracemalloc
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
        (["--kernel", "nope", "--block", "160"], "error: no function @nope in the module; its kernels: ref_pipeline"),
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
        (["--kernel", "ref_pipeline", "--block", "160", "-p", "no-such-pass"], "error: unknown pass 'no-such-pass'"),
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


# --------------------------------------------------------------------------------------
# Misuse: every mistake is one clear error line and exit code 1
# --------------------------------------------------------------------------------------

LAUNCH = ["--kernel", "ref_pipeline", "--block", "160", "--arg", "out=zeros:f32:2x128x256", *GEMM_ARGS]
MALFORMED = "lower-tmem{fence-policy=strict"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-p", MALFORMED], f"error: invalid pass pipeline '{MALFORMED}' at column {len(MALFORMED) + 1}: "),
        (["-p", "lower-tmem{nosuch=1}"], "error: pass 'lower-tmem' has no option 'nosuch'; its options: fence-policy"),
        (["--max-steps", "-5"], "error: --max-steps must be positive, got -5"),
        (["--max-steps", "0"], "error: --max-steps must be positive, got 0"),
        (["--max-states", "0", "--explore", "exhaustive"], "error: --max-states must be positive, got 0"),
        (["--max-memory", "-1", "--explore", "exhaustive"], "error: --max-memory must be positive, got -1"),
        (["--seed", "x"], "error: argument --seed: invalid int value: 'x'"),
        (["--seed", "-1", "--schedule", "random"], "error: --seed must be a non-negative integer, got -1"),
        (["--schedule", "fifo"], "error: argument --schedule: invalid choice: 'fifo' (choose from 'rr', 'random')"),
        (
            ["--race-policy", "lax"],
            "error: argument --race-policy: invalid choice: 'lax' (choose from 'same-value', 'strict')",
        ),
        (["--explore", "random:0"], "error: --explore expects random:N (N > 0) or exhaustive, got 'random:0'"),
        (["--explore", "random"], "error: --explore expects random:N (N > 0) or exhaustive, got 'random'"),
        (["--grid", "2x"], "error: --grid must be like 160, 160x1x1 or 2,1,1; got '2x'"),
        (["--cluster", "0"], "error: --cluster must be 1 to 3 positive integers; got '0'"),
        (["--arg", "ntiles=3"], "error: --arg ntiles is given twice; give each parameter once"),
        (["--arg", "x=rand:f32:4:-1"], "error: --arg x: the seed must be a non-negative integer, got '-1'"),
        (["--arg", "x=zeros:f32:-4"], "error: --arg x shape must be 1 to 3 positive integers; got '-4'"),
        (["--arg", "x=zeros:bf8:4"], "error: --arg x: expected zeros:DTYPE:SHAPE with DTYPE one of f16, f32"),
        (["--arg", "x=/nonexistent/x.npy"], "error: --arg x: cannot read '/nonexistent/x.npy': No such file"),
        (
            ["--arg", "x=zeros:f32:100000x100000x100"],
            "error: --arg x: a float32 buffer of shape 100000x100000x100 takes 3,725.3 GiB; the run needs it twice",
        ),
    ],
)
def test_option_misuse_is_one_error_line(xrun: Runner, args: list[str], message: str) -> None:
    result = xrun(REF, *LAUNCH, *args)
    assert result.code == run.EXIT_ERROR
    assert result.err.startswith(message), result.err
    assert len(result.err.splitlines()) == 1, result.err
    assert "internal error" not in result.err


def test_output_paths_are_checked_before_running(xrun: Runner, tmp_path: Path) -> None:
    missing = tmp_path / "none" / "t.json"
    result = xrun(REF, *LAUNCH, "--trace", missing)
    assert (result.code, result.err) == (
        1,
        f"error: --trace '{missing}': the directory '{missing.parent}' does not exist; create it first\n",
    )
    result = xrun(REF, *LAUNCH, "--trace", tmp_path)
    assert (result.code, result.err) == (1, f"error: --trace '{tmp_path}' is a directory; give a file name\n")
    afile = tmp_path / "afile"
    afile.write_text("")
    for out in (afile, afile / "sub"):
        result = xrun(REF, *LAUNCH, "--out", out)
        assert result.code == 1
        assert result.err.startswith(f"error: --out '{out}' ")
        assert "a file, not a directory" in result.err
    assert result.out == ""  # nothing ran


def test_kernel_must_be_marked_nvvm_kernel(xrun: Runner, tmp_path: Path) -> None:
    source = tmp_path / "two.mlir"
    source.write_text(
        "llvm.func @helper() {\n  llvm.return\n}\n"
        "llvm.func @main() attributes {nvvm.kernel} {\n  llvm.call @helper() : () -> ()\n  llvm.return\n}\n"
    )
    result = xrun(source, "--kernel", "helper", "--block", "32")
    assert result.code == run.EXIT_ERROR
    assert result.err.startswith(
        f"{source}:1:1: error: @helper is not a kernel: it has no nvvm.kernel attribute "
        "(mark it `attributes {nvvm.kernel}`); its kernels: main"
    )
    result = xrun(source, "--kernel", "nope", "--block", "32")
    assert (result.code, result.err) == (1, "error: no function @nope in the module; its kernels: main\n")


SPIN = """llvm.func @spin() attributes {nvvm.kernel} {
  cf.br ^bb1
^bb1:
  cf.br ^bb1
}
"""


def test_step_limit_names_where_each_warp_stood(xrun: Runner, tmp_path: Path) -> None:
    source = tmp_path / "spin.mlir"
    source.write_text(SPIN)
    result = xrun(source, "--kernel", "spin", "--block", "64", "--max-steps", "1000")
    assert result.code == run.EXIT_LIMIT
    # Warp 0 spins in ^bb1 (line 4) and, having no synchronising op, never yields to
    # warp 1, which still stands at the kernel's first op (line 2).
    assert result.err.splitlines() == [
        "error: step limit: stopped after 1000 warp-instructions (--max-steps 1000); the kernel may loop forever, "
        "or needs a larger limit",
        f"{source}:4:3: note: warp 0 was at 'cf.br' (running)",
        f"{source}:2:3: note: warp 1 was at 'cf.br' (running)",
    ]


COUNT = """llvm.func @count() attributes {nvvm.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %n = arith.constant 50 : i32
  cf.br ^bb1(%c0 : i32)
^bb1(%i: i32):
  %more = arith.cmpi slt, %i, %n : i32
  cf.cond_br %more, ^bb2, ^bb3
^bb2:
  %next = arith.addi %i, %c1 : i32
  cf.br ^bb1(%next : i32)
^bb3:
  llvm.return
}
"""


def test_step_limit_is_for_the_whole_launch(xrun: Runner, tmp_path: Path) -> None:
    # Three clusters run one after another; the limit counts all of them.
    source = tmp_path / "count.mlir"
    source.write_text(COUNT)
    launch = [source, "--kernel", "count", "--block", "64", "--grid", "3"]
    full = xrun(*launch)
    assert full.code == run.EXIT_OK, full.err
    total = int(full.out.split("; ")[1].split()[0])
    assert xrun(*launch, "--max-steps", str(total)).code == run.EXIT_OK
    limit = total - 1  # more than any one cluster takes
    result = xrun(*launch, "--max-steps", str(limit))
    assert result.code == run.EXIT_LIMIT
    assert result.err.startswith(f"error: step limit: stopped after {limit} warp-instructions (--max-steps {limit})")


# Prints `ready` once the driver is imported, so that SIGINT lands in the run, not in imports.
HARNESS = (
    "import signal, sys\n"
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "from xdsl_tmem.tools import run\n"
    "print('ready', flush=True)\n"
    "sys.exit(run.main(sys.argv[1:]))\n"
)


@pytest.mark.parametrize("mode", [[], ["--explore", "random:5"]], ids=["run", "explore"])
def test_ctrl_c_exits_130_with_one_line(tmp_path: Path, mode: list[str]) -> None:
    source = tmp_path / "spin.mlir"
    source.write_text(SPIN)
    args = [str(source), "--kernel", "spin", "--block", "32", "--max-steps", "1000000000", *mode]
    proc = subprocess.Popen(
        [sys.executable, "-c", HARNESS, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline() == "ready\n"
    try:
        proc.wait(timeout=1.0)  # it must still be running: the loop never ends by itself
    except subprocess.TimeoutExpired:
        pass
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err == "xdsl-tmem-run: interrupted\n"


# --------------------------------------------------------------------------------------
# Bounded memory on long runs
# --------------------------------------------------------------------------------------

WHILE_TRUE = """llvm.func @k() attributes {nvvm.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.while (%i = %c0) : (i32) -> i32 {
    %t = arith.constant true
    scf.condition(%t) %i : i32
  } do {
  ^bb0(%j: i32):
    %n = arith.addi %j, %c1 : i32
    scf.yield %n : i32
  }
  llvm.return
}
"""

# One warp, n iterations of a TMEM store, load and an mbarrier phase: every kind of
# per-step record (in-flight intervals, access records, barrier phases, sync points).
CHURN = """llvm.mlir.global internal @slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32
llvm.mlir.global internal @bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64
llvm.func @churn(%n: i32) attributes {nvvm.kernel} {
  %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
  %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
  %cols = arith.constant 32 : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  nvvm.mbarrier.init %bar, %cols : !llvm.ptr<3>, i32
  nvvm.tcgen05.alloc %slot, %cols : !llvm.ptr<3>, i32
  %base = llvm.load %slot : !llvm.ptr<3> -> i32
  %t = llvm.inttoptr %base : i32 to !llvm.ptr<6>
  scf.for %i = %c0 to %n step %c1 : i32 {
    nvvm.tcgen05.st %t, %i {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
    nvvm.tcgen05.wait <store>
    %v = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
    nvvm.tcgen05.wait <load>
    nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
    %parity = arith.andi %i, %c1 : i32
    nvvm.mbarrier.try_wait.parity %bar, %parity, %c0 : !llvm.ptr<3>, i32, i32
  }
  nvvm.tcgen05.dealloc %t, %cols : !llvm.ptr<6>, i32
  llvm.return
}
"""


def _peak_bytes(xrun: Runner, *args: str | Path) -> tuple[int, RunOutput]:
    tracemalloc.start()
    try:
        result = xrun(*args)
        return tracemalloc.get_traced_memory()[1], result
    finally:
        tracemalloc.stop()


def test_a_runaway_loop_runs_in_bounded_memory(xrun: Runner, tmp_path: Path) -> None:
    source = tmp_path / "loop.mlir"
    source.write_text(WHILE_TRUE)
    launch = [source, "--kernel", "k", "--block", "32", "--max-steps"]
    _peak_bytes(xrun, *launch, "10000")  # the first run also allocates what every later one reuses
    short, result = _peak_bytes(xrun, *launch, "10000")
    assert result.code == run.EXIT_LIMIT
    long, result = _peak_bytes(xrun, *launch, "150000")
    assert result.code == run.EXIT_LIMIT
    # 140 000 more warp-instructions: kept per step, even 8 bytes each would be 1.1 MB.
    assert long - short < 256 << 10, (short, long)


def test_a_long_legitimate_run_takes_bounded_memory(xrun: Runner, tmp_path: Path) -> None:
    source = tmp_path / "churn.mlir"
    source.write_text(CHURN)
    launch = [source, "--kernel", "churn", "--block", "32", "--arg"]
    _peak_bytes(xrun, *launch, "n=1000")  # the first run also allocates what every later one reuses
    short, result = _peak_bytes(xrun, *launch, "n=1000")
    assert result.code == run.EXIT_OK, result.err
    long, result = _peak_bytes(xrun, *launch, "n=6000")
    assert result.code == run.EXIT_OK, result.err
    # 5000 more iterations, each of 8 warp-instructions and 6 sync points: kept per
    # iteration, even 16 bytes each would be 80 KB.
    assert long - short < 64 << 10, (short, long)
