"""Loads, stores, address conversion and cluster address mapping."""

from __future__ import annotations

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
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects.ptx.base import (
    Address,
    Instruction,
    Namer,
    Reg,
    RegisterType,
    RegOrImm,
    WritesOnlyRegisters,
    address_text,
    vector_text,
)


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
        dest = vector_text(name, self.res) if len(self.res) > 1 else name(self.res[0])
        return [dest, address_text(name, self.addr, self.offset.data)]

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
        src = vector_text(name, self.values) if len(self.values) > 1 else name(self.values[0])
        return [address_text(name, self.addr, self.offset.data), src]

    def verify_(self) -> None:
        if len(self.values) not in (1, 2, 4):
            raise VerifyException(f"ptx.st: vector width must be 1, 2 or 4, got {len(self.values)}")


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
