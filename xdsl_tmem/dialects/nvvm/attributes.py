"""nvvm enum attributes (`#nvvm.cta_group<cta_2>`, `#nvvm.tcgen05_ldst_shape<shape_16x256b>`, ...)
and the tcgen05.ld/st shape table that the interpreter and the PTX backend derive from.
"""

from __future__ import annotations

from typing_extensions import TypeVar
from xdsl.dialects.utils import EnumAttribute
from xdsl.irdl import (
    irdl_attr_definition,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.str_enum import StrEnum

from xdsl_tmem.dialects.utils import (
    is_power_of_two,
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
        """m(shape): 32-bit registers per thread for `.x1` (docs/ptx-nvvm.md §1.4, verified):
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
"""tcgen05.ld/st move at most 128 registers per thread (docs/ptx-nvvm.md §1.4, verified)."""


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
