"""Differential test of the PTX backend's arith/llvm ops by scalar types against llc-22.

For every op the backend has a selection rule for, over {i1, i8, i16, i32, i64, f16,
bf16, f32, f64} (every combination the op's verifier accepts), a small kernel loads its
operands from a global pointer, applies the op and stores the result. The kernel goes
through upstream (mlir-opt-22 → mlir-translate-22 → llc-22) and through ours (`-t ptx`).
Wherever llc-22's PTX assembles with ptxas, ours must assemble too, or be refused with
a located diagnostic (`file:line:col: error:`, exit 1) naming the op and the type —
never an internal error. The expectation is ptxas's verdict on llc-22's output.

The grid is enumerated deterministically with one kernel per case, many kernels per
llc/ptxas call (a failing batch is split to find the culprit); hypothesis varies the
constant operands (immediates select differently from registers) with few examples.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from external import ToolFailed, Upstream
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import OptResult, run_cli

RunOpt = Callable[..., OptResult]

INTS = ("i1", "i8", "i16", "i32", "i64")
FLOATS = ("f16", "bf16", "f32", "f64")
TYPES = (*INTS, *FLOATS)
BITS = {"i1": 1, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "f16": 16, "bf16": 16, "f32": 32, "f64": 64}

ARITH_INT_BINARY = (
    "addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "andi", "ori", "xori",
    "shli", "shrui", "shrsi", "maxsi", "maxui", "minsi", "minui",
)  # fmt: skip
LLVM_INT_BINARY = ("add", "sub", "mul", "sdiv", "udiv", "srem", "urem", "and", "or", "xor", "shl", "lshr", "ashr")
ARITH_FLOAT_BINARY = ("addf", "subf", "mulf", "divf", "maximumf", "minimumf", "maxnumf", "minnumf")
LLVM_FLOAT_BINARY = ("fadd", "fsub", "fmul", "fdiv")
CMPI = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF = ("oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno")


@dataclass(frozen=True)
class Case:
    """One kernel: `body` computes `%r` (of `result`) from the operands `%a`, `%b`
    (loaded as `operand`) and `%c` (an i1 parameter)."""

    name: str
    op: str
    operand: str
    result: str
    body: str
    stored: str = "%r"

    def kernel(self, constant: str | None = None) -> str:
        """The kernel; with `constant`, `%b` is that arith.constant instead of a load."""
        b = (
            f"  %b = arith.constant {constant}{'' if self.operand == 'i1' else ' : ' + self.operand}\n"
            if constant is not None
            else f"  %q = llvm.getelementptr %p[1] : (!llvm.ptr<1>) -> !llvm.ptr<1>, {self.operand}\n"
            f"  %b = llvm.load %q : !llvm.ptr<1> -> {self.operand}\n"
        )
        return (
            f"llvm.func @{self.name}(%p: !llvm.ptr<1>, %out: !llvm.ptr<1>, %c: i1) attributes {{nvvm.kernel}} {{\n"
            f"  %a = llvm.load %p : !llvm.ptr<1> -> {self.operand}\n"
            f"{b}"
            f"  {self.body}\n"
            f"  llvm.store {self.stored}, %out : {self.result}, !llvm.ptr<1>\n"
            "  llvm.return\n"
            "}\n"
        )


def _make_case(op: str, operand: str, result: str, body: str, stored: str = "%r") -> Case:
    name = re.sub(r"\W", "_", f"{op}_{operand}_{result}")
    return Case(name, op, operand, result, body, stored)


def _computation_cases() -> Iterator[Case]:
    for t in INTS:
        for name in ARITH_INT_BINARY:
            yield _make_case(f"arith.{name}", t, t, f"%r = arith.{name} %a, %b : {t}")
        for name in LLVM_INT_BINARY:
            yield _make_case(f"llvm.{name}", t, t, f"%r = llvm.{name} %a, %b : {t}")
        for pred in CMPI:
            yield _make_case(f"arith.cmpi.{pred}", t, "i1", f"%r = arith.cmpi {pred}, %a, %b : {t}")
            yield _make_case(f"llvm.icmp.{pred}", t, "i1", f'%r = llvm.icmp "{pred}" %a, %b : {t}')
    for t in FLOATS:
        for name in ARITH_FLOAT_BINARY:
            yield _make_case(f"arith.{name}", t, t, f"%r = arith.{name} %a, %b : {t}")
        for name in LLVM_FLOAT_BINARY:
            yield _make_case(f"llvm.{name}", t, t, f"%r = llvm.{name} %a, %b : {t}")
        yield _make_case("arith.negf", t, t, f"%r = arith.negf %a : {t}")
        for pred in CMPF:
            yield _make_case(f"arith.cmpf.{pred}", t, "i1", f"%r = arith.cmpf {pred}, %a, %b : {t}")
    for t in TYPES:
        yield _make_case("arith.select", t, t, f"%r = arith.select %c, %a, %b : {t}")
        yield _make_case("llvm.select", t, t, f"%r = llvm.select %c, %a, %b : i1, {t}")
        yield _make_case("llvm.load", t, t, "", stored="%a")


def _conversion_cases() -> Iterator[Case]:
    for s in INTS:
        for d in INTS:
            if BITS[s] < BITS[d]:
                yield _make_case("arith.extui", s, d, f"%r = arith.extui %a : {s} to {d}")
                yield _make_case("arith.extsi", s, d, f"%r = arith.extsi %a : {s} to {d}")
                yield _make_case("llvm.zext", s, d, f"%r = llvm.zext %a : {s} to {d}")
                yield _make_case("llvm.sext", s, d, f"%r = llvm.sext %a : {s} to {d}")
            elif BITS[s] > BITS[d]:
                yield _make_case("arith.trunci", s, d, f"%r = arith.trunci %a : {s} to {d}")
                yield _make_case("llvm.trunc", s, d, f"%r = llvm.trunc %a : {s} to {d}")
    for i in INTS:
        for f in FLOATS:
            yield _make_case("arith.sitofp", i, f, f"%r = arith.sitofp %a : {i} to {f}")
            yield _make_case("arith.uitofp", i, f, f"%r = arith.uitofp %a : {i} to {f}")
            yield _make_case("llvm.sitofp", i, f, f"%r = llvm.sitofp %a : {i} to {f}")
            yield _make_case("arith.fptosi", f, i, f"%r = arith.fptosi %a : {f} to {i}")
            yield _make_case("arith.fptoui", f, i, f"%r = arith.fptoui %a : {f} to {i}")
    for s in FLOATS:
        for d in FLOATS:
            if BITS[s] < BITS[d]:
                yield _make_case("arith.extf", s, d, f"%r = arith.extf %a : {s} to {d}")
                yield _make_case("llvm.fpext", s, d, f"%r = llvm.fpext %a : {s} to {d}")
            elif BITS[s] > BITS[d]:
                yield _make_case("arith.truncf", s, d, f"%r = arith.truncf %a : {s} to {d}")


def _bitcast_cases() -> Iterator[Case]:
    for s in TYPES:
        for d in TYPES:
            if s != d and BITS[s] == BITS[d]:
                yield _make_case("arith.bitcast", s, d, f"%r = arith.bitcast %a : {s} to {d}")
                yield _make_case("llvm.bitcast", s, d, f"%r = llvm.bitcast %a : {s} to {d}")
                # A bitcast value used by arithmetic (an immediate operand must take the new type).
                add = "addf" if d in FLOATS else "addi"
                body = (
                    f"%x = arith.bitcast %a : {s} to {d}\n  %y = arith.bitcast %b : {s} to {d}\n"
                    f"  %r = arith.{add} %x, %y : {d}"
                )
                yield _make_case("arith.bitcast.use", s, d, body)


CASES = [*_computation_cases(), *_conversion_cases(), *_bitcast_cases()]


def module(kernels: Sequence[str]) -> str:
    return "module {\n" + "".join(kernels) + "}\n"


_ENTRY = re.compile(r"^\.visible \.entry (\w+)\(", re.M)


def _ptx_entries(ptx: str) -> tuple[str, str]:
    """(header, entries) of a PTX module: the text before the first `.entry`, and the rest."""
    first = _ENTRY.search(ptx)
    assert first is not None, ptx
    return ptx[: first.start()], ptx[first.start() :]


def ptxas_rejects(ptxas: str, ptx: str) -> str | None:
    """ptxas's error message for `ptx` (sm_100a), or None if it assembles."""
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "k.ptx"
        source.write_text(ptx)
        proc = subprocess.run(
            [ptxas, "-arch=sm_100a", str(source), "-o", str(Path(tmp) / "k.cubin")], capture_output=True, text=True
        )
    return None if proc.returncode == 0 else proc.stderr or proc.stdout


def rejected_kernels(ptxas: str, header: str, entries: dict[str, str]) -> dict[str, str]:
    """{kernel: ptxas message} for the kernels whose PTX ptxas rejects, assembling them
    in batches and splitting a failing batch."""
    if not entries:
        return {}
    message = ptxas_rejects(ptxas, header + "".join(entries.values()))
    if message is None:
        return {}
    if len(entries) == 1:
        return {next(iter(entries)): message}
    names = list(entries)
    half = len(names) // 2
    return {
        **rejected_kernels(ptxas, header, {n: entries[n] for n in names[:half]}),
        **rejected_kernels(ptxas, header, {n: entries[n] for n in names[half:]}),
    }


def upstream_ptx(upstream: Upstream, kernels: dict[str, str]) -> tuple[str, dict[str, str]]:
    """llc-22's PTX: (header, {kernel: its .entry text}); a kernel llc-22 cannot compile is
    left out (a failing batch is split)."""
    try:
        header, text = _ptx_entries(upstream.to_ptx(module(list(kernels.values()))))
    except ToolFailed:
        if len(kernels) == 1:
            return "", {}
        names = list(kernels)
        half = len(names) // 2
        h1, e1 = upstream_ptx(upstream, {n: kernels[n] for n in names[:half]})
        h2, e2 = upstream_ptx(upstream, {n: kernels[n] for n in names[half:]})
        return h1 or h2, {**e1, **e2}
    return header, _split_entries(text)


def _split_entries(text: str) -> dict[str, str]:
    starts = list(_ENTRY.finditer(text))
    return {
        m.group(1): text[m.start() : starts[i + 1].start() if i + 1 < len(starts) else len(text)]
        for i, m in enumerate(starts)
    }


_LOCATED = re.compile(r"^\S+\.mlir:\d+:\d+: error: ", re.M)


@dataclass
class Ours:
    header: str
    entries: dict[str, str]
    refused: dict[str, str]


def our_ptx(run_opt: RunOpt, kernels: dict[str, str]) -> Ours:
    """Our PTX per kernel (each compiled alone: a refusal stops a whole module)."""
    header = ""
    entries: dict[str, str] = {}
    refused: dict[str, str] = {}
    for name, kernel in kernels.items():
        result = run_opt(module([kernel]), "-t", "ptx")
        if result.code == 0:
            kernel_header, entries[name] = _ptx_entries(result.out)
            header = header or kernel_header
        else:
            refused[name] = f"exit {result.code}: {result.err}"
    return Ours(header, entries, refused)


def check_against_upstream(
    run_opt: RunOpt, upstream: Upstream, ptxas: str, cases: Sequence[Case], constant: Callable[[Case], str | None]
) -> list[str]:
    """The differential check; returns the list of failures (empty when all hold)."""
    kernels = {c.name: c.kernel(constant(c)) for c in cases}
    by_name = {c.name: c for c in cases}
    up_header, up_entries = upstream_ptx(upstream, kernels)
    up_rejected = rejected_kernels(ptxas, up_header, up_entries)
    reference = {n for n in up_entries if n not in up_rejected}
    ours = our_ptx(run_opt, kernels)
    our_rejected = rejected_kernels(ptxas, ours.header, ours.entries)
    failures: list[str] = []
    for name, message in our_rejected.items():
        verdict = "llc-22's assembles" if name in reference else "llc-22's does not"
        failures.append(f"{name}: ptxas rejects our PTX ({verdict}):\n{message.strip()[:300]}")
    for name, message in ours.refused.items():
        case = by_name[name]
        located = _LOCATED.search(message) is not None and message.startswith("exit 1:")
        names_op = case.op.split(".")[0] + "." + case.op.split(".")[1] in message
        names_type = case.operand in message or case.result in message
        if not (located and names_op and names_type) or "internal error" in message:
            failures.append(f"{name}: refused without a located diagnostic naming op and type:\n{message[:300]}")
    return failures


def constants(t: str) -> list[str]:
    """Interesting constant operands of type `t` (MLIR literal syntax)."""
    if t == "i1":
        return ["true", "false"]
    if t in INTS:
        bits = BITS[t]
        return ["0", "1", "3", "-1", str(bits - 1), str((1 << (bits - 1)) - 1), str(-(1 << (bits - 1)))]
    special = {"f16": ("0x7C00", "0x7E00"), "bf16": ("0x7F80", "0x7FC0"), "f32": ("0x7F800000", "0x7FC00000"),
               "f64": ("0x7FF0000000000000", "0x7FF8000000000000")}[t]  # fmt: skip
    return ["0.0", "-0.0", "1.0", "-2.5", "0.1", *special]


BINARY_CASES = [c for c in CASES if "%b" in c.body]


def test_cases_cover_the_claimed_ops() -> None:
    """Every arith/llvm op the backend has a rule for (but the index, pointer, vector
    and constant ops, tested elsewhere) appears in the grid."""
    from xdsl.dialects import arith, llvm

    from xdsl_tmem.backend.isel import RULES

    tested = {c.op.split(".")[0] + "." + c.op.split(".")[1] for c in CASES} | {"llvm.store"}
    claimed = {op.name for op in RULES if op.name.startswith(("arith.", "llvm."))}
    elsewhere = {
        "arith.constant", "llvm.mlir.constant", "arith.index_cast", "llvm.mlir.addressof", "llvm.getelementptr",
        "llvm.inttoptr", "llvm.ptrtoint", "llvm.extractelement", "llvm.br", "llvm.cond_br", "llvm.return",
        "llvm.addrspacecast", "llvm.inline_asm", "llvm.call",  # llvm.call: tests/test_ptx_calls.py
    }  # fmt: skip
    assert claimed - elsewhere <= tested, sorted(claimed - elsewhere - tested)
    assert arith.AddiOp.name in claimed
    assert llvm.AddOp.name in claimed


def test_every_op_and_type_against_llc(run_opt: RunOpt, upstream: Upstream, ptxas: str) -> None:
    """The whole grid, operands in registers: where llc-22's PTX assembles, ours does
    (or is refused with a located diagnostic naming op and type)."""
    failures = check_against_upstream(run_opt, upstream, ptxas, CASES, lambda c: None)
    assert not failures, "\n\n".join(failures)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_constant_operands_against_llc(run_opt: RunOpt, upstream: Upstream, ptxas: str, data: st.DataObject) -> None:
    """Binary ops with a constant second operand (immediates select differently)."""
    cases = data.draw(st.lists(st.sampled_from(BINARY_CASES), min_size=40, max_size=120, unique_by=lambda c: c.name))
    chosen = {c.name: data.draw(st.sampled_from(constants(c.operand)), label=c.name) for c in cases}
    failures = check_against_upstream(run_opt, upstream, ptxas, cases, lambda c: chosen[c.name])
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize(
    ("operand", "body", "op", "type"),
    [
        ("i128", "%r = arith.addi %a, %b : i128", "llvm.load", "i128"),
        ("i32", "%w = arith.extsi %a : i32 to i128\n  %r = arith.trunci %w : i128 to i32", "arith.extsi", "i128"),
        ("f32", "%h = arith.truncf %a : f32 to f8E4M3FN\n  %r = arith.extf %h : f8E4M3FN to f32", "arith.truncf",
         "f8E4M3FN"),
        ("f32", "%h = arith.truncf %a : f32 to tf32\n  %r = arith.extf %h : tf32 to f32", "arith.truncf", "tf32"),
    ],
)  # fmt: skip
def test_unsupported_types_are_refused_at_the_op(run_opt: RunOpt, operand: str, body: str, op: str, type: str) -> None:
    """Types without a PTX representation: a located diagnostic at the first op that
    produces or reads one, naming it and the type (never an internal error)."""
    result_type = "i32" if operand == "i32" else "f32" if operand == "f32" else operand
    case = Case("k", op, operand, result_type, body)
    result = run_opt(module([case.kernel()]), "-t", "ptx")
    assert result.code == 1
    assert _LOCATED.search(result.err), result.err
    assert "internal error" not in result.err, result.err
    assert f"error: ptx backend: {op}: type {type} has no PTX lowering" in result.err, result.err


# --------------------------------------------------------------------------------------
# The interpreter on the same grid
# --------------------------------------------------------------------------------------


def run_case(capsys: pytest.CaptureFixture[str], tmp_path: Path, case: Case, a: bytes, b: bytes) -> OptResult:
    """Run `case` in the interpreter on operands with these bytes (`%b` right after `%a`);
    `out.npy` under tmp_path holds the 16 result bytes."""
    source = tmp_path / f"{case.name}.mlir"
    source.write_text(module([case.kernel()]))
    np.save(tmp_path / "p.npy", np.frombuffer((a + b).ljust(16, b"\0"), dtype=np.uint8))
    return run_cli(
        capsys, str(source), "--kernel", case.name, "--block", "32", "--arg", f"p={tmp_path / 'p.npy'}",
        "--arg", "out=zeros:u8:16", "--arg", "c=1", "--out", str(tmp_path),
    )  # fmt: skip


def test_interpreter_runs_or_refuses_every_case(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Every case runs, or is refused at the op as unsupported (bf16 arithmetic, ops the
    interpreter has no implementation for) -- never an internal error."""
    unexpected: list[str] = []
    for case in CASES:
        result = run_case(capsys, tmp_path, case, bytes(range(1, 9)), bytes(range(3, 11)))
        message = result.out + result.err
        refused = (
            result.code == 1
            and _LOCATED.search(message)
            and ("not supported" in message or "no interpreter" in message)
        )
        if (result.code != 0 and not refused) or "internal error" in message:
            unexpected.append(f"{case.name}: exit {result.code}: {message.strip()[:300]}")
    assert not unexpected, "\n".join(unexpected)


def _case(name: str) -> Case:
    (case,) = [c for c in CASES if c.name == name]
    return case


@pytest.mark.parametrize(
    ("name", "dtype", "a", "b", "expected"),
    [
        # numpy's wrap-around arithmetic and LLVM LangRef semantics are the oracles.
        ("arith_muli_i8_i8", np.int8, 100, 7, (np.array([100], np.int8) * np.array([7], np.int8))[0]),
        ("arith_select_i8_i8", np.int8, -5, 9, -5),
        ("arith_shli_i16_i16", np.int16, 0x1234, 4, (np.array([0x1234], np.int16) << 4)[0]),
        ("arith_shrsi_i16_i16", np.int16, -32768, 3, (np.array([-32768], np.int16) >> 3)[0]),
        ("arith_shrui_i64_i64", np.uint64, 1 << 63, 62, 2),
        ("llvm_ashr_i64_i64", np.int64, -(1 << 62), 61, -2),
        ("arith_divf_f16_f16", np.float16, 1.0, 3.0, np.float16(1.0) / np.float16(3.0)),
        ("llvm_fdiv_f32_f32", np.float32, 1.0, 3.0, np.float32(1.0) / np.float32(3.0)),
        ("llvm_fsub_f16_f16", np.float16, 1.5, 0.25, 1.25),
        ("arith_maximumf_f64_f64", np.float64, 1.5, float("nan"), float("nan")),
        ("arith_maximumf_f64_f64", np.float64, -0.0, 0.0, 0.0),
        ("arith_minimumf_f64_f64", np.float64, 0.0, -0.0, -0.0),
        ("arith_andi_i64_i64", np.uint64, (1 << 64) - 5, (1 << 63) + 7, ((1 << 64) - 5) & ((1 << 63) + 7)),
    ],
)  # fmt: skip
def test_interpreter_semantics(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, dtype: type, a: float, b: float, expected: float
) -> None:
    case = _case(name)
    result = run_case(capsys, tmp_path, case, np.array([a], dtype).tobytes(), np.array([b], dtype).tobytes())
    assert result.code == 0, result.out + result.err
    got = np.load(tmp_path / "out.npy")[: np.dtype(dtype).itemsize].view(dtype)[0]
    want = dtype(expected)
    assert got.tobytes() == want.tobytes() or (np.isnan(got) and np.isnan(want)), (got, want)


def test_interpreter_stores_i1_as_a_byte(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """LLVM's i1 in memory is the byte 0 or 1."""
    case = _case("arith_cmpi_slt_i32_i1")
    result = run_case(capsys, tmp_path, case, np.int32(-3).tobytes(), np.int32(2).tobytes())
    assert result.code == 0, result.out + result.err
    assert np.load(tmp_path / "out.npy")[:2].tolist() == [1, 0]


VECTORS = """\
llvm.func @vec(%p: !llvm.ptr<1>, %q: !llvm.ptr<1>, %r: !llvm.ptr<1>, %c: i1) attributes {nvvm.kernel} {
  %a = llvm.load %p : !llvm.ptr<1> -> vector<4xi8>
  %s = arith.addi %a, %a : vector<4xi8>
  %m = arith.shrsi %s, %a : vector<4xi8>
  %n = arith.divui %m, %a : vector<4xi8>
  llvm.store %n, %p : vector<4xi8>, !llvm.ptr<1>
  %h = llvm.load %q : !llvm.ptr<1> -> vector<2xbf16>
  %d = arith.divf %h, %h : vector<2xbf16>
  %k = arith.constant dense<[1.0, 2.0]> : vector<2xbf16>
  %mx = arith.maximumf %d, %k : vector<2xbf16>
  llvm.store %mx, %q : vector<2xbf16>, !llvm.ptr<1>
  %x = llvm.load %r : !llvm.ptr<1> -> vector<2xf64>
  %y = arith.minimumf %x, %x : vector<2xf64>
  %z = arith.select %c, %y, %x : vector<2xf64>
  llvm.store %z, %r : vector<2xf64>, !llvm.ptr<1>
  llvm.return
}
"""


def test_vectors_against_llc(run_opt: RunOpt, upstream: Upstream, ptxas: str) -> None:
    """The same selection elementwise over vectors (operands in registers and constants)."""
    assert ptxas_rejects(ptxas, upstream.to_ptx(VECTORS)) is None
    ours = run_opt(VECTORS, "-t", "ptx")
    assert ours.code == 0, ours.err
    assert ptxas_rejects(ptxas, ours.out) is None


_PARAM = re.compile(r"\.param (?:\.align \d+ )?\.(?:[usbf])(\d+)(?: \.ptr[^\n]*?)? \w+(?:\[(\d+)\])?")


def _param_sizes(ptx: str) -> list[int]:
    """Byte size of each kernel parameter declared in `ptx`."""
    return [int(bits) // 8 * int(count or 1) for bits, count in _PARAM.findall(ptx)]


def test_parameter_sizes_match_llc(run_opt: RunOpt, upstream: Upstream) -> None:
    """The kernel ABI: every scalar parameter type takes the bytes llc-22 gives it."""
    signature = ", ".join(f"%a{i}: {t}" for i, t in enumerate(TYPES))
    kernel = f"llvm.func @params({signature}) attributes {{nvvm.kernel}} {{\n  llvm.return\n}}\n"
    ours = run_opt(kernel, "-t", "ptx")
    assert ours.code == 0, ours.err
    expected = _param_sizes(upstream.to_ptx(kernel))
    assert len(expected) == len(TYPES)
    assert _param_sizes(ours.out) == expected


def test_bitcast_constants_against_llc(run_opt: RunOpt, upstream: Upstream, ptxas: str) -> None:
    """A constant bitcast to another type of the same width, then used by arithmetic."""
    cases = [c for c in CASES if c.op == "arith.bitcast.use"]
    assert len(cases) == 10
    failures = check_against_upstream(run_opt, upstream, ptxas, cases, lambda c: constants(c.operand)[2])
    assert not failures, "\n\n".join(failures)
