"""Recognition of parsed PTX as typed ptx ops (xdsl_tmem/frontend/recognize.py).

Expectations are independent of the recognizer: the text our backend emitted (every
instruction of it must come back typed and print identically), the typed ops that
`tests/test_ptx_isa_rules.py` builds and checks against ptxas (each printed valid op
must come back as an equal op), the original PTX text of every corpus file, and
ptxas's verdict on declared register types (PTX ISA "Type Checking Rules").

The SASS round trip of recognized modules (parse → recognize → print → ptxas →
nvdisasm, identical to the original's) is `tests/test_ptx_frontend.py`'s
`test_*_round_trips`: its `parse` reads through `load_ptx`, which recognizes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from external import ToolFailed, Upstream, run_tool
from support import CORPUS, EXAMPLES, LIT_TESTS, ROOT, OptResult
from test_ptx_frontend import cuda_tools, sass  # noqa: F401  # pyright: ignore[reportUnusedImport]  (a fixture)
from test_ptx_isa_rules import RULES, Rule, kernel, rd, t
from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr
from xdsl.irdl import irdl_op_definition, prop_def

from xdsl_tmem.backend.printer import operand_text, ptx_text
from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.dialects import ptx
from xdsl_tmem.frontend import load_ptx
from xdsl_tmem.frontend.recognize import NotEnumerable, _forms, matches, mnemonic_index, recognize  # pyright: ignore[reportPrivateUsage]

RunOpt = Callable[..., OptResult]

NVVM_PROGRAMS = sorted(p for p in (LIT_TESTS / "nvvm").glob("*.mlir") if not p.name.startswith("invalid_"))
LOWERED_PROGRAMS = sorted(EXAMPLES.glob("*.mlir")) + sorted(CORPUS.glob("*.mlir"))
BACKEND_REFUSES: dict[str, str] = {}
"""Corpus programs the backend does not compile (checked below, so the list cannot go stale)."""
PTX_FILES = [
    *sorted((ROOT / "tests" / "ptx_corpus").glob("*.ptx")),
    *sorted((ROOT / "tests" / "clients").glob("**/*.ptx")),
]


def read(text: str, *, typed: bool = True, source_map: SourceMap | None = None) -> ptx.ModuleOp:
    module = load_ptx(text, "input.ptx", source_map or SourceMap(), typed=typed)
    (inner,) = module.body.block.ops
    assert isinstance(inner, ptx.ModuleOp)
    return inner


def instructions(module: ptx.ModuleOp) -> list[ptx.Instruction]:
    return [op for op in module.walk() if isinstance(op, ptx.Instruction)]


# --------------------------------------------------------------------------------------
# (a) our backend's PTX: every instruction comes back typed, and prints as emitted
# --------------------------------------------------------------------------------------


def _backend_ptx(run_opt: RunOpt, program: Path) -> str:
    args = ("-t", "ptx") if program.parent.name == "nvvm" else ("-p", "lower-tmem", "-t", "ptx")
    result = run_opt(None, *args, path=program)
    if program.name in BACKEND_REFUSES:
        assert result.code == 1, result.out
        assert BACKEND_REFUSES[program.name] in result.err, result.err
        pytest.skip(f"the backend refuses {program.name}")
    assert result.code == 0, result.err
    return result.out


@pytest.mark.parametrize("program", NVVM_PROGRAMS + LOWERED_PROGRAMS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_backend_ptx_is_recognized_completely(run_opt: RunOpt, program: Path) -> None:
    text = _backend_ptx(run_opt, program)
    module = read(text)
    generic = [op.ptx_line(operand_text) for op in instructions(module) if isinstance(op, ptx.InstOp)]
    assert not generic, f"not recognized: {generic}"
    assert ptx_text(module) == text


# --------------------------------------------------------------------------------------
# (b) every valid op of the ISA rule cases comes back as an equal op
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_isa_rule_forms_are_recognized(rule: Rule) -> None:
    original = rule.good()
    line = original.ptx_line(operand_text)
    typed = [op for op in instructions(read(kernel(line))) if not isinstance(op, ptx.RetOp)]
    assert len(typed) == 1, line
    (op,) = typed
    assert type(op) is type(original), (line, op.name)
    assert op.properties == original.properties, line
    assert op.ptx_line(operand_text) == line


# --------------------------------------------------------------------------------------
# (c) PTX from elsewhere: recognition never changes the text; what it covers
# --------------------------------------------------------------------------------------


def _same_text_and_unambiguous(text: str) -> tuple[int, int]:
    generic, typed = read(text, typed=False), read(text)
    assert ptx_text(typed) == ptx_text(generic)
    for inst in instructions(read(text, typed=False)):
        assert isinstance(inst, ptx.InstOp)
        found, _ = matches(inst)
        assert len(found) <= 1, f"{inst.ptx_line(operand_text)} reads as {[m.op.name for m in found]}"
    ops = instructions(typed)
    return sum(not isinstance(op, ptx.InstOp) for op in ops), len(ops)


@pytest.mark.parametrize("path", PTX_FILES, ids=lambda p: str(p.relative_to(ROOT / "tests")))
def test_corpus_recognition_keeps_the_text(path: Path) -> None:
    recognized, total = _same_text_and_unambiguous(path.read_text())
    assert recognized > total // 2, (recognized, total)


@pytest.mark.parametrize("path", sorted((ROOT / "silicon" / "programs").glob("gen_*.ptx")), ids=lambda p: p.name)
def test_generated_silicon_programs_are_typed_completely(path: Path) -> None:
    """Every instruction of the generated silicon programs (the value instructions of
    dialects/ptx/values.py among them) reads as exactly one typed op, text unchanged."""
    recognized, total = _same_text_and_unambiguous(path.read_text())
    assert recognized == total, (recognized, total)


@pytest.mark.parametrize(
    "program", [*NVVM_PROGRAMS, *sorted(EXAMPLES.glob("*.mlir"))], ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_llc_ptx_recognition_keeps_the_text(run_opt: RunOpt, upstream: Upstream, program: Path) -> None:
    """llc-22's PTX of the NVVM lit programs and of the lowered examples."""
    if program.parent.name == "nvvm":
        nvvm = program.read_text()
    else:
        lowered = run_opt(None, "-p", "lower-tmem", path=program)
        assert lowered.code == 0, lowered.err
        nvvm = lowered.out
    recognized, total = _same_text_and_unambiguous(upstream.to_ptx(nvvm))
    assert recognized > total // 2, (recognized, total)


# --------------------------------------------------------------------------------------
# Registers, guards, locations, what stays generic
# --------------------------------------------------------------------------------------

_KERNEL = """\
.version 8.7
.target sm_100a
.address_size 64
.visible .entry k(.param .u64 k_out)
{{
    .reg .pred %p<3>;
    .reg .b32 %r<4>;
    .reg .u32 %u<4>;
    .reg .s64 %sd<4>;
    .reg .f32 %f<4>;
    .reg .b64 %rd<4>;
{body}
    ret;
}}
"""


def _only(body: str, source_map: SourceMap | None = None) -> ptx.Instruction:
    (op, _ret) = instructions(read(_KERNEL.format(body=f"    {body}"), source_map=source_map))
    return op


def test_guard_negation_and_location_carry_over() -> None:
    source_map = SourceMap()
    op = _only("@!%p1 add.s32 %r1, %r2, 3;", source_map)
    assert isinstance(op, ptx.AddOp)
    assert op.negated is not None
    assert op.guard is not None
    assert op.guard.type == ptx.RegisterType.named("pred", "%p1")
    assert op.res.type == ptx.RegisterType.named("b32", "%r1")
    assert isinstance(op.rhs.owner, ptx.ImmOp)
    assert op.rhs.owner.literal() == "3"
    # The source is an SSA use of its declaration, as the parser made it.
    assert isinstance(op.lhs.owner, ptx.RegDeclOp)
    # Located where the parser located the generic instruction (line 12 of the file).
    generic_map = SourceMap()
    (inst, _ret) = instructions(read(_KERNEL.format(body="    @!%p1 add.s32 %r1, %r2, 3;"), typed=False,
                                     source_map=generic_map))  # fmt: skip
    span, expected = source_map.span_of(op), generic_map.span_of(inst)
    assert span is not None
    assert expected is not None
    assert span.get_location().line == 12
    assert span.get_location() == expected.get_location()


def test_driver_prints_typed_and_generic_ops(run_opt: RunOpt, tmp_path: Path) -> None:
    """`xdsl-tmem-opt k.ptx` reads through the recognizer: typed ops where they exist."""
    path = tmp_path / "k.ptx"
    body = "    add.s32 %r1, %r2, 3;\n    vadd.u32.u32.u32 %r0, %r1, %r2, %r3;"
    path.write_text(_KERNEL.format(body=body))
    result = run_opt(None, path=path)
    assert result.code == 0, result.err
    for name in ('"ptx.add"', '"ptx.inst"', '"ptx.ret"'):
        assert name in result.out


def test_unrecognized_instructions_stay_generic() -> None:
    body = "\n".join([
        "    vadd.u32.u32.u32 %r0, %r1, %r2, %r3;",  # no typed op (a video instruction)
        "    elect.sync %r1|%r2, -1;",  # the typed op's predicate is a .pred register
        "    add.s32 %r1, %r2, 3;",
    ])  # fmt: skip
    module = read(_KERNEL.format(body=body), typed=False)
    coverage = recognize(module)
    assert (coverage.recognized, coverage.total) == (2, 4)
    assert coverage.unrecognized == {"vadd.u32.u32.u32": 1, "elect.sync": 1}


def test_client_spellings_are_typed(ptxas: str) -> None:
    """Issue 13: what Triton and CuTe DSL write is typed and prints back as written (and
    ptxas assembles the kernel): `.nc`, a lane-id `elect.sync` destination, one-element
    vectors, written `+0` offsets, a `tcgen05.mma` without its default collector, `mov`
    pack/unpack with sinks."""
    body = "\n".join([
        "    ld.global.nc.v4.b32 {%r0, %r1, %r2, %r3}, [%rd1];",
        "    elect.sync %r1|%p1, -1;",
        "    ld.global.b32 {%r1}, [%rd1+0];",
        "    st.global.v4.b32 [%rd1+0], {%r0, %r1, %r2, %r3};",
        "    mov.b64 %rd2, {%r1, %r2};",
        "    mov.b64 {_, %r3}, %rd2;",
        "    @%p1 tcgen05.mma.cta_group::1.kind::f16 [%r0+0], %rd1, %rd2, %r1, %p2;",
        "    barrier.sync 1;",
        "    bfe.u32 %r1, %r2, 4, 15;",
        "    shfl.sync.idx.b32 %r1, %r2, 0, 31, -1;",
    ])  # fmt: skip
    text = _KERNEL.format(body=body)
    assert _assembles(ptxas, text)
    module = read(text)
    ops = instructions(module)
    assert [type(op) for op in ops] == [
        ptx.LdOp, ptx.ElectSyncOp, ptx.LdOp, ptx.StOp, ptx.MovPackOp, ptx.MovUnpackOp, ptx.Tcgen05MmaOp,
        ptx.BarrierOp, ptx.BfeOp, ptx.ShflSyncOp, ptx.RetOp,
    ]  # fmt: skip
    nc, elect, braced, st, pack, unpack, mma = ops[:7]
    assert isinstance(nc, ptx.LdOp)
    assert nc.nc is not None
    assert isinstance(elect, ptx.ElectSyncOp)
    assert elect.lane is not None
    assert isinstance(braced, ptx.LdOp)
    assert braced.braced is not None
    assert braced.offset_written is not None
    assert isinstance(st, ptx.StOp)
    assert st.offset_written is not None
    assert st.braced is None
    assert isinstance(pack, ptx.MovPackOp)
    assert len(pack.parts) == 2
    assert isinstance(unpack, ptx.MovUnpackOp)
    assert unpack.d0 is None
    assert unpack.d1 is not None
    assert isinstance(mma, ptx.Tcgen05MmaOp)
    assert mma.collector is None
    assert mma.offset_written is not None
    printed = [op.ptx_line(operand_text) for op in ops[:-1]]
    assert printed == [line.strip() for line in body.splitlines()]


def test_st_param_writes_func_parameters_and_call_arguments() -> None:
    """`st.param` into a `.func`'s return value and into a call's `.param` argument is
    typed (syntax_tour.ptx, assembled by ptxas in test_ptx_frontend); into a kernel's
    parameter it is refused (test_ptx_isa_rules: st-not-kernel-param)."""
    module = read((ROOT / "tests" / "ptx_corpus" / "syntax_tour.ptx").read_text())
    stores = [op for op in module.walk() if isinstance(op, ptx.StOp) and op.space is not None]
    assert sum(op.space.data is ptx.StateSpace.PARAM for op in stores if op.space is not None) == 6
    generic = [op.mnemonic() for op in module.walk() if isinstance(op, ptx.InstOp)]
    assert "st.param.b32" not in generic


# PTX ISA 9.0, "Type Checking Rules": a .bN register serves any N-bit instruction type;
# float registers serve float types, integer ones .u/.s types; a .bN instruction type
# takes any register of its size. ptxas is the oracle for each line.
DECLARED_TYPES = [
    ("add.f32 %f1, %f2, %f3;", True),
    ("add.f32 %f1, %r2, %f3;", True),
    ("add.f32 %f1, %u2, %f3;", False),
    ("add.u32 %u1, %u2, %r3;", True),
    ("add.u32 %u1, %f2, %u3;", False),
    ("add.s32 %u1, %u2, 1;", True),
    ("mov.b32 %f1, %u2;", True),
    ("mov.f32 %r1, %f2;", True),
    ("setp.lt.f32 %p1, %f1, %f2;", True),
    ("setp.lt.s32 %p1, %f1, %r2;", False),
    ("cvt.rn.f32.u32 %f1, %u2;", True),
    ("cvt.rn.f32.s64 %f1, %sd2;", True),
    ("cvt.rn.f32.u32 %f1, %f2;", False),
    ("ld.global.f32 %f1, [%sd1];", True),
    ("ld.global.u32 %f1, [%rd1];", False),
    ("add.s64 %sd1, %sd2, %rd3;", True),
    ("add.s64 %sd1, %sd2, %r3;", False),
]


@pytest.mark.parametrize(("line", "valid"), DECLARED_TYPES, ids=[line for line, _ in DECLARED_TYPES])
def test_declared_register_types_follow_ptxas(ptxas: str, line: str, valid: bool) -> None:
    """Our verdict (recognized as a typed op, or left generic because the typed op's
    verifier refuses it) equals ptxas's (assembles or not), and ptxas agrees with the
    expectation written here."""
    accepted = _assembles(ptxas, _KERNEL.format(body=f"    {line}"))
    assert accepted == valid, f"ptxas {'accepts' if accepted else 'rejects'} {line}"
    op = _only(line)
    assert (not isinstance(op, ptx.InstOp)) == valid, line
    if not valid:
        assert isinstance(op, ptx.InstOp)
        _, refused = matches(op)
        assert refused, line
        assert "PTX ISA 9.0" in refused[0], refused


def _assembles(ptxas: str, text: str) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "k.ptx"
        source.write_text(text)
        try:
            run_tool([ptxas, "-arch=sm_100a", str(source), "-o", str(Path(tmp) / "k.cubin")])
        except ToolFailed:
            return False
    return True


def test_negative_offsets_print_as_ptxas_reads_them(ptxas: str) -> None:
    """A typed op's negative address offset prints `[a+-16]`, which ptxas assembles (it
    rejects `[a-16]`); llc-22 writes the same, so its loads and stores are recognized."""
    load = ptx.LdOp(ptx.StateSpace.GLOBAL, ptx.PtxType.U32, [t("b32")], rd(1), offset=-16)
    line = load.ptx_line(operand_text)
    assert line == "ld.global.u32 %r1, [%rd1+-16];"
    assert _assembles(ptxas, kernel(line))
    assert not _assembles(ptxas, kernel(line.replace("+-", "-")))
    (op, _ret) = instructions(read(kernel(line)))
    assert isinstance(op, ptx.LdOp)
    assert op.offset.data == -16


def test_every_typed_instruction_has_forms() -> None:
    """Each typed instruction class is reachable: the index holds forms of every one."""
    classes = {form.cls for forms in mnemonic_index().values() for form in forms}
    typed = {op for op in ptx.PTX.operations if issubclass(op, ptx.Instruction) and op is not ptx.InstOp}
    assert typed == classes, sorted(op.name for op in typed - classes)


@irdl_op_definition
class _ListedOp(ptx.Instruction):
    """A typed op whose property has no finite domain (for the test below)."""

    name = "test.listed"
    items = prop_def(ArrayAttr[StringAttr])

    def mnemonic(self) -> str:
        return "listed"

    def ptx_operands(self, name: ptx.Namer) -> list[str]:
        return []


def test_an_op_that_cannot_be_enumerated_is_named() -> None:
    """A property neither finite nor open makes the op's forms unenumerable: an error
    naming op and property (its instructions stay generic), not a wrong index."""
    with pytest.raises(NotEnumerable, match=r"^test\.listed: property items "):
        list(_forms(_ListedOp))


def test_driver_prints_typed_ops(run_opt: RunOpt) -> None:
    result = run_opt(None, path=ROOT / "tests" / "ptx_corpus" / "ref_pipeline.ptx")
    assert result.code == 0, result.err
    assert '"ptx.tcgen05_alloc"' in result.out
    assert '"ptx.mbarrier_wait"' in result.out


def test_recognize_pass_on_the_mlir_form(run_opt: RunOpt) -> None:
    """`-p recognize-ptx` types the generic MLIR form the same way reading the `.ptx` does."""
    source = ROOT / "tests" / "ptx_corpus" / "ref_pipeline.ptx"
    generic = read(source.read_text(), typed=False)
    result = run_opt(str(generic.parent_op()), "-p", "recognize-ptx")
    assert result.code == 0, result.err
    direct = run_opt(None, path=source)
    assert result.out == direct.out


def test_wide_immediates_are_typed_in_every_op_that_takes_one(ptxas: str) -> None:
    """Issue 13: literals above 0x7fffffff (and 64-bit ones) are typed immediates of
    every typed op taking an immediate and print back as the generic op prints them
    (decimal, hex above 2^63-1); ptxas assembles the kernel."""
    body = "\n".join([
        "    match.any.sync.b32 %r1, %r2, 0xffffffff;",
        "    redux.sync.add.u32 %r1, %r2, 0xffffffff;",
        "    add.u32 %r1, %r2, 0xffffffff;",
        "    sub.u64 %rd2, %rd1, 0xffffffffffffffff;",
        "    mul.lo.u32 %r3, %r2, 0x80000001;",
        "    min.u32 %r3, %r2, 0xfffffff0;",
        "    selp.b32 %r3, 0xffffffff, 0, %p1;",
        "    st.global.u64 [%rd1], 0xffffffffffffffff;",
        "    xor.b32 %r0, %r3, 0x80000000;",
        "    prmt.b32 %r0, %r3, 0x76543210, %r2;",
        "    lop3.b32 %r0, %r3, %r2, %r1, 0xff;",
        "    setp.lo.u32 %p2, %r0, 0xfffffffe;",
        "    setp.ne.and.b32 %p2|%p0, %r0, 0xfffffffe, %p1;",
        "    vote.sync.all.pred %p2, %p1, 0xffffffff;",
        "    shfl.sync.bfly.b32 %r3|%p0, %r0, 16, 0x1f, 0xffffffff;",
        "    mov.b64 %rd3, 0x8000000000000000;",
        "    and.b64 %rd3, %rd3, 0xffffffff00000000;",
    ])  # fmt: skip
    text = _KERNEL.format(body=body)
    assert _assembles(ptxas, text)
    ops = instructions(read(text))[:-1]
    assert not [op.mnemonic() for op in ops if isinstance(op, ptx.InstOp)]
    generic = instructions(read(text, typed=False))[:-1]
    assert [op.ptx_line(operand_text) for op in ops] == [op.ptx_line(operand_text) for op in generic]


_MBARRIER_KERNEL = """\
.version 8.6
.target sm_100a{options}
.address_size 64
.shared .align 8 .b64 mbs[2];
.visible .entry k(.param .u64 k_out)
{{
    .reg .pred %p;
    .reg .b32 %r;
    .reg .b64 %rd;
    ld.param.u64 %rd, [k_out];
    mbarrier.init.shared::cta.b64 [mbs+0], 1;
    mbarrier.init.shared::cta.b64 [mbs+8], 1;
    mbarrier.arrive.shared::cta.b64 _, [mbs+0];
    mbarrier.test_wait.parity.shared::cta.b64 %p, [mbs+0], 0;
    selp.u32 %r, 1, 0, %p;
    st.global.u32 [%rd], %r;
    ret;
}}
"""


def test_written_zero_offset_reads_as_the_typed_op_with_the_same_sass(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """`[mbs+0]` on an op that prints a zero offset as `[mbs]` (the mbarrier ops have no
    written-`+0` flag) is typed with offset 0, and the typed module's text assembles to
    the SASS ptxas makes of the file as written; under `.target ..., debug`, where the
    spelling is the programmer's to keep, it stays generic and prints as written."""
    tools: tuple[str, str] = request.getfixturevalue("cuda_tools")
    text = _MBARRIER_KERNEL.format(options="")
    module = read(text)
    ops = [op for op in instructions(module) if op.mnemonic().startswith("mbarrier")]
    assert [type(op) for op in ops] == [ptx.MbarrierInitOp, ptx.MbarrierInitOp, ptx.MbarrierArriveOp,
                                        ptx.MbarrierWaitOp]  # fmt: skip
    assert all(op.properties["offset"] == IntAttr(o) for op, o in zip(ops, (0, 8, 0, 0), strict=True))
    assert sass(tools, ptx_text(module), tmp_path, "typed") == sass(tools, text, tmp_path, "written")
    debug = _MBARRIER_KERNEL.format(options=", debug")
    typed = read(debug)
    kept = [op for op in instructions(typed) if op.mnemonic().startswith("mbarrier")]
    assert [isinstance(op, ptx.InstOp) for op in kept] == [True, False, True, True]
    assert ptx_text(typed) == ptx_text(read(debug, typed=False))
