"""The core of instruction selection: register types, operands, the selection rule
registry and the per-function selection context (`FunctionSelector`).

Rule modules (`arith`, `memory`, `control`, `nvvm_sync`, `tcgen05`) import this module
and register one rule per op class with `@rule(OpClass)`; this module imports none of
them. `kernel` imports the rule modules and selects whole kernels and modules.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, TypeVar, cast

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    VectorType,
    i1,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from xdsl_tmem.backend.uniformity import divergent_values
from xdsl_tmem.diagnostics import LocatedError
from xdsl_tmem.dialects import ptx
from xdsl_tmem.dialects.nvvm import address_space
from xdsl_tmem.dialects.ptx import CmpOp, PtxType

if TYPE_CHECKING:
    # Only a type here; `target` (which also holds the xDSL Target and pass) imports isel.
    from xdsl_tmem.backend.target import Arch

# --------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------

SHORT_POINTER_SPACES = (3, 6, 7)
"""shared::cta, tensor memory and shared::cluster addresses are 32-bit."""


class UnsupportedTypeError(ValueError):
    """A type without a PTX register representation (reported at the op using it)."""


SUPPORTED_TYPES = "i1, i8, i16, i32, i64, f16, bf16, f32, f64, pointers and vectors of them"


def bit_width(t: Attribute) -> int:
    match t:
        case IntegerType() if t.width.data in (1, 8, 16, 32, 64):
            return t.width.data
        case Float16Type() | BFloat16Type():
            return 16
        case Float32Type():
            return 32
        case Float64Type():
            return 64
        case llvm.LLVMPointerType():
            return 32 if address_space(t) in SHORT_POINTER_SPACES else 64
        case _:
            raise UnsupportedTypeError(f"type {t} has no PTX lowering (supported: {SUPPORTED_TYPES})")


def float_type_name(t: Attribute) -> PtxType:
    """The PTX float type of `t`: `.f16`, `.bf16`, `.f32` or `.f64`."""
    return PtxType.BF16 if isinstance(t, BFloat16Type) else PtxType.of("f", bit_width(t))


def register_kind(t: Attribute) -> str:
    if t == i1:
        return "pred"
    bits = bit_width(t)
    if bits <= 16:
        return "b16"
    return "b32" if bits == 32 else "b64"


def vector_elements(t: Attribute) -> tuple[Attribute, int]:
    """(element type, count) of a vector; (t, 1) for scalars."""
    if isinstance(t, VectorType):
        shape = t.get_shape()
        count = 1
        for d in shape:
            count *= d
        return cast(Attribute, t.element_type), count
    return t, 1


def byte_size(t: Attribute) -> int:
    match t:
        case VectorType():
            element, count = vector_elements(t)
            return byte_size(element) * count
        case llvm.LLVMArrayType():
            return t.size.data * byte_size(t.type)
        case llvm.LLVMStructType():
            size = 0
            for field_type in t.types:
                align = natural_alignment(field_type)
                size = (size + align - 1) // align * align + byte_size(field_type)
            return size
        case llvm.LLVMPointerType():
            return 8  # the nvptx64 data layout
        case _:
            return max(1, bit_width(t) // 8)


def natural_alignment(t: Attribute) -> int:
    match t:
        case llvm.LLVMArrayType():
            return natural_alignment(t.type)
        case llvm.LLVMStructType():
            return max((natural_alignment(f) for f in t.types), default=1)
        case VectorType():
            return byte_size(t)
        case _:
            return byte_size(t)


# --------------------------------------------------------------------------------------
# Operands
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Address:
    """A pointer: `base` (register or symbol) plus a constant byte offset."""

    base: SSAValue
    offset: int = 0


Operand = SSAValue | Address


class IselError(LocatedError):
    """Instruction selection cannot handle an op or a value."""


_OpT = TypeVar("_OpT", bound=Operation)
Rule = Callable[["FunctionSelector", Operation], None]
RULES: dict[type[Operation], Rule] = {}
"""The selection rule of each op class (filled by the rule modules' `@rule`s)."""

LATE_RULES: dict[str, tuple[Callable[[], type[Operation]], Rule]] = {}
"""Rules of ops whose dialect the backend does not import (start-up), by op name: the
op's class (imported when called) and the rule, moved into `RULES` when a module first
holds an op of that name. The class must still be the op's own (`type(op)`)."""


def rule(
    *op_types: type[_OpT],
) -> Callable[[Callable[[FunctionSelector, _OpT], None]], Callable[[FunctionSelector, _OpT], None]]:
    """Register the selection rule for these op classes."""

    def register(fn: Callable[[FunctionSelector, _OpT], None]) -> Callable[[FunctionSelector, _OpT], None]:
        for op_type in op_types:
            RULES[op_type] = cast(Rule, fn)
        return fn

    return register


def late_rule(
    name: str, op_type: Callable[[], type[_OpT]]
) -> Callable[[Callable[[FunctionSelector, _OpT], None]], Callable[[FunctionSelector, _OpT], None]]:
    """`rule(op_type())`, registered when an op named `name` is first selected (`LATE_RULES`)."""

    def register(fn: Callable[[FunctionSelector, _OpT], None]) -> Callable[[FunctionSelector, _OpT], None]:
        LATE_RULES[name] = (op_type, cast(Rule, fn))
        return fn

    return register


def _rule_of(op: Operation) -> Rule | None:
    selector = RULES.get(type(op))
    if selector is None and (late := LATE_RULES.pop(op.name, None)) is not None:
        op_type, fn = late
        RULES[op_type()] = fn
        selector = RULES.get(type(op))
    return selector


# --------------------------------------------------------------------------------------
# Selecting one function
# --------------------------------------------------------------------------------------


@cache
def numbered_register(kind: str, index: int) -> ptx.RegisterType:
    """`!ptx.reg<kind, index>`, one shared instance per register: attributes are immutable
    and compare by value, and each register is built several times per kernel (its
    definition, its `.reg` declaration), each a verified attribute construction."""
    return ptx.RegisterType(kind, index)


@dataclass
class FunctionSelector:
    fn: Operation
    arch: Arch
    body: Block = field(default_factory=Block)
    values: dict[SSAValue, list[Operand]] = field(default_factory=dict[SSAValue, list[Operand]])
    counters: dict[str, int] = field(default_factory=dict[str, int])
    labels: int = 0
    _imms: dict[tuple[int | float, Attribute], SSAValue] = field(
        default_factory=dict[tuple[int | float, Attribute], SSAValue]
    )
    _symbols: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    _symbol_registers: dict[SSAValue, SSAValue] = field(default_factory=dict[SSAValue, SSAValue])
    prologue: Block = field(default_factory=Block)
    """Instructions placed after the parameter loads, before the body (hoisted constants)."""
    divergent: set[SSAValue] = field(default_factory=set[SSAValue])
    block_labels: dict[Block, tuple[str, list[SSAValue]]] = field(
        default_factory=dict[Block, tuple[str, list[SSAValue]]]
    )
    """For multi-block functions: each block's label and argument registers."""
    packed: dict[tuple[SSAValue, SSAValue], SSAValue] = field(default_factory=dict[tuple[SSAValue, SSAValue], SSAValue])
    """The `.b64` register each pair of `.f32x2` result halves was unpacked from (both
    written once, right after it), so a following `.f32x2` op reads it without a re-pack."""

    def __post_init__(self) -> None:
        self.divergent = divergent_values(self.fn)

    # ---- emission helpers ----------------------------------------------------------

    def emit(self, op: _OpT) -> _OpT:
        self.body.add_op(op)
        return op

    def fresh(self, kind: str) -> ptx.RegisterType:
        index = self.counters.get(kind, 0) + 1
        self.counters[kind] = index
        return numbered_register(kind, index)

    def label(self) -> str:
        self.labels += 1
        return f"$L{self.labels}"

    def imm(self, value: float, type: Attribute = i32) -> SSAValue:
        key = (value, type)
        if key not in self._imms:
            attr = (
                FloatAttr(float(value), type)
                if isinstance(type, AnyFloat)
                else IntegerAttr(int(value), cast(IntegerType, type), truncate_bits=True)
            )
            self._imms[key] = self.emit(ptx.ImmOp(attr)).result
        return self._imms[key]

    def symbol(self, name: str) -> SSAValue:
        if name not in self._symbols:
            self._symbols[name] = self.emit(ptx.SymbolOp(name)).result
        return self._symbols[name]

    def special(self, name: str) -> SSAValue:
        return self.emit(ptx.SpecialOp(name)).result

    def error(self, op: Operation, message: str) -> IselError:
        return IselError(op, f"ptx backend: {message}")

    # ---- values ----------------------------------------------------------------------

    def define(self, value: SSAValue, operands: Sequence[Operand]) -> None:
        self.values[value] = list(operands)

    def get(self, value: SSAValue) -> list[Operand]:
        if value not in self.values:
            owner = value.owner
            op = owner if isinstance(owner, Operation) else self.fn
            raise self.error(op, f"no PTX value for {value.type} (an unsupported producer?)")
        return self.values[value]

    def one(self, value: SSAValue) -> Operand:
        operands = self.get(value)
        assert len(operands) == 1, f"expected a scalar, got {len(operands)} values"
        return operands[0]

    def scalar(self, value: SSAValue) -> SSAValue:
        """A register or immediate for a scalar (addresses are materialised)."""
        operand = self.one(value)
        return self.materialize_address(operand) if isinstance(operand, Address) else operand

    def reg(self, value: SSAValue | Operand, kind: str | None = None) -> SSAValue:
        """A register holding `value` (an MLIR value or an operand): immediates,
        symbols and addresses are moved into one."""
        operand = self.one(value) if isinstance(value, SSAValue) and value in self.values else value
        if isinstance(operand, Address):
            return self.materialize_address(operand)
        if isinstance(operand.type, ptx.RegisterType):
            return operand
        kind = kind or self.kind_of_operand(operand)
        res = self.fresh(kind)
        return self.emit(ptx.MovOp(MOV_TYPE[kind], res, operand)).res

    def kind_of_operand(self, operand: SSAValue) -> str:
        t = operand.type
        if isinstance(t, ptx.RegisterType):
            return t.kind.data
        if isinstance(t, ptx.SymbolType):
            return "b32"
        return register_kind(t)

    def materialize_address(self, address: Address) -> SSAValue:
        base = address.base
        if isinstance(base.type, ptx.SymbolType):
            base = self.symbol_register(base)
        if address.offset == 0:
            return base
        kind = cast(ptx.RegisterType, base.type).kind.data
        bits = 32 if kind == "b32" else 64
        offset = self.imm(address.offset, i32 if bits == 32 else i64)
        return self.emit(ptx.AddOp(PtxType.of("s", bits), self.fresh(kind), base, offset)).res

    def symbol_register(self, symbol: SSAValue) -> SSAValue:
        """`mov.u32 %r, sym`, once per kernel, at its start (the address is constant)."""
        if symbol not in self._symbol_registers:
            mov = ptx.MovOp(PtxType.U32, self.fresh("b32"), symbol)
            self.prologue.add_op(mov)
            self._symbol_registers[symbol] = mov.res
        return self._symbol_registers[symbol]

    def address(self, value: SSAValue) -> Address:
        operand = self.one(value)
        if isinstance(operand, Address):
            return operand
        return Address(self.reg(operand))

    def uniform(self, value: SSAValue) -> bool:
        return value not in self.divergent

    # ---- moves -------------------------------------------------------------------------

    def move(self, dests: Sequence[SSAValue], sources: Sequence[Operand]) -> None:
        """Parallel copy `dests := sources` (dests are registers)."""
        pending: list[tuple[SSAValue, SSAValue]] = []
        for dest, source in zip(dests, sources, strict=True):
            value = self.materialize_address(source) if isinstance(source, Address) else source
            if value.type != dest.type:
                pending.append((dest, value))
        while pending:
            sources_left = {s.type for _, s in pending}
            ready = next((m for m in pending if m[0].type not in sources_left), None)
            if ready is None:
                # A cycle: save one destination's old value first.
                dest, _ = pending[0]
                saved = self.reg_copy(dest)
                pending = [(d, saved if s.type == dest.type else s) for d, s in pending]
                continue
            pending.remove(ready)
            dest, source = ready
            kind = cast(ptx.RegisterType, dest.type).kind.data
            self.emit(ptx.MovOp(MOV_TYPE[kind], cast(ptx.RegisterType, dest.type), source))

    def reg_copy(self, value: SSAValue) -> SSAValue:
        kind = cast(ptx.RegisterType, value.type).kind.data
        return self.emit(ptx.MovOp(MOV_TYPE[kind], self.fresh(kind), value)).res

    def handle(self, kind: str) -> SSAValue:
        """A fresh register that instructions will write later."""
        return self.emit(ptx.RegisterOp(self.fresh(kind))).result

    def registers_like(self, value: SSAValue) -> list[SSAValue]:
        """Fresh registers for every element of `value` (loop-carried values, results)."""
        element, count = vector_elements(value.type)
        kind = register_kind(element)
        return [self.handle(kind) for _ in range(count)]

    # ---- driver --------------------------------------------------------------------------

    def select_block(self, block: Block) -> None:
        for op in block.ops:
            self.select(op)

    def select(self, op: Operation) -> None:
        selector = _rule_of(op)
        if selector is None:
            if op.dialect_name() == "tmem":
                raise self.error(op, f"{op.name} must be lowered to nvvm first: add -p lower-tmem")
            raise self.error(op, f"{op.name} has no PTX lowering")
        try:
            selector(self, op)
        except UnsupportedTypeError as e:
            raise self.error(op, f"{op.name}: {e}") from None


def to_predicate(fs: FunctionSelector, res: ptx.RegisterType, value: SSAValue) -> Operation:
    """`res := (value & 1) != 0` for a 16-bit value (the i1 truncation)."""
    low = fs.emit(ptx.AndOp(PtxType.B16, fs.fresh("b16"), value, fs.imm(1, i16))).res
    return ptx.SetpOp(CmpOp.NE, PtxType.B16, res, low, fs.imm(0, i16))


MOV_TYPE = {"pred": PtxType.PRED, "b16": PtxType.B16, "b32": PtxType.B32, "b64": PtxType.B64}
