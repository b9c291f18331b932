"""Located diagnostics for every error our tools report.

xDSL parses without recording where each operation came from, and its verifier
reports a failure by printing the whole module with the failing op underlined.
A compiler user wants `file:line:col: error: message` and the offending line, as
MLIR prints. `LocatingParser` records the source span of every op it parses in a
`SourceMap`; `verify_located` finds the innermost op that fails verification; and
`Diagnostic` renders the result. Ops created later by passes have no span; they
are reported by their printed form and the nearest located ancestor.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from io import StringIO
from weakref import WeakKeyDictionary

from xdsl.context import Context
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span


class LocatedError(DiagnosticException):
    """An error raised by our code about a specific operation (e.g. a pass failure)."""

    def __init__(self, op: Operation, message: str):
        super().__init__(message)
        self.op = op
        self.message = message


@dataclass
class SourceMap:
    """Where each parsed operation starts in its source text."""

    spans: WeakKeyDictionary[Operation, Span] = field(default_factory=WeakKeyDictionary[Operation, Span])
    line_offset: int = 0
    """Added to every line number (used by `--split-input-file` chunks)."""

    def diagnostic(self, op: Operation, message: str) -> Diagnostic:
        """A diagnostic about `op`, located at its source or at its nearest located parent."""
        note = None
        if op not in self.spans:
            note = f"the operation (created by a pass) is: {_op_summary(op)}"
        return Diagnostic(message, self.span_of(op), note)

    def span_of(self, op: Operation) -> Span | None:
        current: Operation | None = op
        while current is not None:
            if (span := self.spans.get(current)) is not None:
                return dataclasses.replace(span, line_offset=self.line_offset)
            current = current.parent_op()
        return None


class LocatingParser(Parser):
    """An xDSL `Parser` that records the span of every operation it parses.

    It also turns exceptions raised while building an operation (an attribute
    whose `verify` fails, a builder that rejects its input) into a `ParseError`
    located at the start of that operation, instead of an unlocated traceback.
    """

    def __init__(self, ctx: Context, input: str | bytes, name: str, source_map: SourceMap):
        super().__init__(ctx, input, name)
        self.source_map = source_map

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        try:
            op = super().parse_operation()
        except ParseError:
            raise
        except (VerifyException, ValueError, TypeError, KeyError, AssertionError) as e:
            raise ParseError(start, str(e) or type(e).__name__) from e
        self.source_map.spans[op] = start
        return op


@dataclass
class Diagnostic:
    """One error, rendered MLIR-style: `file:line:col: error: message`."""

    message: str
    span: Span[str] | Span[bytes] | None = None
    note: str | None = None

    def render(self) -> str:
        out = StringIO()
        if self.span is None:
            out.write(f"error: {self.message}\n")
        else:
            loc = self.span.get_location()
            out.write(f"{loc}: error: {self.message}\n")
            text = self.span.input.content
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            start = text.rfind("\n", 0, self.span.start) + 1
            end = text.find("\n", self.span.start)
            line = text[start : end if end >= 0 else len(text)]
            out.write(f"{line}\n{' ' * (self.span.start - start)}^\n")
        if self.note is not None:
            out.write(f"note: {self.note}\n")
        return out.getvalue()


def _op_summary(op: Operation) -> str:
    text = StringIO()
    Printer(stream=text, print_generic_format=True).print_op(op.clone_without_regions())
    first = text.getvalue().strip().splitlines()
    return first[0] if first else op.name


def find_failing_op(root: Operation) -> tuple[Operation, VerifyException] | None:
    """The first op, innermost first, whose own verification fails."""
    for op in root.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            return op, e
    return None


def verify_located(root: Operation, source_map: SourceMap) -> None:
    """Verify `root`; on failure raise `DiagnosticError` naming the failing op."""
    try:
        root.verify()
    except VerifyException as e:
        found = find_failing_op(root)
        if found is None:
            raise DiagnosticError(Diagnostic(_message(e))) from e
        op, err = found
        raise DiagnosticError(source_map.diagnostic(op, _message(err))) from e


class DiagnosticError(DiagnosticException):
    """Carries a located diagnostic up to the driver."""

    def __init__(self, diagnostic: Diagnostic):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


def _message(e: BaseException) -> str:
    if isinstance(e, OSError):
        return f"{e.strerror}: {e.filename}" if e.filename else str(e)
    return str(e.args[0]) if e.args else type(e).__name__


def diagnose(e: BaseException, source_map: SourceMap) -> Diagnostic:
    """Turn any error our tools can meet into a `Diagnostic`."""
    match e:
        case DiagnosticError():
            return e.diagnostic
        case ParseError():
            return Diagnostic(e.msg, dataclasses.replace(e.span, line_offset=source_map.line_offset))
        case LocatedError():
            return source_map.diagnostic(e.op, e.message)
        case _:
            return Diagnostic(_message(e))
