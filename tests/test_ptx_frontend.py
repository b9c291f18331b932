"""The PTX front end: parse → print round trips checked by ptxas and nvdisasm, the
structure of parsed PTX, and located diagnostics for malformed input.

Expectations are independent of our code: the SASS ptxas makes of the original file
(the printed file must give the same), the PTX ISA's definitions of literals,
declarations and scopes, and the located-diagnostic contract of both drivers.

The corpus: our backend's PTX for every example and llc-22's PTX of the same NVVM
(both generated here), the files in tests/ptx_corpus/ (the two reference kernels and
hand-written ones), and every tests/clients/**/*.ptx (Triton and CuTe DSL output).
"""

from __future__ import annotations

import random
import re
import struct
from collections.abc import Callable
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from external import ToolFailed, Upstream, run_tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import EXAMPLES, ROOT, OptResult, missing, run_cli
from test_ptx_isa_rules import assemble
from xdsl.dialects.builtin import IntegerAttr, IntegerType

from xdsl_tmem.backend.printer import ptx_text
from xdsl_tmem.backend.ptxas import find_cuda_tool, find_ptxas
from xdsl_tmem.diagnostics import MAX_NESTING, SourceMap
from xdsl_tmem.dialects import ptx
from xdsl_tmem.frontend import load_ptx
from xdsl_tmem.tools import opt, run

RunOpt = Callable[..., OptResult]

PTX_CORPUS = ROOT / "tests" / "ptx_corpus"
CLIENTS = ROOT / "tests" / "clients"
CORPUS_FILES = sorted(PTX_CORPUS.glob("*.ptx"))
CLIENT_FILES = sorted(CLIENTS.glob("**/*.ptx"))
SILICON_FILES = sorted((ROOT / "silicon" / "programs").glob("**/*.ptx"))
"""The programs run on an H100 (docs/silicon.md): hand-written and generated PTX, and the TMA
fixtures' programs (`tma/`): every folder."""
EXAMPLE_PROGRAMS = sorted(EXAMPLES.glob("*.mlir"))
LOCATED = re.compile(r"^[^\n]*:\d+:\d+: error: ", re.M)


# --------------------------------------------------------------------------------------
# Tools: ptxas and nvdisasm of one CUDA release
# --------------------------------------------------------------------------------------


@cache
def _cuda_tools() -> tuple[str, str] | None:
    """ptxas and nvdisasm, preferring the pip wheels' pair (`nvidia-cuda-nvcc`,
    `nvidia-cuda-nvdisasm`, one release: the newest PTX ISA Triton and CuTe emit)."""
    nvdisasm = find_cuda_tool("nvdisasm")
    if nvdisasm is None:
        return None
    sibling = Path(nvdisasm).with_name("ptxas")
    ptxas = str(sibling) if sibling.is_file() else find_ptxas()
    return None if ptxas is None else (ptxas, nvdisasm)


@pytest.fixture(scope="module")
def cuda_tools() -> tuple[str, str]:
    tools = _cuda_tools()
    if tools is None:
        missing("ptxas and nvdisasm", "pip install nvidia-cuda-nvcc nvidia-cuda-nvdisasm")
    assert tools is not None
    return tools


def sass(tools: tuple[str, str], text: str, directory: Path, stem: str) -> str:
    """The SASS ptxas makes of `text` for sm_100a: nvdisasm's code sections only (`-c`),
    so line tables (from `.loc`, which the front end drops) do not count."""
    ptxas, nvdisasm = tools
    source = directory / f"{stem}.ptx"
    cubin = directory / f"{stem}.cubin"
    source.write_text(text)
    run_tool([ptxas, "-arch=sm_100a", str(source), "-o", str(cubin)])
    return run_tool([nvdisasm, "-c", str(cubin)])


def parse(text: str, name: str = "input.ptx", *, typed: bool = True) -> ptx.ModuleOp:
    module = load_ptx(text, name, SourceMap(), typed=typed)
    (inner,) = module.body.block.ops
    assert isinstance(inner, ptx.ModuleOp)
    return inner


def round_trip(tools: tuple[str, str], text: str, tmp_path: Path) -> None:
    """Parse, print; ptxas accepts the print, and its SASS is the original's."""
    printed = ptx_text(parse(text))
    original = sass(tools, text, tmp_path, "original")
    try:
        again = sass(tools, printed, tmp_path, "printed")
    except ToolFailed as e:
        pytest.fail(f"ptxas rejects the printed PTX:\n{e}\n{printed}")
    assert again == original


# --------------------------------------------------------------------------------------
# The corpus round trip
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [*CORPUS_FILES, *CLIENT_FILES, *SILICON_FILES], ids=lambda p: str(p.relative_to(ROOT)))
def test_corpus_file_round_trips(cuda_tools: tuple[str, str], tmp_path: Path, path: Path) -> None:
    round_trip(cuda_tools, path.read_text(), tmp_path)


def _nvvm_level(run_opt: RunOpt, program: Path) -> str:
    result = run_opt(None, "-p", "lower-tmem", path=program)
    assert result.code == 0, result.err
    return result.out


@pytest.mark.parametrize("program", EXAMPLE_PROGRAMS, ids=lambda p: p.name)
def test_backend_ptx_round_trips(run_opt: RunOpt, cuda_tools: tuple[str, str], tmp_path: Path, program: Path) -> None:
    """Our backend's PTX of every example (generated now)."""
    result = run_opt(None, "-p", "lower-tmem", "-t", "ptx", path=program)
    assert result.code == 0, result.err
    round_trip(cuda_tools, result.out, tmp_path)


@pytest.mark.parametrize("program", EXAMPLE_PROGRAMS, ids=lambda p: p.name)
def test_llc_ptx_round_trips(
    run_opt: RunOpt, upstream: Upstream, cuda_tools: tuple[str, str], tmp_path: Path, program: Path
) -> None:
    """llc-22's PTX of the same NVVM (generated now)."""
    round_trip(cuda_tools, upstream.to_ptx(_nvvm_level(run_opt, program)), tmp_path)


def test_corpus_is_not_empty() -> None:
    """The glob must find the reference kernels and the hand-written files."""
    names = {p.name for p in CORPUS_FILES}
    assert {"ref_pipeline.ptx", "nvvm_ops_examples.ptx", "syntax_tour.ptx"} <= names


# --------------------------------------------------------------------------------------
# What parsed PTX looks like (PTX ISA 9.0 chapters 4, 5 and 11)
# --------------------------------------------------------------------------------------

_KERNEL = """\
.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 .ptr .global .align 16 k_out, .param .align 8 .b8 k_pair[8])
.maxntid 128, 1, 1
.reqnctapercluster 2, 1, 1
.explicitcluster
.maxclusterrank 8
.minnctapersm 1
{{
{body}
}}
"""


def kernel(body: str) -> ptx.FunctionOp:
    (function,) = parse(_KERNEL.format(body=body), typed=False).body.block.ops  # the generic form
    assert isinstance(function, ptx.FunctionOp)
    return function


def instructions(function: ptx.FunctionOp) -> list[ptx.InstOp]:
    return [op for op in function.walk() if isinstance(op, ptx.InstOp)]


def test_register_ranges_declare_each_register() -> None:
    """`.reg .b32 %r<10>;` declares %r0 .. %r9 (PTX ISA §5.1.1, parameterized names)."""
    function = kernel(".reg .b32 %r<10>;\n.reg .f16x2 %h, %g<2>;")
    decls = [op for op in function.walk() if isinstance(op, ptx.RegDeclOp)]
    names = [[r.type.register_name for r in d.regs] for d in decls]
    assert names == [[f"%r{i}" for i in range(10)], ["%h"], ["%g0", "%g1"]]
    assert {r.type.kind.data for d in decls[1:] for r in d.regs} == {"f16x2"}


def test_function_forms() -> None:
    """Linkage, return parameters, `.noreturn`, prototypes and entry-scope pragmas
    (PTX ISA §11.2, §11.4, §11.6), as syntax_tour.ptx has them."""
    functions = {
        op.sym_name.data: op for op in parse((PTX_CORPUS / "syntax_tour.ptx").read_text()).walk()
        if isinstance(op, ptx.FunctionOp)
    }  # fmt: skip
    prototype = functions["extern_only"]
    assert [x.data for x in prototype.linkage or ()] == ["extern"]
    assert not prototype.body.blocks
    assert [x.data for x in functions["weak_one"].linkage or ()] == ["weak"]
    assert functions["stop_here"].noreturn is not None
    assert functions["stop_here"].returns is None
    assert [p.sym_name.data for p in functions["twice"].returns or ()] == ["twice_ret"]
    assert [x.data for x in functions["syntax_tour"].pragmas or ()] == ["nounroll"]
    assert functions["syntax_tour"].kind.data == "entry"


def test_performance_directives_are_typed() -> None:
    function = kernel("ret;")
    assert [e.data for e in function.maxntid or ()] == [128, 1, 1]
    assert [e.data for e in function.reqnctapercluster or ()] == [2, 1, 1]
    assert function.explicitcluster is not None
    assert function.maxclusterrank is not None
    assert function.maxclusterrank.data == 8
    assert function.minnctapersm is not None
    assert function.minnctapersm.data == 1
    params = function.params
    assert params is not None
    pointer, pair = params
    assert (pointer.type.data, pointer.ptr.data, pointer.ptr_space.data, pointer.ptr_align.data) == (
        "u64",
        1,
        "global",
        16,
    )
    assert (pair.align.data, pair.type.data, [d.data for d in pair.dims]) == (8, "b8", [8])


def test_literals_follow_the_ptx_isa() -> None:
    """PTX ISA §4.5.1: hex, octal (leading 0), binary, U suffix; 0f/0d hex floats."""
    (inst,) = instructions(kernel(".reg .b32 %r;\nprmt.b32 %r, 0x10, 010, 0b101U;"))
    values = [(a.value.data, a.unsigned.data) for a in inst.args if isinstance(a, ptx.ArgInt)]
    assert values == [(16, 0), (8, 0), (5, 1)]
    (inst,) = instructions(kernel(".reg .f32 %f;\nfma.rn.f32 %f, %f, 0f3F800000, -0f3F800000;"))
    floats = [a for a in inst.args if isinstance(a, ptx.ArgFloat)]
    assert [struct.unpack(">f", a.bits.data.to_bytes(4, "big"))[0] for a in floats] == [1.0, -1.0]
    (inst,) = instructions(kernel(".reg .f64 %d;\nadd.f64 %d, %d, 0d3FF8000000000000;"))
    (double,) = [a for a in inst.args if isinstance(a, ptx.ArgFloat)]
    assert (struct.unpack(">d", double.bits.data.to_bytes(8, "big"))[0], double.width.data) == (1.5, 64)
    (inst,) = instructions(kernel(".reg .b32 %r;\nadd.s32 %r, %r, -7;"))
    assert [a.value.data for a in inst.args if isinstance(a, ptx.ArgInt)] == [-7]


def test_operand_forms() -> None:
    body = """\
.reg .pred %p, %q;
.reg .b32 %r<4>;
.reg .b64 %rd;
.shared .align 8 .b8 buf[64];
mov.u32 %r0, %clusterid.y;
mov.u32 %r1, %envreg3;
ld.shared.v4.b32 {%r0, _, %r2, %r3}, [%rd+-8];
st.shared.b32 [buf+4], %r0;
setp.lt.u32 %p|%q, %r0, 64;
setp.eq.and.u32 %p, %r0, 0, !%q;
cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [buf], [%rd, {%r0, %r1}], [buf+8];
@!%p bra L;
L:
ret;"""
    function = kernel(body)
    insts = {i.mnemonic(): i for i in instructions(function)}
    assert isinstance(insts["mov.u32"].args.data[1], ptx.ArgSpecial)
    load = insts["ld.shared.v4.b32"]
    vector, address = load.args.data
    assert isinstance(vector, ptx.ArgVector)
    assert isinstance(vector.elements.data[1], ptx.ArgSink)
    assert isinstance(address, ptx.ArgAddress)
    assert address.offset.data == -8
    store = insts["st.shared.b32"].args.data[0]
    assert isinstance(store, ptx.ArgAddress)
    assert isinstance(store.base, ptx.ArgSymbol)
    assert store.offset.data == 4
    pair = insts["setp.lt.u32"].args.data[0]
    assert isinstance(pair, ptx.ArgPair)
    assert isinstance(insts["setp.eq.and.u32"].args.data[3], ptx.ArgNot)
    tensor = insts["cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"].args.data[1]
    assert isinstance(tensor, ptx.ArgAddress)
    assert len(tensor.vector) == 2
    branch = insts["bra"]
    assert branch.negated is not None
    assert branch.guard is not None
    assert isinstance(branch.args.data[0], ptx.ArgLabel)
    assert (branch.opcode.data, [m.data for m in insts["ld.shared.v4.b32"].modifiers]) == (
        "bra",
        ["shared", "v4", "b32"],
    )


def test_inner_scope_shadows_registers_and_repeats_labels() -> None:
    """PTX ISA §4.4: a `{ }` block scopes its declarations and labels."""
    body = """\
.reg .b32 %x;
mov.u32 %x, 1;
{
  .reg .b32 %x;
AGAIN:
  mov.u32 %x, 2;
  bra AGAIN;
}
{
AGAIN:
  mov.u32 %x, 3;
  bra AGAIN;
}"""
    function = kernel(body)
    outer, inner, sibling = (i for i in instructions(function) if i.opcode.data == "mov")
    assert outer.regs[0] is sibling.regs[0]
    assert inner.regs[0] is not outer.regs[0]
    assert inner.regs[0].type != outer.regs[0].type
    module = function.parent_op()
    assert isinstance(module, ptx.ModuleOp)
    printed = ptx_text(module)
    assert printed.count("mov.u32 %x,") == 3
    assert printed.count("AGAIN:") == 2


@pytest.mark.parametrize("source", CORPUS_FILES, ids=lambda p: p.name)
def test_mlir_form_round_trips(run_opt: RunOpt, source: Path) -> None:
    """`xdsl-tmem-opt k.ptx` prints MLIR that reads back to the same PTX."""
    mlir = run_opt(None, path=source)
    assert mlir.code == 0, mlir.err
    assert "ptx.function" in mlir.out
    assert "ptx.inst" not in mlir.out  # every instruction of the corpus has a typed op
    direct = run_opt(None, "-t", "ptx", path=source)
    again = run_opt(mlir.out, "-t", "ptx")
    assert direct.code == again.code == 0
    assert again.out == direct.out


def test_generic_instructions_round_trip_in_mlir_form(run_opt: RunOpt, tmp_path: Path) -> None:
    """An instruction without a typed op (`cp.async.mbarrier.arrive.noinc`) stays a generic
    `ptx.inst` whose MLIR form reads back to the same PTX."""
    source = tmp_path / "generic.ptx"
    source.write_text(
        ".version 8.8\n.target sm_100a\n.address_size 64\n.visible .entry k()\n{\n"
        "\t.shared .align 8 .b64 bar;\n\tcp.async.mbarrier.arrive.noinc.shared.b64 [bar];\n\tret;\n}\n"
    )
    mlir = run_opt(None, path=source)
    assert mlir.code == 0, mlir.err
    assert "ptx.inst" in mlir.out
    again = run_opt(mlir.out, "-t", "ptx")
    assert again.code == 0, again.err
    assert "\tcp.async.mbarrier.arrive.noinc.shared.b64 [bar];" in again.out


def test_input_format_option(run_opt: RunOpt, tmp_path: Path) -> None:
    """`--input-format ptx` reads PTX from a file of any name."""
    path = tmp_path / "kernel.txt"
    path.write_text((PTX_CORPUS / "syntax_tour.ptx").read_text())
    result = run_opt(None, "--input-format", "ptx", "-t", "ptx", path=path)
    assert result.code == 0, result.err
    assert ".entry syntax_tour(" in result.out


# --------------------------------------------------------------------------------------
# Diagnostics
# --------------------------------------------------------------------------------------


# The kernel's body starts on line 11 of `_KERNEL`.
@pytest.mark.parametrize(
    ("body", "line", "column", "message"),
    [
        ("mov.u32 %r1, 1", 12, 1, "expected"),
        (".reg .b32 %r;\nmov.u32 %nope, %r;", 12, 9, "register %nope is not declared"),
        (".reg .b32 %r;\n.reg .b32 %r;", 12, 11, "register %r is declared twice"),
        (".reg .b32 %r;\n@%r bra L;\nL:\nret;", 12, 2, "guard %r must be a .pred register"),
        (".reg .b33 %r;", 11, 6, ".reg takes one register type"),
        ("bra.uni $L1;\n{\n$L1:\nret;\n}\n.branchtargets L;", 16, 1, "expected"),
        ("L:\nL:\nret;", 12, 1, "label L is defined twice"),
        (".reg .b32 %r;\nmov.b32 %r, 09;", 12, 14, "expected ',' or ';'; got '9'"),  # 0-prefixed: octal
    ],
)
def test_malformed_ptx_is_located(
    run_opt: RunOpt, tmp_path: Path, body: str, line: int, column: int, message: str
) -> None:
    path = tmp_path / "bad.ptx"
    path.write_text(_KERNEL.format(body=body))
    result = run_opt(None, path=path)
    assert result.code == 1
    assert f"{path}:{line}:{column}: error: " in result.err, result.err
    assert message in result.err
    assert "Traceback" not in result.err
    assert "internal error" not in result.err


def test_unknown_directive_names_the_allowed_ones(run_opt: RunOpt, tmp_path: Path) -> None:
    path = tmp_path / "bad.ptx"
    path.write_text(_KERNEL.format(body="ret;").replace(".minnctapersm 1", ".minctapersm 1"))
    result = run_opt(None, path=path)
    assert result.code == 1
    assert f"{path}:9:1: error: unknown directive .minctapersm" in result.err
    assert ".minnctapersm" in result.err


def test_syntax_error_says_what_was_expected(run_opt: RunOpt, tmp_path: Path) -> None:
    path = tmp_path / "bad.ptx"
    path.write_text(".version 8.7\n.target sm_100a\n.address_size 64\n.visible .entry k(\n{\n")
    result = run_opt(None, path=path)
    assert result.code == 1
    assert f"{path}:5:1: error: expected " in result.err
    assert "')'" in result.err
    assert "got '{'" in result.err


_FRAGMENTS = ("{ }", "()", "<0>", "[]", "@", "!", "|", ",,", "{", "}", ";", ":", " _ ", "+-", "0f", "%r<", ".reg ")
"""Pieces of PTX syntax that an insertion mutation drops into a file."""


@pytest.mark.parametrize(
    ("data", "location", "message"),
    [
        (b'.version 8.7\n.target sm_100a\n.file 1 "a\xffb"\n', "3:11", "invalid UTF-8: byte 0xFF"),
        (b".version 8.7\n.version 8.7\n.target sm_100a\n", "2:1", ".version is given twice"),
        (b"", "1:1", "a PTX module starts with .version"),
        (b".version 8.7\n.target sm_100a\n.address_size 48\n", "3:15", ".address_size is 32 or 64, got 48"),
        (b".version 8.7\n.visible .entry k()\n{\nret;\n}\n", "1:1", "needs a .target"),
    ],
)
def test_malformed_module_is_located(run_opt: RunOpt, tmp_path: Path, data: bytes, location: str, message: str) -> None:
    path = tmp_path / "bad.ptx"
    path.write_bytes(data)
    result = run_opt(None, "-t", "ptx", path=path)
    assert result.code == 1
    assert f"{path}:{location}: error: " in result.err, result.err
    assert message in result.err


def _mutations(text: str, seed: int) -> str:
    rng = random.Random(seed)
    match rng.randrange(5):
        case 0:  # truncate
            return text[: rng.randrange(len(text))]
        case 1:  # delete a span
            at = rng.randrange(len(text))
            return text[:at] + text[at + rng.randrange(1, 40) :]
        case 2:  # duplicate a line
            lines = text.splitlines(keepends=True)
            at = rng.randrange(len(lines))
            return "".join([*lines[: at + 1], lines[at], *lines[at + 1 :]])
        case 3:  # replace a character by PTX punctuation
            at = rng.randrange(len(text))
            return text[:at] + rng.choice('{}[]();,.%@!|<>=+-_:0x"') + text[at + 1 :]
        case _:  # insert a piece of PTX syntax
            at = rng.randrange(len(text))
            return text[:at] + rng.choice(_FRAGMENTS) + text[at:]


def test_empty_scopes_and_lists() -> None:
    """`{ }` and `()` may be empty (PTX ISA §4.4; `call` with no arguments)."""
    text = _KERNEL.format(body="{ }\n{ { } }\ncall.uni f, ();\nret;")
    # (`f` is declared: an undeclared callee is an error, test_malformed_ptx_found_in_the_sweep_is_located)
    text = text.replace(".address_size 64\n", ".address_size 64\n.extern .func f();\n")
    (_, function) = parse(text, typed=False).body.block.ops
    assert isinstance(function, ptx.FunctionOp)
    scopes = [op for op in function.walk() if isinstance(op, ptx.ScopeOp)]
    assert len(scopes) == 3
    (call, _) = instructions(function)
    arguments = call.args.data[1]
    assert isinstance(arguments, ptx.ArgList)
    assert not arguments.elements.data


@pytest.mark.parametrize(("depth", "code"), [(MAX_NESTING, 0), (MAX_NESTING + 1, 1), (5000, 1)])
def test_nesting_is_bounded(run_opt: RunOpt, tmp_path: Path, depth: int, code: int) -> None:
    """Scopes nest at most `MAX_NESTING` deep, as MLIR input does: deeper input is a
    located error, not a recursion overflow."""
    path = tmp_path / "deep.ptx"
    path.write_text(_KERNEL.format(body="{" * depth + "ret;" + "}" * depth))
    result = run_opt(None, "-t", "ptx", path=path)
    assert result.code == code, result.err
    if code:
        assert f"{path}:11:{MAX_NESTING + 1}: error: nesting too deep" in result.err


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from([*CORPUS_FILES, *CLIENT_FILES]), st.integers(0, 2**32))
def test_mutated_corpus_parses_or_is_located(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, source: Path, seed: int
) -> None:
    """A random truncation or mutation of a corpus file parses, or fails with exit code
    1 and one located error; never a traceback or an internal error."""
    path = tmp_path / "mutated.ptx"
    path.write_text(_mutations(source.read_text(), seed))
    capsys.readouterr()
    code = opt.main([str(path), "-t", "ptx"])
    err = capsys.readouterr().err
    assert "internal error" not in err
    assert "Traceback" not in err
    if code != 0:
        assert code == 1
        assert LOCATED.search(err), err


# --------------------------------------------------------------------------------------
# xdsl-tmem-run refuses to execute parsed PTX, at the first instruction
# --------------------------------------------------------------------------------------


_ADD_ONE = """\
.version 8.6
.target sm_100a
.address_size 64

.visible .entry add_one(
    .param .u64 .ptr .global .align 4 out
)
{
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd2, %r1, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r2, [%rd3];
    add.s32 %r3, %r2, %r1;
    st.global.u32 [%rd3], %r3;
    PMEVENT
    ret;
}
"""


def test_run_executes_parsed_ptx(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A `.ptx` file runs on the machine model as written: every thread adds its
    `%tid.x` to its element (PTX ISA: `mul.wide.u32` gives the 64-bit product)."""
    source = tmp_path / "add_one.ptx"
    source.write_text(_ADD_ONE.replace("    PMEVENT\n", ""))
    out = tmp_path / "out"
    result = run_cli(capsys, str(source), "--kernel", "add_one", "--block", "64", "--arg", "out=zeros:u32:64",
                     "--out", str(out))  # fmt: skip
    assert result.code == 0, result.err
    assert np.load(out / "out.npy").tolist() == list(range(64))


def test_run_refuses_an_instruction_without_a_typed_op_when_it_executes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """An instruction the model has no typed op for parses, and is refused only when a
    lane executes it, located at its line in the file and naming its opcode."""
    source = tmp_path / "add_one.ptx"
    source.write_text(_ADD_ONE.replace("PMEVENT", "pmevent 1;"))
    line = _ADD_ONE.splitlines().index("    PMEVENT") + 1
    result = run_cli(capsys, str(source), "--kernel", "add_one", "--block", "32", "--arg", "out=zeros:u32:32")
    assert result.code == 1
    assert result.err.startswith(f"{source}:{line}:5: error: "), result.err
    assert "opcode pmevent" in result.err


def test_run_takes_no_passes_for_ptx(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "add_one.ptx"
    source.write_text(_ADD_ONE.replace("    PMEVENT\n", ""))
    result = run_cli(capsys, str(source), "--kernel", "add_one", "--block", "32", "-p", "lower-tmem")
    assert result.code == 1
    assert "-p, -t ptx and --validate-lowering apply to MLIR input" in result.err


def test_run_names_the_kernels(capsys: pytest.CaptureFixture[str]) -> None:
    source = PTX_CORPUS / "syntax_tour.ptx"
    result = run_cli(capsys, str(source), "--kernel", "sum_pair", "--block", "128")
    assert result.code == 1
    assert "sum_pair is a .func, not a kernel (.entry); its kernels: syntax_tour" in result.err
    result = run_cli(capsys, str(source), "--kernel", "nope", "--block", "128")
    assert result.code == 1
    assert "no .entry nope in the PTX module; its kernels: syntax_tour" in result.err


def test_module_header_prints_as_written() -> None:
    """`.target` options and an absent `.address_size` (PTX ISA §11.1.3-4) print back as
    written: nothing is invented."""
    text = ".version 8.7\n.target sm_100a, texmode_independent\n.visible .entry k()\n{\nret;\n}\n"
    printed = ptx_text(parse(text))
    assert ".target sm_100a, texmode_independent\n" in printed
    assert ".address_size" not in printed


_WIDE_IMMEDIATES = """\
.version 8.7
.target sm_100a
.address_size 64

.visible .entry wide(
    .param .u64 .ptr .global .align 8 out
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .shared .align 4 .b32 x[1];
    ld.param.u64 %rd1, [out];
    mov.u32 %r0, %tid.x;
    setp.eq.u32 %p0, %r0, 0;
    @%p0 st.shared.u32 [x], 0xdeadbeef;
    bar.warp.sync 0xffffffff;
    ld.shared.u32 %r1, [x];
    elect.sync %r2|%p1, 0xffffffff;
    shfl.sync.idx.b32 %r3, %r0, 5, 31, 0xffffffff;
    vote.sync.ballot.b32 %r4, %p0, 0xffffffff;
    mov.b32 %r5, 0x80000000;
    mov.b64 %rd2, 0x0123456789abcdef;
    and.b64 %rd3, %rd2, 0xffffffff00000000;
    @%p0 st.global.u32 [%rd1], %r1;
    @%p0 st.global.u32 [%rd1+4], %r2;
    @%p0 st.global.u32 [%rd1+8], %r3;
    @%p0 st.global.u32 [%rd1+12], %r4;
    @%p0 st.global.u32 [%rd1+16], %r5;
    @%p0 st.global.u64 [%rd1+24], %rd3;
    ret;
}
"""


def test_immediates_above_the_signed_range_are_typed(cuda_tools: tuple[str, str], tmp_path: Path) -> None:
    """Issue 13: integer literals above 0x7fffffff (membermasks, bit masks) and 64-bit
    ones are typed immediates of every op that takes an immediate; the print assembles
    to the original's SASS, and each holds the literal's bits (PTX ISA 9.0 §4.5.1)."""
    module = parse(_WIDE_IMMEDIATES)
    generic = [op.mnemonic() for op in module.walk() if isinstance(op, ptx.InstOp)]
    assert generic == []
    literals = {int(m, 16) for m in re.findall(r"0x([0-9a-f]+)", _WIDE_IMMEDIATES)}
    held = set[int]()
    for op in module.walk():
        if isinstance(op, ptx.ImmOp) and isinstance(op.value, IntegerAttr):
            width = op.value.type.width.data if isinstance(op.value.type, IntegerType) else 0
            held.add(op.value.value.data & ((1 << width) - 1))
    assert literals <= held
    round_trip(cuda_tools, _WIDE_IMMEDIATES, tmp_path)


def test_immediates_above_the_signed_range_execute(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """The same kernel run: each stored word is its literal's value (0xdeadbeef through
    shared memory, lane 0 elected, lane 5's id shuffled, lane 0's ballot bit, the high
    word of 0x0123456789abcdef & 0xffffffff00000000)."""
    source = tmp_path / "wide.ptx"
    source.write_text(_WIDE_IMMEDIATES)
    out = tmp_path / "out"
    result = run_cli(capsys, str(source), "--kernel", "wide", "--block", "32", "--arg", "out=zeros:u32:8",
                     "--out", str(out))  # fmt: skip
    assert result.code == 0, result.err
    high = (0x0123456789ABCDEF & 0xFFFFFFFF00000000) >> 32
    assert np.load(out / "out.npy").tolist() == [0xDEADBEEF, 0, 5, 1, 0x80000000, 0, 0, high]


_RACE = """\
// A race: two warps store to one shared word, then read it, with no barrier.
.version 8.7
.target sm_100a
.address_size 64

.visible .entry race(
    .param .u64 .ptr .global .align 4 out
)
{
    .reg .pred %p<2>;
    .reg .b32 %r<4>;   .reg .b64 %rd<4>;
    .shared .align 4 .b32 x[1];

    // the store
    ld.param.u64 %rd1, [out]; mov.u32 %r0, %tid.x;

    /* a block
       comment */
    and.b32 %r1, %r0, 31; setp.eq.u32 %p0, %r1, 0;
    @%p0 st.shared.u32 [x], %r0;
    ld.shared.u32 %r2, [x];
    st.global.u32 [%rd1], %r2;
    ret;
}
"""


def _line_of(text: str, fragment: str) -> int:
    (line,) = [n for n, line in enumerate(text.splitlines(), 1) if fragment in line]
    return line


def test_reports_name_the_line_of_the_ptx_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Issue 13: for a parsed file, a hazard's note, a refusal and a deadlock name the
    file and line of the instruction as the user wrote it (comments, blank lines and
    two instructions on a line here), not the line of our re-printed text."""
    source = tmp_path / "race.ptx"
    source.write_text(_RACE)
    store = _line_of(_RACE, "st.shared.u32")
    printed = ptx_text(parse(_RACE)).splitlines()
    assert _line_of("\n".join(printed), "st.shared.u32") != store  # the two numberings differ here
    result = run_cli(capsys, str(source), "--kernel", "race", "--block", "64", "--arg", "out=zeros:u32:1")
    assert result.code == run.EXIT_HAZARD, result.err
    assert f"note: in warp 1 at {source}:{store}, after" in result.err, result.err
    # A refusal: an instruction without a typed op, second on its line.
    refused = _RACE.replace("and.b32 %r1, %r0, 31;", "and.b32 %r1, %r0, 31; pmevent 1;")
    source.write_text(refused)
    line = _line_of(refused, "pmevent")
    result = run_cli(capsys, str(source), "--kernel", "race", "--block", "32", "--arg", "out=zeros:u32:1")
    assert result.code == 1
    assert f"pmevent at {source}:{line}: opcode pmevent is a generic instruction" in result.err, result.err
    # A deadlock: the waiting warp's line.
    waits = _RACE.replace("ld.shared.u32 %r2, [x];", "bar.sync 0, 64;\n    ld.shared.u32 %r2, [x];")
    source.write_text(waits)
    line = _line_of(waits, "bar.sync")
    result = run_cli(capsys, str(source), "--kernel", "race", "--block", "32", "--arg", "out=zeros:u32:1")
    assert result.code == run.EXIT_DEADLOCK, result.err
    assert f"({source}:{line})" in result.err, result.err


_DUPLICATE = _RACE + _RACE[_RACE.index(".visible") :]


@pytest.mark.parametrize(
    ("old", "new", "at", "message"),
    [
        (".version 8.7", ".version 99.9", "99.9", ".version 99.9: PTX ISA versions are 1.0 to 9.x"),
        (".version 8.7", ".version 8.5", "8.5", ".version 8.5 does not support .target sm_100a; it needs .version 8.6"),
        (".target sm_100a", ".target sm_bogus", "sm_bogus", "unknown .target 'sm_bogus'"),
        ("ret;", "bra NOWHERE;\n    ret;", "bra NOWHERE", "bra: NOWHERE is not declared: no label"),
        ("[x];\n    st.global", "[y];\n    st.global", "ld.shared.u32 %r2, [y]", "ld.shared.u32: y is not declared"),
        ("31;", "0x1ffffffffffffffffff;", "0x1ff", "integer literal 0x1ffffffffffffffffff does not fit in 64 bits"),
        ("%r<4>", "%r<99999999999>", "99999999999", "%r<99999999999>: a range declares at most 65536 registers"),
        (_RACE, _DUPLICATE, ".visible", "function race is defined twice (first on line 6)"),
    ],
    ids=["version", "version-target", "target", "label", "symbol", "literal", "range", "function"],
)
def test_malformed_ptx_found_in_the_sweep_is_located(
    run_opt: RunOpt, ptxas: str, tmp_path: Path, old: str, new: str, at: str, message: str
) -> None:
    """Issue 13's sweep of malformed `.ptx` input: each is a located error of the front
    end (exit 1, no traceback), where ptxas refuses the file too (the 65,536-register
    range is the front end's own limit: ptxas takes larger ones)."""
    text = _RACE.replace(old, new)
    assert text != _RACE
    path = tmp_path / "bad.ptx"
    path.write_text(text)
    result = run_opt(None, path=path)
    assert result.code == 1
    start = text.rindex(at)
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    assert f"{path}:{line}:{column}: error: {message}" in result.err, result.err
    assert "Traceback" not in result.err
    if "65536" not in message:
        assert assemble(ptxas, text) is not None, f"ptxas accepts what the front end refuses:\n{text}"


def test_scalar_argument_out_of_range_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A scalar `--arg` is not truncated to its parameter's width: out of range, refused."""
    source = tmp_path / "k.ptx"
    source.write_text(_RACE.replace("align 4 out\n", "align 4 out,\n    .param .u32 n\n"))
    args = ("--kernel", "race", "--block", "32", "--arg", "out=zeros:u32:1")
    assert run_cli(capsys, str(source), *args, "--arg", "n=4294967295").code == 0
    result = run_cli(capsys, str(source), *args, "--arg", "n=4294967296")
    assert result.code == 1
    assert "argument 'n' has type .u32: 4294967296 does not fit in 32 bits" in result.err, result.err
