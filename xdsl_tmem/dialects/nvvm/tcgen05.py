"""The `nvvm` dialect: the subset of upstream MLIR 22's NVVM dialect that SM100
tensor-memory pipelines use, with upstream's op names, attribute spellings,
custom syntax and generic form.

Text is exactly mlir-opt-22's both ways: we parse what it prints, and it parses
what we print (checked by `tests/test_nvvm_upstream.py`). Inherent
attributes are properties; MLIR prints them sorted, in the attr-dict of the
custom form (defaults elided) and in `<{...}>` of the generic form (defaults
included), and so do we.

Verifiers: upstream's own checks (messages reworded to start with the op name),
plus what ptxas, the LLVM IR verifier or mlir-translate reject and upstream
does not (alloc immediates, immediate-only operands, cta_group mixing, barrier
ids, ...). Facts are from `../shared/spec/ptx-nvvm.md`; each check says which.

Families: tcgen05 (alloc, dealloc, relinquish_alloc_permit, fence, wait, commit,
ld, st, mma, mma_smem_desc, cp, shift), mbarrier (init, inval, arrive,
arrive.expect_tx, expect_tx, complete_tx, try_wait.parity, try_wait, test.wait,
fence.mbarrier.init), synchronisation (barrier0, barrier, barrier.arrive,
bar.warp.sync, cluster.arrive[.relaxed], cluster.wait, fence.proxy, elect.sync,
mapa) and the `read.ptx.sreg.*` special registers. Not here (unused by TMEM
pipelines): tcgen05.mma.sp / .block_scale / .ws, tcgen05.ld.red, the smem-size
and envreg special registers.
"""

from __future__ import annotations

from abc import ABC
from collections.abc import Sequence
from typing import Self

from typing_extensions import TypeVar
from xdsl.dialects.builtin import (
    I1,
    I32,
    I64,
    BoolAttr,
    DenseArrayBase,
    IntAttr,
    IntegerAttr,
    IntegerType,
    UnitAttr,
    VectorType,
    i1,
    i32,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    ParsePropInAttrDict,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import AttrParser, Parser, UnresolvedOperand
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.hints import isa
from xdsl.utils.str_enum import StrEnum

from xdsl_tmem.dialects.llvm_ext import ConstantRangeAttr
from xdsl_tmem.dialects.traits import (
    LaneVarying,
    Synchronizes,
    SyncPoint,
    ThreadBarrier,
    UniformPreserving,
    UniformResult,
    WarpLocal,
)
from xdsl_tmem.dialects.utils import (
    TMEM_PTR,
    CtaGroupUser,
    NamedErrorOp,
    check_alloc_columns,
    check_arrival_count,
    constant_int,
    is_power_of_two,
    verify_single_cta_group,
)

# --------------------------------------------------------------------------------------
# Enum attributes: `#nvvm.<mnemonic><value>`, printed bare (`<before>`) in custom syntax
# --------------------------------------------------------------------------------------

_E = TypeVar("_E", bound=StrEnum)


def _parse_bracketed(parser: AttrParser, enum_type: type[_E]) -> _E:
    with parser.in_angle_brackets():
        return parser.parse_str_enum(enum_type)


def _print_bracketed(printer: Printer, value: StrEnum) -> None:
    with printer.in_angle_brackets():
        printer.print_identifier_or_string_literal(value.value)


class CTAGroupKind(StrEnum):
    CTA_1 = "cta_1"
    CTA_2 = "cta_2"


@irdl_attr_definition
class CTAGroupKindAttr(EnumAttribute[CTAGroupKind]):
    """`#nvvm.cta_group<cta_1|cta_2>`: PTX `.cta_group::1` / `.cta_group::2`."""

    name = "nvvm.cta_group"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> CTAGroupKind:
        return _parse_bracketed(parser, CTAGroupKind)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)

    @staticmethod
    def from_int(cta_group: int) -> CTAGroupKindAttr:
        if cta_group not in (1, 2):
            raise ValueError(f"cta_group must be 1 or 2, got {cta_group}")
        return CTAGroupKindAttr(CTAGroupKind.CTA_1 if cta_group == 1 else CTAGroupKind.CTA_2)

    def as_int(self) -> int:
        return 1 if self.data == CTAGroupKind.CTA_1 else 2


class Tcgen05FenceKind(StrEnum):
    BEFORE = "before"
    AFTER = "after"


@irdl_attr_definition
class Tcgen05FenceKindAttr(EnumAttribute[Tcgen05FenceKind]):
    """`#nvvm.tcgen05_fence<before|after>`: `tcgen05.fence::{before,after}_thread_sync`."""

    name = "nvvm.tcgen05_fence"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Tcgen05FenceKind:
        return _parse_bracketed(parser, Tcgen05FenceKind)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


class Tcgen05WaitKind(StrEnum):
    LOAD = "load"
    STORE = "store"


@irdl_attr_definition
class Tcgen05WaitKindAttr(EnumAttribute[Tcgen05WaitKind]):
    """`#nvvm.tcgen05_wait<load|store>`: `tcgen05.wait::ld` / `tcgen05.wait::st`."""

    name = "nvvm.tcgen05_wait"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Tcgen05WaitKind:
        return _parse_bracketed(parser, Tcgen05WaitKind)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


class Tcgen05LdStShape(StrEnum):
    SHAPE_16X64B = "shape_16x64b"
    SHAPE_16X128B = "shape_16x128b"
    SHAPE_16X256B = "shape_16x256b"
    SHAPE_32X32B = "shape_32x32b"
    SHAPE_16X32BX2 = "shape_16x32bx2"

    @property
    def registers_per_num(self) -> int:
        """m(shape): 32-bit registers per thread for `.x1` (ptx-nvvm.md §1.4, verified):
        the `.x1` footprint's 32-bit cells spread over the warp's 32 threads."""
        return self.lanes * self.columns_per_num * self.pieces // 32

    @property
    def lanes(self) -> int:
        """TMEM lanes one tcgen05.ld/st of this shape touches: the `16` of `16x64b`."""
        return int(self.ptx_name.split("x")[0])

    @property
    def columns_per_num(self) -> int:
        """32-bit TMEM columns of one piece per `.x1`: the `64b` of `16x64b` / 32."""
        return int(self.ptx_name.split("x")[1].removesuffix("b")) // 32

    @property
    def pieces(self) -> int:
        """`16x32bx2` moves two 16x32b pieces (the second `immHalfSplitoff` columns further)."""
        return 2 if self.ptx_name.endswith("x2") else 1

    @property
    def ptx_name(self) -> str:
        """The PTX qualifier: `16x64b`, ..., `16x32bx2`."""
        return self.value.removeprefix("shape_")

    def num(self, registers: int) -> int:
        """`.x<num>` of a tcgen05.ld/st of `registers` 32-bit registers per thread."""
        return registers // self.registers_per_num

    def fits(self, registers: int) -> bool:
        """Whether a tcgen05.ld/st can move `registers` registers per thread: m(shape) x
        num, num a power of two, at most 128 registers (PTX ISA, tcgen05.ld/st .num;
        all 40 shape x num combinations checked with ptxas)."""
        per_num = self.registers_per_num
        return registers % per_num == 0 and is_power_of_two(registers // per_num) and registers <= MAX_LDST_REGISTERS


MAX_LDST_REGISTERS = 128
"""tcgen05.ld/st move at most 128 registers per thread (ptx-nvvm.md §1.4, verified)."""


@irdl_attr_definition
class Tcgen05LdStShapeAttr(EnumAttribute[Tcgen05LdStShape]):
    """`#nvvm.tcgen05_ldst_shape<shape_...>`: the `.16x64b` ... `.16x32bx2` shape."""

    name = "nvvm.tcgen05_ldst_shape"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Tcgen05LdStShape:
        return _parse_bracketed(parser, Tcgen05LdStShape)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


class Tcgen05MMAKind(StrEnum):
    F16 = "f16"
    TF32 = "tf32"
    F8F6F4 = "f8f6f4"
    I8 = "i8"


@irdl_attr_definition
class Tcgen05MMAKindAttr(EnumAttribute[Tcgen05MMAKind]):
    """`#nvvm.tcgen05_mma_kind<f16|tf32|f8f6f4|i8>`: `.kind::...` of tcgen05.mma."""

    name = "nvvm.tcgen05_mma_kind"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Tcgen05MMAKind:
        return _parse_bracketed(parser, Tcgen05MMAKind)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


class Tcgen05MMACollectorOp(StrEnum):
    DISCARD = "discard"
    LASTUSE = "lastuse"
    FILL = "fill"
    USE = "use"


@irdl_attr_definition
class Tcgen05MMACollectorOpAttr(EnumAttribute[Tcgen05MMACollectorOp]):
    """`#nvvm.tcgen05_mma_collectorop<...>`: `.collector::a::...` of tcgen05.mma."""

    name = "nvvm.tcgen05_mma_collectorop"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Tcgen05MMACollectorOp:
        return _parse_bracketed(parser, Tcgen05MMACollectorOp)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


class Tcgen05CpShape(StrEnum):
    SHAPE_128X256B = "shape_128x256b"
    SHAPE_4X256B = "shape_4x256b"
    SHAPE_128X128B = "shape_128x128b"
    SHAPE_64X128B = "shape_64x128b"
    SHAPE_32X128B = "shape_32x128b"


@irdl_attr_definition
class Tcgen05CpShapeAttr(EnumAttribute[Tcgen05CpShape]):
    """`#nvvm.tcgen05_cp_shape<shape_...>`: the shape of tcgen05.cp."""

    name = "nvvm.tcgen05_cp_shape"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Tcgen05CpShape:
        return _parse_bracketed(parser, Tcgen05CpShape)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


class Tcgen05CpMulticast(StrEnum):
    NONE = "none"
    WARPX2_02_13 = "warpx2_02_13"
    WARPX2_01_23 = "warpx2_01_23"
    WARPX4 = "warpx4"


@irdl_attr_definition
class Tcgen05CpMulticastAttr(EnumAttribute[Tcgen05CpMulticast]):
    """`#nvvm.tcgen05_cp_multicast<...>`: the `.warpx2::..` / `.warpx4` qualifier."""

    name = "nvvm.tcgen05_cp_multicast"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Tcgen05CpMulticast:
        return _parse_bracketed(parser, Tcgen05CpMulticast)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


class Tcgen05CpSrcFormat(StrEnum):
    B6X16_P32 = "b6x16_p32"
    B4X16_P64 = "b4x16_p64"


@irdl_attr_definition
class Tcgen05CpSrcFormatAttr(EnumAttribute[Tcgen05CpSrcFormat]):
    """`#nvvm.tcgen05_cp_src_fmt<b6x16_p32|b4x16_p64>`: decompressing tcgen05.cp."""

    name = "nvvm.tcgen05_cp_src_fmt"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Tcgen05CpSrcFormat:
        return _parse_bracketed(parser, Tcgen05CpSrcFormat)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


class MemScopeKind(StrEnum):
    CTA = "cta"
    CLUSTER = "cluster"
    GPU = "gpu"
    SYS = "sys"


@irdl_attr_definition
class MemScopeKindAttr(EnumAttribute[MemScopeKind]):
    """`#nvvm.mem_scope<cta|cluster|gpu|sys>`."""

    name = "nvvm.mem_scope"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> MemScopeKind:
        return _parse_bracketed(parser, MemScopeKind)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


class ProxyKind(StrEnum):
    ALIAS = "alias"
    ASYNC = "async"
    ASYNC_GLOBAL = "async.global"
    ASYNC_SHARED = "async.shared"
    TENSORMAP = "tensormap"
    GENERIC = "generic"


@irdl_attr_definition
class ProxyKindAttr(EnumAttribute[ProxyKind]):
    """`#nvvm.proxy_kind<...>`: the proxy of `fence.proxy`."""

    name = "nvvm.proxy_kind"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> ProxyKind:
        return _parse_bracketed(parser, ProxyKind)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


class SharedSpace(StrEnum):
    CTA = "cta"
    CLUSTER = "cluster"


@irdl_attr_definition
class SharedSpaceAttr(EnumAttribute[SharedSpace]):
    """`#nvvm.shared_space<cta|cluster>`: `.shared::cta` / `.shared::cluster`."""

    name = "nvvm.shared_space"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> SharedSpace:
        return _parse_bracketed(parser, SharedSpace)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


class BarrierReduction(StrEnum):
    POPC = "popc"
    AND = "and"
    OR = "or"


@irdl_attr_definition
class BarrierReductionAttr(EnumAttribute[BarrierReduction]):
    """`#nvvm.reduction<popc|and|or>`: the `bar.red` reduction of `nvvm.barrier`."""

    name = "nvvm.reduction"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> BarrierReduction:
        return _parse_bracketed(parser, BarrierReduction)

    def print_parameter(self, printer: Printer) -> None:
        _print_bracketed(printer, self.data)


_CTA_1 = CTAGroupKindAttr(CTAGroupKind.CTA_1)
_CTA_SCOPE = MemScopeKindAttr(MemScopeKind.CTA)
_FALSE = IntegerAttr.from_bool(False)

# --------------------------------------------------------------------------------------
# Op base classes and shared checks
# --------------------------------------------------------------------------------------


class NVVMOp(NamedErrorOp, ABC):
    """Base of every nvvm op.

    * Inherent attributes are always properties. Properties and discardable
      attributes are kept sorted by name, as MLIR prints them. (One difference
      remains: in the custom form of a declarative op that also carries
      discardable attributes, MLIR sorts both kinds together, xDSL prints the
      discardable ones first.)
    * Every verification failure (including xDSL's own operand/property
      constraint messages) starts with the op name.
    """

    irdl_options = (ParsePropInAttrDict(),)

    def __post_init__(self) -> None:
        # MLIR accepts an inherent attribute in the attr-dict even where the custom
        # syntax has its own spelling for it (`{pack, shape = ...}`), and in `{...}`
        # of the generic form: it is still a property.
        inherent = self.get_irdl_definition().properties
        for name in [n for n in self.attributes if n in inherent]:
            self.properties[name] = self.attributes.pop(name)
        super().__post_init__()
        self.properties = dict(sorted(self.properties.items()))
        self.attributes = dict(sorted(self.attributes.items()))

    def verify(self, verify_nested_ops: bool = True) -> None:
        try:
            super().verify(verify_nested_ops)
        except VerifyException as e:
            message = str(e.args[0]) if e.args else type(e).__name__
            if message.startswith(f"{self.name}: "):
                raise
            raise self.error(message.replace(":\n", ": ")) from e

    def verify_(self) -> None:
        self.verify_nvvm()
        if isinstance(self, CtaGroupUser):
            verify_single_cta_group(self)

    def verify_nvvm(self) -> None:
        """Op-specific checks; raise `self.error(...)`."""


class _CtaGroupOp(NVVMOp, CtaGroupUser, ABC):
    """An op with a `group = #nvvm.cta_group<...>` property (default cta_1)."""

    group = prop_def(CTAGroupKindAttr, default_value=_CTA_1)

    def used_cta_group(self) -> int | None:
        return self.group.as_int()


_SPACE_NAMES = {
    0: "generic",
    1: "global",
    3: "shared::cta",
    6: "tensor memory",
    7: "shared::cluster",
}


def address_space(t: Attribute) -> int | None:
    """The address space of an `!llvm.ptr<N>` (0 for `!llvm.ptr`), None for any other type."""
    if not isinstance(t, LLVMPointerType):
        return None
    return t.addr_space.data if isinstance(t.addr_space, IntAttr) else 0


def _pointer_name(space: int) -> str:
    return "!llvm.ptr" if space == 0 else f"!llvm.ptr<{space}>"


def _check_pointer(op: NVVMOp, what: str, value: SSAValue, spaces: Sequence[int]) -> int:
    """The address space of `value`, which must be a pointer into one of `spaces`."""
    space = address_space(value.type)
    if space is None or space not in spaces:
        allowed = " or ".join(f"{_pointer_name(s)} ({_SPACE_NAMES[s]})" for s in spaces)
        raise op.error(f"{what} must be {allowed}, got {value.type}")
    return space


def _check_int_type(op: NVVMOp, what: str, value: SSAValue, width: int) -> None:
    expected = IntegerType(width)
    if value.type != expected:
        raise op.error(f"{what} must be {expected}, got {value.type}")


def _immediate(op: NVVMOp, what: str, value: SSAValue, why: str) -> int:
    """The constant value of `value`; it must be one (an immediate in PTX)."""
    if (constant := constant_int(value)) is None:
        raise op.error(f"{what} must be a constant (llvm.mlir.constant or arith.constant): {why}")
    return constant


# --------------------------------------------------------------------------------------
# tcgen05: allocation
# --------------------------------------------------------------------------------------


@irdl_op_definition
class Tcgen05AllocOp(_CtaGroupOp):
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
        # ptxas: an immediate ncols must be a power of two in [32, 512] (ptx-nvvm.md
        # §1.3, verified); llc always passes a register, which nothing checks.
        if (ncols := constant_int(self.n_cols)) is not None and (error := check_alloc_columns(ncols)) is not None:
            raise self.error(error)


@irdl_op_definition
class Tcgen05DeallocOp(_CtaGroupOp):
    """`tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, ncols;`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.tcgen05.dealloc"
    taddr = operand_def(LLVMPointerType)
    n_cols = operand_def(I32)
    assembly_format = "$taddr `,` $n_cols attr-dict `:` type(operands)"

    def __init__(self, taddr: SSAValue, n_cols: SSAValue, cta_group: int = 1):
        super().__init__(operands=[taddr, n_cols], properties={"group": CTAGroupKindAttr.from_int(cta_group)})

    def verify_nvvm(self) -> None:
        _check_pointer(self, "taddr", self.taddr, (6,))
        # ptxas: an immediate dealloc ncols must be a multiple of 32 (ptx-nvvm.md §1.3,
        # verified); unlike alloc it checks nothing else (0 and 2048 pass).
        if (ncols := constant_int(self.n_cols)) is not None and ncols % 32:
            raise self.error(f"ncols must be a multiple of 32, got {ncols}")


@irdl_op_definition
class Tcgen05RelinquishAllocPermitOp(_CtaGroupOp):
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
class Tcgen05CommitOp(_CtaGroupOp):
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
        # `addr` may be any LLVM pointer, as upstream allows; ptx-nvvm.md §4 recommends
        # !llvm.ptr<3> (a generic address prints .shared::cluster anyway).
        if self.multicast_mask is not None:
            # ptxas: the mask is a .b16 register (ptx-nvvm.md §1.6, verified).
            _check_int_type(self, "multicast_mask", self.multicast_mask, 16)


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
    # (ptx-nvvm.md §1.4, all 40 shape x num combinations verified with ptxas).
    if not shape.fits(count):
        raise op.error(
            f"{shape.value} needs {per_num} x num registers (num a power of two, at most "
            f"{MAX_LDST_REGISTERS} registers): got {data}"
        )
    if shape == Tcgen05LdStShape.SHAPE_16X32BX2:
        if offset is None:
            raise op.error("shape_16x32bx2 needs the offset operand (immHalfSplitoff)")
        # LLVM: the offset is an immarg ("immarg operand has non-immediate parameter").
        _immediate(op, "offset", offset, "it is the immediate immHalfSplitoff")
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
        matrix_d: SSAValue,
        matrix_a: SSAValue,
        matrix_b: SSAValue,
        idesc: SSAValue,
        enable_input_d: SSAValue,
        kind: Tcgen05MMAKind,
        cta_group: int = 1,
        *,
        scale_input_d: SSAValue | None = None,
        disable_output_lane: SSAValue | None = None,
        collector_op: Tcgen05MMACollectorOp = Tcgen05MMACollectorOp.DISCARD,
        a_shift: bool = False,
    ):
        properties: dict[str, Attribute] = {
            "kind": Tcgen05MMAKindAttr(kind),
            "ctaGroup": CTAGroupKindAttr.from_int(cta_group),
            "collectorOp": Tcgen05MMACollectorOpAttr(collector_op),
        }
        if a_shift:
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

    def used_cta_group(self) -> int | None:
        return self.cta_group.as_int()

    def verify_nvvm(self) -> None:
        _check_pointer(self, "matrix_d", self.matrix_d, (6,))
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
            _check_int_type(self, "scale", scale, 64)
            # LLVM verifier: the .scale_d intrinsics take kind f16/tf32 only and an
            # immediate scale in [0, 16) (checked with mlir-translate-22).
            kind = self.kind.data
            if kind not in (Tcgen05MMAKind.F16, Tcgen05MMAKind.TF32):
                raise self.error(f"scale (scale-input-d) needs kind f16 or tf32, got {kind.value}")
            value = _immediate(self, "scale", scale, "PTX scale-input-d is an immediate")
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
    """Pack a 64-bit shared-memory matrix descriptor (ptx-nvvm.md §1.7; lowers to
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
"""Multicast each cp shape allows (mlir-opt-22's verifier; ptx-nvvm.md §1.8)."""


@irdl_op_definition
class Tcgen05CpOp(_CtaGroupOp):
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
class Tcgen05ShiftOp(_CtaGroupOp):
    """`tcgen05.shift.cta_group::N.down [taddr];`"""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.tcgen05.shift"
    taddr = operand_def(LLVMPointerType)
    assembly_format = "$taddr attr-dict `:` type($taddr)"

    def __init__(self, taddr: SSAValue, cta_group: int = 1):
        super().__init__(operands=[taddr], properties={"group": CTAGroupKindAttr.from_int(cta_group)})

    def verify_nvvm(self) -> None:
        _check_pointer(self, "taddr", self.taddr, (6,))


# --------------------------------------------------------------------------------------
# mbarrier
# --------------------------------------------------------------------------------------


def _check_mbarrier_scope(op: NVVMOp, scope: MemScopeKindAttr) -> None:
    if scope.data not in (MemScopeKind.CTA, MemScopeKind.CLUSTER):
        raise op.error(f"scope must be cta or cluster, got {scope.data.value}")


def _check_no_cluster_state(op: NVVMOp, space: int, res: SSAValue | None) -> None:
    # A shared::cluster arrive has no state result (PTX needs the `_` sink).
    if space == 7 and res is not None:
        raise op.error(
            "an arrive on a !llvm.ptr<7> (shared::cluster) mbarrier cannot return a state; remove the result"
        )


@irdl_op_definition
class MBarrierInitOp(NVVMOp):
    """`mbarrier.init[.shared].b64 [addr], count;` (inline PTX if predicated)."""

    traits = traits_def(SyncPoint(), LaneVarying())

    name = "nvvm.mbarrier.init"
    addr = operand_def(LLVMPointerType)
    count = operand_def(I32)
    predicate = opt_operand_def(I1)
    assembly_format = "$addr `,` $count (`,` `predicate` `=` $predicate^)? attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue, count: SSAValue, predicate: SSAValue | None = None):
        super().__init__(operands=[addr, count, predicate])

    def verify_nvvm(self) -> None:
        _check_pointer(self, "addr", self.addr, (0, 3))
        # [D] PTX ISA: the count is in [1, 2^20 - 1]; ptxas cannot check a register.
        if (count := constant_int(self.count)) is not None and (
            error := check_arrival_count("count", count)
        ) is not None:
            raise self.error(error)


@irdl_op_definition
class MBarrierInvalOp(NVVMOp):
    """`mbarrier.inval[.shared].b64 [addr];`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.inval"
    addr = operand_def(LLVMPointerType)
    assembly_format = "$addr attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue):
        super().__init__(operands=[addr])

    def verify_nvvm(self) -> None:
        _check_pointer(self, "addr", self.addr, (0, 3))


@irdl_op_definition
class MBarrierArriveOp(NVVMOp):
    """`mbarrier.arrive[.relaxed][.<scope>][.shared[::cluster]].b64 state|_, [addr][, count];`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.arrive"
    addr = operand_def(LLVMPointerType)
    count = opt_operand_def(I32)
    res = opt_result_def(I64)
    scope = prop_def(MemScopeKindAttr, default_value=_CTA_SCOPE)
    relaxed = prop_def(BoolAttr, default_value=_FALSE)
    assembly_format = "$addr (`,` $count^)? attr-dict `:` type($addr) (`->` type($res)^)?"

    def __init__(
        self,
        addr: SSAValue,
        count: SSAValue | None = None,
        *,
        has_state: bool = False,
        scope: MemScopeKind = MemScopeKind.CTA,
        relaxed: bool = False,
    ):
        super().__init__(
            operands=[addr, count],
            result_types=[[i64] if has_state else []],
            properties={
                "scope": MemScopeKindAttr(scope),
                "relaxed": IntegerAttr.from_bool(relaxed),
            },
        )

    def verify_nvvm(self) -> None:
        space = _check_pointer(self, "addr", self.addr, (0, 3, 7))
        _check_mbarrier_scope(self, self.scope)
        _check_no_cluster_state(self, space, self.res)


@irdl_op_definition
class MBarrierArriveExpectTxOp(NVVMOp):
    """`mbarrier.arrive.expect_tx[...].b64 state|_, [addr], txcount;`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.arrive.expect_tx"
    addr = operand_def(LLVMPointerType)
    txcount = operand_def(I32)
    predicate = opt_operand_def(I1)
    res = opt_result_def(I64)
    scope = prop_def(MemScopeKindAttr, default_value=_CTA_SCOPE)
    relaxed = prop_def(BoolAttr, default_value=_FALSE)
    assembly_format = (
        "$addr `,` $txcount (`,` `predicate` `=` $predicate^)? attr-dict `:` type(operands) (`->` type($res)^)?"
    )

    def __init__(
        self,
        addr: SSAValue,
        txcount: SSAValue,
        predicate: SSAValue | None = None,
        *,
        has_state: bool = False,
        scope: MemScopeKind = MemScopeKind.CTA,
        relaxed: bool = False,
    ):
        super().__init__(
            operands=[addr, txcount, predicate],
            result_types=[[i64] if has_state else []],
            properties={
                "scope": MemScopeKindAttr(scope),
                "relaxed": IntegerAttr.from_bool(relaxed),
            },
        )

    def verify_nvvm(self) -> None:
        space = _check_pointer(self, "addr", self.addr, (0, 3, 7))
        _check_mbarrier_scope(self, self.scope)
        _check_no_cluster_state(self, space, self.res)


class _TxCountOp(NVVMOp, ABC):
    addr = operand_def(LLVMPointerType)
    txcount = operand_def(I32)
    scope = prop_def(MemScopeKindAttr, default_value=_CTA_SCOPE)
    assembly_format = "$addr `,` $txcount attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue, txcount: SSAValue, scope: MemScopeKind = MemScopeKind.CTA):
        super().__init__(operands=[addr, txcount], properties={"scope": MemScopeKindAttr(scope)})

    def verify_nvvm(self) -> None:
        _check_pointer(self, "addr", self.addr, (3, 7))
        _check_mbarrier_scope(self, self.scope)


@irdl_op_definition
class MBarrierExpectTxOp(_TxCountOp):
    """`mbarrier.expect_tx.relaxed.<scope>.shared[::cluster].b64 [addr], txcount;`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.expect_tx"


@irdl_op_definition
class MBarrierCompleteTxOp(_TxCountOp):
    """`mbarrier.complete_tx.relaxed.<scope>.shared[::cluster].b64 [addr], txcount;`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.complete_tx"


@irdl_op_definition
class MBarrierTryWaitParityOp(NVVMOp):
    """Blocking wait: a `mbarrier.try_wait.parity` retry loop in inline PTX (needs
    `--convert-nvvm-to-llvm`; ptx-nvvm.md §2). `ticks` is the suspend-time hint."""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.try_wait.parity"
    addr = operand_def(LLVMPointerType)
    phase = operand_def(I32)
    ticks = operand_def(I32)
    assembly_format = "$addr `,` $phase `,` $ticks attr-dict `:` type(operands)"

    def __init__(self, addr: SSAValue, phase: SSAValue, ticks: SSAValue):
        super().__init__(operands=[addr, phase, ticks])

    def verify_nvvm(self) -> None:
        _check_pointer(self, "addr", self.addr, (0, 3))


class _ProbeOp(NVVMOp, ABC):
    """A single non-blocking probe returning i1; `state_or_phase` is the i64 state
    of an earlier arrive or the i32 phase parity. (Operands are defined in the
    subclasses: xDSL orders a subclass's operand definitions before its base's.)"""

    res = result_def(I1)
    scope = prop_def(MemScopeKindAttr, default_value=_CTA_SCOPE)
    relaxed = prop_def(BoolAttr, default_value=_FALSE)

    def verify_probe(self, addr: SSAValue) -> None:
        _check_pointer(self, "addr", addr, (0, 3))
        _check_mbarrier_scope(self, self.scope)


@irdl_op_definition
class MBarrierTryWaitOp(_ProbeOp):
    """`mbarrier.try_wait[.parity].<sem>.<scope>.shared.b64 p, [addr], state|phase[, ticks];`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.try_wait"
    addr = operand_def(LLVMPointerType)
    state_or_phase = operand_def(I32 | I64)
    ticks = opt_operand_def(I32)
    assembly_format = "$addr `,` $state_or_phase (`,` $ticks^)? attr-dict `:` type(operands) `->` type($res)"

    def __init__(
        self,
        addr: SSAValue,
        state_or_phase: SSAValue,
        ticks: SSAValue | None = None,
        *,
        scope: MemScopeKind = MemScopeKind.CTA,
        relaxed: bool = False,
    ):
        super().__init__(
            operands=[addr, state_or_phase, ticks],
            result_types=[i1],
            properties={
                "scope": MemScopeKindAttr(scope),
                "relaxed": IntegerAttr.from_bool(relaxed),
            },
        )

    def verify_nvvm(self) -> None:
        self.verify_probe(self.addr)


@irdl_op_definition
class MBarrierTestWaitOp(_ProbeOp):
    """`mbarrier.test_wait[.parity].<sem>.<scope>.shared.b64 p, [addr], state|phase;`"""

    traits = traits_def(Synchronizes(), LaneVarying())

    name = "nvvm.mbarrier.test.wait"
    addr = operand_def(LLVMPointerType)
    state_or_phase = operand_def(I32 | I64)
    assembly_format = "$addr `,` $state_or_phase attr-dict `:` type(operands) `->` type($res)"

    def __init__(
        self,
        addr: SSAValue,
        state_or_phase: SSAValue,
        *,
        scope: MemScopeKind = MemScopeKind.CTA,
        relaxed: bool = False,
    ):
        super().__init__(
            operands=[addr, state_or_phase],
            result_types=[i1],
            properties={
                "scope": MemScopeKindAttr(scope),
                "relaxed": IntegerAttr.from_bool(relaxed),
            },
        )

    def verify_nvvm(self) -> None:
        self.verify_probe(self.addr)


@irdl_op_definition
class FenceMbarrierInitOp(NVVMOp):
    """`fence.mbarrier_init.release.cluster;`"""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.fence.mbarrier.init"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


# --------------------------------------------------------------------------------------
# Synchronisation and identity
# --------------------------------------------------------------------------------------


@irdl_op_definition
class FenceProxyOp(NVVMOp):
    """`fence.proxy.<kind>[::<space>];`, e.g. `fence.proxy.async.shared::cta;`"""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.fence.proxy"
    kind = prop_def(ProxyKindAttr)
    space = opt_prop_def(SharedSpaceAttr)
    assembly_format = "attr-dict"

    def __init__(self, kind: ProxyKind, space: SharedSpace | None = None):
        properties: dict[str, Attribute] = {"kind": ProxyKindAttr(kind)}
        if space is not None:
            properties["space"] = SharedSpaceAttr(space)
        super().__init__(properties=properties)

    def verify_nvvm(self) -> None:
        # mlir-opt-22's verifier, reworded.
        kind = self.kind.data
        if kind in (ProxyKind.TENSORMAP, ProxyKind.GENERIC):
            raise self.error(f"kind {kind.value} is not supported (allowed: alias, async, async.global, async.shared)")
        if kind == ProxyKind.ASYNC_SHARED and self.space is None:
            raise self.error("kind async.shared needs a space (#nvvm.shared_space<cta|cluster>)")
        if kind != ProxyKind.ASYNC_SHARED and self.space is not None:
            raise self.error(f"only kind async.shared takes a space, got kind {kind.value}")


@irdl_op_definition
class Barrier0Op(NVVMOp):
    """`bar.sync 0;`"""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.barrier0"
    assembly_format = "attr-dict"

    def __init__(self):
        super().__init__()


_BARRIER_IDS = 16
"""ptxas: "Barrier number '16' out of range, expected to be in range [0..15]" (verified)."""


def _check_barrier_operands(op: NVVMOp, barrier_id: SSAValue | None, number_of_threads: SSAValue | None) -> None:
    # ptxas rejects these as immediates (checked with llc-22 + ptxas, which receive
    # constants as immediates); registers are not checked.
    if barrier_id is not None and (value := constant_int(barrier_id)) is not None:
        if not 0 <= value < _BARRIER_IDS:
            raise op.error(f"barrier id must be in [0, {_BARRIER_IDS - 1}], got {value}")
    if number_of_threads is not None and (value := constant_int(number_of_threads)) is not None:
        if value < 0 or value % 32:
            raise op.error(f"number_of_threads must be a multiple of the warp size (32), got {value}")


@irdl_op_definition
class BarrierOp(NVVMOp):
    """`bar.sync id[, n];` or, with a reduction, `bar.red.<op> ...`."""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.barrier"
    barrier_id = opt_operand_def(I32)
    number_of_threads = opt_operand_def(I32)
    reduction_predicate = opt_operand_def(I32)
    res = opt_result_def(I32)
    reduction_op = opt_prop_def(BarrierReductionAttr, prop_name="reductionOp")
    irdl_options = (ParsePropInAttrDict(), AttrSizedOperandSegments(as_property=True))
    assembly_format = (
        "(`id` `=` $barrier_id^)? (`number_of_threads` `=` $number_of_threads^)? "
        "(qualified($reductionOp)^ $reduction_predicate)? attr-dict (`->` type($res)^)?"
    )

    def __init__(
        self,
        barrier_id: SSAValue | None = None,
        number_of_threads: SSAValue | None = None,
        reduction: tuple[BarrierReduction, SSAValue] | None = None,
    ):
        properties: dict[str, Attribute] = {}
        predicate = None
        if reduction is not None:
            properties["reductionOp"] = BarrierReductionAttr(reduction[0])
            predicate = reduction[1]
        super().__init__(
            operands=[barrier_id, number_of_threads, predicate],
            result_types=[[i32] if reduction is not None else []],
            properties=properties,
        )

    def verify_nvvm(self) -> None:
        if self.number_of_threads is not None and self.barrier_id is None:
            # mlir-opt-22: "barrier id is missing, it should be set between 0 to 15".
            raise self.error("number_of_threads needs a barrier id (0 to 15)")
        if (self.reduction_op is None) != (self.reduction_predicate is None):
            raise self.error("a reduction needs both reductionOp and its predicate operand")
        if self.res is not None and self.reduction_op is None:
            # mlir-translate-22 crashes on a result without a reduction.
            raise self.error("only a reduction (#nvvm.reduction<...>) has a result")
        _check_barrier_operands(self, self.barrier_id, self.number_of_threads)


@irdl_op_definition
class BarrierArriveOp(NVVMOp):
    """`bar.arrive id, n;` (inline PTX; needs `--convert-nvvm-to-llvm`)."""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.barrier.arrive"
    barrier_id = opt_operand_def(I32)
    number_of_threads = operand_def(I32)
    assembly_format = "(`id` `=` $barrier_id^)? `number_of_threads` `=` $number_of_threads attr-dict"

    def __init__(self, number_of_threads: SSAValue, barrier_id: SSAValue | None = None):
        super().__init__(operands=[barrier_id, number_of_threads])

    def verify_nvvm(self) -> None:
        _check_barrier_operands(self, self.barrier_id, self.number_of_threads)


@irdl_op_definition
class SyncWarpOp(NVVMOp):
    """`bar.warp.sync membermask;`"""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.bar.warp.sync"
    mask = operand_def(I32)
    assembly_format = "$mask attr-dict `:` type($mask)"

    def __init__(self, mask: SSAValue):
        super().__init__(operands=[mask])


class _ClusterBarrierOp(NVVMOp, ABC):
    aligned = opt_prop_def(UnitAttr)
    assembly_format = "attr-dict"

    def __init__(self, aligned: bool = False):
        super().__init__(properties={"aligned": UnitAttr()} if aligned else {})


@irdl_op_definition
class ClusterArriveOp(_ClusterBarrierOp):
    """`barrier.cluster.arrive[.aligned];`"""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.cluster.arrive"


@irdl_op_definition
class ClusterArriveRelaxedOp(_ClusterBarrierOp):
    """`barrier.cluster.arrive.relaxed[.aligned];`"""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.cluster.arrive.relaxed"


@irdl_op_definition
class ClusterWaitOp(_ClusterBarrierOp):
    """`barrier.cluster.wait[.aligned];`"""

    traits = traits_def(ThreadBarrier(), LaneVarying())

    name = "nvvm.cluster.wait"


@irdl_op_definition
class ElectSyncOp(NVVMOp):
    """`elect.sync _|p, membermask;` (membermask defaults to all lanes)."""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.elect.sync"
    membermask = opt_operand_def(I32)
    pred = result_def(IntegerType)  # i1, checked in verify_nvvm
    assembly_format = "($membermask^)? attr-dict `->` type($pred)"

    def __init__(self, membermask: SSAValue | None = None):
        super().__init__(operands=[membermask], result_types=[i1])

    def verify_nvvm(self) -> None:
        _check_int_type(self, "the result", self.pred, 1)


@irdl_op_definition
class MapaOp(NVVMOp):
    """`mapa[.shared::cluster].u32|u64 d, a, b;`: the address of `a` in CTA `b`."""

    traits = traits_def(WarpLocal(), UniformPreserving())

    name = "nvvm.mapa"
    a = operand_def(LLVMPointerType)
    b = operand_def(I32)
    res = result_def(LLVMPointerType)
    assembly_format = "$a `,` $b attr-dict `:` type($a) `->` type($res)"

    def __init__(self, a: SSAValue, b: SSAValue):
        space = address_space(a.type)
        result = LLVMPointerType(IntAttr(7)) if space == 3 else LLVMPointerType()
        super().__init__(operands=[a, b], result_types=[result])

    def verify_nvvm(self) -> None:
        space = _check_pointer(self, "a", self.a, (0, 3))
        expected = 7 if space == 3 else 0
        if address_space(self.res.type) != expected:
            raise self.error(
                f"result must be {_pointer_name(expected)} for a {_pointer_name(space)} operand, got {self.res.type}"
            )


# --------------------------------------------------------------------------------------
# Special registers: nvvm.read.ptx.sreg.*
# --------------------------------------------------------------------------------------


class _SregOp(NVVMOp, ABC):
    """`mov.u32 %r, %<sreg>;`. Upstream allows any LLVM type; an integer is the
    only meaningful one, so that is what we accept."""

    res = result_def(IntegerType)
    assembly_format = "attr-dict `:` type($res)"

    def __init__(self, result_type: IntegerType = i32):
        super().__init__(result_types=[result_type])


class _RangeSregOp(_SregOp, ABC):
    """A special register with an optional `range <iN, lower, upper>` (LLVM `range`
    return attribute on the intrinsic call)."""

    range = opt_prop_def(ConstantRangeAttr)
    traits = traits_def(Pure())
    assembly_format = "(`range` $range^)? attr-dict `:` type($res)"

    def __init__(self, result_type: IntegerType = i32, range: tuple[int, int] | None = None):
        super().__init__(result_type)
        if range is not None:
            self.properties["range"] = ConstantRangeAttr(result_type, *range)

    def verify_nvvm(self) -> None:
        if self.range is not None and self.range.int_type != self.res.type:
            # LLVM verifier: "Attribute 'range(i64 0, 160)' applied to incompatible type!"
            raise self.error(f"range type {self.range.int_type} must match the result type {self.res.type}")


class _PureSregOp(_SregOp, ABC):
    traits = traits_def(Pure())


@irdl_op_definition
class LaneIdOp(_RangeSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.laneid"


@irdl_op_definition
class WarpSizeOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.warpsize"


@irdl_op_definition
class WarpIdOp(_RangeSregOp):
    """`%warpid`: the volatile hardware warp slot, not tid.x / 32 (ptx-nvvm.md §1.2)."""

    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.warpid"


@irdl_op_definition
class WarpDimOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nwarpid"


@irdl_op_definition
class SmIdOp(_RangeSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.smid"


@irdl_op_definition
class SmDimOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nsmid"


@irdl_op_definition
class GridIdOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.gridid"


@irdl_op_definition
class ThreadIdXOp(_RangeSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.tid.x"


@irdl_op_definition
class ThreadIdYOp(_RangeSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.tid.y"


@irdl_op_definition
class ThreadIdZOp(_RangeSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.tid.z"


@irdl_op_definition
class BlockDimXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ntid.x"


@irdl_op_definition
class BlockDimYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ntid.y"


@irdl_op_definition
class BlockDimZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ntid.z"


@irdl_op_definition
class BlockIdXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ctaid.x"


@irdl_op_definition
class BlockIdYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ctaid.y"


@irdl_op_definition
class BlockIdZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.ctaid.z"


@irdl_op_definition
class GridDimXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nctaid.x"


@irdl_op_definition
class GridDimYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nctaid.y"


@irdl_op_definition
class GridDimZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nctaid.z"


@irdl_op_definition
class ClusterIdXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.clusterid.x"


@irdl_op_definition
class ClusterIdYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.clusterid.y"


@irdl_op_definition
class ClusterIdZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.clusterid.z"


@irdl_op_definition
class ClusterDimXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nclusterid.x"


@irdl_op_definition
class ClusterDimYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nclusterid.y"


@irdl_op_definition
class ClusterDimZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.nclusterid.z"


@irdl_op_definition
class BlockInClusterIdXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.ctaid.x"


@irdl_op_definition
class BlockInClusterIdYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.ctaid.y"


@irdl_op_definition
class BlockInClusterIdZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.ctaid.z"


@irdl_op_definition
class ClusterDimBlocksXOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.nctaid.x"


@irdl_op_definition
class ClusterDimBlocksYOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.nctaid.y"


@irdl_op_definition
class ClusterDimBlocksZOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.nctaid.z"


@irdl_op_definition
class ClusterCtaRankOp(_RangeSregOp):
    """`%cluster_ctarank`: this CTA's rank in its cluster (bit index of commit masks)."""

    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.ctarank"


@irdl_op_definition
class ClusterNctaRankOp(_RangeSregOp):
    traits = traits_def(UniformResult())

    name = "nvvm.read.ptx.sreg.cluster.nctarank"


@irdl_op_definition
class LaneMaskEqOp(_PureSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.lanemask.eq"


@irdl_op_definition
class LaneMaskLeOp(_PureSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.lanemask.le"


@irdl_op_definition
class LaneMaskLtOp(_PureSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.lanemask.lt"


@irdl_op_definition
class LaneMaskGeOp(_PureSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.lanemask.ge"


@irdl_op_definition
class LaneMaskGtOp(_PureSregOp):
    traits = traits_def(LaneVarying())

    name = "nvvm.read.ptx.sreg.lanemask.gt"


@irdl_op_definition
class ClockOp(_SregOp):
    """`%clock` (not pure: every read differs)."""

    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.read.ptx.sreg.clock"


@irdl_op_definition
class Clock64Op(_SregOp):
    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.read.ptx.sreg.clock64"

    def __init__(self, result_type: IntegerType = i64):
        super().__init__(result_type)


@irdl_op_definition
class GlobalTimerOp(_SregOp):
    traits = traits_def(WarpLocal(), LaneVarying())

    name = "nvvm.read.ptx.sreg.globaltimer"

    def __init__(self, result_type: IntegerType = i64):
        super().__init__(result_type)


NVVM = Dialect(
    "nvvm",
    [
        # tcgen05
        Tcgen05AllocOp,
        Tcgen05DeallocOp,
        Tcgen05RelinquishAllocPermitOp,
        Tcgen05FenceOp,
        Tcgen05WaitOp,
        Tcgen05CommitOp,
        Tcgen05LdOp,
        Tcgen05StOp,
        Tcgen05MMAOp,
        Tcgen05MmaSmemDescOp,
        Tcgen05CpOp,
        Tcgen05ShiftOp,
        # mbarrier
        MBarrierInitOp,
        MBarrierInvalOp,
        MBarrierArriveOp,
        MBarrierArriveExpectTxOp,
        MBarrierExpectTxOp,
        MBarrierCompleteTxOp,
        MBarrierTryWaitParityOp,
        MBarrierTryWaitOp,
        MBarrierTestWaitOp,
        FenceMbarrierInitOp,
        # synchronisation and identity
        FenceProxyOp,
        Barrier0Op,
        BarrierOp,
        BarrierArriveOp,
        SyncWarpOp,
        ClusterArriveOp,
        ClusterArriveRelaxedOp,
        ClusterWaitOp,
        ElectSyncOp,
        MapaOp,
        # special registers
        LaneIdOp,
        WarpSizeOp,
        WarpIdOp,
        WarpDimOp,
        SmIdOp,
        SmDimOp,
        GridIdOp,
        ThreadIdXOp,
        ThreadIdYOp,
        ThreadIdZOp,
        BlockDimXOp,
        BlockDimYOp,
        BlockDimZOp,
        BlockIdXOp,
        BlockIdYOp,
        BlockIdZOp,
        GridDimXOp,
        GridDimYOp,
        GridDimZOp,
        ClusterIdXOp,
        ClusterIdYOp,
        ClusterIdZOp,
        ClusterDimXOp,
        ClusterDimYOp,
        ClusterDimZOp,
        BlockInClusterIdXOp,
        BlockInClusterIdYOp,
        BlockInClusterIdZOp,
        ClusterDimBlocksXOp,
        ClusterDimBlocksYOp,
        ClusterDimBlocksZOp,
        ClusterCtaRankOp,
        ClusterNctaRankOp,
        LaneMaskEqOp,
        LaneMaskLeOp,
        LaneMaskLtOp,
        LaneMaskGeOp,
        LaneMaskGtOp,
        ClockOp,
        Clock64Op,
        GlobalTimerOp,
    ],
    [
        CTAGroupKindAttr,
        Tcgen05FenceKindAttr,
        Tcgen05WaitKindAttr,
        Tcgen05LdStShapeAttr,
        Tcgen05MMAKindAttr,
        Tcgen05MMACollectorOpAttr,
        Tcgen05CpShapeAttr,
        Tcgen05CpMulticastAttr,
        Tcgen05CpSrcFormatAttr,
        MemScopeKindAttr,
        ProxyKindAttr,
        SharedSpaceAttr,
        BarrierReductionAttr,
    ],
)


# --------------------------------------------------------------------------------------
# Discardable `nvvm.*` attributes on other ops (kernel launch bounds)
# --------------------------------------------------------------------------------------

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
