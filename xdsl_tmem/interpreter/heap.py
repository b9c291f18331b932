"""The cyclic garbage collector during a run.

A run's machine state (warps and their cluster, TMEM records, shadows) lies in reference
cycles, so a few thousand objects of each run reach CPython's oldest generation, and
every few runs (every ~10 launches of the reference pipeline; 40 random schedules of the
cg1 matmul) that generation is collected in full: the parsed module, xDSL's and numpy's
objects, ~110 000 objects, which is most of the collector's time (13 % of a random
exploration, measured 2026-12-02). The objects that exist when a run starts live
through it, so a run (`run_launch`, the explorations) moves them out of the collector's
reach while it executes (`gc.freeze`) and gives them back after (`gc.unfreeze`). The
run's own garbage, cycles included, is still collected as before; only objects older
than the run that become garbage during it wait for the run's end.
"""

from __future__ import annotations

import gc
from collections.abc import Generator
from contextlib import contextmanager

_depth = 0
"""Open `older_objects_frozen` blocks: only the outermost freezes and unfreezes."""


@contextmanager
def older_objects_frozen() -> Generator[None]:
    """Inside the block (also as a decorator), the objects that existed at its start are
    not examined by the cyclic collector. Left alone where the caller froze objects itself
    (unfreezing would release theirs too) or disabled the collector."""
    global _depth
    if _depth or gc.get_freeze_count() or not gc.isenabled():
        yield
        return
    _depth += 1
    gc.freeze()
    try:
        yield
    finally:
        # Only the run's objects can be examined now: its machine state, garbage by
        # now, is freed here (a few milliseconds at most) rather than left for a full
        # collection that might not come for many runs.
        gc.collect()
        gc.unfreeze()
        _depth -= 1
