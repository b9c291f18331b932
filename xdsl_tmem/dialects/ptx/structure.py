"""Module structure: `.shared` globals, entries and the module."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    ArrayAttr,
    IntAttr,
    StringAttr,
)
from xdsl.ir import Attribute, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.traits import IsolatedFromAbove, NoTerminator

# --------------------------------------------------------------------------------------
# Module structure
# --------------------------------------------------------------------------------------


@irdl_op_definition
class GlobalOp(IRDLOperation):
    """`.shared .align A .b8 name[size];` (or a scalar `.bN name;`)."""

    name = "ptx.global"
    sym_name = prop_def(StringAttr)
    space = prop_def(StringAttr)
    alignment = prop_def(IntAttr)
    elem = prop_def(StringAttr)  # "b8", "b32", "b64", ...
    count = opt_prop_def(IntAttr)  # array length; absent for a scalar
    assembly_format = "$space $sym_name `align` $alignment $elem (`[` $count^ `]`)? attr-dict"

    def __init__(self, sym_name: str, space: str, alignment: int, elem: str, count: int | None):
        props: dict[str, Attribute] = {
            "sym_name": StringAttr(sym_name),
            "space": StringAttr(space),
            "alignment": IntAttr(alignment),
            "elem": StringAttr(elem),
        }
        if count is not None:
            props["count"] = IntAttr(count)
        super().__init__(properties=props)

    def ptx_line(self) -> str:
        size = "" if self.count is None else f"[{self.count.data}]"
        return f".{self.space.data} .align {self.alignment.data} .{self.elem.data} {self.sym_name.data}{size};"


@irdl_op_definition
class EntryOp(IRDLOperation):
    """`.visible .entry name(.param ...) directives { body }`.

    `params` are the `.param` declarations (e.g. `.u64 .ptr .global .align 1 k_param_0`);
    `directives` the performance directives (`.maxntid 160, 1, 1`, ...). The body is a
    flat instruction list.
    """

    name = "ptx.entry"
    sym_name = prop_def(StringAttr)
    params = prop_def(ArrayAttr[StringAttr])
    directives = prop_def(ArrayAttr[StringAttr])
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), IsolatedFromAbove())
    assembly_format = "$sym_name `params` $params `directives` $directives $body attr-dict"

    def __init__(self, sym_name: str, params: Sequence[str], directives: Sequence[str], body: Region):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "params": ArrayAttr([StringAttr(p) for p in params]),
                "directives": ArrayAttr([StringAttr(d) for d in directives]),
            },
            regions=[body],
        )


@irdl_op_definition
class ModuleOp(IRDLOperation):
    """A PTX module: `.version`, `.target`, `.address_size 64`, globals and entries."""

    name = "ptx.module"
    version = prop_def(StringAttr)
    target = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), IsolatedFromAbove())
    assembly_format = "`version` $version `target` $target $body attr-dict"

    def __init__(self, version: str, target: str, body: Region):
        super().__init__(properties={"version": StringAttr(version), "target": StringAttr(target)}, regions=[body])
