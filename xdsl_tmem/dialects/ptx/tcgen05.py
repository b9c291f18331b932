"""The tcgen05 (tensor memory and fifth-generation tensor core) instructions."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.dialects.builtin import (
    IntAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.ptx.base import (
    Address,
    Imm,
    Instruction,
    Namer,
    Reg,
    RegisterType,
    RegOrImm,
    address_text,
    vector_text,
)
from xdsl_tmem.dialects.ptx.qualifiers import (
    StateSpace,
    StateSpaceAttr,
    check_only_register,
    check_register,
    immediate,
    reject,
    spell,
)
from xdsl_tmem.dialects.traits import Synchronizes, SyncPoint, WarpLocal

# ---- tcgen05 ------------------------------------------------------------------------------


TCGEN05_RULE = "PTX ISA 9.0, Tensor Core 5th Generation Family Instructions"


def _check_taddr(op: Instruction, value: SSAValue, rule: str) -> None:
    """Tensor-memory addresses are 32-bit (`.b32` registers)."""
    check_only_register(op, "tensor memory address", value, "b32", rule)


@irdl_op_definition
class Tcgen05AllocOp(Instruction):
    """`tcgen05.alloc.cta_group::N.sync.aligned[.shared::cta].b32 [dst], ncols`: an
    immediate `ncols` is a power of two in [32, 512]."""

    name = "ptx.tcgen05_alloc"
    traits = traits_def(Synchronizes())
    cta_group = prop_def(nvvm.CTAGroupKindAttr)
    space = opt_prop_def(StateSpaceAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    ncols = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{TCGEN05_RULE}: tcgen05.alloc"

    def __init__(self, cta_group: int, shared: bool, addr: SSAValue, ncols: SSAValue, offset: int = 0):
        props: dict[str, Attribute] = {
            "cta_group": nvvm.CTAGroupKindAttr.from_int(cta_group),
            "offset": IntAttr(offset),
        }
        if shared:
            props["space"] = StateSpaceAttr(StateSpace.SHARED_CTA)
        super().__init__(operands=[addr, ncols, None], properties=props)

    def mnemonic(self) -> str:
        space = "" if self.space is None else f".{self.space.data.value}"
        return f"tcgen05.alloc.cta_group::{self.cta_group.as_int()}.sync.aligned{space}.b32"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data), name(self.ncols)]

    def verify_(self) -> None:
        if self.space is not None and self.space.data is not StateSpace.SHARED_CTA:
            raise reject(self, f"state space .{self.space.data.value}", "it takes .shared::cta or none", self.RULE)
        check_register(self, "ncols", self.ncols, "b32", self.RULE)
        if (ncols := immediate(self.ncols)) is not None and (ncols not in range(32, 513) or ncols & (ncols - 1)):
            raise reject(self, f"ncols {ncols}", "it must be a power of two in [32, 512]", self.RULE)


@irdl_op_definition
class Tcgen05DeallocOp(Instruction):
    """`tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, ncols`: an immediate
    `ncols` is a positive multiple of 32."""

    name = "ptx.tcgen05_dealloc"
    traits = traits_def(Synchronizes())
    cta_group = prop_def(nvvm.CTAGroupKindAttr)
    taddr = operand_def(Reg)
    ncols = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{TCGEN05_RULE}: tcgen05.dealloc"

    def __init__(self, cta_group: int, taddr: SSAValue, ncols: SSAValue):
        super().__init__(
            operands=[taddr, ncols, None], properties={"cta_group": nvvm.CTAGroupKindAttr.from_int(cta_group)}
        )

    def mnemonic(self) -> str:
        return f"tcgen05.dealloc.cta_group::{self.cta_group.as_int()}.sync.aligned.b32"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.taddr), name(self.ncols)]

    def verify_(self) -> None:
        _check_taddr(self, self.taddr, self.RULE)
        check_register(self, "ncols", self.ncols, "b32", self.RULE)
        if (ncols := immediate(self.ncols)) is not None and (ncols <= 0 or ncols % 32):
            raise reject(self, f"ncols {ncols}", "it must be a positive multiple of 32", self.RULE)


@irdl_op_definition
class Tcgen05RelinquishOp(Instruction):
    """`tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned`."""

    name = "ptx.tcgen05_relinquish_alloc_permit"
    traits = traits_def(Synchronizes())
    cta_group = prop_def(nvvm.CTAGroupKindAttr)

    def __init__(self, cta_group: int):
        super().__init__(operands=[None], properties={"cta_group": nvvm.CTAGroupKindAttr.from_int(cta_group)})

    def mnemonic(self) -> str:
        return f"tcgen05.relinquish_alloc_permit.cta_group::{self.cta_group.as_int()}.sync.aligned"

    def ptx_operands(self, name: Namer) -> list[str]:
        return []


@irdl_op_definition
class Tcgen05FenceOp(Instruction):
    """`tcgen05.fence::{before,after}_thread_sync`."""

    name = "ptx.tcgen05_fence"
    traits = traits_def(WarpLocal())
    kind = prop_def(nvvm.Tcgen05FenceKindAttr)

    def __init__(self, kind: nvvm.Tcgen05FenceKind):
        super().__init__(operands=[None], properties={"kind": nvvm.Tcgen05FenceKindAttr(kind)})

    def mnemonic(self) -> str:
        return f"tcgen05.fence::{self.kind.data.value}_thread_sync"

    def ptx_operands(self, name: Namer) -> list[str]:
        return []


@irdl_op_definition
class Tcgen05WaitOp(Instruction):
    """`tcgen05.wait::{ld,st}.sync.aligned`."""

    name = "ptx.tcgen05_wait"
    traits = traits_def(SyncPoint())
    kind = prop_def(nvvm.Tcgen05WaitKindAttr)

    def __init__(self, kind: nvvm.Tcgen05WaitKind):
        super().__init__(operands=[None], properties={"kind": nvvm.Tcgen05WaitKindAttr(kind)})

    def mnemonic(self) -> str:
        which = "ld" if self.kind.data is nvvm.Tcgen05WaitKind.LOAD else "st"
        return f"tcgen05.wait::{which}.sync.aligned"

    def ptx_operands(self, name: Namer) -> list[str]:
        return []


@irdl_op_definition
class Tcgen05CommitOp(Instruction):
    """`tcgen05.commit.cta_group::N.mbarrier::arrive::one.shared::cluster[.multicast::cluster].b64
    [mbar][, mask]` — the mask must be a .b16 register (ptxas rejects a .b32 register or
    an immediate)."""

    name = "ptx.tcgen05_commit"
    traits = traits_def(SyncPoint())
    cta_group = prop_def(nvvm.CTAGroupKindAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    mask = opt_operand_def(Reg)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{TCGEN05_RULE}: tcgen05.commit"

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
        return [address_text(name, self.addr, self.offset.data), *mask]

    def verify_(self) -> None:
        check_only_register(self, "multicast mask", self.mask, "b16", self.RULE)


class _Tcgen05LdStOp(Instruction, ABC):
    """tcgen05.ld / tcgen05.st: the shape is the nvvm dialect's, and `.x<num>` is derived
    from the register count through the nvvm shape table (m(shape) registers per `.x1`)."""

    shape = prop_def(nvvm.Tcgen05LdStShapeAttr)

    @abstractmethod
    def registers(self) -> Sequence[SSAValue]: ...

    @abstractmethod
    def address_and_split(self) -> tuple[SSAValue, SSAValue | None]: ...

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
        rule = f"{TCGEN05_RULE}: tcgen05.ld / tcgen05.st"
        taddr, split = self.address_and_split()
        _check_taddr(self, taddr, rule)
        # The .16x32bx2 shape (and only it) takes the immediate half-split column offset.
        halves = shape is nvvm.Tcgen05LdStShape.SHAPE_16X32BX2
        if halves and split is None:
            raise reject(self, f".{shape.ptx_name} without its offset", "it takes the immediate half-split offset",
                         rule)  # fmt: skip
        if not halves and split is not None:
            raise reject(self, f"an offset on .{shape.ptx_name}", "only .16x32bx2 takes one", rule)
        for value in self.registers():
            check_only_register(self, "data register", value, "b32", rule)


@irdl_op_definition
class Tcgen05LdOp(_Tcgen05LdStOp):
    """`tcgen05.ld.sync.aligned.<shape>.x<num>[.pack::16b].b32 {d..}, [taddr][, imm]`."""

    name = "ptx.tcgen05_ld"
    traits = traits_def(SyncPoint())
    pack = opt_prop_def(UnitAttr)
    offset_written = opt_prop_def(UnitAttr)
    """The address spelled `[taddr+0]` (as Triton writes it)."""
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

    def address_and_split(self) -> tuple[SSAValue, SSAValue | None]:
        return self.taddr, self.split

    def mnemonic(self) -> str:
        pack = ".pack::16b" if self.pack else ""
        return f"tcgen05.ld.sync.aligned.{self.qualifiers()}{pack}.b32"

    def ptx_operands(self, name: Namer) -> list[str]:
        split = [] if self.split is None else [name(self.split)]
        return [vector_text(name, self.res), address_text(name, self.taddr, 0, self.offset_written is not None), *split]


@irdl_op_definition
class Tcgen05StOp(_Tcgen05LdStOp):
    """`tcgen05.st.sync.aligned.<shape>.x<num>[.unpack::16b].b32 [taddr][, imm], {a..}`."""

    name = "ptx.tcgen05_st"
    traits = traits_def(SyncPoint())
    unpack = opt_prop_def(UnitAttr)
    offset_written = opt_prop_def(UnitAttr)
    """The address spelled `[taddr+0]` (as Triton writes it)."""
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

    def address_and_split(self) -> tuple[SSAValue, SSAValue | None]:
        return self.taddr, self.split

    def mnemonic(self) -> str:
        unpack = ".unpack::16b" if self.unpack else ""
        return f"tcgen05.st.sync.aligned.{self.qualifiers()}{unpack}.b32"

    def ptx_operands(self, name: Namer) -> list[str]:
        split = [] if self.split is None else [name(self.split)]
        return [
            address_text(name, self.taddr, 0, self.offset_written is not None),
            *split,
            vector_text(name, self.values),
        ]


@dataclass(frozen=True)
class Tcgen05MmaForm:
    """The qualifiers of a `tcgen05.mma` and where its A operand lives:
    `.cta_group::N.kind::K[.collector::a::C][.ashift]`, A in tensor memory (`[a]`) or
    an shared-memory descriptor (`a`). Without a collector qualifier (None) the PTX ISA's
    default, `.collector::a::discard`, applies; the op keeps whether it was written."""

    cta_group: int
    kind: nvvm.Tcgen05MMAKind
    collector: nvvm.Tcgen05MMACollectorOp | None = nvvm.Tcgen05MMACollectorOp.DISCARD
    a_tmem: bool = False
    ashift: bool = False


_SCALED_KINDS = frozenset({nvvm.Tcgen05MMAKind.F16, nvvm.Tcgen05MMAKind.TF32, nvvm.Tcgen05MMAKind.I8})


@irdl_op_definition
class Tcgen05MmaOp(Instruction):
    """`tcgen05.mma.cta_group::N.kind::K[.collector::a::C][.ashift] [d], a|[a], b, idesc,
    [{mask..},] enable_input_d[, scale]`."""

    name = "ptx.tcgen05_mma"
    traits = traits_def(SyncPoint())
    cta_group = prop_def(nvvm.CTAGroupKindAttr)
    kind = prop_def(nvvm.Tcgen05MMAKindAttr)
    collector = opt_prop_def(nvvm.Tcgen05MMACollectorOpAttr)
    """Absent: not written, the default `.collector::a::discard` (Triton omits it)."""
    ashift = opt_prop_def(UnitAttr)
    a_tmem = opt_prop_def(UnitAttr)
    offset_written = opt_prop_def(UnitAttr)
    """D's address spelled `[d+0]` (as Triton writes it)."""
    d = operand_def(Reg)
    a = operand_def(Reg)
    b = operand_def(Reg)
    idesc = operand_def(RegOrImm)
    disable_output_lane = var_operand_def(RegOrImm)
    enable_input_d = operand_def(RegOrImm)
    scale = opt_operand_def(Imm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{TCGEN05_RULE}: tcgen05.mma"

    def __init__(
        self,
        form: Tcgen05MmaForm,
        d: SSAValue,
        a: SSAValue,
        b: SSAValue,
        idesc: SSAValue,
        enable_input_d: SSAValue,
        *,
        mask: Sequence[SSAValue] = (),
        scale: SSAValue | None = None,
    ):
        props: dict[str, Attribute] = {
            "cta_group": nvvm.CTAGroupKindAttr.from_int(form.cta_group),
            "kind": nvvm.Tcgen05MMAKindAttr(form.kind),
        }
        if form.collector is not None:
            props["collector"] = nvvm.Tcgen05MMACollectorOpAttr(form.collector)
        if form.a_tmem:
            props["a_tmem"] = UnitAttr()
        if form.ashift:
            props["ashift"] = UnitAttr()
        super().__init__(operands=[d, a, b, idesc, mask, enable_input_d, scale, None], properties=props)

    def form(self) -> Tcgen05MmaForm:
        return Tcgen05MmaForm(
            self.cta_group.as_int(),
            self.kind.data,
            None if self.collector is None else self.collector.data,
            self.a_tmem is not None,
            self.ashift is not None,
        )

    def mnemonic(self) -> str:
        # llc-22 spells `.ashift` after the collector, except in the
        # disable-output-lane form, where it comes first (both are valid PTX).
        ashift = ".ashift" if self.ashift else ""
        collector = "" if self.collector is None else f".collector::a::{self.collector.data.value}"
        qualifiers = f"{ashift}{collector}" if self.disable_output_lane else f"{collector}{ashift}"
        return f"tcgen05.mma.cta_group::{self.cta_group.as_int()}.kind::{self.kind.data.value}{qualifiers}"

    def ptx_operands(self, name: Namer) -> list[str]:
        a = f"[{name(self.a)}]" if self.a_tmem else name(self.a)
        mask = [vector_text(name, self.disable_output_lane)] if self.disable_output_lane else []
        scale = [] if self.scale is None else [name(self.scale)]
        d = address_text(name, self.d, 0, self.offset_written is not None)
        return [d, a, name(self.b), name(self.idesc), *mask, name(self.enable_input_d), *scale]

    def verify_(self) -> None:
        rule = self.RULE
        if self.ashift and not self.a_tmem:
            raise reject(self, ".ashift with A in shared memory", ".ashift needs A in tensor memory ([a])", rule)
        lanes = 4 * self.cta_group.as_int()
        if self.disable_output_lane and len(self.disable_output_lane) != lanes:
            raise reject(self, f"a disable-output-lane vector of {len(self.disable_output_lane)}",
                         f".cta_group::{self.cta_group.as_int()} takes {lanes} .b32 registers", rule)  # fmt: skip
        if self.scale is not None:
            kind = self.kind.data
            if kind not in _SCALED_KINDS:
                allowed = spell([k for k in nvvm.Tcgen05MMAKind if k in _SCALED_KINDS])
                raise reject(self, f"scale-input-d with .kind::{kind.value}", f"it takes .kind{allowed}"
                             " (the ISA lists f16/tf32; ptxas also accepts i8)", rule)  # fmt: skip
            if (value := immediate(self.scale)) is not None and not 0 <= value <= 15:
                raise reject(self, f"scale-input-d {value}", "it must be in [0, 15]", rule)
        _check_taddr(self, self.d, rule)
        if self.a_tmem:
            _check_taddr(self, self.a, rule)
        else:
            check_only_register(self, "A descriptor", self.a, "b64", rule)
        check_only_register(self, "B descriptor", self.b, "b64", rule)
        check_register(self, "instruction descriptor", self.idesc, "b32", rule)
        for value in self.disable_output_lane:
            check_only_register(self, "disable-output-lane", value, "b32", rule)
        if isinstance(self.enable_input_d.type, RegisterType):
            check_only_register(self, "enable-input-d", self.enable_input_d, "pred", rule)


def _cp_shape_text(shape: nvvm.Tcgen05CpShape) -> str:
    return shape.value.removeprefix("shape_")


def _multicast_text(multicast: nvvm.Tcgen05CpMulticast) -> str:
    """`warpx2::02_13`, `warpx4`, or "" for none."""
    value = multicast.value
    if value.startswith("warpx2"):
        return f"warpx2::{value.removeprefix('warpx2_')}"
    return "" if multicast is nvvm.Tcgen05CpMulticast.NONE else value


_WARPX2 = frozenset({nvvm.Tcgen05CpMulticast.WARPX2_01_23, nvvm.Tcgen05CpMulticast.WARPX2_02_13})
_CP_MULTICAST = {
    nvvm.Tcgen05CpShape.SHAPE_128X256B: frozenset({nvvm.Tcgen05CpMulticast.NONE}),
    nvvm.Tcgen05CpShape.SHAPE_4X256B: frozenset({nvvm.Tcgen05CpMulticast.NONE}),
    nvvm.Tcgen05CpShape.SHAPE_128X128B: frozenset({nvvm.Tcgen05CpMulticast.NONE}),
    nvvm.Tcgen05CpShape.SHAPE_64X128B: _WARPX2,
    nvvm.Tcgen05CpShape.SHAPE_32X128B: frozenset({nvvm.Tcgen05CpMulticast.WARPX4}),
}
"""tcgen05.cp: which warp multicast each shape takes (`.64x128b` a `.warpx2`,
`.32x128b` `.warpx4`, the others none)."""


@irdl_op_definition
class Tcgen05CpOp(Instruction):
    """`tcgen05.cp.cta_group::N.<shape>[.<multicast>][.b8x16.<src format>] [taddr], s_desc`:
    the qualifiers are the nvvm dialect's attributes."""

    name = "ptx.tcgen05_cp"
    traits = traits_def(SyncPoint())
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
        qualifiers = f".cta_group::{self.cta_group.as_int()}.{_cp_shape_text(self.shape.data)}"
        if multicast := _multicast_text(self.multicast.data):
            qualifiers += f".{multicast}"
        if self.src_format is not None:
            qualifiers += f".b8x16.{self.src_format.data.value}"
        return f"tcgen05.cp{qualifiers}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [f"[{name(self.taddr)}]", name(self.desc)]

    def verify_(self) -> None:
        rule = f"{TCGEN05_RULE}: tcgen05.cp"
        shape, multicast = self.shape.data, self.multicast.data
        allowed = _CP_MULTICAST[shape]
        if multicast not in allowed:
            order = ", ".join(_multicast_text(m) or "none" for m in nvvm.Tcgen05CpMulticast if m in allowed)
            raise reject(self, f"multicast {_multicast_text(multicast) or 'none'} with .{_cp_shape_text(shape)}",
                         f"that shape takes {order}", rule)  # fmt: skip
        _check_taddr(self, self.taddr, rule)
        check_only_register(self, "shared memory descriptor", self.desc, "b64", rule)


@irdl_op_definition
class Tcgen05ShiftOp(Instruction):
    """`tcgen05.shift.cta_group::N.down [taddr]`."""

    name = "ptx.tcgen05_shift"
    traits = traits_def(WarpLocal())
    cta_group = prop_def(nvvm.CTAGroupKindAttr)
    taddr = operand_def(Reg)

    def __init__(self, cta_group: int, taddr: SSAValue):
        super().__init__(operands=[taddr, None], properties={"cta_group": nvvm.CTAGroupKindAttr.from_int(cta_group)})

    def mnemonic(self) -> str:
        return f"tcgen05.shift.cta_group::{self.cta_group.as_int()}.down"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [f"[{name(self.taddr)}]"]

    def verify_(self) -> None:
        _check_taddr(self, self.taddr, f"{TCGEN05_RULE}: tcgen05.shift")
