"""The PTX backend against its oracles: ptxas (every target) and llc-22 (the tcgen05,
mbarrier, barrier and elect instructions of every NVVM-level program).

Expectations are independent of our code: ptxas's verdict, llc-22's PTX for the same
file, and the per-target feature table of docs/ptx-nvvm.md §1.1 (itself re-checked against
ptxas below).
"""

from __future__ import annotations

import ast
import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from external import ToolFailed, Upstream
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import EXAMPLES, LIT_TESTS, OptResult, ptxas_assemble

from xdsl_tmem.backend.ptxas import parse_verbose
from xdsl_tmem.backend.target import ARCHS

RunOpt = Callable[..., OptResult]

NVVM_PROGRAMS = sorted(p for p in (LIT_TESTS / "nvvm").glob("*.mlir") if not p.name.startswith("invalid_"))
EXAMPLE_PROGRAMS = sorted(EXAMPLES.glob("*.mlir"))
PROGRAMS = [*NVVM_PROGRAMS, *EXAMPLE_PROGRAMS]
TARGETS = list(ARCHS)


def nvvm_level(run_opt: RunOpt, program: Path, policy: str = "strict") -> str:
    """The program at NVVM level: examples are lowered from tmem first."""
    if program.parent == EXAMPLES:
        result = run_opt(None, "-p", f"lower-tmem{{fence-policy={policy}}}", path=program)
    else:
        result = run_opt(None, path=program)
    assert result.code == 0, result.err
    return result.out


def expected_refusals(text: str, arch: str) -> list[str]:
    """The features docs/ptx-nvvm.md §1.1 says `arch` lacks, if the program uses them."""
    refusals: list[str] = []
    if "tcgen05_mma_kind<i8>" in text and arch not in ("sm_100a", "sm_110a"):
        refusals.append("kind::i8 is not available")
    if "nvvm.tcgen05.shift" in text and arch.endswith("f"):
        refusals.append("tcgen05.shift is not available")
    if re.search(r"nvvm\.tcgen05\.mma .* scale = ", text) and arch == "sm_110a":
        refusals.append("scale-input-d operand is not available")
    return refusals


@pytest.mark.parametrize("arch", TARGETS)
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_ptx_assembles_for_every_target(run_opt: RunOpt, ptxas: str, tmp_path: Path, program: Path, arch: str) -> None:
    text = nvvm_level(run_opt, program)
    result = run_opt(text, "-t", f"ptx{{arch={arch}}}")
    refusals = expected_refusals(text, arch)
    if refusals:
        assert result.code == 1
        assert any(r in result.err for r in refusals), result.err
        return
    assert result.code == 0, result.err
    assert f".target {arch}" in result.out
    ptxas_assemble(ptxas, result.out, tmp_path, arch)


_FEATURES = {
    "kind::i8": "tcgen05.mma.cta_group::1.kind::i8.collector::a::discard [%r1], %rd1, %rd1, %r1, 1;",
    "shift": "tcgen05.shift.cta_group::1.down [%r1];",
    "scale": "tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [%r1], %rd1, %rd1, %r1, 1, 3;",
}
_PROBE = """\
.version {version}
.target {arch}
.address_size 64
.visible .entry k()
{{
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    mov.u32 %r1, 0;
    mov.u64 %rd1, 0;
    {instruction}
    ret;
}}
"""


@pytest.mark.parametrize("feature", list(_FEATURES))
@pytest.mark.parametrize("arch", TARGETS)
def test_feature_table_agrees_with_ptxas(ptxas: str, tmp_path: Path, arch: str, feature: str) -> None:
    target = ARCHS[arch]
    ours = {"kind::i8": target.mma_i8, "shift": target.shift, "scale": target.mma_scale}[feature]
    probe = _PROBE.format(version=target.version, arch=arch, instruction=_FEATURES[feature])
    try:
        ptxas_assemble(ptxas, probe, tmp_path, arch)
        accepted = True
    except ToolFailed:
        accepted = False
    assert accepted == ours


_SYNC_INSTRUCTION = re.compile(r"^\s*(?:@%?!?[\w]+\s+)?((?:tcgen05|mbarrier|bar|barrier|elect)[\w.:]*)", re.MULTILINE)


def sync_instructions(ptx: str) -> Counter[str]:
    """The multiset of tcgen05 / mbarrier / barrier / elect opcodes, modifiers included."""
    return Counter(_SYNC_INSTRUCTION.findall(ptx))


_DIFFERENTIAL = [(p, "strict") for p in NVVM_PROGRAMS] + [
    (e, pol) for e in EXAMPLE_PROGRAMS for pol in ("strict", "mojo")
]


@pytest.mark.parametrize(("program", "policy"), _DIFFERENTIAL, ids=lambda v: v.name if isinstance(v, Path) else v)
def test_sync_instructions_match_llc(run_opt: RunOpt, upstream: Upstream, program: Path, policy: str) -> None:
    text = nvvm_level(run_opt, program, policy)
    ours = run_opt(text, "-t", "ptx")
    assert ours.code == 0, ours.err
    expected = sync_instructions(upstream.to_ptx(text))
    assert expected, "llc-22's PTX has none of the compared instructions"
    assert sync_instructions(ours.out) == expected


def packed_f32(ptx: str) -> Counter[str]:
    """The packed single-precision instructions (`add/sub/mul/fma[.rnd].f32x2`) of a PTX text."""
    return Counter(re.findall(r"^\s*(?:@!?%p\d+\s+)?((?:add|sub|mul|fma)(?:\.r[nzmp])?\.f32x2)\b", ptx, re.M))


@pytest.mark.parametrize("program", EXAMPLE_PROGRAMS, ids=lambda p: p.name)
def test_packed_f32_arithmetic_matches_llc(run_opt: RunOpt, upstream: Upstream, program: Path) -> None:
    """vector<Nxf32> add/sub/mul select `.f32x2` wherever llc-22 does, one per lane pair: the
    same packed instructions, as many (blockwise_fp8's 4 mulf + 4 addf on vector<16xf32>:
    32 `mul.rn.f32x2` and 32 `add.rn.f32x2`; the other examples none)."""
    text = nvvm_level(run_opt, program)
    ours = run_opt(text, "-t", "ptx")
    assert ours.code == 0, ours.err
    assert packed_f32(ours.out) == packed_f32(upstream.to_ptx(text))
    if program.stem == "blockwise_fp8_cg1":
        assert packed_f32(ours.out) == {"mul.rn.f32x2": 32, "add.rn.f32x2": 32}
        assert not re.search(r"\b(?:mul|add)\.rn\.f32\s", ours.out), "a lane left scalar"


# --------------------------------------------------------------------------------------
# Property: random valid pipeline configurations all assemble
# --------------------------------------------------------------------------------------

_LDST_SHAPES = {"shape_16x64b": 1, "shape_16x128b": 2, "shape_16x256b": 4, "shape_32x32b": 1, "shape_16x32bx2": 1}
_KINDS = ("f16", "tf32", "f8f6f4", "i8")


@st.composite
def pipeline_configs(draw: st.DrawFn) -> dict[str, object]:
    cta_group = draw(st.sampled_from([1, 2]))
    num_stages = draw(st.integers(1, 8))
    stride = 8 * draw(st.integers(1, 512 // num_stages // 8))
    repeat = draw(st.sampled_from([r for r in (1, 2, 4, 8, 16, 32) if 8 * r <= stride]))
    shape = draw(st.sampled_from(list(_LDST_SHAPES)))
    registers_per_num = _LDST_SHAPES[shape]
    num = draw(st.sampled_from([n for n in (1, 2, 4, 8, 16, 32) if n * registers_per_num <= 64]))
    kind = draw(st.sampled_from(_KINDS))
    arch = draw(st.sampled_from([a for a in ARCHS if kind != "i8" or ARCHS[a].mma_i8]))
    columns = 32
    while columns < num_stages * stride:
        columns *= 2
    return {
        "cta_group": cta_group,
        "num_stages": num_stages,
        "stride": stride,
        "repeat": repeat,
        "shape": shape,
        "registers": num * registers_per_num,
        "kind": kind,
        "arch": arch,
        "columns": columns,
        "policy": draw(st.sampled_from(["strict", "mojo"])),
    }


def pipeline_program(c: dict[str, object]) -> str:
    n, stride, cg, cols = c["num_stages"], c["stride"], c["cta_group"], c["columns"]
    ring = f"!tmem.output_ring<{n}, {stride}, {cg}>"
    stage = f"!tmem.tmem_stage<{n}, {stride}, {cg}>"
    mma_ctx = f"!tmem.mma_warp_context<{n}, {stride}, {cg}, 32, 128, {cols}>"
    epi_ctx = f"!tmem.epilogue_warp_context<{n}, {stride}, {cg}, 32, 128, {cols}>"
    mask = " mma_complete_mask %pair" if cg == 2 else ""
    cluster = ", nvvm.cluster_dim = array<i32: 2, 1, 1>" if cg == 2 else ""
    regs = 4 * int(str(c["repeat"]))
    ldst = int(str(c["registers"]))
    vec = "i32" if ldst == 1 else f"vector<{ldst}xi32>"
    split = ", %off" if c["shape"] == "shape_16x32bx2" else ""
    mma_attributes = f"{{kind = #nvvm.tcgen05_mma_kind<{c['kind']}>, ctaGroup = #nvvm.cta_group<cta_{cg}>}}"
    return f"""
llvm.mlir.global internal @bars() {{addr_space = 3 : i32, alignment = 8 : i64}} : !llvm.array<{2 * int(str(n))} x i64>
llvm.mlir.global internal @dbar() {{addr_space = 3 : i32, alignment = 8 : i64}} : i64
llvm.mlir.global internal @slot() {{addr_space = 3 : i32, alignment = 4 : i64}} : i32
llvm.func @k(%out: !llvm.ptr<1>, %ntiles: i32, %ad: i64, %bd: i64, %idesc: i32)
    attributes {{nvvm.kernel, nvvm.maxntid = array<i32: 160, 1, 1>{cluster}}} {{
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c4 = arith.constant 4 : i32
  %c5 = arith.constant 5 : i32
  %pair = arith.constant 3 : i16
  %off = llvm.mlir.constant(2 : i64) : i64
  %slot = llvm.mlir.addressof @slot : !llvm.ptr<3>
  %bars = llvm.mlir.addressof @bars : !llvm.ptr<3>
  %dbar = llvm.mlir.addressof @dbar : !llvm.ptr<3>
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %warp = arith.shrui %tid, %c5 : i32
  %is_t0 = arith.cmpi eq, %tid, %c0 : i32
  scf.if %is_t0 {{
    tmem.output_ring.init_barriers %bars producer_arv_count 1 consumer_arv_count {128 * int(str(cg))} : {ring}
    tmem.dealloc_barrier.init %dbar arrival_count {128 * int(str(cg))} : !tmem.dealloc_barrier<{cg}>
    nvvm.fence.mbarrier.init
  }}
  nvvm.barrier0
  %is_mma = arith.cmpi eq, %warp, %c4 : i32
  scf.if %is_mma {{
    tmem.warp_context.mma %slot, %bars, %dbar{mask} : {mma_ctx} {{
    ^bb0(%ctx: {mma_ctx}):
      %leader = nvvm.elect.sync -> i1
      %r0 = tmem.warp_context.output_ring %ctx : {mma_ctx} -> {ring}
      %end = scf.for %t = %c0 to %ntiles step %c1 iter_args(%ring = %r0) -> ({ring}) : i32 {{
        %next = tmem.output_ring.producer %ring leader %leader : {ring} {{
        ^bb1(%s: {stage}):
          %d = tmem.tmem_stage.address %s : {stage}
          %first = arith.cmpi eq, %t, %c0 : i32
          scf.if %leader {{
            nvvm.tcgen05.mma %d, %ad, %bd, %idesc, %first {mma_attributes} : (!llvm.ptr<6>, i64, i64, i32, i1)
          }}
          tmem.yield
        }}
        scf.yield %next : {ring}
      }}
      tmem.yield
    }}
  }} else {{
    tmem.warp_context.epilogue %slot, %bars, %dbar{mask} : {epi_ctx} {{
    ^bb0(%ctx: {epi_ctx}):
      %r0 = tmem.warp_context.output_ring %ctx : {epi_ctx} -> {ring}
      %end = scf.for %t = %c0 to %ntiles step %c1 iter_args(%ring = %r0) -> ({ring}) : i32 {{
        %next = tmem.output_ring.consumer %ring : {ring} {{
        ^bb1(%s: {stage}):
          %u = tmem.tmem_stage.load_upper %s repeat {c["repeat"]} : {stage} -> vector<{regs}xf32>
          %l = tmem.tmem_stage.load_lower %s repeat {c["repeat"]} : {stage} -> vector<{regs}xf32>
          %p = tmem.tmem_stage.address %s : {stage}
          %x = nvvm.tcgen05.ld %p{split} {{shape = #nvvm.tcgen05_ldst_shape<{c["shape"]}>}} : {vec}
          tmem.wait_load
          nvvm.tcgen05.st %p, %x{split} {{shape = #nvvm.tcgen05_ldst_shape<{c["shape"]}>}} : {vec}
          tmem.wait_store
          tmem.output_ring.arrive_empty %ring, %s : {ring}, {stage}
          %o = llvm.getelementptr %out[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<{regs}xf32>
          llvm.store %u, %o : vector<{regs}xf32>, !llvm.ptr<1>
          llvm.store %l, %o : vector<{regs}xf32>, !llvm.ptr<1>
          tmem.yield
        }}
        scf.yield %next : {ring}
      }}
      tmem.yield
    }}
  }}
  llvm.return
}}
"""


_EXAMPLES = 200 if os.environ.get("CI") else 40


@settings(max_examples=_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pipeline_configs())
def test_random_pipelines_assemble(run_opt: RunOpt, ptxas: str, tmp_path: Path, config: dict[str, object]) -> None:
    program = pipeline_program(config)
    result = run_opt(
        program, "-p", f"lower-tmem{{fence-policy={config['policy']}}}", "-t", f"ptx{{arch={config['arch']}}}"
    )
    assert result.code == 0, f"{config}\n{result.err}"
    ptxas_assemble(ptxas, result.out, tmp_path, str(config["arch"]))


# --------------------------------------------------------------------------------------
# ptxas -v parsing and the --ptxas driver flag
# --------------------------------------------------------------------------------------

_VERBOSE = """\
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'ref_pipeline' for 'sm_100a'
ptxas info    : Function properties for ref_pipeline
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 51 registers, used 1 barriers, 24612 bytes smem
ptxas info    : Compile time = 28.609 ms
"""


def test_parse_verbose_reads_the_documented_report() -> None:
    # The report is quoted from docs/ptx-nvvm.md §4.
    (stats,) = parse_verbose(_VERBOSE)
    assert (stats.kernel, stats.arch, stats.registers, stats.barriers, stats.shared_bytes) == (
        "ref_pipeline", "sm_100a", 51, 1, 24612,
    )  # fmt: skip
    assert (stats.spill_stores, stats.spill_loads, stats.stack_frame) == (0, 0, 0)


def test_ptxas_flag_reports_real_figures(run_opt: RunOpt, ptxas: str, tmp_path: Path) -> None:
    program = LIT_TESTS / "nvvm" / "ref_pipeline.mlir"
    result = run_opt(None, "-t", "ptx", "--ptxas", path=program)
    assert result.code == 0, result.err
    match = re.search(r"ptxas: ref_pipeline \(sm_100a\): (\d+) registers, 0 B spill stores", result.err)
    assert match is not None, result.err
    # The same PTX assembled directly gives the same register count.
    source = tmp_path / "k.ptx"
    source.write_text(result.out)
    import subprocess

    proc = subprocess.run(
        [ptxas, "-arch=sm_100a", "-v", str(source), "-o", str(tmp_path / "k.cubin")], capture_output=True, text=True
    )
    (direct,) = parse_verbose(proc.stdout + proc.stderr)
    assert int(match.group(1)) == direct.registers


def test_ptxas_flag_reports_ptxas_errors(run_opt: RunOpt, ptxas: str) -> None:
    # docs/ptx-nvvm.md §4: a .32x32b.x128 load cannot fit a 64-register budget (C7602).
    program = """
llvm.func @k(%t: !llvm.ptr<6>, %out: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxnreg = 64 : i32} {
  %v = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<128xi32>
  nvvm.tcgen05.wait <load>
  llvm.store %v, %out : vector<128xi32>, !llvm.ptr<1>
  llvm.return
}
"""
    result = run_opt(program, "-t", "ptx", "--ptxas")
    assert result.code == 1
    assert result.err.startswith("error: ptxas rejected the generated PTX for sm_100a:")
    assert "Insufficient registers" in result.err


def test_ptxas_flag_needs_the_ptx_target(run_opt: RunOpt) -> None:
    result = run_opt("builtin.module {}", "--ptxas")
    assert result.code == 1
    assert "--ptxas needs the PTX target (-t ptx)" in result.err


# ---- the backend's structure ----------------------------------------------------------


def _runtime_imports(tree: ast.Module, modules: set[str]) -> set[str]:
    """Which of `modules` a module imports when it runs: `import a.b` → a.b; `from a
    import b` → a.b where that is a module, else a. Imports under `if TYPE_CHECKING:` are
    left out (only the type checker reads them)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            submodules = {f"{node.module}.{alias.name}" for alias in node.names} & modules
            found.update(submodules if len(submodules) == len(node.names) else {node.module, *submodules})
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found & modules


def _import_cycles(root: Path, package: str) -> list[list[str]]:
    """Cycles of the runtime import graph of the modules of `package` (at `root`)."""
    modules: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = [package, *path.relative_to(root).with_suffix("").parts]
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {name: _runtime_imports(ast.parse(path.read_text()), set(modules)) for name, path in modules.items()}
    cycles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the DFS stack, 2: done

    def dfs(name: str, stack: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            if state.get(target) == 1:
                cycles.append([*stack[stack.index(target) :], name, target] if target in stack else [name, target])
            elif target not in state:
                dfs(target, [*stack, name])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            dfs(name, [])
    return cycles


def test_import_cycle_check_finds_a_cycle(tmp_path: Path) -> None:
    """The checker itself: the shape the backend had (a module importing a rule module
    for its side effect, the rule module importing the first one's helpers)."""
    (tmp_path / "__init__.py").write_text("")
    (tmp_path / "isel.py").write_text("from pkg import isel_nvvm as _rules\n")
    (tmp_path / "isel_nvvm.py").write_text("from pkg.isel import _helper\n")
    (tmp_path / "target.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import isel\n"
    )
    assert _import_cycles(tmp_path, "pkg") == [["pkg.isel", "pkg.isel_nvvm", "pkg.isel"]]


def test_isel_package_has_no_import_cycle() -> None:
    """Instruction selection is a package whose core imports no rule module; no module
    of the backend imports one that imports it back (issue 12, item 6)."""
    import xdsl_tmem.backend

    root = Path(xdsl_tmem.backend.__file__).parent
    assert (root / "isel" / "core.py").is_file()
    assert _import_cycles(root, "xdsl_tmem.backend") == []
    rule_modules = {f"xdsl_tmem.backend.isel.{p.stem}" for p in (root / "isel").glob("*.py")}
    core = _runtime_imports(ast.parse((root / "isel" / "core.py").read_text()), rule_modules)
    assert core == set(), core


def test_every_rule_module_registers_rules() -> None:
    """Each rule module's `@rule`s are in the registry once the package is imported."""
    from xdsl_tmem.backend.isel import RULES
    from xdsl_tmem.backend.isel.kernel import RULE_MODULES

    owners = {rule.__module__ for rule in RULES.values()}
    assert owners == {module.__name__ for module in RULE_MODULES}


def test_ptx_guard_is_declared_once_and_is_the_last_operand() -> None:
    """Every PTX instruction may be predicated (PTX ISA, "Predicated Execution": `@{!}p`): one `guard`
    operand, declared on `ptx.Instruction`, last, so that `set_guard` appends it."""
    from xdsl_tmem.dialects import ptx

    instructions = [op for op in ptx.PTX.operations if issubclass(op, ptx.Instruction)]
    assert len(instructions) > 40
    for op in instructions:
        names = [name for name, _ in op.get_irdl_definition().operands]
        assert names[-1] == "guard", (op.name, names)
        assert names.count("guard") == 1
        # (the op class itself holds IRDL's accessor for every operand)
        assert [cls for cls in op.__mro__[1:] if "guard" in cls.__dict__] == [ptx.Instruction], op.name
    package = Path(ptx.__file__).parent
    assert sum(f.read_text().count("guard = opt_operand_def(") for f in package.glob("*.py")) == 1


# PTX ISA, tcgen05.ld/st shapes: 32-bit registers per thread of `.x1`.
_PTX_ISA_REGISTERS_PER_X1 = {"16x64b": 1, "16x128b": 2, "16x256b": 4, "32x32b": 1, "16x32bx2": 1}


@pytest.mark.parametrize("shape", sorted(_PTX_ISA_REGISTERS_PER_X1))
def test_ptx_tcgen05_ld_st_take_num_from_the_nvvm_shape_table(shape: str) -> None:
    """`.x<num>` is the register count over m(shape), num a power of two, at most 128
    registers (PTX ISA, tcgen05.ld/st); other counts are refused by the ptx verifier."""
    from xdsl.dialects.builtin import IntegerAttr, i32
    from xdsl.utils.exceptions import VerifyException

    from xdsl_tmem.dialects import nvvm, ptx

    kind = nvvm.Tcgen05LdStShape(f"shape_{shape}")
    per_x1 = _PTX_ISA_REGISTERS_PER_X1[shape]
    taddr = ptx.RegisterOp(ptx.RegisterType("b32", 1)).result
    split = ptx.ImmOp(IntegerAttr(2, i32)).result if shape == "16x32bx2" else None
    for count in range(1, 129 + 1):
        registers = [ptx.RegisterType("b32", 10 + i) for i in range(count)]
        load = ptx.Tcgen05LdOp(kind, registers, taddr, split)
        store = ptx.Tcgen05StOp(kind, taddr, [taddr] * count, split)
        num, rest = divmod(count, per_x1)
        if rest == 0 and num & (num - 1) == 0 and count <= 128:
            load.verify()
            store.verify()
            assert load.mnemonic() == f"tcgen05.ld.sync.aligned.{shape}.x{num}.b32"
            assert store.mnemonic() == f"tcgen05.st.sync.aligned.{shape}.x{num}.b32"
        else:
            for op in (load, store):
                with pytest.raises(VerifyException, match=re.escape(f"at most 128 registers): got {count}\n")):
                    op.verify()


def test_ptx_ops_declare_what_isel_reads() -> None:
    """Dead-instruction removal and operand commuting read traits on the ptx ops: the
    register-only instructions are the PTX ISA's integer, floating-point, comparison and
    selection, logic, move and conversion instructions, never memory, barrier, tcgen05 or
    control flow."""
    from xdsl.traits import Commutative

    from xdsl_tmem.dialects import ptx

    register_only = {op.name for op in ptx.PTX.operations if op.has_trait(ptx.WritesOnlyRegisters)}
    arithmetic = {"add", "sub", "mul", "div", "rem", "and", "or", "xor", "shl", "shr", "min", "max", "not", "neg"}
    bits = {"bfe", "bfi", "brev", "clz", "popc", "bfind", "prmt", "lop3", "shf", "mov_pack", "mov_unpack"}
    packed = {"add_f32x2", "sub_f32x2", "mul_f32x2", "fma_f32x2"}
    floats = {"abs", "rcp", "sqrt", "copysign", "testp", "ex2", "cvt_pack"}
    # The spellings beyond our backend's (dialects/ptx/values.py), not the carry chain, which
    # also writes the carry flag: ftz/sat/packed float forms, approximations, saturating and
    # 24-bit integer forms, dot products, bit masks, conversions, set/slct.
    extended = {"add_ext", "sub_ext", "mul_ext", "fma_ext", "min_ext", "max_ext", "neg_ext", "div_ftz", "rsqrt",
                "tanh", "lg2", "sin", "cos", "add_sat", "sub_sat", "mad_sat", "mul24", "mad24", "sad", "dp4a",
                "dp2a", "bmsk", "szext", "cnot", "slct", "set", "set_bool", "setp_ext", "cvt_float",
                "cvt_float_int", "cvt_int_sat", "cvt_pack_sat", "cvt_packed", "cvt_tf32"}  # fmt: skip
    others = {"mov", "mad", "fma", "selp", "setp", "setp_bool", "cvt", "cvta"}
    assert register_only == {f"ptx.{n}" for n in (*arithmetic, *bits, *packed, *floats, *extended, *others)}
    commutative = {op.name for op in ptx.PTX.operations if op.has_trait(Commutative)}
    assert commutative == {
        f"ptx.{n}" for n in ("add", "mul", "and", "or", "xor", "min", "max", "add_f32x2", "mul_f32x2")
    }
    pred_form = {op.name for op in ptx.PTX.operations if issubclass(op, ptx.Instruction) and op.PRED_FORM}
    assert pred_form == {"ptx.and", "ptx.or", "ptx.xor", "ptx.not"}


_DYNAMIC_EXTRACT = """\
module {{
  llvm.func @k(%p: !llvm.ptr<1>, %i: {index}) attributes {{nvvm.kernel}} {{
    %v = llvm.load %p : !llvm.ptr<1> -> vector<4xi8>
    %e = llvm.extractelement %v[%i : {index}] : vector<4xi8>
    llvm.store %e, %p : i8, !llvm.ptr<1>
    llvm.return
  }}
}}
"""


def test_dynamic_extract_of_i8_vector_assembles(run_opt: RunOpt, ptxas: str, tmp_path: Path) -> None:
    """An i8 element lives in a .b16 register, so the select chain is `selp.b16`
    (PTX ISA: selp has no 8-bit types; the selector used to emit `selp.b8`)."""
    result = run_opt(_DYNAMIC_EXTRACT.format(index="i32"), "-t", "ptx")
    assert result.code == 0, result.err
    ptxas_assemble(ptxas, result.out, tmp_path)


def test_isel_reports_an_invalid_instruction_at_the_kernel(run_opt: RunOpt, ptxas: str, tmp_path: Path) -> None:
    """What the selector cannot yet select validly (an i8 extractelement index compares
    with `setp.eq.b8`, which ptxas rejects) is a located error naming the rule, never
    PTX that ptxas rejects."""
    probe = _PROBE.format(version="8.6", arch="sm_100a", instruction="setp.eq.b8 %p1, %rs1, 1;")
    probe = probe.replace(".reg .b32", ".reg .pred %p<2>;\n    .reg .b16 %rs<2>;\n    .reg .b32")
    with pytest.raises(ToolFailed, match=r"Unexpected instruction types specified for 'setp'"):
        ptxas_assemble(ptxas, probe, tmp_path)
    result = run_opt(_DYNAMIC_EXTRACT.format(index="i8"), "-t", "ptx")
    assert result.code == 1
    assert re.search(
        r"input\.mlir:2:3: error: ptx backend: selected an invalid instruction: ptx\.setp: type \.b8 is not allowed; "
        r"setp takes \.b16/",
        result.err,
    ), result.err
    assert "Traceback" not in result.err


def test_ptx_and_isel_functions_take_at_most_eight_parameters() -> None:
    """Qualifier-heavy constructors take a parameter object (`Tcgen05MmaForm`,
    `MbarrierWaitForm`, `Ordering`) instead of a long argument list (issue 12)."""
    root = Path(__file__).parent.parent / "xdsl_tmem"
    files = [*(root / "dialects" / "ptx").glob("*.py"), *(root / "backend" / "isel").glob("*.py")]
    long: list[str] = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef):
                a = node.args
                names = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
                count = len([n for n in names if n.arg not in ("self", "cls")])
                if count > 8:
                    long.append(f"{path.name}:{node.lineno} {node.name} ({count})")
    assert len(files) > 10
    assert long == []
