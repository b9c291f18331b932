"""The `ptx` dialect: one op per PTX instruction, over typed virtual registers.

Values of type `!ptx.reg<b32, 7>` are PTX virtual register `%r7` (classes `pred` →
`%p`, `b16` → `%rs`, `b32` → `%r`, `b64` → `%rd`). As in xDSL's riscv backend after
register allocation, the register is named by the *type*: several SSA values may be
the same register (a loop-carried value is written before the loop and again at the
back edge), so a kernel body is a flat instruction list with `ptx.label`s and
`ptx.bra`s, printed in order.

Operands that PTX lets be immediates, symbols or special registers are SSA values
of other types, defined by pseudo-ops that print nothing themselves:

* `ptx.imm` (builtin integer or float type): the literal, e.g. `1`, `0f3F800000`;
* `ptx.symbol` (`!ptx.symbol`): a `.shared` variable or `.param` name;
* `ptx.special` (`!ptx.special`): a special register, e.g. `%tid.x`.

Each instruction's operand constraints say which slots accept which kinds, so the
verifier rejects (for instance) an immediate multicast mask, which ptxas would.
`xdsl_tmem.backend.printer` renders a `ptx.module` as PTX text; the mnemonics are
spelled exactly as llc-22 spells them (`tests/test_ptx_backend.py` compares them with
llc-22's output for every NVVM-level program).
"""

from __future__ import annotations

import struct
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    AnyFloatConstr,
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, Dialect, ParametrizedAttribute, Region, SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    base,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import Commutative, IsolatedFromAbove, NoTerminator, OpTrait
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects import nvvm

# --------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------

REGISTER_PREFIX = {"pred": "%p", "b16": "%rs", "b32": "%r", "b64": "%rd"}


@irdl_attr_definition
class RegisterType(ParametrizedAttribute, TypeAttribute):
    """`!ptx.reg<class, index>`: the virtual register `%r<index>` of a `.reg` class."""

    name = "ptx.reg"
    kind: StringAttr
    index: IntAttr

    def __init__(self, kind: str, index: int):
        super().__init__(StringAttr(kind), IntAttr(index))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            kind = parser.parse_identifier()
            parser.parse_punctuation(",")
            index = parser.parse_integer()
        if kind not in REGISTER_PREFIX:
            parser.raise_error(f"!ptx.reg: register class must be one of {', '.join(REGISTER_PREFIX)}, got {kind}")
        return (StringAttr(kind), IntAttr(index))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.kind.data}, {self.index.data}>")

    def verify(self) -> None:
        if self.kind.data not in REGISTER_PREFIX:
            raise VerifyException(f"!ptx.reg: register class must be one of {', '.join(REGISTER_PREFIX)}")

    @property
    def register_name(self) -> str:
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


@irdl_op_definition
class ImmOp(IRDLOperation):
    """An immediate operand; prints nothing, its users print the literal."""

    name = "ptx.imm"
    value = prop_def(base(IntegerAttr) | base(FloatAttr))
    result = result_def(Imm)
    assembly_format = "$value attr-dict `:` type($result)"

    def __init__(self, value: IntegerAttr | FloatAttr):
        super().__init__(properties={"value": value}, result_types=[value.type])

    def literal(self) -> str:
        value = self.value
        if isinstance(value, IntegerAttr):
            data = value.value.data
            # i1 immediates are 0 / 1 (an IntegerAttr normalises true to -1).
            return str(data & 1) if isinstance(value.type, IntegerType) and value.type.width.data == 1 else str(data)
        width = 32 if value.type.bitwidth == 32 else 64
        return float_literal(value.value.data, width)


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


def _address(name: Namer, addr: SSAValue, offset: int) -> str:
    if offset == 0:
        return f"[{name(addr)}]"
    sign = "+" if offset > 0 else "-"
    return f"[{name(addr)}{sign}{abs(offset)}]"


def _vector(name: Namer, values: Sequence[SSAValue]) -> str:
    return "{" + ", ".join(name(v) for v in values) + "}"


class _TypedInstruction(Instruction, ABC):
    """`op.type` instructions; `MNEMONIC` is the base name."""

    MNEMONIC: ClassVar[str]
    type = prop_def(StringAttr)

    def mnemonic(self) -> str:
        return f"{self.MNEMONIC}.{self.type.data}"


class _BinaryOp(_TypedInstruction, ABC):
    traits = traits_def(WritesOnlyRegisters())
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def __init__(self, type: str, res: RegisterType, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs, None], result_types=[res], properties={"type": StringAttr(type)})

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.lhs), name(self.rhs)]


@irdl_op_definition
class AddOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.add"
    MNEMONIC: ClassVar[str] = "add"


@irdl_op_definition
class SubOp(_BinaryOp):
    name = "ptx.sub"
    MNEMONIC: ClassVar[str] = "sub"


@irdl_op_definition
class MulOp(_BinaryOp):
    traits = traits_def(Commutative())
    """`mul.{lo,hi,wide}.type` for integers, `mul[.rn].f32` for floats (in `type`)."""

    name = "ptx.mul"
    MNEMONIC: ClassVar[str] = "mul"


@irdl_op_definition
class DivOp(_BinaryOp):
    name = "ptx.div"
    MNEMONIC: ClassVar[str] = "div"


@irdl_op_definition
class RemOp(_BinaryOp):
    name = "ptx.rem"
    MNEMONIC: ClassVar[str] = "rem"


@irdl_op_definition
class AndOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.and"
    MNEMONIC: ClassVar[str] = "and"
    PRED_FORM: ClassVar[bool] = True


@irdl_op_definition
class OrOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.or"
    MNEMONIC: ClassVar[str] = "or"
    PRED_FORM: ClassVar[bool] = True


@irdl_op_definition
class XorOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.xor"
    MNEMONIC: ClassVar[str] = "xor"
    PRED_FORM: ClassVar[bool] = True


@irdl_op_definition
class ShlOp(_BinaryOp):
    name = "ptx.shl"
    MNEMONIC: ClassVar[str] = "shl"


@irdl_op_definition
class ShrOp(_BinaryOp):
    name = "ptx.shr"
    MNEMONIC: ClassVar[str] = "shr"


@irdl_op_definition
class MinOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.min"
    MNEMONIC: ClassVar[str] = "min"


@irdl_op_definition
class MaxOp(_BinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.max"
    MNEMONIC: ClassVar[str] = "max"


class _UnaryOp(_TypedInstruction, ABC):
    traits = traits_def(WritesOnlyRegisters())
    res = result_def(Reg)
    src = operand_def(RegOrImm)

    def __init__(self, type: str, res: RegisterType, src: SSAValue):
        super().__init__(operands=[src, None], result_types=[res], properties={"type": StringAttr(type)})

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]


@irdl_op_definition
class NotOp(_UnaryOp):
    name = "ptx.not"
    MNEMONIC: ClassVar[str] = "not"
    PRED_FORM: ClassVar[bool] = True


@irdl_op_definition
class NegOp(_UnaryOp):
    name = "ptx.neg"
    MNEMONIC: ClassVar[str] = "neg"


@irdl_op_definition
class MovOp(_TypedInstruction):
    """`mov.type d, a` — a register, immediate, symbol address or special register."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.mov"
    MNEMONIC: ClassVar[str] = "mov"
    res = result_def(Reg)
    src = operand_def(MovSource)

    def __init__(self, type: str, res: RegisterType, src: SSAValue):
        super().__init__(operands=[src, None], result_types=[res], properties={"type": StringAttr(type)})

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]


class _TernaryOp(_TypedInstruction, ABC):
    traits = traits_def(WritesOnlyRegisters())
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    c = operand_def(RegOrImm)

    def __init__(self, type: str, res: RegisterType, a: SSAValue, b: SSAValue, c: SSAValue):
        super().__init__(operands=[a, b, c, None], result_types=[res], properties={"type": StringAttr(type)})

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.a), name(self.b), name(self.c)]


@irdl_op_definition
class MadOp(_TernaryOp):
    """`mad.{lo,wide}.type d, a, b, c` = a * b + c."""

    name = "ptx.mad"
    MNEMONIC: ClassVar[str] = "mad"


@irdl_op_definition
class FmaOp(_TernaryOp):
    """`fma.rn.f32 d, a, b, c`."""

    name = "ptx.fma"
    MNEMONIC: ClassVar[str] = "fma"


@irdl_op_definition
class SelpOp(_TypedInstruction):
    """`selp.type d, a, b, p` = p ? a : b."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.selp"
    MNEMONIC: ClassVar[str] = "selp"
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    cond = operand_def(Reg)

    def __init__(self, type: str, res: RegisterType, a: SSAValue, b: SSAValue, cond: SSAValue):
        super().__init__(operands=[a, b, cond, None], result_types=[res], properties={"type": StringAttr(type)})

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.a), name(self.b), name(self.cond)]


@irdl_op_definition
class SetpOp(Instruction):
    """`setp.cmp.type p, a, b`."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.setp"
    cmp = prop_def(StringAttr)
    type = prop_def(StringAttr)
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def __init__(self, cmp: str, type: str, res: RegisterType, lhs: SSAValue, rhs: SSAValue):
        super().__init__(
            operands=[lhs, rhs, None],
            result_types=[res],
            properties={"cmp": StringAttr(cmp), "type": StringAttr(type)},
        )

    def mnemonic(self) -> str:
        return f"setp.{self.cmp.data}.{self.type.data}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.lhs), name(self.rhs)]


@irdl_op_definition
class CvtOp(Instruction):
    """`cvt[.rnd].dtype.stype d, a`; `modifier` holds the rounding mode if any."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.cvt"
    dtype = prop_def(StringAttr)
    stype = prop_def(StringAttr)
    modifier = opt_prop_def(StringAttr)
    res = result_def(Reg)
    src = operand_def(Reg)

    def __init__(self, dtype: str, stype: str, res: RegisterType, src: SSAValue, modifier: str | None = None):
        props: dict[str, Attribute] = {"dtype": StringAttr(dtype), "stype": StringAttr(stype)}
        if modifier is not None:
            props["modifier"] = StringAttr(modifier)
        super().__init__(operands=[src, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        rounding = "" if self.modifier is None else f".{self.modifier.data}"
        return f"cvt{rounding}.{self.dtype.data}.{self.stype.data}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]


@irdl_op_definition
class LdOp(Instruction):
    """`ld.space[.vN].type d|{d..}, [addr+offset]`."""

    name = "ptx.ld"
    space = prop_def(StringAttr)
    type = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    res = var_result_def(Reg)
    addr = operand_def(Address)

    def __init__(self, space: str, type: str, res: Sequence[RegisterType], addr: SSAValue, offset: int = 0):
        super().__init__(
            operands=[addr, None],
            result_types=[res],
            properties={"space": StringAttr(space), "type": StringAttr(type), "offset": IntAttr(offset)},
        )

    def mnemonic(self) -> str:
        vec = f".v{len(self.res)}" if len(self.res) > 1 else ""
        space = f".{self.space.data}" if self.space.data else ""
        return f"ld{space}{vec}.{self.type.data}"

    def ptx_operands(self, name: Namer) -> list[str]:
        dest = _vector(name, self.res) if len(self.res) > 1 else name(self.res[0])
        return [dest, _address(name, self.addr, self.offset.data)]

    def verify_(self) -> None:
        if len(self.res) not in (1, 2, 4):
            raise VerifyException(f"ptx.ld: vector width must be 1, 2 or 4, got {len(self.res)}")


@irdl_op_definition
class StOp(Instruction):
    """`st.space[.vN].type [addr+offset], a|{a..}`."""

    name = "ptx.st"
    space = prop_def(StringAttr)
    type = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    values = var_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, space: str, type: str, addr: SSAValue, values: Sequence[SSAValue], offset: int = 0):
        super().__init__(
            operands=[addr, values, None],
            properties={"space": StringAttr(space), "type": StringAttr(type), "offset": IntAttr(offset)},
        )

    def mnemonic(self) -> str:
        vec = f".v{len(self.values)}" if len(self.values) > 1 else ""
        space = f".{self.space.data}" if self.space.data else ""
        return f"st{space}{vec}.{self.type.data}"

    def ptx_operands(self, name: Namer) -> list[str]:
        src = _vector(name, self.values) if len(self.values) > 1 else name(self.values[0])
        return [_address(name, self.addr, self.offset.data), src]

    def verify_(self) -> None:
        if len(self.values) not in (1, 2, 4):
            raise VerifyException(f"ptx.st: vector width must be 1, 2 or 4, got {len(self.values)}")


@irdl_op_definition
class LabelOp(IRDLOperation):
    """A branch target: `name:`."""

    name = "ptx.label"
    label = prop_def(StringAttr)
    assembly_format = "$label attr-dict"

    def __init__(self, label: str):
        super().__init__(properties={"label": StringAttr(label)})


@irdl_op_definition
class BraOp(Instruction):
    """`[@p] bra[.uni] label` — `.uni` when the guard is warp-uniform."""

    name = "ptx.bra"
    target = prop_def(StringAttr)
    uniform = opt_prop_def(UnitAttr)

    def __init__(self, target: str, guard: SSAValue | None = None, negated: bool = False, uniform: bool = False):
        props: dict[str, Attribute] = {"target": StringAttr(target)}
        if negated:
            props["negated"] = UnitAttr()
        if uniform:
            props["uniform"] = UnitAttr()
        super().__init__(operands=[guard], properties=props)

    def mnemonic(self) -> str:
        return "bra.uni" if self.uniform else "bra"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [self.target.data]


@irdl_op_definition
class RetOp(Instruction):
    name = "ptx.ret"

    def __init__(self):
        super().__init__(operands=[None])

    def mnemonic(self) -> str:
        return "ret"

    def ptx_operands(self, name: Namer) -> list[str]:
        return []


class _FixedInstruction(Instruction, ABC):
    """An instruction whose text is fixed by its properties: `TEXT` or `text()`."""

    def __init__(self, properties: dict[str, Attribute] | None = None):
        super().__init__(operands=[None], properties=properties or {})

    def ptx_operands(self, name: Namer) -> list[str]:
        return []


# ---- barriers and fences ------------------------------------------------------------


@irdl_op_definition
class BarSyncOp(Instruction):
    """`bar.sync id[, count]` (`barrier.sync.aligned`)."""

    name = "ptx.bar_sync"
    id = operand_def(RegOrImm)
    count = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, id: SSAValue, count: SSAValue | None = None):
        super().__init__(operands=[id, count, None])

    def mnemonic(self) -> str:
        return "bar.sync"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.id)] + ([] if self.count is None else [name(self.count)])


@irdl_op_definition
class BarRedOp(Instruction):
    """`bar.red.{popc.u32,and.pred,or.pred} d, id[, count], p`."""

    name = "ptx.bar_red"
    reduction = prop_def(StringAttr)  # "popc.u32", "and.pred", "or.pred"
    res = result_def(Reg)
    id = operand_def(RegOrImm)
    count = opt_operand_def(RegOrImm)
    pred = operand_def(Reg)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, reduction: str, res: RegisterType, id: SSAValue, count: SSAValue | None, pred: SSAValue):
        super().__init__(
            operands=[id, count, pred, None], result_types=[res], properties={"reduction": StringAttr(reduction)}
        )

    def mnemonic(self) -> str:
        return f"bar.red.{self.reduction.data}"

    def ptx_operands(self, name: Namer) -> list[str]:
        count = [] if self.count is None else [name(self.count)]
        return [name(self.res), name(self.id), *count, name(self.pred)]


@irdl_op_definition
class CvtaOp(Instruction):
    """`cvta.to.shared.u64 d, a` (a generic address into a shared-window one), or with
    `to_generic` `cvta.shared.u64 d, a` (the other way)."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.cvta"
    space = prop_def(StringAttr)
    to_generic = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    src = operand_def(Reg)

    def __init__(self, space: str, res: RegisterType, src: SSAValue, to_generic: bool = False):
        props: dict[str, Attribute] = {"space": StringAttr(space)}
        if to_generic:
            props["to_generic"] = UnitAttr()
        super().__init__(operands=[src, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        return f"cvta.{self.space.data}.u64" if self.to_generic else f"cvta.to.{self.space.data}.u64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]


@irdl_op_definition
class BarArriveOp(Instruction):
    """`bar.arrive id, count`."""

    name = "ptx.bar_arrive"
    id = operand_def(RegOrImm)
    count = operand_def(RegOrImm)

    def __init__(self, id: SSAValue, count: SSAValue):
        super().__init__(operands=[id, count, None])

    def mnemonic(self) -> str:
        return "bar.arrive"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.id), name(self.count)]


@irdl_op_definition
class BarWarpSyncOp(Instruction):
    """`bar.warp.sync membermask`."""

    name = "ptx.bar_warp_sync"
    mask = operand_def(RegOrImm)

    def __init__(self, mask: SSAValue):
        super().__init__(operands=[mask, None])

    def mnemonic(self) -> str:
        return "bar.warp.sync"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.mask)]


@irdl_op_definition
class BarrierClusterOp(_FixedInstruction):
    """`barrier.cluster.{arrive,wait}[.relaxed][.aligned]`."""

    name = "ptx.barrier_cluster"
    kind = prop_def(StringAttr)  # "arrive", "arrive.relaxed", "wait"
    aligned = opt_prop_def(UnitAttr)

    def mnemonic(self) -> str:
        return f"barrier.cluster.{self.kind.data}" + (".aligned" if self.aligned else "")


@irdl_op_definition
class FenceOp(_FixedInstruction):
    """`fence.proxy.async.shared::cta`, `fence.mbarrier_init.release.cluster`, ...
    (the whole mnemonic in `text`)."""

    name = "ptx.fence"
    text = prop_def(StringAttr)

    def mnemonic(self) -> str:
        return self.text.data


# ---- mbarrier ---------------------------------------------------------------------------


@irdl_op_definition
class MbarrierInitOp(Instruction):
    """`mbarrier.init[.shared].b64 [addr], count`."""

    name = "ptx.mbarrier_init"
    space = prop_def(StringAttr)  # "shared" or "" (generic)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    count = operand_def(RegOrImm)

    def __init__(self, space: str, addr: SSAValue, count: SSAValue, offset: int = 0):
        super().__init__(
            operands=[addr, count, None], properties={"space": StringAttr(space), "offset": IntAttr(offset)}
        )

    def mnemonic(self) -> str:
        return "mbarrier.init" + (f".{self.space.data}" if self.space.data else "") + ".b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [_address(name, self.addr, self.offset.data), name(self.count)]


@irdl_op_definition
class MbarrierArriveOp(Instruction):
    """`mbarrier.arrive[.expect_tx][.sem.scope][.space].b64 state|_, [addr][, count]`.

    `qualifiers` is everything between `mbarrier.arrive` and `.b64` (e.g. `.shared`,
    `.release.cluster.shared::cluster`, `.expect_tx.shared`); without a `state`
    result the sink `_` is printed.
    """

    name = "ptx.mbarrier_arrive"
    qualifiers = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    state = opt_result_def(Reg)
    addr = operand_def(Address)
    count = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        qualifiers: str,
        addr: SSAValue,
        count: SSAValue | None = None,
        state: RegisterType | None = None,
        offset: int = 0,
    ):
        super().__init__(
            operands=[addr, count, None],
            result_types=[[state] if state is not None else []],
            properties={"qualifiers": StringAttr(qualifiers), "offset": IntAttr(offset)},
        )

    def mnemonic(self) -> str:
        return f"mbarrier.arrive{self.qualifiers.data}.b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        state = "_" if self.state is None else name(self.state)
        count = [] if self.count is None else [name(self.count)]
        return [state, _address(name, self.addr, self.offset.data), *count]


@irdl_op_definition
class MbarrierExpectTxOp(Instruction):
    """`mbarrier.{expect_tx,complete_tx}.relaxed.cta.shared.b64 [addr], tx`."""

    name = "ptx.mbarrier_tx"
    text = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    tx = operand_def(RegOrImm)

    def __init__(self, text: str, addr: SSAValue, tx: SSAValue, offset: int = 0):
        super().__init__(operands=[addr, tx, None], properties={"text": StringAttr(text), "offset": IntAttr(offset)})

    def mnemonic(self) -> str:
        return self.text.data

    def ptx_operands(self, name: Namer) -> list[str]:
        return [_address(name, self.addr, self.offset.data), name(self.tx)]


@irdl_op_definition
class MbarrierInvalOp(Instruction):
    """`mbarrier.inval[.shared].b64 [addr]`."""

    name = "ptx.mbarrier_inval"
    space = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)

    def __init__(self, space: str, addr: SSAValue, offset: int = 0):
        super().__init__(operands=[addr, None], properties={"space": StringAttr(space), "offset": IntAttr(offset)})

    def mnemonic(self) -> str:
        return "mbarrier.inval" + (f".{self.space.data}" if self.space.data else "") + ".b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [_address(name, self.addr, self.offset.data)]


@irdl_op_definition
class MbarrierWaitOp(Instruction):
    """`mbarrier.{try_wait,test_wait}[.parity][.space].b64 p, [addr], phase[, ticks]`.

    One probe; the blocking wait is this plus `@!p bra` back to it.
    """

    name = "ptx.mbarrier_wait"
    kind = prop_def(StringAttr)  # "try_wait.parity", "test_wait.parity", "try_wait", ...
    space = prop_def(StringAttr)
    offset = prop_def(IntAttr)
    res = result_def(Reg)
    addr = operand_def(Address)
    phase = operand_def(RegOrImm)
    ticks = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        kind: str,
        space: str,
        res: RegisterType,
        addr: SSAValue,
        phase: SSAValue,
        ticks: SSAValue | None = None,
        offset: int = 0,
    ):
        super().__init__(
            operands=[addr, phase, ticks, None],
            result_types=[res],
            properties={"kind": StringAttr(kind), "space": StringAttr(space), "offset": IntAttr(offset)},
        )

    def mnemonic(self) -> str:
        return f"mbarrier.{self.kind.data}" + (f".{self.space.data}" if self.space.data else "") + ".b64"

    def ptx_operands(self, name: Namer) -> list[str]:
        ticks = [] if self.ticks is None else [name(self.ticks)]
        return [name(self.res), _address(name, self.addr, self.offset.data), name(self.phase), *ticks]


# ---- tcgen05 ------------------------------------------------------------------------------


@irdl_op_definition
class Tcgen05AllocOp(Instruction):
    """`tcgen05.alloc.cta_group::N.sync.aligned[.shared::cta].b32 [dst], ncols`."""

    name = "ptx.tcgen05_alloc"
    cta_group = prop_def(nvvm.CTAGroupKindAttr)
    shared = opt_prop_def(UnitAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    ncols = operand_def(RegOrImm)

    def __init__(self, cta_group: int, shared: bool, addr: SSAValue, ncols: SSAValue, offset: int = 0):
        props: dict[str, Attribute] = {
            "cta_group": nvvm.CTAGroupKindAttr.from_int(cta_group),
            "offset": IntAttr(offset),
        }
        if shared:
            props["shared"] = UnitAttr()
        super().__init__(operands=[addr, ncols, None], properties=props)

    def mnemonic(self) -> str:
        space = ".shared::cta" if self.shared else ""
        return f"tcgen05.alloc.cta_group::{self.cta_group.as_int()}.sync.aligned{space}.b32"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [_address(name, self.addr, self.offset.data), name(self.ncols)]


@irdl_op_definition
class Tcgen05DeallocOp(Instruction):
    """`tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, ncols`."""

    name = "ptx.tcgen05_dealloc"
    cta_group = prop_def(nvvm.CTAGroupKindAttr)
    taddr = operand_def(Reg)
    ncols = operand_def(RegOrImm)

    def __init__(self, cta_group: int, taddr: SSAValue, ncols: SSAValue):
        super().__init__(
            operands=[taddr, ncols, None], properties={"cta_group": nvvm.CTAGroupKindAttr.from_int(cta_group)}
        )

    def mnemonic(self) -> str:
        return f"tcgen05.dealloc.cta_group::{self.cta_group.as_int()}.sync.aligned.b32"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.taddr), name(self.ncols)]


@irdl_op_definition
class Tcgen05TextOp(_FixedInstruction):
    """Operand-less tcgen05 instructions: relinquish_alloc_permit, fence, wait."""

    name = "ptx.tcgen05"
    text = prop_def(StringAttr)

    def mnemonic(self) -> str:
        return self.text.data


@irdl_op_definition
class Tcgen05CommitOp(Instruction):
    """`tcgen05.commit.cta_group::N.mbarrier::arrive::one.shared::cluster[.multicast::cluster].b64
    [mbar][, mask]` — the mask must be a .b16 register (ptx-nvvm.md §1.6)."""

    name = "ptx.tcgen05_commit"
    cta_group = prop_def(nvvm.CTAGroupKindAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    mask = opt_operand_def(Reg)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, cta_group: int, addr: SSAValue, mask: SSAValue | None = None, offset: int = 0):
        super().__init__(
            operands=[addr, mask, None],
            properties={"cta_group": nvvm.CTAGroupKindAttr.from_int(cta_group), "offset": IntAttr(offset)},
        )

    def mnemonic(self) -> str:
        multicast = ".multicast::cluster" if self.mask is not None else ""
        return (
            f"tcgen05.commit.cta_group::{self.cta_group.as_int()}.mbarrier::arrive::one.shared::cluster{multicast}.b64"
        )

    def ptx_operands(self, name: Namer) -> list[str]:
        mask = [] if self.mask is None else [name(self.mask)]
        return [_address(name, self.addr, self.offset.data), *mask]

    def verify_(self) -> None:
        if self.mask is not None:
            mask_type = self.mask.type
            if not isinstance(mask_type, RegisterType) or mask_type.kind.data != "b16":
                raise VerifyException("ptx.tcgen05_commit: the multicast mask must be a .b16 register")


class _Tcgen05LdStOp(Instruction, ABC):
    """tcgen05.ld / tcgen05.st: the shape is the nvvm dialect's, and `.x<num>` is derived
    from the register count through the nvvm shape table (m(shape) registers per `.x1`)."""

    shape = prop_def(nvvm.Tcgen05LdStShapeAttr)

    @abstractmethod
    def registers(self) -> Sequence[SSAValue]: ...

    def qualifiers(self) -> str:
        shape = self.shape.data
        return f"{shape.ptx_name}.x{shape.num(len(self.registers()))}"

    def verify_(self) -> None:
        # PTX ISA, tcgen05.ld / tcgen05.st (the .num table): m(shape) x num registers per
        # thread, num a power of two, at most 128 registers.
        shape, count = self.shape.data, len(self.registers())
        if not shape.fits(count):
            raise VerifyException(
                f"{self.name}: .{shape.ptx_name} moves {shape.registers_per_num} x num registers (num a power "
                f"of two, at most {nvvm.MAX_LDST_REGISTERS} registers): got {count}"
            )


@irdl_op_definition
class Tcgen05LdOp(_Tcgen05LdStOp):
    """`tcgen05.ld.sync.aligned.<shape>.x<num>[.pack::16b].b32 {d..}, [taddr][, imm]`."""

    name = "ptx.tcgen05_ld"
    pack = opt_prop_def(UnitAttr)
    res = var_result_def(Reg)
    taddr = operand_def(Reg)
    split = opt_operand_def(Imm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        shape: nvvm.Tcgen05LdStShape,
        res: Sequence[RegisterType],
        taddr: SSAValue,
        split: SSAValue | None = None,
        pack: bool = False,
    ):
        props: dict[str, Attribute] = {"shape": nvvm.Tcgen05LdStShapeAttr(shape)}
        if pack:
            props["pack"] = UnitAttr()
        super().__init__(operands=[taddr, split, None], result_types=[res], properties=props)

    def registers(self) -> Sequence[SSAValue]:
        return self.res

    def mnemonic(self) -> str:
        pack = ".pack::16b" if self.pack else ""
        return f"tcgen05.ld.sync.aligned.{self.qualifiers()}{pack}.b32"

    def ptx_operands(self, name: Namer) -> list[str]:
        split = [] if self.split is None else [name(self.split)]
        return [_vector(name, self.res), f"[{name(self.taddr)}]", *split]


@irdl_op_definition
class Tcgen05StOp(_Tcgen05LdStOp):
    """`tcgen05.st.sync.aligned.<shape>.x<num>[.unpack::16b].b32 [taddr][, imm], {a..}`."""

    name = "ptx.tcgen05_st"
    unpack = opt_prop_def(UnitAttr)
    taddr = operand_def(Reg)
    split = opt_operand_def(Imm)
    values = var_operand_def(Reg)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        shape: nvvm.Tcgen05LdStShape,
        taddr: SSAValue,
        values: Sequence[SSAValue],
        split: SSAValue | None = None,
        unpack: bool = False,
    ):
        props: dict[str, Attribute] = {"shape": nvvm.Tcgen05LdStShapeAttr(shape)}
        if unpack:
            props["unpack"] = UnitAttr()
        super().__init__(operands=[taddr, split, values, None], properties=props)

    def registers(self) -> Sequence[SSAValue]:
        return self.values

    def mnemonic(self) -> str:
        unpack = ".unpack::16b" if self.unpack else ""
        return f"tcgen05.st.sync.aligned.{self.qualifiers()}{unpack}.b32"

    def ptx_operands(self, name: Namer) -> list[str]:
        split = [] if self.split is None else [name(self.split)]
        return [f"[{name(self.taddr)}]", *split, _vector(name, self.values)]


@irdl_op_definition
class Tcgen05MmaOp(Instruction):
    """`tcgen05.mma.cta_group::N.kind::K[.collector::a::C][.ashift] [d], a|[a], b, idesc,
    [{mask..},] enable_input_d[, scale]`."""

    name = "ptx.tcgen05_mma"
    cta_group = prop_def(nvvm.CTAGroupKindAttr)
    kind = prop_def(nvvm.Tcgen05MMAKindAttr)
    collector = prop_def(nvvm.Tcgen05MMACollectorOpAttr)
    ashift = opt_prop_def(UnitAttr)
    a_tmem = opt_prop_def(UnitAttr)
    d = operand_def(Reg)
    a = operand_def(Reg)
    b = operand_def(Reg)
    idesc = operand_def(RegOrImm)
    disable_output_lane = var_operand_def(RegOrImm)
    enable_input_d = operand_def(RegOrImm)
    scale = opt_operand_def(Imm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        cta_group: int,
        kind: nvvm.Tcgen05MMAKind,
        collector: nvvm.Tcgen05MMACollectorOp,
        d: SSAValue,
        a: SSAValue,
        b: SSAValue,
        idesc: SSAValue,
        enable_input_d: SSAValue,
        *,
        a_tmem: bool = False,
        ashift: bool = False,
        mask: Sequence[SSAValue] = (),
        scale: SSAValue | None = None,
    ):
        props: dict[str, Attribute] = {
            "cta_group": nvvm.CTAGroupKindAttr.from_int(cta_group),
            "kind": nvvm.Tcgen05MMAKindAttr(kind),
            "collector": nvvm.Tcgen05MMACollectorOpAttr(collector),
        }
        if a_tmem:
            props["a_tmem"] = UnitAttr()
        if ashift:
            props["ashift"] = UnitAttr()
        super().__init__(operands=[d, a, b, idesc, mask, enable_input_d, scale, None], properties=props)

    def mnemonic(self) -> str:
        # llc-22 spells `.ashift` after the collector, except in the
        # disable-output-lane form, where it comes first (both are valid PTX).
        ashift = ".ashift" if self.ashift else ""
        collector = f".collector::a::{self.collector.data.value}"
        qualifiers = f"{ashift}{collector}" if self.disable_output_lane else f"{collector}{ashift}"
        return f"tcgen05.mma.cta_group::{self.cta_group.as_int()}.kind::{self.kind.data.value}{qualifiers}"

    def ptx_operands(self, name: Namer) -> list[str]:
        a = f"[{name(self.a)}]" if self.a_tmem else name(self.a)
        mask = [_vector(name, self.disable_output_lane)] if self.disable_output_lane else []
        scale = [] if self.scale is None else [name(self.scale)]
        return [f"[{name(self.d)}]", a, name(self.b), name(self.idesc), *mask, name(self.enable_input_d), *scale]


@irdl_op_definition
class Tcgen05CpOp(Instruction):
    """`tcgen05.cp.cta_group::N.<shape>[.<multicast>][.b8x16.<src format>] [taddr], s_desc`:
    the qualifiers are the nvvm dialect's attributes."""

    name = "ptx.tcgen05_cp"
    cta_group = prop_def(nvvm.CTAGroupKindAttr)
    shape = prop_def(nvvm.Tcgen05CpShapeAttr)
    multicast = prop_def(nvvm.Tcgen05CpMulticastAttr)
    src_format = opt_prop_def(nvvm.Tcgen05CpSrcFormatAttr)
    taddr = operand_def(Reg)
    desc = operand_def(Reg)

    def __init__(
        self,
        cta_group: int,
        shape: nvvm.Tcgen05CpShape,
        multicast: nvvm.Tcgen05CpMulticast,
        src_format: nvvm.Tcgen05CpSrcFormat | None,
        taddr: SSAValue,
        desc: SSAValue,
    ):
        props: dict[str, Attribute] = {
            "cta_group": nvvm.CTAGroupKindAttr.from_int(cta_group),
            "shape": nvvm.Tcgen05CpShapeAttr(shape),
            "multicast": nvvm.Tcgen05CpMulticastAttr(multicast),
        }
        if src_format is not None:
            props["src_format"] = nvvm.Tcgen05CpSrcFormatAttr(src_format)
        super().__init__(operands=[taddr, desc, None], properties=props)

    def mnemonic(self) -> str:
        qualifiers = f".cta_group::{self.cta_group.as_int()}.{self.shape.data.value.removeprefix('shape_')}"
        multicast = self.multicast.data.value
        if multicast.startswith("warpx2"):
            qualifiers += f".warpx2::{multicast.removeprefix('warpx2_')}"
        elif multicast != "none":
            qualifiers += f".{multicast}"
        if self.src_format is not None:
            qualifiers += f".b8x16.{self.src_format.data.value}"
        return f"tcgen05.cp{qualifiers}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [f"[{name(self.taddr)}]", name(self.desc)]


@irdl_op_definition
class Tcgen05ShiftOp(Instruction):
    """`tcgen05.shift.cta_group::N.down [taddr]`."""

    name = "ptx.tcgen05_shift"
    cta_group = prop_def(nvvm.CTAGroupKindAttr)
    taddr = operand_def(Reg)

    def __init__(self, cta_group: int, taddr: SSAValue):
        super().__init__(operands=[taddr, None], properties={"cta_group": nvvm.CTAGroupKindAttr.from_int(cta_group)})

    def mnemonic(self) -> str:
        return f"tcgen05.shift.cta_group::{self.cta_group.as_int()}.down"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [f"[{name(self.taddr)}]"]


# ---- misc ---------------------------------------------------------------------------------


@irdl_op_definition
class ElectSyncOp(Instruction):
    """`elect.sync _|p, membermask`."""

    name = "ptx.elect_sync"
    res = result_def(Reg)
    mask = operand_def(RegOrImm)

    def __init__(self, res: RegisterType, mask: SSAValue):
        super().__init__(operands=[mask, None], result_types=[res])

    def mnemonic(self) -> str:
        return "elect.sync"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [f"_|{name(self.res)}", name(self.mask)]


@irdl_op_definition
class MapaOp(Instruction):
    """`mapa.shared::cluster.u32 d, a, rank` (32-bit shared window addresses) or
    `mapa.u64 d, a, rank` (generic addresses)."""

    name = "ptx.mapa"
    generic = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    addr = operand_def(Address)
    rank = operand_def(RegOrImm)

    def __init__(self, res: RegisterType, addr: SSAValue, rank: SSAValue, generic: bool = False):
        super().__init__(
            operands=[addr, rank, None], result_types=[res], properties={"generic": UnitAttr()} if generic else {}
        )

    def mnemonic(self) -> str:
        return "mapa.u64" if self.generic else "mapa.shared::cluster.u32"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.addr), name(self.rank)]


# --------------------------------------------------------------------------------------
# Module structure
# --------------------------------------------------------------------------------------


@irdl_op_definition
class GlobalOp(IRDLOperation):
    """`.shared .align A .b8 name[size];` (or a scalar `.bN name;`)."""

    name = "ptx.global"
    sym_name = prop_def(StringAttr)
    space = prop_def(StringAttr)
    alignment = prop_def(IntAttr)
    elem = prop_def(StringAttr)  # "b8", "b32", "b64", ...
    count = opt_prop_def(IntAttr)  # array length; absent for a scalar
    assembly_format = "$space $sym_name `align` $alignment $elem (`[` $count^ `]`)? attr-dict"

    def __init__(self, sym_name: str, space: str, alignment: int, elem: str, count: int | None):
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "space": StringAttr(space),
            "alignment": IntAttr(alignment),
            "elem": StringAttr(elem),
        }
        if count is not None:
            props["count"] = IntAttr(count)
        super().__init__(properties=props)

    def ptx_line(self) -> str:
        size = "" if self.count is None else f"[{self.count.data}]"
        return f".{self.space.data} .align {self.alignment.data} .{self.elem.data} {self.sym_name.data}{size};"


@irdl_op_definition
class EntryOp(IRDLOperation):
    """`.visible .entry name(.param ...) directives { body }`.

    `params` are the `.param` declarations (e.g. `.u64 .ptr .global .align 1 k_param_0`);
    `directives` the performance directives (`.maxntid 160, 1, 1`, ...). The body is a
    flat instruction list.
    """

    name = "ptx.entry"
    sym_name = prop_def(StringAttr)
    params = prop_def(ArrayAttr[StringAttr])
    directives = prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), IsolatedFromAbove())
    assembly_format = "$sym_name `params` $params `directives` $directives $body attr-dict"

    def __init__(self, sym_name: str, params: Sequence[str], directives: Sequence[str], body: Region):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "params": ArrayAttr([StringAttr(p) for p in params]),
                "directives": ArrayAttr([StringAttr(d) for d in directives]),
            },
            regions=[body],
        )


@irdl_op_definition
class ModuleOp(IRDLOperation):
    """A PTX module: `.version`, `.target`, `.address_size 64`, globals and entries."""

    name = "ptx.module"
    version = prop_def(StringAttr)
    target = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), IsolatedFromAbove())
    assembly_format = "`version` $version `target` $target $body attr-dict"

    def __init__(self, version: str, target: str, body: Region):
        super().__init__(properties={"version": StringAttr(version), "target": StringAttr(target)}, regions=[body])


PTX = Dialect(
    "ptx",
    [
        ImmOp,
        SymbolOp,
        SpecialOp,
        RegisterOp,
        AddOp,
        SubOp,
        MulOp,
        DivOp,
        RemOp,
        AndOp,
        OrOp,
        XorOp,
        ShlOp,
        ShrOp,
        MinOp,
        MaxOp,
        NotOp,
        NegOp,
        MovOp,
        MadOp,
        FmaOp,
        SelpOp,
        SetpOp,
        CvtOp,
        LdOp,
        StOp,
        LabelOp,
        BraOp,
        RetOp,
        BarSyncOp,
        BarRedOp,
        CvtaOp,
        BarArriveOp,
        BarWarpSyncOp,
        BarrierClusterOp,
        FenceOp,
        MbarrierInitOp,
        MbarrierArriveOp,
        MbarrierExpectTxOp,
        MbarrierInvalOp,
        MbarrierWaitOp,
        Tcgen05AllocOp,
        Tcgen05DeallocOp,
        Tcgen05TextOp,
        Tcgen05CommitOp,
        Tcgen05LdOp,
        Tcgen05StOp,
        Tcgen05MmaOp,
        Tcgen05CpOp,
        Tcgen05ShiftOp,
        ElectSyncOp,
        MapaOp,
        GlobalOp,
        EntryOp,
        ModuleOp,
    ],
    [RegisterType, SymbolType, SpecialRegisterType],
)
