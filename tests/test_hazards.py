"""The seeded-bug corpus (tests/corpus/): one program per hazard class of
semantics.md §9, each flagged with its class and exit code; and no false alarms."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from support import CLEAN, CORPUS, header, run_cli
from xdsl.parser import Parser

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
    "smem-read-uninitialized",
    "smem-data-race",
    "global-data-race",
    "mbarrier-phase-overrun",
}
PROGRAMS = sorted(CORPUS.glob("*.mlir"))


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
    """semantics.md §9.13: without `barrier.arrive 1` (MMA warp) and `barrier.sync 1`
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


@pytest.mark.parametrize("lowered", [False, True], ids=["as-written", "lowered"])
@pytest.mark.parametrize("count", [96, 127])
def test_a_consumer_count_below_the_epilogue_threads_overruns_a_phase(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, count: int, lowered: bool
) -> None:
    """The 128 epilogue threads arrive on empty[s] once per tile; with a smaller count
    a phase completes before all of them arrived and the rest land in the next phase,
    unordered with the completion (caught on the first lap, not after 32)."""
    program, args = CG1
    source = tmp_path / "count.mlir"
    source.write_text(program.read_text().replace("consumer_arv_count 128", f"consumer_arv_count {count}"))
    passes = ["-p", "lower-tmem"] if lowered else []
    result = run_cli(capsys, str(source), *passes, *shlex.split(args))
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
