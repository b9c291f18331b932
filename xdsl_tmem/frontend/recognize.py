"""Recognition: every parsed `ptx.inst` whose text is exactly a typed instruction's
form becomes that typed op (docs/ptx-frontend.md, "Recognition").

There is no table of spellings here. A typed op's text is defined once, by its
`mnemonic()` and `ptx_operands()`; recognition inverts them by enumeration:

1. For every typed instruction class of the `ptx` dialect, every value of its finite
   properties (enum attributes, unit flags, absent optional ones) and every operand
   shape (optional operands present or not, variadic ones of 0..128), the op's own
   `mnemonic()` is computed once per process and indexed: mnemonic -> forms.
2. A form's operand text is the op's own `ptx_operands()` printed with placeholders
   for its operands and results and sentinels for its open properties (an address
   offset, a branch target), compiled once into a pattern.
3. A `ptx.inst` is matched against the forms of its mnemonic; a match binds each
   placeholder to a register, literal, symbol or special register, and each sentinel
   to its value. The typed op is built from them and accepted only if it prints
   exactly the instruction's line and passes its verifier; otherwise the instruction
   stays `ptx.inst` (the interpreter refuses it, naming opcode and line).

Registers: sources stay SSA uses of their `ptx.reg_decl` values, as the parser made
them; each destination becomes a result of the typed op, of the declared register's
type (registers are named by type, as in the backend). The guard, its negation and
the parser's source location carry over.
"""

from __future__ import annotations

import itertools
import re
import struct
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache

from xdsl.context import Context
from xdsl.dialects.builtin import (
    FloatAttr,
    IntAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    f32,
    f64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    BaseAttr,
    OptOperandDef,
    OptPropertyDef,
    OptResultDef,
    VarOperandDef,
    VarResultDef,
)
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from xdsl_tmem.backend.printer import operand_text
from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.dialects import ptx
from xdsl_tmem.dialects.ptx.generic import arg_text

VARIADIC_COUNTS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 16, 32, 64, 128)
"""Lengths tried for a variadic operand or result list: vectors (`.v2 .v4 .v8`),
tcgen05.ld/st register lists (powers of two up to 128), the disable-output-lane
vector (4 or 8), tensor coordinates (1 to 5), a call's arguments (up to 8), none."""

_SENTINEL = 987_650_000
"""Integer properties (address offsets) take `_SENTINEL + i` in a form's template."""

_OPERAND = r"(-?[^\s,\[\]{}|()+-]+)"
"""One operand token: a register, literal, symbol or special register (a sign only
in front)."""

_TOKEN = re.compile(r"\x00([ors])(\d+)\x00|\+?(" + str(_SENTINEL)[:5] + r"\d{4})")


# --------------------------------------------------------------------------------------
# Forms: the typed ops' own text, enumerated
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Form:
    """One spelling of a typed instruction: its class, operand shape and the values of
    its finite properties. Open properties (`IntAttr`, `StringAttr`) are bound by
    matching."""

    cls: type[ptx.Instruction]
    operand_counts: tuple[int, ...]
    """Per operand definition (the guard excluded): 1, 0/1 (optional), a length."""
    result_counts: tuple[int, ...]
    props: tuple[tuple[str, Attribute], ...]


class NotEnumerable(TypeError):
    """A typed op whose forms cannot be enumerated: a property that is neither finite
    (enum, unit) nor open (`IntAttr`, `StringAttr`), or an open one in its mnemonic.
    Its instructions stay generic; `test_every_typed_instruction_has_forms` names it."""


def _property_domain(cls: type[ptx.Instruction], name: str) -> list[Attribute | None] | None:
    """The values a finite property takes (None: absent), or None for an open one."""
    definition = cls.get_irdl_definition().properties[name]
    constr = definition.constr
    if not isinstance(constr, BaseAttr):
        raise NotEnumerable(f"{cls.name}: property {name} has no base attribute ({constr})")
    attr = constr.attr
    if attr is IntAttr or attr is StringAttr:
        return None
    if attr is UnitAttr:
        values: list[Attribute | None] = [UnitAttr()]
    elif issubclass(attr, EnumAttribute):
        values = [attr(value) for value in attr.enum_type]  # pyright: ignore[reportUnknownVariableType, reportUnknownMemberType]
    else:
        raise NotEnumerable(f"{cls.name}: property {name} of {attr.__name__} cannot be enumerated")
    return [None, *values] if isinstance(definition, OptPropertyDef) else values


_SKIPPED_PROPERTIES = frozenset({"negated", "operandSegmentSizes", "resultSegmentSizes"})


def _counts(definitions: Sequence[object]) -> Iterator[tuple[int, ...]]:
    choices = [
        VARIADIC_COUNTS
        if isinstance(d, VarOperandDef | VarResultDef) and not isinstance(d, OptOperandDef | OptResultDef)
        else (0, 1)
        if isinstance(d, OptOperandDef | OptResultDef)
        else (1,)
        for d in definitions
    ]
    return itertools.product(*choices)


class _Placeholders:
    """Operand stand-ins for templates (never part of a module)."""

    def __init__(self) -> None:
        self.values: list[SSAValue] = []

    def get(self, count: int) -> list[SSAValue]:
        while len(self.values) < count:
            self.values.append(ptx.RegisterOp(ptx.RegisterType("b32", len(self.values))).result)
        return self.values[:count]


_PLACEHOLDERS = _Placeholders()


def _template(
    cls: type[ptx.Instruction], operand_counts: tuple[int, ...], result_counts: tuple[int, ...]
) -> tuple[ptx.Instruction, dict[SSAValue, str], dict[str, Attribute]]:
    """The op built with placeholders (operands `\\x00oN\\x00`, results `\\x00rN\\x00`) and
    sentinels for its open properties."""
    definition = cls.get_irdl_definition()
    operand_defs = [d for name, d in definition.operands if name != "guard"]
    stand_ins = iter(_PLACEHOLDERS.get(sum(operand_counts)))
    operands: list[SSAValue | Sequence[SSAValue] | None] = []
    for d, count in zip(operand_defs, operand_counts, strict=True):
        values = [next(stand_ins) for _ in range(count)]
        if isinstance(d, VarOperandDef) and not isinstance(d, OptOperandDef):
            operands.append(values)
        else:
            operands.append(values[0] if values else None)
    operands.append(None)  # the guard
    result_types: list[Attribute | Sequence[Attribute] | None] = []
    for d, count in zip((d for _, d in definition.results), result_counts, strict=True):
        types = [ptx.RegisterType("b32", 0)] * count
        if isinstance(d, VarResultDef) and not isinstance(d, OptResultDef):
            result_types.append(types)
        else:
            result_types.append(types[0] if types else None)
    open_props: dict[str, Attribute] = {}
    for i, name in enumerate(n for n in definition.properties if n not in _SKIPPED_PROPERTIES):
        if _property_domain(cls, name) is None:
            attr = definition.properties[name].constr
            assert isinstance(attr, BaseAttr)
            open_props[name] = IntAttr(_SENTINEL + i) if attr.attr is IntAttr else StringAttr(f"\x00s{i}\x00")
    op = cls.build(operands=operands, result_types=result_types, properties=open_props)
    names = {value: f"\x00o{i}\x00" for i, value in enumerate(_PLACEHOLDERS.values[: sum(operand_counts)])}
    names.update({result: f"\x00r{i}\x00" for i, result in enumerate(op.results)})
    return op, names, open_props


def _instruction_classes() -> list[type[ptx.Instruction]]:
    return [op for op in ptx.PTX.operations if issubclass(op, ptx.Instruction) and op is not ptx.InstOp]


@cache
def mnemonic_index() -> dict[str, tuple[Form, ...]]:
    """Every typed form, by the mnemonic its op derives (built once per process)."""
    index: dict[str, list[Form]] = {}
    for cls in _instruction_classes():
        try:
            forms = list(_forms(cls))
        except NotEnumerable:
            continue
        for mnemonic, form in forms:
            index.setdefault(mnemonic, []).append(form)
    return {k: tuple(v) for k, v in index.items()}


def _forms(cls: type[ptx.Instruction]) -> Iterator[tuple[str, Form]]:
    """(mnemonic, form) for every operand shape and finite property value of `cls`."""
    definition = cls.get_irdl_definition()
    finite = {
        name: domain
        for name in definition.properties
        if name not in _SKIPPED_PROPERTIES and (domain := _property_domain(cls, name)) is not None
    }
    operand_defs = [d for name, d in definition.operands if name != "guard"]
    result_defs = [d for _, d in definition.results]
    for operand_counts, result_counts in itertools.product(_counts(operand_defs), list(_counts(result_defs))):
        # One op per shape; only its properties change (cheap: no op is built per form).
        op, _, open_props = _template(cls, operand_counts, result_counts)
        fixed = {k: v for k, v in op.properties.items() if k not in finite}
        for values in itertools.product(*finite.values()):
            chosen = tuple((k, v) for k, v in zip(finite, values, strict=True) if v is not None)
            op.properties = {**fixed, **open_props, **dict(chosen)}
            try:
                mnemonic = op.mnemonic()
            except Exception:  # a shape the op cannot print (e.g. no destination)
                continue
            if _TOKEN.search(mnemonic):
                raise NotEnumerable(f"{cls.name}: an open property is part of its mnemonic {mnemonic!r}")
            yield mnemonic, Form(cls, operand_counts, result_counts, chosen)
        op.drop_all_references()


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    groups: tuple[tuple[str, int], ...]
    """Per capture group: (`o` operand / `r` result / `s` string property / `i` integer
    property, its number)."""


@cache
def _pattern(form: Form) -> _Pattern | None:
    """The form's operand text (its own `ptx_operands()`) as a pattern."""
    op, names, _ = _template(form.cls, form.operand_counts, form.result_counts)
    op.properties = {**op.properties, **dict(form.props)}
    try:
        text = ", ".join(op.ptx_operands(lambda value: names[value]))
    except Exception:  # a shape the op cannot print
        return None
    finally:
        op.drop_all_references()
    parts: list[str] = []
    groups: list[tuple[str, int]] = []
    end = 0
    for token in _TOKEN.finditer(text):
        parts.append(re.escape(text[end : token.start()]))
        end = token.end()
        if token.group(3) is not None:
            index = int(token.group(3)) - _SENTINEL
            groups.append(("i", index))
            parts.append(r"((?:\+-?\d+)?)" if token.group(0).startswith("+") else r"(-?\d+)")
        else:
            groups.append((token.group(1), int(token.group(2))))
            parts.append(_OPERAND)
    parts.append(re.escape(text[end:]))
    return _Pattern(re.compile("".join(parts)), tuple(groups))


# --------------------------------------------------------------------------------------
# Matching one instruction
# --------------------------------------------------------------------------------------

_REGISTER_TOKEN = re.compile(r"\x01(\d+)\x01")
_SYMBOL = re.compile(r"[A-Za-z_$][\w$]*")


def _literal(text: str) -> Operation | None:
    """The pseudo-op of an operand that is no register: an immediate, a special
    register or a symbol; None if the text is none of these."""
    if re.fullmatch(r"-?\d+|0x[0-9A-F]+", text):  # (`arg_text` spells values above 2^63-1 in hex)
        value = int(text, 0)
        for width in (32, 64):
            if -(1 << (width - 1)) <= value < 1 << width:
                return ptx.ImmOp.integer(value, IntegerType(width))
        return None
    if re.fullmatch(r"0f[0-9A-F]{8}", text):
        return ptx.ImmOp(FloatAttr(struct.unpack(">f", bytes.fromhex(text[2:]))[0], f32))
    if re.fullmatch(r"0d[0-9A-F]{16}", text):
        return ptx.ImmOp(FloatAttr(struct.unpack(">d", bytes.fromhex(text[2:]))[0], f64))
    if text.startswith("%"):
        return ptx.SpecialOp(text)
    if _SYMBOL.fullmatch(text):
        return ptx.SymbolOp(text)
    return None


@dataclass
class Match:
    """A typed op for a `ptx.inst`, with the operand pseudo-ops it needs."""

    op: ptx.Instruction
    pseudo: list[Operation]


def _build(inst: ptx.InstOp, form: Form, pattern: _Pattern, found: re.Match[str]) -> Match | None:
    definition = form.cls.get_irdl_definition()
    operand_values: dict[int, SSAValue] = {}
    result_types: dict[int, Attribute] = {}
    props: dict[str, Attribute] = dict(form.props)
    pseudo: list[Operation] = []
    open_names = [n for n in definition.properties if n not in _SKIPPED_PROPERTIES]
    for (kind, number), text in zip(pattern.groups, found.groups(), strict=True):
        register = _REGISTER_TOKEN.fullmatch(text)
        if kind == "r":  # a destination: a declared register
            if register is None:
                return None
            result_types[number] = inst.regs[int(register.group(1))].type
        elif kind == "o":
            if register is not None:
                operand_values[number] = inst.regs[int(register.group(1))]
            elif (literal := _literal(text)) is not None:
                pseudo.append(literal)
                operand_values[number] = literal.results[0]
            else:
                return None
        elif kind == "s":
            if register is not None or "\x01" in text:
                return None
            props[open_names[number]] = StringAttr(text)
        elif text or not isinstance(definition.properties[open_names[number]], OptPropertyDef):
            props[open_names[number]] = IntAttr(int(text.removeprefix("+")) if text else 0)
        # (an optional offset not written stays absent: `mov d, sym` has none)
    operands: list[SSAValue | Sequence[SSAValue] | None] = []
    next_operand = 0
    for (_, d), count in zip((x for x in definition.operands if x[0] != "guard"), form.operand_counts, strict=True):
        if any(next_operand + i not in operand_values for i in range(count)):
            return None  # an operand the form does not print
        values = [operand_values[next_operand + i] for i in range(count)]
        next_operand += count
        variadic = isinstance(d, VarOperandDef) and not isinstance(d, OptOperandDef)
        operands.append(values if variadic else values[0] if values else None)
    operands.append(inst.guard)
    results: list[Attribute | Sequence[Attribute] | None] = []
    next_result = 0
    for (_, d), count in zip(definition.results, form.result_counts, strict=True):
        types = [result_types[next_result + i] for i in range(count)]
        next_result += count
        variadic = isinstance(d, VarResultDef) and not isinstance(d, OptResultDef)
        results.append(types if variadic else types[0] if types else None)
    if inst.negated is not None:
        props["negated"] = UnitAttr()
    op = form.cls.build(operands=operands, result_types=results, properties=props)
    return Match(op, pseudo)


_WRITTEN_ZERO = re.compile(r"\+0\]")


def matches(inst: ptx.InstOp, *, zero_offsets: bool = False) -> tuple[list[Match], list[str]]:
    """The typed ops whose text is exactly `inst`'s and that verify, and the verifier
    messages of those whose text matched but that did not verify.

    `zero_offsets`: an address written `[a+0]` also reads as the typed op that prints
    `[a]` (PTX ISA, "Addresses as Operands": the offset is added to the base), where no
    form prints it as written. Only where the spelling does not change the SASS: not
    under `.target ..., debug` (see `recognize`)."""
    tokens = {value: f"\x01{i}\x01" for i, value in reversed(list(enumerate(inst.regs)))}
    text = ", ".join(arg_text(arg, inst.regs, lambda value: tokens[value]) for arg in inst.args)
    line = inst.ptx_line(operand_text)
    found, refused = _matches(inst, text, {line})
    if not found and zero_offsets and _WRITTEN_ZERO.search(line):
        found, refused = _matches(inst, text, {line, _WRITTEN_ZERO.sub("]", line)})
    return found, refused


def _matches(inst: ptx.InstOp, text: str, lines: set[str]) -> tuple[list[Match], list[str]]:
    """The verified typed ops whose operands match `text` and that print one of `lines`."""
    found: list[Match] = []
    refused: list[str] = []
    for form in mnemonic_index().get(inst.mnemonic(), ()):
        pattern = _pattern(form)
        if pattern is None or (bound := pattern.regex.fullmatch(text)) is None:
            continue
        match = _build(inst, form, pattern, bound)
        if match is None or match.op.ptx_line(operand_text) not in lines:
            continue
        # Verified in the instruction's place: some rules read the enclosing function
        # (`st.param` writes only a `.func`'s own parameters or a call's arguments).
        # `verify_()` (IRDL constraints, then the op's rules): `verify()` would print the
        # whole module into the message of every refused form.
        block = inst.parent_block()
        if block is not None:
            block.insert_op_before(match.op, inst)
        try:
            match.op.verify_()
        except VerifyException as e:
            refused.append(str(e))
            continue
        finally:
            if block is not None:
                block.detach_op(match.op)
        found.append(match)
    return found, refused


# --------------------------------------------------------------------------------------
# The module
# --------------------------------------------------------------------------------------


@dataclass
class Coverage:
    """What recognition did to a module: instruction counts and what stayed generic."""

    total: int = 0
    recognized: int = 0
    unrecognized: Counter[str] = field(default_factory=Counter[str])
    """Mnemonics (opcode and modifiers) that stayed `ptx.inst`, with counts."""
    refused: dict[str, str] = field(default_factory=dict[str, str])
    """Per mnemonic whose text matched a typed form: the verifier's objection."""


def _debug_target(inst: Operation) -> bool:
    """Whether `inst` is in a `.target ..., debug` module: there ptxas compiles a written
    `[a+0]` differently from `[a]` (docs/ptx-frontend.md), so the spelling must stay."""
    module = inst.parent_op()
    while module is not None and not isinstance(module, ptx.ModuleOp):
        module = module.parent_op()
    return module is not None and any(o.data == "debug" for o in module.target_options or ())


def recognize(module: Operation, source_map: SourceMap | None = None) -> Coverage:
    """Replace every `ptx.inst` under `module` that is exactly a typed instruction's
    form by that typed op (in place); the rest stay `ptx.inst`."""
    coverage = Coverage()
    for inst in [op for op in module.walk() if isinstance(op, ptx.Instruction)]:
        coverage.total += 1
        if not isinstance(inst, ptx.InstOp):
            coverage.recognized += 1
            continue
        found, refused = matches(inst, zero_offsets=not _debug_target(inst))
        if not found:
            coverage.unrecognized[inst.mnemonic()] += 1
            if refused:
                coverage.refused.setdefault(inst.mnemonic(), refused[0])
            continue
        match = found[0]
        block = inst.parent_block()
        assert block is not None
        block.insert_ops_before([*match.pseudo, match.op], inst)
        if source_map is not None and (span := source_map.spans.get(inst)) is not None:
            for op in (*match.pseudo, match.op):
                source_map.spans[op] = span
        block.erase_op(inst)
        coverage.recognized += 1
    return coverage


@dataclass(frozen=True)
class RecognizePtxPass(ModulePass):
    """`recognize-ptx`: `recognize` on a module of parsed PTX in its MLIR form (a `.ptx`
    file is recognized as it is read)."""

    name = "recognize-ptx"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        recognize(op)
