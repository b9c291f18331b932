"""A faster `OpDef.verify` for ops whose operands, results, regions and successors are
not variadic: the same checks in the same order, without xDSL's per-call bookkeeping.

xDSL's `OpDef.verify` finds, on every call and for each of the four constructs, the
construct's definitions, its variadic ones and its segment-size option (a generator
over the options and a tuple built each time), then reads each operand through its
descriptor; ~60% of verifying a selected PTX instruction. Here that structure is read
once per `OpDef` into a plan: a construct without variadic definitions or a segment
option needs only its count compared, and its i-th value is `op.operands[i]` (what the
descriptor returns). Constructs with variadics keep xDSL's own step functions.

Exactness: the plan checks what xDSL checks, so it passes only where xDSL passes. When
any check fails, xDSL's `OpDef.verify` is run from the start (a fresh constraint
context) and raises its own error with its own message; the plan's error is dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Attribute, Operation
from xdsl.irdl.constraints import AttrConstraint, VerificationContext
from xdsl.irdl.operations import (
    AttrSizedOperandSegments,
    AttrSizedRegionSegments,
    AttrSizedResultSegments,
    AttrSizedSuccessorSegments,
    OpDef,
    OptAttributeDef,
    OptionalDef,
    OptPropertyDef,
    VariadicDef,
    VarIRConstruct,
    irdl_op_verify_arg_list,
    irdl_op_verify_regions,
    verify_variadic_size,
)
from xdsl.utils.exceptions import VerifyException

_xdsl_verify: Callable[[OpDef, Operation], None] = vars(OpDef).get("xdsl_verify", OpDef.verify)
"""xDSL's own verifier, run whenever the plan finds a violation (for its message); kept
on the class too, so that a reload of this module finds it."""

Verifier = Callable[[Operation], None]


def _fixed(op_def: OpDef, defs: Sequence[tuple[str, object]], option: type) -> bool:
    """Whether a construct has a fixed count: no variadic definition, no segment sizes."""
    return not any(isinstance(d, VariadicDef) for _, d in defs) and not any(
        isinstance(o, option) for o in op_def.options
    )


def _values_step(op_def: OpDef, construct: VarIRConstruct) -> Callable[[Operation, VerificationContext], None]:
    """Verify the operands or results: by position where fixed or with one variadic
    definition, else xDSL's step."""
    operands = construct == VarIRConstruct.OPERAND
    defs = op_def.operands if operands else op_def.results
    option = AttrSizedOperandSegments if operands else AttrSizedResultSegments
    variadic = [i for i, (_, d) in enumerate(defs) if isinstance(d, VariadicDef)]
    segmented = any(isinstance(o, option) for o in op_def.options)
    constraints = tuple(d.constr for _, d in defs)
    count = len(defs)
    if segmented or len(variadic) > 1:

        def general(op: Operation, context: VerificationContext) -> None:
            irdl_op_verify_arg_list(op, op_def, construct, context)  # pyright: ignore[reportArgumentType]

        return general
    if not variadic:

        def fixed(op: Operation, context: VerificationContext) -> None:
            values = op.operands if operands else op.results
            if len(values) != count:
                raise VerifyException("count")  # xDSL's message comes from its rerun
            for value, constraint in zip(values, constraints, strict=True):
                constraint.verify((value.type,), context)

        return fixed
    (at,) = variadic
    optional = isinstance(defs[at][1], OptionalDef)
    before, middle, after = constraints[:at], constraints[at], constraints[at + 1 :]

    def one_variadic(op: Operation, context: VerificationContext) -> None:
        # xDSL's accessors: the variadic takes what the others leave (an optional, 0 or 1)
        values = op.operands if operands else op.results
        extra = len(values) - count + 1
        if extra < 0 or (optional and extra > 1):
            raise VerifyException("count")
        for value, constraint in zip(values, before, strict=False):
            constraint.verify((value.type,), context)
        middle.verify(tuple(value.type for value in values[at : at + extra]), context)
        for value, constraint in zip(values[at + extra :], after, strict=True):
            constraint.verify((value.type,), context)

    return one_variadic


def _regions_step(op_def: OpDef) -> Callable[[Operation, VerificationContext], None]:
    if op_def.regions or not _fixed(op_def, op_def.regions, AttrSizedRegionSegments):

        def general(op: Operation, context: VerificationContext) -> None:
            irdl_op_verify_regions(op, op_def, context)

        return general

    def none(op: Operation, context: VerificationContext) -> None:
        if op.regions:
            raise VerifyException("regions")

    return none


def _successors_step(op_def: OpDef) -> Callable[[Operation], None]:
    if op_def.successors or not _fixed(op_def, op_def.successors, AttrSizedSuccessorSegments):

        def general(op: Operation) -> None:
            verify_variadic_size(op, op_def, VarIRConstruct.SUCCESSOR)

        return general

    def none(op: Operation) -> None:
        if op.successors:
            raise VerifyException("successors")

    return none


def _attributes_step(op_def: OpDef) -> Callable[[Operation, VerificationContext], None]:
    """Properties, then attributes, as `OpDef.verify` checks them."""
    properties = tuple((name, d.constr, isinstance(d, OptPropertyDef)) for name, d in op_def.properties.items())
    attributes = tuple((name, d.constr, isinstance(d, OptAttributeDef)) for name, d in op_def.attributes.items())
    defined = frozenset(op_def.properties)

    def check(op: Operation, context: VerificationContext) -> None:
        _verify_named(op.properties, properties, context)
        if not defined.issuperset(op.properties):
            raise VerifyException("undefined property")
        _verify_named(op.attributes, attributes, context)

    return check


def _verify_named(
    given: dict[str, Attribute], defs: tuple[tuple[str, AttrConstraint, bool], ...], context: VerificationContext
) -> None:
    """Each defined property or attribute (name, constraint, optional) present where required
    and meeting its constraint."""
    for name, constraint, optional in defs:
        if name in given:
            constraint.verify(given[name], context)
        elif not optional:
            raise VerifyException(f"{name} missing")


def plan(op_def: OpDef) -> Verifier:
    """The verifier of `op_def`'s invariants (module docstring)."""
    operands = _values_step(op_def, VarIRConstruct.OPERAND)
    results = _values_step(op_def, VarIRConstruct.RESULT)
    regions = _regions_step(op_def)
    successors = _successors_step(op_def)
    attributes = _attributes_step(op_def)

    def verify(op: Operation) -> None:
        try:
            context = VerificationContext()
            operands(op, context)
            results(op, context)
            regions(op, context)
            successors(op)
            attributes(op, context)
            for trait in op_def.traits:
                trait.verify(op)
        except Exception:  # xDSL's verifier decides and words the error
            _xdsl_verify(op_def, op)

    return verify


_PLAN = "_xdsl_tmem_plan"
"""The instance attribute of an `OpDef` holding its plan (not a dataclass field: an
`OpDef`'s equality and repr are unchanged)."""


def _planned_verify(op_def: OpDef, op: Operation) -> None:
    verifier: Verifier | None = op_def.__dict__.get(_PLAN)
    if verifier is None:
        verifier = plan(op_def)
        setattr(op_def, _PLAN, verifier)
    verifier(op)


def install() -> None:
    """Make `OpDef.verify` (what every IRDL op's `verify_` calls) run the op's plan."""
    setattr(OpDef, "xdsl_verify", _xdsl_verify)  # noqa: B010
    setattr(OpDef, "verify", _planned_verify)  # noqa: B010
