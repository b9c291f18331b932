"""The base of every nvvm op (`NVVMOp`, `CtaGroupOp`) and the operand checks the families share."""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    IntAttr,
    IntegerType,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects.nvvm.attributes import CTAGroupKind, CTAGroupKindAttr
from xdsl_tmem.dialects.utils import (
    CtaGroupUser,
    NamedErrorOp,
    constant_int,
    verify_single_cta_group,
)

_CTA_1 = CTAGroupKindAttr(CTAGroupKind.CTA_1)


# --------------------------------------------------------------------------------------
# Op base classes and shared checks
# --------------------------------------------------------------------------------------


class NVVMOp(NamedErrorOp, ABC):
    """Base of every nvvm op.

    * Inherent attributes are always properties. Properties and discardable
      attributes are kept sorted by name, as MLIR prints them. (One difference
      remains: in the custom form of a declarative op that also carries
      discardable attributes, MLIR sorts both kinds together, xDSL prints the
      discardable ones first.)
    * Every verification failure (including xDSL's own operand/property
      constraint messages) starts with the op name.
    """

    irdl_options = (ParsePropInAttrDict(),)

    def __post_init__(self) -> None:
        # MLIR accepts an inherent attribute in the attr-dict even where the custom
        # syntax has its own spelling for it (`{pack, shape = ...}`), and in `{...}`
        # of the generic form: it is still a property.
        inherent = self.get_irdl_definition().properties
        for name in [n for n in self.attributes if n in inherent]:
            self.properties[name] = self.attributes.pop(name)
        super().__post_init__()
        self.properties = dict(sorted(self.properties.items()))
        self.attributes = dict(sorted(self.attributes.items()))

    def verify(self, verify_nested_ops: bool = True) -> None:
        try:
            super().verify(verify_nested_ops)
        except VerifyException as e:
            message = str(e.args[0]) if e.args else type(e).__name__
            if message.startswith(f"{self.name}: "):
                raise
            raise self.error(message.replace(":\n", ": ")) from e

    def verify_(self) -> None:
        self.verify_nvvm()
        if isinstance(self, CtaGroupUser):
            verify_single_cta_group(self)

    def verify_nvvm(self) -> None:
        """Op-specific checks; raise `self.error(...)`."""


class CtaGroupOp(NVVMOp, CtaGroupUser, ABC):
    """An op with a `group = #nvvm.cta_group<...>` property (default cta_1)."""

    group = prop_def(CTAGroupKindAttr, default_value=_CTA_1)

    def used_cta_group(self) -> int | None:
        return self.group.as_int()


_SPACE_NAMES = {
    0: "generic",
    1: "global",
    3: "shared::cta",
    4: "constant",
    6: "tensor memory",
    7: "shared::cluster",
}


def address_space(t: Attribute) -> int | None:
    """The address space of an `!llvm.ptr<N>` (0 for `!llvm.ptr`), None for any other type."""
    if not isinstance(t, LLVMPointerType):
        return None
    return t.addr_space.data if isinstance(t.addr_space, IntAttr) else 0


def pointer_name(space: int) -> str:
    return "!llvm.ptr" if space == 0 else f"!llvm.ptr<{space}>"


def check_pointer(op: NVVMOp, what: str, value: SSAValue, spaces: Sequence[int]) -> int:
    """The address space of `value`, which must be a pointer into one of `spaces`."""
    space = address_space(value.type)
    if space is None or space not in spaces:
        allowed = " or ".join(f"{pointer_name(s)} ({_SPACE_NAMES[s]})" for s in spaces)
        raise op.error(f"{what} must be {allowed}, got {value.type}")
    return space


def check_int_type(op: NVVMOp, what: str, value: SSAValue, width: int) -> None:
    expected = IntegerType(width)
    if value.type != expected:
        raise op.error(f"{what} must be {expected}, got {value.type}")


def check_immediate(op: NVVMOp, what: str, value: SSAValue, why: str) -> int:
    """The constant value of `value`; it must be one (an immediate in PTX)."""
    if (constant := constant_int(value)) is None:
        raise op.error(f"{what} must be a constant (llvm.mlir.constant or arith.constant): {why}")
    return constant
