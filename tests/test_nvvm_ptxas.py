"""ptxas-only checks of the nvvm verifiers, against ptxas itself.

mlir-opt-22 accepts any tcgen05.alloc / dealloc column count, and llc-22 always
passes it in a register, which ptxas does not check. PTX written with an
immediate is checked by ptxas (docs/ptx-nvvm.md §1.3): our verifiers reject a
constant exactly when ptxas rejects the same immediate.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from support import OptResult

RunOpt = Callable[..., OptResult]

COLUMNS = (0, 16, 32, 48, 64, 96, 128, 256, 384, 512, 1024, 2048)

PTX = """\
.version 8.6
.target sm_100a
.address_size 64
.visible .entry k()
{{
\t.reg .b32 %r<2>;
\t.shared .align 4 .b32 slot;
\tmov.u32 %r1, slot;
\t{instruction};
\tret;
}}
"""

MLIR = """\
llvm.func @k(%slot: !llvm.ptr<3>, %t: !llvm.ptr<6>) attributes {{nvvm.kernel}} {{
  %n = llvm.mlir.constant({n} : i32) : i32
  {op}
  llvm.return
}}
"""


def ptxas_accepts(ptxas: str, tmp_path: Path, instruction: str) -> bool:
    source = tmp_path / "probe.ptx"
    source.write_text(PTX.format(instruction=instruction))
    proc = subprocess.run(
        [ptxas, "-arch=sm_100a", str(source), "-o", str(tmp_path / "probe.cubin")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc.returncode == 0


@pytest.mark.parametrize("n", COLUMNS)
def test_alloc_columns_match_ptxas(run_opt: RunOpt, ptxas: str, tmp_path: Path, n: int) -> None:
    expected = ptxas_accepts(ptxas, tmp_path, f"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], {n}")
    ours = run_opt(MLIR.format(n=n, op="nvvm.tcgen05.alloc %slot, %n : !llvm.ptr<3>, i32"))
    assert (ours.code == 0) == expected, ours.err
    if not expected:
        assert f"nvvm.tcgen05.alloc: ncols must be a power of two in [32, 512], got {n}" in ours.err


@pytest.mark.parametrize("n", COLUMNS)
def test_dealloc_columns_match_ptxas(run_opt: RunOpt, ptxas: str, tmp_path: Path, n: int) -> None:
    expected = ptxas_accepts(ptxas, tmp_path, f"tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r1, {n}")
    ours = run_opt(MLIR.format(n=n, op="nvvm.tcgen05.dealloc %t, %n : !llvm.ptr<6>, i32"))
    assert (ours.code == 0) == expected, ours.err
    if not expected:
        assert f"nvvm.tcgen05.dealloc: ncols must be a multiple of 32, got {n}" in ours.err


def test_the_grid_has_both_verdicts(ptxas: str, tmp_path: Path) -> None:
    verdicts = {
        ptxas_accepts(ptxas, tmp_path, f"tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], {n}")
        for n in COLUMNS
    }
    assert verdicts == {True, False}
