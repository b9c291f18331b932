"""Register, symbol and special-register types, the operand pseudo-ops, and the
`Instruction` base of every PTX instruction."""

from __future__ import annotations

import struct
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    AnyFloatConstr,
    DenseArrayBase,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue, TypeAttribute
from xdsl.irdl import (
    IRDLOperation,
    base,
    irdl_attr_definition,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import OpTrait
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects.op_definition import irdl_op_definition

# --------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------

REGISTER_PREFIX = {"pred": "%p", "b16": "%rs", "b32": "%r", "b64": "%rd"}
"""The backend's register classes and the names it gives their registers."""

REGISTER_TYPES = frozenset((
    "pred", "b8", "b16", "b32", "b64", "b128", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
    "f16", "f16x2", "bf16", "bf16x2", "f32", "f64",
))  # fmt: skip
"""Every type a `.reg` declaration may give (PTX ISA 9.0 §5.2, §5.4.2: the fundamental
types, `.pred`, the packed half types and `.b128`)."""


@irdl_attr_definition
class RegisterType(ParametrizedAttribute, TypeAttribute):
    """A PTX register: `!ptx.reg<b32, 7>` or `!ptx.reg<u32, "%x">`.

    The backend's registers are numbered within a class (`!ptx.reg<b32, 7>` is `%r7`,
    named from `REGISTER_PREFIX`). A register of parsed PTX is its declared name and
    type (`!ptx.reg<u32, "%x">`); a name redeclared in an inner `{ }` scope (shadowing)
    carries that scope's number, `!ptx.reg<u32, "%x", 3>`, so the two registers are
    different types and values, though both print as `%x`.
    """

    name = "ptx.reg"
    kind: StringAttr
    index: IntAttr
    ptx_name: StringAttr
    """The declared name (`%x`, `%r3`); empty for the backend's numbered registers."""
    scope: IntAttr
    """0, or the number of the `{ }` scope whose declaration shadows an outer one."""

    def __init__(self, kind: str, index: int, ptx_name: str = "", scope: int = 0):
        super().__init__(StringAttr(kind), IntAttr(index), StringAttr(ptx_name), IntAttr(scope))

    @staticmethod
    def named(kind: str, ptx_name: str, scope: int = 0) -> RegisterType:
        """A register of parsed PTX (its index is unused: -1)."""
        return RegisterType(kind, -1, ptx_name, scope)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            kind = parser.parse_identifier()
            parser.parse_punctuation(",")
            ptx_name = parser.parse_optional_str_literal()
            if ptx_name is None:
                index = parser.parse_integer()
                if kind not in REGISTER_PREFIX:
                    parser.raise_error(
                        f"!ptx.reg: register class must be one of {', '.join(REGISTER_PREFIX)}, got {kind}"
                    )
                return (StringAttr(kind), IntAttr(index), StringAttr(""), IntAttr(0))
            scope = parser.parse_integer() if parser.parse_optional_punctuation(",") else 0
        if kind not in REGISTER_TYPES:
            parser.raise_error(
                f"!ptx.reg: register type must be one of {', '.join(sorted(REGISTER_TYPES))}, got {kind}"
            )
        return (StringAttr(kind), IntAttr(-1), StringAttr(ptx_name), IntAttr(scope))

    def print_parameters(self, printer: Printer) -> None:
        if not self.ptx_name.data:
            printer.print_string(f"<{self.kind.data}, {self.index.data}>")
            return
        printer.print_string(f"<{self.kind.data}, ")
        printer.print_string_literal(self.ptx_name.data)
        printer.print_string(f", {self.scope.data}>" if self.scope.data else ">")

    def verify(self) -> None:
        if not self.ptx_name.data:
            if self.kind.data not in REGISTER_PREFIX:
                raise VerifyException(f"!ptx.reg: register class must be one of {', '.join(REGISTER_PREFIX)}")
        elif self.kind.data not in REGISTER_TYPES:
            raise VerifyException(f"!ptx.reg: register type must be one of {', '.join(sorted(REGISTER_TYPES))}")

    @property
    def register_name(self) -> str:
        if self.ptx_name.data:
            return self.ptx_name.data
        return f"{REGISTER_PREFIX[self.kind.data]}{self.index.data}"


@irdl_attr_definition
class SymbolType(ParametrizedAttribute, TypeAttribute):
    """`!ptx.symbol`: the address of a state-space variable or `.param`, by name."""

    name = "ptx.symbol"


@irdl_attr_definition
class SpecialRegisterType(ParametrizedAttribute, TypeAttribute):
    """`!ptx.special`: a read-only special register (`%tid.x`, `%laneid`, ...)."""

    name = "ptx.special"


Reg = base(RegisterType)
Imm = base(IntegerType) | AnyFloatConstr
RegOrImm = Reg | Imm
Address = Reg | base(SymbolType)
MovSource = Reg | Imm | base(SymbolType) | base(SpecialRegisterType)


def float_literal(value: float, width: int) -> str:
    """PTX hex float literal: `0f3F800000` (f32) or `0d3FF0000000000000` (f64)."""
    if width == 32:
        return "0f" + struct.pack(">f", value).hex().upper()
    return "0d" + struct.pack(">d", value).hex().upper()


# --------------------------------------------------------------------------------------
# Pseudo-ops: operand sources
# --------------------------------------------------------------------------------------


def int_literal(value: int, unsigned: bool = False) -> str:
    """A PTX integer literal (`U`: the unsigned suffix). Magnitudes beyond 64 signed bits
    print in hex, which PTX reads as unsigned 64-bit (PTX ISA 9.0 §4.5.1: a decimal
    literal is signed 64-bit, a hex one above 2^63-1 is `.u64`)."""
    suffix = "U" if unsigned else ""
    if value > (1 << 63) - 1:
        return f"0x{value:X}{suffix}"
    return f"{value}{suffix}"


@irdl_op_definition
class ImmOp(IRDLOperation):
    """An immediate operand; prints nothing, its users print the literal.

    `unsigned` spells an integer by its unsigned value (`4294967295`, where the i32
    attribute holds -1): a literal above the type's signed range, as parsed PTX writes
    membermasks (`0xffffffff`) and bit masks. The bits, hence ptxas's SASS, are the same
    either way; the flag only keeps the text the file had."""

    name = "ptx.imm"
    value = prop_def(base(IntegerAttr) | base(FloatAttr))
    unsigned = opt_prop_def(UnitAttr)
    result = result_def(Imm)
    assembly_format = "(`unsigned` $unsigned^)? $value attr-dict `:` type($result)"

    def __init__(self, value: IntegerAttr | FloatAttr, *, unsigned: bool = False):
        props: dict[str, Attribute] = {"value": value}
        if unsigned:
            props["unsigned"] = UnitAttr()
        super().__init__(properties=props, result_types=[value.type])

    @staticmethod
    def integer(value: int, type: IntegerType) -> ImmOp:
        """The immediate `value` (signed, or unsigned up to 2^width - 1) of `type`,
        spelled as given."""
        return ImmOp(IntegerAttr(value, type), unsigned=value > (1 << (type.width.data - 1)) - 1)

    def literal(self) -> str:
        value = self.value
        if isinstance(value, IntegerAttr):
            data = value.value.data
            width = cast(IntegerType, value.type).width.data
            # i1 immediates are 0 / 1 (an IntegerAttr normalises true to -1).
            if width == 1:
                return str(data & 1)
            return int_literal(data & ((1 << width) - 1)) if self.unsigned else str(data)
        width = 32 if value.type.bitwidth == 32 else 64
        return float_literal(value.value.data, width)

    def verify_(self) -> None:
        if self.unsigned is not None and not isinstance(self.value, IntegerAttr):
            raise VerifyException("ptx.imm: unsigned spells an integer immediate; the value is a float")


@irdl_op_definition
class SymbolOp(IRDLOperation):
    """A symbol operand (`.shared` variable, `.param`); prints nothing."""

    name = "ptx.symbol"
    symbol = prop_def(StringAttr)
    result = result_def(SymbolType)
    assembly_format = "$symbol attr-dict"

    def __init__(self, symbol: str):
        super().__init__(properties={"symbol": StringAttr(symbol)}, result_types=[SymbolType()])


@irdl_op_definition
class SpecialOp(IRDLOperation):
    """A special-register operand (`%tid.x`); prints nothing."""

    name = "ptx.special"
    register = prop_def(StringAttr)
    result = result_def(SpecialRegisterType)
    assembly_format = "$register attr-dict"

    def __init__(self, register: str):
        super().__init__(properties={"register": StringAttr(register)}, result_types=[SpecialRegisterType()])


@irdl_op_definition
class RegisterOp(IRDLOperation):
    """A handle on a virtual register that instructions write later (a loop-carried
    value, an `scf.if` result); prints nothing."""

    name = "ptx.reg"
    result = result_def(Reg)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, register: RegisterType):
        super().__init__(result_types=[register])


Namer = Callable[[SSAValue], str]
"""Renders an operand: a register name, an immediate literal, a symbol, ..."""


# --------------------------------------------------------------------------------------
# Instructions
# --------------------------------------------------------------------------------------


class WritesOnlyRegisters(OpTrait):
    """The instruction's only effect is writing its result registers (no memory,
    synchronisation or control flow), so it may be dropped when no instruction reads
    them. Not xDSL's `Pure`: registers are named by type, so a register an op writes may
    be read through another SSA value, and SSA-based DCE/CSE would be wrong here."""


class Instruction(IRDLOperation, ABC):
    """A PTX instruction: `[@[!]guard] mnemonic operands;`.

    Every instruction may be guarded by a predicate register (`guard`); `negated`
    makes it `@!%p`.
    """

    PRED_FORM: ClassVar[bool] = False
    """Whether the instruction also works on predicates (`and.pred`): in the PTX ISA's
    logic instructions, `and`, `or`, `xor` and `not` take `.pred`."""

    negated = opt_prop_def(UnitAttr)
    guard = opt_operand_def(Reg)
    """Declared once, here: IRDL collects a base class's fields after the subclass's, so
    the guard is the last operand of every instruction (constructors pass `None` for it)."""

    @abstractmethod
    def mnemonic(self) -> str: ...

    @abstractmethod
    def ptx_operands(self, name: Namer) -> list[str]: ...

    def guard_value(self) -> SSAValue | None:
        return self.guard

    def set_guard(self, guard: SSAValue) -> None:
        """Predicate this (unguarded) instruction on `guard`: `@%p ...`."""
        assert self.guard is None, f"{self.name} is already guarded"
        self.operands = [*self.operands, guard]
        if "operandSegmentSizes" in self.properties:
            sizes = list(cast(DenseArrayBase[IntegerType], self.properties["operandSegmentSizes"]).get_values())
            sizes[-1] = 1
            self.properties["operandSegmentSizes"] = DenseArrayBase.from_list(i32, sizes)

    def ptx_line(self, name: Namer) -> str:
        guard = self.guard_value()
        prefix = "" if guard is None else f"@{'!' if self.negated else ''}{name(guard)} "
        operands = self.ptx_operands(name)
        return f"{prefix}{self.mnemonic()}" + (f" {', '.join(operands)}" if operands else "") + ";"


def address_text(name: Namer, addr: SSAValue, offset: int, written: bool = False) -> str:
    """`[a]`, `[a+16]`, `[a+-16]`: PTX's address expression is `base+offset` with a
    signed offset; ptxas rejects `[a-16]` ("Parsing error near '-'"), as llc-22 knows.
    `written` spells a zero offset (`[a+0]`, as Triton writes it): under `.target ...,
    debug` ptxas emits a different instruction for it, so the op keeps the spelling."""
    if offset == 0 and not written:
        return f"[{name(addr)}]"
    return f"[{name(addr)}+{offset}]"


def vector_text(name: Namer, values: Sequence[SSAValue]) -> str:
    return "{" + ", ".join(name(v) for v in values) + "}"


def check_zero_written(op: IRDLOperation, written: UnitAttr | None, offset: int) -> None:
    """A written-offset flag marks a *zero* offset spelled `+0`; any other offset is
    always written, so the flag there would make two ops print the same text."""
    if written is not None and offset != 0:
        raise VerifyException(f"{op.name}: offset_written marks a written +0; the offset is {offset}")


class TypedInstruction(Instruction, ABC):
    """`op.type` instructions; `MNEMONIC` is the base name."""

    MNEMONIC: ClassVar[str]
    type = prop_def(StringAttr)

    def mnemonic(self) -> str:
        return f"{self.MNEMONIC}.{self.type.data}"


class FixedInstruction(Instruction, ABC):
    """An instruction whose text is fixed by its properties: `TEXT` or `text()`."""

    def __init__(self, properties: dict[str, Attribute] | None = None):
        super().__init__(operands=[None], properties=properties or {})

    def ptx_operands(self, name: Namer) -> list[str]:
        return []
