"""The dialect's discardable `nvvm.*` attributes on other ops (kernel launch bounds)."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    i32,
)
from xdsl.ir import Attribute, Operation

_DIM_ATTRIBUTES = ("nvvm.maxntid", "nvvm.reqntid", "nvvm.cluster_dim")
_INT_ATTRIBUTES = ("nvvm.minctasm", "nvvm.maxnreg", "nvvm.cluster_max_blocks")


def nvvm_attribute_error(op: Operation, name: str, value: Attribute) -> str | None:
    """What is wrong with the attribute `name = value` on `op`, if anything.

    The dialect's rule for `nvvm.*` attributes set on ops of other dialects, as
    upstream `NVVMDialect::verifyOperationAttribute` (mlir/lib/Dialect/LLVMIR/IR/
    NVVMDialect.cpp) states it: the launch dimensions are `array<i32: ...>` of 1 to 3
    elements (i64 is refused: PTX's `.maxntid` takes 32-bit values), the limits are
    integers, and `nvvm.blocksareclusters` needs `nvvm.reqntid` and `nvvm.cluster_dim`.
    Each case is re-checked against mlir-opt-22 in tests/test_malformed.py."""
    if name in _DIM_ATTRIBUTES:
        dims = value.get_values() if isinstance(value, DenseArrayBase) and value.get_element_type() == i32 else ()
        if not 1 <= len(dims) <= 3:
            return f"{op.name}: '{name}' must be an array<i32: ...> of 1 to 3 dimensions, got {value}"
    elif name in _INT_ATTRIBUTES:
        if not isinstance(value, IntegerAttr):
            return f"{op.name}: '{name}' must be an integer constant, got {value}"
    elif name == "nvvm.blocksareclusters" and not all(
        key in op.attributes for key in ("nvvm.reqntid", "nvvm.cluster_dim")
    ):
        return f"{op.name}: '{name}' must be used along with 'nvvm.reqntid' and 'nvvm.cluster_dim'"
    return None
