"""Loads, stores, address conversion and cluster address mapping."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    IntAttr,
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
    SymbolOp,
    WritesOnlyRegisters,
    address_text,
    check_zero_written,
    vector_text,
)
from xdsl_tmem.dialects.ptx.qualifiers import (
    INTEGER_TYPES,
    SHARED_SPACES,
    CacheLevel,
    CacheLevelAttr,
    PtxType,
    PtxTypeAttr,
    StateSpace,
    StateSpaceAttr,
    check_operand,
    check_register,
    check_type,
    operand_text,
    register_class,
    reject,
    spell,
    types,
)

MEMORY_RULE = "PTX ISA 9.0, Data Movement and Conversion Instructions"
LD_ST_TYPES = types("b8", "b16", "b32", "b64", "u8", "s8", "f32", "f64") | INTEGER_TYPES
LD_SPACES = frozenset(StateSpace)
ST_SPACES = SHARED_SPACES | {StateSpace.GLOBAL, StateSpace.LOCAL, StateSpace.PARAM, StateSpace.PARAM_FUNC}
"""`st` cannot write `.const`; `.param` only where `_check_param_store` allows it."""


def _writable_params(op: Instruction) -> set[str] | None:
    """The `.param` names `op` may store to: the return values and parameters of its
    enclosing `.func`, and `.param` variables declared in an enclosing body (a call's
    arguments); None outside any function."""
    from xdsl_tmem.dialects.ptx.structure import FunctionOp, VariableOp

    names: set[str] = set()
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, FunctionOp):
        parent = parent.parent_op()
    if parent is None:
        return None
    if parent.kind.data == "func":
        for decls in (parent.returns, parent.params):
            names.update(d.sym_name.data for d in (decls.data if decls is not None else ()))
    for variable in parent.walk():
        if isinstance(variable, VariableOp) and variable.decl.space.data == "param":
            names.add(variable.decl.sym_name.data)
    return names


def _check_param_store(op: Instruction, space: StateSpaceAttr | None, addr: SSAValue, rule: str) -> None:
    """`st.param` writes a `.func`'s parameters and return values, or a `.param`
    variable of a body (a call's arguments, PTX ISA 9.0, "Parameter State Space"); a
    kernel's parameters are read-only (ptxas: "Illegal to write to function input
    parameter"). Only a named `.param` that is one of these is accepted."""
    if space is None or space.data is not StateSpace.PARAM:
        return
    symbol = addr.owner.symbol.data if isinstance(addr.owner, SymbolOp) else None
    writable = _writable_params(op) or set()
    if symbol is None or symbol not in writable:
        what = f"state space .param at {symbol}" if symbol else f"state space .param at {operand_text(addr)}"
        raise reject(op, what, "st.param writes a .func's own parameters and return values or a .param "
                     "variable of the body (call arguments); a kernel's parameters are read-only", rule)  # fmt: skip


def _space_suffix(space: StateSpaceAttr | None) -> str:
    return "" if space is None else f".{space.data.value}"


def _check_space(op: Instruction, space: StateSpaceAttr | None, allowed: frozenset[StateSpace], rule: str) -> None:
    if space is not None and space.data not in allowed:
        order = [s for s in StateSpace if s in allowed]
        raise reject(op, f"state space .{space.data.value}", f"it takes {spell(order)} or none (generic)", rule)


def _check_address(op: Instruction, space: StateSpaceAttr | None, addr: SSAValue, rule: str) -> None:
    """Outside the shared windows an address register is 64-bit (`.address_size 64`;
    ptxas: "32-bit address ... conflicting with .address_size 64")."""
    shared = space is not None and space.data in SHARED_SPACES
    kind = register_class(addr.type.kind.data) if isinstance(addr.type, RegisterType) else None
    if kind is not None and kind != "b64" and not (shared and kind == "b32"):
        need = ".b32 or .b64" if shared else ".b64"
        raise reject(
            op, f"address {operand_text(addr)}", f"a {_space_suffix(space) or 'generic'} address is {need}", rule
        )


def _check_vector(op: Instruction, space: StateSpaceAttr | None, type: PtxType, lanes: int, rule: str) -> None:
    """`.v2`/`.v4` up to 128 bits; 256-bit accesses (`.v4` of 64-bit, `.v8` of 32-bit
    elements) only in `.global` (ptxas: "global state space expected for feature '256 bit
    wide load/store'"). They also need PTX ISA 8.8, which the module (not the
    instruction) declares: unchecked here."""
    if lanes not in (1, 2, 4, 8):
        raise reject(op, f"a vector of {lanes}", "vectors are .v2/.v4 (.v8 of 32-bit elements)", rule)
    bits = lanes * type.width
    wide_ok = space is not None and space.data is StateSpace.GLOBAL and (lanes, type.width) in ((4, 64), (8, 32))
    if bits > 128 and not wide_ok:
        raise reject(op, f".v{lanes}.{type.value} ({bits} bits)", "256-bit accesses are .global .v4 64-bit/.v8 32-bit "
                     "only, others at most 128 bits", rule)  # fmt: skip


@irdl_op_definition
class LdOp(Instruction):
    """`ld[.space][.vN].type d|{d..}, [addr+offset]`; destinations may be wider than the
    type (an `.u8` into a `.b16` register)."""

    name = "ptx.ld"
    space = opt_prop_def(StateSpaceAttr)
    nc = opt_prop_def(UnitAttr)
    """`ld.global.nc`: through the non-coherent (read-only) cache; `.global` only."""
    type = prop_def(PtxTypeAttr)
    offset = prop_def(IntAttr)
    offset_written = opt_prop_def(UnitAttr)
    """A zero offset spelled `+0` (as Triton writes it)."""
    braced = opt_prop_def(UnitAttr)
    """One destination written as a vector `{ %r }` (as Triton writes it)."""
    res = var_result_def(Reg)
    addr = operand_def(Address)

    RULE: ClassVar[str] = f"{MEMORY_RULE}: ld"

    def __init__(
        self,
        space: StateSpace | None,
        type: PtxType,
        res: Sequence[RegisterType],
        addr: SSAValue,
        offset: int = 0,
        *,
        nc: bool = False,
    ):
        props: dict[str, Attribute] = {"type": PtxTypeAttr(type), "offset": IntAttr(offset)}
        if space is not None:
            props["space"] = StateSpaceAttr(space)
        if nc:
            props["nc"] = UnitAttr()
        super().__init__(operands=[addr, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        vec = f".v{len(self.res)}" if len(self.res) > 1 else ""
        nc = ".nc" if self.nc else ""
        return f"ld{_space_suffix(self.space)}{nc}{vec}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        dest = vector_text(name, self.res) if len(self.res) > 1 or self.braced else name(self.res[0])
        return [dest, address_text(name, self.addr, self.offset.data, self.offset_written is not None)]

    def verify_(self) -> None:
        t = self.type.data
        check_type(self, t, LD_ST_TYPES, "ld", self.RULE)
        _check_space(self, self.space, LD_SPACES, self.RULE)
        check_zero_written(self, self.offset_written, self.offset.data)
        if self.braced and len(self.res) != 1:
            raise VerifyException(f"{self.name}: braced marks a one-element vector; got {len(self.res)} elements")
        if self.nc and (self.space is None or self.space.data is not StateSpace.GLOBAL):
            raise reject(self, f".nc on {_space_suffix(self.space) or 'a generic address'}",
                         "ld.global.nc reads .global only", self.RULE)  # fmt: skip
        _check_vector(self, self.space, t, len(self.res), self.RULE)
        _check_address(self, self.space, self.addr, self.RULE)
        for value in self.res:
            check_operand(self, "destination", value, t, self.RULE, wider=True)


@irdl_op_definition
class StOp(Instruction):
    """`st[.space][.vN].type [addr+offset], a|{a..}`; sources may be wider than the type."""

    name = "ptx.st"
    space = opt_prop_def(StateSpaceAttr)
    type = prop_def(PtxTypeAttr)
    offset = prop_def(IntAttr)
    offset_written = opt_prop_def(UnitAttr)
    """A zero offset spelled `+0` (as Triton writes it)."""
    braced = opt_prop_def(UnitAttr)
    """One source written as a vector `{ %r }`."""
    addr = operand_def(Address)
    values = var_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{MEMORY_RULE}: st"

    def __init__(
        self, space: StateSpace | None, type: PtxType, addr: SSAValue, values: Sequence[SSAValue], offset: int = 0
    ):
        props: dict[str, Attribute] = {"type": PtxTypeAttr(type), "offset": IntAttr(offset)}
        if space is not None:
            props["space"] = StateSpaceAttr(space)
        super().__init__(operands=[addr, values, None], properties=props)

    def mnemonic(self) -> str:
        vec = f".v{len(self.values)}" if len(self.values) > 1 else ""
        return f"st{_space_suffix(self.space)}{vec}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        src = vector_text(name, self.values) if len(self.values) > 1 or self.braced else name(self.values[0])
        return [address_text(name, self.addr, self.offset.data, self.offset_written is not None), src]

    def verify_(self) -> None:
        t = self.type.data
        check_type(self, t, LD_ST_TYPES, "st", self.RULE)
        _check_space(self, self.space, ST_SPACES, self.RULE)
        _check_param_store(self, self.space, self.addr, self.RULE)
        check_zero_written(self, self.offset_written, self.offset.data)
        if self.braced and len(self.values) != 1:
            raise VerifyException(f"{self.name}: braced marks a one-element vector; got {len(self.values)} elements")
        _check_vector(self, self.space, t, len(self.values), self.RULE)
        _check_address(self, self.space, self.addr, self.RULE)
        for value in self.values:
            check_operand(self, "source", value, t, self.RULE, wider=True)


CVTA_SPACES = SHARED_SPACES | {
    StateSpace.GLOBAL,
    StateSpace.LOCAL,
    StateSpace.CONST,
    StateSpace.PARAM,
    StateSpace.PARAM_ENTRY,
}


@irdl_op_definition
class CvtaOp(Instruction):
    """`cvta.to.space.u64 d, a` (a generic address into a `space` one), or with
    `to_generic` `cvta.space.u64 d, a` (the other way). `.u32` is for `.address_size 32`
    modules, which we never emit, so only `.u64` verifies."""

    traits = traits_def(WritesOnlyRegisters())

    name = "ptx.cvta"
    space = prop_def(StateSpaceAttr)
    type = prop_def(PtxTypeAttr)
    to_generic = opt_prop_def(UnitAttr)
    res = result_def(Reg)
    src = operand_def(Reg)

    RULE: ClassVar[str] = f"{MEMORY_RULE}: cvta"

    def __init__(
        self,
        space: StateSpace,
        res: RegisterType,
        src: SSAValue,
        to_generic: bool = False,
        type: PtxType = PtxType.U64,
    ):
        props: dict[str, Attribute] = {"space": StateSpaceAttr(space), "type": PtxTypeAttr(type)}
        if to_generic:
            props["to_generic"] = UnitAttr()
        super().__init__(operands=[src, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        direction = "" if self.to_generic else ".to"
        return f"cvta{direction}.{self.space.data.value}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.src)]

    def verify_(self) -> None:
        check_type(self, self.type.data, types("u64"), "cvta (with .address_size 64)", self.RULE)
        _check_space(self, self.space, CVTA_SPACES, self.RULE)
        check_operand(self, "destination", self.res, PtxType.U64, self.RULE)
        check_operand(self, "source", self.src, PtxType.U64, self.RULE)


@irdl_op_definition
class MapaOp(Instruction):
    """`mapa.shared::cluster.u32 d, a, rank` (shared::cluster window addresses) or
    `mapa.u64 d, a, rank` (generic addresses): `d` and `a` of the type, `rank` a `.b32`
    register or immediate. (ptxas also accepts `.s32/.s64`; the ISA lists `.u32/.u64`.)"""

    name = "ptx.mapa"
    space = opt_prop_def(StateSpaceAttr)
    type = prop_def(PtxTypeAttr)
    res = result_def(Reg)
    addr = operand_def(Address)
    rank = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{MEMORY_RULE}: mapa"

    def __init__(self, space: StateSpace | None, type: PtxType, res: RegisterType, addr: SSAValue, rank: SSAValue):
        props: dict[str, Attribute] = {"type": PtxTypeAttr(type)}
        if space is not None:
            props["space"] = StateSpaceAttr(space)
        super().__init__(operands=[addr, rank, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        return f"mapa{_space_suffix(self.space)}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.addr), name(self.rank)]

    def verify_(self) -> None:
        t = self.type.data
        check_type(self, t, types("u32", "u64"), "mapa", self.RULE)
        _check_space(self, self.space, frozenset({StateSpace.SHARED_CLUSTER}), self.RULE)
        check_operand(self, "destination", self.res, t, self.RULE)
        check_operand(self, "address", self.addr, t, self.RULE)
        check_register(self, "rank", self.rank, "b32", self.RULE)


PREFETCH_SPACES = frozenset({StateSpace.GLOBAL, StateSpace.LOCAL})
TENSORMAP_SPACES = frozenset({StateSpace.CONST, StateSpace.PARAM})


@irdl_op_definition
class PrefetchOp(Instruction):
    """`prefetch[.space].level [a]` (`.global`/`.local` or generic, `.L1`/`.L2`), or
    `prefetch[.space].tensormap [a]` (a tensor map in `.const`/`.param` or generic) —
    with `tensormap` the level is absent."""

    name = "ptx.prefetch"
    space = opt_prop_def(StateSpaceAttr)
    level = opt_prop_def(CacheLevelAttr)
    tensormap = opt_prop_def(UnitAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)

    RULE: ClassVar[str] = f"{MEMORY_RULE}: prefetch"

    def __init__(
        self,
        space: StateSpace | None,
        addr: SSAValue,
        *,
        level: CacheLevel | None = None,
        tensormap: bool = False,
        offset: int = 0,
    ):
        props: dict[str, Attribute] = {"offset": IntAttr(offset)}
        if space is not None:
            props["space"] = StateSpaceAttr(space)
        if level is not None:
            props["level"] = CacheLevelAttr(level)
        if tensormap:
            props["tensormap"] = UnitAttr()
        super().__init__(operands=[addr, None], properties=props)

    def mnemonic(self) -> str:
        what = "tensormap" if self.tensormap else "" if self.level is None else self.level.data.value
        return f"prefetch{_space_suffix(self.space)}.{what}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data)]

    def verify_(self) -> None:
        if self.tensormap and self.level is not None:
            raise reject(self, f".tensormap with .{self.level.data.value}", "a tensor map prefetch takes no level",
                         self.RULE)  # fmt: skip
        if not self.tensormap and self.level is None:
            raise reject(self, "prefetch without a level", "it takes .L1/.L2 or .tensormap", self.RULE)
        _check_space(self, self.space, TENSORMAP_SPACES if self.tensormap else PREFETCH_SPACES, self.RULE)
        if not self.tensormap:  # ptxas takes a 32-bit tensor-map address; other addresses are 64-bit
            _check_address(self, self.space, self.addr, self.RULE)
