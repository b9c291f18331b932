"""Arithmetic, logic, comparison, selection and conversion instructions.

Each op's mnemonic is derived from typed properties (`type`, `rounding`, `mode`, ...)
and its verifier states the PTX ISA 9.0 rule for the types and modifiers it takes; the
rules are checked against ptxas in `tests/test_ptx_backend.py`.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import IntAttr, UnitAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    AttrSizedResultSegments,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Commutative

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.ptx.base import (
    Instruction,
    MovSource,
    Namer,
    Reg,
    RegisterType,
    RegOrImm,
    SpecialOp,
    SymbolType,
    WritesOnlyRegisters,
    vector_text,
)
from xdsl_tmem.dialects.ptx.qualifiers import (
    BIT_TYPES,
    FLOAT_ROUNDING,
    FLOAT_TYPES,
    INTEGER_ROUNDING,
    INTEGER_TYPES,
    LOGIC_TYPES,
    BoolOp,
    BoolOpAttr,
    CmpOp,
    CmpOpAttr,
    DivPrecision,
    DivPrecisionAttr,
    IntMode,
    IntModeAttr,
    PtxType,
    PtxTypeAttr,
    Rounding,
    RoundingAttr,
    VectorLanes,
    VectorLanesAttr,
    check_only_register,
    check_operand,
    check_register,
    check_semantics,
    check_type,
    operand_text,
    reject,
    spell,
    types,
)

INTEGER_RULE = "PTX ISA 9.0, Integer Arithmetic Instructions"
FLOAT_RULE = "PTX ISA 9.0, Floating-Point and Half Precision Floating-Point Instructions"
LOGIC_RULE = "PTX ISA 9.0, Logic and Shift Instructions"
COMPARE_RULE = "PTX ISA 9.0, Comparison and Selection Instructions"
MOVE_RULE = "PTX ISA 9.0, Data Movement and Conversion Instructions"

NUMERIC_TYPES = INTEGER_TYPES | FLOAT_TYPES


def typed_properties(type: PtxType, **optional: Attribute | None) -> dict[str, Attribute]:
    props: dict[str, Attribute] = {"type": PtxTypeAttr(type)}
    props.update({k: v for k, v in optional.items() if v is not None})
    return props


class TypedOp(Instruction, ABC):
    """`mnemonic[.modifiers].type`: `MNEMONIC`, then `modifiers()`, then the type.

    `TYPES` are the types the instruction takes (PTX ISA `.type = {...}`); `RULE` is
    the ISA chapter its verifier cites."""

    MNEMONIC: ClassVar[str]
    TYPES: ClassVar[frozenset[PtxType]]
    RULE: ClassVar[str]
    type = prop_def(PtxTypeAttr)

    @property
    def ptx_type(self) -> PtxType:
        return self.type.data

    def modifiers(self) -> list[str]:
        return []

    def mnemonic(self) -> str:
        return ".".join([self.MNEMONIC, *self.modifiers(), self.ptx_type.value])

    def rule(self) -> str:
        return f"{self.RULE}: {self.MNEMONIC}"

    def verify_(self) -> None:
        check_type(self, self.ptx_type, self.TYPES, self.MNEMONIC, self.rule())
        self.verify_modifiers()
        self.verify_operands()

    def verify_modifiers(self) -> None:
        """Modifier rules beyond the type list (rounding, modes)."""

    def verify_operands(self) -> None:
        sources = [v for v in self.operands if v is not self.guard]
        for role, value in zip(("operand a", "operand b", "operand c"), sources, strict=False):
            check_operand(self, role, value, self.ptx_type, self.rule())
        for result in self.results:
            check_operand(self, "destination", result, self.ptx_type, self.rule())


def _check_rounding(
    op: TypedOp, rounding: Rounding | None, *, required: bool, allowed: frozenset[Rounding] = FLOAT_ROUNDING
) -> None:
    """Integer types take no rounding; float types take `allowed` (required or not)."""
    t = op.ptx_type
    if rounding is not None and not t.is_float:
        raise reject(op, f"rounding .{rounding.value} on .{t.value}", "only floating-point types round", op.rule())
    if rounding is not None and rounding not in allowed:
        order = [r for r in Rounding if r in allowed]
        raise reject(op, f"rounding .{rounding.value}", f"{op.MNEMONIC} rounds with {spell(order)}", op.rule())
    if required and rounding is None and t.is_float:
        order = [r for r in Rounding if r in allowed]
        raise reject(op, f"{op.MNEMONIC}.{t.value} without rounding", f"it needs one of {spell(order)}", op.rule())


# ---- binary ---------------------------------------------------------------------------------


class _BinaryOp(TypedOp, ABC):
    traits = traits_def(WritesOnlyRegisters())
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def __init__(self, type: PtxType, res: RegisterType, lhs: SSAValue, rhs: SSAValue, **optional: Attribute | None):
        super().__init__(operands=[lhs, rhs, None], result_types=[res], properties=typed_properties(type, **optional))

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.lhs), name(self.rhs)]


class _RoundedBinaryOp(_BinaryOp, ABC):
    """`op[.rnd].type`: integer forms take no rounding, float forms an optional
    `.rn/.rz/.rm/.rp` (the default is `.rn`)."""

    TYPES: ClassVar[frozenset[PtxType]] = NUMERIC_TYPES
    RULE: ClassVar[str] = f"{INTEGER_RULE} / {FLOAT_RULE}"
    rounding = opt_prop_def(RoundingAttr)

    def __init__(
        self,
        type: PtxType,
        res: RegisterType,
        lhs: SSAValue,
        rhs: SSAValue,
        *,
        rounding: Rounding | None = None,
        **optional: Attribute | None,
    ):
        super().__init__(type, res, lhs, rhs, rounding=None if rounding is None else RoundingAttr(rounding), **optional)

    def modifiers(self) -> list[str]:
        return [] if self.rounding is None else [self.rounding.data.value]

    def verify_modifiers(self) -> None:
        _check_rounding(self, None if self.rounding is None else self.rounding.data, required=False)


@irdl_op_definition
class AddOp(_RoundedBinaryOp):
    traits = traits_def(Commutative())
    name = "ptx.add"
    MNEMONIC: ClassVar[str] = "add"


@irdl_op_definition
class SubOp(_RoundedBinaryOp):
    name = "ptx.sub"
    MNEMONIC: ClassVar[str] = "sub"


@irdl_op_definition
class MulOp(_RoundedBinaryOp):
    """`mul.{lo,hi,wide}.type` on integers (the mode is required; `.wide` only for 16-
    and 32-bit types, with a double-width destination), `mul[.rnd].ftype` on floats."""

    traits = traits_def(Commutative())
    name = "ptx.mul"
    MNEMONIC: ClassVar[str] = "mul"
    mode = opt_prop_def(IntModeAttr)

    def __init__(
        self,
        type: PtxType,
        res: RegisterType,
        lhs: SSAValue,
        rhs: SSAValue,
        *,
        mode: IntMode | None = None,
        rounding: Rounding | None = None,
    ):
        super().__init__(type, res, lhs, rhs, rounding=rounding, mode=None if mode is None else IntModeAttr(mode))

    def modifiers(self) -> list[str]:
        return ([] if self.mode is None else [self.mode.data.value]) + super().modifiers()

    def verify_modifiers(self) -> None:
        super().verify_modifiers()
        _check_int_mode(self, None if self.mode is None else self.mode.data)

    def verify_operands(self) -> None:
        _check_wide_operands(self, self.mode, [self.lhs, self.rhs], self.res)


def _check_int_mode(op: TypedOp, mode: IntMode | None) -> None:
    """`mul`/`mad`: integers need `.lo/.hi/.wide` (`.wide` only 16/32-bit), floats none."""
    t = op.ptx_type
    if t.is_float and mode is not None:
        raise reject(op, f".{mode.value} on .{t.value}", "only integer types take .lo/.hi/.wide", op.rule())
    if not t.is_float and mode is None:
        raise reject(op, f"{op.MNEMONIC}.{t.value} without a mode", "integer types need .lo/.hi/.wide", op.rule())
    if mode is IntMode.WIDE and t.width == 64:
        raise reject(op, f".wide on .{t.value}", ".wide takes 16- and 32-bit types", op.rule())


def _check_wide_operands(
    op: TypedOp, mode: IntModeAttr | None, sources: list[SSAValue], res: SSAValue, addend: SSAValue | None = None
) -> None:
    """Sources are of the instruction type; with `.wide` the destination (and `mad`'s
    addend) are double width."""
    t = op.ptx_type
    double = mode is not None and mode.data is IntMode.WIDE
    dest_type = PtxType.of(t.value[0], 2 * t.width) if double else t
    for role, value in zip(("operand a", "operand b"), sources, strict=True):
        check_operand(op, role, value, t, op.rule())
    if addend is not None:
        check_operand(op, "operand c", addend, dest_type, op.rule())
    check_operand(op, "destination", res, dest_type, op.rule())


@irdl_op_definition
class DivOp(_RoundedBinaryOp):
    """`div.type` on integers; `div.{rnd,approx,full}.f32` and `div.rnd.f64` on floats
    (a float division needs a rounding mode, or `.approx`/`.full` for `.f32`)."""

    name = "ptx.div"
    MNEMONIC: ClassVar[str] = "div"
    TYPES: ClassVar[frozenset[PtxType]] = INTEGER_TYPES | types("f32", "f64")
    precision = opt_prop_def(DivPrecisionAttr)

    def __init__(
        self,
        type: PtxType,
        res: RegisterType,
        lhs: SSAValue,
        rhs: SSAValue,
        *,
        rounding: Rounding | None = None,
        precision: DivPrecision | None = None,
    ):
        precision_attr = None if precision is None else DivPrecisionAttr(precision)
        super().__init__(type, res, lhs, rhs, rounding=rounding, precision=precision_attr)

    def modifiers(self) -> list[str]:
        return ([] if self.precision is None else [self.precision.data.value]) + super().modifiers()

    def verify_modifiers(self) -> None:
        t = self.ptx_type
        precision = None if self.precision is None else self.precision.data
        if precision is not None and t is not PtxType.F32:
            raise reject(self, f".{precision.value} on .{t.value}", ".approx and .full are .f32 only", self.rule())
        if precision is not None and self.rounding is not None:
            raise reject(
                self, f".{precision.value} with .{self.rounding.data.value}", "give a rounding mode or .approx/.full",
                self.rule(),
            )  # fmt: skip
        _check_rounding(self, None if self.rounding is None else self.rounding.data, required=precision is None)


@irdl_op_definition
class RemOp(_BinaryOp):
    name = "ptx.rem"
    MNEMONIC: ClassVar[str] = "rem"
    TYPES: ClassVar[frozenset[PtxType]] = INTEGER_TYPES
    RULE: ClassVar[str] = INTEGER_RULE


class _LogicOp(_BinaryOp, ABC):
    """`and`/`or`/`xor` take `.pred` and the bit-size types only."""

    PRED_FORM: ClassVar[bool] = True
    TYPES: ClassVar[frozenset[PtxType]] = LOGIC_TYPES
    RULE: ClassVar[str] = LOGIC_RULE


@irdl_op_definition
class AndOp(_LogicOp):
    traits = traits_def(Commutative())
    name = "ptx.and"
    MNEMONIC: ClassVar[str] = "and"


@irdl_op_definition
class OrOp(_LogicOp):
    traits = traits_def(Commutative())
    name = "ptx.or"
    MNEMONIC: ClassVar[str] = "or"


@irdl_op_definition
class XorOp(_LogicOp):
    traits = traits_def(Commutative())
    name = "ptx.xor"
    MNEMONIC: ClassVar[str] = "xor"


class _ShiftOp(_BinaryOp, ABC):
    """The shift amount is a `.u32` register or immediate, whatever the type."""

    RULE: ClassVar[str] = LOGIC_RULE

    def verify_operands(self) -> None:
        check_operand(self, "destination", self.res, self.ptx_type, self.rule())
        check_operand(self, "operand a", self.lhs, self.ptx_type, self.rule())
        check_register(self, "shift amount", self.rhs, "b32", self.rule())


@irdl_op_definition
class ShlOp(_ShiftOp):
    name = "ptx.shl"
    MNEMONIC: ClassVar[str] = "shl"
    TYPES: ClassVar[frozenset[PtxType]] = BIT_TYPES


@irdl_op_definition
class ShrOp(_ShiftOp):
    name = "ptx.shr"
    MNEMONIC: ClassVar[str] = "shr"
    TYPES: ClassVar[frozenset[PtxType]] = BIT_TYPES | INTEGER_TYPES


class _MinMaxOp(_BinaryOp, ABC):
    """`min`/`max` on integers and floats; `.NaN` (propagate NaN) for `.f16/.bf16/.f32`."""

    traits = traits_def(Commutative())
    TYPES: ClassVar[frozenset[PtxType]] = NUMERIC_TYPES
    RULE: ClassVar[str] = f"{INTEGER_RULE} / {FLOAT_RULE}"
    nan = opt_prop_def(UnitAttr)

    def __init__(self, type: PtxType, res: RegisterType, lhs: SSAValue, rhs: SSAValue, *, nan: bool = False):
        super().__init__(type, res, lhs, rhs, nan=UnitAttr() if nan else None)

    def modifiers(self) -> list[str]:
        return ["NaN"] if self.nan else []

    def verify_modifiers(self) -> None:
        t = self.ptx_type
        if self.nan and t not in types("f16", "bf16", "f32"):
            raise reject(self, f".NaN on .{t.value}", ".NaN takes .f16/.bf16/.f32", self.rule())


@irdl_op_definition
class MinOp(_MinMaxOp):
    name = "ptx.min"
    MNEMONIC: ClassVar[str] = "min"


@irdl_op_definition
class MaxOp(_MinMaxOp):
    name = "ptx.max"
    MNEMONIC: ClassVar[str] = "max"


# ---- unary ------------------------------------------------------------------------------------


class UnaryOp(TypedOp, ABC):
    traits = traits_def(WritesOnlyRegisters())
    res = result_def(Reg)
    src = operand_def(RegOrImm)

    def __init__(self, type: PtxType, res: RegisterType, src: SSAValue):
        super().__init__(operands=[src, None], result_types=[res], properties=typed_properties(type))

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]


@irdl_op_definition
class NotOp(UnaryOp):
    name = "ptx.not"
    MNEMONIC: ClassVar[str] = "not"
    PRED_FORM: ClassVar[bool] = True
    TYPES: ClassVar[frozenset[PtxType]] = LOGIC_TYPES
    RULE: ClassVar[str] = LOGIC_RULE


@irdl_op_definition
class NegOp(UnaryOp):
    """`neg` takes the signed integer and float types (never `.u`/`.b`)."""

    name = "ptx.neg"
    MNEMONIC: ClassVar[str] = "neg"
    TYPES: ClassVar[frozenset[PtxType]] = types("s16", "s32", "s64") | FLOAT_TYPES
    RULE: ClassVar[str] = f"{INTEGER_RULE} / {FLOAT_RULE}"


@irdl_op_definition
class MovOp(TypedOp):
    """`mov.type d, a` — a register, immediate, symbol address or special register."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.mov"
    MNEMONIC: ClassVar[str] = "mov"
    TYPES: ClassVar[frozenset[PtxType]] = types("pred", "b16", "b32", "b64", "f32", "f64") | INTEGER_TYPES
    RULE: ClassVar[str] = MOVE_RULE
    res = result_def(Reg)
    src = operand_def(MovSource)
    offset = opt_prop_def(IntAttr)
    """`mov d, sym+offset`: the address of a variable plus a byte offset (an address
    expression, PTX ISA 9.0 §6.4.1 and mov: `mov.u64 d, avar+imm`); a symbol only."""

    def __init__(self, type: PtxType, res: RegisterType, src: SSAValue, offset: int | None = None):
        props = typed_properties(type, offset=None if offset is None else IntAttr(offset))
        super().__init__(operands=[src, None], result_types=[res], properties=props)

    def ptx_operands(self, name: Namer) -> list[str]:
        offset = "" if self.offset is None else f"+{self.offset.data}"
        return [name(self.res), name(self.src) + offset]

    def verify_operands(self) -> None:
        super().verify_operands()
        # ptxas 13.5 also takes `%r+imm` (an integer add in the SASS), `5+8` and `%p+imm`
        # in mov, not a special register ("Parsing error near '+'"); the front end reads
        # an offset on a variable only, and only that is modelled.
        if self.offset is not None and not isinstance(self.src.type, SymbolType):
            owner = self.src.owner
            base = owner.register.data if isinstance(owner, SpecialOp) else operand_text(self.src)
            raise reject(self, f"offset +{self.offset.data} on {base}",
                         "only a variable's address takes an offset here (sym+offset)", self.rule())  # fmt: skip


def _check_parts(op: TypedOp, role: str, values: list[SSAValue], lanes: int, *, pack: bool) -> None:
    """`mov` packs/unpacks 2 or 4 parts of a `.b32`/`.b64` (PTX ISA 9.0, mov: "d = {a,
    b}"): the legal combinations are the value semantics' (`check_semantics`); each part
    is a register of 1/lanes of the type's width (ptxas also takes an integer immediate
    as a packed part)."""
    count = {"pack": lanes} if pack else {"unpack": lanes}
    check_semantics(op, f"mov.{op.ptx_type.value}", op.rule(), **count)
    width = op.ptx_type.width // lanes
    for value in values:
        check_register(op, role, value, f"b{width}", op.rule())


@irdl_op_definition
class MovPackOp(TypedOp):
    """`mov.bN d, {a, b[, c, e]}`: the parts concatenated, `a` in the low bits."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.mov_pack"
    MNEMONIC: ClassVar[str] = "mov"
    TYPES: ClassVar[frozenset[PtxType]] = frozenset(PtxType)  # (check_semantics decides)
    RULE: ClassVar[str] = MOVE_RULE
    res = result_def(Reg)
    parts = var_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(self, type: PtxType, res: RegisterType, parts: Sequence[SSAValue]):
        super().__init__(operands=[parts, None], result_types=[res], properties=typed_properties(type))

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), vector_text(name, self.parts)]

    def verify_operands(self) -> None:
        check_only_register(self, "destination", self.res, self.ptx_type.register_kind, self.rule())
        _check_parts(self, "part", list(self.parts), len(self.parts), pack=True)


@irdl_op_definition
class MovUnpackOp(TypedOp):
    """`mov.bN {d0, d1[, d2, d3]}, a`: `a` split into `lanes` parts, `d0` the low bits;
    an absent destination prints the sink `_` (that part is not written)."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.mov_unpack"
    MNEMONIC: ClassVar[str] = "mov"
    TYPES: ClassVar[frozenset[PtxType]] = frozenset(PtxType)  # (check_semantics decides)
    RULE: ClassVar[str] = MOVE_RULE
    lanes = prop_def(VectorLanesAttr)
    d0 = opt_result_def(Reg)
    d1 = opt_result_def(Reg)
    d2 = opt_result_def(Reg)
    d3 = opt_result_def(Reg)
    src = operand_def(Reg)
    irdl_options = (AttrSizedResultSegments(as_property=True),)

    def __init__(self, type: PtxType, parts: Sequence[RegisterType | None], src: SSAValue):
        lanes = VectorLanes.V2 if len(parts) == 2 else VectorLanes.V4
        padded = [*parts, None, None][:4] if len(parts) == 2 else list(parts)
        props = typed_properties(type)
        props["lanes"] = VectorLanesAttr(lanes)
        super().__init__(operands=[src, None], result_types=padded, properties=props)

    def destinations(self) -> list[SSAValue | None]:
        """Per part, low first: its register, or None for a sink."""
        values: list[SSAValue | None] = [self.d0, self.d1, self.d2, self.d3]
        return values[: self.lanes.data.parts]

    def ptx_operands(self, name: Namer) -> list[str]:
        if self.lanes.data is VectorLanes.V2 and (self.d2 is not None or self.d3 is not None):
            raise ValueError("a 2-part unpack has no third or fourth destination")
        return ["{" + ", ".join("_" if d is None else name(d) for d in self.destinations()) + "}", name(self.src)]

    def verify_operands(self) -> None:
        lanes = self.lanes.data.parts
        if lanes == 2 and (self.d2 is not None or self.d3 is not None):
            raise reject(self, "a third or fourth destination", "a .v2 unpack writes two parts", self.rule())
        written = [d for d in self.destinations() if d is not None]
        if not written:
            raise reject(self, "an unpack into sinks only", "at least one part needs a register", self.rule())
        _check_parts(self, "destination", written, lanes, pack=False)
        for value in written:
            check_only_register(self, "destination", value, f"b{self.ptx_type.width // lanes}", self.rule())
        check_only_register(self, "source", self.src, self.ptx_type.register_kind, self.rule())


# ---- ternary ----------------------------------------------------------------------------------


class _TernaryOp(TypedOp, ABC):
    traits = traits_def(WritesOnlyRegisters())
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    c = operand_def(RegOrImm)
    rounding = opt_prop_def(RoundingAttr)

    def __init__(
        self,
        type: PtxType,
        res: RegisterType,
        abc: tuple[SSAValue, SSAValue, SSAValue],
        *,
        mode: IntMode | None = None,
        rounding: Rounding | None = None,
    ):
        props = typed_properties(
            type,
            mode=None if mode is None else IntModeAttr(mode),
            rounding=None if rounding is None else RoundingAttr(rounding),
        )
        super().__init__(operands=[*abc, None], result_types=[res], properties=props)

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.a), name(self.b), name(self.c)]


@irdl_op_definition
class MadOp(_TernaryOp):
    """`mad.{lo,hi,wide}.type d, a, b, c` = a * b + c on integers; `mad.rnd.{f32,f64}`
    (rounding required) on floats."""

    name = "ptx.mad"
    MNEMONIC: ClassVar[str] = "mad"
    TYPES: ClassVar[frozenset[PtxType]] = INTEGER_TYPES | types("f32", "f64")
    RULE: ClassVar[str] = f"{INTEGER_RULE} / {FLOAT_RULE}"
    mode = opt_prop_def(IntModeAttr)

    def modifiers(self) -> list[str]:
        mode = [] if self.mode is None else [self.mode.data.value]
        return mode + ([] if self.rounding is None else [self.rounding.data.value])

    def verify_modifiers(self) -> None:
        _check_rounding(self, None if self.rounding is None else self.rounding.data, required=True)
        _check_int_mode(self, None if self.mode is None else self.mode.data)

    def verify_operands(self) -> None:
        _check_wide_operands(self, self.mode, [self.a, self.b], self.res, self.c)


@irdl_op_definition
class FmaOp(_TernaryOp):
    """`fma.rnd.ftype d, a, b, c`: floats only, rounding required."""

    name = "ptx.fma"
    MNEMONIC: ClassVar[str] = "fma"
    TYPES: ClassVar[frozenset[PtxType]] = FLOAT_TYPES
    RULE: ClassVar[str] = FLOAT_RULE

    def modifiers(self) -> list[str]:
        return [] if self.rounding is None else [self.rounding.data.value]

    def verify_modifiers(self) -> None:
        _check_rounding(self, None if self.rounding is None else self.rounding.data, required=True)


# ---- selection, comparison, conversion --------------------------------------------------------


@irdl_op_definition
class SelpOp(TypedOp):
    """`selp.type d, a, b, p` = p ? a : b (no `.pred` or 8-bit or half types; `p` a
    predicate register)."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.selp"
    MNEMONIC: ClassVar[str] = "selp"
    TYPES: ClassVar[frozenset[PtxType]] = BIT_TYPES | INTEGER_TYPES | types("f32", "f64")
    RULE: ClassVar[str] = COMPARE_RULE
    res = result_def(Reg)
    a = operand_def(RegOrImm)
    b = operand_def(RegOrImm)
    cond = operand_def(Reg)

    def __init__(self, type: PtxType, res: RegisterType, a: SSAValue, b: SSAValue, cond: SSAValue):
        super().__init__(operands=[a, b, cond, None], result_types=[res], properties=typed_properties(type))

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.a), name(self.b), name(self.cond)]

    def verify_operands(self) -> None:
        for role, value in (("destination", self.res), ("operand a", self.a), ("operand b", self.b)):
            check_operand(self, role, value, self.ptx_type, self.rule())
        check_operand(self, "selector", self.cond, PtxType.PRED, self.rule())


@irdl_op_definition
class SetpOp(TypedOp):
    """`setp.cmp.type p, a, b`: the comparison operators allowed depend on the type
    class (bit-size: `eq ne`; signed: `eq ne lt le gt ge`; unsigned: also `lo ls hi hs`;
    float: also `equ neu ltu leu gtu geu num nan`)."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.setp"
    MNEMONIC: ClassVar[str] = "setp"
    TYPES: ClassVar[frozenset[PtxType]] = BIT_TYPES | NUMERIC_TYPES
    RULE: ClassVar[str] = COMPARE_RULE
    cmp = prop_def(CmpOpAttr)
    res = result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)

    def __init__(self, cmp: CmpOp, type: PtxType, res: RegisterType, lhs: SSAValue, rhs: SSAValue):
        props = typed_properties(type)
        props["cmp"] = CmpOpAttr(cmp)
        super().__init__(operands=[lhs, rhs, None], result_types=[res], properties=props)

    def modifiers(self) -> list[str]:
        return [self.cmp.data.value]

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.lhs), name(self.rhs)]

    def verify_modifiers(self) -> None:
        cmp, t = self.cmp.data, self.ptx_type
        if not cmp.allowed_for(t):
            allowed = [c for c in CmpOp if c.allowed_for(t)]
            raise reject(self, f"comparison .{cmp.value} on .{t.value}", f".{t.value} compares with {spell(allowed)}",
                         self.rule())  # fmt: skip

    def verify_operands(self) -> None:
        check_operand(self, "operand a", self.lhs, self.ptx_type, self.rule())
        check_operand(self, "operand b", self.rhs, self.ptx_type, self.rule())
        check_operand(self, "destination", self.res, PtxType.PRED, self.rule())


@irdl_op_definition
class SetpBoolOp(TypedOp):
    """`setp.cmp[.bool].type p|q, a, b[, [!]c]`: `setp` with the complement result or a
    combining predicate (PTX ISA 9.0, setp: `t = a cmp b; p = BoolOp(t, c); q =
    BoolOp(!t, c)`; "the sink symbol `_` may be used in place of any one of the
    destination operands"). An absent `p` or `q` is a sink; without `q` the destination
    is the single `p` (then the combining form, else it is `ptx.setp`)."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.setp_bool"
    MNEMONIC: ClassVar[str] = "setp"
    TYPES: ClassVar[frozenset[PtxType]] = BIT_TYPES | NUMERIC_TYPES
    RULE: ClassVar[str] = COMPARE_RULE
    cmp = prop_def(CmpOpAttr)
    bool_op = opt_prop_def(BoolOpAttr)
    c_negated = opt_prop_def(UnitAttr)
    """`!c`: the combining predicate is read negated."""
    p = opt_result_def(Reg)
    q = opt_result_def(Reg)
    lhs = operand_def(RegOrImm)
    rhs = operand_def(RegOrImm)
    c = opt_operand_def(Reg)
    irdl_options = (AttrSizedOperandSegments(as_property=True), AttrSizedResultSegments(as_property=True))

    def __init__(
        self,
        cmp: CmpOp,
        type: PtxType,
        results: tuple[RegisterType | None, RegisterType | None],
        lhs: SSAValue,
        rhs: SSAValue,
        c: SSAValue | None = None,
        *,
        bool_op: BoolOp | None = None,
        c_negated: bool = False,
    ):
        props = typed_properties(
            type, cmp=CmpOpAttr(cmp), bool_op=None if bool_op is None else BoolOpAttr(bool_op),
            c_negated=UnitAttr() if c_negated else None,
        )  # fmt: skip
        super().__init__(operands=[lhs, rhs, c, None], result_types=list(results), properties=props)

    def modifiers(self) -> list[str]:
        return [self.cmp.data.value, *([self.bool_op.data.value] if self.bool_op is not None else [])]

    def ptx_operands(self, name: Namer) -> list[str]:
        if self.q is None:
            if self.p is None:
                raise ValueError("setp writes at least one of p and q")
            destination = name(self.p)
        else:
            destination = f"{'_' if self.p is None else name(self.p)}|{name(self.q)}"
        c = [] if self.c is None else [("!" if self.c_negated else "") + name(self.c)]
        return [destination, name(self.lhs), name(self.rhs), *c]

    def verify_modifiers(self) -> None:
        cmp, t = self.cmp.data, self.ptx_type
        if not cmp.allowed_for(t):
            allowed = [c for c in CmpOp if c.allowed_for(t)]
            raise reject(self, f"comparison .{cmp.value} on .{t.value}", f".{t.value} compares with {spell(allowed)}",
                         self.rule())  # fmt: skip
        if (self.bool_op is None) != (self.c is None):
            raise reject(self, "a .BoolOp without a predicate c" if self.c is None else "a predicate c without "
                         "a .BoolOp", "setp.cmp.BoolOp combines with c, and only it", self.rule())  # fmt: skip
        if self.c_negated is not None and self.c is None:
            raise reject(self, "!c without c", "the negation applies to the predicate c", self.rule())
        if self.q is None and self.c is None:
            raise reject(self, "setp p, a, b", "that is ptx.setp; ptx.setp_bool has p|q or a .BoolOp", self.rule())

    def verify_operands(self) -> None:
        check_operand(self, "operand a", self.lhs, self.ptx_type, self.rule())
        check_operand(self, "operand b", self.rhs, self.ptx_type, self.rule())
        for role, value in (("operand c", self.c), ("destination p", self.p), ("destination q", self.q)):
            if value is not None:
                check_operand(self, role, value, PtxType.PRED, self.rule())


CVT_TYPES = types("u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64") | FLOAT_TYPES


@irdl_op_definition
class CvtOp(Instruction):
    """`cvt[.rnd].dtype.atype d, a`. Rounding (PTX ISA 9.0, cvt): float → integer needs
    an integer rounding (`.rni .rzi .rmi .rpi`); integer → float and narrowing float →
    float need a float rounding (`.rn .rz .rm .rp`); a same-size float → float may take
    an integer rounding (round to integral); everything else takes none."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.cvt"
    dtype = prop_def(PtxTypeAttr)
    stype = prop_def(PtxTypeAttr)
    rounding = opt_prop_def(RoundingAttr)
    res = result_def(Reg)
    src = operand_def(Reg)

    RULE: ClassVar[str] = f"{MOVE_RULE}: cvt"

    def __init__(
        self, dtype: PtxType, stype: PtxType, res: RegisterType, src: SSAValue, rounding: Rounding | None = None
    ):
        props: dict[str, Attribute] = {"dtype": PtxTypeAttr(dtype), "stype": PtxTypeAttr(stype)}
        if rounding is not None:
            props["rounding"] = RoundingAttr(rounding)
        super().__init__(operands=[src, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        rounding = "" if self.rounding is None else f".{self.rounding.data.value}"
        return f"cvt{rounding}.{self.dtype.data.value}.{self.stype.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]

    def allowed_rounding(self) -> tuple[frozenset[Rounding], bool]:
        """(the roundings this type pair takes, whether one is required)."""
        d, s = self.dtype.data, self.stype.data
        if s.is_float and not d.is_float:
            return INTEGER_ROUNDING, True
        if not s.is_float and d.is_float:
            return FLOAT_ROUNDING, True
        if s.is_float and d.is_float:
            if d.width < s.width:
                return FLOAT_ROUNDING, True
            if d.width == s.width and d != s:
                return FLOAT_ROUNDING, False  # f16 <-> bf16 (ptxas: rounding optional)
            if d == s:
                return INTEGER_ROUNDING, False
        return frozenset(), False

    def verify_(self) -> None:
        d, s = self.dtype.data, self.stype.data
        for which, t in (("destination", d), ("source", s)):
            if t not in CVT_TYPES:
                order = [x for x in PtxType if x in CVT_TYPES]
                raise reject(self, f"{which} type .{t.value}", f"cvt converts {spell(order)}", self.RULE)
        allowed, required = self.allowed_rounding()
        rounding = None if self.rounding is None else self.rounding.data
        pair = f".{d.value}.{s.value}"
        if rounding is not None and rounding not in allowed:
            takes = f"{pair} takes {spell([r for r in Rounding if r in allowed])}" if allowed else f"{pair} takes none"
            raise reject(self, f"rounding .{rounding.value} on {pair}", takes, self.RULE)
        if rounding is None and required:
            order = [r for r in Rounding if r in allowed]
            raise reject(self, f"cvt{pair} without rounding", f"it needs one of {spell(order)}", self.RULE)
        check_operand(self, "destination", self.res, d, self.RULE, wider=True)
        check_operand(self, "source", self.src, s, self.RULE, wider=True)
