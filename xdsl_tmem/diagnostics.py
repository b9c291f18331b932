"""Located diagnostics for every error our tools report.

xDSL parses without recording where each operation came from, and its verifier
reports a failure by printing the whole module with the failing op underlined.
A compiler user wants `file:line:col: error: message` and the offending line, as
MLIR prints. `LocatingParser` records the source span of every op it parses in a
`SourceMap`; `verify_located` finds the innermost op that fails verification; and
`Diagnostic` renders the result. Ops created later by passes have no span; they
are reported by their printed form and the nearest located ancestor.

Both drivers read their input through `parse_source`: malformed input (bytes that
are not UTF-8, nesting deeper than `MAX_NESTING`, unregistered ops, undefined
values) is a located parse error, never a traceback; see docs/development.md.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field
from io import StringIO
from weakref import WeakKeyDictionary

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind

MAX_NESTING = 256
"""The deepest bracket nesting (`(`, `[`, `{`, `<`) an input may have.

xDSL parses, verifies and prints recursively, a few Python frames per level:
without a bound a 10,000-deep input ends in RecursionError (mlir-opt-22 itself
segfaults on it). Real kernels nest a few dozen levels at most."""

RECURSION_LIMIT = 20_000
"""Python frames the drivers allow: room for every recursive walk (parser,
verifier, printer, passes, interpreter) over IR nested `MAX_NESTING` deep, which
needs about 10 frames per level. Python 3.11 runs Python-to-Python calls without
growing the C stack, so this depth cannot overflow the (8 MiB) C stack: measured,
a 10,000-level parse (~100,000 frames) completed; tests/test_malformed.py runs
IR at the limit through both drivers and recurses `RECURSION_LIMIT` frames deep."""

_SURROGATE = re.compile("[\udc80-\udcff]")
_OPENING = frozenset((MLIRTokenKind.L_PAREN, MLIRTokenKind.L_SQUARE, MLIRTokenKind.L_BRACE, MLIRTokenKind.LESS))
_CLOSING = frozenset((MLIRTokenKind.R_PAREN, MLIRTokenKind.R_SQUARE, MLIRTokenKind.R_BRACE, MLIRTokenKind.GREATER))
_SIGILS = {"%": "SSA value", "^": "block", "#": "attribute alias", "!": "type alias"}


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


PARSED_SOURCES: WeakKeyDictionary[Operation, SourceMap] = WeakKeyDictionary()
"""The source map of each `ptx.module` the PTX front end read from a file (`load_ptx`):
reports about its instructions name the user's file and line, not the line of the
text our printer would write (interpreter/ptx/kernel.py, `number_lines`)."""


def decode_source(data: bytes) -> str:
    """The text of an input file; bytes that are not UTF-8 become lone surrogates.

    `TmemLexer` reports such a byte where a token needs it, `check_source` inside a
    string literal; inside a comment it is ignored, as mlir-opt-22 does."""
    return data.decode("utf-8", "surrogateescape")


def _byte_of(char: str) -> int:
    return ord(char) - 0xDC00


class TmemLexer(MLIRLexer):
    """xDSL's MLIR lexer with messages that say what is wrong and what is allowed.

    Whitespace and comments as upstream's lexer (mlir/lib/AsmParser/Lexer.cpp)
    has them: a `//` comment also ends at `\r`, a NUL byte is whitespace, and
    `\v`/`\f` are not whitespace."""

    _whitespace_regex = re.compile(r"(//[^\n\r]*|[ \t\n\r\x00]+)*")
    # xDSL's `"(?:[^"\\...]+|...)*"` backtracks exponentially on an unterminated
    # string literal (a 40-character one takes minutes); one character per step is linear.
    _unescaped_characters_regex = re.compile(r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')

    def lex(self) -> MLIRToken:
        try:
            return super().lex()
        except ParseError as e:
            raise self._explain(e) from None

    def _explain(self, e: ParseError) -> ParseError:
        text = self.input.content
        start = e.span.start
        char = text[start] if start < len(text) else ""
        if _SURROGATE.fullmatch(char):
            return ParseError(
                Span(start, start + 1, self.input),
                f"invalid UTF-8: byte 0x{_byte_of(char):02X} does not start a UTF-8 character "
                "(the input must be UTF-8 text)",
            )
        if e.msg.startswith("Unexpected character") and char:
            return ParseError(Span(start, start + 1, self.input), f"unexpected character {char!r} (U+{ord(char):04X})")
        if e.msg.startswith("Expected suffix identifier") and char in _SIGILS:
            return ParseError(
                Span(start, start + 1, self.input),
                f"invalid {_SIGILS[char]} name after '{char}': expected digits, or a letter or one of '$._-' "
                "followed by letters, digits and '$._-'",
            )
        return e


def check_source(text: str, name: str) -> None:
    """Reject, with a location, what the recursive parser must not meet.

    Brackets nested deeper than `MAX_NESTING`, and a string literal holding bytes
    that are not UTF-8 (xDSL strings are text). Scanning stops at the first
    token the lexer refuses: the parser reports that error when it gets there."""
    lexer = TmemLexer(Input(text, name))
    depth = 0
    while True:
        try:
            token = lexer.lex()
        except ParseError:
            return
        kind = token.kind
        if kind == MLIRTokenKind.EOF:
            return
        if kind in _OPENING:
            depth += 1
            if depth > MAX_NESTING:
                raise ParseError(
                    token.span,
                    f"nesting too deep: more than {MAX_NESTING} open brackets ('(', '[', '{{', '<'); regions, "
                    f"attributes and types may nest at most {MAX_NESTING} levels",
                )
        elif kind in _CLOSING:
            depth = max(0, depth - 1)
        elif kind in (MLIRTokenKind.STRING_LIT, MLIRTokenKind.BYTES_LIT) and (
            bad := _SURROGATE.search(token.span.text)
        ):
            byte = _byte_of(bad.group())
            at = token.span.start + bad.start()
            raise ParseError(
                Span(at, at + 1, token.span.input),
                f"invalid UTF-8 in a string literal: byte 0x{byte:02X}; write a non-UTF-8 byte as the escape "
                f"\\{byte:02X}",
            )


@contextmanager
def recursion_headroom() -> Generator[None]:
    """Allow `RECURSION_LIMIT` Python frames while a driver runs."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def parse_source(
    ctx: Context, data: bytes | str, name: str, source_map: SourceMap, *, implicit_module: bool = True
) -> ModuleOp:
    """Read one input (file or `--split-input-file` chunk) into a module; not verified.

    The one entry point of both drivers: invalid UTF-8 and over-deep nesting are
    located parse errors, and an input with no operations (empty, or only
    comments) is an empty module, as in mlir-opt-22."""
    text = decode_source(data) if isinstance(data, bytes) else data
    check_source(text, name)
    return LocatingParser(ctx, text, name, source_map).parse_module(implicit_module)


def load_source(ctx: Context, data: bytes | str, name: str, source_map: SourceMap) -> ModuleOp:
    """`parse_source`, then `verify_located`."""
    module = parse_source(ctx, data, name, source_map)
    verify_located(module, source_map)
    return module


class LocatingParser(Parser):
    """An xDSL `Parser` that records the span of every operation it parses.

    It also turns exceptions raised while building an operation (an attribute
    whose `verify` fails, a builder that rejects its input) into a `ParseError`
    located at the start of that operation, instead of an unlocated traceback;
    it lexes with `TmemLexer`, and reports an unregistered op at its name.
    """

    def __init__(self, ctx: Context, input: str | bytes, name: str, source_map: SourceMap):
        text = decode_source(input) if isinstance(input, bytes) else input
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(TmemLexer(Input(text, name)))
        self.source_map = source_map
        self._op_name_span: Span | None = None

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        if self._at_eof():
            if not allow_implicit_module:
                self.raise_error("expected a builtin.module operation (--no-implicit-module), found no operation")
            return ModuleOp([])
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError as e:
            if e.msg.startswith("values used but not defined") and (located := self._first_undefined_use()):
                raise located from None
            if allow_implicit_module and self._at_eof() and e.msg.startswith("Could"):
                return ModuleOp([])  # only alias definitions: an empty module, as in mlir-opt-22
            raise

    def _at_eof(self) -> bool:
        return self._current_token.kind == MLIRTokenKind.EOF

    def _first_undefined_use(self) -> ParseError | None:
        """xDSL reports undefined values at the end of the input; point at the first use instead."""
        uses: list[tuple[int, str, Span]] = []
        for name, values in self.forward_ssa_references.items():
            for value in values.values():
                for use in value.uses:
                    if (span := self.source_map.spans.get(use.operation)) is not None:
                        uses.append((span.start, name, span))
        if not uses:
            return None
        _, name, span = min(uses, key=lambda use: use[0])
        return ParseError(span, f"use of undefined value %{name}: no operation or block argument in scope defines it")

    def _parse_op_result_list(self) -> list[tuple[Span, int]]:
        results = super()._parse_op_result_list()
        self._op_name_span = self._current_token.span
        return results

    def _get_op_by_name(self, name: str) -> type[Operation]:
        if (op_type := self.ctx.get_optional_op(name, dialect_stack=self._parser_state.dialect_stack)) is not None:
            return op_type
        dialect, dot, _ = name.partition(".")
        if not dot:
            message = f"unknown operation '{name}': an operation name is 'dialect.op'"
        elif dialect not in self.ctx.registered_dialect_names:
            message = f"unregistered operation '{name}': no dialect '{dialect}' is registered"
        else:
            message = f"unregistered operation '{name}': dialect '{dialect}' has no such operation"
        self.raise_error(message, self._op_name_span)

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
        message = _SURROGATE.sub("\ufffd", self.message)
        if self.span is None:
            out.write(f"error: {message}\n")
        else:
            loc = self.span.get_location()
            out.write(f"{loc}: error: {message}\n")
            text = self.span.input.content
            if isinstance(text, bytes):
                text = text.decode("utf-8", "replace")
            text = _SURROGATE.sub("\ufffd", text)
            start = text.rfind("\n", 0, self.span.start) + 1
            end = text.find("\n", self.span.start)
            line, column = _excerpt(text[start : end if end >= 0 else len(text)], self.span.start - start)
            out.write(f"{line}\n{' ' * column}^\n")
        if self.note is not None:
            out.write(f"note: {self.note}\n")
        return out.getvalue()


EXCERPT = 160
"""The most characters of a source line a diagnostic shows."""


def _excerpt(line: str, column: int) -> tuple[str, int]:
    """The part of a source line a diagnostic shows, and the caret's column in it: control
    characters (binary input) become U+FFFD one for one, so the caret stays aligned, and a
    line longer than `EXCERPT` is cut to a window around the column, marked with `…`."""
    line = "".join(c if c.isprintable() or c == "\t" else "\ufffd" for c in line)
    if len(line) <= EXCERPT:
        return line, column
    first = max(0, min(column - EXCERPT // 2, len(line) - EXCERPT))
    head = "…" if first > 0 else ""
    tail = "…" if first + EXCERPT < len(line) else ""
    return head + line[first : first + EXCERPT] + tail, column - first + len(head)


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
    from xdsl_tmem.verifier import module_violations  # the dialects import this module

    try:
        root.verify()
    except VerifyException as e:
        found = find_failing_op(root)
        if found is None:
            raise DiagnosticError(Diagnostic(_message(e))) from e
        op, err = found
        raise DiagnosticError(source_map.diagnostic(op, _message(err))) from e
    for op, message in module_violations(root):
        raise DiagnosticError(source_map.diagnostic(op, message))


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
