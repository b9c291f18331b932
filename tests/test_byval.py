"""Byval struct parameters whose bytes hold buffer addresses and scalars (`StructArgument`,
`--arg NAME=struct:...`), pointers to named buffers and null (`PointerArgument`, `ptr:BUFFER`,
`null`), and the block taken from `.reqntid` (docs/interpreter.md, "Kernel arguments")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support import LIT_TESTS, ptxas_assemble

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.frontend import load_ptx
from xdsl_tmem.interpreter import LaunchError, PointerArgument, ScalarField, StructArgument, run_kernel
from xdsl_tmem.tools import run
from xdsl_tmem.tools.run import make_context

# A 40-byte byval struct {f32 *out; f32 *in; u32 n; f32 x; u64 null; u64 *flag}, laid out as
# a C compiler would (8-byte pointers at multiples of 8): out[tid] = in[tid] * x + n, and
# thread 0 stores the struct's null field to flag[0]. Its floats live in `.reg .f32` registers
# (typed register classes hold the bits of their width).
STRUCT_PTX = """\
.version 8.8
.target sm_100a
.address_size 64

.visible .entry k(
\t.param .align 8 .b8 k_param_0[40]
)
.reqntid 64
{
\t.reg .pred %p<2>;
\t.reg .b32 %r<3>;
\t.reg .f32 %f<6>;
\t.reg .b64 %rd<8>;

\tld.param.b64 %rd1, [k_param_0];
\tld.param.b64 %rd2, [k_param_0+8];
\tld.param.u32 %r1, [k_param_0+16];
\tld.param.f32 %f1, [k_param_0+20];
\tld.param.b64 %rd3, [k_param_0+24];
\tld.param.b64 %rd4, [k_param_0+32];
\tmov.u32 %r2, %tid.x;
\tmul.wide.u32 %rd5, %r2, 4;
\tadd.s64 %rd6, %rd2, %rd5;
\tld.global.f32 %f2, [%rd6];
\tcvt.rn.f32.u32 %f3, %r1;
\tmul.rn.f32 %f4, %f2, %f1;
\tadd.rn.f32 %f5, %f4, %f3;
\tadd.s64 %rd7, %rd1, %rd5;
\tst.global.f32 [%rd7], %f5;
\tsetp.eq.u32 %p1, %r2, 0;
\t@%p1 st.global.u64 [%rd4], %rd3;
\tret;
}
"""
STRUCT_ARG = "arg0=struct:0=ptr:o,8=ptr:i,16=u32:5,20=f32:1.5,24=null,32=ptr:flag"
BUFFERS = ["--arg", "o=zeros:f32:64", "--arg", "i=rand:f32:64:3", "--arg", "flag=rand:u64:1:1"]


def test_the_struct_kernel_is_valid_ptx(ptxas: str, tmp_path: Path) -> None:
    ptxas_assemble(ptxas, STRUCT_PTX, tmp_path)


def _module() -> object:
    return load_ptx(STRUCT_PTX, "struct.ptx", SourceMap())


def test_run_kernel_lays_out_a_struct_of_pointers_and_scalars() -> None:
    """Fields at their offsets; each buffer is an output under its own name; `.reqntid 64`
    gives the block."""
    rng = np.random.default_rng(0)
    i = rng.uniform(-1, 1, 64).astype(np.float32)
    flag = np.array([0xDEADBEEF], np.uint64)
    fields = {0: PointerArgument("o"), 8: PointerArgument("i"), 16: ScalarField(5, "u32"), 20: ScalarField(1.5, "f32"),
              24: PointerArgument(None), 32: PointerArgument("flag")}  # fmt: skip
    args = {"k_param_0": StructArgument(fields), "o": np.zeros(64, np.float32), "i": i, "flag": flag}
    result = run_kernel(_module(), "k", args=args)  # pyright: ignore[reportArgumentType]
    assert result.report.launch.block == (64, 1, 1)
    np.testing.assert_array_equal(result.outputs["o"], i * np.float32(1.5) + np.float32(5))
    assert result.outputs["flag"].tolist() == [0]  # the null field is the address 0
    assert sorted(result.outputs) == ["flag", "i", "o"]
    np.testing.assert_array_equal(result.outputs["i"], i)


@pytest.mark.parametrize(
    ("fields", "extra", "message"),
    [
        ({0: PointerArgument("o"), 40: ScalarField(1, "u8")}, {}, "field 40=u8 (1 bytes) lies outside the 40-byte"),
        ({0: PointerArgument("o"), 36: PointerArgument("o")}, {}, "field 36=ptr (8 bytes) lies outside the 40-byte"),
        (
            {0: PointerArgument("o"), 4: ScalarField(1, "u64")},
            {},
            "field 4=u64 (8 bytes) is misaligned: its offset must be a multiple of 8",
        ),
        (
            {0: PointerArgument("o"), 16: ScalarField(1, "u32"), 18: ScalarField(1, "u16")},
            {},
            "field 18=u16 (2 bytes) overlaps the field before it (which ends at byte 20)",
        ),
        (
            {0: PointerArgument("o"), 8: PointerArgument("q")},
            {},
            "argument 'k_param_0' points to 'q', which is no buffer argument (buffers: o)",
        ),
        (
            {0: PointerArgument("o"), 16: ScalarField(1 << 32, "u32")},
            {},
            "field 16=u32 value 4294967296 is outside [0, 4294967295]",
        ),
        ({0: PointerArgument("o"), 16: ScalarField(1.5, "u32")}, {}, "field 16=u32 takes an integer, got 1.5"),
        (
            {0: PointerArgument("o")},
            {"stray": np.zeros(1)},
            "no parameter named stray, and no pointer refers to it (parameters: k_param_0)",
        ),
    ],
)
def test_a_bad_struct_is_refused(fields: dict[int, object], extra: dict[str, object], message: str) -> None:
    args = {"arg0": StructArgument(fields), "o": np.zeros(64, np.float32), **extra}  # pyright: ignore[reportArgumentType]
    with pytest.raises(LaunchError) as caught:
        run_kernel(_module(), "k", args=args)  # pyright: ignore[reportArgumentType]
    assert message in caught.value.message


def test_a_struct_field_type_must_be_known() -> None:
    with pytest.raises(LaunchError, match=r"struct field type 'q8' is unknown \(use one of f16, f32, .*u64\)"):
        ScalarField(1, "q8")


def test_a_struct_for_a_scalar_parameter_is_refused() -> None:
    module = load_ptx(
        ".version 8.8\n.target sm_100a\n.address_size 64\n"
        ".visible .entry k(.param .u64 p)\n.reqntid 32\n{\n\tret;\n}\n",
        "s.ptx",
        SourceMap(),
    )
    with pytest.raises(LaunchError, match=r"argument 'p' is a struct, but \.param \.u64 is no byval array"):
        run_kernel(module, "k", args={"p": StructArgument({0: PointerArgument(None)})})
    assert run_kernel(module, "k", args={"p": PointerArgument(None)}).outputs == {}  # null for a pointer


# --------------------------------------------------------------------------------------
# The driver
# --------------------------------------------------------------------------------------


@pytest.fixture
def struct_ptx(tmp_path: Path) -> Path:
    path = tmp_path / "struct.ptx"
    path.write_text(STRUCT_PTX)
    return path


def _xrun(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    capsys.readouterr()
    code = run.main([str(a) for a in args])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    return code, captured.out, captured.err


def test_cli_struct_argument_and_block_from_reqntid(
    capsys: pytest.CaptureFixture[str], struct_ptx: Path, tmp_path: Path
) -> None:
    code, out, err = _xrun(capsys, struct_ptx, "--kernel", "k", *BUFFERS, "--arg", STRUCT_ARG, "--out", tmp_path)
    assert code == 0, err
    assert "block (64, 1, 1)" in out
    i = np.random.default_rng(3).standard_normal(64).astype(np.float32)  # rand:f32:64:3
    np.testing.assert_array_equal(np.load(tmp_path / "o.npy"), i * np.float32(1.5) + np.float32(5))
    assert np.load(tmp_path / "flag.npy").tolist() == [0]


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (
            "arg0=struct:0=ptr:o,8=ptr:i,16=u32:5,32=ptr:flag,36=u32:1",
            "field 36=u32 (4 bytes) overlaps the field before it (which ends at byte 40)",
        ),
        ("arg0=struct:0=ptr:o,8=ptr:i,32=ptr:flag,40=u8:1", "field 40=u8 (1 bytes) lies outside the 40-byte parameter"),
        ("arg0=struct:0=ptr:o,8=ptr:i,32=ptr:flag,18=u32:1", "field 18=u32 (4 bytes) is misaligned"),
        (
            "arg0=struct:0=ptr:o,8=ptr:x,32=ptr:flag,16=ptr:i",
            "points to 'x', which is no buffer argument (buffers: flag, i, o)",
        ),
        ("arg0=ptr:o", "no parameter named flag, i, and no pointer refers to them (parameters: k_param_0)"),
    ],
)
def test_cli_struct_errors_are_located(
    capsys: pytest.CaptureFixture[str], struct_ptx: Path, arg: str, message: str
) -> None:
    code, _, err = _xrun(capsys, struct_ptx, "--kernel", "k", *BUFFERS, "--arg", arg)
    assert code == run.EXIT_ERROR
    assert err.startswith(f"{struct_ptx}:5:1: error: ")  # the .entry line
    assert message in err


def test_cli_a_pointer_for_a_struct_is_refused(capsys: pytest.CaptureFixture[str], struct_ptx: Path) -> None:
    code, _, err = _xrun(capsys, struct_ptx, "--kernel", "k", "--arg", "o=zeros:f32:64", "--arg", "arg0=ptr:o")
    assert code == run.EXIT_ERROR
    assert err.startswith(f"{struct_ptx}:5:1: error: argument 'k_param_0' is a pointer, but .param .b8 is a byval "
                          "array of 40 bytes (struct:0=ptr:BUFFER)")  # fmt: skip


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        (
            "arg0=struct:",
            "error: --arg arg0: expected struct:OFFSET=FIELD,... with FIELD ptr:BUFFER, null or "
            "DTYPE:NUMBER; got field ''",
        ),
        ("arg0=struct:0=q8:1", "error: --arg arg0: field 0: 'q8' is not ptr, null or a DTYPE (f16, f32,"),
        ("arg0=struct:0=u32:x", "error: --arg arg0: field 0=u32: 'x' is not an integer"),
        ("arg0=struct:0=f32:1,0=f32:2", "error: --arg arg0: two fields at offset 0"),
        ("arg0=struct:-8=ptr:o", "error: --arg arg0: expected struct:OFFSET=FIELD"),
        ("arg0=ptr:", "error: --arg arg0: a pointer is ptr:BUFFER (the name of a buffer --arg) or null; got 'ptr:'"),
    ],
)
def test_cli_struct_syntax_errors(capsys: pytest.CaptureFixture[str], struct_ptx: Path, arg: str, message: str) -> None:
    code, _, err = _xrun(capsys, struct_ptx, "--kernel", "k", *BUFFERS, "--arg", arg)
    assert code == run.EXIT_ERROR
    assert err.startswith(message), err


def test_block_must_be_given_without_reqntid(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """`.maxntid` only bounds the block (PTX ISA, "Performance-Tuning Directives"): without
    `.reqntid`, `--block` / `block=` is required, at the PTX and the NVVM level."""
    path = tmp_path / "m.ptx"
    path.write_text(STRUCT_PTX.replace(".reqntid 64", ".maxntid 64"))
    code, _, err = _xrun(capsys, path, "--kernel", "k", *BUFFERS, "--arg", STRUCT_ARG)
    assert code == run.EXIT_ERROR
    assert err.startswith(f"{path}:5:1: error: kernel k declares no .reqntid, so the block must be given "
                          "(.maxntid = [64] only bounds it)")  # fmt: skip
    code, _, err = _xrun(capsys, path, "--kernel", "k", "--block", "64", *BUFFERS, "--arg", STRUCT_ARG)
    assert code == 0, err
    ref = LIT_TESTS / "nvvm" / "ref_pipeline.mlir"
    code, _, err = _xrun(capsys, ref, "--kernel", "ref_pipeline")
    assert code == run.EXIT_ERROR
    assert "error: kernel ref_pipeline declares no nvvm.reqntid, so the block must be given (nvvm.maxntid = [160" in err
    with pytest.raises(LaunchError, match=r"declares no nvvm\.reqntid, so the block must be given"):
        run_kernel(run.load_source(make_context(), ref.read_bytes(), str(ref), SourceMap()), "ref_pipeline")


def test_nvvm_kernels_take_no_struct_arguments() -> None:
    ref = LIT_TESTS / "nvvm" / "ref_pipeline.mlir"
    module = run.load_source(make_context(), ref.read_bytes(), str(ref), SourceMap())
    with pytest.raises(LaunchError, match="argument 'out' is a PointerArgument, which only a PTX kernel"):
        run_kernel(module, "ref_pipeline", block=160, args={"out": PointerArgument(None)})


def test_nvvm_block_from_reqntid(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """An NVVM kernel's `nvvm.reqntid` gives the block where `--block` is not given."""
    ref = LIT_TESTS / "nvvm" / "ref_pipeline.mlir"
    source = tmp_path / "req.mlir"
    source.write_text(ref.read_text().replace("nvvm.maxntid = array<i32: 160, 1, 1>", "nvvm.reqntid = array<i32: 160>"))
    code, out, err = _xrun(
        capsys, source, "--kernel", "ref_pipeline", "--arg", "out=zeros:f32:128x256", "--arg", "a=rand:f16:4096:1",
        "--arg", "b=rand:f16:8192:2", "--arg", "ntiles=1",
    )  # fmt: skip
    assert code == 0, err
    assert "block (160, 1, 1)" in out
