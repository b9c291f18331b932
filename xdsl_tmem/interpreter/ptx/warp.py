"""A warp executing a decoded PTX program, with SIMT reconvergence at immediate post-dominators.

The warp keeps the current path (pc, active mask, reconvergence pc) and a stack of the
paths waiting: a branch whose predicate the active lanes disagree on runs the taken lanes
first, then the others, and the lanes join again at the branch's immediate
post-dominator (docs/ptx-level.md). Everything else is `executor.Warp`'s: the machine
state, clocks, blocking, the scheduler's interface.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from xdsl_tmem.dialects.traits import ThreadBarrier
from xdsl_tmem.interpreter.executor import LOCAL, OTHER, OpError, Status, Step, StepLimit, Warp
from xdsl_tmem.interpreter.launch import Geometry
from xdsl_tmem.interpreter.machine import RANK_SHIFT, Blocked, Cluster, Cta, Hazard, Memo
from xdsl_tmem.interpreter.memory import Progression
from xdsl_tmem.interpreter.ptx.async_copy import NO_COPIES, AsyncCopies
from xdsl_tmem.interpreter.ptx.cfg import EXIT
from xdsl_tmem.interpreter.ptx.program import Lanes, Program
from xdsl_tmem.interpreter.values import Mask, UnsupportedValue

NEVER = -2
"""The reconvergence pc of a path that rejoins no other before the kernel exits."""


class PtxWarp(Warp):
    """One warp of one CTA running a `Program` (program.py)."""

    def __init__(self, program: Program, cluster: Cluster, cta: Cta, index: int, launch: Geometry):
        super().__init__(program, cluster, cta, index, launch)  # pyright: ignore[reportArgumentType]
        self.decoded = program
        self.code = program.code
        self.regs: list[Lanes] = list(program.initial)
        self.pc = 0
        self.rpc = NEVER
        self.simt: list[tuple[int, Mask, int]] = []
        """Paths waiting to run: (pc, active mask, reconvergence pc); the last runs next."""
        self.all_active = self.full
        """All 32 lanes active (the current mask is `live` and every lane is live)."""
        self.rank_bits = cta.rank << RANK_SHIFT
        self.progressions: dict[int, tuple[Lanes, Progression | None]] = {}
        """Register slot → (its last lane array used as an address, the progression it
        is, if one): `Decoder.progression`'s cache (lane arrays are never written in place)."""
        self.async_copies: AsyncCopies = NO_COPIES
        """Its lanes' `cp.async` copies not landed yet (async_copy.py; immutable, so copies share it)."""

    def start(self, entry: Any, args: Any) -> None:
        self.regs = list(self.decoded.initial)
        self.pc, self.rpc, self.simt = 0, NEVER, []
        self.async_copies = NO_COPIES
        self.set_mask(self.live)

    def copy(self, cluster: Cluster, memo: Memo) -> PtxWarp:
        clone = super().copy(cluster, memo)
        assert isinstance(clone, PtxWarp)
        clone.regs = list(self.regs)  # lane arrays are never written in place
        clone.simt = list(self.simt)
        clone.mask, clone.all_active = self.mask, self.all_active
        return clone

    # -- SIMT ---------------------------------------------------------------------------

    def set_mask(self, mask: Mask) -> None:
        self.mask = self.live if mask is self.live or bool((mask == self.live).all()) else mask
        self.all_active = self.mask is self.live and self.full

    def diverge(self, target: int, taken: Mask, fallthrough: int, stay: Mask, rpc: int) -> int:
        """A branch the active lanes disagree on: run the `taken` lanes from `target`
        first, the `stay` lanes from `fallthrough` after them, and join them at `rpc` (the
        immediate post-dominator; the enclosing reconvergence point when it is the exit)."""
        r = self.rpc if rpc == EXIT else rpc
        if r != self.rpc:
            self.simt.append((r, self.mask, self.rpc))
        if fallthrough != r:
            self.simt.append((fallthrough, stay, r))
        self.rpc = r
        if target != r:
            self.set_mask(taken)
            return target
        return self.reconverge()

    def reconverge(self) -> int:
        """The current path reached its reconvergence point: run the next waiting path."""
        pc, mask, rpc = self.simt.pop()
        self.set_mask(mask)
        self.rpc = rpc
        return pc

    def exit_lanes(self, gone: Mask, fallthrough: int = EXIT) -> int:
        """`ret` in the lanes `gone`: they leave the kernel (and every waiting path). The
        next pc: `fallthrough` while lanes of the current path remain, else the next
        waiting path's, else `EXIT`."""
        keep = ~gone
        self.live = self.live & keep
        self.live_lanes = [int(i) for i in np.flatnonzero(self.live)]
        self.full = bool(self.live.all())
        self.simt = [(pc, m & keep, r) for pc, m, r in self.simt]
        current = self.mask & keep
        if current.any():
            self.set_mask(current)
            return fallthrough
        while self.simt:
            pc, mask, rpc = self.simt.pop()
            if mask.any():
                self.set_mask(mask)
                self.rpc = rpc
                return pc
        self.mask = self.live
        return EXIT

    # -- execution ----------------------------------------------------------------------

    def next_op(self) -> Any:
        if self.status is Status.BLOCKED:
            return self.blocked_op
        if self.status is Status.DONE or self.pc < 0:
            return None
        return self.code[self.pc].op

    def next_effect(self) -> Step:
        """What the next step does to mbarriers (explore.py's partial-order reduction)."""
        if self.status is Status.DONE or self.pc < 0:
            return OTHER
        decoded = self.code[self.pc]
        if not decoded.executes(self):
            return LOCAL
        if decoded.effect is not None:
            return decoded.effect(self)
        return LOCAL if decoded.op.has_trait(ThreadBarrier) else OTHER

    def control_key(self) -> tuple[Any, ...]:
        """The warp's control state and registers (explore.py's state key)."""
        return (
            self.pc,
            self.rpc,
            self.mask.tobytes(),
            self.live.tobytes(),
            tuple((pc, m.tobytes(), r) for pc, m, r in self.simt),
            hash(tuple(r.tobytes() for r in self.regs)),
            self.async_copies.key(),
        )

    def where(self, pc: int) -> str:
        where = self.code[pc].location()
        return f"{self.name} at {where}" if where else self.name

    fp_results = True
    """IEEE overflow, division by zero and NaNs are results the value semantics define
    (inf, NaN), not errors: numpy's warnings about them are off while the warp runs."""

    def run(self, limit: int, to_first: bool = False) -> Status:
        with np.errstate(all="ignore"):
            return self._run(limit, to_first)

    def turn(self, limit: int) -> Status:
        return self._run(limit, False)  # the scheduler has turned the warnings off

    def _run(self, limit: int, to_first: bool) -> Status:
        code = self.code
        cluster = self.cluster
        did_sync = to_first
        pc = self.pc
        while True:
            if pc < 0:
                self.pc = pc
                return self._exit()
            decoded = code[pc]
            sync = decoded.sync and (decoded.guard is None or decoded.executes(self))
            if sync and did_sync:
                self.pc = pc
                return self._yield()
            if cluster.step >= limit:
                self.pc = pc
                raise StepLimit(limit)
            cluster.step += 1
            self.pc = pc
            try:
                pc = decoded.run(self)
            except Blocked as b:
                cluster.step -= 1
                status = self._block(decoded.op, b)
                if decoded.line:  # deadlock reports name the PTX line the warp waits at
                    self.blocked_where = f" ({decoded.location()})"
                    self.blocked_reason += self.blocked_where
                return status
            except (Hazard, UnsupportedValue, ValueError, OverflowError) as e:
                raise OpError(decoded.op, self.where(self.pc), e) from e
            if sync:
                did_sync = True
                self.status = Status.READY
                self._synced(decoded.op)
            while pc == self.rpc:
                pc = self.reconverge()
