"""Schedule exploration (`--explore random:N | exhaustive`): every correct program is SAFE,
every seeded bug UNSAFE with its class, failures that only some schedules reach are
found, and the partial-order reduction reaches the same verdicts as the full search."""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support import CLEAN, CORPUS, EXAMPLES, SCHEDULES, header, run_cli
from xdsl.parser import Parser

from xdsl_tmem.interpreter import Launch, Limits
from xdsl_tmem.interpreter.explore import Exploration, explore_exhaustive
from xdsl_tmem.tools import run

PROGRAMS = sorted(CORPUS.glob("*.mlir"))
LEVELS = [[], ["-p", "lower-tmem"]]
"""As written, and lowered to NVVM."""
WAR_RACE_SHORTEST = {
    "tmem_write_after_read": "tmem-read-before-commit",
    # The shortest schedule loads tile 1 before its MMAs are issued: never-written cells.
    "tmem_read_before_commit": "tmem-read-uninitialized",
    "smem_data_race": "smem-read-uninitialized",
}
"""An MMA warp that skips the empty wait races both ways; the shortest failing schedule
shows the read side first: it overwrites stage s for tile t + 2 before the epilogue has
read tile t, so the epilogue's loads are not ordered after the MMA writing them. An
epilogue reading the TMEM address unordered with the alloc reads it, in the shortest
failing schedule, before the alloc has written it."""

DEADLOCK_ARGS = ["--kernel", "k", "--block", "64"]
STORE_ARGS = ["--kernel", "k", "--block", "64", "--arg", "out=zeros:i32:1"]


@pytest.mark.parametrize("level", LEVELS, ids=["as-written", "lowered"])
@pytest.mark.parametrize(("program", "args"), CLEAN, ids=[p.stem for p, _ in CLEAN])
def test_correct_programs_are_safe_over_100_random_schedules(
    capsys: pytest.CaptureFixture[str], program: Path, args: str, level: list[str]
) -> None:
    result = run_cli(capsys, str(program), *level, *shlex.split(args), "--explore", "random:100")
    assert result.code == run.EXIT_OK, result.err
    assert result.out.startswith("explore random: SAFE: 100 schedules (seeds 0-99)"), result.out


@pytest.mark.parametrize("level", LEVELS, ids=["as-written", "lowered"])
@pytest.mark.parametrize(("program", "args"), CLEAN, ids=[p.stem for p, _ in CLEAN])
def test_correct_programs_are_safe_under_exhaustive_exploration(
    capsys: pytest.CaptureFixture[str], program: Path, args: str, level: list[str]
) -> None:
    result = run_cli(capsys, str(program), *level, *shlex.split(args), "--explore", "exhaustive")
    assert result.code == run.EXIT_OK, result.err
    match = re.match(r"explore exhaustive: SAFE: (\d+) states, (\d+) transitions", result.out)
    assert match is not None, result.out
    assert int(match.group(2)) >= int(match.group(1)) - 1 > 0  # a connected search


def test_the_cg1_pipeline_with_2_stages_and_4_tiles_is_safe(capsys: pytest.CaptureFixture[str]) -> None:
    """The configuration the issue names (docs/verification.md)."""
    program, args = CLEAN[0]
    assert program == EXAMPLES / "matmul_cg1.mlir"
    assert "!tmem.output_ring<2," in program.read_text()
    assert "ntiles=4" in args
    result = run_cli(capsys, str(program), *shlex.split(args), "--explore", "exhaustive")
    assert result.code == run.EXIT_OK
    assert ": SAFE: " in result.out


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_every_seeded_bug_is_unsafe_under_exhaustive_exploration(
    capsys: pytest.CaptureFixture[str], program: Path
) -> None:
    klass = WAR_RACE_SHORTEST.get(program.stem, header(program, "Hazard class"))
    expected = int(header(program, "Exit"))
    result = run_cli(capsys, str(program), *shlex.split(header(program, "Run")), "--explore", "exhaustive")
    assert result.code == expected, result.err
    assert result.out.startswith("explore exhaustive: UNSAFE: "), result.out
    if expected == run.EXIT_HAZARD:
        assert re.search(rf"error: hazard {klass}: ", result.err), result.err
    else:
        assert f"note: cause: hazard {klass}: " in result.err
    steps = re.findall(r"note: step (\d+): (warp \d+|CTA \d+ warp \d+|tensor core of CTA \d+) runs ", result.err)
    assert [int(n) for n, _ in steps] == list(range(1, len(steps) + 1)), result.err
    assert "counterexample" in result.err


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_a_failing_random_seed_replays(capsys: pytest.CaptureFixture[str], program: Path) -> None:
    """`--explore random:N` names the first failing seed; `--schedule random --seed S`
    then fails the same way."""
    args = shlex.split(header(program, "Run"))
    explored = run_cli(capsys, str(program), *args, "--explore", "random:20", "--seed", "7")
    assert explored.code == int(header(program, "Exit")), explored.err
    match = re.search(
        r"note: found by random schedule seed (\d+); replay it with --schedule random --seed \1", explored.err
    )
    assert match is not None, explored.err
    seed = int(match.group(1))
    assert 7 <= seed < 27
    replayed = run_cli(capsys, str(program), *args, "--schedule", "random", "--seed", str(seed))
    assert replayed.code == explored.code
    assert replayed.err.splitlines()[0] == explored.err.splitlines()[0]


def test_a_deadlock_only_some_schedules_reach(capsys: pytest.CaptureFixture[str]) -> None:
    """tests/schedules/alloc_order_deadlock.mlir: tcgen05.alloc blocks until the columns
    are free (docs/ptx-nvvm.md §1.3), so the program deadlocks exactly when warp 1 allocates
    first. Round robin lets warp 0 go first; exhaustive exploration finds the other order."""
    program = str(SCHEDULES / "alloc_order_deadlock.mlir")
    assert run_cli(capsys, program, *DEADLOCK_ARGS).code == run.EXIT_OK
    result = run_cli(capsys, program, *DEADLOCK_ARGS, "--explore", "exhaustive")
    assert result.code == run.EXIT_DEADLOCK, result.err
    allocations = re.findall(r"note: step \d+: (warp \d) runs 'tmem.alloc'", result.err)
    assert allocations[:1] == ["warp 1"], result.err
    assert "note: a shortest counterexample" in result.err


def test_random_exploration_finds_the_schedule_dependent_deadlock(capsys: pytest.CaptureFixture[str]) -> None:
    program = str(SCHEDULES / "alloc_order_deadlock.mlir")
    result = run_cli(capsys, program, *DEADLOCK_ARGS, "--explore", "random:50")
    assert result.code == run.EXIT_DEADLOCK, result.err


def test_a_result_that_depends_on_the_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    """tests/schedules/schedule_dependent_store.mlir: which warp's store remains depends on
    the schedule. Issue 11 changed how it is found: races on global memory are now a
    happens-before check, so one run reports the unordered stores (before, only the
    exhaustive exploration's comparison of complete schedules, schedule-dependent-result,
    revealed it), and so does the exploration, with a counterexample."""
    program = str(SCHEDULES / "schedule_dependent_store.mlir")
    single = run_cli(capsys, program, *STORE_ARGS)
    assert single.code == run.EXIT_HAZARD
    assert re.match(r"\S+: error: hazard global-data-race: llvm.store by warp [01] writes address 0x", single.err)
    result = run_cli(capsys, program, *STORE_ARGS, "--explore", "exhaustive")
    assert result.code == run.EXIT_HAZARD
    assert result.out.startswith("explore exhaustive: UNSAFE: ")
    assert "error: hazard global-data-race: " in result.err


def test_a_race_free_result_that_depends_on_the_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    """tests/schedules/schedule_dependent_probe.mlir: a warp stores what a non-blocking
    mbarrier probe saw. No byte is touched by two warps, so a single run is clean; only
    comparing complete schedules finds that out[0] is 1 or 0 depending on whether the
    arrival came before the probe (PTX: test_wait tests the phase's state at that time)."""
    program = str(SCHEDULES / "schedule_dependent_probe.mlir")
    assert run_cli(capsys, program, *STORE_ARGS).code == run.EXIT_OK
    result = run_cli(capsys, program, *STORE_ARGS, "--explore", "exhaustive")
    assert result.code == run.EXIT_HAZARD
    assert result.out.startswith("explore exhaustive: UNSAFE: ")
    assert re.search(r"error: hazard schedule-dependent-result: .*'out'.*index 0", result.err), result.err


def _explore(path: Path, partial_order: bool) -> Exploration:
    text = path.read_text()
    module = Parser(run.make_context(), text).parse_module()
    words = iter(shlex.split(header(path, "Run")))
    dims: dict[str, tuple[int, ...]] = {}
    args: dict[str, Any] = {}
    kernel = ""
    for word in words:
        match word:
            case "--kernel":
                kernel = next(words)
            case "--block" | "--cluster":
                dims[word[2:]] = run.parse_dims(next(words), word)
            case "--arg":
                name, value = run.parse_arg(next(words))
                args[name] = value
            case _:
                raise AssertionError(f"unexpected {word} in {path.name}")
    launch = Launch.create(kernel, block=dims["block"], cluster=dims.get("cluster", 1), args=args)
    return explore_exhaustive(module, replace(launch, limits=Limits(max_states=20_000)), partial_order=partial_order)


REDUCIBLE = [p for p in PROGRAMS if p.stem not in {"dealloc_while_in_use", "missing_epilogue_arrive",
             "release_before_wait_ld", "remote_arrive_before_fence", "mma_from_non_leader_cta",
             "tmem_access_out_of_stage", "tmem_read_uninitialized", "tmem_stale_accumulator",
             "tmem_stale_accumulator_first_mma", "global_data_race",
             "mbarrier_phase_overrun"}]  # fmt: skip
"""Corpus programs small enough to explore without the reduction (the others fail only
after dozens of steps, where the unreduced interleavings number in the millions)."""


@pytest.mark.parametrize("program", REDUCIBLE, ids=[p.stem for p in REDUCIBLE])
def test_the_reduction_keeps_the_verdict_and_the_shortest_schedule(program: Path) -> None:
    """Without the partial-order reduction the breadth-first search is a plain shortest-
    path search over every interleaving: its verdict and schedule length are the
    reference for the reduced search (plus its search for a shorter schedule)."""
    reduced, full = _explore(program, True), _explore(program, False)
    assert full.complete
    assert reduced.failure is not None
    assert full.failure is not None
    assert type(reduced.failure) is type(full.failure)
    assert getattr(reduced.failure, "kind", None) == getattr(full.failure, "kind", None)
    assert reduced.shortest
    assert len(reduced.schedule) == len(full.schedule)


def test_a_state_limit_makes_the_search_incomplete(capsys: pytest.CaptureFixture[str]) -> None:
    program, args = CLEAN[0]
    result = run_cli(capsys, str(program), *shlex.split(args), "--explore", "exhaustive", "--max-states", "10")
    assert result.code == run.EXIT_LIMIT
    assert result.out.startswith("explore exhaustive: INCOMPLETE: 10 states")
    assert "error: exploration limit: explored 10 states (--max-states 10) before finishing" in result.err


def test_a_memory_limit_makes_the_search_incomplete(capsys: pytest.CaptureFixture[str]) -> None:
    """One MiB holds no copy of a cluster with 512 KiB of output and 256 KiB of TMEM."""
    program, args = CLEAN[0]
    result = run_cli(capsys, str(program), *shlex.split(args), "--explore", "exhaustive", "--max-memory", "1")
    assert result.code == run.EXIT_LIMIT
    assert "the states to explore outgrew 1 MiB (--max-memory 1)" in result.err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--explore", "random"], "--explore expects random:N (N > 0) or exhaustive, got 'random'"),
        (["--explore", "random:0"], "--explore expects random:N (N > 0) or exhaustive, got 'random:0'"),
        (["--explore", "dfs"], "--explore expects random:N (N > 0) or exhaustive, got 'dfs'"),
        (["--explore", "random:5", "--schedule", "rr"], "--schedule cannot be combined with --explore"),
        (["--explore", "exhaustive", "--out", "x"], "--out cannot be combined with --explore"),
        (["--explore", "exhaustive", "--seed", "3"], "--seed has no effect on --explore exhaustive"),
        (["--explore", "exhaustive", "--max-states", "0"], "--max-states must be positive, got 0"),
    ],
)
def test_explore_usage_errors(capsys: pytest.CaptureFixture[str], flags: list[str], message: str) -> None:
    program, args = CLEAN[0]
    result = run_cli(capsys, str(program), *shlex.split(args), *flags)
    assert result.code == run.EXIT_ERROR
    assert result.err.startswith(f"error: {message}"), result.err


_SPIN_LOOP = """\
.version 8.6
.target sm_90
.address_size 64
.shared .align 8 .b64 bar;
.visible .entry k(.param .u64 out_ptr)
{
\t.reg .pred %p, %leader;
\t.reg .b32 %tx;
\tmov.u32 %tx, %tid.x;
\tsetp.eq.u32 %leader, %tx, 0;
\t@%leader mbarrier.init.shared::cta.b64 [bar], 1;
\tbar.sync 0;
L:
\tmbarrier.test_wait.parity.shared::cta.b64 %p, [bar], 0;
\t@!%p bra L;
\tret;
}
"""


def test_a_spin_loop_nobody_releases_is_a_deadlock(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A `test_wait` loop on a phase nobody completes hangs (a single run reports the
    deadlock). The exhaustive search must too: the states before the first failed test,
    after it (spinning) and after the one retry it is woken for have the same positions,
    registers and barriers; the key tells them apart by the spin state (explore.py
    `_spin_key`), else the search stops at a state it has seen and reports SAFE."""
    program = tmp_path / "spin.ptx"
    program.write_text(_SPIN_LOOP)
    args = [str(program), "--kernel", "k", "--block", "32", "--arg", "out_ptr=zeros:u32:1"]
    assert run_cli(capsys, *args).code == run.EXIT_DEADLOCK
    result = run_cli(capsys, *args, "--explore", "exhaustive")
    assert result.code == run.EXIT_DEADLOCK, result.out + result.err
    assert result.out.startswith("explore exhaustive: UNSAFE"), result.out
    assert "polls mbarrier @bar for parity 0 (test failed)" in result.err, result.err
