"""Loads, stores, address conversion and cluster address mapping."""

from __future__ import annotations

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
    AttrSizedResultSegments,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    opt_result_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.dialects.op_definition import irdl_op_definition
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
    SHARED_CTA_SPACES,
    SHARED_SPACES,
    AtomicOperation,
    AtomicOperationAttr,
    AtomicSpace,
    AtomicSpaceAttr,
    AtomicType,
    AtomicTypeAttr,
    BulkTensorDirection,
    BulkTensorDirectionAttr,
    CacheLevel,
    CacheLevelAttr,
    CacheOperator,
    CacheOperatorAttr,
    MemSemantic,
    MemSemanticAttr,
    PtxType,
    PtxTypeAttr,
    StateSpace,
    StateSpaceAttr,
    VectorLanes,
    VectorLanesAttr,
    check_only_register,
    check_operand,
    check_register,
    check_space,
    check_type,
    immediate,
    operand_text,
    register_class,
    reject,
    space_suffix,
    spell,
    types,
)
from xdsl_tmem.dialects.traits import Atomic, Synchronizes, SyncPoint, WarpLocal

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


def _check_address(op: Instruction, space: StateSpaceAttr | None, addr: SSAValue, rule: str) -> None:
    """Outside the shared windows an address register is 64-bit (`.address_size 64`;
    ptxas: "32-bit address ... conflicting with .address_size 64")."""
    shared = space is not None and space.data in SHARED_SPACES
    kind = register_class(addr.type.kind.data) if isinstance(addr.type, RegisterType) else None
    if kind is not None and kind != "b64" and not (shared and kind == "b32"):
        need = ".b32 or .b64" if shared else ".b64"
        raise reject(
            op, f"address {operand_text(addr)}", f"a {space_suffix(space) or 'generic'} address is {need}", rule
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
    traits = traits_def(SyncPoint())
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
        return f"ld{space_suffix(self.space)}{nc}{vec}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        dest = vector_text(name, self.res) if len(self.res) > 1 or self.braced else name(self.res[0])
        return [dest, address_text(name, self.addr, self.offset.data, self.offset_written is not None)]

    def verify_(self) -> None:
        t = self.type.data
        check_type(self, t, LD_ST_TYPES, "ld", self.RULE)
        check_space(self, self.space, LD_SPACES, self.RULE)
        check_zero_written(self, self.offset_written, self.offset.data)
        if self.braced and len(self.res) != 1:
            raise VerifyException(f"{self.name}: braced marks a one-element vector; got {len(self.res)} elements")
        if self.nc and (self.space is None or self.space.data is not StateSpace.GLOBAL):
            raise reject(self, f".nc on {space_suffix(self.space) or 'a generic address'}",
                         "ld.global.nc reads .global only", self.RULE)  # fmt: skip
        _check_vector(self, self.space, t, len(self.res), self.RULE)
        _check_address(self, self.space, self.addr, self.RULE)
        for value in self.res:
            check_operand(self, "destination", value, t, self.RULE, wider=True)


@irdl_op_definition
class LdSinkOp(Instruction):
    """`ld[.space].v2|.v4.type {d0, _, d2, d3}, [addr+offset]`: a vector load some of
    whose elements are the sink `_` (PTX ISA 9.0, ld: "the sink symbol '_' may be used
    in vector expressions"); the access is the whole vector, an absent destination is
    not written. A vector without a sink is `ptx.ld`."""

    name = "ptx.ld_sink"
    traits = traits_def(SyncPoint())
    space = opt_prop_def(StateSpaceAttr)
    type = prop_def(PtxTypeAttr)
    lanes = prop_def(VectorLanesAttr)
    offset = prop_def(IntAttr)
    d0 = opt_result_def(Reg)
    d1 = opt_result_def(Reg)
    d2 = opt_result_def(Reg)
    d3 = opt_result_def(Reg)
    addr = operand_def(Address)
    irdl_options = (AttrSizedResultSegments(as_property=True),)

    RULE: ClassVar[str] = f"{MEMORY_RULE}: ld"

    def __init__(
        self,
        space: StateSpace | None,
        type: PtxType,
        parts: Sequence[RegisterType | None],
        addr: SSAValue,
        offset: int = 0,
    ):
        lanes = VectorLanes.V2 if len(parts) == 2 else VectorLanes.V4
        props: dict[str, Attribute] = {
            "type": PtxTypeAttr(type), "lanes": VectorLanesAttr(lanes), "offset": IntAttr(offset),
        }  # fmt: skip
        if space is not None:
            props["space"] = StateSpaceAttr(space)
        padded = [*parts, None, None][:4] if len(parts) == 2 else list(parts)
        super().__init__(operands=[addr, None], result_types=padded, properties=props)

    def destinations(self) -> list[SSAValue | None]:
        """Per element, first first: its register, or None for a sink."""
        values: list[SSAValue | None] = [self.d0, self.d1, self.d2, self.d3]
        return values[: self.lanes.data.parts]

    def mnemonic(self) -> str:
        return f"ld{space_suffix(self.space)}.{self.lanes.data.value}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        if self.lanes.data is VectorLanes.V2 and (self.d2 is not None or self.d3 is not None):
            raise ValueError("a .v2 load has no third or fourth destination")
        dest = "{" + ", ".join("_" if d is None else name(d) for d in self.destinations()) + "}"
        return [dest, address_text(name, self.addr, self.offset.data)]

    def verify_(self) -> None:
        t = self.type.data
        check_type(self, t, LD_ST_TYPES, "ld", self.RULE)
        check_space(self, self.space, LD_SPACES, self.RULE)
        lanes = self.lanes.data.parts
        if lanes == 2 and (self.d2 is not None or self.d3 is not None):
            raise reject(self, "a third or fourth destination", "a .v2 load writes two elements", self.RULE)
        written = [d for d in self.destinations() if d is not None]
        if not written:
            raise reject(self, "only sinks", "at least one element is a register", self.RULE)
        if len(written) == lanes:
            raise VerifyException(f"{self.name}: no element is a sink; that is ptx.ld")
        _check_vector(self, self.space, t, lanes, self.RULE)
        _check_address(self, self.space, self.addr, self.RULE)
        for value in written:
            check_operand(self, "destination", value, t, self.RULE, wider=True)


@irdl_op_definition
class StOp(Instruction):
    """`st[.space][.vN].type [addr+offset], a|{a..}`; sources may be wider than the type."""

    name = "ptx.st"
    traits = traits_def(SyncPoint())
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
        return f"st{space_suffix(self.space)}{vec}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        src = vector_text(name, self.values) if len(self.values) > 1 or self.braced else name(self.values[0])
        return [address_text(name, self.addr, self.offset.data, self.offset_written is not None), src]

    def verify_(self) -> None:
        t = self.type.data
        check_type(self, t, LD_ST_TYPES, "st", self.RULE)
        check_space(self, self.space, ST_SPACES, self.RULE)
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
        check_space(self, self.space, CVTA_SPACES, self.RULE)
        check_operand(self, "destination", self.res, PtxType.U64, self.RULE)
        check_operand(self, "source", self.src, PtxType.U64, self.RULE)


@irdl_op_definition
class MapaOp(Instruction):
    """`mapa.shared::cluster.u32 d, a, rank` (shared::cluster window addresses) or
    `mapa.u64 d, a, rank` (generic addresses): `d` and `a` of the type, `rank` a `.b32`
    register or immediate. (ptxas also accepts `.s32/.s64`; the ISA lists `.u32/.u64`.)"""

    name = "ptx.mapa"
    traits = traits_def(WarpLocal())
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
        return f"mapa{space_suffix(self.space)}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), name(self.addr), name(self.rank)]

    def verify_(self) -> None:
        t = self.type.data
        check_type(self, t, types("u32", "u64"), "mapa", self.RULE)
        check_space(self, self.space, frozenset({StateSpace.SHARED_CLUSTER}), self.RULE)
        check_operand(self, "destination", self.res, t, self.RULE)
        check_operand(self, "address", self.addr, t, self.RULE)
        check_register(self, "rank", self.rank, "b32", self.RULE)


PREFETCH_SPACES = frozenset({StateSpace.GLOBAL, StateSpace.LOCAL})
TENSORMAP_SPACES = frozenset({StateSpace.CONST, StateSpace.PARAM})


@irdl_op_definition
class PrefetchOp(Instruction):
    """`prefetch[.space].level [a]` (`.global`/`.local` or generic, `.L1`/`.L2`), or
    `prefetch[.space].tensormap [a]` (a tensor map in `.const`/`.param` or generic) —
    with `tensormap` the level is absent. A cache hint: no state another warp observes
    changes, so it is warp-local."""

    traits = traits_def(WarpLocal())
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
        return f"prefetch{space_suffix(self.space)}.{what}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data)]

    def verify_(self) -> None:
        if self.tensormap and self.level is not None:
            raise reject(self, f".tensormap with .{self.level.data.value}", "a tensor map prefetch takes no level",
                         self.RULE)  # fmt: skip
        if not self.tensormap and self.level is None:
            raise reject(self, "prefetch without a level", "it takes .L1/.L2 or .tensormap", self.RULE)
        check_space(self, self.space, TENSORMAP_SPACES if self.tensormap else PREFETCH_SPACES, self.RULE)
        if not self.tensormap:  # ptxas takes a 32-bit tensor-map address; other addresses are 64-bit
            _check_address(self, self.space, self.addr, self.RULE)


# ---- asynchronous copies and ldmatrix (issue 14 executes them; here their forms) ------------------

ASYNC_RULE = "PTX ISA 9.0, Data Movement and Conversion Instructions"


@irdl_op_definition
class CpAsyncOp(Instruction):
    """`cp.async.{ca,cg}.shared[::cta].global [dst], [src], cp-size[, src-size]`: a 4-, 8- or
    16-byte copy from global to shared memory, completed by `cp.async.wait_group`; `.cg`
    copies 16 bytes only; bytes past `src-size` are zero-filled."""

    traits = traits_def(SyncPoint())
    name = "ptx.cp_async"
    cache = prop_def(CacheOperatorAttr)
    space = prop_def(StateSpaceAttr)
    dst_offset = prop_def(IntAttr)
    dst_offset_written = opt_prop_def(UnitAttr)
    src_offset = prop_def(IntAttr)
    src_offset_written = opt_prop_def(UnitAttr)
    dst = operand_def(Address)
    src = operand_def(Address)
    size = operand_def(RegOrImm)
    src_size = opt_operand_def(RegOrImm)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{ASYNC_RULE}: cp.async"

    def __init__(
        self,
        cache: CacheOperator,
        dst: SSAValue,
        src: SSAValue,
        size: SSAValue,
        src_size: SSAValue | None = None,
        *,
        space: StateSpace = StateSpace.SHARED,
        offsets: tuple[int, int] = (0, 0),
    ):
        props: dict[str, Attribute] = {
            "cache": CacheOperatorAttr(cache),
            "space": StateSpaceAttr(space),
            "dst_offset": IntAttr(offsets[0]),
            "src_offset": IntAttr(offsets[1]),
        }
        super().__init__(operands=[dst, src, size, src_size, None], properties=props)

    def mnemonic(self) -> str:
        return f"cp.async.{self.cache.data.value}.{self.space.data.value}.global"

    def ptx_operands(self, name: Namer) -> list[str]:
        dst = address_text(name, self.dst, self.dst_offset.data, self.dst_offset_written is not None)
        src = address_text(name, self.src, self.src_offset.data, self.src_offset_written is not None)
        return [dst, src, name(self.size)] + ([] if self.src_size is None else [name(self.src_size)])

    def verify_(self) -> None:
        check_zero_written(self, self.dst_offset_written, self.dst_offset.data)
        check_zero_written(self, self.src_offset_written, self.src_offset.data)
        check_space(self, self.space, SHARED_CTA_SPACES, self.RULE)
        _check_address(self, self.space, self.dst, self.RULE)
        size = immediate(self.size)
        allowed = (16,) if self.cache.data is CacheOperator.CG else (4, 8, 16)
        if size is None or size not in allowed:
            what = f"cp-size {operand_text(self.size) if size is None else size}"
            raise reject(self, f"{what} with .{self.cache.data.value}",
                         f"it is an immediate {' or '.join(map(str, allowed))}", self.RULE)  # fmt: skip
        check_register(self, "src-size", self.src_size, "b32", self.RULE)


@irdl_op_definition
class CpAsyncCommitGroupOp(Instruction):
    """`cp.async.commit_group` / `cp.async.bulk.commit_group`: close the thread's open
    group of (bulk) asynchronous copies."""

    traits = traits_def(SyncPoint())
    name = "ptx.cp_async_commit_group"
    bulk = opt_prop_def(UnitAttr)

    def __init__(self, bulk: bool = False):
        super().__init__(operands=[None], properties={"bulk": UnitAttr()} if bulk else {})

    def mnemonic(self) -> str:
        return f"cp.async{'.bulk' if self.bulk else ''}.commit_group"

    def ptx_operands(self, name: Namer) -> list[str]:
        return []


@irdl_op_definition
class CpAsyncWaitGroupOp(Instruction):
    """`cp.async.wait_group N` / `cp.async.bulk.wait_group[.read] N`: wait until at most
    `N` (an immediate) of the thread's groups are pending; `.read` (bulk only) waits only
    until their sources have been read."""

    traits = traits_def(Synchronizes())
    name = "ptx.cp_async_wait_group"
    bulk = opt_prop_def(UnitAttr)
    read = opt_prop_def(UnitAttr)
    pending = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{ASYNC_RULE}: cp.async.wait_group / cp.async.bulk.wait_group"

    def __init__(self, pending: SSAValue, *, bulk: bool = False, read: bool = False):
        props: dict[str, Attribute] = {}
        if bulk:
            props["bulk"] = UnitAttr()
        if read:
            props["read"] = UnitAttr()
        super().__init__(operands=[pending, None], properties=props)

    def mnemonic(self) -> str:
        return f"cp.async{'.bulk' if self.bulk else ''}.wait_group{'.read' if self.read else ''}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.pending)]

    def verify_(self) -> None:
        if self.read and not self.bulk:
            raise reject(self, ".read on cp.async.wait_group", "only cp.async.bulk.wait_group takes .read", self.RULE)
        if immediate(self.pending) is None:
            raise reject(self, f"group count {operand_text(self.pending)}", "it is an integer immediate", self.RULE)


@irdl_op_definition
class CpAsyncWaitAllOp(Instruction):
    """`cp.async.wait_all`: `cp.async.commit_group` followed by `cp.async.wait_group 0`
    (PTX ISA 9.0, cp.async.wait_group / cp.async.wait_all)."""

    traits = traits_def(Synchronizes())
    name = "ptx.cp_async_wait_all"

    def __init__(self):
        super().__init__(operands=[None])

    def mnemonic(self) -> str:
        return "cp.async.wait_all"

    def ptx_operands(self, name: Namer) -> list[str]:
        return []


@dataclass(frozen=True)
class BulkTensorForm:
    """The qualifiers of a `cp.async.bulk.tensor` besides those its operands decide: the
    direction, a written `.tile`, `.cta_group::N`."""

    direction: BulkTensorDirection
    tile: bool = False
    cta_group: int | None = None


@irdl_op_definition
class CpAsyncBulkTensorOp(Instruction):
    """`cp.async.bulk.tensor.Nd.dst.src[.tile].completion[.multicast::cluster]
    [.L2::cache_hint][.cta_group::N]`: a tile of the tensor a tensor map describes, at
    coordinates `{c0, ...}` (N of them, 1..5), copied between global and shared memory.
    A load (into `.shared::cta`/`.shared::cluster`) completes on the mbarrier `[mbar]`
    (`.mbarrier::complete_tx::bytes`), a store (into `.global`) in a bulk async-group
    (`.bulk_group`). `.multicast::cluster` (loads into `.shared::cluster`) is present iff
    its `.b16` CTA mask is, `.L2::cache_hint` iff its `.b64` policy is. The modifier order
    is CuTe DSL's; `im2col` modes are not modelled (they stay generic)."""

    traits = traits_def(SyncPoint())
    name = "ptx.cp_async_bulk_tensor"
    direction = prop_def(BulkTensorDirectionAttr)
    tile = opt_prop_def(UnitAttr)
    cta_group = opt_prop_def(nvvm.CTAGroupKindAttr)
    offset = prop_def(IntAttr)
    mbar_offset = opt_prop_def(IntAttr)
    """`[mbar+N]` (absent: `[mbar]`)."""
    smem = operand_def(Address)
    tensor_map = operand_def(Address)
    coords = var_operand_def(RegOrImm)
    mbar = opt_operand_def(Address)
    cta_mask = opt_operand_def(RegOrImm)
    policy = opt_operand_def(Reg)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{ASYNC_RULE}: cp.async.bulk.tensor"

    def __init__(
        self,
        form: BulkTensorForm,
        smem: SSAValue,
        tensor_map: SSAValue,
        coords: Sequence[SSAValue],
        mbar: SSAValue | tuple[SSAValue, int] | None = None,
        *,
        cta_mask: SSAValue | None = None,
        policy: SSAValue | None = None,
        offset: int = 0,
    ):
        """`mbar`: the mbarrier's address, or its base and offset (`[mbar+N]`)."""
        mbar, mbar_offset = mbar if isinstance(mbar, tuple) else (mbar, 0)
        props: dict[str, Attribute] = {"direction": BulkTensorDirectionAttr(form.direction), "offset": IntAttr(offset)}
        if mbar_offset:
            props["mbar_offset"] = IntAttr(mbar_offset)
        if form.tile:
            props["tile"] = UnitAttr()
        if form.cta_group is not None:
            props["cta_group"] = nvvm.CTAGroupKindAttr.from_int(form.cta_group)
        super().__init__(operands=[smem, tensor_map, coords, mbar, cta_mask, policy, None], properties=props)

    def mnemonic(self) -> str:
        direction = self.direction.data
        parts = [f"cp.async.bulk.tensor.{len(self.coords)}d", direction.value]
        if self.tile:
            parts.append("tile")
        parts.append("mbarrier::complete_tx::bytes" if direction.load else "bulk_group")
        if self.cta_mask is not None:
            parts.append("multicast::cluster")
        if self.policy is not None:
            parts.append("L2::cache_hint")
        if self.cta_group is not None:
            parts.append(f"cta_group::{self.cta_group.as_int()}")
        return ".".join(parts)

    def ptx_operands(self, name: Namer) -> list[str]:
        tensor = f"[{name(self.tensor_map)}, {vector_text(name, self.coords)}]"
        smem = address_text(name, self.smem, self.offset.data)
        policy = [] if self.policy is None else [name(self.policy)]
        mbar_offset = 0 if self.mbar_offset is None else self.mbar_offset.data
        mbar = [] if self.mbar is None else [address_text(name, self.mbar, mbar_offset)]
        mask = [] if self.cta_mask is None else [name(self.cta_mask)]
        if not self.direction.data.load:  # (an mbarrier here is printed, and refused by the verifier)
            return [tensor, smem, *mbar, *mask, *policy]
        return [smem, tensor, *mbar, *mask, *policy]

    def verify_(self) -> None:
        rule, direction = self.RULE, self.direction.data
        if not 1 <= len(self.coords) <= 5:
            raise reject(self, f"{len(self.coords)} tensor coordinates", "a tensor has 1 to 5 dimensions", rule)
        if direction.load and self.mbar is None:
            raise reject(self, "a tensor load without an mbarrier", "a load completes on [mbar]", rule)
        if not direction.load and self.mbar is not None:
            raise reject(self, "an mbarrier on a tensor store", "a store completes in a bulk async-group", rule)
        if self.cta_mask is not None and direction is not BulkTensorDirection.TO_SHARED_CLUSTER:
            raise reject(self, f".multicast::cluster with .{direction.value}",
                         "multicast loads into .shared::cluster", rule)  # fmt: skip
        if self.cta_group is not None and not direction.load:
            raise reject(self, ".cta_group on a tensor store", "only loads take .cta_group", rule)
        for value in self.coords:
            check_register(self, "tensor coordinate", value, "b32", rule)
        check_only_register(self, "CTA mask", self.cta_mask, "b16", rule)
        check_only_register(self, "cache policy", self.policy, "b64", rule)
        if self.mbar is not None:
            _check_address(self, StateSpaceAttr(StateSpace.SHARED), self.mbar, rule)
        if self.mbar_offset is not None and (self.mbar is None or self.mbar_offset.data == 0):
            raise reject(self, f"mbar_offset {self.mbar_offset.data}", "a nonzero offset of a written [mbar]", rule)


@irdl_op_definition
class CpReduceAsyncBulkTensorOp(Instruction):
    """`cp.reduce.async.bulk.tensor.Nd.global.shared::cta.redOp[.tile].bulk_group
    [.L2::cache_hint] [tensorMap, {c0, ...}], [smem][, policy]` (PTX ISA 9.0,
    cp.reduce.async.bulk.tensor): the tensor's box at the coordinates becomes
    `redOp(global, shared)` element-wise, in a bulk async-group. The reduction kinds are
    `nvvm.cp.async.bulk.tensor.reduce`'s (`#nvvm.tma_redux_kind`); `im2col` stays generic."""

    traits = traits_def(SyncPoint())
    name = "ptx.cp_reduce_async_bulk_tensor"
    kind = prop_def(nvvm.TMAReduxKindAttr)
    tile = opt_prop_def(UnitAttr)
    offset = prop_def(IntAttr)
    smem = operand_def(Address)
    tensor_map = operand_def(Address)
    coords = var_operand_def(RegOrImm)
    policy = opt_operand_def(Reg)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{ASYNC_RULE}: cp.reduce.async.bulk.tensor"

    def __init__(
        self,
        kind: nvvm.TMAReduxKind,
        smem: SSAValue,
        tensor_map: SSAValue,
        coords: Sequence[SSAValue],
        *,
        tile: bool = False,
        policy: SSAValue | None = None,
        offset: int = 0,
    ):
        props: dict[str, Attribute] = {"kind": nvvm.TMAReduxKindAttr(kind), "offset": IntAttr(offset)}
        if tile:
            props["tile"] = UnitAttr()
        super().__init__(operands=[smem, tensor_map, coords, policy, None], properties=props)

    def mnemonic(self) -> str:
        tile = ".tile" if self.tile else ""
        hint = ".L2::cache_hint" if self.policy is not None else ""
        return (f"cp.reduce.async.bulk.tensor.{len(self.coords)}d.{BulkTensorDirection.TO_GLOBAL.value}."
                f"{self.kind.data.value}{tile}.bulk_group{hint}")  # fmt: skip

    def ptx_operands(self, name: Namer) -> list[str]:
        policy = [] if self.policy is None else [name(self.policy)]
        tensor = f"[{name(self.tensor_map)}, {vector_text(name, self.coords)}]"
        return [tensor, address_text(name, self.smem, self.offset.data), *policy]

    def verify_(self) -> None:
        rule = self.RULE
        if not 1 <= len(self.coords) <= 5:
            raise reject(self, f"{len(self.coords)} tensor coordinates", "a tensor has 1 to 5 dimensions", rule)
        for value in self.coords:
            check_register(self, "tensor coordinate", value, "b32", rule)
        check_only_register(self, "cache policy", self.policy, "b64", rule)


@irdl_op_definition
class CpAsyncBulkOp(Instruction):
    """`cp.async.bulk.dst.src.completion [dst], [src], size[, [mbar]]` (PTX ISA 9.0,
    cp.async.bulk; the non-tensor bulk copy): `size` bytes (a multiple of 16) copied from
    global into shared memory, completing them on the mbarrier
    (`.shared::{cta,cluster}.global.mbarrier::complete_tx::bytes`), or from this CTA's
    shared memory to global memory in a bulk async-group (`.global.shared::cta.bulk_group`).
    `.multicast::cluster`, `.L2::cache_hint`, the shared-to-cluster form and
    `.cp_mask` are not modelled (they stay generic)."""

    traits = traits_def(SyncPoint())
    name = "ptx.cp_async_bulk"
    direction = prop_def(BulkTensorDirectionAttr)
    offset = prop_def(IntAttr)
    """The destination's `[dst+N]`."""
    src_offset = prop_def(IntAttr)
    mbar_offset = opt_prop_def(IntAttr)
    dst = operand_def(Address)
    src = operand_def(Address)
    size = operand_def(RegOrImm)
    mbar = opt_operand_def(Address)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{ASYNC_RULE}: cp.async.bulk"

    def __init__(
        self,
        direction: BulkTensorDirection,
        dst: SSAValue,
        src: SSAValue,
        size: SSAValue,
        mbar: SSAValue | None = None,
        *,
        offset: int = 0,
        src_offset: int = 0,
        mbar_offset: int = 0,
    ):
        props: dict[str, Attribute] = {
            "direction": BulkTensorDirectionAttr(direction), "offset": IntAttr(offset),
            "src_offset": IntAttr(src_offset),
        }  # fmt: skip
        if mbar_offset:
            props["mbar_offset"] = IntAttr(mbar_offset)
        super().__init__(operands=[dst, src, size, mbar, None], properties=props)

    def mnemonic(self) -> str:
        direction = self.direction.data
        completion = "mbarrier::complete_tx::bytes" if direction.load else "bulk_group"
        return f"cp.async.bulk.{direction.value}.{completion}"

    def ptx_operands(self, name: Namer) -> list[str]:
        parts = [address_text(name, self.dst, self.offset.data), address_text(name, self.src, self.src_offset.data),
                 name(self.size)]  # fmt: skip
        if self.mbar is not None:
            parts.append(address_text(name, self.mbar, 0 if self.mbar_offset is None else self.mbar_offset.data))
        return parts

    def verify_(self) -> None:
        rule, direction = self.RULE, self.direction.data
        if direction.load and self.mbar is None:
            raise reject(self, "a bulk load without an mbarrier", "a load completes on [mbar]", rule)
        if not direction.load and self.mbar is not None:
            raise reject(self, "an mbarrier on a bulk store", "a store completes in a bulk async-group", rule)
        check_register(self, "size", self.size, "b32", rule)
        size = immediate(self.size)
        if size is not None and size % 16:
            raise reject(self, f"size {size}", "a multiple of 16", rule)
        if self.mbar is not None:
            _check_address(self, StateSpaceAttr(StateSpace.SHARED), self.mbar, rule)
        if self.mbar_offset is not None and (self.mbar is None or self.mbar_offset.data == 0):
            raise reject(self, f"mbar_offset {self.mbar_offset.data}", "a nonzero offset of a written [mbar]", rule)


@irdl_op_definition
class LdmatrixOp(Instruction):
    """`ldmatrix.sync.aligned.m8n8.xN[.trans][.shared[::cta]].b16 {d..}, [a]`: N (1, 2, 4)
    8x8 matrices of 16-bit elements from shared memory, one `.b32` register per matrix
    per thread. (The `.m16n16`/`.m8n16` 8-bit shapes are not modelled: they stay generic.)"""

    traits = traits_def(SyncPoint())
    name = "ptx.ldmatrix"
    trans = opt_prop_def(UnitAttr)
    space = opt_prop_def(StateSpaceAttr)
    offset = prop_def(IntAttr)
    res = var_result_def(Reg)
    addr = operand_def(Address)

    RULE: ClassVar[str] = "PTX ISA 9.0, Warp Level Matrix Multiply-Accumulate Instructions: ldmatrix"

    def __init__(
        self,
        res: Sequence[RegisterType],
        addr: SSAValue,
        *,
        space: StateSpace | None = StateSpace.SHARED,
        trans: bool = False,
        offset: int = 0,
    ):
        props: dict[str, Attribute] = {"offset": IntAttr(offset)}
        if space is not None:
            props["space"] = StateSpaceAttr(space)
        if trans:
            props["trans"] = UnitAttr()
        super().__init__(operands=[addr, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        trans = ".trans" if self.trans else ""
        return f"ldmatrix.sync.aligned.m8n8.x{len(self.res)}{trans}{space_suffix(self.space)}.b16"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [vector_text(name, self.res), address_text(name, self.addr, self.offset.data)]

    def verify_(self) -> None:
        if len(self.res) not in (1, 2, 4):
            raise reject(self, f"{len(self.res)} matrices", ".m8n8 loads .x1/.x2/.x4", self.RULE)
        check_space(self, self.space, SHARED_CTA_SPACES, self.RULE)
        _check_address(self, self.space or StateSpaceAttr(StateSpace.SHARED), self.addr, self.RULE)
        for value in self.res:
            check_only_register(self, "destination", value, "b32", self.RULE)


# ---- atomics ------------------------------------------------------------------------------

ATOMIC_RULE = "PTX ISA 9.0, Parallel Synchronization and Communication Instructions"
ATOMIC_TYPES: dict[AtomicOperation, frozenset[PtxType]] = {
    AtomicOperation.AND: types("b32", "b64"),
    AtomicOperation.OR: types("b32", "b64"),
    AtomicOperation.XOR: types("b32", "b64"),
    AtomicOperation.EXCH: types("b32", "b64"),
    AtomicOperation.ADD: types("u32", "s32", "u64", "f32", "f64"),
    AtomicOperation.INC: types("u32"),
    AtomicOperation.DEC: types("u32"),
    AtomicOperation.MIN: types("u32", "s32", "u64", "s64"),
    AtomicOperation.MAX: types("u32", "s32", "u64", "s64"),
}
"""The types each `atom`/`red` operation takes (the scalar forms of sm_90/sm_100a the
model executes; ptxas accepts more: `.f16`/`.bf16` adds, vectors, `.b128` exch/cas)."""
CAS_TYPES = types("b32", "b64")
ATOM_SEMANTICS = frozenset({MemSemantic.RELAXED, MemSemantic.ACQUIRE, MemSemantic.RELEASE, MemSemantic.ACQ_REL})
RED_SEMANTICS = frozenset({MemSemantic.RELAXED, MemSemantic.RELEASE})


def _atomic_prefix(op: AtomOp | AtomCasOp | RedOp, opcode: str) -> str:
    """`atom{.sem}{.scope}{.space}` (the order ptxas reads)."""
    sem = "" if op.sem is None else f".{op.sem.data.value}"
    scope = "" if op.scope is None else f".{op.scope.data.value}"
    space = "" if op.space is None else f".{op.space.data.value}"
    return f"{opcode}{sem}{scope}{space}"


def _check_atomic(
    op: AtomOp | AtomCasOp | RedOp, allowed_types: frozenset[PtxType], semantics: frozenset[MemSemantic], what: str
) -> None:
    if op.sem is not None and op.sem.data not in semantics:
        order = [s for s in MemSemantic if s in semantics]
        raise reject(op, f"semantics .{op.sem.data.value}", f"{what} takes {spell(order)}", ATOMIC_RULE)
    check_type(op, op.type.data.ptx, allowed_types, what, ATOMIC_RULE)
    _check_address(op, None if op.space is None else StateSpaceAttr(op.space.data.state_space), op.addr, ATOMIC_RULE)


@dataclass(frozen=True)
class AtomicOrder:
    """`{.sem}{.scope}` of an atomic (`atom`, `red`): each optional on its own."""

    sem: MemSemantic | None = None
    scope: nvvm.MemScopeKind | None = None


@irdl_op_definition
class AtomOp(Instruction):
    """`atom{.sem}{.scope}{.space}.op.type d, [a+offset], b`: `d` = the old value at `a`,
    which becomes `old op b`, atomically."""

    name = "ptx.atom"
    traits = traits_def(Atomic())
    sem = opt_prop_def(MemSemanticAttr)
    scope = opt_prop_def(nvvm.MemScopeKindAttr)
    space = opt_prop_def(AtomicSpaceAttr)
    operation = prop_def(AtomicOperationAttr)
    type = prop_def(AtomicTypeAttr)
    offset = prop_def(IntAttr)
    res = result_def(Reg)
    addr = operand_def(Address)
    b = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{ATOMIC_RULE}: atom"

    def __init__(
        self,
        operation: AtomicOperation,
        type: AtomicType,
        res: RegisterType,
        addr: SSAValue,
        b: SSAValue,
        *,
        space: AtomicSpace | None = None,
        order: AtomicOrder = AtomicOrder(),
        offset: int = 0,
    ):
        super().__init__(
            operands=[addr, b, None],
            result_types=[res],
            properties=_atomic_props(operation, type, space, order, offset),
        )

    def mnemonic(self) -> str:
        return f"{_atomic_prefix(self, 'atom')}.{self.operation.data.value}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), address_text(name, self.addr, self.offset.data), name(self.b)]

    def verify_(self) -> None:
        _check_atomic(self, ATOMIC_TYPES[self.operation.data], ATOM_SEMANTICS, f"atom.{self.operation.data.value}")
        check_operand(self, "destination", self.res, self.type.data.ptx, self.RULE)
        check_operand(self, "source", self.b, self.type.data.ptx, self.RULE)


@irdl_op_definition
class AtomCasOp(Instruction):
    """`atom{.sem}{.scope}{.space}.cas.type d, [a+offset], b, c`: `d` = the old value at
    `a`, which becomes `c` if it equals `b`, atomically."""

    name = "ptx.atom_cas"
    traits = traits_def(Atomic())
    sem = opt_prop_def(MemSemanticAttr)
    scope = opt_prop_def(nvvm.MemScopeKindAttr)
    space = opt_prop_def(AtomicSpaceAttr)
    type = prop_def(AtomicTypeAttr)
    offset = prop_def(IntAttr)
    res = result_def(Reg)
    addr = operand_def(Address)
    b = operand_def(RegOrImm)
    c = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{ATOMIC_RULE}: atom"

    def __init__(
        self,
        type: AtomicType,
        res: RegisterType,
        addr: SSAValue,
        b: SSAValue,
        c: SSAValue,
        *,
        space: AtomicSpace | None = None,
        order: AtomicOrder = AtomicOrder(),
        offset: int = 0,
    ):
        props = _atomic_props(None, type, space, order, offset)
        super().__init__(operands=[addr, b, c, None], result_types=[res], properties=props)

    def mnemonic(self) -> str:
        return f"{_atomic_prefix(self, 'atom')}.cas.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.res), address_text(name, self.addr, self.offset.data), name(self.b), name(self.c)]

    def verify_(self) -> None:
        _check_atomic(self, CAS_TYPES, ATOM_SEMANTICS, "atom.cas")
        check_operand(self, "destination", self.res, self.type.data.ptx, self.RULE)
        check_operand(self, "compared value", self.b, self.type.data.ptx, self.RULE)
        check_operand(self, "new value", self.c, self.type.data.ptx, self.RULE)


@irdl_op_definition
class RedOp(Instruction):
    """`red{.sem}{.scope}{.space}.op.type [a+offset], b`: the value at `a` becomes
    `old op b`, atomically (`atom` without a result; no `.exch`)."""

    name = "ptx.red"
    traits = traits_def(Atomic())
    sem = opt_prop_def(MemSemanticAttr)
    scope = opt_prop_def(nvvm.MemScopeKindAttr)
    space = opt_prop_def(AtomicSpaceAttr)
    operation = prop_def(AtomicOperationAttr)
    type = prop_def(AtomicTypeAttr)
    offset = prop_def(IntAttr)
    addr = operand_def(Address)
    b = operand_def(RegOrImm)

    RULE: ClassVar[str] = f"{ATOMIC_RULE}: red"

    def __init__(
        self,
        operation: AtomicOperation,
        type: AtomicType,
        addr: SSAValue,
        b: SSAValue,
        *,
        space: AtomicSpace | None = None,
        order: AtomicOrder = AtomicOrder(),
        offset: int = 0,
    ):
        props = _atomic_props(operation, type, space, order, offset)
        super().__init__(operands=[addr, b, None], properties=props)

    def mnemonic(self) -> str:
        return f"{_atomic_prefix(self, 'red')}.{self.operation.data.value}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [address_text(name, self.addr, self.offset.data), name(self.b)]

    def verify_(self) -> None:
        if self.operation.data is AtomicOperation.EXCH:
            raise reject(self, "operation .exch", "red takes .and/.or/.xor/.add/.inc/.dec/.min/.max", self.RULE)
        _check_atomic(self, ATOMIC_TYPES[self.operation.data], RED_SEMANTICS, f"red.{self.operation.data.value}")
        check_operand(self, "source", self.b, self.type.data.ptx, self.RULE)


def _atomic_props(
    operation: AtomicOperation | None,
    type: AtomicType,
    space: AtomicSpace | None,
    order: AtomicOrder,
    offset: int,
) -> dict[str, Attribute]:
    props: dict[str, Attribute] = {"type": AtomicTypeAttr(type), "offset": IntAttr(offset)}
    if operation is not None:
        props["operation"] = AtomicOperationAttr(operation)
    if space is not None:
        props["space"] = AtomicSpaceAttr(space)
    if order.sem is not None:
        props["sem"] = MemSemanticAttr(order.sem)
    if order.scope is not None:
        props["scope"] = nvvm.MemScopeKindAttr(order.scope)
    return props


# ---- st.async -------------------------------------------------------------------------------

ST_ASYNC_TYPES = types("b32", "b64", "u32", "s32", "u64", "s64", "f32", "f64")


@irdl_op_definition
class StAsyncOp(Instruction):
    """`st.async.shared::cluster.mbarrier::complete_tx::bytes{.v2,.v4}.type [a], b, [mbar]`:
    a store into (another) CTA's shared memory that, once done, completes its size in
    transaction bytes on the mbarrier `mbar` of the same CTA (PTX ISA 9.0, st.async)."""

    name = "ptx.st_async"
    traits = traits_def(Synchronizes())
    type = prop_def(PtxTypeAttr)
    addr = operand_def(Address)
    values = var_operand_def(RegOrImm)
    mbar = operand_def(Address)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    RULE: ClassVar[str] = f"{MEMORY_RULE}: st.async"

    def __init__(self, type: PtxType, addr: SSAValue, values: Sequence[SSAValue], mbar: SSAValue):
        super().__init__(operands=[addr, values, mbar, None], properties={"type": PtxTypeAttr(type)})

    def mnemonic(self) -> str:
        vec = f".v{len(self.values)}" if len(self.values) > 1 else ""
        return f"st.async.shared::cluster.mbarrier::complete_tx::bytes{vec}.{self.type.data.value}"

    def ptx_operands(self, name: Namer) -> list[str]:
        src = vector_text(name, self.values) if len(self.values) > 1 else name(self.values[0])
        return [address_text(name, self.addr, 0), src, address_text(name, self.mbar, 0)]

    def verify_(self) -> None:
        t = self.type.data
        check_type(self, t, ST_ASYNC_TYPES, "st.async", self.RULE)
        if len(self.values) not in (1, 2, 4) or (len(self.values) == 4 and t.width == 64):
            raise reject(self, f"{len(self.values)} elements of .{t.value}",
                         "st.async stores one, .v2 or (32-bit types) .v4", self.RULE)  # fmt: skip
        for value in self.values:
            check_operand(self, "source", value, t, self.RULE)
        _check_address(self, StateSpaceAttr(StateSpace.SHARED_CLUSTER), self.addr, self.RULE)
        _check_address(self, StateSpaceAttr(StateSpace.SHARED_CLUSTER), self.mbar, self.RULE)
