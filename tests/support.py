"""Paths and helpers shared by the tests (importable: `pythonpath = ["tests"]`)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from external import run_tool

from xdsl_tmem.tools import run

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
LIT_TESTS = ROOT / "lit_tests"
CORPUS = ROOT / "tests" / "corpus"
"""The seeded-bug corpus: one program per hazard class, with `// Field: value` headers."""
SCHEDULES = ROOT / "tests" / "schedules"
"""Programs whose failure only some schedules reach."""
IN_CI = bool(os.environ.get("CI"))


@dataclass
class OptResult:
    """What one in-process run of a driver (xdsl-tmem-opt, xdsl-tmem-run) produced."""

    code: int
    out: str
    err: str


def missing(what: str, install: str) -> None:
    """Skip a test whose external tool is absent; under CI, fail instead."""
    message = f"{what} not found ({install})"
    if IN_CI:
        pytest.fail(f"{message}; CI must install it")
    pytest.skip(message)


def ptxas_assemble(ptxas: str, ptx: str, tmp_path: Path, arch: str = "sm_100a") -> None:
    """Assemble `ptx`; raises `ToolFailed` with ptxas's message if it is rejected."""
    source = tmp_path / "kernel.ptx"
    source.write_text(ptx)
    run_tool([ptxas, f"-arch={arch}", str(source), "-o", str(tmp_path / "kernel.cubin")])


CLEAN = [
    (EXAMPLES / "matmul_cg1.mlir", "--kernel matmul_cg1 --block 160 --arg out=zeros:f32:4x128x256 "
     "--arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2 --arg ntiles=4"),
    (EXAMPLES / "matmul_cg2.mlir", "--kernel matmul_cg2 --block 160 --arg out=zeros:f32:2x256x256 "
     "--arg a=rand:f16:8192:1 --arg b=rand:f16:8192:2 --arg ntiles=2"),
    (EXAMPLES / "blockwise_fp8_cg1.mlir", "--kernel blockwise_fp8_cg1 --block 192 --arg out=zeros:f32:2x128x64 "
     "--arg a=rand:u8:24576:1 --arg b=rand:u8:12288:2 --arg scales=rand:f32:6:3 --arg ntiles=2 --arg nk=3"),
    (LIT_TESTS / "nvvm" / "ref_pipeline.mlir", "--kernel ref_pipeline --block 160 --arg out=zeros:f32:4x128x256 "
     "--arg a=rand:f16:4096:1 --arg b=rand:f16:8192:2 --arg ntiles=4"),
]  # fmt: skip
"""Every shipped example and the reference pipeline, with a launch that runs them."""


def header(path: Path, field: str) -> str:
    """The `// Field: value` line of a corpus program."""
    match = re.search(rf"^// {field}: (.*)$", path.read_text(), re.M)
    assert match is not None, f"{path.name} has no '{field}' line"
    return match.group(1)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> OptResult:
    """xdsl-tmem-run in process; it must never print a traceback."""
    capsys.readouterr()
    code = run.main(list(args))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return OptResult(code, captured.out, captured.err)
