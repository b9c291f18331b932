"""Labels, branches and returns."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    traits_def,
)

from xdsl_tmem.dialects.ptx.base import Instruction, Namer, Reg
from xdsl_tmem.dialects.ptx.qualifiers import check_only_register
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
