"""The base of every tmem op (`TmemOp`) and the checks several families share."""

from __future__ import annotations

from abc import ABC

from xdsl.ir import Attribute, SSAValue, TypeAttribute

from xdsl_tmem.dialects.tmem.types import (
    AllocationType,
    DeallocBarrierType,
    EpilogueWarpContextType,
    MmaWarpContextType,
    OutputRingType,
    TensorType,
    TmemStageType,
)
from xdsl_tmem.dialects.utils import (
    CtaGroupUser,
    NamedErrorOp,
    constant_int,
    verify_single_cta_group,
)

_CTA_GROUP_TYPES = (
    AllocationType,
    TmemStageType,
    OutputRingType,
    DeallocBarrierType,
    MmaWarpContextType,
    EpilogueWarpContextType,
    TensorType,
)


def _cta_group_of(t: Attribute) -> int | None:
    if isinstance(t, _CTA_GROUP_TYPES):
        return t.cta_group.data
    return None


# --------------------------------------------------------------------------------------
# Op base
# --------------------------------------------------------------------------------------


class TmemOp(NamedErrorOp, CtaGroupUser, ABC):
    """Base of every tmem op: precise messages and the one-cta_group-per-kernel rule."""

    def used_cta_group(self) -> int | None:
        types = [*self.operand_types, *self.result_types]
        types += (
            [arg.type for region in self.regions for arg in region.blocks[0].args]
            if all(r.blocks for r in self.regions)
            else []
        )
        types += [p for p in self.properties.values() if isinstance(p, TypeAttribute)]
        for t in types:
            if (group := _cta_group_of(t)) is not None:
                return group
        return None

    def verify_(self) -> None:
        self.verify_tmem()
        verify_single_cta_group(self)

    def verify_tmem(self) -> None:
        """Op-specific checks; raise `self.error(...)`."""

    def expect_type(self, what: str, actual: Attribute, expected: Attribute) -> None:
        if actual != expected:
            raise self.error(f"{what} must be {expected}, got {actual}")


def check_fits_allocation(op: TmemOp, config: tuple[int, int, int], allocation: AllocationType) -> None:
    num_stages, stride, cta_group = config
    if cta_group != allocation.cta_group.data:
        raise op.error(f"cta_group {cta_group} of the stages does not match {allocation}")
    if num_stages * stride > allocation.max_cols.data:
        raise op.error(
            f"num_stages * stride = {num_stages} * {stride} = {num_stages * stride} exceeds "
            f"the {allocation.max_cols.data} columns of {allocation}"
        )


def check_mma_complete_mask(op: TmemOp, cta_group: int, mask: SSAValue | None) -> None:
    """`mma_complete_mask` is the cta_group 2 multicast mask (docs/semantics.md §6.1)."""
    if cta_group == 1 and mask is not None:
        raise op.error(
            "mma_complete_mask is only used by cta_group 2 (multicast commit); "
            "cta_group 1 commits to its own CTA, remove the mask"
        )
    if cta_group == 2 and mask is None:
        raise op.error("cta_group 2 needs an mma_complete_mask (i16 mask of the CTA pair, e.g. 0b11)")
    if mask is not None and (value := constant_int(mask)) is not None and value & 0xFFFF == 0:
        raise op.error("mma_complete_mask must be non-zero, got 0")
