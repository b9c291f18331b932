"""PTX text → the `ptx` dialect.

lark parses the text (`grammar.py`); `Builder` turns the tree into a `ptx.module`:
every declaration, label, scope and instruction becomes an op whose source span is
recorded in the `SourceMap`, so later diagnostics (a refused instruction, a hazard)
point at the PTX line. Every instruction becomes a `ptx.inst`. Errors — syntax, an
undeclared register, a directive out of place — are `ParseError`s located at the
offending token, which the drivers print as `file:line:col: error: ...`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, cast

from lark import Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from xdsl.dialects.builtin import ArrayAttr, IntAttr, ModuleOp, StringAttr, UnitAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input, Span

from xdsl_tmem.diagnostics import MAX_NESTING, PARSED_SOURCES, SourceMap, decode_source, verify_located
from xdsl_tmem.dialects import ptx
from xdsl_tmem.dialects.ptx.structure import (
    DIM3_DIRECTIVES,
    FLAG_DIRECTIVES,
    INT_DIRECTIVES,
    LINKAGES,
    STATE_SPACES,
    TARGET_OPTIONS,
    VARIABLE_TYPES,
)
from xdsl_tmem.frontend.grammar import ptx_parser
from xdsl_tmem.frontend.recognize import recognize

OpT = TypeVar("OpT", bound=Operation)

SPECIAL_REGISTERS = frozenset(
    (
        "%tid", "%ntid", "%laneid", "%warpid", "%nwarpid", "%ctaid", "%nctaid", "%smid", "%nsmid", "%gridid",
        "%is_explicit_cluster", "%clusterid", "%nclusterid", "%cluster_ctaid", "%cluster_nctaid",
        "%cluster_ctarank", "%cluster_nctarank", "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge",
        "%lanemask_gt", "%clock", "%clock_hi", "%clock64", "%globaltimer", "%globaltimer_lo", "%globaltimer_hi",
        "%reserved_smem_offset_begin", "%reserved_smem_offset_end", "%reserved_smem_offset_cap",
        "%reserved_smem_offset_0", "%reserved_smem_offset_1", "%total_smem_size", "%aggr_smem_size",
        "%dynamic_smem_size", "%current_graph_exec",
    )
)  # fmt: skip
"""PTX ISA 9.0 chapter 10, "Special Registers" (plus `%pmN`, `%pmN_64`, `%envregN` below)."""
_NOT_UTF8 = re.compile("[\udc80-\udcff]")
_NUMBERED_SPECIAL = re.compile(r"%(pm[0-7](_64)?|envreg([0-9]|[12][0-9]|3[01]))")

_TOKEN_DESCRIPTIONS = {
    "WORD": "a name",
    "DIRECTIVE": "a directive (.name)",
    "INT": "an integer",
    "NUMBER": "a version number",
    "HEX_FLOAT": "a float (0f.../0d...)",
    "DEC_FLOAT": "a float",
    "STRING": 'a string ("...")',
    "PLUS_MINUS": "an offset (+N)",
    "$END": "end of input",
}


def _describe(terminal: str) -> str:
    if terminal in _TOKEN_DESCRIPTIONS:
        return _TOKEN_DESCRIPTIONS[terminal]
    try:
        pattern = ptx_parser().get_terminal(terminal).pattern
    except KeyError:
        return terminal
    return f"'{pattern.value}'" if pattern.type == "str" else terminal


def _syntax_error(e: UnexpectedInput, source: Input) -> ParseError:
    """lark's error as a located message saying what was expected."""
    match e:
        case UnexpectedCharacters():
            at = cast(int, e.pos_in_stream)
            char = source.content[at] if at < len(source.content) else ""
            return ParseError(Span(at, at + 1, source), f"unexpected character {char!r} in PTX")
        case UnexpectedToken():
            token = cast(Token, e.token)
            expected = sorted({_describe(t) for t in e.accepts or e.expected})
            if token.type == "$END":
                at = len(source.content)
                got = "end of input"
            else:
                at = token.start_pos or 0
                got = f"'{token}'"
            return ParseError(Span(at, at + max(1, len(token)), source), f"expected {_join(expected)}; got {got}")
        case UnexpectedEOF():
            at = len(source.content)
            return ParseError(
                Span(at, at, source), f"unexpected end of input; expected {_join(sorted(map(_describe, e.expected)))}"
            )
        case _:
            return ParseError(Span(0, 0, source), str(e))


def _join(items: Sequence[str]) -> str:
    if len(items) <= 1:
        return "".join(items) or "nothing"
    return ", ".join(items[:-1]) + " or " + items[-1]


def parse_int(text: str) -> tuple[int, bool]:
    """A PTX integer literal (§4.5.1): decimal, `0x` hex, `0b` binary, octal with a
    leading 0; a `U` suffix makes it unsigned."""
    unsigned = text.endswith("U")
    body = text.removesuffix("U").lower()
    if body.startswith("0x"):
        return int(body[2:], 16), unsigned
    if body.startswith("0b"):
        return int(body[2:], 2), unsigned
    if len(body) > 1 and body.startswith("0"):
        return int(body, 8), unsigned
    return int(body), unsigned


MAX_REGISTER_RANGE = 1 << 16
"""The most registers one `%r<N>` range declares. ptxas takes more; each register is a
value here (100,000 take 7 s and 160 MB to read), and a range of 10^11 would exhaust
memory instead of being reported."""

MAX_PTX_MAJOR = 9
"""PTX ISA versions run 1.0 to 9.x (PTX ISA 9.0, "Release Notes"; ptxas 13.5 reads 9.4)."""

TARGET = re.compile(r"(sm|compute)_(\d+)([af]?)")
"""A `.target` architecture: `sm_100a`, `compute_90`, `sm_100f` (PTX ISA 9.0, §11.1.3 .target)."""

TARGET_MIN_VERSION = {(100, ""): (8, 6), (100, "a"): (8, 6), (90, ""): (7, 8), (90, "a"): (8, 0)}
"""The oldest PTX ISA version per target (PTX ISA 9.0, .target: "Requires"; ptxas 13.0:
"PTX .version 8.5 does not support .target sm_100a"). Other targets are not checked."""


@dataclass
class Scope:
    """Registers and labels declared in one `{ }` (the function body is scope 0)."""

    number: int
    registers: dict[str, SSAValue] = field(default_factory=dict[str, SSAValue])
    labels: set[str] = field(default_factory=set[str])


class Builder:
    """Builds the ops of one PTX module from lark's tree."""

    def __init__(self, source: Input, source_map: SourceMap):
        self.source = source
        self.source_map = source_map
        self.scopes: list[Scope] = []
        self.scope_count = 0

    # -- errors and locations ------------------------------------------------------

    def span(self, token: Token) -> Span:
        start = token.start_pos or 0
        return Span(start, token.end_pos if token.end_pos is not None else start, self.source)

    def error(self, token: Token, message: str) -> ParseError:
        return ParseError(self.span(token), message)

    def located(self, op: OpT, token: Token) -> OpT:
        self.source_map.spans[op] = self.span(token)
        return op

    # -- module ----------------------------------------------------------------------

    def module(self, tree: Tree[Token]) -> ModuleOp:
        header: dict[str, tuple[Token, list[Token]]] = {}
        ops: list[Operation] = []
        first: Token | None = None
        for item in _trees(tree.children):
            head = _first_token(item)
            first = first or head
            match item.data:
                case "version" | "target" | "address_size":
                    if item.data in header:
                        raise self.error(head, f"{head} is given twice (first on line {header[item.data][0].line})")
                    header[item.data] = (head, _tokens(item)[1:])
                case "module_pragma":
                    ops.append(self.located(ptx.PragmaOp([_string(t) for t in _tokens(item)[1:]]), head))
                case "function":
                    ops.append(self.function(item))
                case "variable":
                    ops.append(self.variable(item, module_scope=True))
                case "debug_text":
                    ops.append(self.located(ptx.DebugTextOp(str(head)), head))
                case _:
                    raise AssertionError(item.data)
        anchor = first or Token("WORD", "", 0, 1, 1, 1, 1, 0)
        module = self.header(header, anchor, Region(Block(ops)))
        self.located(module, anchor)
        return ModuleOp([module])

    def header(self, header: dict[str, tuple[Token, list[Token]]], anchor: Token, body: Region) -> ptx.ModuleOp:
        """The `ptx.module` of `.version`, `.target` and `.address_size`, checked."""
        if "version" not in header:
            raise self.error(anchor, "a PTX module starts with .version (e.g. .version 8.6)")
        if "target" not in header or not header["target"][1]:
            raise self.error(anchor, "a PTX module needs a .target directive (e.g. .target sm_100a)")
        target = header["target"][1]
        for token in target[1:]:
            if str(token) not in TARGET_OPTIONS:
                raise self.error(token, f"unknown .target option '{token}'; allowed: {', '.join(TARGET_OPTIONS)}")
        address_size: int | None = None
        if "address_size" in header:
            size = header["address_size"][1][0]
            address_size = parse_int(str(size))[0]
            if address_size not in (32, 64):
                raise self.error(size, f".address_size is 32 or 64, got {address_size}")
        version = str(header["version"][1][0])
        _check_version(self, header["version"][1][0], target[0])
        return ptx.ModuleOp(version, str(target[0]), body, [str(t) for t in target[1:]], address_size)

    # -- declarations ------------------------------------------------------------------

    def decl(self, space: Token, quals: Sequence[Tree[Token]], name: Token, dims: Tree[Token] | None) -> ptx.DeclAttr:
        """`.space [.align N] [.vN] .type [.ptr [.space] [.align N]] name[dims]`."""
        align = vector = ptr_align = 0
        type_: str | None = None
        ptr = False
        ptr_space = ""
        for qual in quals:
            tokens = _tokens(qual)
            directive = str(tokens[0])[1:]
            argument = tokens[1] if len(tokens) > 1 else None
            if directive == "align":
                if argument is None:
                    raise self.error(tokens[0], ".align needs a byte count: .align 8")
                value = parse_int(str(argument))[0]
                if value < 1 or value & (value - 1):
                    raise self.error(argument, f".align {value}: the alignment must be a power of two")
                if ptr:
                    ptr_align = value
                else:
                    align = value
                continue
            if argument is not None:
                raise self.error(argument, f".{directive} takes no number here")
            if directive == "ptr":
                ptr = True
            elif ptr and directive in STATE_SPACES:
                ptr_space = directive
            elif re.fullmatch(r"v[248]", directive):
                vector = int(directive[1:])
            elif directive in VARIABLE_TYPES:
                if type_ is not None:
                    raise self.error(tokens[0], f"a second type .{directive} after .{type_}")
                type_ = directive
            else:
                raise self.error(
                    tokens[0],
                    f"unexpected .{directive} in a declaration; expected .align N, .v2/.v4/.v8, a type "
                    "(.b32, .u64, .f32, ...), or .ptr with a state space and .align",
                )
        if type_ is None:
            raise self.error(name, f"the declaration of {name} has no type (.b32, .u64, .f32, ...)")
        return ptx.DeclAttr(
            str(space)[1:], type_, str(name), align=align, vector=vector,
            ptr=ptx.Pointee(ptr_space, ptr_align) if ptr else None, dims=self.dims(dims),
        )  # fmt: skip

    def dims(self, dims: Tree[Token] | None) -> list[int]:
        out: list[int] = []
        for dim in _trees(dims.children) if dims is not None else ():
            tokens = _tokens(dim)
            out.append(parse_int(str(tokens[0]))[0] if tokens else -1)
        return out

    def variable(self, tree: Tree[Token], module_scope: bool) -> ptx.VariableOp:
        quals_tree, name, dims, *rest = tree.children
        quals = _trees(cast(Tree[Token], quals_tree).children)
        linkage: list[str] = []
        position = 0
        while position < len(quals) and (d := str(_tokens(quals[position])[0])[1:]) in LINKAGES:
            linkage.append(d)
            position += 1
        if position == len(quals):
            raise self.error(cast(Token, name), f"the declaration of {name} has no state space (.global, .shared, ...)")
        space = _tokens(quals[position])[0]
        allowed = (
            ("global", "const", "shared", "local") if module_scope else ("param", "shared", "local", "const", "global")
        )
        if str(space)[1:] not in allowed:
            where = "at module scope" if module_scope else "in a function body"
            raise self.error(
                space,
                f"unexpected {space} {where}; a variable here is declared in {', '.join('.' + a for a in allowed)}",
            )
        if linkage and not module_scope:
            raise self.error(_tokens(quals[0])[0], f"linkage .{linkage[0]} applies only at module scope")
        decl = self.decl(space, quals[position + 1 :], cast(Token, name), cast(Tree[Token], dims))
        init = self.initializer(cast(Tree[Token], rest[0])) if rest else None
        return self.located(ptx.VariableOp(decl, linkage, init), _first_token(tree))

    def initializer(self, tree: Tree[Token]) -> Attribute:
        (value,) = _trees(tree.children)
        return self.init_value(value)

    def init_value(self, tree: Tree[Token]) -> Attribute:
        if tree.data == "init_list":
            return ArrayAttr([self.init_value(t) for t in _trees(tree.children)])
        return StringAttr(_text(tree))

    def param(self, tree: Tree[Token]) -> ptx.DeclAttr:
        space_tree, *middle = _trees(tree.children)
        space = _tokens(space_tree)[0]
        if str(space)[1:] not in ("param", "reg"):
            raise self.error(space, f"a parameter is declared .param or .reg, got {space}")
        quals = _trees(middle[0].children) if middle and middle[0].data == "quals" else []
        tokens = [c for c in tree.children if isinstance(c, Token)]
        dims = middle[-1] if middle and middle[-1].data == "dims" else None
        return self.decl(space, quals, tokens[0], dims)

    def param_list(self, tree: Tree[Token] | None) -> list[ptx.DeclAttr] | None:
        if tree is None:
            return None
        lists = _trees(tree.children)
        return [self.param(p) for p in _trees(lists[0].children)] if lists else []

    # -- functions ---------------------------------------------------------------------

    def function(self, tree: Tree[Token]) -> ptx.FunctionOp:
        children = _trees(tree.children)
        name = next(c for c in tree.children if isinstance(c, Token))
        linkage: list[str] = []
        kind_tree = next(c for c in children if c.data == "func_kind")
        kind = str(_tokens(kind_tree)[0])[1:]
        for qual in (c for c in children if c.data == "quals"):
            for q in _trees(qual.children):
                token = _tokens(q)[0]
                if str(token)[1:] not in LINKAGES or len(_tokens(q)) > 1:
                    raise self.error(token, f"unexpected {token} before .{kind}; allowed: .{', .'.join(LINKAGES)}")
                linkage.append(str(token)[1:])
        props: dict[str, Attribute] = {}
        if linkage:
            props["linkage"] = ArrayAttr([StringAttr(x) for x in linkage])
        returns_tree = next(c for c in children if c.data == "returns")
        if returns_tree.children:
            if kind == "entry":
                raise self.error(name, "a kernel (.entry) has no return parameters")
            props["returns"] = ArrayAttr(self.param_list(Tree("params", returns_tree.children)) or [])
        params = self.param_list(next((c for c in children if c.data == "params"), None))
        if params is not None:
            props["params"] = ArrayAttr(params)
        pragmas: list[str] = []
        for perf in (c for c in children if c.data in ("perf", "perf_pragma")):
            tokens = _tokens(perf)
            if perf.data == "perf_pragma":
                pragmas.extend(_string(t) for t in tokens[1:])
                continue
            self.directive(tokens, kind, props)
        if pragmas:
            props["pragmas"] = ArrayAttr([StringAttr(p) for p in pragmas])
        body_tree = next((c for c in children if c.data == "body"), None)
        region = Region()
        if body_tree is not None:
            region = Region(self.block(body_tree, function_body=True))
        return self.located(ptx.FunctionOp(str(name), kind, region, props), _first_token(tree))

    def directive(self, tokens: list[Token], kind: str, props: dict[str, Attribute]) -> None:
        """A performance directive after the parameter list (PTX ISA 9.0 §11.4)."""
        head, args = tokens[0], [parse_int(str(t))[0] for t in tokens[1:]]
        directive = str(head)[1:]
        if directive in props:
            raise self.error(head, f"{head} is given twice")
        if directive in DIM3_DIRECTIVES:
            if not 1 <= len(args) <= 3 or min(args) < 1:
                raise self.error(head, f"{head} takes 1 to 3 positive extents, e.g. {head} 128, 1, 1")
            props[directive] = ArrayAttr([IntAttr(a) for a in args])
        elif directive in INT_DIRECTIVES:
            if len(args) != 1:
                raise self.error(head, f"{head} takes one integer")
            props[directive] = IntAttr(args[0])
        elif directive in FLAG_DIRECTIVES:
            if args:
                raise self.error(head, f"{head} takes no arguments")
            if directive == "noreturn" and kind != "func":
                raise self.error(head, ".noreturn applies only to a .func")
            props[directive] = UnitAttr()
        else:
            allowed = ", ".join(f".{d}" for d in (*DIM3_DIRECTIVES, *INT_DIRECTIVES, *FLAG_DIRECTIVES, "pragma"))
            raise self.error(head, f"unknown directive {head} after the parameters of a .{kind}; allowed: {allowed}")

    # -- bodies ---------------------------------------------------------------------

    def block(self, tree: Tree[Token], function_body: bool = False) -> Block:
        if len(self.scopes) > MAX_NESTING:  # the body and MAX_NESTING scopes inside it
            raise self.error(
                _first_token(tree), f"nesting too deep: more than {MAX_NESTING} nested {{ }} scopes in one function"
            )
        self.scopes.append(Scope(0 if function_body else self.next_scope()))
        statements = _trees(tree.children)
        for statement in statements:  # labels are visible before their definition (forward branches)
            if statement.data in ("label", "branchtargets", "calltargets", "callprototype"):
                label = _tokens(statement)[0]
                if str(label) in self.scopes[-1].labels:
                    raise self.error(label, f"label {label} is defined twice in this scope")
                self.scopes[-1].labels.add(str(label))
        block = Block()
        for statement in statements:
            block.add_ops(self.statement(statement))
        self.scopes.pop()
        return block

    def next_scope(self) -> int:
        self.scope_count += 1
        return self.scope_count

    def statement(self, tree: Tree[Token]) -> list[Operation]:
        head = _first_token(tree)
        tokens = _tokens(tree)
        match tree.data:
            case "scope":
                return [self.located(ptx.ScopeOp(Region(self.block(tree))), head)]
            case "label":
                return [self.located(ptx.LabelOp(str(tokens[0])), head)]
            case "instruction":
                return [self.instruction(tree)]
            case "reg_decl":
                return self.reg_decl(tree)
            case "variable":
                return [self.variable(tree, module_scope=False)]
            case "pragma":
                return [self.located(ptx.PragmaOp([_string(t) for t in tokens[1:]]), head)]
            case "branchtargets":
                self.check_labels(tokens[2:])
                return [self.located(ptx.BranchTargetsOp(str(tokens[0]), [str(t) for t in tokens[2:]]), head)]
            case "calltargets":
                return [self.located(ptx.CallTargetsOp(str(tokens[0]), [str(t) for t in tokens[2:]]), head)]
            case "callprototype":
                return [self.callprototype(tree)]
            case "debug_text":
                return [self.located(ptx.DebugTextOp(str(head)), head)]
            case _:
                raise AssertionError(tree.data)

    def callprototype(self, tree: Tree[Token]) -> ptx.CallPrototypeOp:
        children = _trees(tree.children)
        tokens = [c for c in tree.children if isinstance(c, Token)]
        name, placeholder = tokens[0], tokens[2]
        if str(placeholder) != "_":
            raise self.error(placeholder, f"a .callprototype names its function _, got {placeholder}")
        returns_tree = next(c for c in children if c.data == "returns")
        returns = self.param_list(Tree("params", returns_tree.children)) if returns_tree.children else None
        params = self.param_list(next((c for c in children if c.data == "params"), None))
        noreturn = False
        for perf in (c for c in children if c.data in ("perf", "perf_pragma")):
            head = _tokens(perf)[0]
            if str(head) != ".noreturn" or len(_tokens(perf)) > 1:
                raise self.error(head, f"unexpected {head} in a .callprototype; allowed: .noreturn")
            noreturn = True
        return self.located(ptx.CallPrototypeOp(str(name), returns, params, noreturn), name)

    def check_labels(self, labels: Sequence[Token]) -> None:
        for label in labels:
            if not any(str(label) in scope.labels for scope in self.scopes):
                raise self.error(label, f"{label} is not a label of this scope or an enclosing one")

    def reg_decl(self, tree: Tree[Token]) -> list[Operation]:
        children = _trees(tree.children)
        quals = _trees(children[0].children)
        kinds = [str(_tokens(q)[0])[1:] for q in quals]
        if len(kinds) != 1 or kinds[0] not in ptx.REGISTER_TYPES or len(_tokens(quals[0])) > 1:
            raise self.error(
                _tokens(quals[0])[0],
                f".reg takes one register type ({', '.join('.' + k for k in sorted(ptx.REGISTER_TYPES))}); "
                f"got {' '.join('.' + k for k in kinds)}",
            )
        kind = kinds[0]
        scope = self.scopes[-1]
        ops: list[Operation] = []
        for reg_name in children[1:]:
            tokens = _tokens(reg_name)
            name = tokens[0]
            count = parse_int(str(tokens[1]))[0] if len(tokens) > 1 else None
            if count == 0:
                raise self.error(tokens[1], f"{name}<0> declares no register; a range has at least one")
            if count is not None and count > MAX_REGISTER_RANGE:
                raise self.error(tokens[1], f"{name}<{count}>: a range declares at most {MAX_REGISTER_RANGE} "
                                 "registers here (one value each; a limit of this front end, not of PTX)")  # fmt: skip
            names = [str(name)] if count is None else [f"{name}{i}" for i in range(count)]
            types = [ptx.RegisterType.named(kind, n, scope.number) for n in names]
            op = self.located(ptx.RegDeclOp(str(name), count, types), name)
            for n, value in zip(names, op.results, strict=True):
                if n in scope.registers:
                    raise self.error(name, f"register {n} is declared twice in this scope")
                scope.registers[n] = value
            ops.append(op)
        return ops

    # -- instructions ---------------------------------------------------------------

    def lookup_register(self, name: str) -> SSAValue | None:
        for scope in reversed(self.scopes):
            if (value := scope.registers.get(name)) is not None:
                return value
        return None

    def instruction(self, tree: Tree[Token]) -> ptx.InstOp:
        children = list(tree.children)
        guard: SSAValue | None = None
        negated = False
        if isinstance(children[0], Tree) and children[0].data == "guard":
            guard_tokens = _tokens(children[0])
            negated = len(guard_tokens) == 2
            guard_name = guard_tokens[-1]
            guard = self.lookup_register(str(guard_name))
            if guard is None:
                raise self.error(guard_name, f"guard {guard_name} is not a declared register")
            if cast(ptx.RegisterType, guard.type).kind.data != "pred":
                raise self.error(
                    guard_name,
                    f"guard {guard_name} must be a .pred register, not .{cast(ptx.RegisterType, guard.type).kind.data}",
                )
            children = children[1:]
        mnemonic = cast(Token, children[0])
        opcode, *modifiers = str(mnemonic).split(".")
        operands = cast(Tree[Token], children[1])
        regs: list[SSAValue] = []
        args = [self.operand(o, regs) for o in _trees(operands.children)]
        op = ptx.InstOp(opcode, modifiers, args, regs, guard, negated)
        return self.located(op, _first_token(tree))

    def word(self, token: Token, regs: list[SSAValue]) -> Attribute:
        """A name: a declared register (an SSA use; the innermost declaration wins), a
        sink, a label of an enclosing scope, a special register, or else a symbol."""
        name = str(token)
        value = self.lookup_register(name)
        if value is not None:
            if value in regs:
                return ptx.ArgReg(IntAttr(regs.index(value)))
            regs.append(value)
            return ptx.ArgReg(IntAttr(len(regs) - 1))
        if name == "_":
            return ptx.ArgSink()
        if any(name in scope.labels for scope in self.scopes):
            return ptx.ArgLabel(StringAttr(name))
        if name.startswith("%"):
            base = name.split(".")[0]
            if base in SPECIAL_REGISTERS or _NUMBERED_SPECIAL.fullmatch(base):
                return ptx.ArgSpecial(StringAttr(name))
            raise self.error(
                token,
                f"register {name} is not declared (no .reg in this scope or an enclosing one) and is not a special "
                "register",
            )
        return ptx.ArgSymbol(StringAttr(name), IntAttr(0))

    def operand(self, tree: Tree[Token], regs: list[SSAValue]) -> Attribute:
        match tree.data:
            case "value":
                return self.value(tree, regs)
            case "address":
                values = _trees(tree.children)
                base, offset = self.offset_value(values[0], regs)
                written = len(values[0].children) > 1 and not isinstance(base, ptx.ArgInt | ptx.ArgFloat)
                if not isinstance(base, ptx.ArgReg | ptx.ArgSymbol | ptx.ArgInt):
                    raise self.error(
                        _first_token(tree), "an address is [register], [variable] or [integer], optionally +offset"
                    )
                elements = ArrayAttr[Attribute]([])
                if len(values) > 1:
                    elements = cast(ptx.ArgVector, self.operand(values[1], regs)).elements
                return ptx.ArgAddress(base, IntAttr(offset), IntAttr(int(written)), elements)
            case "vector":
                return ptx.ArgVector(ArrayAttr([self.value(v, regs) for v in _trees(tree.children)]))
            case "pair":
                first, second = (self.word(t, regs) for t in _tokens(tree))
                for half, token in zip((first, second), _tokens(tree), strict=True):
                    if not isinstance(half, ptx.ArgReg | ptx.ArgSink):
                        raise self.error(token, f"both halves of d|p are registers or _, got {token}")
                return ptx.ArgPair(first, second)
            case "negated":
                token = _tokens(tree)[1]
                reg = self.word(token, regs)
                if not isinstance(reg, ptx.ArgReg):
                    raise self.error(token, f"! negates a predicate register, got {token}")
                return ptx.ArgNot(reg.index)
            case "paren_list":
                elements = _trees(tree.children)
                for element in elements:
                    if element.data == "paren_list":
                        raise self.error(_first_token(element), "a (list) holds operands, not another (list)")
                return ptx.ArgList(ArrayAttr([self.operand(o, regs) for o in elements]))
            case _:
                raise AssertionError(tree.data)

    def value(self, tree: Tree[Token], regs: list[SSAValue]) -> Attribute:
        """A name, `variable+offset`, or a (negated) number."""
        base, offset = self.offset_value(tree, regs)
        if offset == 0:
            return base
        if isinstance(base, ptx.ArgSymbol):
            return ptx.ArgSymbol(base.symbol, IntAttr(offset))
        token = _first_token(tree)
        raise self.error(token, f"{token}+{offset}: only a variable, or a register inside [ ], takes an offset")

    def offset_value(self, tree: Tree[Token], regs: list[SSAValue]) -> tuple[Attribute, int]:
        """A name and its `+offset` (0 if none), or a (negated) number and 0."""
        children = list(tree.children)
        if isinstance(children[0], Token) and children[0].type == "WORD":
            base = self.word(children[0], regs)
            if len(children) == 1:
                return base, 0
            signs = [str(t) for t in children[1:-1]]
            offset = parse_int(str(children[-1]))[0]
            return base, -offset if signs.count("-") % 2 else offset
        negative = isinstance(children[0], Token) and children[0].type == "MINUS"
        token = _tokens(cast(Tree[Token], children[-1]))[0]
        text = str(token)
        match token.type:
            case "INT":
                value, unsigned = parse_int(text)
                if value >= 1 << 64:  # PTX ISA 9.0 §4.5.1: integer literals are 64-bit
                    raise self.error(token, f"integer literal {text} does not fit in 64 bits (ptxas: Constant "
                                     "overflow)")  # fmt: skip
                return ptx.ArgInt(IntAttr(-value if negative else value), IntAttr(int(unsigned))), 0
            case "HEX_FLOAT":
                bits = int(text[2:], 16)
                width = 32 if text[1] in "fF" else 64
                if negative:
                    bits ^= 1 << (width - 1)
                return ptx.ArgFloat(IntAttr(bits), IntAttr(width)), 0
            case _:
                return ptx.ArgDecimal(StringAttr(("-" if negative else "") + text)), 0


def _trees(children: Sequence[Tree[Token] | Token]) -> list[Tree[Token]]:
    return [c for c in children if isinstance(c, Tree)]


def _tokens(tree: Tree[Token]) -> list[Token]:
    return [c for c in tree.children if isinstance(c, Token)]


def _all_tokens(tree: Tree[Token]) -> Iterator[Token]:
    for child in tree.children:
        if isinstance(child, Token):
            yield child
        else:
            yield from _all_tokens(child)


def _first_token(tree: Tree[Token]) -> Token:
    return next(_all_tokens(tree))


def _text(tree: Tree[Token]) -> str:
    """An initializer element's text, tokens joined as PTX writes them."""
    if tree.data == "init_call":
        function, argument = _tokens(tree)
        return f"{function}({argument})"
    parts: list[str] = []
    for child in tree.children:
        parts.append(str(child) if isinstance(child, Token) else _text(child))
    return "".join(parts)


def _string(token: Token) -> str:
    return str(token)[1:-1]


def parse_ptx(data: bytes | str, name: str, source_map: SourceMap) -> ModuleOp:
    """A builtin module holding the `ptx.module` of PTX text `data`; not verified."""
    text = decode_source(data) if isinstance(data, bytes) else data
    source = Input(text, name)
    if bad := _NOT_UTF8.search(text):  # decode_source's stand-ins for bytes that are not UTF-8
        at = bad.start()
        byte = ord(bad.group()) - 0xDC00
        raise ParseError(Span(at, at + 1, source), f"invalid UTF-8: byte 0x{byte:02X} (PTX is ASCII text)")
    try:
        tree = ptx_parser().parse(text)  # pyright: ignore[reportUnknownMemberType]
    except UnexpectedInput as e:
        raise _syntax_error(e, source) from None
    module = Builder(source, source_map).module(tree)
    _check_names(module, source_map)
    return module


def load_ptx(data: bytes | str, name: str, source_map: SourceMap, *, typed: bool = True) -> ModuleOp:
    """`parse_ptx`, then `verify_located`; with `typed` (what the drivers read), every
    instruction that is exactly a typed op's form becomes that op (`recognize`)."""
    module = parse_ptx(data, name, source_map)
    verify_located(module, source_map)
    if typed:
        recognize(module, source_map)
    for inner in module.body.block.ops:
        PARSED_SOURCES[inner] = source_map
    return module


def _check_version(builder: Builder, token: Token, target: Token) -> None:
    """`.version` is major.minor of a PTX ISA release, and the target exists in it."""
    found = re.fullmatch(r"(\d+)\.(\d+)", str(token))
    if found is None or not 1 <= int(found.group(1)) <= MAX_PTX_MAJOR:
        raise builder.error(token, f".version {token}: PTX ISA versions are 1.0 to {MAX_PTX_MAJOR}.x")
    arch = TARGET.fullmatch(str(target))
    if arch is None:
        raise builder.error(target, f"unknown .target '{target}'; a target is sm_NN or compute_NN, with an 'a' or "
                            "'f' suffix for architecture- or family-specific features (e.g. sm_100a)")  # fmt: skip
    version = (int(found.group(1)), int(found.group(2)))
    needed = TARGET_MIN_VERSION.get((int(arch.group(2)), arch.group(3)))
    if needed is not None and version < needed:
        raise builder.error(token, f".version {token} does not support .target {target}; it needs "
                            f".version {needed[0]}.{needed[1]} or later")  # fmt: skip


def _symbols(arg: Attribute) -> Iterator[str]:
    """The symbols an operand names (in an address, a vector or a call's list too)."""
    match arg:
        case ptx.ArgSymbol():
            yield arg.symbol.data
        case ptx.ArgAddress():
            yield from _symbols(arg.base)
            for element in arg.vector:
                yield from _symbols(element)
        case ptx.ArgVector() | ptx.ArgList():
            for element in arg.elements:
                yield from _symbols(element)
        case _:
            pass


def _span(source_map: SourceMap, op: Operation) -> Span:
    span = source_map.span_of(op)
    assert span is not None, "the PTX parser locates every op it builds"
    return span


def _check_names(module: ModuleOp, source_map: SourceMap) -> None:
    """Every name an instruction uses is declared in the module (a variable, a parameter
    or a function; labels were resolved by scope while parsing), and a function is
    defined once: ptxas refuses both ("Unknown symbol", "Duplicate definition")."""
    declared: set[str] = {"WARP_SZ"}  # the one predefined identifier without a % (PTX ISA 9.0 §4.2)
    defined: dict[str, ptx.FunctionOp] = {}
    for op in module.walk():
        if isinstance(op, ptx.VariableOp):
            declared.add(op.decl.sym_name.data)
        elif isinstance(op, ptx.FunctionOp):
            name = op.sym_name.data
            declared.add(name)
            params = [*(op.params or ()), *(op.returns or ())]
            declared.update(p.sym_name.data for p in params)
            if op.body.blocks:  # a definition (a prototype has no body)
                if name in defined:
                    first = _span(source_map, defined[name]).get_location().line
                    raise ParseError(_span(source_map, op), f"function {name} is defined twice (first on line {first})")
                defined[name] = op
    for op in module.walk():
        if not isinstance(op, ptx.InstOp):
            continue
        for arg in op.args:
            for name in _symbols(arg):
                if name not in declared:
                    raise ParseError(_span(source_map, op), f"{op.mnemonic()}: {name} is not declared: no label "
                                     "of this scope or an enclosing one, and no variable, parameter or function of "
                                     "the module")  # fmt: skip
