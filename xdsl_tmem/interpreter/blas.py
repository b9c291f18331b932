"""BLAS threading of a run.

The machine model's matrix products are tiny (one MMA: 128 x 256 x 16). Multi-threaded
OpenBLAS splits each over its threads, which then spin between the calls: a run takes
twice the CPU it needs, and on a machine with other work it runs 5-15 times slower
(issue 15), while nothing is gained at this size. A run (`run_launch`, the explorations)
therefore limits BLAS to one thread while it executes, with `threadpoolctl`, and restores
the caller's setting after.

One thread also makes a run's products the same bits on every machine: how OpenBLAS
splits a GEMM over its threads depends on the thread count and on its version, and
numpy 2.4's OpenBLAS gives an MMA-shaped product different low bits under four threads
than under one (tests/test_machine_fast_paths.py checks that a run's product is the
one-thread product whatever the caller's setting).
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from threadpoolctl import threadpool_limits

_depth = 0
"""Open `single_threaded_blas` blocks: only the outermost sets and restores the limit
(setting it costs about a millisecond; explorations run many launches)."""


@contextmanager
def single_threaded_blas() -> Generator[None]:
    """BLAS on one thread inside the block (also as a decorator); the caller's limits are
    restored on exit."""
    global _depth
    if _depth:
        yield
        return
    _depth += 1
    try:
        with threadpool_limits(limits=1, user_api="blas"):
            yield
    finally:
        _depth -= 1
