"""BLAS threading of a run.

The machine model's matrix products are tiny (one MMA: 128 x 256 x 16). Multi-threaded
OpenBLAS splits each of them over its threads, which then spin waiting for the next
one between calls: on a machine with other work a run takes 2x the CPU and is 5-15x
slower (issue 15), and nothing is gained at this size. A run therefore limits BLAS to
one thread while it executes and restores the caller's setting after. Results do not
change: a product's rounding is fixed by the order the model documents
(`tcgen05.mma_product`), which the thread count does not affect for f32 GEMMs of this
shape (each output element is one dot product over K computed by one thread).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from threadpoolctl import threadpool_limits


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """BLAS on one thread inside the block; the caller's limits are restored on exit."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield
