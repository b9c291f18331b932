"""Locating and running the upstream MLIR/LLVM 22 tools (the external oracles).

Debian's `mlir-22-tools` and `llvm-22` install `mlir-opt-22`, `mlir-translate-22`
and `llc-22` (plain `llc` is often LLVM 14, which knows no tcgen05). ptxas is found by
`xdsl_tmem.backend.ptxas.find_ptxas`.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

LLVM_MAJOR = 22

UPSTREAM_LOWERING = (
    "--convert-scf-to-cf",
    "--convert-arith-to-llvm",
    "--convert-nvvm-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
)
"""mlir-opt passes that take nvvm + llvm + arith + scf + cf to the LLVM dialect
(ptx-nvvm.md §0); arith before nvvm so constant try_wait ticks become immediates."""


class ToolFailed(Exception):
    """An external tool exited with an error; the message holds its stderr."""


def find_llvm_tool(name: str) -> str | None:
    """`name-22` on PATH, else the Debian llvm-22 bin directory."""
    if (path := shutil.which(f"{name}-{LLVM_MAJOR}")) is not None:
        return path
    candidate = Path(f"/usr/lib/llvm-{LLVM_MAJOR}/bin/{name}")
    return str(candidate) if candidate.is_file() else None


def run_tool(argv: list[str], stdin: str | None = None, timeout: float = 300) -> str:
    """Run a tool, returning stdout; raise `ToolFailed` with its stderr on failure."""
    proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise ToolFailed(f"{Path(argv[0]).name} failed ({proc.returncode}):\n{proc.stderr}")
    return proc.stdout


@dataclass(frozen=True)
class Upstream:
    """The upstream MLIR 22 route: mlir-opt → mlir-translate → llc (→ PTX text)."""

    mlir_opt: str
    mlir_translate: str
    llc: str

    @staticmethod
    def find() -> Upstream | None:
        tools = [find_llvm_tool(t) for t in ("mlir-opt", "mlir-translate", "llc")]
        if any(t is None for t in tools):
            return None
        mlir_opt, mlir_translate, llc = (t for t in tools if t is not None)
        return Upstream(mlir_opt, mlir_translate, llc)

    def parse(self, mlir: str, *flags: str) -> str:
        """Parse (and print) `mlir` with mlir-opt; raises if upstream rejects it."""
        return run_tool([self.mlir_opt, *flags], mlir)

    def to_ptx(self, mlir: str, cpu: str = "sm_100a") -> str:
        lowered = run_tool([self.mlir_opt, *UPSTREAM_LOWERING], mlir)
        llvm_ir = run_tool([self.mlir_translate, "--mlir-to-llvmir"], lowered)
        return run_tool([self.llc, "-march=nvptx64", f"-mcpu={cpu}"], llvm_ir)
