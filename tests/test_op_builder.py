"""The fast IRDL op builder (dialects/op_builder.py) builds what xDSL's `irdl_op_init`
builds, and fails where it fails with its error: each op class of the examples at every
level (tmem, nvvm, ptx), built from its own operands and result types given in each way
a builder may give them."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr, UnrealizedConversionCastOp, i1, i32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.irdl import operations as irdl_operations
from xdsl.parser import Parser

from xdsl_tmem.backend.target import to_ptx_module
from xdsl_tmem.dialects import op_builder
from xdsl_tmem.tools.opt import TmemOptMain

EXAMPLES = sorted((Path(__file__).resolve().parent.parent / "examples").glob("*.mlir"))
Build = dict[str, Any]


def _one_per_class() -> dict[type[Operation], Operation]:
    ops: dict[type[Operation], Operation] = {}
    tool = TmemOptMain(["-p", "lower-tmem"])
    for path in EXAMPLES:
        source = Parser(tool.ctx, path.read_text()).parse_module()
        lowered = Parser(tool.ctx, path.read_text()).parse_module()
        tool.apply_passes(lowered)
        assert isinstance(lowered, ModuleOp)
        for module in (source, lowered, to_ptx_module(lowered)):
            for op in module.walk():
                ops.setdefault(type(op), op)
    # a variadic result (the lowering's casts do not outlive it)
    ops[UnrealizedConversionCastOp] = UnrealizedConversionCastOp.get(Block(arg_types=[i1]).args, [i32, i1])
    return ops


def _fresh(value: object) -> object:
    """A definition's operand (one, a sequence, None) as new values of the same types."""
    if value is None:
        return None
    if isinstance(value, SSAValue):
        return Block(arg_types=[cast(SSAValue[Attribute], value).type]).args[0]
    return list(Block(arg_types=[v.type for v in cast(Sequence[SSAValue[Attribute]], value)]).args)


def _types(value: object) -> object:
    if value is None:
        return None
    if isinstance(value, SSAValue):
        return cast(SSAValue[Attribute], value).type
    return [v.type for v in cast(Sequence[SSAValue[Attribute]], value)]


def _listed(value: object) -> list[object]:
    """An entry as a list: None as none, a value as one."""
    if value is None:
        return []
    return list(cast(list[object], value)) if isinstance(value, list) else [value]


def _builds(op: IRDLOperation) -> Iterator[tuple[str, Build]]:
    """`op`'s operands (fresh values of their types) and result types, one entry per
    definition, given as values, lists, None, with one entry too many or too few, and
    odd properties."""
    op_def = type(op).get_irdl_definition()
    operands = [_fresh(getattr(op, name)) for name, _ in op_def.operands]
    results = [_types(getattr(op, name)) for name, _ in op_def.results]
    extra = Block(arg_types=[i1]).args[0]
    base: Build = {"operands": operands, "result_types": results, "properties": dict(op.properties),
                   "attributes": dict(op.attributes), "successors": [], "regions": []}  # fmt: skip
    yield "as defined", base
    yield "lists", {**base, "operands": [_listed(v) for v in operands], "result_types": [_listed(t) for t in results]}
    yield "tuples", {**base, "operands": [tuple(_listed(v)) for v in operands]}
    yield "None operands", {**base, "operands": [None] * len(operands)}
    yield "None results", {**base, "result_types": [None] * len(results)}
    yield "empty lists", {**base, "operands": [[] for _ in operands], "result_types": [[] for _ in results]}
    yield "pairs", {**base, "operands": [[extra, extra] for _ in operands], "result_types": [[i1, i1] for _ in results]}
    yield "an extra operand", {**base, "operands": [*operands, extra]}
    yield "an extra result", {**base, "result_types": [*results, i1]}
    yield "a None property", {**base, "properties": {**base["properties"], "p": None}}
    yield "a None attribute", {**base, "attributes": {**base["attributes"], "a": None, "b": StringAttr("b")}}
    yield "an op as operand", {**base, "operands": [op] * len(operands)}
    if operands:
        yield "one operand fewer", {**base, "operands": operands[:-1]}
    if results:
        yield "one result fewer", {**base, "result_types": results[:-1]}


def _outcome(init: Callable[..., None], op_type: type[IRDLOperation], build: Build) -> object:
    op = op_type.__new__(op_type)
    try:
        init(op, op_type.get_irdl_definition(), **build)
    except Exception as e:  # the outcome compared is any error
        return type(e), str(e)
    return (
        tuple(op.operands), op.result_types, op.properties, op.attributes,
        len(op.regions), tuple(op.successors),
    )  # fmt: skip


OPS = _one_per_class()
XDSL_INIT: Callable[..., None] = getattr(irdl_operations, "xdsl_irdl_op_init")  # noqa: B009


@pytest.mark.parametrize("op", list(OPS.values()), ids=lambda op: op.name)
def test_the_fast_build_is_xdsls(op: Operation) -> None:
    if not isinstance(op, IRDLOperation):
        pytest.skip("not an IRDL op")
    for what, build in _builds(op):
        expected = _outcome(XDSL_INIT, type(op), build)
        assert _outcome(op_builder.irdl_op_init, type(op), build) == expected, what


def test_ops_build_through_the_fast_builder() -> None:
    assert irdl_operations.irdl_op_init is op_builder.irdl_op_init


def test_the_examples_meet_each_kind_of_definition() -> None:
    """The comparison above covers single, optional and variadic definitions, and ops
    the fast build leaves to xDSL."""
    plans = [op_builder.plan(type(op).get_irdl_definition()) for op in OPS.values() if isinstance(op, IRDLOperation)]
    kinds = {kind for plan in plans if isinstance(plan, tuple) for defs in plan for kind in defs}
    assert kinds == {op_builder.SINGLE, op_builder.OPTIONAL, op_builder.VARIADIC}
    assert False in plans
