"""Malformed input: both drivers give mlir-opt-22's accept/reject verdict.

Every corpus input goes through mlir-opt-22 (the oracle) and through
`xdsl-tmem-opt` and `xdsl-tmem-run`. Where upstream rejects, both drivers exit 1
with `file:line:col: error:` on the first line, at upstream's line; where it
accepts, `xdsl-tmem-opt` exits 0 and `xdsl-tmem-run` reports no parse or
verification error. Nothing prints a traceback or "internal error". Where
mlir-opt-22 crashes (deep nesting: it recurses until the stack overflows) we
must give a located nesting-limit error instead.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from external import Upstream
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from support import LIT_TESTS, OptResult, run_cli

from xdsl_tmem.diagnostics import MAX_NESTING, RECURSION_LIMIT, recursion_headroom
from xdsl_tmem.tools import opt

LOCATED = re.compile(r"^(?P<file>[^\n]*?):(?P<line>\d+):(?P<col>\d+): error: ")
DEEP = 10_000


@dataclass(frozen=True)
class Case:
    name: str
    text: bytes
    differs: str = ""
    """Why we may reject what mlir-opt-22 accepts (the issue allows it), if we do."""
    same_line: bool = True
    """Whether our error is on mlir-opt-22's line."""


KERNEL = b"""\
llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 32, 1, 1>} {
  %c = llvm.mlir.constant(7 : i32) : i32
  llvm.store %c, %out : i32, !llvm.ptr<1>
  llvm.return
}
"""


def _func(body: str, args: str = "", results: str = "") -> bytes:
    ret = f" -> ({results})" if results else ""
    return f"func.func @f({args}){ret} {{\n{body}}}\n".encode()


def _kernel_attrs(attrs: str) -> bytes:
    return f"llvm.func @k() attributes {{nvvm.kernel, {attrs}}} {{\n  llvm.return\n}}\n".encode()


_IF = """\
  %r = scf.if %c -> (i32) {{
    %a = arith.constant 1 : i32
    scf.yield {then}
  }} else {{
    %b = arith.constant 2 : i32
    scf.yield {other}
  }}
  return %r : i32
"""

CASES: list[Case] = [
    # ---- invalid UTF-8
    Case("binary_garbage", bytes(range(256)) * 4),
    Case("binary_high_bytes", bytes(range(128, 256))),
    Case("bad_byte_in_token", KERNEL.replace(b"llvm.mlir.constant", b"llvm.mlir.con\xffstant")),
    Case("bad_byte_in_ssa_name", KERNEL.replace(b"%c =", b"%c\xfe =")),
    Case("bad_byte_between_tokens", KERNEL.replace(b"llvm.return", b"\x80 llvm.return")),
    Case("truncated_utf8_at_end", KERNEL + b"\xe2\x82"),
    Case("overlong_encoding", KERNEL.replace(b"llvm.return", b"llvm.return \xc0\xaf")),
    Case("bad_byte_in_comment", b"// caf\xe9 \xff\xfe\n" + KERNEL),
    Case("bad_byte_in_trailing_comment", KERNEL.replace(b"llvm.return", b"llvm.return // \xff")),
    Case("valid_utf8_in_comment", "// café ∑\n".encode() + KERNEL),
    Case(
        "bad_byte_in_string_literal",
        b'llvm.mlir.global internal constant @s("ab\xffcd") {addr_space = 0 : i32} : !llvm.array<5 x i8>\n',
        differs="a non-UTF-8 byte in a string literal is refused with its location (xDSL strings are text)",
    ),
    Case(
        "bad_byte_in_generic_op_name",
        b'"llvm.ret\xffurn"() : () -> ()\n',
        differs="a non-UTF-8 byte in a string literal is refused with its location (xDSL strings are text)",
    ),
    # ---- empty input
    Case("empty", b""),
    Case("whitespace_only", b"  \n\t\n\n"),
    Case("comment_only", b"// nothing here\n// nor here\n"),
    Case("comment_without_newline", b"// no newline at the end"),
    Case("aliases_only", b"#a = 1 : i32\n!t = i32\n"),
    Case("alias_without_value", b"#a = \n", same_line=False),  # upstream: at the end of the line above
    Case("comment_ended_by_carriage_return", b"// a comment\r foo.bar\n"),
    Case("nul_bytes_are_whitespace", KERNEL.replace(b"llvm.return", b"\x00llvm.return\x00")),
    Case("vertical_tab_is_not_whitespace", KERNEL.replace(b"llvm.return", b"\vllvm.return")),
    # ---- deep nesting (mlir-opt-22 segfaults on most of these)
    Case("deep_regions_generic", b'"builtin.module"() ({\n' * DEEP + b"}) : () -> ()\n" * DEEP),
    Case("deep_regions_generic_unbalanced", b'"builtin.module"() ({\n' * DEEP),
    Case(
        "deep_regions_custom",
        b"func.func @f() {\n" + b"scf.execute_region {\n" * DEEP + b"scf.yield\n}\n" * DEEP + b"return\n}\n",
    ),
    Case("deep_regions_custom_unbalanced", b"func.func @f() {\n" + b"scf.execute_region {\n" * DEEP),
    Case("deep_modules_custom", b"module {\n" * DEEP + b"}\n" * DEEP),
    Case(
        "deep_array_attribute",
        b"func.func @f() attributes {a = " + b"[" * DEEP + b"]" * DEEP + b"} {\n  return\n}\n",
        differs="a valid 10,000-deep attribute is refused with a location (nesting limit)",
    ),
    Case("deep_array_attribute_unbalanced", b"func.func @f() attributes {a = " + b"[" * DEEP + b"} {\n}\n"),
    Case(
        "deep_dictionary_attribute",
        b"func.func @f() attributes {a = " + b"{a = " * DEEP + b"1" + b"}" * DEEP + b"} {\n  return\n}\n",
        differs="a valid 10,000-deep attribute is refused with a location (nesting limit)",
    ),
    Case(
        "deep_tuple_type",
        b"func.func private @f(" + b"tuple<" * DEEP + b"i32" + b">" * DEEP + b")\n",
        differs="a valid 10,000-deep type is refused with a location (nesting limit)",
    ),
    Case("deep_tuple_type_unbalanced", b"func.func private @f(" + b"tuple<" * DEEP + b"\n"),
    Case("deep_function_type_unbalanced", b"func.func private @f(" + b"(" * DEEP + b"\n"),
    # ---- dominance (SSACFG regions) and graph regions
    Case(
        "use_before_def",
        _func("  %a = arith.addi %b, %b : i32\n  %b = arith.constant 1 : i32\n  return\n"),
    ),
    Case(
        "use_before_def_generic",
        b'"func.func"() <{function_type = () -> (), sym_name = "f"}> ({\n'
        b'  %a = "arith.addi"(%b, %b) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32\n'
        b'  %b = "arith.constant"() <{value = 1 : i32}> : () -> i32\n'
        b'  "func.return"() : () -> ()\n'
        b"}) : () -> ()\n",
    ),
    Case(
        "use_not_dominated_across_blocks",
        _func(
            "  cf.cond_br %c, ^a, ^b\n^a:\n  %x = arith.constant 1 : i32\n  cf.br ^j\n^b:\n  cf.br ^j\n"
            "^j:\n  %y = arith.addi %x, %x : i32\n  return\n",
            "%c: i1",
        ),
    ),
    Case(
        "use_dominated_across_blocks",
        _func(
            "  %x = arith.constant 1 : i32\n  cf.cond_br %c, ^a, ^b\n^a:\n  cf.br ^j\n^b:\n  cf.br ^j\n"
            "^j:\n  %y = arith.addi %x, %x : i32\n  return\n",
            "%c: i1",
        ),
    ),
    Case(
        "use_in_unreachable_block",
        _func("  return\n^dead:\n  %y = arith.addi %x, %x : i32\n  %x = arith.constant 1 : i32\n  cf.br ^dead\n"),
    ),
    Case(
        "use_of_value_from_sibling_region",
        _func(
            "  scf.if %c {\n    %x = arith.constant 1 : i32\n  }\n"
            "  scf.if %c {\n    %y = arith.addi %x, %x : i32\n  }\n  return\n",
            "%c: i1",
        ),
    ),
    Case(
        "use_of_own_result_in_region",
        _func(
            "  %r = scf.execute_region -> i32 {\n    %y = arith.addi %r, %r : i32\n    scf.yield %y : i32\n  }\n"
            "  return\n"
        ),
    ),
    Case(
        "use_from_enclosing_region",
        _func(
            "  %x = arith.constant 1 : i32\n  scf.if %c {\n    %y = arith.addi %x, %x : i32\n  }\n  return\n", "%c: i1"
        ),
    ),
    Case("graph_region_use_before_def", b"%a = arith.addi %b, %b : i32\n%b = arith.constant 1 : i32\n"),
    # ---- scf.if results
    Case(
        "scf_if_then_yields_two",
        _func(_IF.format(then="%a, %a : i32, i32", other="%b : i32"), "%c: i1", "i32"),
    ),
    Case("scf_if_else_yields_none", _func(_IF.format(then="%a : i32", other=""), "%c: i1", "i32")),
    Case(
        "scf_if_yields_wrong_type",
        _func(
            "  %r = scf.if %c -> (i32) {\n    %a = arith.constant 1 : i64\n    scf.yield %a : i64\n  } else {\n"
            "    %b = arith.constant 2 : i32\n    scf.yield %b : i32\n  }\n  return %r : i32\n",
            "%c: i1",
            "i32",
        ),
    ),
    Case("scf_if_yields_right", _func(_IF.format(then="%a : i32", other="%b : i32"), "%c: i1", "i32")),
    Case(
        "scf_execute_region_yields_too_many",
        _func(
            "  %r = scf.execute_region -> i32 {\n    %a = arith.constant 1 : i32\n    scf.yield %a, %a : i32, i32\n"
            "  }\n  return\n"
        ),
    ),
    # ---- llvm.mlir.addressof
    Case("addressof_undefined", b"llvm.func @f() {\n  %p = llvm.mlir.addressof @nope : !llvm.ptr\n  llvm.return\n}\n"),
    Case(
        "addressof_of_func_func",
        b"func.func private @g()\nllvm.func @f() {\n  %p = llvm.mlir.addressof @g : !llvm.ptr\n  llvm.return\n}\n",
    ),
    Case(
        "addressof_defined",
        b"llvm.mlir.global internal @g(0 : i32) {addr_space = 0 : i32} : i32\n"
        b"llvm.func @f() {\n  %p = llvm.mlir.addressof @g : !llvm.ptr\n  llvm.return\n}\n",
    ),
    Case(
        "addressof_of_llvm_func",
        b"llvm.func @g()\nllvm.func @f() {\n  %p = llvm.mlir.addressof @g : !llvm.ptr\n  llvm.return\n}\n",
    ),
    # ---- nvvm kernel attributes
    Case("maxntid_i64", _kernel_attrs("nvvm.maxntid = array<i64: 128, 1, 1>")),
    Case("maxntid_i32", _kernel_attrs("nvvm.maxntid = array<i32: 128, 1, 1>")),
    Case("maxntid_four_dims", _kernel_attrs("nvvm.maxntid = array<i32: 1, 2, 3, 4>")),
    Case("maxntid_empty", _kernel_attrs("nvvm.maxntid = array<i32>")),
    Case("maxntid_array_attr", _kernel_attrs("nvvm.maxntid = [128]")),
    Case("reqntid_i64", _kernel_attrs("nvvm.reqntid = array<i64: 128>")),
    Case("cluster_dim_i16", _kernel_attrs("nvvm.cluster_dim = array<i16: 2>")),
    Case("cluster_dim_i32", _kernel_attrs("nvvm.cluster_dim = array<i32: 2, 1, 1>")),
    Case("minctasm_string", _kernel_attrs('nvvm.minctasm = "a"')),
    Case("minctasm_i64", _kernel_attrs("nvvm.minctasm = 2 : i64")),
    Case("maxnreg_float", _kernel_attrs("nvvm.maxnreg = 2.0")),
    Case("cluster_max_blocks_array", _kernel_attrs("nvvm.cluster_max_blocks = [8]")),
    Case("blocksareclusters_alone", _kernel_attrs("nvvm.blocksareclusters")),
    Case(
        "blocksareclusters_complete",
        _kernel_attrs(
            "nvvm.blocksareclusters, nvvm.reqntid = array<i32: 32, 1, 1>, nvvm.cluster_dim = array<i32: 2, 1, 1>"
        ),
    ),
    Case("maxntid_i64_on_func_func", b"func.func @k() attributes {nvvm.maxntid = array<i64: 1>} {\n  return\n}\n"),
    # ---- unregistered ops and bad names
    Case("unregistered_op_custom", _func("  %x = arith.constant 1 : i32\n  foo.bar\n  return\n")),
    Case("unregistered_op_with_result", _func("  %x = foo.bar : i32\n  return\n")),
    Case("unregistered_op_generic", _func('  "foo.bar"() : () -> ()\n  return\n')),
    Case("unknown_op_of_known_dialect", _func("  %x = arith.frobnicate 1 : i32\n  return\n")),
    Case("unknown_op_at_end_of_file", b"foo.bar"),
    Case("bad_ssa_name", _func("  %x = arith.constant 1 : i32\n  %y = arith.addi %x, %! : i32\n  return\n")),
    Case("bad_block_name", _func("  cf.br ^\n  return\n")),
    Case("bad_attribute_alias", b"# = 1\n" + KERNEL),
    Case("bad_type_alias", b"! = i32\n" + KERNEL),
    # ---- valid programs (both forms) and plain syntax errors
    Case("valid_kernel", KERNEL),
    Case(
        "valid_generic",
        b'"func.func"() <{function_type = (i32) -> i32, sym_name = "f"}> ({\n'
        b"^bb0(%x: i32):\n"
        b'  %y = "arith.addi"(%x, %x) <{overflowFlags = #arith.overflow<none>}> : (i32, i32) -> i32\n'
        b'  "func.return"(%y) : (i32) -> ()\n}) : () -> ()\n',
    ),
    # mlir-opt-22 reports these at the end of the token before the error (the line above ours).
    Case("missing_brace", KERNEL[:-2], same_line=False),
    Case("stray_close", KERNEL + b"}\n", same_line=False),
    # xDSL's string regex backtracks exponentially here (hours); ours is linear.
    Case("unterminated_string_literal", KERNEL + b'"' + b"a" * 10_000 + b"\n"),
    Case("unterminated_string_literal_with_escapes", KERNEL + b'"' + b"ab\\n" * 2_000 + b"\n"),
]


@dataclass(frozen=True)
class Verdict:
    accepted: bool
    line: int | None


def _upstream_verdict(upstream: Upstream, path: Path) -> Verdict | None:
    """mlir-opt-22's verdict, or None where it crashes."""
    proc = subprocess.run([upstream.mlir_opt, str(path)], capture_output=True, timeout=120)
    if proc.returncode not in (0, 1):
        return None
    match = re.search(rb":(\d+):\d+: error: ", proc.stderr)
    return Verdict(proc.returncode == 0, int(match.group(1)) if match else None)


def _run_opt(capsys: pytest.CaptureFixture[str], path: Path) -> OptResult:
    capsys.readouterr()
    code = opt.main([str(path)])
    captured = capsys.readouterr()
    return OptResult(code, captured.out, captured.err)


def _clean(result: OptResult) -> None:
    for stream in (result.out, result.err):
        assert "Traceback" not in stream
        assert "internal error" not in stream, stream
        assert "RecursionError" not in stream


def _check_reject(result: OptResult, path: Path) -> int:
    """Exit 1 with a located error on the first line; returns its line."""
    _clean(result)
    assert result.code == 1, result.out[:300]
    first = result.err.splitlines()[0] if result.err else ""
    match = LOCATED.match(first)
    assert match is not None, result.err[:500]
    assert match.group("file") == str(path)
    return int(match.group("line"))


def _run_run(capsys: pytest.CaptureFixture[str], path: Path) -> OptResult:
    return run_cli(capsys, str(path), "--kernel", "k", "--block", "32")


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_corpus_verdicts_match_mlir_opt(
    case: Case, upstream: Upstream, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"{case.name}.mlir"
    path.write_bytes(case.text)
    expected = _upstream_verdict(upstream, path)
    ours = _run_opt(capsys, path)
    ran = _run_run(capsys, path)
    _clean(ran)
    if expected is None:
        # mlir-opt-22 crashed: we must stop at the nesting limit, located.
        _check_reject(ours, path)
        assert "nesting too deep" in ours.err
        assert ran.err.splitlines()[0] == ours.err.splitlines()[0]
        return
    if expected.accepted and case.differs:
        if ours.code == 0:
            return
        _check_reject(ours, path)
        assert ran.code == 1
        assert ran.err.splitlines()[0] == ours.err.splitlines()[0]
        return
    assert not case.differs, f"{case.name}: mlir-opt-22 no longer accepts it; drop `differs`"
    if expected.accepted:
        _clean(ours)
        assert ours.code == 0, ours.err
        assert ours.err == ""
        # xdsl-tmem-run may not find a runnable kernel, but it parsed and verified the input.
        # xdsl-tmem-run parsed and verified it too: it runs @k, or says what is missing for the launch.
        assert ran.code == 0 or re.search(r"no function @k|missing argument 'out'", ran.err), ran.err
    else:
        line = _check_reject(ours, path)
        assert not case.same_line or expected.line is None or line == expected.line, (ours.err, expected)
        assert _check_reject(ran, path) == line
        assert ran.err.splitlines()[0] == ours.err.splitlines()[0]


def test_empty_input_prints_an_empty_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mlir-opt-22 prints `module {\\n}` for an empty file; we print the same module."""
    path = tmp_path / "empty.mlir"
    path.write_bytes(b"// only a comment\n")
    result = _run_opt(capsys, path)
    assert result.code == 0
    assert result.out.split() == ["builtin.module", "{", "}"]


def test_empty_chunks_of_split_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], upstream: Upstream) -> None:
    """`--split-input-file` prints one module per chunk, empty ones included, as mlir-opt-22 does."""
    path = tmp_path / "split.mlir"
    path.write_text("func.func @f() {\n  return\n}\n// -----\n// only a comment\n// -----\n")
    expected = upstream.parse(path.read_text(), "--split-input-file")
    capsys.readouterr()
    assert opt.main([str(path), "--split-input-file"]) == 0
    ours = capsys.readouterr().out
    assert ours.count("builtin.module {") == expected.count("module {") == 3
    assert ours.count("// -----") == expected.count("// -----") == 2


def test_no_implicit_module_needs_an_operation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """mlir-opt-22 --no-implicit-module refuses an empty file (it needs one top-level op)."""
    path = tmp_path / "empty.mlir"
    path.write_text("// nothing\n")
    capsys.readouterr()
    assert opt.main([str(path), "--no-implicit-module"]) == 1
    assert f"{path}:2:1: error: expected a builtin.module operation" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"%x = arith.const\xffant 1 : i32\n", "1:17: error: invalid UTF-8: byte 0xFF"),
        (b"%x = arith.addi %y, %! : i32\n", "1:21: error: invalid SSA value name after '%'"),
        (b"func.func @f() {\n  foo.bar\n  return\n}\n", "2:3: error: unregistered operation 'foo.bar'"),
        (b"%a = arith.constant 1 : i32\n%b = \x01\n", "2:6: error: unexpected character '\\x01' (U+0001)"),
    ],
)
def test_lexer_messages_are_located_and_formatted(
    text: bytes, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], upstream: Upstream
) -> None:
    """Our wording, at the line and column mlir-opt-22 reports."""
    path = tmp_path / "in.mlir"
    path.write_bytes(text)
    proc = subprocess.run([upstream.mlir_opt, str(path)], capture_output=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.decode(errors="replace").startswith(f"{path}:{message.split(' ')[0]}")
    result = _run_opt(capsys, path)
    assert result.code == 1
    assert f"{path}:{message}" in result.err.splitlines()[0]
    assert "{first_char}" not in result.err


def _nested_kernel(depth: int) -> str:
    """A kernel whose store sits `depth` regions deep; its `!llvm.ptr<1>` is bracket level `depth` + 1."""
    inner = "  llvm.store %c, %out : i32, !llvm.ptr<1>\n"
    for _ in range(depth - 1):
        inner = f"scf.if %t {{\n{inner}}}\n"
    return (
        "llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {\n"
        "  %c = llvm.mlir.constant(7 : i32) : i32\n  %t = llvm.mlir.constant(true) : i1\n"
        + inner
        + "  llvm.return\n}\n"
    )


def test_nesting_limit_is_exact_and_deepest_accepted_ir_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], upstream: Upstream
) -> None:
    """At the limit everything works (parse, verify, print, the interpreter); one deeper is refused."""
    path = tmp_path / "deep.mlir"
    path.write_text(_nested_kernel(MAX_NESTING - 1))
    ours = _run_opt(capsys, path)
    assert ours.code == 0, ours.err
    upstream.parse(ours.out)  # what we print is valid MLIR
    ran = run_cli(capsys, str(path), "--kernel", "k", "--block", "32", "--arg", "out=zeros:i32:1")
    assert ran.code == 0, ran.err
    path.write_text(_nested_kernel(MAX_NESTING))
    ours = _run_opt(capsys, path)
    line = _check_reject(ours, path)
    assert "nesting too deep" in ours.err
    assert line == MAX_NESTING + 3  # the store: line 3 + (MAX_NESTING - 1) scf.ifs + 1


def test_recursion_headroom_cannot_overflow_the_c_stack() -> None:
    """`RECURSION_LIMIT` Python frames fit: a subprocess recursing that deep exits cleanly."""
    code = (
        "import sys\nfrom xdsl_tmem.diagnostics import recursion_headroom, RECURSION_LIMIT\n"
        "def f(n):\n    return 0 if n == 0 else 1 + f(n - 1)\n"
        "with recursion_headroom():\n    print(f(RECURSION_LIMIT - 100))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(RECURSION_LIMIT - 100)
    with recursion_headroom():
        pass


class Sources:
    """The programs to mutate (a plain class: hypothesis pretty-prints dataclasses field by field)."""

    def __init__(self, texts: list[bytes]):
        self.texts = texts

    def __repr__(self) -> str:  # hypothesis prints the arguments of a failing example
        return f"Sources({len(self.texts)} programs)"


@pytest.fixture(scope="module")
def mutation_sources(upstream: Upstream, tmp_path_factory: pytest.TempPathFactory) -> Sources:
    """Valid programs in custom form, and the reference pipeline in generic form; mlir-opt-22 accepts each."""
    pipeline = LIT_TESTS / "nvvm" / "ref_pipeline.mlir"
    generic = tmp_path_factory.mktemp("generic") / "generic.mlir"
    assert opt.main([str(pipeline), "--print-op-generic", "-o", str(generic)]) == 0
    texts = [p.read_bytes() for p in (pipeline, generic, LIT_TESTS / "nvvm" / "sync.mlir")]
    texts.append((LIT_TESTS / "nvvm" / "tcgen05_mma.mlir").read_bytes())
    for text in texts:
        upstream.parse(text.decode())
    return Sources(texts)


# No shrinking: each example runs mlir-opt-22, and the first failing input is reported as is.
# MUT_N raises the number of examples for a longer local run.
@settings(
    max_examples=int(os.environ.get("MUT_N", "25")),
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    source=st.integers(0, 3),
    edits=st.lists(
        st.tuples(st.floats(0, 1, exclude_max=True), st.binary(min_size=0, max_size=3), st.integers(0, 3)),
        min_size=1,
        max_size=3,
    ),
)
def test_byte_mutations_agree_with_mlir_opt(
    source: int,
    edits: list[tuple[float, bytes, int]],
    mutation_sources: Sources,
    upstream: Upstream,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Random byte replacements (any bytes) in valid programs: what mlir-opt-22 rejects we reject, located;
    never a traceback.

    The other direction is not asserted: xDSL is stricter than upstream in places outside input handling
    (a generic-form op missing a property upstream defaults, e.g. a misspelt `noWrapFlags`), and we refuse
    a non-UTF-8 byte in a string literal that upstream keeps."""
    text = bytearray(mutation_sources.texts[source])
    for where, new, drop in edits:
        at = int(where * len(text))
        text[at : at + drop] = new
    path = tmp_path / "mutated.mlir"
    path.write_bytes(bytes(text))
    expected = _upstream_verdict(upstream, path)
    ours = _run_opt(capsys, path)
    _clean(ours)
    _clean(_run_run(capsys, path))
    if ours.code != 0:
        _check_reject(ours, path)
    if expected is not None and not expected.accepted:
        assert ours.code == 1, "mlir-opt-22 rejects it, we accept it"
