"""ptxas: find it, assemble PTX with it, and read its `-v` statistics.

ptxas is looked up as `$PTXAS`, then on `PATH` (CUDA 13), then inside the pip package
`nvidia-cuda-nvcc` (which ships ptxas 13.5 under `nvidia/cu13/bin`). A `$PTXAS` that
names no executable file is an error, not a reason to look elsewhere.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

INSTALL_HINT = "set $PTXAS to its path, put CUDA 13's bin directory on PATH, or pip install nvidia-cuda-nvcc"


class PtxasNotFound(Exception):
    """No usable ptxas: the message says where it was looked for and how to get one."""


def find_cuda_tool(name: str) -> str | None:
    """A CUDA binary: `$<NAME>` (e.g. `$PTXAS`), then on `PATH`, then inside the pip
    `nvidia-cuda-*` packages (`nvidia/cu13/bin/<name>`). Raises `PtxasNotFound` if
    `$<NAME>` is set but is not an executable file."""
    variable = name.upper()
    if env := os.environ.get(variable):
        if Path(env).is_file() and os.access(env, os.X_OK):
            return env
        problem = "is not executable" if Path(env).is_file() else "does not exist"
        raise PtxasNotFound(f"${variable} is set to '{env}', which {problem}; point it at {name} or unset it")
    if (path := shutil.which(name)) is not None:
        return path
    try:
        import nvidia  # pyright: ignore[reportMissingImports]
    except ImportError:
        return None
    for root in getattr(nvidia, "__path__", []):
        for candidate in sorted(Path(root).glob(f"*/bin/{name}")):
            return str(candidate)
    return None


def find_ptxas() -> str | None:
    return find_cuda_tool("ptxas")


@dataclass(frozen=True)
class KernelStats:
    """`ptxas -v` figures for one entry."""

    kernel: str
    arch: str
    registers: int
    spill_stores: int
    spill_loads: int
    stack_frame: int
    shared_bytes: int
    barriers: int

    def summary(self) -> str:
        return (
            f"{self.kernel} ({self.arch}): {self.registers} registers, {self.spill_stores} B spill stores, "
            f"{self.spill_loads} B spill loads, {self.stack_frame} B stack, {self.shared_bytes} B smem, "
            f"{self.barriers} barriers"
        )


class PtxasError(Exception):
    """ptxas rejected the PTX; the message is its stderr."""


_COMPILING = re.compile(r"Compiling entry function '([^']+)' for '([^']+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:, used (\d+) barriers)?(?:, (\d+) bytes smem)?")


def parse_verbose(text: str) -> list[KernelStats]:
    """Per-entry statistics from `ptxas -v` output (docs/ptx-nvvm.md §4)."""
    stats: list[KernelStats] = []
    kernel = arch = None
    frame = (0, 0, 0)
    for line in text.splitlines():
        if m := _COMPILING.search(line):
            kernel, arch = m.group(1), m.group(2)
            frame = (0, 0, 0)
        elif m := _FRAME.search(line):
            frame = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif (m := _USED.search(line)) and kernel is not None and arch is not None:
            stats.append(
                KernelStats(
                    kernel,
                    arch,
                    registers=int(m.group(1)),
                    spill_stores=frame[1],
                    spill_loads=frame[2],
                    stack_frame=frame[0],
                    shared_bytes=int(m.group(3) or 0),
                    barriers=int(m.group(2) or 0),
                )
            )
            kernel = arch = None
    return stats


def assemble(ptx: str, arch: str, ptxas: str | None = None, cubin: Path | None = None) -> list[KernelStats]:
    """Assemble `ptx` for `arch` with `-v`; return its statistics or raise PtxasError."""
    tool = ptxas or find_ptxas()
    if tool is None:
        raise PtxasNotFound(f"ptxas not found: {INSTALL_HINT}")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "kernel.ptx"
        source.write_text(ptx)
        output = cubin or Path(tmp) / "kernel.cubin"
        try:
            proc = subprocess.run(
                [tool, f"-arch={arch}", "-v", str(source), "-o", str(output)],
                capture_output=True,
                text=True,
                timeout=300,
            )
        except OSError as e:
            raise PtxasNotFound(f"cannot run ptxas '{tool}': {e.strerror}; {INSTALL_HINT}") from None
        except subprocess.TimeoutExpired:
            raise PtxasError(f"ptxas '{tool}' did not finish within 300 s") from None
    if proc.returncode != 0:
        raise PtxasError(proc.stderr.strip() or proc.stdout.strip())
    return parse_verbose(proc.stdout + proc.stderr)
