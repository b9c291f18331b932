"""`--trace FILE.json`: the file is a valid Chrome trace (checked against a JSON schema of
the Trace Event Format and the nesting rules Perfetto's importer enforces), and what it
shows agrees with the program text and the pipeline semantics.

Sources of the expectations:
* the Trace Event Format (Google, "Trace Event Format" document, the format Perfetto's
  JSON importer reads): an object with `traceEvents`; every event has `name`, `ph`,
  `pid`; `X` complete events carry `ts` and `dur` (µs); `b`/`e` nestable async events
  pair up by `cat`, `id` and `name`; `C` counters carry numeric `args`; `i` instants a
  scope `s` in g/p/t; `M` metadata names processes and threads.
* Perfetto drops `X` slices on one thread that overlap without nesting, so ours must not.
* examples/matmul_cg1.mlir with ntiles=4: 2 MMAs per tile (K = 32 in two K = 16 steps)
  under one commit each; each of the 4 epilogue warps issues 8 x 2 tcgen05.ld per tile;
  2 stages, so each stage makes 2 laps of MMA warp → tensor core → epilogue → free;
  docs/semantics.md §4: the full barrier (count 1) completes once per commit, the empty
  barrier once per lap when all epilogue warps arrived.
"""

from __future__ import annotations

import json
import shlex
from collections import defaultdict
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from support import CLEAN, CORPUS, SCHEDULES, run_cli

from xdsl_tmem.tools.run import EXIT_DEADLOCK, EXIT_OK

Event = dict[str, Any]

_NUMBER = {"type": "number", "minimum": 0}
_INT = {"type": "integer", "minimum": 0}
TRACE_EVENT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "traceEvents": {"type": "array", "items": {"$ref": "#/$defs/event"}},
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "otherData": {"type": "object"},
    },
    "$defs": {
        "event": {
            "type": "object",
            "required": ["name", "ph", "pid"],
            "properties": {
                "name": {"type": "string", "minLength": 1},
                "cat": {"type": "string"},
                "ph": {"enum": ["X", "B", "E", "b", "n", "e", "i", "I", "C", "M", "s", "t", "f", "P", "O", "N", "D"]},
                "ts": _NUMBER,
                "dur": _NUMBER,
                "pid": _INT,
                "tid": _INT,
                "id": {"type": ["integer", "string"]},
                "args": {"type": "object"},
            },
            "allOf": [
                {"if": {"properties": {"ph": {"const": "X"}}}, "then": {"required": ["ts", "dur", "tid"]}},
                {"if": {"properties": {"ph": {"enum": ["b", "e"]}}}, "then": {"required": ["ts", "cat", "id"]}},
                {
                    "if": {"properties": {"ph": {"const": "i"}}},
                    "then": {"required": ["ts", "tid"], "properties": {"s": {"enum": ["g", "p", "t"]}}},
                },
                {
                    "if": {"properties": {"ph": {"const": "C"}}},
                    "then": {
                        "required": ["ts", "args"],
                        "properties": {"args": {"additionalProperties": {"type": "number"}, "minProperties": 1}},
                    },
                },
                {
                    "if": {"properties": {"ph": {"const": "M"}}},
                    "then": {
                        "required": ["args"],
                        "properties": {
                            "name": {"enum": ["process_name", "process_sort_index", "thread_name", "thread_sort_index"]}
                        },
                    },
                },
            ],
        }
    },
}


def check_trace_format(document: dict[str, Any]) -> list[Event]:
    """Schema, X nesting per thread, b/e pairing, and named tracks; returns the events."""
    jsonschema.validate(document, TRACE_EVENT_SCHEMA)
    events: list[Event] = document["traceEvents"]
    # X slices of one thread nest: sorted by (start, -duration), each starts at or after
    # the end of every open slice it does not lie inside.
    by_thread: dict[tuple[int, int], list[Event]] = defaultdict(list)
    for e in events:
        if e["ph"] == "X":
            by_thread[e["pid"], e["tid"]].append(e)
    for thread, slices in by_thread.items():
        open_ends: list[float] = []
        for e in sorted(slices, key=lambda e: (e["ts"], -e["dur"])):
            while open_ends and open_ends[-1] <= e["ts"]:
                open_ends.pop()
            assert not open_ends or e["ts"] + e["dur"] <= open_ends[-1], f"{e} overlaps a slice of {thread}"
            open_ends.append(e["ts"] + e["dur"])
    # b/e pairs: one begin and one later end per (cat, id, name).
    pairs: dict[tuple[str, Any, str], list[Event]] = defaultdict(list)
    for e in events:
        if e["ph"] in "be":
            pairs[e["cat"], e["id"], e["name"]].append(e)
    for key, pair in pairs.items():
        assert [e["ph"] for e in pair] == ["b", "e"], key
        assert pair[1]["ts"] > pair[0]["ts"], key
    # Every thread with events has a name, and so has every process.
    threads = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    processes = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    for e in events:
        if e["ph"] in "Xbei":
            assert (e["pid"], e["tid"]) in threads, e
        assert e["pid"] in processes, e
    return events


def _trace(capsys: pytest.CaptureFixture[str], tmp_path: Path, path: Path, launch: str, *flags: str):
    out = tmp_path / "trace.json"
    result = run_cli(capsys, str(path), *shlex.split(launch), "--trace", str(out), *flags)
    assert out.exists(), result.err
    return result, check_trace_format(json.loads(out.read_text()))


def _columns(e: Event) -> range:
    low, high = json.loads(e["args"]["TMEM columns"].replace(")", "]"))
    return range(low, high)


@pytest.mark.parametrize(("path", "launch"), CLEAN, ids=[p.stem for p, _ in CLEAN])
def test_every_example_writes_a_valid_trace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, path: Path, launch: str
) -> None:
    result, events = _trace(capsys, tmp_path, path, launch)
    assert result.code == EXIT_OK
    names = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
    # 160-thread examples have warps 0-4, the fp8 one (192 threads) 0-5; all have a tensor core.
    assert {f"warp {w}" for w in range(5)} | {"tensor core"} <= names


def test_the_cg1_timeline_matches_the_program(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path, launch = CLEAN[0]
    _, events = _trace(capsys, tmp_path, path, launch)
    begins = [e for e in events if e["ph"] == "b"]
    ends = {e["id"]: e["ts"] for e in events if e["ph"] == "e"}
    mmas = [e for e in begins if e["name"] == "mma in flight"]
    loads = [e for e in begins if e["name"] == "ld in flight"]
    assert len(mmas) == 4 * 2
    assert len(loads) == 4 * 4 * 8 * 2
    assert {e["tid"] for e in mmas} == {1000}  # the tensor core's track
    assert {e["tid"] for e in loads} == {0, 1, 2, 3}  # the epilogue warps
    # No load is in flight while an MMA writing its columns is, and each follows one.
    for load in loads:
        for mma in mmas:
            if set(_columns(load)) & set(_columns(mma)):
                assert ends[mma["id"]] <= load["ts"] or ends[load["id"]] <= mma["ts"], (load, mma)
    commits = [e for e in events if e["ph"] == "i"]
    assert [e["name"] for e in commits] == [f"commit {n} completes" for n in range(1, 5)]
    # The MMAs of tile t end when commit t completes.
    assert sorted({ends[m["id"]] for m in mmas}) == [e["ts"] for e in commits]

    owners: dict[str, list[int]] = defaultdict(list)
    for e in events:
        if e["ph"] == "C" and "owner" in e["args"]:
            owners[e["name"]].append(e["args"]["owner"])
    assert len(owners) == 2
    for sequence in owners.values():
        assert sequence == [1, 2, 3, 0] * 2

    completed: dict[str, int] = {}
    for e in events:
        if e["ph"] == "C" and "completed phases" in e["args"]:
            completed[e["name"]] = e["args"]["completed phases"]
    assert completed == {
        "mbarrier @accum_bars[0]": 2,  # full[0]: commits of tiles 0 and 2
        "mbarrier @accum_bars[1]": 2,
        "mbarrier @accum_bars[2]": 2,  # empty[0]: laps 1 and 2 released
        "mbarrier @accum_bars[3]": 2,
        "mbarrier @dealloc_bar": 1,
    }


def test_a_deadlock_trace_shows_the_waits_that_never_end(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = CORPUS / "missing_commit.mlir"
    launch = CLEAN[3][1]  # the reference pipeline's launch
    result, events = _trace(capsys, tmp_path, path, launch)
    assert result.code == EXIT_DEADLOCK
    stuck = {e["tid"]: e["name"] for e in events if e["ph"] == "X" and e["args"].get("never released")}
    # Without the commit, full[0] never completes: the epilogue warps wait on it forever
    # (and the MMA warp on the TMEM deallocation barrier or empty stage behind them).
    assert {0, 1, 2, 3} <= set(stuck)
    assert all(stuck[w].startswith("wait ") for w in (0, 1, 2, 3))
    never = [e for e in events if e["ph"] == "b" and e["args"].get("never completed")]
    assert {e["name"] for e in never} == {"mma in flight"}


def test_explore_writes_the_failing_schedule(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = SCHEDULES / "alloc_order_deadlock.mlir"
    result, events = _trace(capsys, tmp_path, path, "--kernel k --block 64", "--explore", "exhaustive")
    assert result.code == EXIT_DEADLOCK
    stuck = {e["tid"] for e in events if e["ph"] == "X" and e["args"].get("never released")}
    assert stuck == {0, 1}  # warp 0 in its allocation, warp 1 on the mbarrier


@pytest.mark.parametrize(
    "bad",
    [
        [{"name": "a", "ph": "X", "ts": 0, "dur": 10, "pid": 0, "tid": 0},
         {"name": "b", "ph": "X", "ts": 5, "dur": 10, "pid": 0, "tid": 0}],  # overlap without nesting
        [{"name": "a", "ph": "b", "cat": "c", "id": 1, "ts": 5, "pid": 0, "tid": 0}],  # no end
        [{"name": "a", "ph": "C", "ts": 5, "pid": 0, "args": {"x": "high"}}],  # non-numeric counter
        [{"name": "a", "ph": "X", "ts": 0, "pid": 0, "tid": 0}],  # no duration
    ],
)  # fmt: skip
def test_the_format_check_rejects_what_perfetto_would_not_show(bad: list[Event]) -> None:
    names = [{"name": "process_name", "ph": "M", "pid": 0, "args": {"name": "p"}},
             {"name": "thread_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": "t"}}]  # fmt: skip
    with pytest.raises((AssertionError, jsonschema.ValidationError)):
        check_trace_format({"traceEvents": names + bad})
