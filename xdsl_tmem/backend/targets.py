"""Supported PTX targets and what each can do (ptx-nvvm.md §1.1, verified with ptxas)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Arch:
    """A `.target` with the lowest `.version` that carries tcgen05 on it."""

    name: str
    version: str
    mma_i8: bool
    """`tcgen05.mma.kind::i8`: only sm_100a / sm_101a / sm_110a."""
    shift: bool
    """`tcgen05.shift`: only the `a` targets."""
    mma_scale: bool
    """The `scale-input-d` immediate of `tcgen05.mma`: not on sm_110a (ptxas 13.0:
    "Feature 'argument scale-inp-d-imm' not supported on .target 'sm_110a'")."""


ARCHS: dict[str, Arch] = {
    arch.name: arch
    for arch in (
        Arch("sm_100a", "8.6", mma_i8=True, shift=True, mma_scale=True),
        Arch("sm_100f", "8.8", mma_i8=False, shift=False, mma_scale=True),
        Arch("sm_103a", "8.8", mma_i8=False, shift=True, mma_scale=True),
        Arch("sm_110a", "9.0", mma_i8=True, shift=True, mma_scale=False),
    )
}
DEFAULT_ARCH = "sm_100a"


def arch_named(name: str) -> Arch:
    """The target called `name`; ValueError listing the supported ones otherwise."""
    if name not in ARCHS:
        raise ValueError(f"unsupported PTX target '{name}'; supported: {', '.join(ARCHS)}")
    return ARCHS[name]
