"""`irdl_op_definition` for our dialects: xDSL's, with the declarative assembly format
compiled on the op's first parse or print instead of when the class is defined.

xDSL compiles an op's `assembly_format` string into a `FormatProgram` in the decorator,
so importing a dialect parses every format it has: ~130 in tmem and nvvm alone, ~10% of
`xdsl-tmem-run`'s start-up, though a kernel uses a few dozen of its ops. Here the class
is defined by xDSL's decorator without the format, the format string is put back on the
class and its `OpDef` (both then read exactly as xDSL leaves them), and `parse` / `print`
compile it once, on first use, into the same `FormatProgram` xDSL would have built. An
invalid format string raises xDSL's `PyRDLOpDefinitionError` at that first use instead of
at import; tests/test_op_definition.py compiles every format of our dialects, so none is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, TypeVar

from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation
from xdsl.irdl import irdl_op_definition as xdsl_irdl_op_definition
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, PyRDLOpDefinitionError

from xdsl_tmem.dialects import op_builder, op_verifier

if TYPE_CHECKING:
    from xdsl.irdl.declarative_assembly_format import FormatProgram

OpT = TypeVar("OpT", bound=IRDLOperation)

op_verifier.install()  # every IRDL op verified by its plan (op_verifier.py), ours and xDSL's
op_builder.install()  # and built directly where it can be (op_builder.py)

_NOT_OWN = object()
"""Marks an `assembly_format` the class inherits rather than defines."""

_PROGRAMS: dict[type[Operation], Callable[[], FormatProgram]] = {}
"""Each op class defined here with a format: its (cached) compiler."""


def _has_custom_syntax(cls: type[Operation]) -> bool:
    """Whether the class defines its own `parse` or `print` (xDSL's decorator then
    refuses an assembly format too; it is left to raise that error itself)."""
    parse = cls.parse
    return cls.print != Operation.print or not inspect.ismethod(parse) or parse.__func__ != Operation.parse.__func__


def irdl_op_definition(cls: type[OpT]) -> type[OpT]:
    """xDSL's `irdl_op_definition`, the assembly format compiled on first use (above)."""
    text = cls.assembly_format
    if text is None or _has_custom_syntax(cls):
        return xdsl_irdl_op_definition(cls)
    own = cls.__dict__.get("assembly_format", _NOT_OWN)
    cls.assembly_format = None
    try:
        xdsl_irdl_op_definition(cls)
    finally:
        if own is _NOT_OWN:
            del cls.assembly_format
        else:
            cls.assembly_format = text
    op_def = cls.get_irdl_definition()
    op_def.assembly_format = text

    @cache
    def program() -> FormatProgram:
        from xdsl.irdl.declarative_assembly_format import FormatProgram

        try:
            return FormatProgram.from_str(text, op_def)
        except ParseError as e:  # as xDSL's decorator reports it
            raise PyRDLOpDefinitionError("Error during the parsing of the assembly format: ", e.args) from e

    def parse(op_type: type[OpT], parser: Parser) -> OpT:
        return program().parse(parser, op_type)

    def print_(op: OpT, printer: Printer) -> None:
        program().print(printer, op)

    setattr(cls, "parse", classmethod(parse))  # noqa: B010
    setattr(cls, "print", print_)  # noqa: B010
    _PROGRAMS[cls] = program
    return cls


def format_program(op_type: type[Operation]) -> FormatProgram | None:
    """The compiled assembly format of an op class defined above (compiling it now), or
    None for an op without one."""
    program = _PROGRAMS.get(op_type)
    return program() if program is not None else None
