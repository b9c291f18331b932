"""tcgen05: tensor-memory allocation, fences and waits, commit, ld/st, mma with its
shared-memory descriptor, cp and shift.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from xdsl.dialects.builtin import (
    I1,
    I32,
    I64,
    IntegerType,
    UnitAttr,
    VectorType,
    i32,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.hints import isa

from xdsl_tmem.dialects.nvvm.attributes import (
    MAX_LDST_REGISTERS,
    CTAGroupKindAttr,
    Tcgen05CpMulticast,
    Tcgen05CpMulticastAttr,
    Tcgen05CpShape,
    Tcgen05CpShapeAttr,
    Tcgen05CpSrcFormat,
    Tcgen05CpSrcFormatAttr,
    Tcgen05FenceKind,
    Tcgen05FenceKindAttr,
    Tcgen05LdStShape,
    Tcgen05LdStShapeAttr,
    Tcgen05MMACollectorOp,
    Tcgen05MMACollectorOpAttr,
    Tcgen05MMAKind,
    Tcgen05MMAKindAttr,
    Tcgen05WaitKind,
    Tcgen05WaitKindAttr,
)
from xdsl_tmem.dialects.nvvm.base import (
    CtaGroupOp,
    NVVMOp,
    address_space,
    check_immediate,
    check_int_type,
    check_pointer,
)
from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.traits import (
    LaneVarying,
    Synchronizes,
    SyncPoint,
    UniformPreserving,
    WarpLocal,
)
from xdsl_tmem.dialects.utils import (
    TMEM_PTR,
    CtaGroupUser,
    check_alloc_columns,
    constant_int,
)

# --------------------------------------------------------------------------------------
# tcgen05: allocation
# --------------------------------------------------------------------------------------


@irdl_op_definition
class Tcgen05AllocOp(CtaGroupOp):
    """`tcgen05.alloc.cta_group::N.sync.aligned[.shared::cta].b32 [addr], ncols;`

    The whole warp allocates `ncols` TMEM columns and writes the address to `addr`.
    """

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.tcgen05.alloc"
    addr = operand_def(LLVMPointerType)
    n_cols = operand_def(I32)
    assembly_format = "$addr `,` $n_cols attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue, n_cols: SSAValue, cta_group: int = 1):
        super().__init__(operands=[addr, n_cols], properties={"group": CTAGroupKindAttr.from_int(cta_group)})

    def verify_nvvm(self) -> None:
        # `addr` may be any LLVM pointer, as upstream's constraint ("LLVM pointer type or
        # LLVM pointer in address space 3") allows.
        # ptxas: an immediate ncols must be a power of two in [32, 512] (docs/ptx-nvvm.md
        # §1.3, verified); llc always passes a register, which nothing checks.
        if (ncols := constant_int(self.n_cols)) is not None and (error := check_alloc_columns(ncols)) is not None:
            raise self.error(error)


@irdl_op_definition
class Tcgen05DeallocOp(CtaGroupOp):
    """`tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, ncols;`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.tcgen05.dealloc"
    taddr = operand_def(LLVMPointerType)
    n_cols = operand_def(I32)
    assembly_format = "$taddr `,` $n_cols attr-dict `:` type(operands)"

    def __init__(self, taddr: SSAValue, n_cols: SSAValue, cta_group: int = 1):
        super().__init__(operands=[taddr, n_cols], properties={"group": CTAGroupKindAttr.from_int(cta_group)})

    def verify_nvvm(self) -> None:
        check_pointer(self, "taddr", self.taddr, (6,))
        # ptxas: an immediate dealloc ncols must be a multiple of 32 (docs/ptx-nvvm.md §1.3,
        # verified); unlike alloc it checks nothing else (0 and 2048 pass).
        if (ncols := constant_int(self.n_cols)) is not None and ncols % 32:
            raise self.error(f"ncols must be a multiple of 32, got {ncols}")


@irdl_op_definition
class Tcgen05RelinquishAllocPermitOp(CtaGroupOp):
    """`tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned;`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.tcgen05.relinquish_alloc_permit"
    assembly_format = "attr-dict"

    def __init__(self, cta_group: int = 1):
        super().__init__(properties={"group": CTAGroupKindAttr.from_int(cta_group)})


# --------------------------------------------------------------------------------------
# tcgen05: fences, waits, commit
# --------------------------------------------------------------------------------------


@irdl_op_definition
class Tcgen05FenceOp(NVVMOp):
    """`tcgen05.fence::before_thread_sync;` / `tcgen05.fence::after_thread_sync;`"""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.tcgen05.fence"
    kind = prop_def(Tcgen05FenceKindAttr)
    assembly_format = "$kind attr-dict"

    def __init__(self, kind: Tcgen05FenceKind):
        super().__init__(properties={"kind": Tcgen05FenceKindAttr(kind)})


@irdl_op_definition
class Tcgen05WaitOp(NVVMOp):
    """`tcgen05.wait::ld.sync.aligned;` / `tcgen05.wait::st.sync.aligned;`"""

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.tcgen05.wait"
    kind = prop_def(Tcgen05WaitKindAttr)
    assembly_format = "$kind attr-dict"

    def __init__(self, kind: Tcgen05WaitKind):
        super().__init__(properties={"kind": Tcgen05WaitKindAttr(kind)})


@irdl_op_definition
class Tcgen05CommitOp(CtaGroupOp):
    """`tcgen05.commit.cta_group::N.mbarrier::arrive::one.shared::cluster
    [.multicast::cluster].b64 [addr][, mask];`

    One arrive on the mbarrier once this thread's earlier mma/cp/shift complete.
    """

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.tcgen05.commit"
    addr = operand_def(LLVMPointerType)
    multicast_mask = opt_operand_def(IntegerType)  # i16, checked in verify_nvvm
    assembly_format = "$addr (`,` `multicast_mask` `=` $multicast_mask^)? attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue, multicast_mask: SSAValue | None = None, cta_group: int = 1):
        super().__init__(
            operands=[addr, multicast_mask],
            properties={"group": CTAGroupKindAttr.from_int(cta_group)},
        )

    def verify_nvvm(self) -> None:
        # `addr` may be any LLVM pointer, as upstream allows; docs/ptx-nvvm.md §4 recommends
        # !llvm.ptr<3> (a generic address prints .shared::cluster anyway).
        if self.multicast_mask is not None:
            # ptxas: the mask is a .b16 register (docs/ptx-nvvm.md §1.6, verified).
            check_int_type(self, "multicast_mask", self.multicast_mask, 16)


# --------------------------------------------------------------------------------------
# tcgen05: ld / st
# --------------------------------------------------------------------------------------


def ldst_register_count(t: Attribute) -> int | None:
    """32-bit registers carried by `i32` or `vector<N x i32>`, else None."""
    if t == i32:
        return 1
    if isa(t, VectorType[Attribute]) and t.get_element_type() == i32 and t.get_num_dims() == 1:
        return t.get_shape()[0]
    return None


def _check_ldst(op: NVVMOp, shape: Tcgen05LdStShape, data: Attribute, offset: SSAValue | None, what: str) -> None:
    per_num = shape.registers_per_num
    count = ldst_register_count(data)
    if count is None:
        raise op.error(f"{what} must be i32 or vector<N x i32>, got {data}")
    # Registers per thread = m(shape) x num, num a power of two, at most 128
    # (docs/ptx-nvvm.md §1.4, all 40 shape x num combinations verified with ptxas).
    if not shape.fits(count):
        raise op.error(
            f"{shape.value} needs {per_num} x num registers (num a power of two, at most "
            f"{MAX_LDST_REGISTERS} registers): got {data}"
        )
    if shape == Tcgen05LdStShape.SHAPE_16X32BX2:
        if offset is None:
            raise op.error("shape_16x32bx2 needs the offset operand (immHalfSplitoff)")
        # LLVM: the offset is an immarg ("immarg operand has non-immediate parameter").
        check_immediate(op, "offset", offset, "it is the immediate immHalfSplitoff")
    elif offset is not None:
        # Upstream rejects this for ld only; for st mlir-translate emits a call with the
        # wrong number of arguments, which the LLVM verifier rejects.
        raise op.error(f"the offset operand is only allowed with shape_16x32bx2, not {shape.value}")


@irdl_op_definition
class Tcgen05LdOp(NVVMOp):
    """`tcgen05.ld.sync.aligned.<shape>.x<num>[.pack::16b].b32 {r...}, [taddr][, off];`

    The result type gives the register count (m(shape) x num); `.xN` is derived.
    """

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.tcgen05.ld"
    tmem_addr = operand_def(TMEM_PTR)
    offset = opt_operand_def(I64)
    res = result_def(IntegerType | VectorType)
    shape = prop_def(Tcgen05LdStShapeAttr)
    pack = opt_prop_def(UnitAttr)
    assembly_format = "$tmem_addr (`,` $offset^)? (`pack` $pack^)? attr-dict `:` type($res)"

    def __init__(
        self,
        tmem_addr: SSAValue,
        shape: Tcgen05LdStShape,
        result_type: Attribute,
        offset: SSAValue | None = None,
        pack: bool = False,
    ):
        properties: dict[str, Attribute] = {"shape": Tcgen05LdStShapeAttr(shape)}
        if pack:
            properties["pack"] = UnitAttr()
        super().__init__(operands=[tmem_addr, offset], result_types=[result_type], properties=properties)

    def verify_nvvm(self) -> None:
        _check_ldst(self, self.shape.data, self.res.type, self.offset, "the result")


@irdl_op_definition
class Tcgen05StOp(NVVMOp):
    """`tcgen05.st.sync.aligned.<shape>.x<num>[.unpack::16b].b32 [taddr][, off], {r...};`"""

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.tcgen05.st"
    tmem_addr = operand_def(TMEM_PTR)
    val = operand_def(IntegerType | VectorType)
    offset = opt_operand_def(I64)
    shape = prop_def(Tcgen05LdStShapeAttr)
    unpack = opt_prop_def(UnitAttr)
    assembly_format = "$tmem_addr `,` $val (`,` $offset^)? (`unpack` $unpack^)? attr-dict `:` type($val)"

    def __init__(
        self,
        tmem_addr: SSAValue,
        val: SSAValue,
        shape: Tcgen05LdStShape,
        offset: SSAValue | None = None,
        unpack: bool = False,
    ):
        properties: dict[str, Attribute] = {"shape": Tcgen05LdStShapeAttr(shape)}
        if unpack:
            properties["unpack"] = UnitAttr()
        super().__init__(operands=[tmem_addr, val, offset], properties=properties)

    def verify_nvvm(self) -> None:
        _check_ldst(self, self.shape.data, self.val.type, self.offset, "the stored value")


# --------------------------------------------------------------------------------------
# tcgen05: mma and the shared-memory descriptor
# --------------------------------------------------------------------------------------

_DISCARD = Tcgen05MMACollectorOpAttr(Tcgen05MMACollectorOp.DISCARD)
_MASK_LANES = {1: 4, 2: 8}
"""disable-output-lane registers: 4 for cta_group::1, 8 for cta_group::2 (§1.7)."""


@dataclass(frozen=True)
class Tcgen05MMAForm:
    """The qualifiers of a `tcgen05.mma`, everything but its operands:
    `.cta_group::N.kind::K.collector::a::C[.ashift]` (the ptx dialect's MMA takes the
    same form plus `a_tmem`; here A's type says where it lives)."""

    cta_group: int
    kind: Tcgen05MMAKind
    collector: Tcgen05MMACollectorOp = Tcgen05MMACollectorOp.DISCARD
    ashift: bool = False


@irdl_op_definition
class Tcgen05MMAOp(NVVMOp, CtaGroupUser):
    """`tcgen05.mma.cta_group::N.kind::K[.collector::a::C][.ashift]
    [d], a, b, idesc[, {mask}], enable_input_d[, scale];`

    A is a shared-memory descriptor (i64) or a TMEM address (`!llvm.ptr<6>`).
    Custom syntax is hand-written: upstream's `(type(operands))` with two optional
    operands cannot be written in xDSL's declarative format.
    """

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.tcgen05.mma"
    matrix_d = operand_def(LLVMPointerType)
    matrix_a = operand_def(LLVMPointerType | IntegerType)
    matrix_b = operand_def(I64)
    idesc = operand_def(I32)
    enable_input_d = operand_def(I1)
    scale_input_d = opt_operand_def(IntegerType)
    disable_output_lane = opt_operand_def(VectorType)
    kind = prop_def(Tcgen05MMAKindAttr)
    cta_group = prop_def(CTAGroupKindAttr, prop_name="ctaGroup")
    collector_op = prop_def(Tcgen05MMACollectorOpAttr, default_value=_DISCARD, prop_name="collectorOp")
    a_shift = opt_prop_def(UnitAttr, prop_name="aShift")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def __init__(
        self,
        form: Tcgen05MMAForm,
        matrix_d: SSAValue,
        matrix_a: SSAValue,
        matrix_b: SSAValue,
        idesc: SSAValue,
        enable_input_d: SSAValue,
        *,
        scale_input_d: SSAValue | None = None,
        disable_output_lane: SSAValue | None = None,
    ):
        properties: dict[str, Attribute] = {
            "kind": Tcgen05MMAKindAttr(form.kind),
            "ctaGroup": CTAGroupKindAttr.from_int(form.cta_group),
            "collectorOp": Tcgen05MMACollectorOpAttr(form.collector),
        }
        if form.ashift:
            properties["aShift"] = UnitAttr()
        super().__init__(
            operands=[
                matrix_d,
                matrix_a,
                matrix_b,
                idesc,
                enable_input_d,
                scale_input_d,
                disable_output_lane,
            ],
            properties=properties,
        )

    def form(self) -> Tcgen05MMAForm:
        return Tcgen05MMAForm(self.cta_group.as_int(), self.kind.data, self.collector_op.data, self.a_shift is not None)

    def used_cta_group(self) -> int | None:
        return self.cta_group.as_int()

    def verify_nvvm(self) -> None:
        check_pointer(self, "matrix_d", self.matrix_d, (6,))
        a_type = self.matrix_a.type
        a_in_tmem = address_space(a_type) == 6
        if not a_in_tmem and a_type != i64:
            raise self.error(
                f"matrix_a must be i64 (shared-memory descriptor) or !llvm.ptr<6> (tensor memory), got {a_type}"
            )
        if self.a_shift is not None:
            if not a_in_tmem:
                raise self.error(f"aShift needs matrix A in tensor memory (!llvm.ptr<6>), got {a_type}")
            if self.collector_op.data in (Tcgen05MMACollectorOp.FILL, Tcgen05MMACollectorOp.USE):
                raise self.error(
                    f"collectorOp {self.collector_op.data.value} cannot be combined with aShift "
                    "(allowed: discard, lastuse)"
                )
        if (mask := self.disable_output_lane) is not None:
            group = self.cta_group.as_int()
            lanes = _MASK_LANES[group]
            if mask.type != VectorType(i32, [lanes]):
                raise self.error(
                    f"mask (disable-output-lane) must be vector<{lanes}xi32> for "
                    f"{self.cta_group.data.value}, got {mask.type}"
                )
        if (scale := self.scale_input_d) is not None:
            check_int_type(self, "scale", scale, 64)
            # LLVM verifier: the .scale_d intrinsics take kind f16/tf32 only and an
            # immediate scale in [0, 16) (checked with mlir-translate-22).
            kind = self.kind.data
            if kind not in (Tcgen05MMAKind.F16, Tcgen05MMAKind.TF32):
                raise self.error(f"scale (scale-input-d) needs kind f16 or tf32, got {kind.value}")
            value = check_immediate(self, "scale", scale, "PTX scale-input-d is an immediate")
            if not 0 <= value <= 15:
                raise self.error(f"scale must be in [0, 15], got {value}")

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        unresolved = [parser.parse_unresolved_operand()]
        for _ in range(4):
            parser.parse_punctuation(",")
            unresolved.append(parser.parse_unresolved_operand())
        scale: UnresolvedOperand | None = None
        mask: UnresolvedOperand | None = None
        if parser.parse_optional_keyword("scale") is not None:
            parser.parse_punctuation("=")
            scale = parser.parse_unresolved_operand()
        if parser.parse_optional_keyword("mask") is not None:
            parser.parse_punctuation("=")
            mask = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types_pos = parser.pos
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        present = [*unresolved, *(o for o in (scale, mask) if o is not None)]
        if len(types) != len(present):
            parser.raise_error(f"expected {len(present)} operand types, got {len(types)}", types_pos, parser.pos)
        operands = parser.resolve_operands(present, types, types_pos)
        scale_value = operands[5] if scale is not None else None
        mask_value = operands[-1] if mask is not None else None
        # The inherent attributes become properties in NVVMOp.__post_init__.
        return cls.build(operands=[*operands[:5], scale_value, mask_value], attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list(self.operands[:5], printer.print_operand)
        if self.scale_input_d is not None:
            printer.print_string(" scale = ")
            printer.print_operand(self.scale_input_d)
        if self.disable_output_lane is not None:
            printer.print_string(" mask = ")
            printer.print_operand(self.disable_output_lane)
        shown = {
            k: v
            for k, v in self.properties.items()
            if k != "operandSegmentSizes" and not (k == "collectorOp" and v == _DISCARD)
        }
        printer.print_op_attributes(dict(sorted((self.attributes | shown).items())))
        printer.print_string(" : (")
        printer.print_list(self.operand_types, printer.print_attribute)
        printer.print_string(")")


@irdl_op_definition
class Tcgen05MmaSmemDescOp(NVVMOp):
    """Pack a 64-bit shared-memory matrix descriptor (docs/ptx-nvvm.md §1.7; lowers to
    shl/or, no PTX instruction of its own)."""

    name = "nvvm.tcgen05.mma_smem_desc"
    start_addr = operand_def(I32)
    leading_dim_offset = operand_def(I32)
    stride_dim_offset = operand_def(I32)
    base_offset = operand_def(IntegerType(8))
    leading_dim_mode = operand_def(I1)
    swizzle_mode = operand_def(IntegerType(8))
    res = result_def(I64)
    traits = traits_def(UniformPreserving(), Pure())
    assembly_format = (
        "`(` $start_addr `,` $leading_dim_offset `,` $stride_dim_offset `,` $base_offset `,` "
        "$leading_dim_mode `,` $swizzle_mode `)` attr-dict `:` `(` type($start_addr) `,` "
        "type($leading_dim_offset) `,` type($stride_dim_offset) `,` type($base_offset) `,` "
        "type($leading_dim_mode) `,` type($swizzle_mode) `)` `->` type($res)"
    )

    def __init__(
        self,
        start_addr: SSAValue,
        leading_dim_offset: SSAValue,
        stride_dim_offset: SSAValue,
        base_offset: SSAValue,
        leading_dim_mode: SSAValue,
        swizzle_mode: SSAValue,
    ):
        super().__init__(
            operands=[
                start_addr,
                leading_dim_offset,
                stride_dim_offset,
                base_offset,
                leading_dim_mode,
                swizzle_mode,
            ],
            result_types=[i64],
        )


# --------------------------------------------------------------------------------------
# tcgen05: cp, shift
# --------------------------------------------------------------------------------------

_CP_MULTICAST = {
    Tcgen05CpShape.SHAPE_128X256B: (Tcgen05CpMulticast.NONE,),
    Tcgen05CpShape.SHAPE_4X256B: (Tcgen05CpMulticast.NONE,),
    Tcgen05CpShape.SHAPE_128X128B: (Tcgen05CpMulticast.NONE,),
    Tcgen05CpShape.SHAPE_64X128B: (
        Tcgen05CpMulticast.WARPX2_01_23,
        Tcgen05CpMulticast.WARPX2_02_13,
    ),
    Tcgen05CpShape.SHAPE_32X128B: (Tcgen05CpMulticast.WARPX4,),
}
"""Multicast each cp shape allows (mlir-opt-22's verifier; docs/ptx-nvvm.md §1.8)."""


@irdl_op_definition
class Tcgen05CpOp(CtaGroupOp):
    """`tcgen05.cp.cta_group::N.<shape>[.<multicast>][.b8x16.<src_fmt>] [taddr], s_desc;`"""

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.tcgen05.cp"
    taddr = operand_def(TMEM_PTR)
    smem_desc = operand_def(I64)
    shape = prop_def(Tcgen05CpShapeAttr)
    multicast = prop_def(Tcgen05CpMulticastAttr, default_value=Tcgen05CpMulticastAttr(Tcgen05CpMulticast.NONE))
    src_format = opt_prop_def(Tcgen05CpSrcFormatAttr, prop_name="srcFormat")
    assembly_format = "$taddr `,` $smem_desc attr-dict"

    def __init__(
        self,
        taddr: SSAValue,
        smem_desc: SSAValue,
        shape: Tcgen05CpShape,
        cta_group: int = 1,
        multicast: Tcgen05CpMulticast = Tcgen05CpMulticast.NONE,
        src_format: Tcgen05CpSrcFormat | None = None,
    ):
        properties: dict[str, Attribute] = {
            "shape": Tcgen05CpShapeAttr(shape),
            "group": CTAGroupKindAttr.from_int(cta_group),
            "multicast": Tcgen05CpMulticastAttr(multicast),
        }
        if src_format is not None:
            properties["srcFormat"] = Tcgen05CpSrcFormatAttr(src_format)
        super().__init__(operands=[taddr, smem_desc], properties=properties)

    def verify_nvvm(self) -> None:
        shape, multicast = self.shape.data, self.multicast.data
        allowed = _CP_MULTICAST[shape]
        if multicast not in allowed:
            raise self.error(
                f"{shape.value} needs multicast {' or '.join(m.value for m in allowed)}, got {multicast.value}"
            )


@irdl_op_definition
class Tcgen05ShiftOp(CtaGroupOp):
    """`tcgen05.shift.cta_group::N.down [taddr];`"""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.tcgen05.shift"
    taddr = operand_def(LLVMPointerType)
    assembly_format = "$taddr attr-dict `:` type($taddr)"

    def __init__(self, taddr: SSAValue, cta_group: int = 1):
        super().__init__(operands=[taddr], properties={"group": CTAGroupKindAttr.from_int(cta_group)})

    def verify_nvvm(self) -> None:
        check_pointer(self, "taddr", self.taddr, (6,))
