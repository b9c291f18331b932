"""The code base stays ruff- and basedpyright-clean (the project's style bar)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from support import ROOT


def _tool(name: str) -> str:
    path = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    assert path is not None, f"{name} is part of the test extra; pip install -e '.[test]'"
    return path


def test_ruff() -> None:
    proc = subprocess.run([_tool("ruff"), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_basedpyright() -> None:
    proc = subprocess.run([_tool("basedpyright")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr
