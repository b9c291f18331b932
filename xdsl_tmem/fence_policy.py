"""The fence policy: one type from the `fence-policy` pass option to the interpreter's
happens-before clocks.

The PTX memory model orders tcgen05 operations across a thread synchronization
(`bar.sync`, an mbarrier arrive and wait) only when `tcgen05.fence::before_thread_sync`
precedes the releasing side and `tcgen05.fence::after_thread_sync` follows the acquiring
side (PTX ISA, `tcgen05.fence` and the tcgen05 memory consistency model). Mojo's SM100
kernels emit neither.

* `STRICT`: the lowering emits these fences, and the interpreter orders tcgen05 work
  across a synchronization only through them.
* `MOJO`: the lowering emits none, as Mojo does, and the interpreter orders tcgen05 work
  by the synchronization alone (the assumption Mojo's kernels make).

See docs/verification.md, *Fence policy*.
"""

from __future__ import annotations

from enum import StrEnum


class FencePolicy(StrEnum):
    """Whether a thread synchronisation orders tcgen05 work only with `tcgen05.fence`s
    (`STRICT`, the PTX memory model) or by itself (`MOJO`); the module docstring."""

    STRICT = "strict"
    MOJO = "mojo"


def fence_policy(value: str) -> FencePolicy:
    """Parse a `fence-policy` value; a bad one is a `ValueError` naming what is allowed
    (a pass reports it when the pipeline is built)."""
    try:
        return FencePolicy(value)
    except ValueError:
        raise ValueError(f"fence-policy must be strict or mojo, got '{value}'") from None
