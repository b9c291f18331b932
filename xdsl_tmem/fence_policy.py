"""The fence policy: which happens-before model tcgen05 work follows across thread syncs."""

from enum import StrEnum


class FencePolicy(StrEnum):
    STRICT = "strict"
    MOJO = "mojo"


def fence_policy(value: str) -> FencePolicy:
    """The `fence-policy` pass option; a bad value is refused when the pipeline is built."""
    try:
        return FencePolicy(value)
    except ValueError:
        raise ValueError(f"fence-policy must be strict or mojo, got '{value}'") from None
