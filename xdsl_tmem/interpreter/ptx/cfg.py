"""The control-flow graph of a decoded PTX kernel body and its immediate post-dominators:
where a warp whose lanes took different paths at a branch reconverges (docs/ptx-level.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

EXIT = -1
"""The virtual exit node (and, as a reconvergence pc, "never": the paths only meet at exit)."""


@dataclass(frozen=True)
class Flow:
    """How one instruction passes control on: `targets` it may jump to, whether it may
    fall through to the next instruction, whether it may leave the kernel (`ret`)."""

    targets: tuple[int, ...] = ()
    falls_through: bool = True
    exits: bool = False


def basic_blocks(flows: Sequence[Flow]) -> list[int]:
    """The first instruction of each basic block, in order."""
    leaders = {0} if flows else set[int]()
    for i, flow in enumerate(flows):
        leaders.update(flow.targets)
        if flow.targets or flow.exits or not flow.falls_through:
            leaders.add(i + 1)
    return sorted(x for x in leaders if x < len(flows))


def reconvergence_points(flows: Sequence[Flow]) -> dict[int, int]:
    """For each instruction that may branch, the first instruction of the immediate
    post-dominator of its block (`EXIT` when the paths only meet at the kernel's exit)."""
    n = len(flows)
    leaders = basic_blocks(flows)
    block_of: dict[int, int] = {}
    for b, start in enumerate(leaders):
        end = leaders[b + 1] if b + 1 < len(leaders) else n
        for i in range(start, end):
            block_of[i] = b
    exit_node = len(leaders)
    succ: list[set[int]] = []
    for b in range(len(leaders)):
        last = (leaders[b + 1] if b + 1 < len(leaders) else n) - 1
        flow = flows[last]
        out = {block_of[t] if t < n else exit_node for t in flow.targets}
        if flow.falls_through:
            out.add(block_of[last + 1] if last + 1 < n else exit_node)
        if flow.exits:
            out.add(exit_node)
        succ.append(out)
    # Post-dominator sets by the classic iterative data flow (kernels are small).
    everything = frozenset(range(exit_node + 1))
    pdom: list[frozenset[int]] = [everything] * exit_node + [frozenset({exit_node})]
    changed = True
    while changed:
        changed = False
        for b in reversed(range(exit_node)):
            meet = everything
            for s in succ[b]:
                meet = meet & pdom[s]
            new = meet | {b} if succ[b] else frozenset({b})
            if new != pdom[b]:
                pdom[b], changed = new, True
    points: dict[int, int] = {}
    for b in range(len(leaders)):
        last = (leaders[b + 1] if b + 1 < len(leaders) else n) - 1
        if not flows[last].targets:
            continue
        strict = pdom[b] - {b}
        # The immediate post-dominator: the strict post-dominator that all others post-dominate.
        ipdom = next((d for d in strict if pdom[d] == strict), exit_node)
        points[last] = EXIT if ipdom == exit_node else leaders[ipdom]
    return points
