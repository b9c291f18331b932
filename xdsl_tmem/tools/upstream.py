"""Locating and running the upstream MLIR/LLVM 22 tools: the tests' external oracles, and
llc-22's PTX of a kernel for `xdsl-tmem-run --validate-lowering` (docs/verification.md).

Debian's `mlir-22-tools` and `llvm-22` install `mlir-opt-22`, `mlir-translate-22`
and `llc-22` (plain `llc` is often LLVM 14, which knows no tcgen05). ptxas is found by
`xdsl_tmem.backend.ptxas.find_ptxas`.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from xdsl_tmem.diagnostics import SourceMap

LLVM_MAJOR = 22

UPSTREAM_LOWERING = (
    "--convert-scf-to-cf",
    "--convert-arith-to-llvm",
    "--convert-nvvm-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
)
"""mlir-opt passes that take nvvm + llvm + arith + scf + cf to the LLVM dialect (upstream
MLIR's conversion passes); arith before nvvm so constant try_wait ticks become immediates."""


TOOLS = ("mlir-opt", "mlir-translate", "llc")
"""The route's tools, without their version suffix."""

LLC_TARGET = "sm_100a"
"""llc-22's `-mcpu`: the target our backend emits for (llc-22 picks the PTX ISA version)."""


class ToolFailed(Exception):
    """An external tool exited with an error; the message holds its stderr."""


def find_llvm_tool(name: str) -> str | None:
    """`name-22` on PATH, else the Debian llvm-22 bin directory."""
    if (path := shutil.which(f"{name}-{LLVM_MAJOR}")) is not None:
        return path
    candidate = Path(f"/usr/lib/llvm-{LLVM_MAJOR}/bin/{name}")
    return str(candidate) if candidate.is_file() else None


def run_tool(argv: list[str], stdin: str | None = None, timeout: float = 300) -> str:
    """Run a tool, returning stdout; raise `ToolFailed` with its stderr on failure (or
    when it cannot be started, or runs past `timeout` seconds)."""
    try:
        proc = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=timeout)
    except OSError as e:
        raise ToolFailed(f"{Path(argv[0]).name} could not be started: {e.strerror or e}") from None
    except subprocess.TimeoutExpired:
        raise ToolFailed(f"{Path(argv[0]).name} ran past {timeout:.0f} s") from None
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
    def missing() -> list[str]:
        """The tools of the route that are not found (`llc-22`, ...)."""
        return [f"{t}-{LLVM_MAJOR}" for t in TOOLS if find_llvm_tool(t) is None]

    @staticmethod
    def find() -> Upstream | None:
        tools = [find_llvm_tool(t) for t in TOOLS]
        if any(t is None for t in tools):
            return None
        mlir_opt, mlir_translate, llc = (t for t in tools if t is not None)
        return Upstream(mlir_opt, mlir_translate, llc)

    def parse(self, mlir: str, *flags: str) -> str:
        """Parse (and print) `mlir` with mlir-opt; raises if upstream rejects it."""
        return run_tool([self.mlir_opt, *flags], mlir)

    def to_ptx(self, mlir: str, cpu: str = LLC_TARGET) -> str:
        """llc-22's PTX of an NVVM-level module (its generic or custom text)."""
        lowered = run_tool([self.mlir_opt, *UPSTREAM_LOWERING], mlir)
        llvm_ir = run_tool([self.mlir_translate, "--mlir-to-llvmir"], lowered)
        return run_tool([self.llc, "-march=nvptx64", f"-mcpu={cpu}"], llvm_ir)

    def route(self) -> str:
        """How `to_ptx` lowers, in words (for reports)."""
        opt, translate, llc = (Path(t).name for t in (self.mlir_opt, self.mlir_translate, self.llc))
        return f"{opt} | {translate} --mlir-to-llvmir | {llc} -march=nvptx64 -mcpu={LLC_TARGET}"


LLC_PTX_NAME = "llc-22.ptx"
"""The name diagnostics give llc-22's PTX (it is not written to a file)."""


def llc_lowering(upstream: Upstream, source_map: SourceMap | None = None) -> Callable[[ModuleOp], ModuleOp]:
    """llc-22's PTX of an NVVM-level module, read by our front end into the ptx dialect
    (what `run_kernel` runs; parameters by position, as llc-22 names them `K_param_N`):
    the reference lowering of `validate_lowering`. Raises `ToolFailed` when a tool does."""
    from xdsl_tmem.frontend import load_ptx  # the front end's grammar loads only when used

    def lower(module: ModuleOp) -> ModuleOp:
        return load_ptx(upstream.to_ptx(str(module)), LLC_PTX_NAME, source_map or SourceMap())

    return lower
