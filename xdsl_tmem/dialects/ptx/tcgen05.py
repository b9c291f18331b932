"""The tcgen05 (tensor memory and fifth-generation tensor core) instructions."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    IntAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.dialects.ptx.base import (
    Address,
    FixedInstruction,
    Imm,
    Instruction,
    Namer,
    Reg,
    RegisterType,
    RegOrImm,
    address_text,
    vector_text,
)

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
        return [address_text(name, self.addr, self.offset.data), name(self.ncols)]


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
class Tcgen05TextOp(FixedInstruction):
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
        return [address_text(name, self.addr, self.offset.data), *mask]

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
        return [vector_text(name, self.res), f"[{name(self.taddr)}]", *split]


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
        return [f"[{name(self.taddr)}]", *split, vector_text(name, self.values)]


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
        mask = [vector_text(name, self.disable_output_lane)] if self.disable_output_lane else []
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
