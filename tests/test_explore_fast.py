"""The exploration's fast paths against the exact ones they replace: random exploration's
runs prepared once (`Prepared.rerun`) against a fresh `prepare` per seed, and the register
part of the state key (`_env_key`) against the pairwise key, and the state key's and
state copies' shortcuts (`EnvKeys`, copy-on-write, `Memo.record`) against what they replace."""

from __future__ import annotations

import dataclasses
import shlex
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support import CORPUS, SCHEDULES, header
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xdsl_tmem.interpreter import Launch
from xdsl_tmem.interpreter.explore import EnvKeys, _env_key, _Seeds, explore_exhaustive  # pyright: ignore[reportPrivateUsage]
from xdsl_tmem.interpreter.launch import Schedule
from xdsl_tmem.interpreter.machine import AsyncOp, MBarrier, Memo
from xdsl_tmem.interpreter.run import (
    ClusterRun,
    KernelDeadlock,
    KernelHazard,
    KernelStepLimit,
    RunReport,
    prepare,
    run_launch,
)
from xdsl_tmem.kernels import EXAMPLE_CONFIGS, build_matmul
from xdsl_tmem.tools import run

Failure = KernelDeadlock | KernelHazard | KernelStepLimit


SCHEDULE_RUNS = {
    "alloc_order_deadlock": "--kernel k --block 64",
    "schedule_dependent_store": "--kernel k --block 64 --arg out=zeros:i32:1",
}
"""The launches of tests/schedules/ (test_explore.py's), which have no `// Run:` header."""


def _load(path: Path) -> tuple[ModuleOp, Launch]:
    """A program and its launch: a corpus program's `// Run:` header, or `SCHEDULE_RUNS`."""
    module = Parser(run.make_context(), path.read_text()).parse_module()
    words = iter(shlex.split(SCHEDULE_RUNS.get(path.stem) or header(path, "Run")))
    dims: dict[str, tuple[int, ...]] = {}
    args: dict[str, Any] = {}
    kernel = ""
    for word in words:
        if word == "--kernel":
            kernel = next(words)
        elif word in ("--block", "--cluster"):
            dims[word[2:]] = run.parse_dims(next(words), word)
        elif word == "--arg":
            name, value = run.parse_arg(next(words))
            args[name] = value
    return module, Launch.create(kernel, block=dims["block"], cluster=dims.get("cluster", 1), args=args)


def _outcome(report: RunReport, failure: Failure | None) -> tuple[Any, ...]:
    """What a run reports: its counts and schedule, and the failure's class, kind and op."""
    return (
        report.instructions,
        report.sync_points,
        report.mma_count,
        list(report.schedule_trace),
        list(report.tmem_events),
        report.same_value_races,
        None if failure is None else (type(failure).__name__, getattr(failure, "kind", None), str(failure)),
    )


def _exact(module: ModuleOp, launch: Launch, seed: int) -> tuple[Any, ...]:
    try:
        report = run_launch(module, dataclasses.replace(launch, schedule=Schedule.RANDOM, seed=seed)).report
    except (KernelDeadlock, KernelHazard, KernelStepLimit) as e:
        return _outcome(e.report, e)
    return _outcome(report, None)


def _fast(seeds: _Seeds, seed: int) -> tuple[Any, ...]:
    try:
        report = seeds.run(seed)
    except (KernelDeadlock, KernelHazard, KernelStepLimit) as e:
        return _outcome(e.report, e)
    return _outcome(report, None)


PROGRAMS = [
    SCHEDULES / "alloc_order_deadlock.mlir",
    SCHEDULES / "schedule_dependent_store.mlir",
    CORPUS / "tmem_write_after_read.mlir",
    CORPUS / "smem_data_race.mlir",
]


@pytest.mark.parametrize("path", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_runs_prepared_once_report_what_fresh_preparations_do(path: Path) -> None:
    """Seed by seed, in one `_Seeds` (so each run follows others on the same program), the
    same instructions, schedule, events, races and failure as a run prepared from scratch."""
    module, launch = _load(path)
    seeds = _Seeds(module, launch)
    outcomes = [_fast(seeds, seed) for seed in range(12)]
    assert outcomes == [_exact(module, launch, seed) for seed in range(12)]


def test_a_rerun_binds_fresh_memory_and_computes_the_same_outputs() -> None:
    """The matmul example's outputs after a run prepared by `rerun` equal those of a fresh
    preparation, and the first run's buffers are not the rerun's."""
    from xdsl_tmem.kernels import EXAMPLE_CONFIGS, build_matmul

    module = build_matmul(EXAMPLE_CONFIGS["matmul_cg1"])
    rng = np.random.default_rng(0)
    args = {
        "out": np.zeros(128 * 256, np.float32),
        "a": rng.standard_normal(4096).astype(np.float16),
        "b": rng.standard_normal(8192).astype(np.float16),
        "ntiles": 1,
    }
    launch = dataclasses.replace(Launch.create("matmul_cg1", block=160, args=args), schedule=Schedule.RANDOM)
    first = prepare(module, launch)
    first_out = run_launch(module, launch, prepared=first).outputs["out"]
    again = dataclasses.replace(launch, seed=5)
    rerun = first.rerun(module, again)
    assert rerun.program is first.program
    assert rerun.memory is not first.memory
    fast = run_launch(module, again, prepared=rerun).outputs["out"]
    exact = run_launch(module, again).outputs["out"]
    np.testing.assert_array_equal(fast, exact)
    np.testing.assert_array_equal(first_out, exact)  # race-free: every schedule computes the same
    assert np.count_nonzero(exact) > 0


def _pairwise(env: dict[int, Any]) -> Any:
    """The key `_env_key` replaces: (slot, value) pairs, arrays by their bytes."""
    return tuple((slot, v.tobytes() if isinstance(v, np.ndarray) else v) for slot, v in env.items())


def test_the_register_key_distinguishes_what_the_pairwise_key_does() -> None:
    lanes = np.arange(32, dtype=np.int32)
    other = lanes.copy()
    other[7] = -1
    envs: list[dict[int, Any]] = [
        {},
        {0: 1},
        {0: 2},
        {1: 1},
        {0: 1, 1: 2},
        {1: 2, 0: 1},  # the same pairs in another order: the pairwise key tells them apart too
        {0: 1.5, 1: None},
        {0: lanes},
        {0: lanes.copy()},
        {0: other},
        {0: lanes, 1: other},
        {0: other, 1: lanes},
        {3: lanes, 4: 7},
    ]
    for a in envs:
        for b in envs:
            assert (_env_key(a) == _env_key(b)) == (_pairwise(a) == _pairwise(b)), (a, b)


def test_remembered_register_keys_are_the_keys_and_follow_changes() -> None:
    """`EnvKeys` answers `_env_key`'s key, for a register file met before (a copy holding
    the same values), and a new one once a slot holds another value, also after the
    entries it remembered were dropped (`next_level` twice)."""
    keys = EnvKeys()
    lanes = np.arange(32, dtype=np.int32)
    env: dict[int, Any] = {0: lanes, 1: 5}
    first = keys(env)
    assert first == _env_key(env)
    assert keys(dict(env)) == first  # a state's copy: other dict, same values
    changed = lanes.copy()
    changed[3] = -1
    env[0] = changed
    assert keys(env) == _env_key(env) != first
    env[0] = lanes.copy()  # equal bytes, another array: the same key as the first
    assert keys(env) == first
    keys.next_level()
    keys.next_level()
    assert not keys.current
    assert not keys.previous
    assert keys({0: lanes, 1: 6}) == _env_key({0: lanes, 1: 6}) != first


def test_state_copies_copy_records_once_each() -> None:
    """`Memo.record`: one copy per access record however many places hold it, equal field
    by field and independent of the original."""
    record = AsyncOp("mma", None, 0, 0, 0, 0, (0, 128), (0, 64), True, lane_set=3, column_set=5, epoch=9)
    memo = Memo()
    clone = memo.record(record)
    assert clone is memo.record(record)
    assert clone is memo.copy(record)
    assert clone is not record
    assert clone == record
    clone.epoch = 10
    assert record.epoch == 9
    bar = MBarrier(0, 0, 2, 2)
    bar.arrive(1, who="warp 0")
    copy = bar.copy()
    copy.arrive(1, who="warp 1")
    assert (bar.pending, bar.completed, len(bar.arrivals)) == (1, 0, 1)
    assert (copy.pending, copy.completed, len(copy.last_arrivals)) == (2, 1, 2)


def test_exhaustive_search_with_its_fast_paths_reaches_the_states_without_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """The 2-stage, 4-tile cg1 matmul explored as the benchmark does, and again with the
    register keys computed afresh each time and pruned states left to the garbage
    collector: the same states, transitions and verdict."""
    config = EXAMPLE_CONFIGS["matmul_cg1"]

    def explore() -> tuple[str, int, int]:
        rng = np.random.default_rng(0)
        args = {
            "out": np.zeros(4 * 128 * 256, np.float32),
            "a": rng.standard_normal(4096).astype(np.float16),
            "b": rng.standard_normal(8192).astype(np.float16),
            "ntiles": 4,
        }
        found = explore_exhaustive(build_matmul(config), Launch.create("matmul_cg1", block=160, args=args))
        return found.verdict, found.explored, found.transitions

    fast = explore()

    def fresh(self: EnvKeys, env: dict[int, Any]) -> int:
        return _env_key(env)

    def keep(self: ClusterRun) -> None:
        return None

    monkeypatch.setattr(EnvKeys, "__call__", fresh)
    monkeypatch.setattr(ClusterRun, "release", keep)
    assert explore() == fast
    assert fast[0] == "SAFE"
