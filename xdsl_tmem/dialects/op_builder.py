"""A faster `irdl_op_init` (what every IRDL op's `__init__` calls) for the common build:
an op without variadic definitions, segment or same-size options, regions or
successors, given one `SSAValue` per operand and one attribute per result type.

xDSL's builder formats an error prefix, normalises each operand and region argument and
walks each construct's definitions on every call, ~25% of the lowering's and of the
instruction selection's time. For the build above its result is simply the operands,
the result types, and the properties and attributes without their `None` entries; this
builds exactly that. Any other build (an `Operation` or a list as an operand, a list or
`None` as a result type, a wrong count, variadics, options, regions, successors) goes to
xDSL's builder, which builds it or raises its own error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, cast

from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import operations
from xdsl.irdl.operations import IRDLOperation, OpDef, OptionalDef, VariadicDef

XdslInit = Callable[..., None]
_xdsl_init: XdslInit = vars(operations).get("xdsl_irdl_op_init", operations.irdl_op_init)
"""xDSL's builder, for every build the fast one does not take (kept on the module too,
so that a reload of this file finds it)."""

_PLAN = "_xdsl_tmem_builder"
"""The instance attribute of an `OpDef`: its plan, or False where the fast build never
applies."""

_SSA: dict[type, bool] = {}
"""Per class: whether its instances are `SSAValue`s (an operand xDSL keeps as it is)."""
_PLAIN: dict[type, bool] = {}
"""Per class: whether its instances are attributes that are no `Sequence` (a result
type xDSL keeps as it is; a sequence is a list of them)."""

SINGLE, OPTIONAL, VARIADIC = 0, 1, 2
"""A definition's kind: one value, at most one, any number."""

Plan = tuple[tuple[int, ...], tuple[int, ...]]
"""The kinds of an op's operand definitions, and of its result definitions."""


class _Fallback(Exception):
    """The build is not the common one: xDSL's builder does it."""


def _kinds(defs: Sequence[tuple[str, object]]) -> tuple[int, ...]:
    return tuple(
        OPTIONAL if isinstance(d, OptionalDef) else VARIADIC if isinstance(d, VariadicDef) else SINGLE for _, d in defs
    )


def plan(op_def: OpDef) -> Plan | Literal[False]:
    """The kinds of the operand and result definitions; False with options (segment or
    same-size), regions or successors, which xDSL's builder handles."""
    if op_def.options or op_def.regions or op_def.successors:
        return False
    return _kinds(op_def.operands), _kinds(op_def.results)


def _is(value: object, known: dict[type, bool], base: type, excluded: type | None) -> bool:
    kind = type(value)
    found = known.get(kind)
    if found is None:
        found = known[kind] = issubclass(kind, base) and not (excluded is not None and issubclass(kind, excluded))
    return found


def _build(
    args: Sequence[object], kinds: tuple[int, ...], known: dict[type, bool], base: type, excluded: type | None,
    none_ok: bool,
) -> list[Any]:  # fmt: skip
    """What `irdl_build_arg_list` builds from `args` in the common case, else `_Fallback`:
    a single value, a list or tuple of values (one only for a single definition, at most
    one for an optional), None (no value) for an optional (or, with `none_ok`, a
    variadic) definition."""
    if len(args) != len(kinds):
        raise _Fallback
    built: list[Any] = []
    for arg, kind in zip(args, kinds, strict=True):
        if _is(arg, known, base, excluded):
            built.append(arg)
        elif arg is None:
            if kind == SINGLE or (kind == VARIADIC and not none_ok):
                raise _Fallback
        elif type(arg) in (list, tuple):
            values = cast(Sequence[object], arg)
            if (kind == SINGLE and len(values) != 1) or (kind == OPTIONAL and len(values) > 1):
                raise _Fallback
            if not all(_is(v, known, base, excluded) for v in values):
                raise _Fallback
            built.extend(values)
        else:
            raise _Fallback
    return built


def _without_none(values: Mapping[str, Attribute | None]) -> dict[str, Attribute]:
    return {name: value for name, value in values.items() if value is not None}


def irdl_op_init(
    self: IRDLOperation,
    op_def: OpDef,
    *,
    operands: Sequence[Any],
    result_types: Sequence[Any],
    properties: Mapping[str, Attribute | None],
    attributes: Mapping[str, Attribute | None],
    successors: Sequence[Any],
    regions: Sequence[Any],
) -> None:
    """xDSL's `irdl_op_init`, the common build done directly (module docstring)."""
    found = op_def.__dict__.get(_PLAN)
    if found is None:
        found = plan(op_def)
        setattr(op_def, _PLAN, found)
    try:
        if found is False or successors or regions:
            raise _Fallback
        operand_kinds, result_kinds = cast(Plan, found)
        # an operand None is no value (xDSL makes it []), a result type None only for an optional
        built_operands = _build(operands, operand_kinds, _SSA, SSAValue, None, True)
        built_results = _build(result_types, result_kinds, _PLAIN, Attribute, Sequence, False)
    except _Fallback:
        _xdsl_init(
            self, op_def, operands=operands, result_types=result_types, properties=properties,
            attributes=attributes, successors=successors, regions=regions,
        )  # fmt: skip
        return
    Operation.__init__(
        self,
        operands=built_operands,
        result_types=built_results,
        properties=_without_none(properties),
        attributes=_without_none(attributes),
        successors=[],
        regions=[],
    )


def install() -> None:
    """Make IRDL ops' `__init__` build through `irdl_op_init` above."""
    setattr(operations, "xdsl_irdl_op_init", _xdsl_init)  # noqa: B010
    setattr(operations, "irdl_op_init", irdl_op_init)  # noqa: B010
