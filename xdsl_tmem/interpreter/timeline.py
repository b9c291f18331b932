"""A run's timeline as a picture (PNG or SVG, drawn with matplotlib): `xdsl-tmem-run --timeline`.

It draws the events a `Tracer` collected (the Perfetto JSON of `--trace` holds the same),
on the same clock: one warp-instruction step is one unit of time.

* top: one lane per warp, per tensor core and (when the CTA issues any) per TMA engine.
  A warp's turns are coloured by the synchronising op they start with (MMA issue,
  tcgen05.ld / st, mbarrier and barrier ops, TMA, the rest); a hatched bar is a wait on a
  barrier. The tensor core's lane shows each MMA or tcgen05.cp in flight from its issue
  to the completion of its commit (overlapping ones darken) and a tick per completed
  commit; a thin bar under a warp's lane is a tcgen05.ld / st in flight until its wait.
  The TMA lane has a mark per box copy (the model completes a copy at its issue).
* middle (tmem-level programs): who owns each accumulator stage over time.
* bottom: each mbarrier's completed phases.
* a hazard is a red line at the step it happened, with its class, and a cross on the turn
  that raised it; a deadlock marks every wait that was never released.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, cast

from xdsl_tmem.interpreter.trace import CORE_TID, EPILOGUE, FREE, MMA_WARP, TENSOR_CORE

FORMATS = (".png", ".svg")
MAX_LANES = 48
"""Lanes drawn at most (a large grid has thousands of warps): the figure says when more exist."""
TMA_TID = CORE_TID + 1

_MMA, _LDST, _COPY, _RING, _BARRIER = (
    ("#4c72b0", "MMA issue"),
    ("#55a868", "tcgen05.ld / st / wait"),
    ("#8172b2", "TMA / async copy"),
    ("#937860", "stage acquire / release"),
    ("#dd8452", "mbarrier / barrier"),
)
_TURN_STYLES = (  # by substring of the op name, first match; tmem, NVVM and PTX spellings
    (("tcgen05.mma", "tcgen05_mma"), _MMA),
    (("tcgen05.ld", "tcgen05.st", "tcgen05.wait", "tmem_stage.", "wait_load", "wait_store"), _LDST),
    (("tcgen05_ld", "tcgen05_st", "tcgen05_wait"), _LDST),
    (("cp.async", "cp_async", "cp_reduce", "cp.reduce"), _COPY),
    (("output_ring.", "warp_context."), _RING),
    (("mbarrier", "barrier", "bar_"), _BARRIER),
)
_TMA_OPS = ("cp.async.bulk", "cp_async_bulk", "cp.reduce.async.bulk", "cp_reduce_async_bulk")
_OTHER = ("#c8c8c8", "other turn")
_OWNER_COLOURS = {FREE: "#ffffff", MMA_WARP: "#4c72b0", TENSOR_CORE: "#8172b2", EPILOGUE: "#55a868"}
_OWNER_NAMES = {FREE: "free", MMA_WARP: "MMA warp", TENSOR_CORE: "tensor core", EPILOGUE: "epilogue"}


def turn_style(name: str) -> tuple[str, str]:
    """(colour, legend label) of a turn that starts with op `name`."""
    for keys, style in _TURN_STYLES:
        if any(key in name for key in keys):
            return style
    return _OTHER


@dataclass
class _Lanes:
    """The events of a trace, sorted into what each panel draws."""

    names: dict[tuple[int, int], str] = field(default_factory=dict[tuple[int, int], str])
    turns: dict[tuple[int, int], list[tuple[int, int, str]]] = field(
        default_factory=lambda: defaultdict[tuple[int, int], list[tuple[int, int, str]]](list)
    )
    waits: dict[tuple[int, int], list[tuple[int, int, bool]]] = field(
        default_factory=lambda: defaultdict[tuple[int, int], list[tuple[int, int, bool]]](list)
    )
    flights: dict[tuple[int, int], list[tuple[int, int, str]]] = field(
        default_factory=lambda: defaultdict[tuple[int, int], list[tuple[int, int, str]]](list)
    )
    commits: dict[tuple[int, int], list[int]] = field(
        default_factory=lambda: defaultdict[tuple[int, int], list[int]](list)
    )
    failed: list[tuple[tuple[int, int], int]] = field(default_factory=list[tuple[tuple[int, int], int]])
    counters: dict[tuple[int, str], list[tuple[int, int]]] = field(
        default_factory=lambda: defaultdict[tuple[int, str], list[tuple[int, int]]](list)
    )
    end: int = 1


def _collect(events: Sequence[dict[str, Any]]) -> _Lanes:
    lanes = _Lanes()
    processes: dict[int, str] = {}
    begins: dict[int, dict[str, Any]] = {}
    for e in events:
        ph, pid = e["ph"], e["pid"]
        if ph == "M" and e["name"] == "process_name":
            processes[pid] = e["args"]["name"]
        elif ph == "M" and e["name"] == "thread_name":
            lanes.names[pid, e["tid"]] = e["args"]["name"]
        elif ph == "X":
            start, end, key = e["ts"], e["ts"] + e["dur"], (pid, e["tid"])
            lanes.end = max(lanes.end, end)
            if e["cat"] == "wait":
                lanes.waits[key].append((start, end, bool(e["args"].get("never released"))))
                continue
            lanes.turns[key].append((start, end, e["name"]))
            if any(op in e["name"] for op in _TMA_OPS):
                lanes.turns[pid, TMA_TID].append((start, start + 1, e["name"]))
            if e["args"].get("failed"):
                lanes.failed.append((key, end))
        elif ph == "b":
            begins[e["id"]] = e
        elif ph == "e":
            b = begins.pop(e["id"])
            lanes.flights[pid, e["tid"]].append((b["ts"], e["ts"], b["args"]["op"]))
        elif ph == "i":
            lanes.commits[pid, e["tid"]].append(e["ts"])
        elif ph == "C":
            value = e["args"].get("owner", e["args"].get("completed phases", 0))
            lanes.counters[pid, e["name"]].append((e["ts"], value))
    for pid, _tid in list(lanes.turns):
        if (pid, TMA_TID) in lanes.turns:
            lanes.names[pid, TMA_TID] = "TMA engine"
    for (pid, tid), name in list(lanes.names.items()):
        lanes.names[pid, tid] = f"{processes.get(pid, f'CTA {pid}').split(' rank')[0]} {name}"
    return lanes


def render(events: Sequence[dict[str, Any]], path: Path, title: str, failure: str | None = None) -> str | None:
    """Draw the timeline of `events` (a `Tracer`'s) into `path` (.png or .svg). `failure`
    names what ended the run (a hazard class, a deadlock). Returns a note when lanes
    were left out (more than `MAX_LANES`), else None."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    matplotlib.rcParams["svg.fonttype"] = "none"  # SVG text stays text (searchable, smaller)
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    lanes = _collect(events)
    keys = sorted(lanes.names)
    shown = keys[:MAX_LANES]
    stages = sorted(k for k in lanes.counters if k[1].startswith("stage "))
    barriers = sorted(k for k in lanes.counters if k[1].startswith("mbarrier "))[:12]
    heights = [max(2.0, 0.32 * len(shown))] + ([0.25 * len(stages) + 0.6] if stages else []) + [1.6]
    fig, axes = plt.subplots(
        len(heights), 1, sharex=True, figsize=(13, sum(heights) + 1.2), height_ratios=heights, squeeze=False
    )
    ax = axes[0][0]
    row = {key: len(shown) - 1 - i for i, key in enumerate(shown)}
    used: dict[str, str] = {}
    for key in shown:
        y = row[key]
        by_colour: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for start, end, name in lanes.turns.get(key, []):
            colour, label = turn_style(name)
            used[label] = colour
            by_colour[colour].append((start, max(end - start, 1)))
        for colour, spans in by_colour.items():
            ax.broken_barh(spans, (y - 0.35, 0.7), facecolors=colour, linewidth=0)
        for start, end, never in lanes.waits.get(key, []):
            ax.broken_barh([(start, max(end - start, 1))], (y - 0.3, 0.6), facecolors="none",
                           edgecolors="#c44e52" if never else "#999999", hatch="////", linewidth=0.6)  # fmt: skip
        flights = lanes.flights.get(key, [])
        if key[1] == CORE_TID:
            ax.broken_barh([(s, max(e - s, 1)) for s, e, _ in flights], (y - 0.35, 0.7),
                           facecolors="#4c72b0", alpha=0.25, linewidth=0)  # fmt: skip
            ax.vlines(lanes.commits.get(key, []), y - 0.4, y + 0.4, colors="black", linewidth=0.8)
        elif flights:
            ax.broken_barh([(s, max(e - s, 1)) for s, e, _ in flights], (y - 0.48, 0.12),
                           facecolors="#55a868", linewidth=0)  # fmt: skip
    for key, end in lanes.failed:
        if key in row:
            ax.plot([end], [row[key]], marker="X", color="#c44e52", markersize=12, markeredgecolor="black")
    ax.set_yticks([row[k] for k in shown], [lanes.names[k] for k in shown], fontsize=8)
    ax.set_ylim(-0.7, len(shown) - 0.3)
    handles = [Patch(facecolor=c, label=label) for label, c in used.items()]
    handles += [Patch(facecolor="none", hatch="////", edgecolor="#999999", label="waiting on a barrier"),
                Patch(facecolor="none", hatch="////", edgecolor="#c44e52", label="wait never released"),
                Patch(facecolor="#4c72b0", alpha=0.25, label="MMA / cp in flight (tensor core)"),
                Line2D([], [], color="black", linewidth=0.8, label="commit completes"),
                Patch(facecolor="#55a868", label="tcgen05.ld / st in flight (thin)")]  # fmt: skip
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    ax.set_title(title, fontsize=10, loc="left")
    note = None
    if len(keys) > len(shown):
        note = f"the timeline shows the first {len(shown)} of {len(keys)} lanes (warps, tensor cores, TMA engines)"
        ax.text(0.0, -0.02, note, transform=ax.transAxes, fontsize=8, va="top", color="#555555")
    panel = 1
    if stages:
        _stage_panel(axes[panel][0], stages, lanes, Patch)
        panel += 1
    _barrier_panel(axes[panel][0], barriers, lanes)
    axes[panel][0].yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[-1][0].set_xlabel("warp-instruction step")
    axes[-1][0].set_xlim(0, lanes.end + 1)
    if failure is not None:
        when = max((end for _, end in lanes.failed), default=lanes.end)
        for row_axes in axes:
            row_axes[0].axvline(when, color="#c44e52", linewidth=1.5)
        ax.annotate(failure, (when, len(shown) - 0.3), xytext=(-6, 4), textcoords="offset points", ha="right",
                    va="bottom", color="#c44e52", fontsize=9, fontweight="bold", annotation_clip=False)  # fmt: skip
    fig.tight_layout()
    cast(Any, fig).savefig(path, dpi=110)
    plt.close(fig)
    return note


def _stage_panel(ax: Any, stages: list[tuple[int, str]], lanes: _Lanes, patch: Any) -> None:
    for y, key in enumerate(reversed(stages)):
        samples = lanes.counters[key] + [(lanes.end, -1)]
        for (start, owner), (end, _) in pairwise(samples):
            if owner != FREE:
                ax.broken_barh([(start, max(end - start, 1))], (y - 0.35, 0.7), facecolors=_OWNER_COLOURS[owner])
    labels = [f"CTA {key[0]} {key[1].split(' owner')[0]} ({key[1].rsplit(' at ', 1)[-1]})" for key in reversed(stages)]
    ax.set_yticks(range(len(stages)), labels, fontsize=8)
    ax.set_ylim(-0.7, len(stages) - 0.3)
    ax.legend(handles=[patch(facecolor=_OWNER_COLOURS[o], label=f"owned by the {_OWNER_NAMES[o]}")
                       for o in (MMA_WARP, TENSOR_CORE, EPILOGUE)],
              loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)  # fmt: skip


def _barrier_panel(ax: Any, barriers: list[tuple[int, str]], lanes: _Lanes) -> None:
    for key in barriers:
        samples = lanes.counters[key]
        ax.step([t for t, _ in samples] + [lanes.end], [v for _, v in samples] + [samples[-1][1]], where="post",
                label=key[1].removeprefix("mbarrier "), linewidth=1)  # fmt: skip
    ax.set_ylabel("completed\nphases", fontsize=8)
    if barriers:
        ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7, ncols=1 + len(barriers) // 7)
