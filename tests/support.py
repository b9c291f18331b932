"""Paths and helpers shared by the tests (importable: `pythonpath = ["tests"]`)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from xdsl_tmem.tools.external import run_tool

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
LIT_TESTS = ROOT / "lit_tests"
SHARED_REF = ROOT.parent / "shared" / "ref"
IN_CI = bool(os.environ.get("CI"))


@dataclass
class OptResult:
    """What one in-process run of xdsl-tmem-opt produced."""

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
