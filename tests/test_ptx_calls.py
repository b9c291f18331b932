"""Device functions and calls, and `brx.idx`: our backend's `.func` / `call` (compared with
llc-22's and assembled by ptxas), the PTX level's execution of calls (inlined at decode
time) and of indexed branches, against numpy and the NVVM level (docs/ptx-level.md,
"Calls" and "Indexed branches")."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from external import ToolFailed, Upstream
from numpy.typing import NDArray
from support import ROOT, ptxas_assemble, run_cli

from xdsl_tmem.backend.target import ARCHS
from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.dialects import ptx
from xdsl_tmem.frontend import load_ptx
from xdsl_tmem.interpreter import KernelHazard, LaunchError, run_kernel
from xdsl_tmem.tools import opt, run

PROGRAM = ROOT / "tests" / "ptx_calls" / "device_functions.mlir"
THREADS = 64


# --------------------------------------------------------------------------------------
# Our backend: .func and the call sequence
# --------------------------------------------------------------------------------------


def _inputs(tmp_path: Path) -> tuple[NDArray[np.int32], NDArray[np.int32], list[str]]:
    rng = np.random.default_rng(7)
    xs = rng.integers(-20, 20, THREADS, dtype=np.int32)
    vs = rng.integers(-(2**31), 2**31 - 1, 4 * THREADS, dtype=np.int32)
    np.save(tmp_path / "xs.npy", xs)
    np.save(tmp_path / "vs.npy", vs)
    args = ["--kernel", "device_functions", "--block", str(THREADS), "--arg", f"out=zeros:i32:{4 * THREADS}",
            "--arg", f"xs={tmp_path / 'xs.npy'}", "--arg", f"vs={tmp_path / 'vs.npy'}"]  # fmt: skip
    return xs, vs, args


def _expected(xs: NDArray[np.int32], vs: NDArray[np.int32]) -> NDArray[np.int32]:
    """What the program's header says each thread writes, in numpy."""
    t = np.arange(THREADS, dtype=np.int64)
    x = xs.astype(np.int64)
    out = np.zeros((THREADS, 4), dtype=np.int64)
    out[:, 0] = np.minimum(x * x + 3 * t, 100)
    scaled = (xs.astype(np.float32) * np.float32(0.5)).view(np.int32).astype(np.int64)
    out[:, 1] = np.where(t % 2 == 1, scaled, 7)
    out[:, 2] = np.where(t < 9, 2 * x, t) + t
    out[:, 3] = vs.reshape(THREADS, 4).astype(np.int64).sum(axis=1)
    return ((out + 2**31) % 2**32 - 2**31).astype(np.int32).reshape(-1)


def test_device_functions_at_ptx_level_compute_numpys_result(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Our PTX of the program (nested calls, a call under a divergent branch, i1 / i16 /
    f32 / vector parameters) writes what numpy computes, and the NVVM level and our PTX
    agree bit for bit under `--validate-lowering`."""
    xs, vs, args = _inputs(tmp_path)
    result = run_cli(capsys, str(PROGRAM), "-t", "ptx", *args, "--out", str(tmp_path / "ptx"))
    assert result.code == run.EXIT_OK, result.err
    assert np.array_equal(np.load(tmp_path / "ptx" / "out.npy"), _expected(xs, vs))
    validated = run_cli(capsys, str(PROGRAM), "-t", "ptx", *args, "--validate-lowering")
    assert validated.code == run.EXIT_OK, validated.err
    assert "outputs and verdict unchanged" in validated.out + validated.err


def test_llc_ptx_of_device_functions_runs_to_numpys_result(
    capsys: pytest.CaptureFixture[str], upstream: Upstream, tmp_path: Path
) -> None:
    """llc-22's PTX of the same NVVM (its `.func`s and `call.uni` sequences, parsed and
    recognized) runs at the PTX level to numpy's result."""
    xs, vs, args = _inputs(tmp_path)
    source = tmp_path / "llc.ptx"
    source.write_text(upstream.to_ptx(PROGRAM.read_text()))
    positional = [re.sub(r"^(out|xs|vs)=", lambda m: f"arg{['out', 'xs', 'vs'].index(m.group(1))}=", a) for a in args]
    result = run_cli(capsys, str(source), *positional, "--out", str(tmp_path / "llc"))
    assert result.code == run.EXIT_OK, result.err
    assert np.array_equal(np.load(tmp_path / "llc" / "device_functions_param_0.npy"), _expected(xs, vs))


def _our_ptx(capsys: pytest.CaptureFixture[str], tmp_path: Path, arch: str = "sm_100a") -> str:
    capsys.readouterr()
    code = opt.main([str(PROGRAM), "-t", f"ptx{{arch={arch}}}", "-o", str(tmp_path / "ours.ptx")])
    assert code == 0, capsys.readouterr().err
    return (tmp_path / "ours.ptx").read_text()


@pytest.mark.parametrize("arch", list(ARCHS))
def test_device_function_ptx_assembles_for_every_target(
    capsys: pytest.CaptureFixture[str], ptxas: str, tmp_path: Path, arch: str
) -> None:
    ptxas_assemble(ptxas, _our_ptx(capsys, tmp_path, arch), tmp_path, arch)


def _headers(text: str) -> list[str]:
    """Each `.func` header (linkage, return and parameter lists, name), whitespace normalised."""
    headers = re.findall(r"^((?:\.visible )?\.func[^{;]*)", text, re.M)
    return sorted(" ".join(re.sub(r"//[^\n]*", "", h).split()).replace("( ", "(").replace(" )", ")") for h in headers)


def test_func_headers_and_call_sequences_match_llc(
    capsys: pytest.CaptureFixture[str], upstream: Upstream, tmp_path: Path
) -> None:
    """Our `.func` declarations are llc-22's, character for character (parameter names and
    `.param` types: i1 / i16 / f32 as `.b32`, a vector as an aligned byte array,
    `.visible` except for the internal function), and each call passes the same
    argument and return `.param`s to the same function with `call.uni`."""
    ours = _our_ptx(capsys, tmp_path)
    llc = upstream.to_ptx(PROGRAM.read_text())
    assert _headers(ours) == _headers(llc)
    call = re.compile(r"^\s*(call(?:\.uni)?) (?:(\([^)]*\)), )?(\w+), (\([^)]*\));", re.M)
    assert sorted(call.findall(ours)) == sorted(call.findall(llc))
    declarations = re.compile(r"^\s*(\.param [^;]*(?:param\d+|retval0)(?:\[\d+\])?);", re.M)
    assert sorted(" ".join(d.split()) for d in declarations.findall(ours)) == sorted(
        " ".join(d.split()) for d in declarations.findall(llc)
    )


# --------------------------------------------------------------------------------------
# The PTX level: hand-written kernels with calls
# --------------------------------------------------------------------------------------

HEADER = ".version 8.8\n.target sm_100a\n.address_size 64\n"


def _module(text: str, name: str = "calls.ptx") -> Any:
    return load_ptx(HEADER + text, name, SourceMap())


def _run(text: str, threads: int = 32, **args: Any) -> NDArray[Any]:
    result = run_kernel(_module(text), "k", block=threads, args={"out": np.zeros(threads, np.uint32), **args})
    return result.outputs["out"]


STORE_R3 = """
	mov.u32 %r1, %tid.x;
	mul.wide.u32 %rd2, %r1, 4;
	add.s64 %rd3, %rd1, %rd2;
	st.global.u32 [%rd3], %r3;
	ret;
}
"""

NESTED = """
.func (.param .b32 sq_ret) square(.param .b32 sq_x)
{
	.reg .b32 %r<3>;
	ld.param::func.b32 %r1, [sq_x];
	mul.lo.s32 %r2, %r1, %r1;
	st.param.b32 [sq_ret], %r2;
	ret;
}

.func (.param .b32 ret) pair(.param .align 8 .b8 p[8])
{
	.reg .b32 %r<5>;
	ld.param.b32 %r1, [p];
	ld.param.b32 %r2, [p+4];
	{
		.param .b32 a;
		.param .b32 r;
		st.param.b32 [a], %r1;
		call.uni (r), square, (a);
		ld.param.b32 %r3, [r];
	}
	sub.s32 %r4, %r3, %r2;
	st.param.b32 [ret], %r4;
	ret;
}

.visible .entry k(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	setp.lt.u32 %p1, %r1, 10;
	mov.u32 %r3, 7;
	@%p1 bra SKIP;
	{
		.param .align 8 .b8 arg[8];
		.param .b32 res;
		st.param.b32 [arg], %r1;
		st.param.b32 [arg+4], 100;
		call (res), pair, (arg);
		ld.param.b32 %r3, [res];
	}
SKIP:
	mov.u32 %r2, 0;
""" + STORE_R3.replace("\tmov.u32 %r1, %tid.x;\n", "")


def _file_line(text: str, instruction: str, nth: int = 0) -> int:
    """The line of `calls.ptx` (HEADER + text) holding the `nth` `instruction`: the line a
    report about a parsed file names."""
    lines = [line.strip() for line in (HEADER + text).splitlines()]
    return [i for i, line in enumerate(lines) if line == instruction][nth] + 1


def test_nested_call_with_a_byte_array_under_divergence() -> None:
    """Lanes 10-31 call `pair` (a `.b8 [8]` argument written at offsets 0 and 4), which
    calls `square` (reading its parameter with `ld.param::func`); lanes 0-9 skip the
    call. Each register file is the callee's own (`%r1` in `square` is not the kernel's
    `%r1`)."""
    t = np.arange(32, dtype=np.int64)
    assert np.array_equal(_run(NESTED), np.where(t < 10, 7, t * t - 100).astype(np.uint32))


EARLY_RETURN = """
.func (.param .b32 ret) halve_small(.param .b32 x)
{
	.reg .pred %p<2>;
	.reg .b32 %r<3>;
	ld.param.b32 %r1, [x];
	st.param.b32 [ret], %r1;
	setp.ge.u32 %p1, %r1, 20;
	@%p1 ret;
	shr.u32 %r2, %r1, 1;
	st.param.b32 [ret], %r2;
	ret;
}

.visible .entry k(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	mov.u32 %r3, 1000;
	setp.ne.u32 %p1, %r1, 5;
	{
		.param .b32 a;
		.param .b32 r;
		st.param.b32 [a], %r1;
		@%p1 call (r), halve_small, (a);
		@%p1 ld.param.b32 %r3, [r];
	}
	activemask.b32 %r4;
	add.s32 %r3, %r3, %r4;
""" + STORE_R3.replace("\tmov.u32 %r1, %tid.x;\n", "")


def test_guarded_call_and_early_return_reconverge() -> None:
    """`@%p call`: lane 5 does not call; in the callee lanes >= 20 return early. All 32
    lanes are active again after the call (`activemask` reads 0xffffffff)."""
    t = np.arange(32, dtype=np.int64)
    expected = np.where(t == 5, 1000, np.where(t >= 20, t, t >> 1)) + 0xFFFFFFFF
    assert np.array_equal(_run(EARLY_RETURN), (expected % 2**32).astype(np.uint32))


def test_call_uni_with_a_lane_varying_guard_is_a_hazard() -> None:
    text = EARLY_RETURN.replace("@%p1 call (r)", "@%p1 call.uni (r)")
    with pytest.raises(KernelHazard) as caught:
        _run(text)
    assert caught.value.kind == "call-uni-divergent"
    assert "true in lanes 0-4,6-31 and false in lanes 5" in caught.value.message


def test_call_uni_under_a_divergent_branch_is_fine() -> None:
    """`.uni` is about the guard of the threads executing the call (PTX ISA, call); llc-22
    emits `call.uni` inside divergent branches, as NESTED's unguarded call does here."""
    t = np.arange(32, dtype=np.int64)
    text = NESTED.replace("call (res), pair", "call.uni (res), pair")
    assert np.array_equal(_run(text), np.where(t < 10, 7, t * t - 100).astype(np.uint32))


def test_hazard_in_a_callee_names_the_callee_line() -> None:
    """A `bar.sync` inside a function called by lanes 10-31 only: the hazard is reported at
    the callee's line of the PTX file."""
    text = NESTED.replace("\tmul.lo.s32 %r2, %r1, %r1;\n", "\tbar.sync 0;\n\tmul.lo.s32 %r2, %r1, %r1;\n")
    module = _module(text)
    with pytest.raises(KernelHazard) as caught:
        run_kernel(module, "k", block=32, args={"out": np.zeros(32, np.uint32)})
    assert caught.value.kind == "divergent-sync-aligned"
    assert isinstance(caught.value.op, ptx.BarSyncOp)
    assert f"at calls.ptx:{_file_line(text, 'bar.sync 0;')}" in caught.value.where, caught.value.where


RECURSIVE = (
    """
.func (.param .b32 ret) fact(.param .b32 n)
{
	.reg .b32 %r<2>;
	ld.param.b32 %r1, [n];
	{
		.param .b32 a;
		.param .b32 r;
		st.param.b32 [a], %r1;
		call.uni (r), fact, (a);
	}
	st.param.b32 [ret], %r1;
	ret;
}

.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<6>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [out];
	{
		.param .b32 a;
		.param .b32 r;
		st.param.b32 [a], 3;
		call.uni (r), fact, (a);
	}
	mov.u32 %r3, 1;
"""
    + STORE_R3
)


def test_recursion_is_refused_when_it_runs() -> None:
    """Calls are inlined at decode time: the recursive call is refused, at its line, when
    a lane reaches it."""
    module = _module(RECURSIVE)
    with pytest.raises(LaunchError) as refused:
        run_kernel(module, "k", block=32, args={"out": np.zeros(32, np.uint32)})
    message = refused.value.message
    line = _file_line(RECURSIVE, "call.uni (r), fact, (a);")  # the call inside fact
    expected = rf"call\.uni at calls\.ptx:{line}: recursive call of fact \(through fact -> fact\)"
    assert re.search(expected, message), message


def test_indirect_call_is_refused() -> None:
    text = (
        """
.func (.param .b32 r) id(.param .b32 a)
{
	.reg .b32 %r<2>;
	ld.param.b32 %r1, [a];
	st.param.b32 [r], %r1;
	ret;
}

.visible .entry k(.param .u64 out)
{
	.reg .b32 %r<6>;
	.reg .b64 %rd<5>;
	ld.param.u64 %rd1, [out];
	{
		.param .b32 a;
		.param .b32 r;
		proto: .callprototype (.param .b32 _) _ (.param .b32 _);
		st.param.b32 [a], 3;
		call (r), %rd4, (a), proto;
	}
	mov.u32 %r3, 1;
"""
        + STORE_R3
    )
    module = _module(text)
    assert any(isinstance(op, ptx.CallIndirectOp) for op in module.walk())
    with pytest.raises(LaunchError) as refused:
        run_kernel(module, "k", block=32, args={"out": np.zeros(32, np.uint32)})
    assert "indirect call" in refused.value.message


def test_syntax_tour_calls_are_typed() -> None:
    """Both calls of the syntax tour (direct with a byval argument, indirect through a
    prototype) read back as typed ops that print exactly their text."""
    module = load_ptx((ROOT / "tests" / "ptx_corpus" / "syntax_tour.ptx").read_bytes(), "syntax_tour.ptx", SourceMap())
    generic = [op for op in module.walk() if isinstance(op, ptx.InstOp) and op.opcode.data == "call"]
    assert not generic
    assert sum(isinstance(op, ptx.CallOp) for op in module.walk()) == 1
    assert sum(isinstance(op, ptx.CallIndirectOp) for op in module.walk()) == 1


INDIRECT = """
.func (.param .b32 r) id(.param .b32 a)
{
	.reg .b32 %r<2>;
	ld.param.b32 %r1, [a];
	st.param.b32 [r], %r1;
	ret;
}

.visible .entry k(.param .u64 out)
{
	.reg .b16 %rs<5>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<5>;
	{
		.param .b32 a;
		.param .b32 r;
		proto: .callprototype (.param .b32 _) _ (.param .b32 _);
		st.param.b32 [a], 3;
		LINE
	}
	ret;
}
"""


@pytest.mark.parametrize(
    ("line", "accepted", "says"),
    [
        ("call (r), id, (a);", True, ""),
        ("call.uni (r), id, (a, a);", False, "2 arguments for id is not allowed; .func id declares 1"),
        ("call id, (a);", False, "0 return values for id is not allowed; .func id declares 1"),
        ("call (r), %rd4, (a), proto;", True, ""),
        ("call (r), %r4, (a), proto;", True, ""),
        ("call (r), %rs4, (a), proto;", False, "function address a .b16 register (%rs4) is not allowed"),
    ],
)
def test_call_rules_agree_with_ptxas(ptxas: str, tmp_path: Path, line: str, accepted: bool, says: str) -> None:
    """The typed call ops' verifiers (argument and return counts against the callee, the
    address register of an indirect call) accept what ptxas accepts; a rejected line
    stays generic, with the verifier's reason in the recognizer's coverage."""
    from xdsl_tmem.frontend.recognize import recognize

    text = HEADER + INDIRECT.replace("LINE", line)
    if accepted:
        ptxas_assemble(ptxas, text, tmp_path)
    else:
        with pytest.raises(ToolFailed):
            ptxas_assemble(ptxas, text, tmp_path)
    module = load_ptx(text, "call.ptx", SourceMap(), typed=False)
    coverage = recognize(module)
    typed = [op for op in module.walk() if isinstance(op, ptx.CallOp | ptx.CallIndirectOp)]
    assert len(typed) == int(accepted)
    if not accepted:
        (reason,) = coverage.refused.values()
        assert says in reason, reason
        assert "PTX ISA 9.0" in reason, reason


# --------------------------------------------------------------------------------------
# brx.idx
# --------------------------------------------------------------------------------------

DISPATCH = """
.visible .entry k(.param .u64 out)
{
	.reg .pred %p<2>;
	.reg .b32 %r<8>;
	.reg .b64 %rd<4>;
	ts: .branchtargets L0, L1, L2;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	rem.u32 %r5, %r1, 3;
	brx.idx %r5, ts;
L0:
	mul.lo.s32 %r3, %r1, 10;
	bra.uni DONE;
L1:
	add.s32 %r3, %r1, 1000;
	bra.uni DONE;
L2:
	mov.u32 %r3, 5;
DONE:
	activemask.b32 %r6;
	xor.b32 %r3, %r3, %r6;
""" + STORE_R3.replace("\tmov.u32 %r1, %tid.x;\n", "")


def test_brx_idx_dispatches_each_lane_and_reconverges() -> None:
    """Each lane jumps to the label its index selects (`tid % 3`); the three paths join
    at DONE with every lane active."""
    t = np.arange(32, dtype=np.int64)
    value = np.choose(t % 3, [t * 10, t + 1000, np.full(32, 5)]) ^ 0xFFFFFFFF
    assert np.array_equal(_run(DISPATCH), value.astype(np.uint32))


def test_brx_idx_uni_with_lane_varying_indices_is_a_hazard() -> None:
    with pytest.raises(KernelHazard) as caught:
        _run(DISPATCH.replace("brx.idx %r5", "brx.idx.uni %r5"))
    assert caught.value.kind == "brx-uni-divergent"
    assert "indices [0, 1, 2]" in caught.value.message


def test_brx_idx_uni_with_a_uniform_index_jumps() -> None:
    text = DISPATCH.replace("rem.u32 %r5, %r1, 3;", "mov.u32 %r5, 1;").replace("brx.idx %r5", "brx.idx.uni %r5")
    t = np.arange(32, dtype=np.int64)
    assert np.array_equal(_run(text), ((t + 1000) ^ 0xFFFFFFFF).astype(np.uint32))


def test_brx_idx_out_of_range_is_a_hazard() -> None:
    """An index past the list is undefined (PTX ISA, brx.idx): a hazard naming the lanes."""
    with pytest.raises(KernelHazard) as caught:
        _run(DISPATCH.replace("rem.u32 %r5, %r1, 3;", "rem.u32 %r5, %r1, 4;"))
    assert caught.value.kind == "brx-index-out-of-range"
    assert "index 3 in lanes 3,7,11,15,19,23,27,31" in caught.value.message


@pytest.mark.parametrize("name", ["gemm_tma_ws.ptx", "gemm_persistent_ws.ptx"])
def test_triton_partition_dispatch_decodes_to_its_targets(name: str) -> None:
    """Triton's warp-specialised kernels dispatch their partitions with `brx.idx` over a
    `.branchtargets` list: it decodes to a branch to exactly the listed labels (read from
    the file's text here), with a reconvergence point. (Running it needs the TMA
    descriptors' `.param` addresses, `mov.b32 %r, K_param_0; cvta.param`, which both
    paths take before the dispatch: issue 14.)"""
    from xdsl_tmem.interpreter.machine import SharedLayout
    from xdsl_tmem.interpreter.ptx.kernel import find_entry, parameters
    from xdsl_tmem.interpreter.ptx.program import Decoder

    source = ROOT / "tests" / "clients" / "triton" / name
    text = source.read_text()
    listed = re.search(r"\.branchtargets\s+([^;]*);", text)
    assert listed is not None
    labels = [label.strip() for label in listed.group(1).split(",")]
    module = load_ptx(source.read_bytes(), str(source), SourceMap())
    entry = find_entry(module, source.stem)
    assert entry is not None
    decoder = Decoder(entry, SharedLayout(), parameters(entry), "visible")
    program = decoder.decode(module)
    (brx,) = [i for i, decoded in enumerate(program.code) if isinstance(decoded.op, ptx.BrxIdxOp)]
    visible = decoder.labels[brx]
    assert program.code[brx].flow.targets == tuple(visible[label] for label in labels)
    assert not program.code[brx].flow.falls_through
    assert program.code[brx].run.__qualname__.startswith("_brx_idx."), "decoded to a refusal"


def test_a_callee_defined_after_its_caller_is_declared_first(
    capsys: pytest.CaptureFixture[str], ptxas: str, tmp_path: Path
) -> None:
    """@a calls @b, defined after it: our PTX declares `b` before `a` (ptxas rejects a
    call of an undeclared function), and the PTX level runs it to 2 * tid."""
    program = ROOT / "tests" / "ptx_calls" / "forward_call.mlir"
    capsys.readouterr()
    assert opt.main([str(program), "-t", "ptx", "-o", str(tmp_path / "fwd.ptx")]) == 0
    text = (tmp_path / "fwd.ptx").read_text()
    declaration = text.index(".visible .func (.param .b32 func_retval0) b(\n\t.param .b32 b_param_0\n);")
    assert declaration < text.index(") a(")
    ptxas_assemble(ptxas, text, tmp_path)
    undeclared = text.replace(text[declaration : text.index(");", declaration) + 2], "")
    with pytest.raises(ToolFailed):
        ptxas_assemble(ptxas, undeclared, tmp_path)
    result = run_cli(capsys, str(program), "-t", "ptx", "--kernel", "k", "--block", "32",
                     "--arg", "out=zeros:i32:32", "--out", str(tmp_path / "out"))  # fmt: skip
    assert result.code == run.EXIT_OK, result.err
    assert np.array_equal(np.load(tmp_path / "out" / "out.npy"), 2 * np.arange(32, dtype=np.int32))
