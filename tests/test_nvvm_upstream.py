"""The nvvm dialect against the real oracles: mlir-opt-22, mlir-translate-22,
llc-22 and ptxas.

For every NVVM-level program (every positive `lit_tests/nvvm` file, among them
the two hand-written reference programs, committed as `lit_tests/nvvm/ref_*.mlir`):

* differential text: each nvvm op we print, custom and generic form, is exactly
  the line mlir-opt-22 prints for the same input, modulo SSA value names;
* mlir-opt-22 parses what we print (custom and generic) and prints it back
  exactly as it prints the original;
* our printed text, lowered by mlir-opt-22 (`UPSTREAM_LOWERING`), translated and
  compiled with llc-22 for sm_100a, gives the same PTX as the original, and
  ptxas -arch=sm_100a assembles it.

Negative tests: every chunk of `lit_tests/nvvm/invalid_*.mlir` annotated
`// mlir-opt-22: "msg"` is rejected by mlir-opt-22 with that message, and every
chunk annotated `// toolchain: "msg"` passes mlir-opt-22 but fails on the way to
ptxas with that message. Verdict grids compare our accept/reject decision with
mlir-opt-22's over whole families of forms.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from external import ToolFailed, Upstream
from support import LIT_TESTS, OptResult, ptxas_assemble

RunOpt = Callable[..., OptResult]

NVVM_LIT = LIT_TESTS / "nvvm"
# The hand-written reference programs, committed unedited below a marker.
REFERENCE_COPIES = {
    NVVM_LIT / "ref_nvvm_ops_examples.mlir": "nvvm_ops_examples.mlir",
    NVVM_LIT / "ref_pipeline.mlir": "ref_pipeline.mlir",
}
COPY_HASH = re.compile(r"^// sha256 of the verbatim copy: ([0-9a-f]{64})$", re.M)
COPY_MARKER = re.compile(r"^// ---- verbatim copy of the reference program ([\w.]+) below ----\n", re.M)
PROGRAMS = sorted(p for p in NVVM_LIT.glob("*.mlir") if not p.name.startswith("invalid_"))
INVALID_FILES = sorted(NVVM_LIT.glob("invalid_*.mlir"))

_NVVM_OP = re.compile(r'^\s*(?:%[\w.$-]+(?:\s*,\s*%[\w.$-]+)*\s*=\s*)?"?nvvm\.')
_SSA_NAME = re.compile(r"%[\w.$-]+")


def nvvm_ops(text: str) -> list[str]:
    """The nvvm op lines of printed IR, with SSA value names normalised."""
    return [_SSA_NAME.sub("%_", line.strip()) for line in text.splitlines() if _NVVM_OP.match(line)]


def ours(run_opt: RunOpt, program: Path, *args: str) -> str:
    result = run_opt(None, *args, path=program)
    assert result.code == 0, result.err
    return result.out


def program_id(path: Path) -> str:
    return path.name


def test_programs_are_found() -> None:
    families = {"tcgen05_alloc", "tcgen05_ldst", "tcgen05_mma", "tcgen05_commit", "mbarrier", "sync"}
    assert families | {p.stem for p in REFERENCE_COPIES} <= {p.stem for p in PROGRAMS}
    assert {"invalid_tcgen05", "invalid_mbarrier", "invalid_sync", "invalid_parse"} <= {p.stem for p in INVALID_FILES}


@pytest.mark.parametrize("copy", list(REFERENCE_COPIES), ids=program_id)
def test_reference_copy_is_verbatim(copy: Path) -> None:
    """The copy is unedited: it names the program it copies, and its body's hash is the
    one recorded when it was committed."""
    text = copy.read_text()
    marker = COPY_MARKER.search(text)
    recorded = COPY_HASH.search(text)
    assert marker is not None, "the copy has no verbatim marker"
    assert recorded is not None, "the copy has no recorded hash"
    assert marker.group(1) == REFERENCE_COPIES[copy]
    body = text[marker.end() :]
    assert hashlib.sha256(body.encode()).hexdigest() == recorded.group(1)


def test_benchmark_copy_of_the_reference_ptx_is_the_corpus_one() -> None:
    """benchmarks/ref_pipeline.ptx is tests/ptx_corpus/ref_pipeline.ptx under a two-line header."""
    root = LIT_TESTS.parent
    benchmark = (root / "benchmarks" / "ref_pipeline.ptx").read_text().split("\n", 2)
    assert all(line.startswith("// ") for line in benchmark[:2])
    # ptxas refuses a non-ASCII character anywhere in its input, comments included.
    assert all(line.isascii() for line in benchmark[:2])
    assert benchmark[2] == (root / "tests" / "ptx_corpus" / "ref_pipeline.ptx").read_text()


@pytest.mark.parametrize("program", PROGRAMS, ids=program_id)
def test_custom_form_is_upstreams(run_opt: RunOpt, upstream: Upstream, program: Path) -> None:
    expected = nvvm_ops(upstream.parse(program.read_text()))
    assert expected, "the program has no nvvm ops"
    assert nvvm_ops(ours(run_opt, program)) == expected


@pytest.mark.parametrize("program", PROGRAMS, ids=program_id)
def test_generic_form_is_upstreams(run_opt: RunOpt, upstream: Upstream, program: Path) -> None:
    expected = nvvm_ops(upstream.parse(program.read_text(), "--mlir-print-op-generic"))
    assert expected, "the program has no nvvm ops"
    assert nvvm_ops(ours(run_opt, program, "--print-op-generic")) == expected


@pytest.mark.parametrize("program", PROGRAMS, ids=program_id)
def test_upstream_reads_what_we_print(run_opt: RunOpt, upstream: Upstream, program: Path) -> None:
    reference = upstream.parse(program.read_text())
    assert upstream.parse(ours(run_opt, program)) == reference
    assert upstream.parse(ours(run_opt, program, "--print-op-generic")) == reference


@pytest.mark.parametrize("program", PROGRAMS, ids=program_id)
def test_we_read_our_generic_form(run_opt: RunOpt, program: Path) -> None:
    generic = ours(run_opt, program, "--print-op-generic")
    again = run_opt(generic)
    assert again.code == 0, again.err
    assert again.out == ours(run_opt, program)


@pytest.mark.parametrize("program", PROGRAMS, ids=program_id)
def test_ptx_is_upstreams_and_assembles(
    run_opt: RunOpt, upstream: Upstream, ptxas: str, tmp_path: Path, program: Path
) -> None:
    expected = upstream.to_ptx(program.read_text())
    ptx = upstream.to_ptx(ours(run_opt, program))
    assert ptx == expected
    assert "tcgen05." in ptx or "mbarrier." in ptx or "bar.sync" in ptx
    ptxas_assemble(ptxas, ptx, tmp_path)


# --------------------------------------------------------------------------------------
# Negative tests against the oracles
# --------------------------------------------------------------------------------------

_ANNOTATION = re.compile(r'^// (mlir-opt-22|toolchain): "(.*)"$', re.MULTILINE)


def annotated_chunks() -> list[tuple[str, str, str, str]]:
    """(id, chunk, oracle, message) for every annotated chunk of the invalid files."""
    cases: list[tuple[str, str, str, str]] = []
    for path in INVALID_FILES:
        for index, chunk in enumerate(path.read_text().split("// -----")):
            for oracle, message in _ANNOTATION.findall(chunk):
                cases.append((f"{path.stem}-{index}", chunk, oracle, message))
    return cases


ANNOTATED = annotated_chunks()


def test_invalid_files_are_annotated() -> None:
    assert len(ANNOTATED) >= 50
    assert {oracle for _, _, oracle, _ in ANNOTATED} == {"mlir-opt-22", "toolchain"}


@pytest.mark.parametrize(
    ("chunk", "oracle", "message"),
    [case[1:] for case in ANNOTATED],
    ids=[case[0] for case in ANNOTATED],
)
def test_oracle_rejects_invalid_chunk(
    run_opt: RunOpt,
    upstream: Upstream,
    ptxas: str,
    tmp_path: Path,
    chunk: str,
    oracle: str,
    message: str,
) -> None:
    assert run_opt(chunk).code == 1, "our driver accepts the chunk"
    if oracle == "mlir-opt-22":
        with pytest.raises(ToolFailed) as failure:
            upstream.parse(chunk)
        assert message in str(failure.value)
        return
    upstream.parse(chunk)  # the toolchain case: mlir-opt-22 itself accepts it
    with pytest.raises(ToolFailed) as failure:
        ptxas_assemble(ptxas, upstream.to_ptx(chunk), tmp_path)
    assert message in str(failure.value)


# --------------------------------------------------------------------------------------
# Verdict grids: we accept exactly what mlir-opt-22 accepts
# --------------------------------------------------------------------------------------

_CASE_ARGS = (
    "%t: !llvm.ptr<6>, %at: !llvm.ptr<6>, %p3: !llvm.ptr<3>, %p0: !llvm.ptr, %p7: !llvm.ptr<7>, "
    "%d: i64, %i: i32, %b: i1, %h: i16, %v4: vector<4xi32>, %v8: vector<8xi32>"
)


def case_chunks(bodies: Sequence[str]) -> list[str]:
    return [f"llvm.func @case{n}({_CASE_ARGS}) {{\n  {body}\n  llvm.return\n}}\n" for n, body in enumerate(bodies)]


def upstream_verdicts(upstream: Upstream, chunks: Sequence[str]) -> list[bool]:
    proc = subprocess.run(
        [upstream.mlir_opt, "--split-input-file"],
        input="// -----\n".join(chunks),
        capture_output=True,
        text=True,
        timeout=300,
    )
    return [f"@case{n}(" in proc.stdout for n in range(len(chunks))]


def our_verdicts(run_opt: RunOpt, chunks: Sequence[str]) -> list[bool]:
    result = run_opt("// -----\n".join(chunks), "--split-input-file", "--verify-diagnostics")
    assert result.code == 0, result.err
    pieces = result.out.split("// -----\n")
    assert len(pieces) == len(chunks)
    return ["error:" not in piece for piece in pieces]


def assert_same_verdicts(run_opt: RunOpt, upstream: Upstream, bodies: Sequence[str]) -> None:
    chunks = case_chunks(bodies)
    theirs = upstream_verdicts(upstream, chunks)
    mine = our_verdicts(run_opt, chunks)
    differ = [body for body, a, b in zip(bodies, theirs, mine, strict=True) if a != b]
    assert not differ, f"verdicts differ from mlir-opt-22 on: {differ}"
    assert any(theirs), "a grid must contain valid forms"
    assert not all(theirs), "a grid must contain invalid forms"


LDST_SHAPES = ("shape_16x64b", "shape_16x128b", "shape_16x256b", "shape_32x32b")
LENGTHS = (1, 2, 3, 4, 6, 8, 12, 16, 32, 64, 128, 256)


def data_type(length: int) -> str:
    return "i32" if length == 1 else f"vector<{length}xi32>"


def test_ld_register_counts_match_upstream(run_opt: RunOpt, upstream: Upstream) -> None:
    # registers = m(shape) x num, num a power of two, at most 128 (docs/ptx-nvvm.md §1.4)
    bodies = [
        f"%r = nvvm.tcgen05.ld %t {{shape = #nvvm.tcgen05_ldst_shape<{shape}>}} : {data_type(n)}"
        for shape in LDST_SHAPES
        for n in LENGTHS
    ]
    bodies += [
        "%o = llvm.mlir.constant(1 : i64) : i64\n  %r = nvvm.tcgen05.ld %t, %o "
        f"{{shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>}} : {data_type(n)}"
        for n in LENGTHS
    ]
    assert_same_verdicts(run_opt, upstream, bodies)


def test_st_register_counts_match_upstream(run_opt: RunOpt, upstream: Upstream) -> None:
    bodies = [
        f'%v = "test.op"() : () -> {data_type(n)}\n  nvvm.tcgen05.st %t, %v '
        f"{{shape = #nvvm.tcgen05_ldst_shape<{shape}>}} : {data_type(n)}"
        for shape in LDST_SHAPES
        for n in LENGTHS
    ]
    # mlir-opt-22 needs `--allow-unregistered-dialect` for test.op; use a load instead.
    bodies = [b.replace('"test.op"() : () -> ', "llvm.load %p0 : !llvm.ptr -> ") for b in bodies]
    assert_same_verdicts(run_opt, upstream, bodies)


CP_SHAPES = ("shape_128x256b", "shape_4x256b", "shape_128x128b", "shape_64x128b", "shape_32x128b")
CP_MULTICASTS = ("none", "warpx2_02_13", "warpx2_01_23", "warpx4")


def test_cp_shape_multicast_grid_matches_upstream(run_opt: RunOpt, upstream: Upstream) -> None:
    bodies = [
        f"nvvm.tcgen05.cp %t, %d {{shape = #nvvm.tcgen05_cp_shape<{shape}>, "
        f"multicast = #nvvm.tcgen05_cp_multicast<{multicast}>}}"
        for shape in CP_SHAPES
        for multicast in CP_MULTICASTS
    ]
    assert_same_verdicts(run_opt, upstream, bodies)


def test_mma_operand_grid_matches_upstream(run_opt: RunOpt, upstream: Upstream) -> None:
    bodies: list[str] = []
    for group in ("cta_1", "cta_2"):
        for a, a_type in (("%d", "i64"), ("%at", "!llvm.ptr<6>")):
            for mask, mask_type in (("", ""), ("%v4", "vector<4xi32>"), ("%v8", "vector<8xi32>")):
                for extra in (
                    "",
                    ", aShift",
                    ", aShift, collectorOp = #nvvm.tcgen05_mma_collectorop<fill>",
                    ", aShift, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>",
                ):
                    mask_part = f" mask = {mask}" if mask else ""
                    types = f"!llvm.ptr<6>, {a_type}, i64, i32, i1" + (f", {mask_type}" if mask else "")
                    bodies.append(
                        f"nvvm.tcgen05.mma %t, {a}, %d, %i, %b{mask_part} {{kind = "
                        f"#nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<{group}>{extra}}}"
                        f" : ({types})"
                    )
    assert_same_verdicts(run_opt, upstream, bodies)


def test_fence_proxy_grid_matches_upstream(run_opt: RunOpt, upstream: Upstream) -> None:
    kinds = ("alias", "async", "async.global", "async.shared", "tensormap", "generic")
    spaces = ("", ", space = #nvvm.shared_space<cta>", ", space = #nvvm.shared_space<cluster>")
    bodies = [f"nvvm.fence.proxy {{kind = #nvvm.proxy_kind<{kind}>{space}}}" for kind in kinds for space in spaces]
    assert_same_verdicts(run_opt, upstream, bodies)


def test_mbarrier_arrive_grid_matches_upstream(run_opt: RunOpt, upstream: Upstream) -> None:
    bodies: list[str] = []
    for pointer, pointer_type in (
        ("%p0", "!llvm.ptr"),
        ("%p3", "!llvm.ptr<3>"),
        ("%p7", "!llvm.ptr<7>"),
        ("%t", "!llvm.ptr<6>"),
    ):
        for scope in ("cta", "cluster", "gpu", "sys"):
            for result in ("", " -> i64"):
                bind = "%s = " if result else ""
                bodies.append(
                    f"{bind}nvvm.mbarrier.arrive {pointer} {{scope = #nvvm.mem_scope<{scope}>}}"
                    f" : {pointer_type}{result}"
                )
                bodies.append(
                    f"{bind}nvvm.mbarrier.arrive.expect_tx {pointer}, %i "
                    f"{{scope = #nvvm.mem_scope<{scope}>}} : {pointer_type}, i32{result}"
                )
    assert_same_verdicts(run_opt, upstream, bodies)


def test_pointer_operand_grid_matches_upstream(run_opt: RunOpt, upstream: Upstream) -> None:
    pointers = (("%p0", "!llvm.ptr"), ("%p3", "!llvm.ptr<3>"), ("%p7", "!llvm.ptr<7>"), ("%t", "!llvm.ptr<6>"))
    bodies: list[str] = []
    for p, ty in pointers:
        bodies += [
            f"nvvm.tcgen05.alloc {p}, %i : {ty}, i32",
            f"nvvm.tcgen05.dealloc {p}, %i : {ty}, i32",
            f"nvvm.tcgen05.commit {p} : {ty}",
            f"nvvm.tcgen05.shift {p} : {ty}",
            f"nvvm.mbarrier.init {p}, %i : {ty}, i32",
            f"nvvm.mbarrier.inval {p} : {ty}",
            f"nvvm.mbarrier.expect_tx {p}, %i : {ty}, i32",
            f"nvvm.mbarrier.complete_tx {p}, %i : {ty}, i32",
            f"nvvm.mbarrier.try_wait.parity {p}, %i, %i : {ty}, i32, i32",
            f"%w = nvvm.mbarrier.try_wait {p}, %d : {ty}, i64 -> i1",
            f"%w = nvvm.mbarrier.test.wait {p}, %i : {ty}, i32 -> i1",
        ]
        for _, result_type in pointers:
            bodies.append(f"%m = nvvm.mapa {p}, %i : {ty} -> {result_type}")
    assert_same_verdicts(run_opt, upstream, bodies)
