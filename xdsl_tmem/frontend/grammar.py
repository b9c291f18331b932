"""The PTX grammar (PTX ISA 9.0, chapter 4 "Syntax" and chapter 11 "Directives"), for
lark's LALR(1) parser with its contextual lexer.

The grammar is syntactic: an instruction is `[@[!]guard] opcode[.modifier]* operands;`
for any opcode, and a declaration is a run of directives (`.global .align 8 .b8`)
before a name. What the directives mean is checked when the tree is turned into the
`ptx` dialect (`xdsl_tmem.frontend.parser`), where every error is located.

Kept verbatim, as opaque text: `.loc` lines (statements of a body), `.file` lines and
`.section` blocks (DWARF debug sections, whose contents are data directives with no
braces inside). Without `.target ..., debug` ptxas uses them only for line tables;
with it, `.loc` also shapes the SASS, so none of them is dropped.
"""

from __future__ import annotations

from functools import cache

from lark import Lark

GRAMMAR = r"""
start: _item*

_item: version | target | address_size | module_pragma | function | variable | debug_text

debug_text: FILE | SECTION | LOC

version: VERSION NUMBER
target: TARGET WORD ("," WORD)*
address_size: ADDRESS_SIZE INT
module_pragma: PRAGMA STRING ("," STRING)* ";"

// ---- declarations ---------------------------------------------------------------
variable: quals WORD dims initializer? ";"
quals: qual+
qual: DIRECTIVE INT?
dims: dim*
dim: "[" INT? "]"
initializer: "=" _init
_init: init_list | init_expr
init_list: "{" _init ("," _init)* "}"
init_expr: init_atom (PLUS_MINUS INT)?
init_atom: WORD | number | MINUS number | WORD "(" WORD ")" -> init_call

function: quals? func_kind returns WORD params? perf* (body | ";")
func_kind: ENTRY | FUNC
returns: ("(" param_list ")")?
params: "(" param_list? ")"
param_list: param ("," param)*
param: param_space quals? WORD dims
param_space: DIRECTIVE | REG
perf: DIRECTIVE (INT ("," INT)*)?
    | PRAGMA STRING ("," STRING)* ";" -> perf_pragma

// ---- bodies ---------------------------------------------------------------------
body: "{" _stmt* "}"
!scope: "{" _stmt* "}"  // `!` keeps the braces: a scope is located at its `{`
_stmt: scope | label | instruction | reg_decl | variable | pragma | branchtargets | calltargets | callprototype
     | debug_text
label: WORD ":"
branchtargets: WORD ":" BRANCHTARGETS WORD ("," WORD)* ";"
calltargets: WORD ":" CALLTARGETS WORD ("," WORD)* ";"
callprototype: WORD ":" CALLPROTOTYPE returns WORD params? perf* ";"
pragma: PRAGMA STRING ("," STRING)* ";"
reg_decl: REG quals reg_name ("," reg_name)* ";"
reg_name: WORD ("<" INT ">")?

instruction: guard? WORD operands ";"
guard: "@" NOT? WORD
operands: (_operand ("," _operand)*)?
_operand: value | address | vector | pair | negated | paren_list
pair: WORD "|" WORD
negated: NOT WORD
!paren_list: "(" (_operand ("," _operand)*)? ")"
vector: "{" _velem ("," _velem)* "}"
_velem: value
address: "[" value ("," vector)? "]"
value: WORD (PLUS_MINUS MINUS? INT)?
     | MINUS? number

number: INT | HEX_FLOAT | DEC_FLOAT

// ---- tokens ---------------------------------------------------------------------
VERSION.3: ".version"
TARGET.3: ".target"
ADDRESS_SIZE.3: ".address_size"
PRAGMA.3: ".pragma"
ENTRY.3: ".entry"
FUNC.3: ".func"
REG.3: ".reg"
BRANCHTARGETS.3: ".branchtargets"
CALLTARGETS.3: ".calltargets"
CALLPROTOTYPE.3: ".callprototype"
DIRECTIVE: /\.[A-Za-z_][A-Za-z0-9_]*/
WORD: /[A-Za-z_$%][A-Za-z0-9_$]*(\.[A-Za-z0-9_$]+(::[A-Za-z0-9_$]+)*)*/
NUMBER: /[0-9]+\.[0-9]+/
HEX_FLOAT.2: /0[fF][0-9A-Fa-f]{8}|0[dD][0-9A-Fa-f]{16}/
DEC_FLOAT.1: /[0-9]+\.[0-9]*([eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+/
INT: /(0[xX][0-9A-Fa-f]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)U?/
STRING: /"([^"\\\n]|\\.)*"/
PLUS_MINUS: "+" | "-"
MINUS: "-"
NOT: "!"

COMMENT: /\/\/[^\n]*/
BLOCK_COMMENT: /\/\*(.|\n)*?\*\//
LOC.3: /\.loc(?![A-Za-z0-9_$])[^\n]*/
FILE.3: /\.file(?![A-Za-z0-9_$])[^\n]*/
SECTION.3: /\.section(?![A-Za-z0-9_$])[^{]*\{[^}]*\}/
%ignore /[ \t\r\n\f]+/
%ignore COMMENT
%ignore BLOCK_COMMENT
"""


@cache
def ptx_parser() -> Lark:
    """The (cached) LALR parser; trees keep every token with its position."""
    return Lark(GRAMMAR, parser="lalr", lexer="contextual", maybe_placeholders=False)
