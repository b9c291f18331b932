"""The planned `OpDef.verify` (dialects/op_verifier.py) decides and words every error as
xDSL's own verifier does: checked on each op class of the examples at every level
(tmem, nvvm, ptx) and on broken copies of one op of each class."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr, i1, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.irdl.operations import AttrSizedOperandSegments, OpDef, VariadicDef
from xdsl.parser import Parser

from xdsl_tmem.backend.target import to_ptx_module
from xdsl_tmem.dialects import op_verifier
from xdsl_tmem.tools.opt import TmemOptMain

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.mlir"))
Outcome = tuple[type[BaseException], str] | None


def _modules(path: Path) -> Iterator[Operation]:
    tool = TmemOptMain(["-p", "lower-tmem"])
    yield Parser(tool.ctx, path.read_text()).parse_module()
    lowered = Parser(tool.ctx, path.read_text()).parse_module()
    tool.apply_passes(lowered)
    yield lowered
    assert isinstance(lowered, ModuleOp)
    yield to_ptx_module(lowered)


def _one_per_class() -> dict[type[Operation], Operation]:
    ops: dict[type[Operation], Operation] = {}
    for path in EXAMPLES:
        for module in _modules(path):
            for op in module.walk():
                ops.setdefault(type(op), op)
    return ops


def _outcome(check: Callable[[], None]) -> Outcome:
    try:
        check()
    except Exception as e:  # the outcome compared is any error
        return type(e), str(e)
    return None


def _broken(op: Operation) -> Iterator[tuple[str, Operation]]:
    """Copies of `op` (no regions) with one thing wrong each: counts, types, properties."""
    other: SSAValue = Block(arg_types=[i1]).args[0]
    operands, results = list(op.operands), [r.type for r in op.results]
    props, attrs = dict(op.properties), dict(op.attributes)

    def make(
        operands: list[SSAValue] = operands,
        results: list[Attribute] = results,
        props: dict[str, Attribute] = props,
        attrs: dict[str, Attribute] = attrs,
    ) -> Operation:
        return type(op).create(operands=operands, result_types=results, properties=props, attributes=attrs)

    yield "as is", make()
    yield "an extra operand", make(operands=[*operands, other])
    yield "an extra result", make(results=[*results, i64])
    yield "an undefined property", make(props={**props, "bogus": StringAttr("x")})
    if operands:
        yield "one operand fewer", make(operands=operands[:-1])
        yield "an i1 first operand", make(operands=[other, *operands[1:]])
        yield "an i1 last operand", make(operands=[*operands[:-1], other])
    if results:
        yield "one result fewer", make(results=results[:-1])
        yield "an i1 result", make(results=[i1, *results[1:]])
    for name in props:
        yield f"no property {name}", make(props={k: v for k, v in props.items() if k != name})
        yield f"property {name} an i1", make(props={**props, name: i1})
    for name in attrs:
        yield f"no attribute {name}", make(attrs={k: v for k, v in attrs.items() if k != name})


OPS = _one_per_class()


@pytest.mark.parametrize("op", list(OPS.values()), ids=lambda op: op.name)
def test_the_plan_decides_and_words_errors_as_xdsl(op: Operation) -> None:
    if not isinstance(op, IRDLOperation):
        pytest.skip("not an IRDL op")
    op_def = type(op).get_irdl_definition()
    xdsl_verify: Callable[[OpDef, Operation], None] = getattr(OpDef, "xdsl_verify")  # noqa: B009
    verifier = op_verifier.plan(op_def)
    for what, broken in _broken(op):
        expected = _outcome(lambda broken=broken: xdsl_verify(op_def, broken))
        assert _outcome(lambda broken=broken: verifier(broken)) == expected, what


def _operand_kind(op_def: OpDef) -> str:
    variadic = sum(isinstance(d, VariadicDef) for _, d in op_def.operands)
    segmented = any(isinstance(o, AttrSizedOperandSegments) for o in op_def.options)
    return "general" if segmented or variadic > 1 else "one variadic" if variadic else "fixed"


def test_the_examples_meet_every_kind_of_operand_step() -> None:
    """The comparison above covers each of the plan's operand steps, not only one."""
    kinds = {_operand_kind(type(op).get_irdl_definition()) for op in OPS.values() if isinstance(op, IRDLOperation)}
    assert kinds == {"fixed", "one variadic", "general"}


def test_a_wrong_operand_count_reads_as_xdsl_words_it() -> None:
    op = next(op for op in OPS.values() if isinstance(op, IRDLOperation) and op.name == "arith.addi")
    broken = type(op).create(operands=[op.operands[0]], result_types=[op.results[0].type])
    with pytest.raises(Exception, match=r"^Expected 2 operands, but got 1\n"):
        broken.verify()
