"""`ptx.inst`: any PTX instruction, as the front end reads it.

`[@[!]guard] opcode[.modifier]* operand, ...;` — the opcode is the mnemonic's first
dotted component (`tcgen05` of `tcgen05.mma.cta_group::1.kind::f16`), the modifiers
the rest. Each operand is a structured attribute (`Arg*` below). Registers are SSA
uses of the values their `ptx.reg_decl` defines, listed in `regs`; an `ArgReg` names
its register by position in that list. Whether an operand is read or written is the
instruction's business (the typed ops that replace `ptx.inst` for execution know it);
here every register is a use of its declaration.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr, UnitAttr
from xdsl.ir import Attribute, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_attr_definition,
    prop_def,
    var_operand_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.ptx.base import Instruction, Namer, Reg, RegisterType, int_literal

# --------------------------------------------------------------------------------------
# Operands
# --------------------------------------------------------------------------------------


@irdl_attr_definition
class ArgReg(ParametrizedAttribute):
    """A register: the instruction's `regs[index]`."""

    name = "ptx.arg_reg"
    index: IntAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer(allow_negative=False, allow_boolean=False)),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.index.data}>")


@irdl_attr_definition
class ArgNot(ParametrizedAttribute):
    """A negated predicate source, `!%p` (e.g. `setp`'s combining operand)."""

    name = "ptx.arg_not"
    index: IntAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (IntAttr(parser.parse_integer(allow_negative=False, allow_boolean=False)),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.index.data}>")


@irdl_attr_definition
class ArgInt(ParametrizedAttribute):
    """An integer immediate (decimal, hex, octal, binary; negative) and its `U` suffix."""

    name = "ptx.arg_int"
    value: IntAttr
    unsigned: IntAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            value = parser.parse_integer(allow_boolean=False)
            unsigned = parser.parse_optional_punctuation(",") is not None
            if unsigned:
                parser.parse_keyword("unsigned")
        return (IntAttr(value), IntAttr(int(unsigned)))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.value.data}{', unsigned' if self.unsigned.data else ''}>")


@irdl_attr_definition
class ArgFloat(ParametrizedAttribute):
    """A floating-point immediate by its bits: `0f3F800000` (width 32), `0d…` (64)."""

    name = "ptx.arg_float"
    bits: IntAttr
    width: IntAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            literal = parser.parse_str_literal()
        if not re.fullmatch(r"0f[0-9A-F]{8}|0d[0-9A-F]{16}", literal):
            parser.raise_error(
                f"#ptx.arg_float: expected a PTX literal 0fXXXXXXXX or 0dXXXXXXXXXXXXXXXX, got {literal}"
            )
        return (IntAttr(int(literal[2:], 16)), IntAttr(32 if literal[1] == "f" else 64))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(float_bits_literal(self.bits.data, self.width.data))
        printer.print_string(">")

    def verify(self) -> None:
        if self.width.data not in (32, 64) or not 0 <= self.bits.data < 1 << self.width.data:
            raise VerifyException(f"#ptx.arg_float: {self.bits.data} is not the bits of an f{self.width.data}")


@irdl_attr_definition
class ArgDecimal(ParametrizedAttribute):
    """A decimal floating-point immediate (`1.5`, `1e-3`): PTX reads it as an `.f64`
    literal (PTX ISA 9.0 §4.5.1); kept as written."""

    name = "ptx.arg_decimal"
    text: StringAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_str_literal()),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.text.data)
        printer.print_string(">")


@irdl_attr_definition
class ArgSymbol(ParametrizedAttribute):
    """A variable, parameter or function name, plus a byte offset (`x+8`)."""

    name = "ptx.arg_symbol"
    symbol: StringAttr
    offset: IntAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            symbol = parser.parse_str_literal()
            offset = parser.parse_integer(allow_boolean=False) if parser.parse_optional_punctuation(",") else 0
        return (StringAttr(symbol), IntAttr(offset))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.symbol.data)
        printer.print_string(f", {self.offset.data}>" if self.offset.data else ">")


@irdl_attr_definition
class ArgLabel(ParametrizedAttribute):
    """A label of the enclosing scopes (a branch target), or a `.branchtargets` /
    `.callprototype` name."""

    name = "ptx.arg_label"
    label: StringAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_str_literal()),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.label.data)
        printer.print_string(">")


@irdl_attr_definition
class ArgSpecial(ParametrizedAttribute):
    """A special register: `%tid.x`, `%clusterid.y`, `%envreg3`, `%clock64`."""

    name = "ptx.arg_special"
    register: StringAttr

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            return (StringAttr(parser.parse_str_literal()),)

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_string_literal(self.register.data)
        printer.print_string(">")


@irdl_attr_definition
class ArgSink(ParametrizedAttribute):
    """`_`: a result nobody reads, or a vector element left out."""

    name = "ptx.arg_sink"


@irdl_attr_definition
class ArgAddress(ParametrizedAttribute):
    """`[base]`, `[base+offset]`, or `[base, {coordinates}]` (a tensor map and its
    coordinates). The base is an `ArgReg`, `ArgSymbol` or `ArgInt` (an absolute address).
    `written` is 1 when the source spells the offset, even `+0`: without optimisation
    (`.target ..., debug`) ptxas adds a written zero."""

    name = "ptx.arg_address"
    base: Attribute
    offset: IntAttr
    written: IntAttr
    vector: ArrayAttr[Attribute]

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        """`<base>`, `<base, offset>` (a written offset, even 0), then `, [coordinates]`."""
        offset: int | None = None
        vector: list[Attribute] = []
        with parser.in_angle_brackets():
            base = parser.parse_attribute()
            while parser.parse_optional_punctuation(","):
                if parser.parse_optional_punctuation("["):
                    vector = [parser.parse_attribute()]
                    while parser.parse_optional_punctuation(","):
                        vector.append(parser.parse_attribute())
                    parser.parse_punctuation("]")
                    break
                offset = parser.parse_integer(allow_boolean=False)
        return (base, IntAttr(offset or 0), IntAttr(int(offset is not None)), ArrayAttr(vector))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string("<")
        printer.print_attribute(self.base)
        if self.offset.data or self.written.data:
            printer.print_string(f", {self.offset.data}")
        if self.vector.data:
            printer.print_string(", [")
            printer.print_list(self.vector, printer.print_attribute)
            printer.print_string("]")
        printer.print_string(">")


@irdl_attr_definition
class ArgVector(ParametrizedAttribute):
    """`{a, b, _}`."""

    name = "ptx.arg_vector"
    elements: ArrayAttr[Attribute]


@irdl_attr_definition
class ArgPair(ParametrizedAttribute):
    """`d|p`: two results of one instruction (`setp`, `shfl.sync`, `elect.sync`)."""

    name = "ptx.arg_pair"
    first: Attribute
    second: Attribute


@irdl_attr_definition
class ArgList(ParametrizedAttribute):
    """`(a, b)`: the parameter lists of `call`."""

    name = "ptx.arg_list"
    elements: ArrayAttr[Attribute]


ARG_TYPES = (
    ArgReg, ArgNot, ArgInt, ArgFloat, ArgDecimal, ArgSymbol, ArgLabel, ArgSpecial, ArgSink, ArgAddress, ArgVector,
    ArgPair, ArgList,
)  # fmt: skip


def float_bits_literal(bits: int, width: int) -> str:
    return ("0f%08X" if width == 32 else "0d%016X") % bits


def float_bits(value: float, width: int) -> int:
    """The IEEE bits of `value` at `width` (32 or 64)."""
    return int.from_bytes(struct.pack(">f" if width == 32 else ">d", value), "big")


def _offset_text(offset: int, written: bool = False) -> str:
    return "" if offset == 0 and not written else f"+{offset}"


def arg_text(arg: Attribute, regs: Sequence[SSAValue], name: Namer) -> str:
    """The PTX spelling of one operand."""
    match arg:
        case ArgReg():
            return name(regs[arg.index.data])
        case ArgNot():
            return "!" + name(regs[arg.index.data])
        case ArgInt():
            return int_literal(arg.value.data, bool(arg.unsigned.data))
        case ArgFloat():
            return float_bits_literal(arg.bits.data, arg.width.data)
        case ArgDecimal():
            return arg.text.data
        case ArgSymbol():
            return arg.symbol.data + _offset_text(arg.offset.data)
        case ArgLabel():
            return arg.label.data
        case ArgSpecial():
            return arg.register.data
        case ArgSink():
            return "_"
        case ArgAddress():
            vector = ", {" + ", ".join(arg_text(e, regs, name) for e in arg.vector) + "}" if arg.vector.data else ""
            offset = _offset_text(arg.offset.data, bool(arg.written.data))
            return f"[{arg_text(arg.base, regs, name)}{offset}{vector}]"
        case ArgVector():
            return "{" + ", ".join(arg_text(e, regs, name) for e in arg.elements) + "}"
        case ArgPair():
            return f"{arg_text(arg.first, regs, name)}|{arg_text(arg.second, regs, name)}"
        case ArgList():
            return "(" + ", ".join(arg_text(e, regs, name) for e in arg.elements) + ")"
        case _:
            raise ValueError(f"{arg} is not a ptx.inst operand")


def _parts(arg: Attribute, top: bool) -> Sequence[Attribute]:
    """The operands nested in `arg`, after checking that each may stand there."""
    match arg:
        case ArgAddress():
            if not isinstance(arg.base, ArgReg | ArgSymbol | ArgInt):
                raise VerifyException(f"ptx.inst: an address base is a register, symbol or integer, got {arg.base}")
            return (arg.base, *arg.vector)
        case ArgVector():
            for e in arg.elements:
                if isinstance(e, ArgVector | ArgAddress | ArgList | ArgPair):
                    raise VerifyException(f"ptx.inst: a vector holds registers, immediates and sinks, got {e}")
            return tuple(arg.elements)
        case ArgPair():
            for e in (arg.first, arg.second):
                if not isinstance(e, ArgReg | ArgSink):
                    raise VerifyException(f"ptx.inst: both halves of d|p are registers or _, got {e}")
            return (arg.first, arg.second)
        case ArgList():
            if not top:
                raise VerifyException("ptx.inst: a (list) is an operand of its own")
            return tuple(arg.elements)
        case _:
            if not isinstance(arg, ARG_TYPES):
                raise VerifyException(f"ptx.inst: {arg} is not an operand attribute (ptx.arg_*)")
            return ()


def _check_arg(arg: Attribute, nregs: int, used: set[int], top: bool) -> None:
    if isinstance(arg, ArgReg | ArgNot):
        if not 0 <= arg.index.data < nregs:
            raise VerifyException(f"ptx.inst: operand names register {arg.index.data}; the op has {nregs}")
        used.add(arg.index.data)
        return
    for part in _parts(arg, top):
        _check_arg(part, nregs, used, False)


# --------------------------------------------------------------------------------------
# The instruction
# --------------------------------------------------------------------------------------


@irdl_op_definition
class InstOp(Instruction):
    """Any PTX instruction the front end read; it prints back as written.

    Not executable: the PTX-level interpreter refuses it when a lane executes it, naming
    its opcode and line; the recognizer (`frontend/recognize.py`) replaces it by a typed
    op wherever one has its form.
    """

    name = "ptx.inst"
    opcode = prop_def(StringAttr)
    modifiers = prop_def(ArrayAttr[StringAttr])
    args = prop_def(ArrayAttr[Attribute])
    regs = var_operand_def(Reg)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        opcode: str,
        modifiers: Sequence[str],
        args: Sequence[Attribute],
        regs: Sequence[SSAValue],
        guard: SSAValue | None = None,
        negated: bool = False,
    ):
        props: dict[str, Attribute] = {
            "opcode": StringAttr(opcode),
            "modifiers": ArrayAttr([StringAttr(m) for m in modifiers]),
            "args": ArrayAttr(args),
        }
        if negated:
            props["negated"] = UnitAttr()
        super().__init__(operands=[list(regs), guard], properties=props)

    def mnemonic(self) -> str:
        return self.opcode.data + "".join(f".{m.data}" for m in self.modifiers)

    def ptx_operands(self, name: Namer) -> list[str]:
        return [arg_text(arg, self.regs, name) for arg in self.args]

    def verify_(self) -> None:
        used: set[int] = set()
        for arg in self.args:
            _check_arg(arg, len(self.regs), used, True)
        if unused := sorted(set(range(len(self.regs))) - used):
            raise VerifyException(f"ptx.inst: register operand(s) {unused} appear in no operand")
        if self.guard is not None and cast(RegisterType, self.guard.type).kind.data != "pred":
            raise VerifyException(f"ptx.inst: the guard must be a .pred register, got {self.guard.type}")
        if self.negated is not None and self.guard is None:
            raise VerifyException("ptx.inst: negated without a guard")
