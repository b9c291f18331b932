"""`--explore random:N --jobs J`: the seeds spread over J worker processes, with the verdict
and the failing seed of one process (the lowest failing seed), whatever J."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from support import CLEAN, ROOT, SCHEDULES, run_cli

from xdsl_tmem.interpreter import Launch
from xdsl_tmem.interpreter.explore import explore_random
from xdsl_tmem.tools import run
from xdsl_tmem.universe import make_context

DEADLOCK = str(SCHEDULES / "alloc_order_deadlock.mlir")
DEADLOCK_ARGS = ["--kernel", "k", "--block", "64"]
"""Deadlocks exactly when warp 1 allocates first (tests/test_explore.py): some random seeds
fail, others pass."""
REF_PTX = str(ROOT / "tests" / "ptx_corpus" / "ref_pipeline.ptx")
REF_PTX_ARGS = (
    "--kernel ref_pipeline --block 160 --arg out=zeros:f32:4x128x256 --arg a_ptr=rand:f16:4096:1 "
    "--arg b_ptr=rand:f16:8192:2 --arg num_tiles=4"
)


def without_time(summary: str) -> str:
    return re.sub(r", [0-9.]+ s$", "", summary.splitlines()[0])


def first_failing_seed(capsys: pytest.CaptureFixture[str], start: int) -> int:
    """Found one seed at a time with `--schedule random --seed S`, not by the exploration."""
    for seed in range(start, start + 100):
        if run_cli(capsys, DEADLOCK, *DEADLOCK_ARGS, "--schedule", "random", "--seed", str(seed)).code:
            return seed
    raise AssertionError(f"no failing seed in {start}-{start + 99}")


def test_the_lowest_failing_seed_whatever_the_jobs(capsys: pytest.CaptureFixture[str]) -> None:
    """From seed 5 the first seeds pass: the failure lies in a later range of seeds than the
    first a worker takes, and another worker may fail on a higher seed first."""
    seed = first_failing_seed(capsys, 5)
    assert seed > 5  # seeds pass before it: the test means something
    results = [
        run_cli(capsys, DEADLOCK, *DEADLOCK_ARGS, "--explore", "random:60", "--seed", "5", "--jobs", str(jobs))
        for jobs in (1, 2, 3)
    ]
    for result in results:
        assert result.code == run.EXIT_DEADLOCK, result.err
        assert without_time(result.out) == f"explore random: UNSAFE: {seed - 4} schedules (seeds 5-{seed})"
        assert f"note: found by random schedule seed {seed}; replay it with --schedule random --seed {seed}\n" in (
            result.err
        )
    assert results[1].err == results[0].err == results[2].err


@pytest.mark.parametrize(
    ("program", "args", "level"),
    [
        (str(CLEAN[0][0]), CLEAN[0][1], []),
        (str(CLEAN[0][0]), CLEAN[0][1], ["-p", "lower-tmem", "-t", "ptx"]),
        (REF_PTX, REF_PTX_ARGS, []),
    ],
    ids=["tmem-level", "our-ptx", "ptx-input"],
)
def test_a_safe_program_is_safe_whatever_the_jobs(
    capsys: pytest.CaptureFixture[str], program: str, args: str, level: list[str]
) -> None:
    """Workers rebuild the module from its printed form: the tmem level, the ptx dialect our
    backend selects, and a kernel read from a .ptx file."""
    outs: list[str] = []
    for jobs in ("1", "2"):
        result = run_cli(capsys, program, *level, *shlex.split(args), "--explore", "random:6", "--jobs", jobs)
        assert result.code == run.EXIT_OK, result.err
        outs.append(without_time(result.out))
    assert outs == ["explore random: SAFE: 6 schedules (seeds 0-5)"] * 2


def test_the_python_api_gives_the_same_exploration() -> None:
    from xdsl.parser import Parser

    module = Parser(make_context(), Path(DEADLOCK).read_text()).parse_module()
    one = explore_random(module, Launch.create("k", block=64, seed=5), 40)
    two = explore_random(module, Launch.create("k", block=64, seed=5), 40, jobs=2)
    assert (two.verdict, two.seed, two.explored) == (one.verdict, one.seed, one.explored)
    assert one.seed is not None
    assert type(two.failure) is type(one.failure)
    with pytest.raises(ValueError, match="jobs must be a positive integer, got 0"):
        explore_random(module, Launch.create("k", block=64), 4, jobs=0)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--explore", "random:4", "--jobs", "0"], "--jobs expects a positive integer (worker processes), got '0'"),
        (["--explore", "random:4", "--jobs=-2"], "--jobs expects a positive integer (worker processes), got '-2'"),
        (["--explore", "random:4", "--jobs", "two"], "--jobs expects a positive integer (worker processes), got 'two'"),
        (["--explore", "random:4", "--jobs", "1.5"], "--jobs expects a positive integer (worker processes), got '1.5'"),
        (["--jobs", "2"], "--jobs applies to --explore random:N (it splits the seeds over processes), got no "
         "--explore"),
        (["--explore", "exhaustive", "--jobs", "2"], "--jobs applies to --explore random:N (it splits the seeds over "
         "processes), got --explore exhaustive"),
    ],
)  # fmt: skip
def test_jobs_usage_errors(capsys: pytest.CaptureFixture[str], flags: list[str], message: str) -> None:
    result = run_cli(capsys, DEADLOCK, *DEADLOCK_ARGS, *flags)
    assert result.code == run.EXIT_ERROR
    assert result.err == f"error: {message}\n"
