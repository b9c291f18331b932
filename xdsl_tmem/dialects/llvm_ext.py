"""`llvm` dialect pieces that upstream NVVM programs use and xDSL 0.74 lacks.

* `#llvm.constant_range<iN, lower, upper>`: the `range` of `nvvm.read.ptx.sreg.*`
  (`ref_pipeline.mlir` writes `nvvm.read.ptx.sreg.tid.x range <i32, 0, 160>`).
* `llvm.extractelement`: used by `nvvm_ops_examples.mlir`.
* `llvm.addrspacecast`: a pointer (or vector of pointers) into another address space,
  e.g. a generic pointer to shared memory (`LLVM_AddrSpaceCastOp` in upstream MLIR's
  `mlir/include/mlir/Dialect/LLVMIR/LLVMOps.td`).

xDSL registers the stock `llvm` dialect under that name and a context refuses a
second dialect with the same name, so these are not a dialect of their own:
`load_llvm_extensions(ctx)` loads the stock `llvm` dialect and then adds them to
it (`xdsl-tmem-opt` calls it from `register_all_dialects`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self, cast

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import IntAttr, IntegerType, VectorType
from xdsl.ir import Attribute, Operation, ParametrizedAttribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    base,
    irdl_attr_definition,
    operand_def,
    param_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.traits import UniformPreserving


def _wrap_signed(value: int, width: int) -> int:
    """`value` truncated to `width` bits, read as signed (how MLIR prints an APInt)."""
    value &= (1 << width) - 1
    return value - (1 << width) if width > 0 and value >> (width - 1) else value


@irdl_attr_definition
class ConstantRangeAttr(ParametrizedAttribute):
    """`#llvm.constant_range<iN, lower, upper>`: the half-open range [lower, upper)
    of an `iN` value (LLVM `ConstantRange`).

    Bounds are stored as MLIR prints them: truncated to N bits, signed.
    """

    name = "llvm.constant_range"
    int_type: IntegerType = param_def()
    lower: IntAttr = param_def(converter=IntAttr)
    upper: IntAttr = param_def(converter=IntAttr)

    def __init__(self, int_type: IntegerType, lower: int, upper: int):
        width = int_type.bitwidth
        super().__init__(int_type, _wrap_signed(lower, width), _wrap_signed(upper, width))

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            start = parser.pos
            int_type = parser.parse_type()
            if not isinstance(int_type, IntegerType):
                parser.raise_error(f"constant_range expects an integer type, got {int_type}", start, parser.pos)
            parser.parse_punctuation(",")
            lower = parser.parse_integer(allow_boolean=False)
            parser.parse_punctuation(",")
            upper = parser.parse_integer(allow_boolean=False)
        width = int_type.bitwidth
        bounds = (IntAttr(_wrap_signed(lower, width)), IntAttr(_wrap_signed(upper, width)))
        return (cast(Attribute, int_type), *bounds)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_attribute(self.int_type)
            printer.print_string(f", {self.lower.data}, {self.upper.data}")

    def verify(self) -> None:
        # LLVM's ConstantRange(lower, upper) asserts that lower == upper only for the
        # full (max, max) or empty (min, min) set; mlir-opt-22 reports the same.
        width = self.int_type.bitwidth
        if self.lower.data == self.upper.data and self.lower.data not in (0, -1):
            raise VerifyException(
                f"invalid range <{self.int_type}, {self.lower.data}, {self.upper.data}>: "
                f"lower == upper is only allowed for 0 or {(1 << width) - 1} (the empty or "
                "full range)"
            )


@irdl_op_definition
class ExtractElementOp(IRDLOperation):
    """`%e = llvm.extractelement %vec[%pos : i32] : vector<4xi32>` (MLIR's syntax)."""

    name = "llvm.extractelement"
    vector = operand_def(VectorType)
    position = operand_def(IntegerType)
    res = result_def()
    traits = traits_def(Pure(), UniformPreserving())

    def __init__(self, vector: SSAValue, position: SSAValue):
        vector_type = vector.type
        if not isa(vector_type, VectorType[Attribute]):
            raise ValueError(f"llvm.extractelement needs a vector, got {vector_type}")
        super().__init__(operands=[vector, position], result_types=[vector_type.get_element_type()])

    def verify_(self) -> None:
        vector_type = self.vector.type
        assert isa(vector_type, VectorType[Attribute])
        if self.res.type != (element_type := vector_type.get_element_type()):
            raise VerifyException(
                f"{self.name}: result type must be the element type {element_type} of "
                f"{vector_type}, got {self.res.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        vector = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        unresolved_position = parser.parse_unresolved_operand()
        parser.parse_punctuation(":")
        position = parser.resolve_operand(unresolved_position, parser.parse_type())
        parser.parse_punctuation("]")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        type_pos = parser.pos
        vector_type = parser.parse_type()
        if not isa(vector_type, VectorType[Attribute]):
            parser.raise_error(
                f"llvm.extractelement expects a vector type, got {vector_type}",
                type_pos,
                parser.pos,
            )
        op = cls(parser.resolve_operand(vector, vector_type), position)
        op.attributes |= attributes
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.vector)
        printer.print_string("[")
        printer.print_operand(self.position)
        printer.print_string(" : ")
        printer.print_attribute(self.position.type)
        printer.print_string("]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.vector.type)


_POINTERS = base(llvm.LLVMPointerType) | VectorType.constr(base(llvm.LLVMPointerType))


@irdl_op_definition
class AddrSpaceCastOp(IRDLOperation):
    """`%q = llvm.addrspacecast %p : !llvm.ptr<3> to !llvm.ptr` (upstream's syntax and
    constraints: pointers or vectors of pointers, any two address spaces; like
    mlir-opt-22 this does not check that the two shapes match)."""

    name = "llvm.addrspacecast"
    arg = operand_def(_POINTERS)
    res = result_def(_POINTERS)
    traits = traits_def(Pure(), UniformPreserving())
    assembly_format = "$arg attr-dict `:` type($arg) `to` type($res)"

    def __init__(self, arg: SSAValue, result_type: Attribute):
        super().__init__(operands=[arg], result_types=[result_type])


def is_dynamic_shared(op: llvm.GlobalOp) -> bool:
    """`llvm.mlir.global external @smem() {addr_space = 3 : i32} : !llvm.array<0 x T>`: the
    kernel's dynamic shared memory, which llc-22 declares `.extern .shared .b8 smem[];` and
    the launch sizes (every such array starts at the same address)."""
    t = op.global_type
    linkage = op.linkage.linkage.data
    return (
        op.addr_space.value.data == 3
        and linkage == "external"
        and isinstance(t, llvm.LLVMArrayType)
        and t.size.data == 0
        and op.value is None
        and not op.body.blocks
    )


LLVM_EXTENSION_OPS: tuple[type[Operation], ...] = (ExtractElementOp, AddrSpaceCastOp)
LLVM_EXTENSION_ATTRS: tuple[type[Attribute], ...] = (ConstantRangeAttr,)


def load_llvm_extensions(ctx: Context) -> None:
    """Load the stock `llvm` dialect into `ctx` and add the pieces above to it.

    Idempotent; pieces a later xDSL provides itself are skipped, so upgrading xDSL
    cannot make this raise on a duplicate name.
    """
    ctx.get_optional_dialect("llvm")  # loads the stock dialect if registered
    known_ops = {op.name for op in ctx.loaded_ops}
    known_attrs = {attr.name for attr in ctx.loaded_attrs}
    for op in LLVM_EXTENSION_OPS:
        if op.name not in known_ops:
            ctx.load_op(op)
    for attr in LLVM_EXTENSION_ATTRS:
        if attr.name not in known_attrs:
            ctx.load_attr_or_type(attr)
