"""Shared fixtures: our driver in-process, and the external oracles.

A test that needs an external tool skips when it is missing, except under CI
(`CI` set), where a missing tool is a failure: CI installs every tool it uses.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from external import Upstream
from support import OptResult, missing

from xdsl_tmem.backend.ptxas import find_ptxas
from xdsl_tmem.tools import opt


@pytest.fixture(scope="session")
def upstream() -> Upstream:
    tools = Upstream.find()
    if tools is None:
        missing("mlir-opt-22 / mlir-translate-22 / llc-22", "apt-get install mlir-22-tools llvm-22")
    assert tools is not None
    return tools


@pytest.fixture(scope="session")
def ptxas() -> str:
    path = find_ptxas()
    if path is None:
        missing("ptxas", "pip install nvidia-cuda-nvcc, or CUDA 13 on PATH")
    assert path is not None
    return path


@pytest.fixture
def run_opt(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> Callable[..., OptResult]:
    """Run `xdsl-tmem-opt` in-process on `text` (or a file) with extra arguments."""

    def run(text: str | None = None, *args: str, path: Path | None = None) -> OptResult:
        if path is None:
            path = tmp_path / "input.mlir"
            path.write_text(text or "")
        capsys.readouterr()
        code = opt.main([str(path), *args])
        captured = capsys.readouterr()
        return OptResult(code, captured.out, captured.err)

    return run
