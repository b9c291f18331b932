"""Translation validation (`--validate-lowering`, `validate_lowering`): the lowering keeps
every example's behaviour, and deliberately broken copies of lowering patterns are caught
and blamed on the pass that contains them.

The expectations are independent of the validator: a wrong initial producer phase makes
the MMA warp wait for an `empty` phase no consumer ever completes (docs/semantics.md §2: the
producer starts at phase 1 so that its first wait passes), and dropping the `16 << 16`
lane offset of the lower-half loads (docs/ptx-nvvm.md: bits 31-16 of a TMEM address are the
lane) makes them read rows 0-15 twice, which changes the stored tile.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path

import pytest
from support import CLEAN, run_cli
from xdsl.ir import SSAValue
from xdsl.parser import Parser

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.dialects import tmem
from xdsl_tmem.interpreter import Launch
from xdsl_tmem.interpreter.run import KernelDeadlock
from xdsl_tmem.interpreter.validate import validate_lowering
from xdsl_tmem.passes import convert_tmem_to_nvvm
from xdsl_tmem.passes.convert_tmem_to_nvvm import Emitter
from xdsl_tmem.tools import run
from xdsl_tmem.tools.run import EXIT_ERROR, EXIT_OK, EXIT_VALIDATION

CG1, CG1_ARGS = CLEAN[0]
SPLIT = "tmem-expand-regions,convert-tmem-to-nvvm,cse"


def _validate(capsys: pytest.CaptureFixture[str], path: Path, launch: str, *flags: str):
    return run_cli(capsys, str(path), *shlex.split(launch), "--validate-lowering", *flags)


@pytest.mark.parametrize(("path", "launch"), CLEAN, ids=[p.stem for p, _ in CLEAN])
@pytest.mark.parametrize(
    "flags",
    [
        ("-p", "lower-tmem"),
        ("-p", SPLIT),
        ("-p", "lower-tmem{fence-policy=mojo}", "--fence-policy", "mojo"),
        ("-p", "lower-tmem", "--schedule", "random", "--seed", "7"),
    ],
    ids=["strict", "split", "mojo", "random-schedule"],
)
def test_every_pass_preserves_every_example(
    capsys: pytest.CaptureFixture[str], path: Path, launch: str, flags: Sequence[str]
) -> None:
    result = _validate(capsys, path, launch, *flags)
    assert result.code == EXIT_OK, result.err
    lines = result.out.splitlines()
    assert lines[0] == "validate-lowering: input: ran to completion"
    passes = flags[1].split(",") if "," in flags[1] else [flags[1]]
    # One line per pass, in pipeline order, each unchanged.
    assert len(lines) == len(passes) + 2
    for line, name in zip(lines[1:-1], passes, strict=True):
        assert line.startswith(f"validate-lowering: after {name.split('{')[0]}")
        assert line.endswith(": ran to completion, outputs and verdict unchanged")


def test_mojo_fences_checked_strictly_are_blamed_on_the_lowering(capsys: pytest.CaptureFixture[str]) -> None:
    """Mojo's lowering omits the `tcgen05.fence::after_thread_sync` after the epilogue's
    wait (docs/semantics.md §9.1); a strict check sees the load unordered after the MMA."""
    result = _validate(capsys, CG1, CG1_ARGS, "-p", "tmem-expand-regions,convert-tmem-to-nvvm{fence-policy=mojo}")
    assert result.code == EXIT_VALIDATION
    assert (
        "validate-lowering: after tmem-expand-regions: ran to completion, outputs and verdict unchanged" in result.out
    )
    assert result.err.startswith(
        "error: translation validation: pass 'convert-tmem-to-nvvm{fence_policy=\"mojo\"}' changes the kernel: "
        "the verdict changes from 'ran to completion' to 'hazard tmem-read-before-commit'"
    )
    assert "error: hazard tmem-read-before-commit: nvvm.tcgen05.ld" in result.err


def _wrong_producer_phase(b: Emitter) -> list[SSAValue]:
    """The bug: the producer starts at phase 0 like the consumer."""
    zero = b.const(0)
    return [zero, zero, zero, zero]


def test_a_wrong_initial_producer_phase_is_caught(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(convert_tmem_to_nvvm, "_initial_state", _wrong_producer_phase)
    result = _validate(capsys, CG1, CG1_ARGS, "-p", SPLIT)
    assert result.code == EXIT_VALIDATION
    assert result.err.startswith(
        "error: translation validation: pass 'convert-tmem-to-nvvm' changes the kernel: "
        "the verdict changes from 'ran to completion' to 'deadlock'"
    )
    assert "cse" not in result.out  # validation stops at the first pass that changes the kernel


def test_the_python_api_names_the_broken_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(convert_tmem_to_nvvm, "_initial_state", _wrong_producer_phase)
    ctx = run.make_context()
    module = Parser(ctx, CG1.read_text()).parse_module()
    words = shlex.split(CG1_ARGS)
    args = dict(run.parse_arg(words[i + 1]) for i, w in enumerate(words) if w == "--arg")
    pipeline = run.parse_pipeline(SPLIT, SourceMap())
    launch = Launch.create("matmul_cg1", block=(160, 1, 1), args=args)
    result = validate_lowering(module, pipeline.passes, ctx, launch)
    failed = result.failed
    assert failed is not None
    assert failed.pass_spec == "convert-tmem-to-nvvm"
    assert [s.pass_spec for s in result.stages] == [None, "tmem-expand-regions", "convert-tmem-to-nvvm"]
    assert isinstance(failed.outcome.failure, KernelDeadlock)
    assert result.stages[0].outcome.outputs is not None


def _no_lower_half_offset(b: Emitter, op: tmem.LoadUpperOp | tmem.LoadLowerOp | tmem.StoreUpperOp | tmem.StoreLowerOp):
    """The bug: lower-half accesses address rows 0-15 like the upper half."""
    address = convert_tmem_to_nvvm._stage_offset(b, op.stage)  # pyright: ignore[reportPrivateUsage]
    if op.column is not None:
        address = b.add(address, op.column)
    return b.tmem_pointer(address)


def test_a_wrong_lane_offset_changes_the_outputs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug that keeps every run clean is caught by the outputs alone."""
    monkeypatch.setattr(convert_tmem_to_nvvm, "_access_address", _no_lower_half_offset)
    result = _validate(capsys, CG1, CG1_ARGS, "-p", "lower-tmem")
    assert result.code == EXIT_VALIDATION
    assert "validate-lowering: after lower-tmem: ran to completion\n" in result.out
    # The example stores each thread's `load_lower` vector at columns 16-31 of every 32-column
    # block of its row: exactly those, half of the 4 x 128 x 256 outputs, change.
    assert result.err.startswith(
        "error: translation validation: pass 'lower-tmem' changes the kernel: buffer 'out' changes: "
        f"{4 * 128 * 256 // 2} of {4 * 128 * 256} elements differ, the first at index 16 "
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        ((), "--validate-lowering needs the passes to check: -p PIPELINE"),
        (("-p", "lower-tmem", "--explore", "random:3"), "--explore cannot be combined with --validate-lowering"),
        (("-p", "lower-tmem", "--trace", "t.json"), "--trace cannot be combined with --validate-lowering"),
        (("-p", "lower-tmem", "--out", "o.npz"), "--out cannot be combined with --validate-lowering"),
    ],
)
def test_usage_errors(capsys: pytest.CaptureFixture[str], flags: Sequence[str], message: str) -> None:
    result = _validate(capsys, CG1, CG1_ARGS, *flags)
    assert result.code == EXIT_ERROR
    assert message in result.err
