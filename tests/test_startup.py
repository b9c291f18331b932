"""Start-up structure of the drivers (issue 15): what each run imports, the fast process
exit, and the type-keyed pattern applier the lowering passes use. Timings are in
benchmarks/compile_latency.py; these tests check the behaviour that makes them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from support import EXAMPLES
from xdsl.context import Context
from xdsl.dialects import arith, test
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from xdsl_tmem.passes.op_pattern import OpRewritePattern, OpTypeApplier

RUN_ARGS = [
    "--kernel", "matmul_cg1", "--block", "160", "--arg", "out=zeros:f32:4x128x256",
    "--arg", "a=rand:f16:4096:1", "--arg", "b=rand:f16:8192:2", "--arg", "ntiles=4",
]  # fmt: skip


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after `code` (-P: this tree as installed)."""
    script = code + "\nimport sys\nprint('\\n'.join(sys.modules))\n"
    done = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def test_an_mlir_kernel_runs_without_the_ptx_level() -> None:
    # The PTX level's value semantics load ml_dtypes (the largest import of the driver);
    # matmul_cg1 at the tmem and NVVM levels has no float arithmetic and no PTX.
    for extra in ([], ["-p", "lower-tmem"]):
        modules = _modules_after(
            "from xdsl_tmem.tools import run\n"
            f"assert run.main({[str(EXAMPLES / 'matmul_cg1.mlir'), *RUN_ARGS, *extra]!r}) == 0"
        )
        assert "xdsl_tmem.interpreter.run" in modules
        assert "ml_dtypes" not in modules
        assert "xdsl_tmem.interpreter.ptx" not in modules
        assert "xdsl_tmem.interpreter.explore" not in modules
        assert "xdsl_tmem.backend.isel" not in modules


def test_float_arithmetic_still_loads_the_value_semantics(tmp_path: Path) -> None:
    source = tmp_path / "f.mlir"
    source.write_text(
        "llvm.func @f(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {\n"
        "  %a = llvm.mlir.constant(1.5 : f32) : f32\n"
        "  %b = arith.addf %a, %a : f32\n"
        "  llvm.store %b, %p : f32, !llvm.ptr<1>\n"
        "  llvm.return\n"
        "}\n"
    )
    argv = [str(source), "--kernel", "f", "--block", "32", "--arg", "p=zeros:f32:1", "--out", str(tmp_path)]
    modules = _modules_after(f"from xdsl_tmem.tools import run\nassert run.main({argv!r}) == 0")
    assert "xdsl_tmem.interpreter.ptx.semantics" in modules
    import numpy as np

    assert np.load(tmp_path / "p.npy").tolist() == [3.0]


def test_a_ptx_kernel_still_runs_at_the_ptx_level(tmp_path: Path) -> None:
    source = tmp_path / "k.ptx"
    source.write_text(
        ".version 8.7\n.target sm_100a\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n{\n"
        "  .reg .b64 %rd<2>;\n  .reg .b32 %r<2>;\n"
        "  ld.param.u64 %rd1, [p];\n  mov.u32 %r1, 7;\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n"
    )
    argv = [str(source), "--kernel", "k", "--block", "1", "--arg", "p=zeros:u32:1", "--out", str(tmp_path)]
    modules = _modules_after(f"from xdsl_tmem.tools import run\nassert run.main({argv!r}) == 0")
    assert "xdsl_tmem.interpreter.ptx.kernel" in modules
    import numpy as np

    assert np.load(tmp_path / "p.npy").tolist() == [7]


def test_the_ptx_function_name_is_the_ops() -> None:
    from xdsl_tmem.dialects import ptx
    from xdsl_tmem.interpreter.run import PTX_FUNCTION

    assert ptx.FunctionOp.name == PTX_FUNCTION


def test_opt_without_a_ptx_target_imports_no_backend() -> None:
    argv = [str(EXAMPLES / "matmul_cg1.mlir"), "-p", "lower-tmem", "-o", "/dev/null"]
    modules = _modules_after(f"from xdsl_tmem.tools import opt\nassert opt.main({argv!r}) == 0")
    assert "xdsl_tmem.passes.lower_tmem" in modules
    assert not any(m.startswith("xdsl_tmem.backend") for m in modules)


def test_ptx_target_without_vector_ops_imports_no_vector_dialect() -> None:
    argv = [str(EXAMPLES / "matmul_cg1.mlir"), "-p", "lower-tmem", "-t", "ptx", "-o", "/dev/null"]
    modules = _modules_after(f"from xdsl_tmem.tools import opt\nassert opt.main({argv!r}) == 0")
    assert "xdsl_tmem.backend.isel.memory" in modules
    assert "xdsl.dialects.vector" not in modules


def test_a_vector_op_selects_through_its_late_rule(tmp_path: Path) -> None:
    # `vector.extract`'s rule is registered when a module first holds one (isel LATE_RULES).
    source = tmp_path / "v.mlir"
    source.write_text(
        "llvm.func @k(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {\n"
        "  %v = llvm.load %p : !llvm.ptr<1> -> vector<4xi32>\n"
        "  %e = vector.extract %v[2] : i32 from vector<4xi32>\n"
        "  llvm.store %e, %p : i32, !llvm.ptr<1>\n"
        "  llvm.return\n"
        "}\n"
    )
    out = tmp_path / "v.ptx"
    argv = [str(source), "-t", "ptx", "-o", str(out)]
    _modules_after(f"from xdsl_tmem.tools import opt\nassert opt.main({argv!r}) == 0")
    lines = [line.strip() for line in out.read_text().splitlines()]
    loads = [line for line in lines if line.startswith("ld.global")]
    loaded = {line.split()[1].rstrip(","): line.split("[")[1].rstrip("];") for line in loads}
    stored = next(line for line in lines if line.startswith("st.global"))
    assert loaded[stored.split()[-1].rstrip(";")] == "%rd1+8"  # element 2 of the i32 vector


def test_fast_exit_keeps_output_exit_code_and_atexit(tmp_path: Path) -> None:
    exe = shutil.which("xdsl-tmem-opt", path=str(Path(sys.executable).parent))
    assert exe is not None
    kernel = str(EXAMPLES / "matmul_cg1.mlir")
    piped = subprocess.run([exe, kernel, "-p", "lower-tmem", "-t", "ptx"], capture_output=True, text=True)
    assert piped.returncode == 0, piped.stderr
    out = tmp_path / "k.ptx"
    to_file = subprocess.run([exe, kernel, "-p", "lower-tmem", "-t", "ptx", "-o", str(out)], capture_output=True)
    assert to_file.returncode == 0
    assert piped.stdout == out.read_text()  # every byte, however large the output
    assert piped.stdout.rstrip().endswith("}")  # the last kernel's closing brace
    bad = subprocess.run([exe], input="%x = tmem.alloc %", capture_output=True, text=True)
    assert (bad.returncode, bad.stdout) == (1, "")
    assert bad.stderr.startswith("stdin:1:17: error: invalid SSA value name")  # flushed before the exit
    marker = tmp_path / "atexit"
    script = (
        "import atexit, pathlib, sys\n"
        f"atexit.register(pathlib.Path({str(marker)!r}).write_text, 'ran')\n"
        "from xdsl_tmem.tools import opt\n"
        f"sys.argv = ['xdsl-tmem-opt', {kernel!r}]\n"
        "opt.entry()\n"
    )
    done = subprocess.run([sys.executable, "-P", "-c", script], capture_output=True, text=True)
    assert done.returncode == 0
    assert marker.read_text() == "ran"


def _constant(value: int) -> arith.ConstantOp:
    return arith.ConstantOp(IntegerAttr(value, i32))


class _Log:
    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []


class _Untyped(RewritePattern):
    """Tried on every op; rewrites nothing."""

    def __init__(self, log: _Log) -> None:
        self.log = log

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        self.log.seen.append(("untyped", op.name))


class _ConstantToTestOp(OpRewritePattern[arith.ConstantOp]):
    def __init__(self, log: _Log) -> None:
        super().__init__()
        self.log = log

    def rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /) -> None:
        self.log.seen.append(("constant", op.name))
        rewriter.replace(op, test.TestOp(result_types=[i32]))


class _NeverReached(OpRewritePattern[arith.ConstantOp]):
    """After `_ConstantToTestOp`, which always rewrites: never tried."""

    def __init__(self, log: _Log) -> None:
        super().__init__()
        self.log = log

    def rewrite(self, op: arith.ConstantOp, rewriter: PatternRewriter, /) -> None:
        self.log.seen.append(("second constant", op.name))


class _TestOpOnce(OpRewritePattern[test.TestOp | arith.AddiOp]):
    def __init__(self, log: _Log) -> None:
        super().__init__()
        self.log = log

    def rewrite(self, op: test.TestOp | arith.AddiOp, rewriter: PatternRewriter, /) -> None:
        self.log.seen.append(("test-or-addi", op.name))


def test_op_type_applier_tries_the_patterns_of_the_op_class_in_order() -> None:
    ctx = Context()
    ctx.load_dialect(arith.Arith)
    ctx.load_dialect(test.Test)
    a, b = _constant(1), _constant(2)
    add = arith.AddiOp(a, b)
    module = ModuleOp([a, b, add])
    log = _Log()
    applier = OpTypeApplier([_Untyped(log), _ConstantToTestOp(log), _NeverReached(log), _TestOpOnce(log)])
    PatternRewriteWalker(applier, apply_recursively=False).rewrite_module(module)
    # In program order: each constant is seen by the untyped pattern and rewritten by the
    # first constant pattern (the second is never tried); the add by its own pattern only.
    assert log.seen == [
        ("untyped", "arith.constant"),
        ("constant", "arith.constant"),
        ("untyped", "arith.constant"),
        ("constant", "arith.constant"),
        ("untyped", "arith.addi"),
        ("test-or-addi", "arith.addi"),
    ]
    assert [op.name for op in module.ops] == ["test.op", "test.op", "arith.addi"]
    assert applier.candidates(arith.ConstantOp) == (applier.patterns[0], applier.patterns[1], applier.patterns[2])
    assert applier.candidates(arith.MuliOp) == (applier.patterns[0],)
