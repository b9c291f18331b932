"""A timeline of a run in the Chrome trace-event format (JSON), which Perfetto opens.

Time is the cluster's instruction counter: one warp-instruction step is shown as one
microsecond (clusters of a grid follow each other). Each CTA is a process with one
thread track per warp and one for its tensor core:

* a slice per turn of a warp, named after the synchronising op it starts with (the
  ops after it, up to the next one, are part of the turn);
* a `wait …` slice while a warp is blocked (on an mbarrier phase, a named or the
  cluster barrier, TMEM columns), with the reason;
* an async slice for each tcgen05 operation in flight: an MMA or copy from its issue to
  the completion of the commit that tracks it (under the tensor core), a tcgen05.ld / st
  from its issue to the warp's wait::ld / wait::st;
* an instant on the tensor core's track for each commit it completes.

Counter tracks: each mbarrier's completed phases and pending count, and, for
programs at the tmem level (whose output rings say which barriers form a stage), which
role owns each accumulator stage: 0 free, 1 the MMA warp (acquired, MMAs being
issued), 2 the tensor core (committed, MMAs in flight), 3 the epilogue (acquired by a
consumer until its last warp releases it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl_tmem.interpreter.executor import Agent, Status, TensorCore, Warp
from xdsl_tmem.interpreter.machine import OFFSET_MASK, Cluster, Wake

FREE, MMA_WARP, TENSOR_CORE, EPILOGUE = range(4)
OWNER_LEGEND = "0 free, 1 MMA warp, 2 tensor core, 3 epilogue"
CORE_TID = 1000
"""Thread id of a CTA's tensor-core track (warps use their index)."""


@dataclass
class _Turn:
    agent: Agent
    name: str
    start: int


@dataclass
class _Stage:
    owner: int = FREE
    consumers: int = 0
    """Consumer warps that acquired the stage and have not released it."""
    shown: int | None = None
    """The owner the counter track last showed."""


@dataclass
class Tracer:
    """Collects the events of one launch (`run_launch(..., tracer=)`); `write` saves them."""

    events: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    _state: Cluster | None = None
    _pid_base: int = 0
    _offset: int = 0
    """Time of the current cluster's step 0."""
    _turn: _Turn | None = None
    _waits: dict[int, tuple[int, str, str]] = field(default_factory=dict[int, tuple[int, str, str]])
    """Blocked warps (by id): (start, slice name, reason)."""
    _barriers: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict[tuple[int, int], tuple[int, int]])
    _stages: dict[tuple[int, int, int], _Stage] = field(default_factory=dict[tuple[int, int, int], _Stage])
    _commits: list[int] = field(default_factory=list[int])
    _next_id: int = 0

    # -- the run's side ---------------------------------------------------------------------

    def start_cluster(self, state: Cluster, warps: list[Warp], cores: list[TensorCore]) -> None:
        self._state = state
        state.on_stage = self._on_stage
        self._commits = [0] * len(state.ctas)
        for cta in state.ctas:
            x, y, z = cta.ctaid
            self._meta("process_name", cta.rank, None, f"CTA ({x}, {y}, {z}) rank {cta.rank}")
            self._meta("process_sort_index", cta.rank, None, sort_index=self._pid_base + cta.rank)
        for warp in warps:
            self._meta("thread_name", warp.cta.rank, warp.index, f"warp {warp.index}")
        for core in cores:
            self._meta("thread_name", core.cta.rank, CORE_TID, "tensor core")
        self._sample()

    def turn_started(self, agent: Agent) -> None:
        op = agent.next_op()
        self._turn = _Turn(agent, op.name if op is not None else "exit", self._now())
        if isinstance(agent, Warp) and id(agent) in self._waits:
            start, name, reason = self._waits.pop(id(agent))
            self._slice(agent.cta.rank, agent.index, name, start, self._now(), "wait", {"reason": reason})

    def turn_ended(self, agent: Agent) -> None:
        turn, self._turn = self._turn, None
        assert turn is not None
        if isinstance(agent, TensorCore):
            rank = agent.cta.rank
            self._commits[rank] += 1
            self._instant(rank, CORE_TID, f"commit {self._commits[rank]} completes", {"op": turn.name})
        else:
            if self._now() > turn.start:
                self._slice(agent.cta.rank, agent.index, turn.name, turn.start, self._now(), "turn", {})
            if agent.status is Status.BLOCKED and agent.wake is not None:
                self._waits[id(agent)] = (self._now(), self._wait_name(agent.wake), agent.blocked_reason)
        self._sample()

    def end_cluster(self, warps: list[Warp], failed: bool) -> None:
        """Close what is still open (a failed run's last turn, waits of a deadlock) and add
        the in-flight intervals."""
        state = self._state
        assert state is not None
        end = self._now()
        if self._turn is not None and isinstance(self._turn.agent, Warp):
            warp = self._turn.agent
            self._slice(warp.cta.rank, warp.index, self._turn.name, self._turn.start, max(end, self._turn.start + 1),
                        "turn", {"failed": failed})  # fmt: skip
        self._turn = None
        for warp in warps:
            if id(warp) in self._waits:
                start, name, reason = self._waits.pop(id(warp))
                self._slice(warp.cta.rank, warp.index, name, start, max(end, start + 1), "wait",
                            {"reason": reason, "never released": True})  # fmt: skip
        for record in state.async_log:
            tid = CORE_TID if record.pipe else record.warp
            done = record.complete_step
            args = {
                "op": record.op.name,
                "issued by": f"warp {record.warp}" + (f" lane {record.lane}" if record.lane >= 0 else ""),
                "TMEM lanes": f"[{record.lanes[0]}, {record.lanes[1]})",
                "TMEM columns": f"[{record.columns[0]}, {record.columns[1]})",
            }
            if done is None:
                args["never completed"] = True
            self._async(record.cta, tid, f"{record.kind} in flight", record.issue_step, end if done is None else done,
                        args)  # fmt: skip
        self._pid_base += len(state.ctas)
        self._offset += state.step + 1
        state.on_stage = None
        self._state = None
        self._barriers.clear()
        self._stages.clear()

    # -- output -------------------------------------------------------------------------------

    def document(self) -> dict[str, Any]:
        return {
            "traceEvents": self.events,
            "otherData": {"producer": "xdsl-tmem-run --trace", "time unit": "1 us = 1 warp-instruction step"},
        }

    def write(self, path: Path) -> None:
        path.write_text(json.dumps(self.document(), separators=(",", ":")))

    # -- helpers --------------------------------------------------------------------------------

    def _now(self) -> int:
        assert self._state is not None
        return self._state.step

    def _pid(self, rank: int) -> int:
        return self._pid_base + rank

    def _meta(self, name: str, rank: int, tid: int | None, label: str = "", sort_index: int = 0) -> None:
        event: dict[str, Any] = {"name": name, "ph": "M", "pid": self._pid(rank)}
        if tid is not None:
            event["tid"] = tid
        event["args"] = {"sort_index": sort_index} if name.endswith("sort_index") else {"name": label}
        self.events.append(event)

    def _slice(self, rank: int, tid: int, name: str, start: int, end: int, cat: str, args: dict[str, Any]) -> None:
        self.events.append({
            "name": name, "cat": cat, "ph": "X", "ts": self._offset + start, "dur": end - start,
            "pid": self._pid(rank), "tid": tid, "args": args,
        })  # fmt: skip

    def _instant(self, rank: int, tid: int, name: str, args: dict[str, Any]) -> None:
        self.events.append({
            "name": name, "cat": "commit", "ph": "i", "s": "t", "ts": self._offset + self._now(),
            "pid": self._pid(rank), "tid": tid, "args": args,
        })  # fmt: skip

    def _async(self, rank: int, tid: int, name: str, start: int, end: int, args: dict[str, Any]) -> None:
        self._next_id += 1
        common = {"name": name, "cat": "in flight", "id": self._next_id, "pid": self._pid(rank), "tid": tid}
        self.events.append({**common, "ph": "b", "ts": self._offset + start, "args": args})
        self.events.append({**common, "ph": "e", "ts": self._offset + max(end, start + 1)})

    def _counter(self, rank: int, name: str, args: dict[str, int]) -> None:
        self.events.append({"name": name, "ph": "C", "ts": self._offset + self._now(), "pid": self._pid(rank),
                            "args": args})  # fmt: skip

    def _wait_name(self, wake: Wake) -> str:
        assert self._state is not None
        match wake.kind:
            case "phase":
                return f"wait {self._state.ctas[wake.cta].describe(wake.key)}"
            case "named":
                return f"wait bar.sync {wake.key}"
            case "cluster":
                return "wait cluster barrier"
            case _:
                return "wait tcgen05.alloc"

    def _sample(self) -> None:
        """Counter events for the mbarriers that changed since the last sample."""
        assert self._state is not None
        for cta in self._state.ctas:
            for offset, bar in cta.mbarriers.items():
                now = (bar.completed, bar.pending)
                if self._barriers.get((cta.rank, offset)) != now:
                    self._barriers[cta.rank, offset] = now
                    self._counter(cta.rank, f"mbarrier {cta.describe(offset)}",
                                  {"completed phases": bar.completed, "pending": bar.pending})  # fmt: skip

    def _on_stage(self, rank: int, barriers: int, index: int, event: str) -> None:
        key = (rank, barriers & OFFSET_MASK, index)
        stage = self._stages.setdefault(key, _Stage())
        match event:
            case "producer":
                stage.owner = MMA_WARP
            case "commit":
                stage.owner = TENSOR_CORE
            case "consumer":
                stage.owner, stage.consumers = EPILOGUE, stage.consumers + 1
            case _:
                stage.consumers -= 1
                if stage.consumers == 0:
                    stage.owner = FREE
        if stage.owner == stage.shown:
            return
        stage.shown = stage.owner
        assert self._state is not None
        name = f"stage {index} owner ({OWNER_LEGEND}) of the ring at {self._state.ctas[rank].describe(key[1])}"
        self._counter(rank, name, {"owner": stage.owner})
