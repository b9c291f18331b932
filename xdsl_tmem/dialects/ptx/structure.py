"""Module structure: `.shared` globals, entries and the module; and, for PTX read by the
front end (`xdsl_tmem.frontend`), functions with typed performance directives, variables
of every state space, `.reg` declarations, `{ }` scopes and the label tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    IntAttr,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, ParametrizedAttribute, Region
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_attr_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
    var_result_def,
)
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.traits import IsolatedFromAbove, NoTerminator
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.ptx.base import REGISTER_TYPES, RegisterType

# --------------------------------------------------------------------------------------
# Module structure
# --------------------------------------------------------------------------------------


@irdl_op_definition
class ModuleOp(IRDLOperation):
    """A PTX module: `.version`, `.target`, `.address_size 64`, globals and entries."""

    name = "ptx.module"
    version = prop_def(StringAttr)
    target = prop_def(StringAttr)
    target_options = opt_prop_def(ArrayAttr[StringAttr])
    """`.target sm_100a, debug`: the options after the architecture (parsed PTX only)."""
    address_size = opt_prop_def(IntAttr)
    """`.address_size`; absent in the backend's modules, which are always 64-bit."""
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), IsolatedFromAbove())
    assembly_format = "`version` $version `target` $target $body attr-dict"
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(
        self,
        version: str,
        target: str,
        body: Region,
        target_options: Sequence[str] = (),
        address_size: int | None = None,
    ):
        props: dict[str, Attribute] = {"version": StringAttr(version), "target": StringAttr(target)}
        if target_options:
            props["target_options"] = ArrayAttr([StringAttr(o) for o in target_options])
        if address_size is not None:
            props["address_size"] = IntAttr(address_size)
        super().__init__(properties=props, regions=[body])

    def verify_(self) -> None:
        if self.address_size is not None and self.address_size.data not in (32, 64):
            raise VerifyException(f"ptx.module: .address_size must be 32 or 64, got {self.address_size.data}")
        for option in self.target_options or ():
            if option.data not in TARGET_OPTIONS:
                raise VerifyException(
                    f"ptx.module: unknown .target option '{option.data}'; allowed: {', '.join(TARGET_OPTIONS)}"
                )


# --------------------------------------------------------------------------------------
# Parsed PTX: declarations, functions, scopes
# --------------------------------------------------------------------------------------

TARGET_OPTIONS = ("texmode_unified", "texmode_independent", "debug", "map_f64_to_f32")
"""The `.target` options besides the architecture (PTX ISA 9.0 §11.1.3)."""

STATE_SPACES = ("reg", "param", "global", "const", "shared", "local")
"""The state spaces a declaration may name (PTX ISA 9.0 §5.1; `.tex` is deprecated)."""

LINKAGES = ("visible", "extern", "weak", "common")
"""Linking directives (PTX ISA 9.0 §11.6)."""

VARIABLE_TYPES = REGISTER_TYPES | {"texref", "samplerref", "surfref"}
"""Types a variable or parameter may have (PTX ISA 9.0 §5.2, §5.3)."""


class Pointee(NamedTuple):
    """What a `.ptr` parameter points to: `.ptr .global .align 16` is ("global", 16);
    the space is "" and the alignment 0 when not given."""

    space: str = ""
    align: int = 0


@irdl_attr_definition
class DeclAttr(ParametrizedAttribute):
    """One variable or parameter declaration, without linkage or initializer:
    `.param .align 16 .b8 p[64]`, `.param .u64 .ptr .global .align 16 p`,
    `.shared .align 8 .v2 .u32 x[4]`. `align`, `vector` and `ptr_align` are 0 when
    absent; `dims` holds -1 for an unsized `[]`."""

    name = "ptx.decl"
    space: StringAttr
    align: IntAttr
    vector: IntAttr
    type: StringAttr
    ptr: IntAttr
    """1 for a `.ptr` parameter (a kernel pointer parameter with its pointee's space and alignment)."""
    ptr_space: StringAttr
    ptr_align: IntAttr
    sym_name: StringAttr
    dims: ArrayAttr[IntAttr]

    def __init__(
        self,
        space: str,
        type: str,
        sym_name: str,
        *,
        align: int = 0,
        vector: int = 0,
        ptr: Pointee | None = None,
        dims: Sequence[int] = (),
    ):
        ptr_space, ptr_align = ptr or ("", 0)
        super().__init__(
            StringAttr(space), IntAttr(align), IntAttr(vector), StringAttr(type), IntAttr(int(ptr is not None)),
            StringAttr(ptr_space), IntAttr(ptr_align), StringAttr(sym_name), ArrayAttr([IntAttr(d) for d in dims]),
        )  # fmt: skip

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        """`<param b8 "p" align 16 dims [64]>`, `<param u64 "p" ptr global ptr_align 16>`."""
        with parser.in_angle_brackets():
            space = parser.parse_identifier()
            type_ = parser.parse_identifier()
            sym_name = parser.parse_str_literal()
            fields = {"align": 0, "vector": 0, "ptr_align": 0}
            ptr, ptr_space, dims = False, "", list[int]()
            while (key := parser.parse_optional_identifier()) is not None:
                if key in fields:
                    fields[key] = parser.parse_integer(allow_negative=False, allow_boolean=False)
                elif key == "ptr":
                    ptr = True
                elif key == "ptr_space":
                    ptr_space = parser.parse_identifier()
                elif key == "dims":
                    dims = parser.parse_comma_separated_list(
                        parser.Delimiter.SQUARE, lambda: parser.parse_integer(allow_boolean=False)
                    )
                else:
                    parser.raise_error(
                        f"#ptx.decl: unknown field {key}; fields: align, vector, ptr, ptr_space, ptr_align, dims"
                    )
        ptr_align = fields.pop("ptr_align")
        if not ptr and (ptr_space or ptr_align):
            parser.raise_error("#ptx.decl: ptr_space and ptr_align need ptr")
        pointee = Pointee(ptr_space, ptr_align) if ptr else None
        decl = DeclAttr(space, type_, sym_name, ptr=pointee, dims=dims, **fields)
        return decl.parameters

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(f"<{self.space.data} {self.type.data} ")
        printer.print_string_literal(self.sym_name.data)
        for key in ("align", "vector"):
            if value := cast(IntAttr, getattr(self, key)).data:
                printer.print_string(f" {key} {value}")
        if self.ptr.data:
            printer.print_string(" ptr")
        if self.ptr_space.data:
            printer.print_string(f" ptr_space {self.ptr_space.data}")
        if self.ptr_align.data:
            printer.print_string(f" ptr_align {self.ptr_align.data}")
        if self.dims.data:
            printer.print_string(f" dims [{', '.join(str(d.data) for d in self.dims)}]")
        printer.print_string(">")

    def verify(self) -> None:
        if self.space.data not in STATE_SPACES:
            raise VerifyException(
                f"ptx.decl: state space must be one of {', '.join(STATE_SPACES)}, got {self.space.data}"
            )
        if self.type.data not in VARIABLE_TYPES:
            raise VerifyException(
                f"ptx.decl: type must be one of {', '.join(sorted(VARIABLE_TYPES))}, got {self.type.data}"
            )
        if self.vector.data not in (0, 2, 4, 8):
            raise VerifyException(f"ptx.decl: vector width must be 2, 4 or 8, got {self.vector.data}")
        for what, value in (("alignment", self.align.data), (".ptr alignment", self.ptr_align.data)):
            if value < 0 or value & (value - 1):
                raise VerifyException(f"ptx.decl: {what} must be a power of two, got {value}")
        if not self.ptr.data and (self.ptr_space.data or self.ptr_align.data):
            raise VerifyException("ptx.decl: a pointee space or alignment needs .ptr")

    def ptx_text(self) -> str:
        parts = [f".{self.space.data}"]
        if self.align.data:
            parts.append(f".align {self.align.data}")
        if self.vector.data:
            parts.append(f".v{self.vector.data}")
        parts.append(f".{self.type.data}")
        if self.ptr.data:
            parts.append(".ptr")
            if self.ptr_space.data:
                parts.append(f".{self.ptr_space.data}")
            if self.ptr_align.data:
                parts.append(f".align {self.ptr_align.data}")
        dims = "".join(f"[{d.data}]" if d.data >= 0 else "[]" for d in self.dims)
        return " ".join(parts) + f" {self.sym_name.data}{dims}"


def _linkage_text(linkage: ArrayAttr[StringAttr] | None) -> str:
    return "".join(f".{link.data} " for link in linkage or ())


def _check_linkage(op: IRDLOperation, linkage: ArrayAttr[StringAttr] | None) -> None:
    for link in linkage or ():
        if link.data not in LINKAGES:
            raise VerifyException(f"{op.name}: unknown linkage .{link.data}; allowed: .{', .'.join(LINKAGES)}")


Initializer = StringAttr | ArrayAttr[Attribute]
"""An initializer element: its PTX text (`5`, `0f3F800000`, `generic(x)+8`), or a
braced list of elements."""


def initializer_text(init: Attribute) -> str:
    if isinstance(init, StringAttr):
        return init.data
    assert isinstance(init, ArrayAttr)
    return "{" + ", ".join(initializer_text(e) for e in cast(ArrayAttr[Attribute], init)) + "}"


@irdl_op_definition
class VariableOp(IRDLOperation):
    """A variable of any state space, at module scope or in a function body:
    `.visible .global .align 4 .u32 x[2] = {1, 2};`, `.extern .shared .b8 smem[];`,
    `.local .align 8 .b8 __local_depot0[16];`, `.param .b32 param0;`."""

    name = "ptx.variable"
    linkage = opt_prop_def(ArrayAttr[StringAttr])
    decl = prop_def(DeclAttr)
    init = opt_prop_def(Attribute)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$decl attr-dict"

    def __init__(self, decl: DeclAttr, linkage: Sequence[str] = (), init: Attribute | None = None):
        props: dict[str, Attribute] = {"decl": decl}
        if linkage:
            props["linkage"] = ArrayAttr([StringAttr(link) for link in linkage])
        if init is not None:
            props["init"] = init
        super().__init__(properties=props)

    def verify_(self) -> None:
        _check_linkage(self, self.linkage)
        if self.decl.space.data == "reg":
            raise VerifyException("ptx.variable: registers are declared by ptx.reg_decl")

    def ptx_line(self) -> str:
        init = "" if self.init is None else f" = {initializer_text(self.init)}"
        return f"{_linkage_text(self.linkage)}{self.decl.ptx_text()}{init};"


@irdl_op_definition
class RegDeclOp(IRDLOperation):
    """`.reg .b32 %r<10>;` (registers `%r0` to `%r9`) or `.reg .pred %p;`: one value per
    register, which every instruction naming the register uses."""

    name = "ptx.reg_decl"
    reg_name = prop_def(StringAttr)
    count = opt_prop_def(IntAttr)
    regs = var_result_def(RegisterType)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$reg_name attr-dict `:` type($regs)"

    def __init__(self, reg_name: str, count: int | None, types: Sequence[RegisterType]):
        props: dict[str, Attribute] = {"reg_name": StringAttr(reg_name)}
        if count is not None:
            props["count"] = IntAttr(count)
        super().__init__(properties=props, result_types=[list(types)])

    @property
    def kind(self) -> str:
        return cast(RegisterType, self.regs[0].type).kind.data  # pyright: ignore[reportUnnecessaryCast]

    def verify_(self) -> None:
        name = self.reg_name.data
        if self.count is not None and self.count.data < 1:
            raise VerifyException(f"ptx.reg_decl: {name}<{self.count.data}> declares no register; the count is >= 1")
        expected = [name] if self.count is None else [f"{name}{i}" for i in range(self.count.data)]
        got = [r.type.register_name for r in self.regs]
        if got != expected:
            raise VerifyException(
                f"ptx.reg_decl: {name} declares {', '.join(expected)}; its results are {', '.join(got)}"
            )
        kinds = {r.type.kind.data for r in self.regs}
        if len(kinds) != 1:
            raise VerifyException(f"ptx.reg_decl: all registers of one declaration have one type, got {sorted(kinds)}")

    def ptx_line(self) -> str:
        count = "" if self.count is None else f"<{self.count.data}>"
        return f".reg .{self.kind} {self.reg_name.data}{count};"


@irdl_op_definition
class ScopeOp(IRDLOperation):
    """A `{ }` block statement: its declarations and labels are local to it (PTX ISA 9.0
    §4.4); registers of the enclosing scopes stay visible (as SSA values)."""

    name = "ptx.scope"
    body = region_def("single_block")
    traits = traits_def(NoTerminator())
    assembly_format = "$body attr-dict"

    def __init__(self, body: Region):
        super().__init__(regions=[body])


@irdl_op_definition
class PragmaOp(IRDLOperation):
    """`.pragma "nounroll";` as a statement or at module scope (PTX ISA 9.0 §11.5)."""

    name = "ptx.pragma"
    values = prop_def(ArrayAttr[StringAttr])
    assembly_format = "$values attr-dict"

    def __init__(self, values: Sequence[str]):
        super().__init__(properties={"values": ArrayAttr([StringAttr(v) for v in values])})

    def ptx_line(self) -> str:
        return ".pragma " + ", ".join(_quoted(v.data) for v in self.values) + ";"


def _quoted(text: str) -> str:
    """A PTX string literal; `text` is its source between the quotes, escapes kept."""
    return f'"{text}"'


@irdl_op_definition
class DebugTextOp(IRDLOperation):
    """A `.loc` or `.file` line or a `.section` block (DWARF debug data), kept verbatim:
    nothing executes it, but under `.target ..., debug` it shapes what ptxas emits."""

    name = "ptx.debug_text"
    text = prop_def(StringAttr)
    assembly_format = "$text attr-dict"

    def __init__(self, text: str):
        super().__init__(properties={"text": StringAttr(text)})

    def ptx_line(self) -> str:
        return self.text.data


@irdl_op_definition
class BranchTargetsOp(IRDLOperation):
    """`ts: .branchtargets L0, L1;`: the label list `brx.idx` indexes."""

    name = "ptx.branchtargets"
    sym_name = prop_def(StringAttr)
    labels = prop_def(ArrayAttr[StringAttr])
    assembly_format = "$sym_name $labels attr-dict"

    def __init__(self, sym_name: str, labels: Sequence[str]):
        super().__init__(
            properties={"sym_name": StringAttr(sym_name), "labels": ArrayAttr([StringAttr(x) for x in labels])}
        )

    def ptx_line(self) -> str:
        return f"{self.sym_name.data}: .branchtargets {', '.join(x.data for x in self.labels)};"


@irdl_op_definition
class CallTargetsOp(IRDLOperation):
    """`ct: .calltargets f0, f1;`: the functions an indirect `call` may reach."""

    name = "ptx.calltargets"
    sym_name = prop_def(StringAttr)
    functions = prop_def(ArrayAttr[StringAttr])
    assembly_format = "$sym_name $functions attr-dict"

    def __init__(self, sym_name: str, functions: Sequence[str]):
        super().__init__(
            properties={"sym_name": StringAttr(sym_name), "functions": ArrayAttr([StringAttr(x) for x in functions])}
        )

    def ptx_line(self) -> str:
        return f"{self.sym_name.data}: .calltargets {', '.join(x.data for x in self.functions)};"


def _params_text(params: ArrayAttr[DeclAttr], indent: str = "") -> str:
    if not params.data:
        return "()"
    if not indent:
        return "(" + ", ".join(p.ptx_text() for p in params) + ")"
    return "(\n" + ",\n".join(f"{indent}{p.ptx_text()}" for p in params) + "\n)"


@irdl_op_definition
class CallPrototypeOp(IRDLOperation):
    """`proto: .callprototype (.param .b32 _) _ (.param .b64 _);`: the signature of an
    indirect `call`."""

    name = "ptx.callprototype"
    sym_name = prop_def(StringAttr)
    returns = opt_prop_def(ArrayAttr[DeclAttr])
    params = opt_prop_def(ArrayAttr[DeclAttr])
    noreturn = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$sym_name attr-dict"

    def __init__(
        self, sym_name: str, returns: Sequence[DeclAttr] | None, params: Sequence[DeclAttr] | None, noreturn: bool
    ):
        props: dict[str, Attribute] = {"sym_name": StringAttr(sym_name)}
        if returns is not None:
            props["returns"] = ArrayAttr(returns)
        if params is not None:
            props["params"] = ArrayAttr(params)
        if noreturn:
            props["noreturn"] = UnitAttr()
        super().__init__(properties=props)

    def ptx_line(self) -> str:
        returns = "" if self.returns is None else f" {_params_text(self.returns)}"
        params = "" if self.params is None else f" {_params_text(self.params)}"
        noreturn = " .noreturn" if self.noreturn else ""
        return f"{self.sym_name.data}: .callprototype{returns} _{params}{noreturn};"


DIM3_DIRECTIVES = ("maxntid", "reqntid", "reqnctapercluster")
"""Performance directives with 1 to 3 extents (PTX ISA 9.0 §11.4)."""
INT_DIRECTIVES = ("minnctapersm", "maxnreg", "maxclusterrank")
"""Performance directives with one integer."""
FLAG_DIRECTIVES = ("explicitcluster", "noreturn")
"""Directives without arguments (`.noreturn`, §11.2.1, only on `.func`)."""
DIRECTIVE_ORDER = (
    "maxntid", "reqntid", "minnctapersm", "maxnreg", "explicitcluster", "reqnctapercluster", "maxclusterrank",
    "noreturn",
)  # fmt: skip
"""The order they are printed in: llc-22's."""


@irdl_op_definition
class FunctionOp(IRDLOperation):
    """A kernel (`.entry`) or device function (`.func`) of parsed PTX.

    Its performance directives are typed properties; `params` is absent when the
    header has no parameter list, `returns` when a `.func` has no return list. A
    prototype (`.extern .func f(...);`) has an empty body region. The body holds
    declarations, labels, `ptx.scope`s and instructions in program order.
    """

    name = "ptx.function"
    sym_name = prop_def(StringAttr)
    kind = prop_def(StringAttr)
    linkage = opt_prop_def(ArrayAttr[StringAttr])
    returns = opt_prop_def(ArrayAttr[DeclAttr])
    params = opt_prop_def(ArrayAttr[DeclAttr])
    maxntid = opt_prop_def(ArrayAttr[IntAttr])
    reqntid = opt_prop_def(ArrayAttr[IntAttr])
    reqnctapercluster = opt_prop_def(ArrayAttr[IntAttr])
    minnctapersm = opt_prop_def(IntAttr)
    maxnreg = opt_prop_def(IntAttr)
    maxclusterrank = opt_prop_def(IntAttr)
    explicitcluster = opt_prop_def(UnitAttr)
    noreturn = opt_prop_def(UnitAttr)
    pragmas = opt_prop_def(ArrayAttr[StringAttr])
    body = region_def()
    traits = traits_def(NoTerminator(), IsolatedFromAbove())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$kind $sym_name $body attr-dict"

    def __init__(self, sym_name: str, kind: str, body: Region, properties: dict[str, Attribute] | None = None):
        props: dict[str, Attribute] = {"sym_name": StringAttr(sym_name), "kind": StringAttr(kind)}
        props.update(properties or {})
        super().__init__(properties=props, regions=[body])

    def verify_(self) -> None:
        if self.kind.data not in ("entry", "func"):
            raise VerifyException(f"ptx.function: kind must be entry or func, got {self.kind.data}")
        _check_linkage(self, self.linkage)
        if len(self.body.blocks) > 1:
            raise VerifyException("ptx.function: the body is one block (a prototype has none)")
        for directive in DIM3_DIRECTIVES:
            extents = cast(ArrayAttr[IntAttr] | None, getattr(self, directive))
            if extents is not None and (not 1 <= len(extents) <= 3 or any(e.data < 1 for e in extents)):
                raise VerifyException(f"ptx.function: .{directive} takes 1 to 3 positive extents")
        if self.kind.data == "entry" and (self.returns is not None or self.noreturn is not None):
            raise VerifyException("ptx.function: a kernel (.entry) has no return parameters and no .noreturn")

    def header_text(self) -> str:
        lines = [f"{_linkage_text(self.linkage)}.{self.kind.data} "]
        if self.returns is not None:
            lines[0] += f"{_params_text(self.returns)} "
        lines[0] += self.sym_name.data
        if self.params is not None:
            lines[0] += _params_text(self.params, "\t")
        for directive in DIRECTIVE_ORDER:
            value = cast(ArrayAttr[IntAttr] | IntAttr | UnitAttr | None, getattr(self, directive))
            if isinstance(value, ArrayAttr):
                lines.append(f".{directive} {', '.join(str(e.data) for e in value)}")
            elif isinstance(value, IntAttr):
                lines.append(f".{directive} {value.data}")
            elif value is not None:
                lines.append(f".{directive}")
        for pragma in self.pragmas or ():
            lines.append(f".pragma {_quoted(pragma.data)};")
        return "\n".join(lines)
