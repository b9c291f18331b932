"""`OpRewritePattern[OpT]`: a rewrite pattern typed by the op class it rewrites.

xDSL's `op_type_rewrite_pattern` reads the op type from a method's annotation and hides
it inside a closure; a pass cannot ask a pattern which ops it handles. Here the op type
is the class's type argument (as in MLIR's `OpRewritePattern<OpTy>`): read once when the
class is defined, checked in `match_and_rewrite`, and kept in `op_types`, so `rewrite`
receives the op typed (no casts) and a test can check a pass's patterns against a
dialect's op list.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from types import UnionType
from typing import Any, ClassVar, Generic, TypeGuard, TypeVar, Union, get_args, get_origin

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.hints import get_type_var_mapping

OpT = TypeVar("OpT", bound=Operation)


def _resolve(cls: type[Any]) -> tuple[type[Operation], ...]:
    """The op classes `cls` binds `OpT` to, through intermediate generic bases; none
    while it is still a type variable."""
    mapping: dict[object, object] = dict(get_type_var_mapping(cls)[1].items())
    arg: object = mapping.get(OpT)
    while isinstance(arg, TypeVar):
        arg = mapping.get(arg)
    if arg is None:
        return ()
    members: tuple[object, ...] = get_args(arg) if get_origin(arg) in (Union, UnionType) else (arg,)
    types: list[type[Operation]] = []
    for member in members:
        if not (isinstance(member, type) and issubclass(member, Operation)):
            raise TypeError(f"{cls.__qualname__}: the type argument must be Operation classes, got {member!r}")
        types.append(member)
    return tuple(types)


class OpRewritePattern(RewritePattern, ABC, Generic[OpT]):
    """Rewrites the ops of class `OpT` (a class or a union of classes):
    `class AllocLowering(OpRewritePattern[tmem.AllocOp])`. A subclass still generic in its
    op type is an abstract base: it has no `op_types` and cannot be instantiated."""

    op_types: ClassVar[tuple[type[Operation], ...]] = ()
    """The op classes this pattern rewrites (from the type argument)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.op_types = _resolve(cls)

    def __init__(self) -> None:
        if not self.op_types:
            name = type(self).__qualname__
            raise TypeError(f"{name} names no op class: subclass it with one, `class P({name}[SomeOp])`")

    def matches(self, op: Operation) -> TypeGuard[OpT]:
        return isinstance(op, self.op_types)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if self.matches(op):
            self.rewrite(op, rewriter)

    @abstractmethod
    def rewrite(self, op: OpT, rewriter: PatternRewriter, /) -> None: ...


def _may_match(pattern: RewritePattern, op_type: type[Operation]) -> bool:
    """Whether `pattern` may rewrite an op of class `op_type` (any pattern not typed by op class may)."""
    op_types: tuple[type[Operation], ...] | None = getattr(type(pattern), "op_types", None)
    return not isinstance(pattern, OpRewritePattern) or issubclass(op_type, op_types or ())


class OpTypeApplier(RewritePattern):
    """xDSL's `GreedyRewritePatternApplier` (no dead-code elimination, no folding) that
    tries on an op only the patterns that can match its class: each `OpRewritePattern`
    whose `op_types` contain it, and every other pattern, in the given order. The first
    pattern that changes the IR ends the op's turn, as there.

    The greedy applier asks every pattern of a pass about every op, ~20 `isinstance`
    checks where one or two patterns apply; here the candidates are looked up by class,
    once per class (its `op_types` checked with `issubclass`, as `matches` does)."""

    def __init__(self, patterns: Sequence[RewritePattern]) -> None:
        self.patterns = tuple(patterns)
        self._candidates: dict[type[Operation], tuple[RewritePattern, ...]] = {}

    def candidates(self, op_type: type[Operation]) -> tuple[RewritePattern, ...]:
        found = self._candidates.get(op_type)
        if found is None:
            found = tuple(p for p in self.patterns if _may_match(p, op_type))
            self._candidates[op_type] = found
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        for pattern in self.candidates(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return
