"""Labels, branches and returns."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    base,
    operand_def,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
)

from xdsl_tmem.dialects.op_definition import irdl_op_definition
from xdsl_tmem.dialects.ptx.base import Instruction, Namer, Reg, RegisterType, SymbolType
from xdsl_tmem.dialects.ptx.qualifiers import check_only_register, operand_text, register_class, reject
from xdsl_tmem.dialects.traits import WarpLocal


@irdl_op_definition
class LabelOp(IRDLOperation):
    """A branch target: `name:`."""

    name = "ptx.label"
    label = prop_def(StringAttr)
    assembly_format = "$label attr-dict"

    def __init__(self, label: str):
        super().__init__(properties={"label": StringAttr(label)})


@irdl_op_definition
class BraOp(Instruction):
    """`[@p] bra[.uni] label` — `.uni` when the guard is warp-uniform."""

    name = "ptx.bra"
    target = prop_def(StringAttr)
    uniform = opt_prop_def(UnitAttr)

    def __init__(self, target: str, guard: SSAValue | None = None, negated: bool = False, uniform: bool = False):
        props: dict[str, Attribute] = {"target": StringAttr(target)}
        if negated:
            props["negated"] = UnitAttr()
        if uniform:
            props["uniform"] = UnitAttr()
        super().__init__(operands=[guard], properties=props)

    def mnemonic(self) -> str:
        return "bra.uni" if self.uniform else "bra"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [self.target.data]


@irdl_op_definition
class RetOp(Instruction):
    name = "ptx.ret"

    def __init__(self):
        super().__init__(operands=[None])

    def mnemonic(self) -> str:
        return "ret"

    def ptx_operands(self, name: Namer) -> list[str]:
        return []


@irdl_op_definition
class TrapOp(Instruction):
    """`trap`: abort the kernel with an error. Warp-local: whether a warp traps depends
    only on its own registers, and the abort ends every schedule alike."""

    traits = traits_def(WarpLocal())
    name = "ptx.trap"

    def __init__(self):
        super().__init__(operands=[None])

    def mnemonic(self) -> str:
        return "trap"

    def ptx_operands(self, name: Namer) -> list[str]:
        return []


@irdl_op_definition
class BrxIdxOp(Instruction):
    """`[@p] brx.idx[.uni] index, tlist`: branch to the `index`-th label of the
    `.branchtargets` list `tlist` (`index` a `.b32` register; out of range is undefined).
    A branch: warp-local, as `bra`."""

    traits = traits_def(WarpLocal())
    name = "ptx.brx_idx"
    targets = prop_def(StringAttr)
    uniform = opt_prop_def(UnitAttr)
    index = operand_def(Reg)

    RULE: ClassVar[str] = "PTX ISA 9.0, Control Flow Instructions: brx.idx"

    def __init__(self, index: SSAValue, targets: str, *, uniform: bool = False):
        props: dict[str, Attribute] = {"targets": StringAttr(targets)}
        if uniform:
            props["uniform"] = UnitAttr()
        super().__init__(operands=[index, None], properties=props)

    def mnemonic(self) -> str:
        return "brx.idx.uni" if self.uniform else "brx.idx"

    def ptx_operands(self, name: Namer) -> list[str]:
        return [name(self.index), self.targets.data]

    def verify_(self) -> None:
        check_only_register(self, "index", self.index, "b32", self.RULE)


_IDENTIFIER = re.compile(r"[A-Za-z_$%][\w$]*")
CALL_RULE = "PTX ISA 9.0, Control Flow Instructions: call"


def _param_list(name: Namer, values: Sequence[SSAValue]) -> str:
    return "(" + ", ".join(name(v) for v in values) + ")"


class _Call(Instruction):
    """What direct and indirect calls share: `.uni`, the return and argument lists.
    Warp-local, as `bra`: a call moves control and the thread's own `.param` values."""

    traits = traits_def(WarpLocal())
    uniform = opt_prop_def(UnitAttr)
    returns = var_operand_def(base(SymbolType))
    args = var_operand_def(base(SymbolType))
    irdl_options = (AttrSizedOperandSegments(as_property=True),)

    def mnemonic(self) -> str:
        return "call.uni" if self.uniform else "call"

    def _call_text(self, name: Namer, function: str) -> list[str]:
        parts = [_param_list(name, self.returns)] if self.returns else []
        return [*parts, function, _param_list(name, self.args)]


@irdl_op_definition
class CallOp(_Call):
    """`[@p] call[.uni] [(r0, ...),] f, (a0, ...);`: a direct call of the `.func` `f`;
    its return values and arguments are `.param` variables of the caller (the call
    sequence llc-22 emits: `{ .param .b32 param0; st.param ...; call.uni (retval0), f,
    (param0); ld.param ...; }`). `.uni` asserts that the active threads agree on the
    guard (PTX ISA 9.0, `call`)."""

    name = "ptx.call"
    callee = prop_def(StringAttr)

    def __init__(
        self, callee: str, returns: Sequence[SSAValue] = (), args: Sequence[SSAValue] = (), *, uniform: bool = False
    ):
        props: dict[str, Attribute] = {"callee": StringAttr(callee)}
        if uniform:
            props["uniform"] = UnitAttr()
        super().__init__(operands=[returns, args, None], properties=props)

    def ptx_operands(self, name: Namer) -> list[str]:
        return self._call_text(name, self.callee.data)

    def verify_(self) -> None:
        if not _IDENTIFIER.fullmatch(self.callee.data):
            raise reject(self, f"call target {self.callee.data!r}", "a .func name", CALL_RULE)
        self._check_signature()

    def _check_signature(self) -> None:
        """The callee's parameter and return lists have the call's lengths (ptxas:
        "Call has wrong number of parameters"), when the module declares it."""
        from xdsl_tmem.dialects.ptx.structure import FunctionOp, ModuleOp

        module = self.parent_op()
        while module is not None and not isinstance(module, ModuleOp):
            module = module.parent_op()
        if module is None:
            return
        callee = self.callee.data
        for function in module.body.block.ops:
            if not isinstance(function, FunctionOp) or function.sym_name.data != callee:
                continue
            if function.kind.data != "func":
                raise reject(self, f"calling the kernel {callee}", "a call names a .func (a kernel is launched)",
                             CALL_RULE)  # fmt: skip
            for what, declared, given in (
                ("arguments", function.params, self.args),
                ("return values", function.returns, self.returns),
            ):
                count = len(declared) if declared is not None else 0
                if count != len(given):
                    raise reject(self, f"{len(given)} {what} for {callee}", f".func {callee} declares {count}",
                                 CALL_RULE)  # fmt: skip
            return


@irdl_op_definition
class CallIndirectOp(_Call):
    """`[@p] call[.uni] [(r0, ...),] %fp, (a0, ...), proto;`: an indirect call through
    the function address in `%fp`, with the `.callprototype` (or `.calltargets`) label
    that gives its signature (PTX ISA 9.0, `call`)."""

    name = "ptx.call_indirect"
    address = operand_def(Reg)
    prototype = prop_def(StringAttr)

    def ptx_operands(self, name: Namer) -> list[str]:
        return [*self._call_text(name, name(self.address)), self.prototype.data]

    def verify_(self) -> None:
        # ptxas takes a 32- or 64-bit register ("Illegal target for instruction 'call'" for .b16).
        kind = self.address.type.kind.data if isinstance(self.address.type, RegisterType) else ""
        if register_class(kind) not in ("b32", "b64"):
            raise reject(self, f"function address {operand_text(self.address)}", "it must be a .b32 or .b64 register",
                         CALL_RULE)  # fmt: skip
        if not _IDENTIFIER.fullmatch(self.prototype.data):
            raise reject(self, f"prototype {self.prototype.data!r}", "a .callprototype or .calltargets label",
                         CALL_RULE)  # fmt: skip
