"""`llvm.addrspacecast` end to end: upstream MLIR 22's syntax (mlir-opt-22 is the
oracle), PTX that ptxas assembles (`cvta` / `cvta.to`, PTX ISA "cvta"), and the machine
model, where a cast keeps the address and checks it lies in the target space.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from external import ToolFailed, Upstream
from support import OptResult, ptxas_assemble, run_cli

RunOpt = Callable[..., OptResult]

CASTS = """\
llvm.func @casts(%g: !llvm.ptr, %s: !llvm.ptr<3>, %c: !llvm.ptr<7>, %gl: !llvm.ptr<1>, %v: vector<2x!llvm.ptr<3>>) {
  %0 = llvm.addrspacecast %g : !llvm.ptr to !llvm.ptr<3>
  %1 = llvm.addrspacecast %s : !llvm.ptr<3> to !llvm.ptr
  %2 = llvm.addrspacecast %gl : !llvm.ptr<1> to !llvm.ptr
  %3 = llvm.addrspacecast %c : !llvm.ptr<7> to !llvm.ptr<3>
  %4 = llvm.addrspacecast %s : !llvm.ptr<3> to !llvm.ptr<3>
  %5 = llvm.addrspacecast %v : vector<2x!llvm.ptr<3>> to vector<2x!llvm.ptr>
  llvm.return
}
"""


def test_syntax_round_trips_with_mlir_opt(run_opt: RunOpt, upstream: Upstream) -> None:
    ours = run_opt(CASTS)
    assert ours.code == 0, ours.err
    assert upstream.parse(ours.out) == upstream.parse(CASTS)
    # Upstream's generic form parses and prints back to the custom form.
    generic = upstream.parse(CASTS, "--mlir-print-op-generic")
    again = run_opt(generic)
    assert again.code == 0, again.err
    assert upstream.parse(again.out) == upstream.parse(CASTS)


@pytest.mark.parametrize(
    ("operand", "result"),
    [
        ("i64", "!llvm.ptr<3>"),
        ("!llvm.ptr", "i64"),
        ("!llvm.ptr", "vector<2x!llvm.ptr<3>>"),
        ("!llvm.ptr<5>", "!llvm.ptr"),
    ],
)
def test_verifier_agrees_with_mlir_opt(run_opt: RunOpt, upstream: Upstream, operand: str, result: str) -> None:
    text = f"""llvm.func @f(%p: {operand}) {{
  %0 = llvm.addrspacecast %p : {operand} to {result}
  llvm.return
}}
"""
    try:
        upstream.parse(text)
        upstream_accepts = True
    except ToolFailed:
        upstream_accepts = False
    ours = run_opt(text)
    assert (ours.code == 0) == upstream_accepts, ours.err
    if not upstream_accepts:
        assert "input.mlir:2:" in ours.err
        assert "llvm.addrspacecast" in ours.err


KERNEL = """\
llvm.func @casts(%g: !llvm.ptr, %s: !llvm.ptr<3>, %c: !llvm.ptr<7>, %gl: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %v = llvm.mlir.constant(7 : i32) : i32
  %0 = llvm.addrspacecast %g : !llvm.ptr to !llvm.ptr<3>
  llvm.store %v, %0 : i32, !llvm.ptr<3>
  %1 = llvm.addrspacecast %s : !llvm.ptr<3> to !llvm.ptr
  llvm.store %v, %1 : i32, !llvm.ptr
  %2 = llvm.addrspacecast %g : !llvm.ptr to !llvm.ptr<1>
  llvm.store %v, %2 : i32, !llvm.ptr<1>
  %3 = llvm.addrspacecast %gl : !llvm.ptr<1> to !llvm.ptr
  llvm.store %v, %3 : i32, !llvm.ptr
  %4 = llvm.addrspacecast %s : !llvm.ptr<3> to !llvm.ptr<7>
  llvm.store %v, %4 : i32, !llvm.ptr<7>
  %5 = llvm.addrspacecast %c : !llvm.ptr<7> to !llvm.ptr<3>
  llvm.store %v, %5 : i32, !llvm.ptr<3>
  %6 = llvm.addrspacecast %c : !llvm.ptr<7> to !llvm.ptr
  llvm.store %v, %6 : i32, !llvm.ptr
  %7 = llvm.addrspacecast %g : !llvm.ptr to !llvm.ptr<7>
  llvm.store %v, %7 : i32, !llvm.ptr<7>
  llvm.return
}
"""


def test_ptx_assembles_like_llc(run_opt: RunOpt, upstream: Upstream, ptxas: str, tmp_path: Path) -> None:
    """Every pair of generic, global, shared::cta and shared::cluster: llc-22's PTX and
    ours both assemble; ours converts through the generic space with cvta."""
    ptxas_assemble(ptxas, upstream.to_ptx(KERNEL), tmp_path)
    ours = run_opt(KERNEL, "-t", "ptx")
    assert ours.code == 0, ours.err
    ptxas_assemble(ptxas, ours.out, tmp_path)
    for mnemonic in ("cvta.to.shared.u64", "cvta.shared.u64", "cvta.to.global.u64", "cvta.global.u64",
                     "cvta.to.shared::cluster.u64", "cvta.shared::cluster.u64"):  # fmt: skip
        assert f"{mnemonic} " in ours.out


def test_tensor_memory_cast_is_refused_at_the_op(run_opt: RunOpt) -> None:
    text = """llvm.func @k(%t: !llvm.ptr<6>, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %g = llvm.addrspacecast %t : !llvm.ptr<6> to !llvm.ptr
  llvm.return
}
"""
    ours = run_opt(text, "-t", "ptx")
    assert ours.code == 1
    assert "input.mlir:2:" in ours.err
    assert "llvm.addrspacecast from address space 6 to 0" in ours.err
    assert "internal error" not in ours.err


RUN = """\
llvm.mlir.global internal @buf() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<4 x i32>
llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %s = llvm.mlir.addressof @buf : !llvm.ptr<3>
  %g = llvm.addrspacecast %s : !llvm.ptr<3> to !llvm.ptr
  %v = llvm.mlir.constant(42 : i32) : i32
  llvm.store %v, %g : i32, !llvm.ptr
  %back = llvm.addrspacecast %g : !llvm.ptr to !llvm.ptr<3>
  %x = llvm.load %back : !llvm.ptr<3> -> i32
  %og = llvm.addrspacecast %out : !llvm.ptr<1> to !llvm.ptr
  %o = llvm.addrspacecast %og : !llvm.ptr to !llvm.ptr<1>
  llvm.store %x, %o : i32, !llvm.ptr<1>
  BAD
  llvm.return
}
"""


def test_interpreter_round_trips_shared_and_global(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "k.mlir"
    source.write_text(RUN.replace("  BAD\n", ""))
    result = run_cli(capsys, str(source), "--kernel", "k", "--block", "32", "--arg", "out=zeros:i32:4",
                     "--out", str(tmp_path / "out"))  # fmt: skip
    assert result.code == 0, result.err
    assert np.load(tmp_path / "out" / "out.npy").tolist() == [42, 0, 0, 0]


@pytest.mark.parametrize(
    "bad",
    [
        "%bad = llvm.addrspacecast %og : !llvm.ptr to !llvm.ptr<3>",
        "%bad = llvm.addrspacecast %g : !llvm.ptr to !llvm.ptr<1>",
    ],
)
def test_interpreter_flags_a_cast_outside_the_target_space(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, bad: str
) -> None:
    """`cvta.to.shared` of a global address (or the reverse) is undefined: reported at the cast."""
    source = tmp_path / "k.mlir"
    source.write_text(RUN.replace("BAD", bad))
    result = run_cli(capsys, str(source), "--kernel", "k", "--block", "32", "--arg", "out=zeros:i32:4")
    assert result.code == 3, result.out + result.err
    output = result.out + result.err
    assert "out-of-bounds" in output
    assert "llvm.addrspacecast to address space" in output
    assert "k.mlir:12:" in output
