"""TMA and bulk copies: the tensor copies (`cp.async.bulk.tensor` load, store, reduce),
the non-tensor bulk copies, bulk async-groups (commit, wait), `prefetch.tensormap` and
the tensormap proxy fences.

Syntax, operand segments, property names and defaults are mlir-opt-22's (upstream
`mlir/include/mlir/Dialect/LLVMIR/NVVMOps.td`); the verifiers are upstream's
(`NVVMDialect.cpp`, messages reworded to name the op and the bad value), found and
checked by running mlir-opt-22 on candidate text (`tests/test_nvvm_tma.py` compares
verdicts over grids of forms).

One quirk of upstream's custom syntax is kept: an operand whose constraint names a
single address space (`LLVM_PointerShared`, `LLVM_PointerGlobal`) prints its type
without the dialect prefix (`<3>` for `!llvm.ptr<3>`); both spellings are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Self, cast

from typing_extensions import TypeVar
from xdsl.dialects.builtin import (
    I1,
    I16,
    I32,
    I64,
    BoolAttr,
    IntAttr,
    IntegerAttr,
    UnitAttr,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_attr_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum

from xdsl_tmem.dialects.nvvm.attributes import (
    CTAGroupKindAttr,
    MemScopeKind,
    MemScopeKindAttr,
    ProxyKind,
    ProxyKindAttr,
)
from xdsl_tmem.dialects.nvvm.base import NVVMOp, address_space, check_pointer
from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.traits import LaneVarying, Synchronizes, SyncPoint, WarpLocal

# --------------------------------------------------------------------------------------
# Enum attributes
# --------------------------------------------------------------------------------------


class TMALoadMode(StrEnum):
    TILE = "tile"
    IM2COL = "im2col"
    IM2COL_W = "im2col_w"
    IM2COL_W_128 = "im2col_w_128"
    TILE_GATHER4 = "tile_gather4"


class TMAStoreMode(StrEnum):
    TILE = "tile"
    IM2COL = "im2col"
    TILE_SCATTER4 = "tile_scatter4"


class TMAReduxKind(StrEnum):
    ADD = "add"
    MAX = "max"
    MIN = "min"
    INC = "inc"
    DEC = "dec"
    AND = "and"
    OR = "or"
    XOR = "xor"


_Mode = TypeVar("_Mode", bound=StrEnum)


def _parse_enum(parser: AttrParser, enum_type: type[_Mode]) -> _Mode:
    with parser.in_angle_brackets():
        return parser.parse_str_enum(enum_type)


def _print_enum(printer: Printer, value: StrEnum) -> None:
    with printer.in_angle_brackets():
        printer.print_identifier_or_string_literal(value.value)


@irdl_attr_definition
class TMALoadModeAttr(EnumAttribute[TMALoadMode]):
    """`#nvvm.tma_load_mode<tile|im2col|im2col_w|im2col_w_128|tile_gather4>`."""

    name = "nvvm.tma_load_mode"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> TMALoadMode:
        return _parse_enum(parser, TMALoadMode)

    def print_parameter(self, printer: Printer) -> None:
        _print_enum(printer, self.data)


@irdl_attr_definition
class TMAStoreModeAttr(EnumAttribute[TMAStoreMode]):
    """`#nvvm.tma_store_mode<tile|im2col|tile_scatter4>`."""

    name = "nvvm.tma_store_mode"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> TMAStoreMode:
        return _parse_enum(parser, TMAStoreMode)

    def print_parameter(self, printer: Printer) -> None:
        _print_enum(printer, self.data)


@irdl_attr_definition
class TMAReduxKindAttr(EnumAttribute[TMAReduxKind]):
    """`#nvvm.tma_redux_kind<add|max|min|inc|dec|and|or|xor>`."""

    name = "nvvm.tma_redux_kind"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> TMAReduxKind:
        return _parse_enum(parser, TMAReduxKind)

    def print_parameter(self, printer: Printer) -> None:
        _print_enum(printer, self.data)


_LOAD_TILE = TMALoadModeAttr(TMALoadMode.TILE)
_STORE_TILE = TMAStoreModeAttr(TMAStoreMode.TILE)
_NOT_CTA_ONLY = IntegerAttr.from_bool(False)
_MAX_RANK = 5


# --------------------------------------------------------------------------------------
# Shared syntax and checks
# --------------------------------------------------------------------------------------


def _parse_pointer_type(parser: Parser) -> Attribute:
    """`!llvm.ptr<N>`, or upstream's prefix-less `<N>`."""
    if parser.parse_optional_punctuation("<") is None:
        return parser.parse_type()
    space = parser.parse_integer(allow_boolean=False, allow_negative=False)
    parser.parse_punctuation(">")
    return LLVMPointerType(IntAttr(space))


def _print_stripped_pointer(printer: Printer, t: Attribute) -> None:
    space = address_space(t)
    if space:  # a type the verifier will refuse prints in full
        printer.print_string(f"<{space}>")
    else:
        printer.print_attribute(t)


def _parse_bracketed_operands(parser: Parser) -> list[UnresolvedOperand]:
    return parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_unresolved_operand)


def _parse_optional_assignment(parser: Parser, keyword: str) -> UnresolvedOperand | None:
    if parser.parse_optional_keyword(keyword) is None:
        return None
    parser.parse_punctuation("=")
    return parser.parse_unresolved_operand()


def _print_list(printer: Printer, keyword: str, values: Sequence[SSAValue]) -> None:
    printer.print_string(f" {keyword}[")
    printer.print_list(values, printer.print_operand)
    printer.print_string("]")


def _print_assignment(printer: Printer, keyword: str, value: SSAValue | None, comma: bool = False) -> None:
    if value is not None:
        printer.print_string(f"{',' if comma else ''} {keyword} = ")
        printer.print_operand(value)


def _shown(op: NVVMOp, defaults: dict[str, Attribute]) -> dict[str, Attribute]:
    shown = {k: v for k, v in op.properties.items() if k != "operandSegmentSizes" and defaults.get(k) != v}
    return dict(sorted((op.attributes | shown).items()))


def _check_rank(op: NVVMOp, coordinates: Sequence[SSAValue]) -> int:
    rank = len(coordinates)
    if not 1 <= rank <= _MAX_RANK:
        raise op.error(f"expects 1 to {_MAX_RANK} coordinates (tensor dimensions), got {rank}")
    return rank


def _check_im2col(op: NVVMOp, mode: str, rank: int, offsets: int, expected: int, im2col: bool) -> None:
    if im2col and rank < 3:
        raise op.error(f"mode {mode} needs a tensor of at least 3 dimensions, got {rank} coordinates")
    if offsets != expected:
        raise op.error(f"mode {mode} with {rank} coordinates takes {expected} im2col offsets, got {offsets}")


def _check_store_mode(op: NVVMOp, mode: TMAStoreMode, rank: int) -> None:
    if mode is TMAStoreMode.IM2COL:
        _check_im2col(op, mode.value, rank, 0, 0, True)
    if mode is TMAStoreMode.TILE_SCATTER4 and rank != 5:
        raise op.error(f"mode tile_scatter4 needs 5 coordinates, got {rank}")


# --------------------------------------------------------------------------------------
# Tensor copies
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TensorLoadOptions:
    """The optional parts of a TMA load (`CpAsyncBulkTensorSharedClusterGlobalOp`)."""

    im2col_offsets: Sequence[SSAValue] = ()
    multicast_mask: SSAValue | None = None
    l2_cache_hint: SSAValue | None = None
    predicate: SSAValue | None = None
    mode: TMALoadMode = TMALoadMode.TILE
    is_cta_only: bool = False
    group: int | None = None


@irdl_op_definition
class CpAsyncBulkTensorSharedClusterGlobalOp(NVVMOp):
    """`cp.async.bulk.tensor.Nd.shared::cluster.global.<mode>.mbarrier::complete_tx::bytes
    [.multicast::cluster][.L2::cache_hint][.cta_group::N]`: a TMA load of the box at
    `coordinates` of the tensor the tensor map `tma_descriptor` describes, completing
    `complete_tx` on `mbar`. `isCTAOnly` selects the `.shared::cta` destination.
    Not a `CtaGroupUser`: ptxas accepts `.cta_group::1` and `::2` copies in one kernel
    (checked with ptxas for sm_100a), unlike tcgen05 instructions."""

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.cp.async.bulk.tensor.shared.cluster.global"
    dst_mem = operand_def(LLVMPointerType)
    tma_descriptor = operand_def(LLVMPointerType)
    coordinates = var_operand_def(I32)
    mbar = operand_def(LLVMPointerType)
    im2col_offsets = var_operand_def(I16)
    multicast_mask = opt_operand_def(I16)
    l2_cache_hint = opt_operand_def(I64)
    predicate = opt_operand_def(I1)
    is_cta_only = prop_def(BoolAttr, default_value=_NOT_CTA_ONLY, prop_name="isCTAOnly")
    mode = prop_def(TMALoadModeAttr, default_value=_LOAD_TILE)
    group = opt_prop_def(CTAGroupKindAttr)
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))

    DEFAULTS: ClassVar[dict[str, Attribute]] = {"isCTAOnly": _NOT_CTA_ONLY, "mode": _LOAD_TILE}

    def __init__(
        self,
        dst_mem: SSAValue,
        tma_descriptor: SSAValue,
        coordinates: Sequence[SSAValue],
        mbar: SSAValue,
        options: TensorLoadOptions | None = None,
    ):
        o = options or TensorLoadOptions()
        props: dict[str, Attribute] = {
            "isCTAOnly": IntegerAttr.from_bool(o.is_cta_only),
            "mode": TMALoadModeAttr(o.mode),
        }
        if o.group is not None:
            props["group"] = CTAGroupKindAttr.from_int(o.group)
        optional = [o.multicast_mask, o.l2_cache_hint, o.predicate]
        super().__init__(
            operands=[dst_mem, tma_descriptor, coordinates, mbar, o.im2col_offsets, *optional], properties=props
        )

    def cta_only(self) -> bool:
        return bool(self.is_cta_only.value.data)

    def verify_nvvm(self) -> None:
        cta_only, mode = self.cta_only(), self.mode.data
        check_pointer(self, "tmaDescriptor", self.tma_descriptor, (0,))
        check_pointer(self, "mbar", self.mbar, (3,))
        if self.predicate is not None:  # upstream lowers this form to inline PTX
            check_pointer(self, "dstMem", self.dst_mem, (3, 7))
            if cta_only:
                raise self.error("a predicate needs the shared::cluster destination (isCTAOnly = false)")
            if mode not in (TMALoadMode.TILE, TMALoadMode.IM2COL):
                raise self.error(f"a predicate needs mode tile or im2col, got {mode.value}")
        else:
            check_pointer(self, "dstMem", self.dst_mem, (3,) if cta_only else (7,))
            if cta_only and self.multicast_mask is not None:
                raise self.error("multicast_mask needs the shared::cluster destination (isCTAOnly = false)")
            if cta_only and self.group is not None:
                raise self.error("group (cta_group) needs the shared::cluster destination (isCTAOnly = false)")
        rank = _check_rank(self, self.coordinates)
        offsets = len(self.im2col_offsets)
        match mode:
            case TMALoadMode.TILE:
                _check_im2col(self, mode.value, rank, offsets, 0, False)
            case TMALoadMode.IM2COL:
                _check_im2col(self, mode.value, rank, offsets, rank - 2, True)
            case TMALoadMode.IM2COL_W | TMALoadMode.IM2COL_W_128:
                _check_im2col(self, mode.value, rank, offsets, 2, True)
            case TMALoadMode.TILE_GATHER4:
                if rank != 5:
                    raise self.error(f"mode tile_gather4 needs 5 coordinates, got {rank}")
                _check_im2col(self, mode.value, rank, offsets, 0, False)

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        dst = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        desc = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        mbar = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        parser.parse_keyword("box")
        coordinates = _parse_bracketed_operands(parser)
        offsets = _parse_bracketed_operands(parser) if parser.parse_optional_keyword("im2col") is not None else []
        mask = _parse_optional_assignment(parser, "multicast_mask")
        hint = _parse_optional_assignment(parser, "l2_cache_hint")
        predicate = _parse_optional_assignment(parser, "predicate")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        dst_type = parser.parse_type()
        parser.parse_punctuation(",")
        desc_type = parser.parse_type()
        i16, i32 = IntegerAttr(0, 16).type, IntegerAttr(0, 32).type
        operands = [
            parser.resolve_operand(dst, dst_type),
            parser.resolve_operand(desc, desc_type),
            [parser.resolve_operand(c, i32) for c in coordinates],
            parser.resolve_operand(mbar, LLVMPointerType(IntAttr(3))),
            [parser.resolve_operand(o, i16) for o in offsets],
            None if mask is None else parser.resolve_operand(mask, i16),
            None if hint is None else parser.resolve_operand(hint, IntegerAttr(0, 64).type),
            None if predicate is None else parser.resolve_operand(predicate, IntegerAttr(0, 1).type),
        ]
        return cls.build(operands=operands, attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list((self.dst_mem, self.tma_descriptor, self.mbar), printer.print_operand)
        printer.print_string(",")
        _print_list(printer, "box", self.coordinates)
        if self.im2col_offsets:
            _print_list(printer, "im2col", self.im2col_offsets)
        _print_assignment(printer, "multicast_mask", self.multicast_mask)
        _print_assignment(printer, "l2_cache_hint", self.l2_cache_hint)
        _print_assignment(printer, "predicate", self.predicate)
        printer.print_op_attributes(_shown(self, self.DEFAULTS))
        printer.print_string(" : ")
        printer.print_list((self.dst_mem.type, self.tma_descriptor.type), printer.print_attribute)


class _TensorToGlobal(NVVMOp):
    """Parse/print of the shared::cta → global tensor ops (store and reduce):
    `%desc, %src, box[...] (l2_cache_hint = %h)? (, predicate = %p)? attr-dict : type, <3>`."""

    DEFAULTS: ClassVar[dict[str, Attribute]] = {"mode": _STORE_TILE}
    HAS_PREDICATE: ClassVar[bool] = False

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        desc = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        src = parser.parse_unresolved_operand()
        parser.parse_punctuation(",")
        parser.parse_keyword("box")
        coordinates = _parse_bracketed_operands(parser)
        hint = _parse_optional_assignment(parser, "l2_cache_hint")
        predicate = None
        if cls.HAS_PREDICATE and parser.parse_optional_punctuation(",") is not None:
            parser.parse_keyword("predicate")
            parser.parse_punctuation("=")
            predicate = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        desc_type = parser.parse_type()
        parser.parse_punctuation(",")
        src_type = _parse_pointer_type(parser)
        operands: list[SSAValue | list[SSAValue] | None] = [
            parser.resolve_operand(desc, desc_type),
            parser.resolve_operand(src, src_type),
            [parser.resolve_operand(c, IntegerAttr(0, 32).type) for c in coordinates],
            None if hint is None else parser.resolve_operand(hint, IntegerAttr(0, 64).type),
        ]
        if cls.HAS_PREDICATE:
            operands.append(None if predicate is None else parser.resolve_operand(predicate, IntegerAttr(0, 1).type))
        return cls.build(operands=operands, attributes=attributes)

    def print_tensor_to_global(
        self, printer: Printer, desc: SSAValue, src: SSAValue, coordinates: Sequence[SSAValue],
        hint: SSAValue | None, predicate: SSAValue | None,
    ) -> None:  # fmt: skip
        printer.print_string(" ")
        printer.print_list((desc, src), printer.print_operand)
        printer.print_string(",")
        _print_list(printer, "box", coordinates)
        _print_assignment(printer, "l2_cache_hint", hint)
        _print_assignment(printer, "predicate", predicate, comma=True)
        printer.print_op_attributes(_shown(self, self.DEFAULTS))
        printer.print_string(" : ")
        printer.print_attribute(desc.type)
        printer.print_string(", ")
        _print_stripped_pointer(printer, src.type)


@irdl_op_definition
class CpAsyncBulkTensorGlobalSharedCtaOp(_TensorToGlobal):
    """`cp.async.bulk.tensor.Nd.global.shared::cta.<mode>.bulk_group[.L2::cache_hint]`:
    a TMA store of the box at `coordinates` from `src_mem`, completing in the bulk
    async-group (`nvvm.cp.async.bulk.commit.group` / `wait_group`)."""

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.cp.async.bulk.tensor.global.shared.cta"
    tma_descriptor = operand_def(LLVMPointerType)
    src_mem = operand_def(LLVMPointerType)
    coordinates = var_operand_def(I32)
    l2_cache_hint = opt_operand_def(I64)
    predicate = opt_operand_def(I1)
    mode = prop_def(TMAStoreModeAttr, default_value=_STORE_TILE)
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))

    HAS_PREDICATE: ClassVar[bool] = True

    def __init__(
        self,
        tma_descriptor: SSAValue,
        src_mem: SSAValue,
        coordinates: Sequence[SSAValue],
        *,
        l2_cache_hint: SSAValue | None = None,
        predicate: SSAValue | None = None,
        mode: TMAStoreMode = TMAStoreMode.TILE,
    ):
        super().__init__(
            operands=[tma_descriptor, src_mem, coordinates, l2_cache_hint, predicate],
            properties={"mode": TMAStoreModeAttr(mode)},
        )

    def verify_nvvm(self) -> None:
        check_pointer(self, "tmaDescriptor", self.tma_descriptor, (0,))
        check_pointer(self, "srcMem", self.src_mem, (3,))
        mode = self.mode.data
        if self.predicate is not None:  # upstream lowers this form to inline PTX
            if mode is not TMAStoreMode.TILE:
                raise self.error(f"a predicate needs mode tile, got {mode.value}")
            if self.l2_cache_hint is not None:
                raise self.error("a predicate cannot be combined with l2_cache_hint")
        _check_store_mode(self, mode, _check_rank(self, self.coordinates))

    def print(self, printer: Printer) -> None:
        self.print_tensor_to_global(
            printer, self.tma_descriptor, self.src_mem, self.coordinates, self.l2_cache_hint, self.predicate
        )


@irdl_op_definition
class CpAsyncBulkTensorReduceOp(_TensorToGlobal):
    """`cp.reduce.async.bulk.tensor.Nd.global.shared::cta.<redOp>.<mode>.bulk_group
    [.L2::cache_hint]`: a TMA store that combines into global memory with `redKind`."""

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.cp.async.bulk.tensor.reduce"
    tma_descriptor = operand_def(LLVMPointerType)
    src_mem = operand_def(LLVMPointerType)
    coordinates = var_operand_def(I32)
    l2_cache_hint = opt_operand_def(I64)
    red_kind = prop_def(TMAReduxKindAttr, prop_name="redKind")
    mode = prop_def(TMAStoreModeAttr, default_value=_STORE_TILE)
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))

    def __init__(
        self,
        tma_descriptor: SSAValue,
        src_mem: SSAValue,
        coordinates: Sequence[SSAValue],
        red_kind: TMAReduxKind,
        *,
        l2_cache_hint: SSAValue | None = None,
        mode: TMAStoreMode = TMAStoreMode.TILE,
    ):
        super().__init__(
            operands=[tma_descriptor, src_mem, coordinates, l2_cache_hint],
            properties={"redKind": TMAReduxKindAttr(red_kind), "mode": TMAStoreModeAttr(mode)},
        )

    def verify_nvvm(self) -> None:
        check_pointer(self, "tmaDescriptor", self.tma_descriptor, (0,))
        check_pointer(self, "srcMem", self.src_mem, (3,))
        rank = _check_rank(self, self.coordinates)
        if self.mode.data is TMAStoreMode.TILE_SCATTER4:
            raise self.error("mode tile_scatter4 is not supported by the reduction (allowed: tile, im2col)")
        _check_store_mode(self, self.mode.data, rank)

    def print(self, printer: Printer) -> None:
        self.print_tensor_to_global(
            printer, self.tma_descriptor, self.src_mem, self.coordinates, self.l2_cache_hint, None
        )


# --------------------------------------------------------------------------------------
# Non-tensor bulk copies
# --------------------------------------------------------------------------------------


def _parse_trailing(parser: Parser, keywords: Sequence[str]) -> list[UnresolvedOperand | None]:
    """`(kw0 = %a)? (kw1 = %b)?` in this order."""
    return [_parse_optional_assignment(parser, keyword) for keyword in keywords]


@irdl_op_definition
class CpAsyncBulkSharedClusterGlobalOp(NVVMOp):
    """`cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes[.multicast::cluster]
    [.L2::cache_hint] [dst], [src], size, [mbar]` (a `!llvm.ptr<3>` destination:
    `.shared::cta`)."""

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.cp.async.bulk.shared.cluster.global"
    dst_mem = operand_def(LLVMPointerType)
    src_mem = operand_def(LLVMPointerType)
    mbar = operand_def(LLVMPointerType)
    size = operand_def(I32)
    multicast_mask = opt_operand_def(I16)
    l2_cache_hint = opt_operand_def(I64)
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))

    def __init__(
        self,
        dst_mem: SSAValue,
        src_mem: SSAValue,
        mbar: SSAValue,
        size: SSAValue,
        *,
        multicast_mask: SSAValue | None = None,
        l2_cache_hint: SSAValue | None = None,
    ):
        super().__init__(operands=[dst_mem, src_mem, mbar, size, multicast_mask, l2_cache_hint])

    def verify_nvvm(self) -> None:
        space = check_pointer(self, "dstMem", self.dst_mem, (3, 7))
        check_pointer(self, "srcMem", self.src_mem, (1,))
        check_pointer(self, "mbar", self.mbar, (3,))
        if space == 3 and self.multicast_mask is not None:
            raise self.error("multicast_mask needs a shared::cluster destination (!llvm.ptr<7>), got !llvm.ptr<3>")

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        names = [parser.parse_unresolved_operand()]
        for _ in range(3):
            parser.parse_punctuation(",")
            names.append(parser.parse_unresolved_operand())
        mask, hint = _parse_trailing(parser, ("multicast_mask", "l2_cache_hint"))
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        dst_type = parser.parse_type()
        parser.parse_punctuation(",")
        src_type = _parse_pointer_type(parser)
        operands = [
            parser.resolve_operand(names[0], dst_type),
            parser.resolve_operand(names[1], src_type),
            parser.resolve_operand(names[2], LLVMPointerType(IntAttr(3))),
            parser.resolve_operand(names[3], IntegerAttr(0, 32).type),
            None if mask is None else parser.resolve_operand(mask, IntegerAttr(0, 16).type),
            None if hint is None else parser.resolve_operand(hint, IntegerAttr(0, 64).type),
        ]
        return cls.build(operands=operands, attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list((self.dst_mem, self.src_mem, self.mbar, self.size), printer.print_operand)
        _print_assignment(printer, "multicast_mask", self.multicast_mask)
        _print_assignment(printer, "l2_cache_hint", self.l2_cache_hint)
        printer.print_op_attributes(_shown(self, {}))
        printer.print_string(" : ")
        printer.print_attribute(self.dst_mem.type)
        printer.print_string(", ")
        _print_stripped_pointer(printer, self.src_mem.type)


@irdl_op_definition
class CpAsyncBulkGlobalSharedCtaOp(NVVMOp):
    """`cp.async.bulk.global.shared::cta.bulk_group[.L2::cache_hint][.cp_mask]
    [dst], [src], size[, policy][, byteMask]`: completes in the bulk async-group."""

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.cp.async.bulk.global.shared.cta"
    dst_mem = operand_def(LLVMPointerType)
    src_mem = operand_def(LLVMPointerType)
    size = operand_def(I32)
    l2_cache_hint = opt_operand_def(I64)
    byte_mask = opt_operand_def(I16)
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))

    def __init__(
        self,
        dst_mem: SSAValue,
        src_mem: SSAValue,
        size: SSAValue,
        *,
        l2_cache_hint: SSAValue | None = None,
        byte_mask: SSAValue | None = None,
    ):
        super().__init__(operands=[dst_mem, src_mem, size, l2_cache_hint, byte_mask])

    def verify_nvvm(self) -> None:
        check_pointer(self, "dstMem", self.dst_mem, (1,))
        check_pointer(self, "srcMem", self.src_mem, (3,))

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        names = [parser.parse_unresolved_operand()]
        for _ in range(2):
            parser.parse_punctuation(",")
            names.append(parser.parse_unresolved_operand())
        hint, mask = _parse_trailing(parser, ("l2_cache_hint", "byte_mask"))
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        dst_type = _parse_pointer_type(parser)
        parser.parse_punctuation(",")
        src_type = _parse_pointer_type(parser)
        operands = [
            parser.resolve_operand(names[0], dst_type),
            parser.resolve_operand(names[1], src_type),
            parser.resolve_operand(names[2], IntegerAttr(0, 32).type),
            None if hint is None else parser.resolve_operand(hint, IntegerAttr(0, 64).type),
            None if mask is None else parser.resolve_operand(mask, IntegerAttr(0, 16).type),
        ]
        return cls.build(operands=operands, attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_list((self.dst_mem, self.src_mem, self.size), printer.print_operand)
        _print_assignment(printer, "l2_cache_hint", self.l2_cache_hint)
        _print_assignment(printer, "byte_mask", self.byte_mask)
        printer.print_op_attributes(_shown(self, {}))
        printer.print_string(" : ")
        _print_stripped_pointer(printer, self.dst_mem.type)
        printer.print_string(", ")
        _print_stripped_pointer(printer, self.src_mem.type)


# --------------------------------------------------------------------------------------
# Bulk async-groups, tensormap prefetch and proxy fences
# --------------------------------------------------------------------------------------


@irdl_op_definition
class CpAsyncBulkCommitGroupOp(NVVMOp):
    """`cp.async.bulk.commit_group;`: close this thread's open bulk async-group."""

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.cp.async.bulk.commit.group"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


@irdl_op_definition
class CpAsyncBulkWaitGroupOp(NVVMOp):
    """`cp.async.bulk.wait_group[.read] N;`: wait until at most `group` of this thread's
    bulk async-groups are pending (`.read`: until their sources have been read)."""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.cp.async.bulk.wait_group"
    group = prop_def(IntegerAttr[I32])
    read = opt_prop_def(UnitAttr)

    def __init__(self, group: int, read: bool = False):
        props: dict[str, Attribute] = {"group": IntegerAttr(group, 32)}
        if read:
            props["read"] = UnitAttr()
        super().__init__(properties=props)

    def verify_nvvm(self) -> None:
        if (value := self.group.value.data) < 0:
            raise self.error(f"group must be a non-negative i32, got {value}")

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        group = parser.parse_integer(allow_boolean=False)
        attributes = parser.parse_optional_attr_dict()
        return cls.build(properties={"group": IntegerAttr(group, 32)}, attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.group.value.data}")
        printer.print_op_attributes(_shown(self, {"group": self.group}))


@irdl_op_definition
class PrefetchTensormapOp(NVVMOp):
    """`prefetch[.const|.param].tensormap [addr];`: the tensormap form of upstream's
    `nvvm.prefetch` (`nvvm.prefetch tensormap[ in_param_space], %p[, predicate = %q] : type`).
    The cache-level forms of `nvvm.prefetch` are not part of this dialect."""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.prefetch"
    addr = operand_def(LLVMPointerType)
    predicate = opt_operand_def(I1)
    tensormap = opt_prop_def(UnitAttr)
    in_param_space = opt_prop_def(UnitAttr)

    def __init__(self, addr: SSAValue, predicate: SSAValue | None = None, *, in_param_space: bool = False):
        props: dict[str, Attribute] = {"tensormap": UnitAttr()}
        if in_param_space:
            props["in_param_space"] = UnitAttr()
        super().__init__(operands=[addr, predicate], properties=props)

    def verify_nvvm(self) -> None:
        if self.tensormap is None:
            raise self.error("only the tensormap form is supported (the cache-level forms are not in this dialect)")
        space = check_pointer(self, "addr", self.addr, (0, 4))
        if self.in_param_space is not None and space != 0:
            raise self.error(f"in_param_space needs a generic pointer (!llvm.ptr), got {self.addr.type}")

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        pos = parser.pos
        if parser.parse_optional_keyword("tensormap") is None:
            parser.raise_error(
                "nvvm.prefetch: only the tensormap form (`nvvm.prefetch tensormap, %p : !llvm.ptr`) is supported; "
                "upstream's cache-level forms are not in this dialect"
            )
        props: dict[str, Attribute] = {"tensormap": UnitAttr()}
        if parser.parse_optional_keyword("in_param_space") is not None:
            props["in_param_space"] = UnitAttr()
        parser.parse_punctuation(",")
        addr = parser.parse_unresolved_operand()
        predicate = None
        if parser.parse_optional_punctuation(",") is not None:
            parser.parse_keyword("predicate")
            parser.parse_punctuation("=")
            predicate = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
        names = [addr] if predicate is None else [addr, predicate]
        if len(types) != len(names):
            parser.raise_error(f"expected {len(names)} operand types, got {len(types)}", pos, parser.pos)
        values = [parser.resolve_operand(n, t) for n, t in zip(names, types, strict=True)]
        return cls.build(operands=[values[0], values[1:]], properties=props, attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" tensormap")
        if self.in_param_space is not None:
            printer.print_string(" in_param_space")
        printer.print_string(", ")
        printer.print_operand(self.addr)
        _print_assignment(printer, "predicate", self.predicate, comma=True)
        printer.print_op_attributes(_shown(self, {"tensormap": UnitAttr(), "in_param_space": UnitAttr()}))
        printer.print_string(" : ")
        printer.print_list(self.operand_types, printer.print_attribute)


_GENERIC = ProxyKindAttr(ProxyKind.GENERIC)
_TENSORMAP = ProxyKindAttr(ProxyKind.TENSORMAP)


class _FenceProxyTensormap(NVVMOp):
    """`fence.proxy.tensormap::generic.<sem>.<scope>`: order generic-proxy writes of a
    tensor map with the tensormap proxy (upstream allows only generic → tensormap).
    Syntax: `<scope> [%addr, %size] (from_proxy = ...)? (to_proxy = ...)? attr-dict`."""

    scope = prop_def(MemScopeKindAttr)
    from_proxy = prop_def(ProxyKindAttr, default_value=_GENERIC, prop_name="fromProxy")
    to_proxy = prop_def(ProxyKindAttr, default_value=_TENSORMAP, prop_name="toProxy")

    HAS_ADDRESS: ClassVar[bool] = False

    def verify_nvvm(self) -> None:
        if self.from_proxy != _GENERIC:
            raise self.error(f"fromProxy must be generic, got {self.from_proxy.data.value}")
        if self.to_proxy != _TENSORMAP:
            raise self.error(f"toProxy must be tensormap, got {self.to_proxy.data.value}")

    @classmethod
    def parse(cls, parser: Parser) -> Self:
        scope = parser.parse_optional_attribute()  # `#nvvm.mem_scope<cta>` or bare `<cta>`
        if scope is None:
            scope = MemScopeKindAttr(MemScopeKindAttr.parse_parameter(parser))
        props: dict[str, Attribute] = {"scope": scope}
        operands: list[SSAValue] = []
        if cls.HAS_ADDRESS:
            addr = parser.parse_unresolved_operand()
            parser.parse_punctuation(",")
            size = parser.parse_unresolved_operand()
            operands = [
                parser.resolve_operand(addr, LLVMPointerType()),
                parser.resolve_operand(size, IntegerAttr(0, 32).type),
            ]
        for keyword, prop in (("from_proxy", "fromProxy"), ("to_proxy", "toProxy")):
            if parser.parse_optional_keyword(keyword) is not None:
                parser.parse_punctuation("=")
                props[prop] = ProxyKindAttr(ProxyKindAttr.parse_parameter(parser))
        attributes = parser.parse_optional_attr_dict()
        return cls.build(operands=operands, properties=props, attributes=attributes)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        self.scope.print_parameter(printer)
        if self.operands:
            printer.print_string(" ")
            printer.print_list(self.operands, printer.print_operand)
        for keyword, prop, default in (("from_proxy", "fromProxy", _GENERIC), ("to_proxy", "toProxy", _TENSORMAP)):
            if (value := self.properties[prop]) != default:
                printer.print_string(f" {keyword} = ")
                cast(ProxyKindAttr, value).print_parameter(printer)
        printer.print_op_attributes(_shown(self, {"scope": self.scope, "fromProxy": _GENERIC, "toProxy": _TENSORMAP}))


@irdl_op_definition
class FenceProxyAcquireOp(_FenceProxyTensormap):
    """`fence.proxy.tensormap::generic.acquire.<scope> [addr], size;` (size 128)."""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.fence.proxy.acquire"
    addr = operand_def(LLVMPointerType)
    size = operand_def(I32)

    HAS_ADDRESS: ClassVar[bool] = True

    def __init__(self, scope: MemScopeKind, addr: SSAValue, size: SSAValue):
        super().__init__(
            operands=[addr, size],
            properties={"scope": MemScopeKindAttr(scope), "fromProxy": _GENERIC, "toProxy": _TENSORMAP},
        )

    def verify_nvvm(self) -> None:
        super().verify_nvvm()
        check_pointer(self, "addr", self.addr, (0,))


@irdl_op_definition
class FenceProxyReleaseOp(_FenceProxyTensormap):
    """`fence.proxy.tensormap::generic.release.<scope>;`"""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.fence.proxy.release"

    def __init__(self, scope: MemScopeKind):
        super().__init__(properties={"scope": MemScopeKindAttr(scope), "fromProxy": _GENERIC, "toProxy": _TENSORMAP})
