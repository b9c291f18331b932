"""llc-22's PTX inside `--validate-lowering` (docs/verification.md): with `-t ptx` the NVVM
level, our PTX and llc-22's PTX of the same NVVM run on the same inputs and schedule and
must agree bit for bit; `=ours|llc|both` chooses, the default checks both where the tools
are found and says so where they are not; a tool failure is a clean error.

The expectations are independent of the validator: the examples' outputs are compared bit
for bit with numpy's GEMM elsewhere (test_ptx_exec.py); here a reference lowering that
returns a deadlocking kernel (the corpus's `missing_commit`, whose header says it
deadlocks) must be caught, and a tool that exits 1 (`false`) must be reported.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from external import Upstream
from support import CLEAN, CORPUS, EXAMPLES, header, run_cli
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xdsl_tmem.backend.target import ConvertToPtxPass
from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.interpreter import Launch
from xdsl_tmem.interpreter.validate import validate_lowering
from xdsl_tmem.tools import run, upstream
from xdsl_tmem.tools.run import EXIT_ERROR, EXIT_OK, EXIT_VALIDATION

REF, REF_ARGS = CLEAN[3]
"""The reference pipeline (NVVM level): no -p needed."""
ROUTE = "validate-lowering: llc-22's PTX by mlir-opt-22 | mlir-translate-22 --mlir-to-llvmir | llc-22"


def _validate(capsys: pytest.CaptureFixture[str], *flags: str):
    return run_cli(capsys, str(REF), *shlex.split(REF_ARGS), "-t", "ptx", *flags)


@pytest.mark.parametrize(("program", "args"), CLEAN, ids=[p.stem for p, _ in CLEAN])
def test_every_example_agrees_through_both_lowerings(
    capsys: pytest.CaptureFixture[str], upstream: Upstream, program: Path, args: str
) -> None:
    """The default with the tools present: the route is named, and our PTX and llc-22's
    both reproduce the NVVM level's outputs bit for bit."""
    passes = ["-p", "lower-tmem"] if program.parent == EXAMPLES else []
    result = run_cli(capsys, str(program), *passes, *shlex.split(args), "-t", "ptx", "--validate-lowering")
    assert result.code == EXIT_OK, result.err
    nvvm = "the module after lower-tmem" if passes else "the input"
    assert result.out.startswith(ROUTE), result.out
    assert "after convert-to-ptx: ran to completion, outputs and verdict unchanged" in result.out
    assert f"llc-22's PTX: ran to completion, outputs and verdict as {nvvm}" in result.out
    assert "and llc-22's PTX preserve the kernel's behaviour" in result.out


def test_ours_and_llc_alone(capsys: pytest.CaptureFixture[str], upstream: Upstream) -> None:
    ours = _validate(capsys, "--validate-lowering=ours")
    assert ours.code == EXIT_OK, ours.err
    assert "llc-22" not in ours.out
    assert "validate-lowering: 1 pass(es) preserve the kernel's behaviour" in ours.out
    llc = _validate(capsys, "--validate-lowering=llc")
    assert llc.code == EXIT_OK, llc.err
    assert "convert-to-ptx" not in llc.out
    assert "validate-lowering: llc-22's PTX: ran to completion, outputs and verdict as the input" in llc.out
    assert "validate-lowering: 0 pass(es) and llc-22's PTX preserve the kernel's behaviour" in llc.out


def _with_llc(monkeypatch: pytest.MonkeyPatch, llc: str | None) -> None:
    """Find `llc` (None: not at all) in place of llc-22, the other tools as they are."""
    found = upstream.find_llvm_tool

    def find(name: str) -> str | None:
        return llc if name == "llc" else found(name)

    monkeypatch.setattr(upstream, "find_llvm_tool", find)


def test_missing_tools_are_said(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """No silent skipping: the default warns and checks our PTX; asking for llc-22 fails."""
    _with_llc(monkeypatch, None)
    default = _validate(capsys, "--validate-lowering")
    assert default.code == EXIT_OK, default.err
    assert "warning: --validate-lowering: llc-22's PTX is not checked: llc-22 not found" in default.err
    assert "after convert-to-ptx: ran to completion, outputs and verdict unchanged" in default.out
    for mode in ("llc", "both"):
        asked = _validate(capsys, f"--validate-lowering={mode}")
        assert asked.code == EXIT_ERROR
        assert f"error: --validate-lowering={mode}: llc-22 not found on PATH nor in /usr/lib/llvm-22/bin" in asked.err


def test_a_failing_tool_is_a_clean_error(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _with_llc(monkeypatch, "/bin/false")
    result = _validate(capsys, "--validate-lowering=llc")
    assert result.code == EXIT_ERROR
    assert "error: --validate-lowering: llc-22's lowering of the kernel failed: false failed (1)" in result.err
    assert "internal error" not in result.err
    assert "Traceback" not in result.err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("-p", "lower-tmem", "--validate-lowering=llc"), "--validate-lowering=llc names the PTX lowerings to "
         "check: it needs -t ptx"),
        (("-p", "lower-tmem", "--validate-lowering=mine"), "argument --validate-lowering: expects ours, llc or both "
         "(as --validate-lowering=VALUE), got 'mine'"),
    ],
)  # fmt: skip
def test_usage_errors(capsys: pytest.CaptureFixture[str], flags: tuple[str, ...], message: str) -> None:
    program, args = CLEAN[0]
    result = run_cli(capsys, str(program), *shlex.split(args), *flags)
    assert result.code != EXIT_OK
    assert message in result.err


def _deadlocking_lowering(module: ModuleOp) -> ModuleOp:
    """Not llc-22: our PTX of the corpus's `missing_commit` (the reference pipeline without
    its tcgen05.commit), whatever the module."""
    wrong = Parser(run.make_context(), (CORPUS / "missing_commit.mlir").read_text()).parse_module()
    ConvertToPtxPass().apply(run.make_context(), wrong)
    return wrong


def test_a_reference_lowering_that_differs_is_caught(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, upstream: Upstream
) -> None:
    assert header(CORPUS / "missing_commit.mlir", "Exit") == str(run.EXIT_DEADLOCK)
    ctx = run.make_context()
    module = Parser(ctx, REF.read_text()).parse_module()
    words = shlex.split(REF_ARGS)
    args = dict(run.parse_arg(words[i + 1]) for i, w in enumerate(words) if w == "--arg")
    launch = Launch.create("ref_pipeline", block=(160, 1, 1), args=args)
    pipeline = run.parse_pipeline("convert-to-ptx", SourceMap())
    result = validate_lowering(module, pipeline.passes, ctx, launch, reference=("wrong", _deadlocking_lowering))
    failed = result.failed
    assert failed is not None
    assert failed is result.stages[-1]
    assert (failed.pass_spec, failed.reference) == ("wrong", "input")
    assert failed.difference == "the verdict changes from 'ran to completion' to 'deadlock'"

    def wrong(tools: Upstream, source_map: SourceMap) -> Callable[[ModuleOp], ModuleOp]:
        return _deadlocking_lowering

    monkeypatch.setattr(run, "llc_lowering", wrong)
    cli = _validate(capsys, "--validate-lowering")
    assert cli.code == EXIT_VALIDATION
    assert (
        "error: translation validation: llc-22's PTX of the NVVM level does not do what the input does: the verdict "
        "changes from 'ran to completion' to 'deadlock'" in cli.err
    ), cli.err
