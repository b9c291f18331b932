"""Schedule exploration: many seeded random schedules, or every interleaving.

**Random** (`explore_random`): N runs with consecutive seeds; the first failing seed is
reported so that `--schedule random --seed S` replays it.

**Exhaustive** (`explore_exhaustive`): a breadth-first search over the interleavings of
one cluster's warps and tensor cores at *synchronisation points* (ops declaring the
`Synchronizes` trait, dialects/traits.py: mbarrier arrivals and waits, named and cluster
barriers, TMEM allocation; and each tensor-core commit completion), so the first failure it meets has a shortest
schedule. Between two such points a warp's memory and TMEM accesses run without
interleaving: the happens-before checks report any TMEM access that two schedules could
order differently (a race), so for a program they find race-free the order of
unsynchronised accesses cannot change the outcome, and branching at synchronisation
points reaches every outcome. Races on shared and global memory are found the same way
(races.py); every complete schedule must also leave the same global memory
(`schedule-dependent-result` otherwise), a backstop for what those checks do not shadow.

Two reductions keep the search small:

* state hashing: a state met before is not explored again. The key is the control and
  synchronisation state — every warp's position, its registers, its clocks; every
  barrier, allocation, pending commit and live TMEM access — but not the contents of
  memory, which a race-free program computes the same way along every schedule that
  reaches the same control state. Keys are 64-bit hashes (a collision, about 1 in 10^7
  for a million states, would prune a state);
* partial-order reduction: a step that commutes with every other agent's steps is taken
  alone, without branching (the other orders reach the same states): a named or cluster
  barrier arrival or wait (arrivals only count; a passed generation stays passed), issuing
  a commit, an mbarrier arrival that does not complete the phase (it only lowers a
  pending count), a wait that blocks (it changes no shared state), and a wait that
  succeeds when no other agent's next step can complete the barrier's next phase (which
  would flip the parity it observes). The last rule looks one step ahead only: a program
  in which another agent completes that phase *later* but still before the wait (a
  producer running two laps ahead) is explored in one of the orders, in which the hazard
  checks report the race such a protocol has on the stage's TMEM.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import chain
from multiprocessing.context import ForkServerContext, SpawnContext
from multiprocessing.sharedctypes import Synchronized
from operator import attrgetter
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from xdsl_tmem.interpreter.blas import single_threaded_blas
from xdsl_tmem.interpreter.executor import (
    LOCAL,
    OTHER,
    BlockFrame,
    Deadlock,
    GenFrame,
    OpError,
    Status,
    Step,
    StepLimit,
    TensorCore,
    Warp,
    wake_spinning,
)
from xdsl_tmem.interpreter.heap import older_objects_frozen
from xdsl_tmem.interpreter.launch import Launch, LaunchError, Schedule
from xdsl_tmem.interpreter.machine import GlobalMemory, Hazard, NamedBarrier
from xdsl_tmem.interpreter.ptx.warp import PtxWarp
from xdsl_tmem.interpreter.run import (
    ClusterRun,
    KernelDeadlock,
    KernelHazard,
    KernelStepLimit,
    Prepared,
    Progress,
    RunReport,
    clusters_of,
    failure_of,
    prepare,
    run_launch,
)
from xdsl_tmem.interpreter.shadow import SameValueRace
from xdsl_tmem.interpreter.trace import Tracer
from xdsl_tmem.interpreter.validate import difference_of

Failure = KernelDeadlock | KernelHazard | KernelStepLimit


@dataclass(frozen=True)
class Move:
    """One step of a schedule: agent `index` (named `agent`) runs from `op`, its next
    synchronisation, up to the one after."""

    index: int
    agent: str
    op: Operation | None


@dataclass
class Exploration:
    """What an exploration found."""

    mode: str
    """"random" or "exhaustive"."""
    explored: int = 0
    """Schedules (random) or distinct states (exhaustive)."""
    transitions: int = 0
    seconds: float = 0.0
    failure: Failure | None = None
    seed: int | None = None
    """The failing seed (random)."""
    schedule: list[Move] = field(default_factory=list[Move])
    """The counterexample, a shortest one (exhaustive)."""
    complete: bool = True
    """False when a limit stopped the search (`limit` says which)."""
    limit: str = ""
    shortest: bool = False
    """Whether no shorter schedule fails (exhaustive): the search without the reduction,
    up to one step less than `schedule`, finished within its budget (`SHORTER_STATES`)."""
    same_value_races: int = 0
    """Same-value write-write races met (`RunReport.same_value_races`), over the random
    schedules run, or over the states explored."""
    first_same_value: SameValueRace | None = None

    @property
    def verdict(self) -> str:
        """UNSAFE (a failure), SAFE (none, search finished) or INCOMPLETE (a limit hit)."""
        return "UNSAFE" if self.failure is not None else "SAFE" if self.complete else "INCOMPLETE"


@single_threaded_blas()
@older_objects_frozen()
def explore_random(
    module: ModuleOp,
    launch: Launch,
    count: int,
    tracer: Tracer | None = None,
    jobs: int = 1,
    progress: Progress | None = None,
) -> Exploration:
    """Run `launch` under `count` random schedules (seeds `launch.seed` …; its schedule is
    not used); stop at the first failure, whose run `tracer` then records. `progress` is
    told the schedules run so far, of `count`.

    `jobs` > 1 spreads the seeds over that many worker processes (`_explore_parallel`);
    the verdict and the failing seed are those of one process: the lowest failing seed."""
    if jobs < 1:
        raise ValueError(f"explore_random: jobs must be a positive integer, got {jobs}")
    result = Exploration("random")
    start = time.perf_counter()
    first = launch.seed
    if jobs == 1 or count == 1:
        seeds = _Seeds(module, launch)
        for seed in range(first, first + count):
            result.explored += 1
            try:
                report = seeds.run(seed)
            except (KernelDeadlock, KernelHazard, KernelStepLimit) as e:
                result.failure, result.seed = e, seed
                report = e.report
            result.same_value_races += report.same_value_races
            result.first_same_value = result.first_same_value or report.first_same_value
            if result.failure is not None:
                break
            if progress is not None:
                progress(result.explored, count)
    else:
        _explore_in_workers(module, launch, count, jobs, result, progress)
    result.seconds = time.perf_counter() - start
    if result.seed is not None and tracer is not None:
        with contextlib.suppress(KernelDeadlock, KernelHazard, KernelStepLimit):
            run_launch(module, dataclasses.replace(launch, schedule=Schedule.RANDOM, seed=result.seed), tracer=tracer)
    return result


def _run_seed(module: ModuleOp, launch: Launch, seed: int) -> RunReport:
    return run_launch(module, dataclasses.replace(launch, schedule=Schedule.RANDOM, seed=seed)).report


class _Seeds:
    """Runs of one launch under random schedules, prepared once: the first run's checks,
    layout and program (with the plans and static facts it derives) serve every later
    one, which binds fresh global memory only (`Prepared.rerun`); a run is then as
    `_run_seed` gives it (tests/test_explore.py compares them)."""

    def __init__(self, module: ModuleOp, launch: Launch):
        self.module, self.launch = module, launch
        self.prepared: Prepared | None = None

    def run(self, seed: int) -> RunReport:
        launch = dataclasses.replace(self.launch, schedule=Schedule.RANDOM, seed=seed)
        if self.prepared is None:
            prepared = self.prepared = prepare(self.module, launch)
        else:
            prepared = self.prepared.rerun(self.module, launch)
        return run_launch(self.module, launch, prepared=prepared).report


def _explore_in_workers(
    module: ModuleOp, launch: Launch, count: int, jobs: int, result: Exploration, progress: Progress | None
) -> None:
    """`explore_random`'s result from `jobs` worker processes, as one process gives it.
    Workers report seeds and same-value race counts only (ops do not cross processes):
    the failing seed and the first seed with a same-value race are run again here, on
    this module's ops, for their diagnostics."""
    first = launch.seed
    lowest, noted = _explore_parallel(module, launch, count, jobs, progress)
    last = first + count - 1 if lowest is None else lowest
    result.explored = last - first + 1
    seeds = sorted(s for s in noted if s <= last)
    result.same_value_races = sum(noted[s] for s in seeds)
    with_races = next((s for s in seeds if noted[s]), None)
    if lowest is not None:
        try:
            _run_seed(module, launch, lowest)
        except (KernelDeadlock, KernelHazard, KernelStepLimit) as e:
            result.failure, result.seed = e, lowest
            if with_races == lowest:
                result.first_same_value = e.report.first_same_value
        if result.failure is None:
            raise RuntimeError(f"random schedule seed {lowest} failed in a worker but not when replayed")
    if with_races is not None and with_races != lowest:
        result.first_same_value = _run_seed(module, launch, with_races).first_same_value


CHUNKS_PER_JOB = 8
"""Seed ranges per worker: small ranges balance the load and let the search stop soon
after a failure (a range is not started above a known failing seed)."""
MAX_CHUNK = 32


def _explore_parallel(
    module: ModuleOp, launch: Launch, count: int, jobs: int, progress: Progress | None
) -> tuple[int | None, dict[int, int]]:
    """The lowest seed in `launch.seed` … `launch.seed + count - 1` whose run raises (None
    when every run completes), and the same-value race count of each seed run, every
    seed up to that one included, run by `jobs` spawned processes.

    Workers start from a fork server (or 'spawn' where there is none): never a fork of a
    parent that may hold threads. They parse the module from its printed form: IR does
    not pickle. Ranges are handed out in seed order
    and their results read in that order, so the first range with a failing seed holds
    the lowest one. Each worker skips seeds above the lowest failing seed known so far
    (a shared value): the seeds below it still run, to completion or to a lower failure."""
    first = launch.seed
    size = max(1, min(MAX_CHUNK, count // (jobs * CHUNKS_PER_JOB)))
    ranges = [(seed, min(seed + size, first + count)) for seed in range(first, first + count, size)]
    context = _worker_context()
    known: Synchronized[int] = context.Value("q", first + count)
    initargs = (str(module), launch, known, sys.getrecursionlimit())
    with ProcessPoolExecutor(min(jobs, len(ranges)), context, _start_worker, initargs) as pool:
        futures = [pool.submit(_run_range, start, stop) for start, stop in ranges]
        noted: dict[int, int] = {}
        try:
            for future in futures:
                failing, counts = future.result()
                noted.update(counts)
                if failing is not None:
                    return failing, noted
                if progress is not None:
                    progress(len(noted), count)
        finally:
            for future in futures:
                future.cancel()
    return None, noted


def _worker_context() -> ForkServerContext | SpawnContext:
    """A fork server that imported the machine model and the dialects once (about 2 s of
    imports), then forks each worker; 'spawn' where the platform has none."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["xdsl_tmem.interpreter.explore", "xdsl_tmem.universe"])
    return context


@dataclass
class _Worker:
    seeds: _Seeds
    known: Synchronized[int]
    """The lowest failing seed found so far."""


_worker: _Worker | None = None


def _start_worker(text: str, launch: Launch, known: Synchronized[int], recursion_limit: int) -> None:
    from xdsl.parser import Parser

    from xdsl_tmem.universe import make_context  # the dialects: imported only in workers

    global _worker
    sys.setrecursionlimit(recursion_limit)
    _worker = _Worker(_Seeds(Parser(make_context(), text).parse_module(), launch), known)


def _run_range(start: int, stop: int) -> tuple[int | None, dict[int, int]]:
    """The first seed in [start, stop) whose run raises anything (None if none does or
    a lower failing seed is already known), and each run seed's same-value race count."""
    worker = _worker
    assert worker is not None
    counts: dict[int, int] = {}
    with single_threaded_blas(), older_objects_frozen():
        for seed in range(start, stop):
            if seed > worker.known.value:
                return None, counts
            try:
                counts[seed] = worker.seeds.run(seed).same_value_races
            except Exception as e:
                report = getattr(e, "report", None)
                counts[seed] = report.same_value_races if isinstance(report, RunReport) else 0
                with worker.known.get_lock():
                    worker.known.value = min(worker.known.value, seed)
                return seed, counts
    return None, counts


@single_threaded_blas()
@older_objects_frozen()
def explore_exhaustive(
    module: ModuleOp,
    launch: Launch,
    tracer: Tracer | None = None,
    partial_order: bool = True,
    progress: Progress | None = None,
) -> Exploration:
    """Explore every interleaving of one cluster of `launch` at synchronisation points (the
    module docstring; its schedule and seed are not used); stop at the first failure, whose
    schedule `tracer` then records, or unfinished after `launch.limits.max_states` states or
    when the states held (two breadth-first levels) would take more than
    `launch.limits.max_memory` bytes. `partial_order=False` branches at every
    synchronisation point (to check the reduction). `progress` is told the states explored
    so far (of no known total)."""
    max_steps, max_states, max_memory = launch.limits.max_steps, launch.limits.max_states, launch.limits.max_memory
    prepared = prepare(module, launch, points="barriers")
    clusters = list(clusters_of(prepared.geometry))
    if len(clusters) != 1:
        raise LaunchError(
            f"exhaustive exploration runs one cluster; the grid {prepared.geometry.grid} has {len(clusters)} "
            "(use a grid equal to the cluster shape, or --explore random:N)"
        )
    result = Exploration("exhaustive")
    start = time.perf_counter()
    report = RunReport(launch.kernel, prepared.geometry, "exhaustive", 0)
    search = _Search(prepared, clusters[0], report, result, max_steps, progress)
    search.run(partial_order, max_states, max_memory)
    sites = prepared.memory.sites  # (shared by every state's copy of the memory)
    result.same_value_races, result.first_same_value = sites.same_value, sites.first_same_value
    result.shortest = not partial_order or not result.schedule
    if result.failure is not None and not result.shortest:
        # The reduction may postpone steps a shorter failing schedule leaves out: search
        # all interleavings up to one step less, within a budget.
        schedule, failure = result.schedule, result.failure
        result.schedule, result.failure = [], None
        search.run(False, 3 * result.explored + SHORTER_STATES, min(max_memory, SHORTER_MEMORY), len(schedule) - 1)
        result.shortest = result.complete
        if result.failure is None:
            result.schedule, result.failure, result.complete = schedule, failure, True
    result.seconds = time.perf_counter() - start
    if result.failure is not None and tracer is not None:
        _replay(prepared, clusters[0], result.schedule, tracer, max_steps)
    return result


def _replay(
    prepared: Prepared, ctaids: list[tuple[int, int, int]], moves: list[Move], tracer: Tracer, limit: int
) -> None:
    """Run a counterexample again, recording its timeline."""
    run = ClusterRun(prepared, ctaids).copy()  # a copy: leave the launch's buffers as they are
    tracer.start_cluster(run.state, run.warps, run.cores)
    with contextlib.suppress(OpError, StepLimit):
        for warp in run.warps:
            warp.run(limit, to_first=True)
        for move in moves:
            agent = run.agents[move.index]
            tracer.turn_started(agent)
            agent.run(limit)
            tracer.turn_ended(agent)
    tracer.end_cluster(run.warps, failed=True)


SHORTER_STATES, SHORTER_MEMORY = 1_000, 1 << 30
"""The budget of the search for a shorter counterexample without the reduction: states
beyond twice those the reduced search explored, and memory."""

Path = tuple["Path", Move] | None
"""A schedule as a linked list (states share their prefixes)."""


class _Search:
    """Breadth-first, each state once: the first failure found has a shortest schedule
    (of the explored graph). Adds to the counts and verdict of `result`."""

    def __init__(
        self,
        prepared: Prepared,
        ctaids: list[tuple[int, int, int]],
        report: RunReport,
        result: Exploration,
        max_steps: int,
        progress: Progress | None = None,
    ):
        self.prepared, self.ctaids, self.report, self.result, self.max_steps = (
            prepared,
            ctaids,
            report,
            result,
            max_steps,
        )
        self.progress = progress
        self.visited: set[int] = set()
        """The states searched (by `state_key`)."""
        self.env_keys = EnvKeys()
        self.first: GlobalMemory | None = None
        """Global memory after the first complete schedule."""
        self.max_states = 0

    def fail(self, run: ClusterRun, error: Exception, path: Path) -> None:
        self.report.instructions = run.state.step
        self.result.failure = failure_of(run, error, self.report, self.prepared)
        schedule: list[Move] = []
        while path is not None:
            path, move = path
            schedule.append(move)
        self.result.schedule = schedule[::-1]

    def run(self, partial_order: bool, max_states: int, max_memory: int, max_depth: int | None = None) -> None:
        """Search up to `max_states` states in all (`result.explored` counts on), a
        frontier of `max_memory` bytes and schedules of `max_depth` steps;
        `result.complete` says whether it finished."""
        result = self.result
        result.complete, result.limit = True, ""
        start = ClusterRun(self.prepared, self.ctaids).copy()  # a copy: leave the launch's buffers as they are
        max_frontier = max(1, max_memory // start.data_bytes())
        for warp in start.warps:  # so that `next_step` sees each warp's first synchronisation
            try:
                warp.run(self.max_steps, to_first=True)
            except (OpError, StepLimit) as e:
                return self.fail(start, e, None)
        self.visited, self.first, self.max_states = set[int](), None, max_states
        level: list[tuple[ClusterRun, Path]] = [(start, None)]
        depth = 0
        while level:
            following: list[tuple[ClusterRun, Path]] = []
            for run, path in level:
                if not self.expand(run, path, partial_order, depth != max_depth, following):
                    return None
                if len(level) + len(following) > max_frontier:
                    result.complete, result.limit = False, "memory"
                    return None
            level = following
            depth += 1
            self.env_keys.next_level()
        return None

    def expand(
        self, run: ClusterRun, path: Path, partial_order: bool, deeper: bool, following: list[tuple[ClusterRun, Path]]
    ) -> bool:
        """Visit the state `run` (reached by `path`): check it if final, else add its
        successors to `following` (when `deeper`); False when the search must stop."""
        result = self.result
        key = state_key(run, self.env_keys)
        done = not run.live_warps() and not run.runnable()
        if done and self.first is not None:
            try:  # also for a final state met before: only its memory may differ
                _same_outputs(self.first, run.state.memory, self.prepared)
            except Hazard as e:
                self.fail(run, e, path)
                return False
        if key in self.visited:
            run.release()  # (only this search holds it)
            return True
        if result.explored == self.max_states:
            result.complete, result.limit = False, "states"
            return False
        self.visited.add(key)
        result.explored += 1
        if self.progress is not None:
            self.progress(result.explored, None)
        runnable = reduce(run, run.runnable()) if partial_order else run.runnable()
        if not runnable and wake_spinning(run.live_warps()):
            runnable = reduce(run, run.runnable()) if partial_order else run.runnable()
        if not runnable:
            return self.finish(run, path, done)
        if deeper:
            return self.successors(run, path, runnable, following)
        return True

    def finish(self, run: ClusterRun, path: Path, done: bool) -> bool:
        """A state without a runnable agent: a deadlock unless every warp finished."""
        try:
            if not done:
                raise Deadlock(run.live_warps())
            run.end_checks()
        except (Deadlock, Hazard) as e:
            self.fail(run, e, path)
            return False
        if self.first is None:
            self.first = run.state.memory
        else:
            run.release()  # (its outputs are compared: `expand`)
        return True

    def successors(
        self, run: ClusterRun, path: Path, runnable: list[int], following: list[tuple[ClusterRun, Path]]
    ) -> bool:
        """Run each of the `runnable` agents one step from `run` (on a copy but the last)."""
        for n, index in enumerate(runnable):
            child = run if n == len(runnable) - 1 else run.copy()
            agent = child.agents[index]
            step: Path = (path, Move(index, agent.name, agent.next_op()))
            self.result.transitions += 1
            try:
                agent.run(self.max_steps)
            except (OpError, StepLimit) as e:
                self.fail(child, e, step)
                return False
            following.append((child, step))
        return True


def _same_outputs(first: GlobalMemory, other: GlobalMemory, prepared: Prepared) -> None:
    for a, b in zip(first.buffers, other.buffers, strict=True):
        dtype = prepared.outputs[a.name].dtype
        difference = difference_of(a.data.view(dtype), b.data.view(dtype), ("in one", "in the other"))
        if difference is not None:
            raise Hazard(
                "schedule-dependent-result",
                f"two complete schedules leave different contents in '{a.name}' ({difference}): a race the "
                "happens-before checks do not see",
            )


def next_step(run: ClusterRun, agent: Warp | TensorCore) -> Step:
    """The mbarrier effect of the agent's next step, as the implementation that runs it
    declares it (`TensorCore.effect`, `Perform.effect`, `WarpFunctions.effect`)."""
    if isinstance(agent, TensorCore):
        return agent.effect()
    if agent.status is Status.BLOCKED:
        if agent.blocked_wait is None:
            wake = agent.wake
            return LOCAL if wake is not None and wake.kind in ("named", "cluster") else OTHER
        return Step("wait", (agent.blocked_wait[0],), parity=agent.blocked_wait[1])
    if isinstance(agent, PtxWarp):
        return agent.next_effect()
    if not agent.stack:
        return OTHER
    frame = agent.stack[-1]
    if isinstance(frame, GenFrame):
        request = frame.pending
        if request is None or request.effect is None:
            return OTHER
        return request.effect(*request.args)
    planned = frame.plan[frame.pc]
    entry = agent.program.table.get(type(planned.op))
    if entry is None:
        return OTHER
    return entry[1].effect(agent, planned.op, [frame.env[slot] for slot in planned.operands])


def reduce(run: ClusterRun, runnable: list[int]) -> list[int]:
    """Partial-order reduction (module docstring): take one step alone when it commutes
    with every other agent's next step; otherwise branch over all of them."""
    steps = {i: next_step(run, run.agents[i]) for i in runnable}
    state = run.state

    def completes(step: Step, address: int) -> bool:
        if step.kind != "arrive" or address not in step.barriers:
            return False
        cta, offset = state.cta_of(address)
        bar = cta.mbarriers.get(offset)
        return bar is not None and bar.pending <= step.count

    for i, step in steps.items():
        if step.kind == "local":
            return [i]
        if step.kind == "arrive" and not any(completes(step, b) for b in step.barriers):
            return [i]  # lowers pending counts only: commutes with everything
        if step.kind == "wait":
            (address,) = step.barriers
            cta, offset = state.cta_of(address)
            bar = cta.mbarriers.get(offset)
            if bar is None or not bar.parity_passes(step.parity):
                return [i]  # it blocks: no effect on shared state
            if not any(completes(other, address) for j, other in steps.items() if j != i):
                return [i]  # no other next step can flip the phase it observes
    return runnable


def _env_key(env: dict[int, Any]) -> int:
    """A frame's registers: its slots in order and their values (arrays by their bytes).
    The hottest part of `state_key` (hundreds of registers a state): one comprehension
    with the type test inline, not a call per register; `tests/test_explore.py` checks
    it against the pairwise key."""
    ndarray = np.ndarray
    return hash((tuple(env), tuple([v.tobytes() if isinstance(v, ndarray) else v for v in env.values()])))


class EnvKeys:
    """`_env_key` of register files, remembered by the identity of their slots' values: a
    state's copies share the values of their registers (`Warp.copy` copies the dicts, not
    the values, which are never changed in place), so the warps that did not run since
    the last state keyed keep theirs, and only the one that ran hashes its arrays' bytes
    again. An entry holds the values it names, so their ids stay theirs while it lives.
    Entries live two breadth-first levels (`next_level`): the states of one level and
    their successors, not every state met."""

    __slots__ = ("current", "previous")

    def __init__(self) -> None:
        self.current: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[Any, ...], int]] = {}
        self.previous: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[Any, ...], int]] = {}

    def __call__(self, env: dict[int, Any]) -> int:
        values = tuple(env.values())
        names = (tuple(env), tuple(map(id, values)))
        entry = self.current.get(names)
        if entry is None:
            entry = self.previous.get(names)
            if entry is None:
                entry = (values, _env_key(env))
            self.current[names] = entry
        return entry[1]

    def next_level(self) -> None:
        self.previous, self.current = self.current, {}


_LIVE_KEY = attrgetter("lane_set", "column_set", "writes", "comp", "epoch", "pipe", "issuer")
"""A live TMEM access in the key (tens a state: one C call each, not a tuple display)."""


def state_key(run: ClusterRun, env_keys: Callable[[dict[int, Any]], int] = _env_key) -> int:
    """The control and synchronisation state (module docstring). `env_keys` gives a
    register file's key (an `EnvKeys`, or `_env_key` itself)."""
    parts: list[Any] = []
    envs: dict[int, int] = {}
    for warp in run.warps:
        frames: list[Any] = [warp.control_key()] if isinstance(warp, PtxWarp) else []
        for frame in warp.stack:
            env = frame.env
            if id(env) not in envs:
                envs[id(env)] = env_keys(env)
            if isinstance(frame, BlockFrame):
                mask = None if frame.mask is warp.live else frame.mask.tobytes()
                frames.append((id(frame.block), frame.pc, mask, envs[id(env)]))
            else:
                frames.append((id(frame.planned.op), frame.sends, frame.pending is not None))
        clock = warp.clock
        parts.append(
            (
                warp.status,
                _spin_key(warp),
                tuple(frames),
                warp.op_state if isinstance(warp.op_state, int | None) else id(warp.op_state),
                warp.cluster_arrival,
                clock.vc.tobytes(),
                clock.vc_tc.tobytes(),
                clock.fenced,
                tuple(sorted(warp.seen_phases.items())),
                tuple((r.column_set, r.lane_set, r.writes, r.epoch) for r in warp.pending_tmem),
                None if warp.bulk_reads is None else warp.bulk_reads.key(),
                tuple((key, hold.initialised) for key, hold in sorted(warp.mma_stages.items())),
            )
        )
    state = run.state
    for cta in state.ctas:
        parts.append(
            (
                tuple(sorted(cta.allocator.allocations.items())),
                cta.allocator.relinquished,
                tuple(
                    (
                        offset,
                        b.expected,
                        b.pending,
                        b.tx,
                        b.completed,
                        _clock(b.clock),
                        _clock(b.history[-1] if b.history else None),
                        b.invalidated is not None,
                    )
                    for offset, b in sorted(cta.mbarriers.items())
                ),
                tuple(_named_key(i, b) for i, b in sorted(cta.named.items())),
                tuple((len(c.ops), tuple(c.barriers), _clock(c.clock)) for c in cta.commits),
                tuple((t, len(r)) for t, r in sorted(cta.inflight.items())),
                tuple(map(_LIVE_KEY, chain.from_iterable(cta.tmem_live))),
                cta.exited_at is not None,
                cta.cta_group,
            )
        )
    parts.append(
        (
            state.cluster_barrier.arrived,
            state.cluster_barrier.generation,
            tuple(state.tc_count),
            tuple(sorted((even, tuple(sorted(p))) for even, p in state.pair_allocs.items())),
        )
    )
    return hash(tuple(parts))


def _spin_key(warp: Warp) -> tuple[bool, int, int]:
    """What decides whether a warp whose barrier test failed runs again (executor.py,
    `wake_spinning`): whether it is spinning now (its failed test is the last change, so it
    is not runnable), the op of that test, and the test it was last woken from. Both are
    part of the key: a spin loop `L: test_wait p; @!p bra L` that nobody releases goes
    from running (S0) to spinning (S1), is woken once and fails again (S2, woken from
    that test): S0, S1 and S2 have the same positions, registers and barriers, but S1 is
    woken when nothing else runs and S2 is a deadlock; without the two parts S1 and S2
    would be pruned as S0 and the search would report SAFE for a kernel that hangs
    (`tests/test_explore.py::test_a_spin_loop_nobody_releases_is_a_deadlock`). Ops are
    shared by every copy of a state, so their ids are stable keys."""
    spinning = warp.status is Status.READY and warp.poll_version == warp.cluster.version
    woken = warp.spin_woken
    return spinning, id(warp.blocked_op) if spinning else 0, 0 if woken is None else id(woken)


def _named_key(number: int, bar: NamedBarrier) -> tuple[Any, ...]:
    """A named barrier: its count, generation and clock, the votes of `bar.red` (current
    and of the generation its waiters read) and the warps partly arrived."""
    partial = tuple(
        (w, p.lanes.tobytes(), p.waiting.tobytes(), p.votes, p.generation) for w, p in sorted(bar.partial.items())
    )
    last = bar.reduced.get(bar.generation - 1)
    return (number, bar.expected, bar.arrived, bar.generation, _clock(bar.clock), bar.votes, last, partial)


def _clock(clock: Any) -> bytes | None:
    return None if clock is None else clock.tobytes()
