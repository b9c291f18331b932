"""The reference layouts of `xdsl_tmem.reference` (an installed module now) under the
names the tests import, and `parse` for test programs."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xdsl_tmem.reference import (
    LDST_REGISTERS_PER_X,
    epilogue_rows,
    fragment_16x256b,
    kmajor_byte_offset,
    kmajor_matrix,
    ldst_cell,
    mn_major_byte_offset,
    place_kmajor_swizzled,
    place_operand,
    swizzle_address,
)
from xdsl_tmem.universe import make_context

__all__ = [
    "LDST_REGISTERS_PER_X",
    "epilogue_rows",
    "fragment_16x256b",
    "kmajor_byte_offset",
    "kmajor_matrix",
    "ldst_cell",
    "mn_major_byte_offset",
    "parse",
    "place_kmajor_swizzled",
    "place_operand",
    "swizzle_address",
]


def parse(text: str) -> ModuleOp:
    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module
