"""Seeded bugs: one mutation per synchronisation mistake of issue 14 (and the bulk store's source
reuse), applied to the client GEMMs.

Each mutation takes a client kernel's PTX text and returns the PTX with one protocol step broken.
The place is found by instruction, never by line number: a statement is one line of the
compilers' output (both put one instruction per line), read as `[@guard] opcode operands;`, and
each mutation names the instruction it looks for and how it picks among several (below). A
mutation whose pattern is not in a kernel raises `PatternAbsent` saying why.

`EXPECTED` states, for every client GEMM and mutation, what the broken protocol must give — a
hazard class of docs/verification.md, a deadlock, or no failure where the kernel does not rely
on the step — reasoned from the kernel's protocol (the PTX ISA's rules for tcgen05 and mbarriers),
not from running our tool. `tests/test_client_seeded.py` checks that every variant assembles
with ptxas and runs the ones the PTX level can execute; `benchmarks/compare_sentryward.py` gives
them to sentryward as well.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

GEMMS = [
    "triton/gemm_dot",
    "triton/gemm_tma_ws",
    "triton/gemm_persistent_ws",
    "cute/gemm_1cta",
    "cute/gemm_2cta",
]
"""The client GEMMs (`tests/clients/<name>.ptx`) the mutations apply to."""


class PatternAbsent(Exception):
    """The kernel has no instance of the pattern a mutation breaks."""


_STATEMENT = re.compile(r"^(?P<indent>\s*)(?P<guard>@!?%?[\w$]+\s+)?(?P<opcode>[a-z][\w:.]*)(?P<operands>[^;]*);\s*$")
_LABEL = re.compile(r"^\s*([$\w]+):")
_REGISTER = re.compile(r"%[\w$]+")
BARRIERS = (
    "bar.sync",
    "barrier.sync",
    "bar.arrive",
    "barrier.arrive",
    "barrier.cluster.arrive",
    "barrier.cluster.wait",
)
"""CTA- and cluster-wide thread barriers (PTX ISA: bar, barrier; barrier.cluster)."""


@dataclass(frozen=True)
class Statement:
    line: int
    """Index into the text's lines."""
    guard: str
    opcode: str
    operands: str

    def registers(self) -> list[str]:
        """Registers it names, its guard predicate included (`%tid.x` and the like are not registers)."""
        names = _REGISTER.findall(self.guard + " " + self.operands)
        return [n for n in names if "." not in n]

    def destination(self) -> str | None:
        """The register an ALU-style instruction writes: its first operand."""
        first = self.operands.strip().split(",")[0].strip()
        return first if _REGISTER.fullmatch(first) else None


def statements(lines: list[str]) -> list[Statement]:
    """Every instruction line of the text, in order (labels, directives and braces are not)."""
    found: list[Statement] = []
    for i, text in enumerate(lines):
        match = _STATEMENT.match(text)
        if match is None or text.lstrip().startswith("."):
            continue
        found.append(Statement(i, (match["guard"] or "").strip(), match["opcode"], match["operands"]))
    return found


def _is(statement: Statement, prefix: str) -> bool:
    return statement.opcode == prefix or statement.opcode.startswith(prefix + ".")


def _find(stmts: list[Statement], prefix: str) -> list[Statement]:
    return [s for s in stmts if _is(s, prefix)]


# --------------------------------------------------------------------------------------
# The mutations
# --------------------------------------------------------------------------------------


def remove_wait_ld(ptx: str) -> str:
    """Delete every `tcgen05.wait::ld`: the epilogue's `tcgen05.ld`s never complete before their
    registers are used and the accumulator is released or freed (PTX ISA, tcgen05.wait)."""
    lines = ptx.splitlines()
    waits = _find(statements(lines), "tcgen05.wait::ld")
    if not waits:
        raise PatternAbsent("no tcgen05.wait::ld")
    drop = {s.line for s in waits}
    return "\n".join(t for i, t in enumerate(lines) if i not in drop) + "\n"


def _slice(window: list[Statement], target: Statement) -> list[Statement]:
    """The statements of `window` that compute `target`'s operands and guard, transitively."""
    needed = set(target.registers())
    chosen: list[Statement] = []
    for s in reversed(window):
        if (dest := s.destination()) is not None and dest in needed and not s.guard:
            chosen.append(s)
            needed |= set(s.registers())
    return list(reversed(chosen))


def release_above_loads(ptx: str) -> str:
    """Move the accumulator release above the loads: the first `mbarrier.arrive` (not
    `expect_tx`) after the last `tcgen05.ld` of the epilogue's first load group, with the
    statements between that compute its operands and guard, goes just above the group's first
    `tcgen05.ld`. The stage is handed back to the MMA warp before the epilogue has read it."""
    lines = ptx.splitlines()
    stmts = statements(lines)
    loads = _find(stmts, "tcgen05.ld")
    if not loads:
        raise PatternAbsent("no tcgen05.ld")
    first = stmts.index(loads[0])
    last = first
    while last + 1 < len(stmts) and (
        _is(stmts[last + 1], "tcgen05.ld") or (stmts[last + 1].destination() is not None and not stmts[last + 1].guard)
    ):
        last += 1
    arrive = next(
        (
            (k, s)
            for k, s in enumerate(stmts[last + 1 :], last + 1)
            if _is(s, "mbarrier.arrive") and "expect_tx" not in s.opcode
        ),
        None,
    )
    if arrive is None:
        raise PatternAbsent("no mbarrier.arrive after the tcgen05.ld group: nothing releases the accumulator")
    k, target = arrive
    window = stmts[first + 1 : k]
    if any(_is(s, "bra") or _is(s, "ret") for s in window) or any(
        _LABEL.match(lines[i]) for i in range(stmts[first].line, target.line)
    ):
        raise PatternAbsent("the accumulator release is not in the loads' basic block")
    moved = [*_slice([s for s in window if not _is(s, "tcgen05.ld")], target), target]
    loaded = {r for s in window if _is(s, "tcgen05.ld") for r in _REGISTER.findall(s.operands.split("}")[0])}
    if any(r in loaded for s in moved for r in s.registers()):
        raise PatternAbsent("the release uses a value the loads produce")
    taken = {s.line for s in moved}
    out: list[str] = []
    for i, text in enumerate(lines):
        if i == stmts[first].line:
            out += [lines[s.line] for s in moved]
        if i not in taken:
            out.append(text)
    return "\n".join(out) + "\n"


def remove_accumulator_commit(ptx: str) -> str:
    """Delete the last `tcgen05.commit` in program order: in every client GEMM the one that
    signals the accumulator full to the epilogue (after the K loop), so the MMAs it tracked are
    tracked by nothing and its mbarrier phase never completes."""
    lines = ptx.splitlines()
    commits = _find(statements(lines), "tcgen05.commit")
    if not commits:
        raise PatternAbsent("no tcgen05.commit")
    drop = commits[-1].line
    return "\n".join(t for i, t in enumerate(lines) if i != drop) + "\n"


def flip_accumulator_wait_parity(ptx: str) -> str:
    """Flip the parity of the epilogue's wait for the accumulator: the last
    `mbarrier.try_wait.parity` before the first `tcgen05.ld`. An immediate parity is flipped in
    place; a register one is replaced by a scoped register holding it `xor 1` (the wait sits in a
    `{ }` scope in every client)."""
    lines = ptx.splitlines()
    stmts = statements(lines)
    loads = _find(stmts, "tcgen05.ld")
    if not loads:
        raise PatternAbsent("no tcgen05.ld")
    waits = [s for s in _find(stmts, "mbarrier.try_wait.parity") if s.line < loads[0].line]
    if not waits:
        raise PatternAbsent("no mbarrier.try_wait.parity before the epilogue's tcgen05.ld")
    wait = waits[-1]
    parts = [p.strip() for p in wait.operands.split(",")]
    # try_wait.parity waitComplete, [addr], phaseParity{, suspendTimeHint} (PTX ISA: mbarrier.test_wait / try_wait)
    parity = parts[2]
    if parity in ("0", "1"):
        parts[2] = str(1 - int(parity))
        lines[wait.line] = lines[wait.line].replace(wait.operands, " " + ", ".join(parts))
        return "\n".join(lines) + "\n"
    scope = next((i for i in range(wait.line - 1, -1, -1) if lines[i].strip() == "{"), None)
    if scope is None or any(lines[i].strip() == "}" for i in range(scope, wait.line)):
        raise PatternAbsent("the accumulator wait is not in a { } scope")
    parts[2] = "%seeded_parity"
    lines[wait.line] = lines[wait.line].replace(wait.operands, " " + ", ".join(parts))
    lines[scope + 1 : scope + 1] = ["\t.reg .b32 %seeded_parity;", f"\txor.b32 %seeded_parity, {parity}, 1;"]
    return "\n".join(lines) + "\n"


TX_EXCESS = 1024
"""Bytes added to each expect_tx: more than the TMA copies of the stage deliver."""


def overcount_expect_tx(ptx: str) -> str:
    """Add `TX_EXCESS` bytes to every `mbarrier.arrive.expect_tx`: the stage's phase waits for
    bytes no copy delivers (PTX ISA: mbarrier, "tx-count")."""
    lines = ptx.splitlines()
    arrives = _find(statements(lines), "mbarrier.arrive.expect_tx")
    if not arrives:
        raise PatternAbsent("no mbarrier.arrive.expect_tx: the operands do not arrive through TMA byte counts")
    for s in reversed(arrives):
        parts = [p.strip() for p in s.operands.split(",")]
        count = parts[2]
        indent = re.match(r"\s*", lines[s.line])
        pad = indent[0] if indent else "\t"
        if count.isdigit():
            parts[2] = str(int(count) + TX_EXCESS)
            lines[s.line] = lines[s.line].replace(s.operands, " " + ", ".join(parts))
            continue
        parts[2] = "%seeded_tx"
        body = f"{pad}{s.guard + ' ' if s.guard else ''}{s.opcode} {', '.join(parts)};"
        lines[s.line : s.line + 1] = [
            f"{pad}{{",
            f"{pad}.reg .b32 %seeded_tx;",
            f"{pad}add.u32 %seeded_tx, {count}, {TX_EXCESS};",
            body,
            f"{pad}}}",
        ]
    return "\n".join(lines) + "\n"


def dealloc_above_teardown(ptx: str) -> str:
    """Move the teardown barrier below the TMEM dealloc: for each `tcgen05.dealloc`, the run of
    thread barriers (`BARRIERS`) that last precedes it goes to where every thread meets again
    after it — right after the dealloc, or after the label a branch between them jumps to."""
    lines = ptx.splitlines()
    stmts = statements(lines)
    deallocs = _find(stmts, "tcgen05.dealloc")
    if not deallocs:
        raise PatternAbsent("no tcgen05.dealloc")
    moves: list[tuple[list[int], int]] = []
    for dealloc in deallocs:
        k = stmts.index(dealloc)
        j = k - 1
        while j >= 0 and not stmts[j].opcode.startswith(BARRIERS):
            j -= 1
        if j < 0:
            raise PatternAbsent("no thread barrier before the tcgen05.dealloc")
        run = [j]
        while run[0] - 1 >= 0 and stmts[run[0] - 1].opcode.startswith(BARRIERS):
            run.insert(0, run[0] - 1)
        after = dealloc.line
        for s in stmts[j + 1 : k]:
            target = s.operands.strip()
            inside = any(lines[i].strip() == f"{target}:" for i in range(stmts[j].line, dealloc.line))
            if _is(s, "bra") and not inside:
                label = next((i for i in range(dealloc.line, len(lines)) if lines[i].strip() == f"{target}:"), None)
                if label is None:
                    raise PatternAbsent(f"a branch between the teardown barrier and the dealloc leaves to {target}")
                after = max(after, label)
        moves.append(([stmts[r].line for r in run], after))
    taken = {i for barrier_lines, _ in moves for i in barrier_lines}
    insert = {after: [lines[i] for i in barrier_lines] for barrier_lines, after in moves}
    out: list[str] = []
    for i, text in enumerate(lines):
        if i not in taken:
            out.append(text)
        out += insert.get(i, [])
    return "\n".join(out) + "\n"


def remove_bulk_wait_read(ptx: str) -> str:
    """Delete every `cp.async.bulk.wait_group.read`: the epilogue refills the shared staging
    buffer of a TMA store before the hardware is known to have read it (PTX ISA,
    cp.async.bulk.wait_group: `.read` waits until the group's sources have been read)."""
    lines = ptx.splitlines()
    waits = [s for s in _find(statements(lines), "cp.async.bulk.wait_group.read")]
    if not waits:
        raise PatternAbsent("no cp.async.bulk.wait_group.read")
    drop = {s.line for s in waits}
    return "\n".join(text for i, text in enumerate(lines) if i not in drop) + "\n"


MUTATIONS: dict[str, Callable[[str], str]] = {
    "no-wait-ld": remove_wait_ld,
    "release-above-loads": release_above_loads,
    "no-accumulator-commit": remove_accumulator_commit,
    "flipped-parity": flip_accumulator_wait_parity,
    "expect-tx-overcount": overcount_expect_tx,
    "dealloc-above-teardown": dealloc_above_teardown,
    "no-bulk-wait-read": remove_bulk_wait_read,
}


# --------------------------------------------------------------------------------------
# What each variant must give
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Expected:
    """`classes`: the hazard classes (docs/verification.md) the run may stop with — more than
    one where the schedule decides which access comes first; `("deadlock",)` for a deadlock;
    `()` where the kernel does not rely on the broken step (no failure). `absent`: the pattern
    is not in the kernel. `why`: the protocol reasoning."""

    classes: tuple[str, ...]
    why: str
    absent: bool = False


_RACE_NEXT_TILE = ("tmem-write-after-read", "tmem-read-before-commit", "release-before-wait-ld")
_ONE_TILE = "one tile per CTA"
_LD_REGISTERS = "tcgen05-ld-register-before-wait"

EXPECTED: dict[tuple[str, str], Expected] = {}


def _expect(kernels: list[str], mutation: str, classes: tuple[str, ...], why: str, absent: bool = False) -> None:
    for kernel in kernels:
        EXPECTED[kernel, mutation] = Expected(classes, why, absent)


_TRITON = ["triton/gemm_dot", "triton/gemm_tma_ws", "triton/gemm_persistent_ws"]
_CUTE = ["cute/gemm_1cta", "cute/gemm_2cta"]
_MULTI_TILE = ["triton/gemm_persistent_ws", *_CUTE]

_expect(
    ["triton/gemm_dot", "triton/gemm_tma_ws"], "no-wait-ld", (_LD_REGISTERS, "dealloc-while-in-use"),
    f"{_ONE_TILE}: the epilogue reads the loaded registers with no wait::ld (PTX level); else nothing writes "
    "the accumulator again, so the first access the in-flight loads conflict with is the tcgen05.dealloc",
)  # fmt: skip
_expect(
    _MULTI_TILE, "no-wait-ld", (_LD_REGISTERS, "release-before-wait-ld"),
    "the epilogue reads the loaded registers with no wait::ld (PTX level); it also releases the stage (thread "
    "barrier + arrive on accumulator-empty) while its loads are in "
    "flight; the MMA of the tile two later (2 accumulator stages, 2-3 tiles per CTA) writes those cells",
)  # fmt: skip
_expect(
    ["triton/gemm_dot"], "release-above-loads", (),
    "absent: one tile, all warps run the epilogue after the K loop; no mbarrier hands the accumulator back",
    absent=True,
)  # fmt: skip
_expect(
    ["triton/gemm_tma_ws"], "release-above-loads", (),
    f"{_ONE_TILE}: the accumulator-empty barrier is only waited on once, before the first tile (parity 1 "
    "on a fresh barrier), so an early release has no consumer: not a bug in this kernel",
)  # fmt: skip
_expect(
    _MULTI_TILE, "release-above-loads", _RACE_NEXT_TILE,
    "the MMA warp may start the tile two later in the same stage while the epilogue still loads it: the MMA "
    "and the tcgen05.ld are unordered (which class depends on which runs first)",
)  # fmt: skip
_expect(
    GEMMS, "no-accumulator-commit", ("deadlock",),
    "the epilogue (gemm_dot: every warp after the K loop) waits for a phase of the accumulator-full "
    "mbarrier that only the removed commit completes. (The deadlock's cause the model names depends on what "
    "it can see: MMAs no commit tracks, or a barrier commits completed before, are missing-commit; Triton's "
    "one-tile gemm_tma_ws commits every MMA to its stage's empty barrier and its accumulator barrier never saw "
    "a commit, so the missing arrival is named missing-epilogue-arrive. The class is the deadlock.)",
)  # fmt: skip
_expect(
    [k for k in GEMMS if k != "triton/gemm_persistent_ws"], "flipped-parity",
    ("tmem-read-before-commit", "tmem-read-uninitialized", "deadlock"),
    "waiting for the other parity names the phase before the one needed (PTX ISA mbarrier.test_wait.parity): "
    "if the needed phase has not completed yet, that earlier phase has, so the wait passes at once and the "
    "epilogue loads cells the MMAs have not completed (uninitialized where no MMA has been issued yet); if the "
    "commit's arrival already completed the needed phase, the other parity names the phase now pending, which "
    "nothing completes: a deadlock. Which one depends on when the tensor core finishes, so each is the bug caught. "
    "(Triton's gemm_dot and gemm_tma_ws issue every MMA before the epilogue reaches the wait: gemm_dot's warps "
    "are the MMA issuers, and gemm_tma_ws's default partition meets the MMA warp at its third barrier.sync 1 "
    "after the MMA warp's last commit, so a load can only overlap MMAs in flight.)",
)  # fmt: skip
_expect(
    ["triton/gemm_persistent_ws"], "flipped-parity",
    ("tmem-write-after-read", "tmem-read-before-commit", "tmem-read-uninitialized", "deadlock"),
    "as for the other GEMMs, the epilogue's first accumulator wait (stage 0, parity 0 on a fresh barrier) "
    "flipped to parity 1 passes at once. Traced by hand: the default partition zeroes stage 0 with tcgen05.st "
    "in its prologue (after its wait on accumulator-empty[0]) and meets the MMA warp at barrier.sync 1 before "
    "the tile loop, so the early tcgen05.ld reads those zeros (written, not uninitialized), and nothing orders "
    "the MMA warp's first MMAs of the tile (after the same barrier and its TMA waits) after that load: the MMA "
    "warp waits on accumulator-empty only after its tile's commit, and for stage 1 first. Where the MMAs are "
    "issued before the load it reads cells they have not completed (tmem-read-before-commit); where the load "
    "comes first, the MMA overwrites cells a load not ordered before it read (tmem-write-after-read). Stage 1 "
    "is not zeroed, so the same early pass on its first tile reads uninitialized cells, and a wait whose needed "
    "phase already completed waits for the stage's next commit (a deadlock after the stage's last tile). The "
    "expectation first missed tmem-write-after-read: the accumulator's first stage is zeroed by a store, not "
    "by the MMA",
)  # fmt: skip
_expect(
    ["triton/gemm_dot"], "expect-tx-overcount", (),
    "absent: the operands arrive by cp.async (completed by cp.async.wait_group), not TMA byte counts",
    absent=True,
)  # fmt: skip
_expect(
    ["triton/gemm_tma_ws", "triton/gemm_persistent_ws", *_CUTE], "expect-tx-overcount", ("deadlock",),
    "each stage's full barrier expects more bytes than its TMA copies deliver: the tx-count never reaches "
    "zero, the phase never completes and the MMA warp waits for ever",
)  # fmt: skip
_expect(
    _TRITON, "dealloc-above-teardown", (),
    "not a bug for TMEM in Triton's kernels: the epilogue's warps meet at a thread barrier (bar.sync 0, 128 "
    "or bar.sync 0) right after tcgen05.wait::ld and before warp 0 deallocates, and they waited for the "
    "commit tracking every MMA, so every TMEM access is ordered before the dealloc without the teardown barrier",
)  # fmt: skip
_expect(
    _CUTE, "dealloc-above-teardown", (),
    "not a bug for TMEM in the CuTe kernels either, traced by hand (the expectation first said "
    "dealloc-while-in-use, reasoning that the MMA warp's tail wait covers one accumulator stage only). The MMA "
    "warp (warp 1) deallocates, after its tail wait on accumulator-empty: gemm_1cta computes the stage of the "
    "last tile ((next stage + 1) mod 2: stage 0 after tiles in stages 0, 1, 0) and the parity of that stage's "
    "next phase (1), so the wait is for the epilogue's release of the last tile. Every one of the 128 epilogue "
    "threads arrives on it after its tcgen05.wait::ld of the last tile, and in program order after its loads "
    "and releases of the earlier tiles (the stages alternate, the releases are in order), so all its TMEM loads "
    "are ordered before the wait and the dealloc, and they followed the commits tracking every MMA. In "
    "gemm_2cta the leader's MMA warp waits the same way on its accumulator-empty barrier, which counts the "
    "256 epilogue threads of both CTAs (mbarrier.arrive.shared::cluster to the leader), and each CTA's warp 1 "
    "deallocates after a handshake with the peer's warp 1 (arrive on the peer's barrier, wait on its own, count "
    "32), which the leader makes after its tail wait. So the teardown bar.sync 0 orders nothing the dealloc "
    "needs: the model's clean run is right",
)  # fmt: skip

_expect(
    ["triton/gemm_dot", *_CUTE], "no-bulk-wait-read", (),
    "absent: the epilogue stores C with st.global, no TMA store", absent=True,
)  # fmt: skip
_expect(
    ["triton/gemm_tma_ws"], "no-bulk-wait-read", (),
    f"absent: {_ONE_TILE}, its one TMA store is followed by cp.async.bulk.wait_group 0 (no .read)", absent=True,
)  # fmt: skip
_expect(
    ["triton/gemm_persistent_ws"], "no-bulk-wait-read", ("smem-data-race", "async-copy-unfinished"),
    "the default partition's 128 threads write the next tile into the shared staging buffer (st.shared after "
    "bar.sync 0, 128) while one thread's TMA store of the previous tile may still read it: the wait_group.read "
    "at the top of the tile loop is what orders the store's read before that barrier. Another warp's write is "
    "unordered with the read (a data race); the issuing warp's own write lies between the issue and the final "
    "cp.async.bulk.wait_group 0 that completes the store",
)  # fmt: skip


def variants() -> list[tuple[str, str]]:
    """Every (kernel, mutation) whose pattern exists, in a stable order."""
    return [(k, m) for k in GEMMS for m in MUTATIONS if not EXPECTED[k, m].absent]
