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
