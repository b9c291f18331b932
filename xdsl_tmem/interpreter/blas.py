"""BLAS threading of a run.

The machine model's matrix products are tiny (one MMA: 128 x 256 x 16). Multi-threaded
OpenBLAS splits each over its threads, which then spin between the calls: a run takes
twice the CPU it needs, and on a machine with other work it runs 5-15 times slower
(issue 15), while nothing is gained at this size. A run (`run_launch`, the explorations)
therefore limits BLAS to one thread while it executes, with `threadpoolctl`, and restores
the caller's setting after.

Results do not change: OpenBLAS's threads split a GEMM's output into blocks, each
computed by the same kernel, so every output element is the same dot product over K in
the same order whatever the thread count (tests/test_machine_fast_paths.py compares an
MMA-shaped product under one and under several threads bit for bit).
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
