"""xdsl-tmem-opt: located diagnostics, exit codes, and never a Python traceback."""

from __future__ import annotations

import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support import EXAMPLES, LIT_TESTS, OptResult

RunOpt = Callable[..., OptResult]

GOOD = """\
%slot = "test.op"() : () -> !llvm.ptr<3>
%a = tmem.alloc %slot : !tmem.allocation<1, 512>
"""


def test_valid_input_exits_zero(run_opt: RunOpt) -> None:
    result = run_opt(GOOD)
    assert result.code == 0
    assert "tmem.alloc %slot : !tmem.allocation<1, 512>" in result.out
    assert result.err == ""


def test_verify_error_is_located_and_exits_one(run_opt: RunOpt, tmp_path: Path) -> None:
    text = (
        GOOD
        + "%c = arith.constant 2 : i32\n"
        + "%s = tmem.tmem_stage.from_alloc %a, %c : !tmem.allocation<1, 512> -> !tmem.tmem_stage<2, 256, 1>\n"
    )
    result = run_opt(text)
    assert result.code == 1
    assert result.out == ""
    first = result.err.splitlines()[0]
    assert first == (
        f"{tmp_path / 'input.mlir'}:4:1: error: tmem.tmem_stage.from_alloc: stage index 2 out of "
        "range [0, 2) for !tmem.tmem_stage<2, 256, 1>"
    )
    assert result.err.splitlines()[1].startswith("%s = tmem.tmem_stage.from_alloc")
    assert result.err.splitlines()[2] == "^"


def test_parse_error_is_located(run_opt: RunOpt) -> None:
    result = run_opt(GOOD + "%b = tmem.alloc %slot : !tmem.allocation<1, 48>\n")
    assert result.code == 1
    assert ":3:41: error: !tmem.allocation: max_cols must be a power of two in [32, 512], got 48" in result.err


def test_nested_error_points_at_the_inner_op(run_opt: RunOpt) -> None:
    text = """\
llvm.func @k(%slot: !llvm.ptr<3>) {
  %c = arith.constant 7 : i32
  %b = "test.op"() : () -> i32
  %s = tmem.tmem_stage.create %b, %c : !tmem.tmem_stage<4, 128, 1>
  llvm.return
}
"""
    result = run_opt(text)
    assert result.code == 1
    assert ":4:3: error: tmem.tmem_stage.create: stage index 7 out of range [0, 4)" in result.err


@pytest.mark.parametrize(
    "source",
    [
        "module {" * 400 + "}" * 400,  # the nesting limit, hit deep in one long line
        "\x01\x02 garbage",  # control characters
        "func.func @f() {\n  " + "%x = arith.constant 1 : i32  " * 50 + "%y = arith.bogus\n}",
    ],
    ids=["long-line", "control-chars", "error-far-right"],
)
def test_source_excerpt_is_bounded_and_the_caret_points_at_the_column(run_opt: RunOpt, source: str) -> None:
    """However long or binary the line, the excerpt stays short and the caret stands under
    the character at the reported line:col of the source."""
    result = run_opt(source)
    assert result.code == 1
    location, excerpt, caret = result.err.splitlines()[:3]
    line, column = (int(n) for n in location.split(": error:")[0].split(":")[-2:])
    assert len(excerpt) <= 162
    assert caret.strip() == "^"
    shown = excerpt[len(caret) - 1]
    expected = source.splitlines()[line - 1][column - 1]
    assert shown == (expected if expected.isprintable() else "\ufffd")


def test_split_input_file_reports_original_lines(run_opt: RunOpt) -> None:
    text = GOOD + "// -----\n" + GOOD + "%b = tmem.alloc %slot : !tmem.allocation<3, 512>\n"
    result = run_opt(text, "--split-input-file")
    assert result.code == 1
    assert ":6:41: error: !tmem.allocation: cta_group must be 1 or 2, got 3" in result.err
    # The good chunk is still printed.
    assert "tmem.alloc" in result.out


def test_verify_diagnostics_prints_to_stdout_and_exits_zero(run_opt: RunOpt) -> None:
    result = run_opt(GOOD + "%b = tmem.from_shared %slot : !tmem.allocation<1, 100>\n", "--parsing-diagnostics")
    assert result.code == 0
    assert "error: !tmem.allocation: max_cols must be a power of two" in result.out


MALFORMED = "lower-tmem{fence-policy=strict"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # The column is where the closing brace is missing: one past the end of the spec.
        (["-p", MALFORMED], f"error: invalid pass pipeline '{MALFORMED}' at column {len(MALFORMED) + 1}: "),
        (["-p", "lower-tmem,,"], "error: invalid pass pipeline 'lower-tmem,,' at column 12: expected pass name"),
        (["-p", "no-such-pass"], "error: unknown pass 'no-such-pass'"),
        (["-p", "lower-tmen"], "error: unknown pass 'lower-tmen'; did you mean 'lower-tmem'?"),
        (["-p", "canonicalize{bogus=1}"], "error: pass 'canonicalize' has no option 'bogus'; it takes no options"),
        (["-p", "lower-tmem{nosuch=1}"], "error: pass 'lower-tmem' has no option 'nosuch'; its options: fence-policy"),
        (["-p", "lower-tmem{fence-policy=1}"], "error: pass 'lower-tmem': "),
        (["-t", "ptx{cpu=sm_100a}"], "error: target 'ptx' has no option 'cpu'; its options: arch"),
        (["-t", "ptx{arch=sm_100a"], "error: invalid target 'ptx{arch=sm_100a' at column 17: "),
        (["-t", "ptx,mlir"], "error: -t expects one target, got 'ptx,mlir'"),
        (["-t", "mlir", "--ptxas"], "error: --ptxas needs the PTX target (-t ptx)"),
    ],
)
def test_bad_pipeline_or_target_is_one_error_line(run_opt: RunOpt, args: list[str], message: str) -> None:
    result = run_opt(GOOD, *args)
    assert result.code == 1
    assert result.err.startswith(message)
    assert len(result.err.splitlines()) == 1, result.err
    if message == "error: pass 'lower-tmem': ":
        assert result.err.endswith("its options: fence-policy: 'str' = strict\n")  # what is allowed


def test_unknown_target_exits_1_not_argparse_2(run_opt: RunOpt) -> None:
    result = run_opt(GOOD, "-t", "nosuch")
    assert result.code == 1
    assert "invalid choice: 'nosuch'" in result.err
    assert "Traceback" not in result.err


def test_output_file_in_a_missing_directory_or_onto_a_directory(run_opt: RunOpt, tmp_path: Path) -> None:
    missing = tmp_path / "none" / "out.mlir"
    result = run_opt(GOOD, "-o", str(missing))
    assert (result.code, result.err) == (
        1,
        f"error: -o '{missing}': the directory '{missing.parent}' does not exist; create it first\n",
    )
    result = run_opt(GOOD, "-o", str(tmp_path))
    assert (result.code, result.err) == (1, f"error: -o '{tmp_path}' is a directory; give a file name\n")


def test_ptxas_variable_naming_no_file_is_an_error(
    run_opt: RunOpt, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PTXAS", str(tmp_path / "nonexistent"))
    result = run_opt(None, "-p", "lower-tmem", "-t", "ptx", "--ptxas", path=EXAMPLES / "matmul_cg1.mlir")
    assert result.code == 1
    assert f"$PTXAS is set to '{tmp_path / 'nonexistent'}', which does not exist" in result.err


def test_missing_ptxas_is_not_reported_as_a_rejection(run_opt: RunOpt, monkeypatch: pytest.MonkeyPatch) -> None:
    from xdsl_tmem.backend import ptxas

    monkeypatch.setattr(ptxas, "find_ptxas", lambda: None)
    result = run_opt(None, "-p", "lower-tmem", "-t", "ptx", "--ptxas", path=EXAMPLES / "matmul_cg1.mlir")
    assert result.code == 1
    assert "ptxas not found" in result.err
    assert "pip install nvidia-cuda-nvcc" in result.err
    assert "rejected" not in result.err


def test_ctrl_c_exits_130_with_one_line(run_opt: RunOpt, monkeypatch: pytest.MonkeyPatch) -> None:
    from xdsl_tmem.tools.opt import TmemOptMain

    def interrupt(self: TmemOptMain, module: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(TmemOptMain, "apply_passes", interrupt)
    result = run_opt(GOOD)
    assert (result.code, result.err) == (130, "xdsl-tmem-opt: interrupted\n")


def test_missing_input_file(run_opt: RunOpt, tmp_path: Path) -> None:
    result = run_opt(None, path=tmp_path / "nope.mlir")
    assert result.code == 1
    assert result.err.startswith("error: ")
    assert "nope.mlir" in result.err


def test_unknown_op_and_garbage(run_opt: RunOpt) -> None:
    for text in ["tmem.nonexistent", "%x = tmem.alloc %", "}}}", "\x00\xff", "%a = arith.constant"]:
        result = run_opt(text)
        assert result.code == 1, text
        assert "error:" in result.err
        assert "Traceback" not in result.err


def _mutations(text: str, rng: random.Random, count: int) -> list[str]:
    """Truncations and single-token deletions/duplications of a valid program."""
    tokens = text.split(" ")
    out: list[str] = []
    for _ in range(count):
        kind = rng.randrange(3)
        i = rng.randrange(len(tokens))
        if kind == 0:
            out.append(" ".join(tokens[:i]))
        elif kind == 1:
            out.append(" ".join(tokens[:i] + tokens[i + 1 :]))
        else:
            out.append(" ".join(tokens[: i + 1] + tokens[i:]))
    return out


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.mlir")), ids=lambda p: p.name)
def test_mutated_examples_never_produce_a_traceback(run_opt: RunOpt, example: Path) -> None:
    rng = random.Random(example.name)
    for text in _mutations(example.read_text(), rng, 40):
        result = run_opt(text)
        assert result.code in (0, 1)
        assert "Traceback" not in result.err
        assert "internal error" not in result.err, result.err
        if result.code == 1:
            assert "error: " in result.err.splitlines()[0]


def test_internal_errors_are_reported_without_traceback(run_opt: RunOpt, monkeypatch: pytest.MonkeyPatch) -> None:
    from xdsl_tmem.tools.opt import TmemOptMain

    def explode(self: TmemOptMain, module: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(TmemOptMain, "apply_passes", explode)
    result = run_opt(GOOD)
    assert result.code == 1
    assert result.err.startswith("error: internal error in xdsl-tmem-opt: RuntimeError: boom")
    assert "Traceback" not in result.err


def test_installed_console_script_exit_code() -> None:
    exe = shutil.which("xdsl-tmem-opt", path=str(Path(sys.executable).parent))
    assert exe is not None, "xdsl-tmem-opt is not installed next to this Python"
    bad = subprocess.run([exe, "-"], input="%x = tmem.alloc %", capture_output=True, text=True)
    assert bad.returncode == 1
    assert "Traceback" not in bad.stderr
    good = subprocess.run([exe, str(EXAMPLES / "matmul_cg1.mlir")], capture_output=True, text=True)
    assert good.returncode == 0, good.stderr


def test_stock_xdsl_opt_sees_our_dialects_through_the_entry_point() -> None:
    exe = shutil.which("xdsl-opt", path=str(Path(sys.executable).parent))
    assert exe is not None
    proc = subprocess.run(
        [exe, str(LIT_TESTS / "tmem" / "ops.mlir"), "--split-input-file"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "tmem.warp_context.epilogue_create" in proc.stdout


def test_stock_xdsl_opt_has_the_ptx_target_and_passes(tmp_path: Path) -> None:
    exe = shutil.which("xdsl-opt", path=str(Path(sys.executable).parent))
    assert exe is not None
    source = tmp_path / "k.mlir"
    source.write_text(
        "llvm.func @k(%bar: !llvm.ptr<3>) attributes {nvvm.kernel} {\n"
        "  nvvm.tcgen05.commit %bar : !llvm.ptr<3>\n"
        "  llvm.return\n"
        "}\n"
    )
    proc = subprocess.run([exe, str(source), "-t", "ptx{arch=sm_103a}"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert ".target sm_103a" in proc.stdout
    assert "tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64" in proc.stdout
