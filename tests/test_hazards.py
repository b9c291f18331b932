"""The seeded-bug corpus (tests/corpus/): one program per hazard class of
docs/semantics.md §9, each flagged with its class and exit code; and no false alarms."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gemm_reference import fragment_16x256b, kmajor_matrix, parse
from numpy.typing import NDArray
from support import CLEAN, CORPUS, ROOT, header, run_cli
from xdsl.parser import Parser

from xdsl_tmem.interpreter import run_kernel
from xdsl_tmem.interpreter.machine import TMEM_POISON, Cta, SharedLayout
from xdsl_tmem.interpreter.tcgen05 import accumulator_layout, ldst_plan
from xdsl_tmem.passes.lower_tmem import LowerTmemPass
from xdsl_tmem.tools import run
from xdsl_tmem.tools.run import make_context

CLASSES = {
    "tmem-read-before-commit",
    "tmem-write-after-read",
    "release-before-wait-ld",
    "missing-commit",
    "duplicate-commit",
    "missing-epilogue-arrive",
    "parity-aliasing",
    "dealloc-while-in-use",
    "alloc-after-relinquish",
    "missing-dealloc",
    "lane-quarter-violation",
    "divergent-sync-aligned",
    "barrier-before-init",
    "remote-arrive-before-fence",
    "mixed-cta-group",
    "ncols-invalid",
    "exit-with-pending-remote",
    "tmem-read-uninitialized",
    "tmem-stale-accumulator",
    "tmem-access-out-of-stage",
    "mma-from-non-leader-cta",
    "smem-read-uninitialized",
    "smem-data-race",
    "global-data-race",
    "mbarrier-phase-overrun",
}
PROGRAMS = sorted(CORPUS.glob("*.mlir"))
LOWERED = [p for p in PROGRAMS if re.search(r"^// Lowered: ", p.read_text(), re.M)]
"""Seeded bugs at the tmem level that must also be caught, with the class of their
`Lowered:` header, after lower-tmem (where stages no longer exist)."""
SAFE = ROOT / "tests" / "safe"
"""Correct programs that tripped a false alarm (`// Run:` header, outputs checked below)."""


def test_the_corpus_covers_every_class() -> None:
    assert {header(p, "Hazard class") for p in PROGRAMS} == CLASSES


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_seeded_bug_is_caught_with_its_class(capsys: pytest.CaptureFixture[str], program: Path) -> None:
    """Exit 3 with `error: hazard <class>:` for a hazard; a deadlock (exit 2) names the
    class that explains it."""
    klass, expected = header(program, "Hazard class"), int(header(program, "Exit"))
    result = run_cli(capsys, str(program), *shlex.split(header(program, "Run")))
    code, err = result.code, result.err
    assert code == expected, err
    if expected == run.EXIT_HAZARD:
        assert re.search(rf"^\S+: error: hazard {klass}: ", err, re.M), err
    else:
        assert err.startswith("error: deadlock:")
        assert f"note: cause: hazard {klass}: " in err


def test_missing_fences_are_a_hazard_only_under_the_strict_policy(capsys: pytest.CaptureFixture[str]) -> None:
    program = CORPUS / "strict_fences.mlir"
    args = shlex.split(header(program, "Run"))
    assert run_cli(capsys, str(program), *args).code == run.EXIT_HAZARD
    assert run_cli(capsys, str(program), *args, "--fence-policy", "mojo").code == run.EXIT_OK


def test_a_race_report_names_both_accesses(capsys: pytest.CaptureFixture[str]) -> None:
    program = CORPUS / "tmem_write_after_read.mlir"
    result = run_cli(capsys, str(program), *shlex.split(header(program, "Run")))
    code, err = result.code, result.err
    assert code == run.EXIT_HAZARD
    lines = err.splitlines()
    assert re.match(
        r"\S+:\d+:\d+: error: hazard tmem-write-after-read: nvvm.tcgen05.mma by warp 4 lane 0 \(TMEM lanes 0-127, "
        r"columns 0-255\) is not ordered after nvvm.tcgen05.ld by warp \d \(TMEM lanes \d+-\d+, columns \d+-\d+\)",
        lines[0],
    ), err
    assert any(re.match(r"\S+:\d+:\d+: note: the earlier access: nvvm.tcgen05.ld", line) for line in lines), err


@pytest.mark.parametrize("policy", ["strict", "mojo"])
@pytest.mark.parametrize("lowered", [False, True], ids=["as-written", "lowered"])
@pytest.mark.parametrize(("program", "args"), CLEAN, ids=[p.stem for p, _ in CLEAN])
def test_no_false_alarms(
    capsys: pytest.CaptureFixture[str], program: Path, args: str, lowered: bool, policy: str
) -> None:
    """Every shipped example and the reference pipeline are clean, at the tmem level and
    lowered with the matching fence policy, checked under that policy."""
    passes = ["-p", f"lower-tmem{{fence-policy={policy}}}"] if lowered else []
    result = run_cli(capsys, str(program), *passes, *shlex.split(args), "--fence-policy", policy)
    code, err = result.code, result.err
    assert code == run.EXIT_OK, err


@pytest.mark.parametrize("policy", ["strict", "mojo"])
@pytest.mark.parametrize("program", LOWERED, ids=[p.stem for p in LOWERED])
def test_seeded_bug_is_caught_after_lowering(capsys: pytest.CaptureFixture[str], program: Path, policy: str) -> None:
    """The stale-accumulator, uninitialised-TMEM and non-leader checks hold at the NVVM
    level too: lowered with either fence policy, checked under it."""
    klass = header(program, "Lowered")
    passes = ["-p", f"lower-tmem{{fence-policy={policy}}}", "--fence-policy", policy]
    result = run_cli(capsys, str(program), *passes, *shlex.split(header(program, "Run")))
    assert result.code == run.EXIT_HAZARD, result.err
    assert re.search(rf"^\S+:\d+:\d+: error: hazard {klass}: nvvm\.tcgen05\.(ld|mma)", result.err, re.M), result.err


STALE_FREE = [p for p in PROGRAMS if header(p, "Hazard class") != "tmem-stale-accumulator"]


@pytest.mark.parametrize("schedule", [[], ["--schedule", "random", "--seed", "5"]], ids=["rr", "random"])
@pytest.mark.parametrize("policy", ["strict", "mojo"])
@pytest.mark.parametrize("lowered", [False, True], ids=["as-written", "lowered"])
@pytest.mark.parametrize(
    ("program", "args"),
    [*CLEAN, *((p, header(p, "Run")) for p in STALE_FREE)],
    ids=[*(p.stem for p, _ in CLEAN), *(p.stem for p in STALE_FREE)],
)
def test_no_stale_accumulator_false_alarm(
    capsys: pytest.CaptureFixture[str], program: Path, args: str, lowered: bool, policy: str, schedule: list[str]
) -> None:
    """The per-cell stale-accumulator rule (a load of values the warp read before its last
    mbarrier wait; an MMA accumulating onto values a load read) and the per-stage rule
    never fire on the examples, the reference pipeline or any other seeded bug, at either
    level, under either fence policy and scheduler."""
    if lowered and program.parent == CORPUS and header(program, "Level").startswith("nvvm"):
        pytest.skip("already at the NVVM level")
    passes = ["-p", f"lower-tmem{{fence-policy={policy}}}"] if lowered else []
    result = run_cli(capsys, str(program), *passes, *shlex.split(args), "--fence-policy", policy, *schedule)
    assert "tmem-stale-accumulator" not in result.err, result.err
    if program.parent != CORPUS:
        assert result.code == run.EXIT_OK, result.err


def _safe_run(program: Path, policy: str, schedule: str, seed: int) -> dict[str, NDArray[Any]]:
    """Run a tests/safe program with the buffers of its `Run:` header."""
    words = shlex.split(header(program, "Run"))
    kernel = words[words.index("--kernel") + 1]
    block = int(words[words.index("--block") + 1])
    args: dict[str, Any] = {}
    for spec in (words[i + 1] for i, w in enumerate(words) if w == "--arg"):
        name, value = spec.split("=", 1)
        kind, *rest = value.split(":")
        if kind in ("zeros", "rand"):
            dtype = {"f16": np.float16, "f32": np.float32, "u32": np.uint32}[rest[0]]
            shape = tuple(int(n) for n in rest[1].split("x"))
            if kind == "zeros":
                args[name] = np.zeros(shape, dtype)
            elif dtype == np.uint32:
                args[name] = np.random.default_rng(int(rest[2])).integers(0, 1 << 32, shape, dtype=np.uint32)
            else:
                args[name] = np.random.default_rng(int(rest[2])).standard_normal(shape).astype(dtype)
        else:
            args[name] = int(value)
    module = parse(program.read_text())
    result = run_kernel(module, kernel, block=block, args=args, schedule=schedule, seed=seed, fence_policy=policy)
    return {**args, **result.outputs}


SCHEDULES = [("rr", 0), ("random", 1), ("random", 2)]


@pytest.mark.parametrize(("schedule", "seed"), SCHEDULES)
@pytest.mark.parametrize("policy", ["strict", "mojo"])
def test_m64_stages_interleaved_by_lane_are_safe(policy: str, schedule: str, seed: int) -> None:
    """Two M = 64 accumulator stages at TMEM lane 0 and lane 16 of the same columns share
    no cell (layout F, PTX ISA tcgen05 data-path layouts): no race between the MMA into
    one and the loads of the other, and the numbers are numpy's."""
    out = _safe_run(SAFE / "m64_interleaved_stages.mlir", policy, schedule, seed)
    a, b = np.asarray(out["a"]), np.asarray(out["b"])
    d = kmajor_matrix(a, 64, 32, 128, 512).astype(np.float32) @ kmajor_matrix(b, 256, 32, 128, 512).astype(np.float32).T
    expected = np.zeros((128, 256), dtype=np.float32)
    for tid in range(128):
        warp, lane = divmod(tid, 32)
        for tile in range(8):
            for register in range(16):
                row, col = fragment_16x256b(lane, register)
                expected[tid, tile * 32 + register] = d[16 * warp + row, tile * 32 + col]
    got = np.asarray(out["out"]).view(np.float32)
    for t in range(4):
        np.testing.assert_allclose(got[t], expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("policy", ["strict", "mojo"])
def test_16x32bx2_load_reads_two_pieces(policy: str) -> None:
    """A 16x32bx2 load with immHalfSplitoff 64 > its 4 columns reads columns 0-3 and
    64-67 only (never-written columns 4-63 are not read): SAFE, and lanes 16-31 get the
    cells 64 columns further (PTX ISA .16x32bx2)."""
    out = _safe_run(SAFE / "split_16x32bx2.mlir", policy, "rr", 0)
    inp0, inp1 = np.asarray(out["inp0"]), np.asarray(out["inp1"])
    expected = np.concatenate([inp0[:16], inp1[:16]])
    np.testing.assert_array_equal(np.asarray(out["out"]), expected)


def test_access_records_hold_exact_cell_sets() -> None:
    """Layout F (M = 64): rows m at lanes m % 16 + 32 (m // 16), so a lane-0 accumulator
    leaves lanes 16-31 of each quarter untouched; 16x32bx2 with split 64 touches two
    column pieces (PTX ISA)."""
    layout = accumulator_layout(64, 256, 1)
    lanes = {m % 16 + 32 * (m // 16) for m in range(64)}
    assert layout.lane_set == sum(1 << lane for lane in lanes)
    assert layout.column_set == (1 << 256) - 1
    plan = ldst_plan("shape_16x32bx2", 4, 64)
    assert plan.lane_set == (1 << 16) - 1
    assert plan.column_set == 0b1111 | 0b1111 << 64


def test_tmem_starts_poisoned() -> None:
    """TMEM is uninitialised, not zero: the model fills it with a NaN (all ones)."""
    cta = Cta(0, (0, 0, 0), SharedLayout())
    assert (cta.tmem == TMEM_POISON).all()
    assert np.isnan(cta.tmem.view(np.float32)).all()
    assert not cta.tmem_written.any()


@pytest.mark.parametrize("lowered", [False, True], ids=["as-written", "lowered"])
def test_accumulating_onto_never_written_tmem(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, lowered: bool
) -> None:
    """tmem_stale_accumulator_first_mma.mlir with the accumulating first MMA on tile 0: the
    cells were never written since the allocation. At the tmem level the stage rule names
    it first (no overwriting MMA since the acquisition); lowered, the MMA reads
    uninitialised cells."""
    program = CORPUS / "tmem_stale_accumulator_first_mma.mlir"
    text = program.read_text()
    marker = "%c2 = arith.constant 2 : i32\n            %accumulate_first"
    assert marker in text
    variant = tmp_path / "first_tile_accumulates.mlir"
    variant.write_text(text.replace(marker, "%c2 = arith.constant 0 : i32\n            %accumulate_first"))
    passes = ["-p", "lower-tmem"] if lowered else []
    result = run_cli(capsys, str(variant), *passes, *shlex.split(header(program, "Run")))
    assert result.code == run.EXIT_HAZARD, result.err
    klass = "tmem-read-uninitialized" if lowered else "tmem-stale-accumulator"
    assert re.search(rf"error: hazard {klass}: nvvm\.tcgen05\.mma by warp 4 ", result.err), result.err
    if lowered:
        assert "accumulates onto (enable_input_d = 1) TMEM cells that no write has produced" in result.err


# --------------------------------------------------------------------------------------
# Ordinary memory and mbarrier phases (races.py, MBarrier)
# --------------------------------------------------------------------------------------

CG1 = CLEAN[0]
NAMED_BARRIER_1 = re.compile(r"^\s*nvvm\.barrier(\.arrive)? id = %c1 number_of_threads = %c160\n", re.M)


def _lowered_cg1(tmp_path: Path, edit: Callable[[str], str]) -> Path:
    program, _ = CG1
    module = Parser(make_context(), program.read_text(), str(program)).parse_module()
    LowerTmemPass().apply(make_context(), module)
    lowered = tmp_path / "lowered.mlir"
    lowered.write_text(edit(str(module)))
    return lowered


@pytest.mark.parametrize(("schedule", "seed"), [("rr", 0), ("random", 1), ("random", 2)])
def test_the_tmem_address_published_without_the_named_barrier_is_a_race(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, schedule: str, seed: int
) -> None:
    """docs/semantics.md §9.13: without `barrier.arrive 1` (MMA warp) and `barrier.sync 1`
    (epilogue) nothing orders the epilogue's load of the TMEM address after the
    tcgen05.alloc that writes it. Depending on the schedule the load comes before the
    write (an uninitialised read) or after it (a data race); never SAFE."""

    def drop(text: str) -> str:
        dropped, count = NAMED_BARRIER_1.subn("", text)
        assert count == 2, text
        return dropped

    lowered = _lowered_cg1(tmp_path, drop)
    args = [*shlex.split(CG1[1]), "--schedule", schedule, "--seed", str(seed)]
    result = run_cli(capsys, str(lowered), *args)
    assert result.code == run.EXIT_HAZARD, result.err
    match = re.match(
        r"\S+: error: hazard (smem-read-uninitialized|smem-data-race): llvm.load by warp [0-3] ", result.err
    )
    assert match is not None, result.err
    assert "@tmem_slot+0" in result.err.splitlines()[0]
    if match.group(1) == "smem-data-race":
        assert re.search(r"note: the earlier access: nvvm.tcgen05.alloc by warp 4 \(write\)", result.err)


def test_a_data_race_report_names_both_accesses(capsys: pytest.CaptureFixture[str]) -> None:
    program = CORPUS / "smem_data_race.mlir"
    result = run_cli(capsys, str(program), *shlex.split(header(program, "Run")))
    assert result.code == run.EXIT_HAZARD
    lines = result.err.splitlines()
    assert re.match(
        r"\S+:\d+:\d+: error: hazard smem-data-race: llvm.load by warp [0-3] reads shared address 0x[0-9a-f]+ "
        r"\(@tmem_slot\+0\), which nvvm.tcgen05.alloc by warp 4 wrote: no barrier",
        lines[0],
    ), result.err
    assert any(re.match(r"\S+:\d+:\d+: note: the earlier access: nvvm.tcgen05.alloc by warp 4", ln) for ln in lines)


@pytest.mark.parametrize("count", [96, 127])
def test_a_consumer_count_below_the_epilogue_threads_overruns_a_phase(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, count: int
) -> None:
    """The 128 epilogue threads arrive on empty[s] once per tile; with a smaller count
    a phase completes before all of them arrived and the rest land in the next phase,
    unordered with the completion (caught on the first lap, not after 32). At the tmem
    level the verifier rejects the count (the warp contexts fix it); lowered, the count is
    an mbarrier.init operand and the interpreter catches it."""
    program, args = CG1
    source = tmp_path / "count.mlir"
    source.write_text(program.read_text().replace("consumer_arv_count 128", f"consumer_arv_count {count}"))
    rejected = run_cli(capsys, str(source), *shlex.split(args))
    assert rejected.code == run.EXIT_ERROR, rejected.err
    assert f"consumer_arv_count {count}" in rejected.err, rejected.err

    def recount(text: str) -> str:
        inits = re.compile(r"(nvvm\.mbarrier\.init %[12]), %c128 ")
        text, n = inits.subn(rf"\1, %c{count} ", text)
        assert n == 2, text
        return text.replace(
            "%c128 = arith.constant 128 : i32",
            f"%c128 = arith.constant 128 : i32\n    %c{count} = arith.constant {count} : i32",
            1,
        )

    result = run_cli(capsys, str(_lowered_cg1(tmp_path, recount)), *shlex.split(args))
    assert result.code == run.EXIT_HAZARD, result.err
    assert re.match(
        rf"\S+: error: hazard mbarrier-phase-overrun: warp [0-3] lanes 0-31 arrives on mbarrier @accum_bars\[[23]\] "
        rf"\(expected count {count}\): ",
        result.err,
    ), result.err


def test_an_mma_operand_never_written_is_uninitialised(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """examples/matmul_cg1.mlir without the loop that copies A into shared memory: the
    MMAs read an operand tile no store wrote (shared memory starts undefined)."""
    program, args = CG1
    text = program.read_text()
    start = text.index("    scf.for %i = %tid to %c512 step %c160 : i32 {")
    end = text.index("    }\n", start) + len("    }\n")
    source = tmp_path / "no_a.mlir"
    source.write_text(text[:start] + text[end:])
    result = run_cli(capsys, str(source), *shlex.split(args))
    assert result.code == run.EXIT_HAZARD, result.err
    assert re.match(
        r"\S+: error: hazard smem-read-uninitialized: nvvm.tcgen05.mma by warp 4 reads its 128x16 operand tile "
        r"from shared memory, but shared address 0x[0-9a-f]+ \(@smem_a\+\d+\) in it was never written",
        result.err,
    ), result.err
