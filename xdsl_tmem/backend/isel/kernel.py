"""Kernels and the module: parameters, directives, dead-instruction removal, globals.

Imports every rule module, so that their `@rule`s are registered before a kernel is
selected.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    UnitAttr,
    VectorType,
    i1,
    i16,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

# Importing a rule module registers its rules (`@rule`) in `core.RULES`.
from xdsl_tmem.backend.isel import arith as _arith
from xdsl_tmem.backend.isel import control as _control
from xdsl_tmem.backend.isel import memory as _memory
from xdsl_tmem.backend.isel import nvvm_sync as _nvvm_sync
from xdsl_tmem.backend.isel import tcgen05 as _tcgen05
from xdsl_tmem.backend.isel import tma as _tma
from xdsl_tmem.backend.isel.control import FUNC_RETURN, func_param_declaration, load_func_param, select_blocks
from xdsl_tmem.backend.isel.core import (
    Address,
    FunctionSelector,
    IselError,
    UnsupportedTypeError,
    address_space,
    bit_width,
    byte_size,
    natural_alignment,
    numbered_register,
    register_kind,
)
from xdsl_tmem.dialects import ptx
from xdsl_tmem.dialects.llvm_ext import is_dynamic_shared
from xdsl_tmem.dialects.ptx import CmpOp, PtxType, StateSpace

RULE_MODULES = (_arith, _memory, _control, _nvvm_sync, _tcgen05, _tma)
"""The rule modules, one per op family (imported for their registrations)."""

if TYPE_CHECKING:
    from xdsl_tmem.backend.target import Arch

# --------------------------------------------------------------------------------------
# Kernels and the module
# --------------------------------------------------------------------------------------

_PARAM_TYPE = {"b16": "u16", "b32": "u32", "b64": "u64"}


def _kernel_name(fs_op: Operation) -> str:
    if isinstance(fs_op, llvm.FuncOp | func.FuncOp):
        return fs_op.sym_name.data
    raise AssertionError


def _param_declaration(name: str, t: Attribute) -> ptx.DeclAttr:
    if isinstance(t, llvm.LLVMPointerType):
        space = address_space(t)
        where = {1: "global", 3: "shared"}.get(space or 0, "")
        width = "u32" if space in (6, 7) else "u64"
        return ptx.DeclAttr("param", width, name, ptr=ptx.Pointee(where, 1))
    if bit_width(t) <= 8:
        return ptx.DeclAttr("param", "u8", name)  # one byte, as llc-22 declares it (the kernel ABI)
    if isinstance(t, Float32Type):
        return ptx.DeclAttr("param", "f32", name)
    if isinstance(t, Float64Type):
        return ptx.DeclAttr("param", "f64", name)
    return ptx.DeclAttr("param", _PARAM_TYPE[register_kind(t)], name)


def _load_param(fs: FunctionSelector, arg: SSAValue, name: str) -> None:
    t = arg.type
    symbol = fs.symbol(name)
    if t == i1:
        byte = fs.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B8, [fs.fresh("b16")], symbol)).res[0]
        low = fs.emit(ptx.AndOp(PtxType.B16, fs.fresh("b16"), byte, fs.imm(1, i16))).res
        fs.define(arg, [fs.emit(ptx.SetpOp(CmpOp.NE, PtxType.B16, fs.fresh("pred"), low, fs.imm(0, i16))).res])
        return
    if isinstance(t, llvm.LLVMPointerType):
        space = address_space(t)
        if space in (6, 7):
            loaded = fs.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B32, [fs.fresh("b32")], symbol)).res[0]
        else:
            loaded = fs.emit(ptx.LdOp(StateSpace.PARAM, PtxType.B64, [fs.fresh("b64")], symbol)).res[0]
            if space == 3:
                loaded = fs.emit(ptx.CvtOp(PtxType.U32, PtxType.U64, fs.fresh("b32"), loaded)).res
        fs.define(arg, [Address(loaded)])
        return
    if isinstance(t, VectorType):
        raise fs.error(fs.fn, f"vector kernel parameter {t} is not supported")
    kind = register_kind(t)
    fs.define(
        arg, [fs.emit(ptx.LdOp(StateSpace.PARAM, PtxType.of("b", bit_width(t)), [fs.fresh(kind)], symbol)).res[0]]
    )


def _byval_parameter(fn: Operation, index: int) -> dict[str, Attribute] | None:
    """The attributes of kernel parameter `index` if it is byval (`llvm.byval = T`)."""
    attrs = fn.arg_attrs if isinstance(fn, llvm.FuncOp | func.FuncOp) else None
    if attrs is None or index >= len(attrs.data):
        return None
    entry = dict(attrs.data[index].data)
    return entry if "llvm.byval" in entry else None


def _byval_declaration(fs: FunctionSelector, arg: SSAValue, name: str, attrs: dict[str, Attribute]) -> ptx.DeclAttr:
    """A byval `nvvm.grid_constant` parameter (a `CUtensorMap`, `!llvm.ptr {llvm.align = 64 :
    i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}`), as llc-22 lowers it:
    `.param .align A .b8 name[N]` (A: `llvm.align`, else the type's alignment) and the
    parameter's generic address, `mov.b64 %rd, name; cvta.param.u64 %rd, %rd`. Without
    `nvvm.grid_constant` llc-22 copies the bytes to local memory first: not supported."""
    pointee = attrs["llvm.byval"]
    if address_space(arg.type) not in (0, None) or not isinstance(arg.type, llvm.LLVMPointerType):
        raise fs.error(fs.fn, f"byval parameter {name} must be a generic !llvm.ptr, got {arg.type}")
    if "nvvm.grid_constant" not in attrs:
        raise fs.error(fs.fn, f"byval parameter {name} without nvvm.grid_constant is not supported (llc-22 "
                              "copies it to local memory; a CUtensorMap parameter is grid-constant)")  # fmt: skip
    align = attrs.get("llvm.align")
    alignment = align.value.data if isinstance(align, IntegerAttr) else natural_alignment(pointee)
    declaration = ptx.DeclAttr("param", "b8", name, align=alignment, dims=[byte_size(pointee)])
    raw = fs.emit(ptx.MovOp(PtxType.B64, fs.fresh("b64"), fs.symbol(name))).res
    fs.define(arg, [Address(fs.emit(ptx.CvtaOp(StateSpace.PARAM, fs.fresh("b64"), raw, to_generic=True)).res)])
    return declaration


_DIM3_DIRECTIVES = (("nvvm.maxntid", "maxntid"), ("nvvm.reqntid", "reqntid"), ("nvvm.cluster_dim", "reqnctapercluster"))
_INT_DIRECTIVES = (("nvvm.minctasm", "minnctapersm"), ("nvvm.maxnreg", "maxnreg"))


def _directives(fn: Operation) -> dict[str, Attribute]:
    """The kernel's performance directives, from its `nvvm.*` attributes (as llc-22
    emits them; a cluster shape is also `.explicitcluster`)."""
    out: dict[str, Attribute] = {}
    for key, directive in _DIM3_DIRECTIVES:
        if isinstance(attr := fn.attributes.get(key), DenseArrayBase):
            out[directive] = ArrayAttr([IntAttr(int(v)) for v in attr.get_values()])
    for key, directive in _INT_DIRECTIVES:
        if isinstance(attr := fn.attributes.get(key), IntegerAttr):
            out[directive] = IntAttr(attr.value.data)
    if "reqnctapercluster" in out:
        out["explicitcluster"] = UnitAttr()
    return out


def select_kernel(fn: Operation, arch: Arch) -> ptx.FunctionOp:
    """Select one kernel into a `ptx.function` (a `.visible .entry`)."""
    name = _kernel_name(fn)
    fs = FunctionSelector(fn, arch)
    region = fn.regions[0]
    if not region.blocks:
        raise IselError(fn, f"ptx backend: kernel @{name} has no body")
    params: list[ptx.DeclAttr] = []
    for i, arg in enumerate(region.blocks[0].args):
        param_name = f"{name}_param_{i}"
        try:
            if (byval := _byval_parameter(fn, i)) is not None:
                params.append(_byval_declaration(fs, arg, param_name, byval))
                continue
            params.append(_param_declaration(param_name, arg.type))
            _load_param(fs, arg, param_name)
        except UnsupportedTypeError as e:
            raise IselError(fn, f"ptx backend: kernel @{name} parameter {i}: {e}") from None
    _select_body(fn, fs)
    properties = {"linkage": ArrayAttr([StringAttr("visible")]), "params": ArrayAttr(params), **_directives(fn)}
    return _verified(fn, ptx.FunctionOp(name, "entry", Region(fs.body), properties))


def select_function(fn: llvm.FuncOp, arch: Arch) -> ptx.FunctionOp:
    """Select a device function (an `llvm.func` without `nvvm.kernel`) into a `.func`,
    as llc-22 declares it: parameters `f_param_N` and the return value `func_retval0`
    in the `.param` space, `.visible` unless the function is internal or private."""
    name = fn.sym_name.data
    fs = FunctionSelector(fn, arch)
    region = fn.regions[0]
    params: list[ptx.DeclAttr] = []
    returns: list[ptx.DeclAttr] = []
    try:
        for i, arg in enumerate(region.blocks[0].args):
            params.append(func_param_declaration(f"{name}_param_{i}", arg.type))
            load_func_param(fs, arg, f"{name}_param_{i}")
        result = fn.function_type.output
        if not isinstance(result, llvm.LLVMVoidType):
            returns.append(func_param_declaration(FUNC_RETURN, result))
    except UnsupportedTypeError as e:
        raise IselError(fn, f"ptx backend: device function @{name}: {e}") from None
    _select_body(fn, fs)
    properties: dict[str, Attribute] = {"params": ArrayAttr(params)}
    if fn.linkage.linkage.data not in ("internal", "private"):
        properties["linkage"] = ArrayAttr([StringAttr("visible")])
    if returns:
        properties["returns"] = ArrayAttr(returns)
    return _verified(fn, ptx.FunctionOp(name, "func", Region(fs.body), properties))


def _select_body(fn: Operation, fs: FunctionSelector) -> None:
    """Select the body after the parameter loads, then clean up and declare registers."""
    region = fn.regions[0]
    parameters_end = fs.body.last_op
    if len(region.blocks) == 1:
        fs.select_block(region.blocks[0])
    else:
        select_blocks(fs, region)
    _remove_dead_instructions(fs.body)
    for op in list(fs.prologue.ops):
        op.detach()
        if parameters_end is None:
            fs.body.insert_op_before(op, fs.body.first_op) if fs.body.first_op else fs.body.add_op(op)
        else:
            fs.body.insert_op_after(op, parameters_end)
            parameters_end = op
    _hoist_operands(fs.body)
    _remove_unused_labels(fs.body)
    _declare_registers(fs.body)


def _remove_unused_labels(body: Block) -> None:
    """Blocks become labels; only those a branch targets are kept."""
    targets = {op.target.data for op in body.ops if isinstance(op, ptx.BraOp)}
    for op in list(body.ops):
        if isinstance(op, ptx.LabelOp) and op.label.data not in targets:
            op.detach()
            op.erase()


def _declare_registers(body: Block) -> None:
    """`.reg .b32 %r<N>;` per register class the body uses, first in the body: N is one
    more than the highest register number of the class."""
    counts: dict[str, int] = {}
    for op in body.walk():
        for value in (*op.results, *op.operands):
            if isinstance(value.type, ptx.RegisterType):
                kind = value.type.kind.data
                counts[kind] = max(counts.get(kind, 0), value.type.index.data + 1)
    declarations = [
        ptx.RegDeclOp(prefix, counts[kind], [numbered_register(kind, i) for i in range(counts[kind])])
        for kind, prefix in ptx.REGISTER_PREFIX.items()
        if kind in counts
    ]
    if body.first_op is None:
        body.add_ops(declarations)
    else:
        body.insert_ops_before(declarations, body.first_op)


def _hoist_operands(body: Block) -> None:
    """Operand pseudo-ops (immediates, symbols, special registers, register handles) take
    no operands and print nothing: define them all first, so that every use is dominated
    by its definition (the prologue's instructions move above the body's definitions)."""
    pseudo = [op for op in body.walk() if isinstance(op, ptx.ImmOp | ptx.SymbolOp | ptx.SpecialOp | ptx.RegisterOp)]
    for op in pseudo:
        op.detach()
    first = body.first_op
    for op in pseudo:
        if first is None:
            body.add_op(op)
        else:
            body.insert_op_before(op, first)


def _verified(fn: Operation, function: ptx.FunctionOp) -> ptx.FunctionOp:
    """Every selected instruction obeys its PTX ISA rules (the ptx verifiers), so that
    an instruction ptxas would reject is reported here, at the kernel, not by ptxas.
    Checked in the function (`st.param` may write only its own `.param`s)."""
    for op in function.body.block.ops:
        try:
            op.verify()
        except VerifyException as e:
            raise IselError(fn, f"ptx backend: selected an invalid instruction: {e}") from None
    return function


def _remove_dead_instructions(body: Block) -> None:
    """Drop side-effect-free instructions whose registers are never read (e.g. an index
    addition folded into an address offset). Registers are named by type, so liveness
    is by register, over the whole kernel: sound without a control-flow graph."""
    while True:
        read = {value.type for op in body.walk() for value in op.operands if isinstance(value.type, ptx.RegisterType)}
        dead = [
            op
            for op in body.ops
            if op.has_trait(ptx.WritesOnlyRegisters)
            and isinstance(op, ptx.Instruction)
            and op.guard_value() is None
            and all(r.type not in read for r in op.results)
        ]
        if not dead:
            return
        for op in dead:
            op.detach()
            op.erase(safe_erase=False)


def _global_declaration(op: llvm.GlobalOp) -> ptx.VariableOp:
    space = op.addr_space.value.data
    if space != 3:
        raise IselError(
            op,
            f"ptx backend: global @{op.sym_name.data} in address space {space}: only shared (3) globals are supported",
        )
    if op.value is not None or op.body.blocks:
        raise IselError(op, f"ptx backend: shared global @{op.sym_name.data} cannot have an initializer")
    t: Attribute = op.global_type
    alignment = op.alignment.value.data if op.alignment is not None else natural_alignment(t)
    name = op.sym_name.data
    if is_dynamic_shared(op):  # the launch's dynamic shared memory, as llc-22 declares it
        return ptx.VariableOp(ptx.DeclAttr("shared", "b8", name, align=alignment, dims=[-1]), linkage=["extern"])
    if isinstance(t, llvm.LLVMArrayType | llvm.LLVMStructType | VectorType):
        return ptx.VariableOp(ptx.DeclAttr("shared", "b8", name, align=alignment, dims=[byte_size(cast(Attribute, t))]))
    elem = f"b{bit_width(t)}" if bit_width(t) >= 16 else "b8"
    return ptx.VariableOp(ptx.DeclAttr("shared", elem, name, align=alignment))


def _is_kernel(op: Operation) -> bool:
    return isinstance(op, llvm.FuncOp | func.FuncOp) and "nvvm.kernel" in op.attributes


def select_module(module: ModuleOp, arch: Arch) -> ptx.ModuleOp:
    """The `ptx.module` for an nvvm-level module: globals (largest alignment first, so
    small variables do not pad big aligned buffers) and one entry per kernel."""
    globals_: list[ptx.VariableOp] = []
    functions: list[ptx.FunctionOp] = []
    entries: list[ptx.FunctionOp] = []
    for op in module.body.block.ops:
        if isinstance(op, llvm.GlobalOp):
            globals_.append(_global_declaration(op))
        elif _is_kernel(op):
            entries.append(select_kernel(op, arch))
        elif isinstance(op, llvm.FuncOp) and op.body.blocks:
            functions.append(select_function(op, arch))
        elif isinstance(op, llvm.FuncOp | func.FuncOp):
            if op.regions[0].blocks:
                raise IselError(
                    op,
                    f"ptx backend: @{op.sym_name.data} is a func.func without nvvm.kernel; "
                    "device functions are llvm.func",
                )
            raise IselError(
                op, f"ptx backend: @{op.sym_name.data} is only declared: an external function cannot be linked"
            )
        else:
            raise IselError(op, f"ptx backend: {op.name} at module level has no PTX lowering")
    if not entries:
        raise IselError(module, "ptx backend: the module has no kernel (an llvm.func with nvvm.kernel)")
    globals_.sort(key=lambda g: -g.decl.align.data)
    body = [*globals_, *_prototypes(functions), *functions, *entries]
    return ptx.ModuleOp(arch.version, arch.name, Region(Block(body)), address_size=64)


def _prototypes(functions: list[ptx.FunctionOp]) -> list[ptx.FunctionOp]:
    """A declaration (`.func f(...);`) of each device function called before its
    definition: ptxas needs a callee declared before the call (the kernels come last)."""
    defined: set[str] = set()
    needed: list[ptx.FunctionOp] = []
    for function in functions:
        for op in function.walk():
            if isinstance(op, ptx.CallOp) and op.callee.data not in defined:
                callee = next((f for f in functions if f.sym_name.data == op.callee.data), None)
                if callee is not None and callee not in needed:
                    needed.append(callee)
        defined.add(function.sym_name.data)
    return [ptx.FunctionOp(f.sym_name.data, "func", Region(), dict(f.properties)) for f in needed]
