"""What ptxas makes of the backend's loops and branches (docs/ptx_backend.md, "Loops and
branches"). The expectations are ptxas's SASS (nvdisasm), each next to a control PTX
that differs only in the property under test, so that each test shows that property is
what ptxas reacts to (and fails if ptxas stops doing so)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from support import LIT_TESTS, missing

from xdsl_tmem.backend.ptxas import assemble, find_cuda_tool
from xdsl_tmem.backend.target import emit_ptx
from xdsl_tmem.tools.run import make_context

REF_PIPELINE = LIT_TESTS / "nvvm" / "ref_pipeline.mlir"

_STRIDED_LOOP = """
llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %c32 = arith.constant 32 : i32
  %c1024 = arith.constant 1024 : i32
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  scf.for %i = %tid to %c1024 step %c32 : i32 {
    %p = llvm.getelementptr %out[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
    llvm.store %i, %p : i32, !llvm.ptr<1>
  }
  llvm.return
}
"""
"""A lane-strided loop (its bounds differ per lane: a plain `bra` back edge), the shape
of the reference pipeline's copy loops."""


@pytest.fixture(scope="module")
def nvdisasm(ptxas: str) -> str:
    tool = find_cuda_tool("nvdisasm")
    if tool is None:
        missing("nvdisasm", "pip install nvidia-cuda-nvdisasm")
    assert tool is not None
    return tool


def _sass(ptx: str, ptxas: str, nvdisasm: str, tmp_path: Path) -> list[str]:
    """The SASS instructions of `ptx` for sm_100a (nvdisasm's code sections)."""
    cubin = tmp_path / "k.cubin"
    assemble(ptx, "sm_100a", ptxas=ptxas, cubin=cubin)
    listing = subprocess.run([nvdisasm, "-c", str(cubin)], capture_output=True, text=True, check=True).stdout
    return [line.split("*/", 1)[1].strip() for line in listing.splitlines() if re.search(r"/\*[0-9a-f]{4}\*/", line)]


def _ptx(text: str) -> str:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.parser import Parser

    module = Parser(make_context(), text).parse_module()
    assert isinstance(module, ModuleOp)
    return emit_ptx(module, "sm_100a")


def test_loop_header_says_nounroll_and_ptxas_keeps_it_rolled(ptxas: str, nvdisasm: str, tmp_path: Path) -> None:
    """`.pragma "nounroll";` right after the loop header's label, where llc-22 writes it
    for `llvm.loop.unroll.disable`: ptxas emits the body once (one STG); the same PTX
    without the pragma is unrolled (ptxas 13.0: four copies and a remainder)."""
    ours = _ptx(_STRIDED_LOOP)
    header = re.search(r'^(\$L\d+):\n\t\.pragma "nounroll";$', ours, re.M)
    assert header is not None, ours
    assert re.search(rf"@%p\d+ bra {re.escape(header.group(1))};", ours), ours  # the back edge's target
    stores = [i for i in _sass(ours, ptxas, nvdisasm, tmp_path) if i.startswith("STG")]
    assert len(stores) == 1, stores
    control = ours.replace('\t.pragma "nounroll";\n', "")
    assert len([i for i in _sass(control, ptxas, nvdisasm, tmp_path) if i.startswith("STG")]) > 1


def test_elected_mma_behind_a_plain_forward_branch_issues_once(ptxas: str, nvdisasm: str, tmp_path: Path) -> None:
    """The reference pipeline's MMA warp (entered by a forward branch on the warp index)
    issues its two elected `tcgen05.mma` and the commit as single unguarded UTCHMMA /
    UTCBAR: ptxas knows the warp is converged there. The same PTX with `bra.uni` on that
    branch makes ptxas issue each in a loop over the active lanes (`BRA.U.ANY`)."""
    ours = _ptx(REF_PIPELINE.read_text())
    role = re.search(r"setp\.eq\.b32 (%p\d+), %r\d+, 4;", ours)
    assert role is not None, ours
    branch = f"@!{role.group(1)} bra $L"
    assert ours.count(branch) == 1, ours
    sass = _sass(ours, ptxas, nvdisasm, tmp_path)
    issued = [i for i in sass if re.search(r"\bUTC(HMMA|BAR)\b", i)]
    assert [i.split()[0] for i in issued] == ["UTCHMMA", "UTCHMMA", "UTCBAR"], issued
    assert not any("BRA.U.ANY" in i for i in sass)
    control = _sass(ours.replace(branch, f"@!{role.group(1)} bra.uni $L"), ptxas, nvdisasm, tmp_path)
    assert any("BRA.U.ANY" in i for i in control)
