"""The NVVM level's float arithmetic is the PTX it lowers to (xdsl_tmem/interpreter/floats.py).

Two independent checks:
* silicon: on the operands an H100 ran (`tests/silicon/fixtures/gen_*.json`: NaNs with
  payloads, signalling NaNs, infinities, denormals, signed zeros), each NVVM-level op
  gives the bits the H100 recorded for the PTX instruction it lowers to (numpy where no
  fixture holds the instruction and numpy is exact: integer → float conversion);
* both lowerings: every float op and type runs at the NVVM level, as our backend's PTX
  and as llc-22's PTX of the same NVVM, on the same edge-value operands, and all three
  store the same bits (llc-22's instruction selection is the external reference).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from external import Upstream
from silicon_replay import FIXTURES, buffer_bytes
from xdsl.dialects import arith
from xdsl.dialects.builtin import Float16Type, Float32Type, Float64Type, IntegerType, ModuleOp, f16, f32, f64, i32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.utils.test_value import create_ssa_value

from xdsl_tmem.backend.target import ConvertToPtxPass
from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.frontend import load_ptx
from xdsl_tmem.interpreter import floats as F
from xdsl_tmem.interpreter import run_kernel
from xdsl_tmem.tools.run import make_context

Lanes = np.ndarray[Any, Any]
FLOAT_TYPE: dict[str, Attribute] = {"f16": f16, "f32": f32, "f64": f64}
CMPF_SETP = {
    "oeq": "eq", "ogt": "gt", "oge": "ge", "olt": "lt", "ole": "le", "one": "ne", "ord": "num",
    "ueq": "equ", "ugt": "gtu", "uge": "geu", "ult": "ltu", "ule": "leu", "une": "neu", "uno": "nan",
}  # fmt: skip
"""LLVM's fcmp predicates and the PTX ISA's setp comparison of the same meaning (ordered
`eq` ... `num`, unordered `equ` ... `nan`)."""


@pytest.fixture(autouse=True)
def _quiet_fp() -> Iterator[None]:
    with np.errstate(all="ignore"):
        yield


# --------------------------------------------------------------------------------------
# Against silicon: the H100's bits for the instruction each op lowers to
# --------------------------------------------------------------------------------------


def _value(t: Attribute) -> SSAValue:
    return create_ssa_value(t)


def _nvvm_ops(t: str) -> list[tuple[Operation, str]]:
    """NVVM-level ops of type `t` and the PTX instruction each lowers to (the PTX ISA
    spelling of our backend's and llc-22's selection)."""
    ft = FLOAT_TYPE[t]
    a, b = _value(ft), _value(ft)
    ops: list[tuple[Operation, str]] = [
        (arith.AddfOp(a, b), f"add.rn.{t}"),
        (arith.SubfOp(a, b), f"sub.rn.{t}"),
        (arith.MulfOp(a, b), f"mul.rn.{t}"),
        (arith.DivfOp(a, b), f"div.rn.{t}"),
        (arith.MaxnumfOp(a, b), f"max.{t}"),
        (arith.MinnumfOp(a, b), f"min.{t}"),
        (arith.NegfOp(a), f"neg.{t}"),
        (arith.FPToSIOp(a, i32), f"cvt.rzi.s32.{t}"),
        (arith.FPToUIOp(a, i32), f"cvt.rzi.u32.{t}"),
    ]
    if t != "f64":  # no max.NaN.f64: an expansion, checked against llc-22 below
        ops += [(arith.MaximumfOp(a, b), f"max.NaN.{t}"), (arith.MinimumfOp(a, b), f"min.NaN.{t}")]
    for predicate, cmp in CMPF_SETP.items():
        ops.append((arith.CmpfOp(a, b, predicate), f"setp.{cmp}.{t}"))
    for other, wide in (("f16", "f32"), ("f16", "f64"), ("f32", "f64")):
        if t == other:
            ops.append((arith.ExtFOp(a, FLOAT_TYPE[wide]), f"cvt.{wide}.{t}"))
        if t == wide:
            ops.append((arith.TruncFOp(a, FLOAT_TYPE[other]), f"cvt.rn.{other}.{t}"))
    return ops


def _fixture_registers(family: str) -> tuple[dict[str, Lanes], list[dict[str, Any]], Lanes]:
    """The fixture's operand registers (`%a32`, `%b16`, ...), its slots and the recorded
    results (one row per thread)."""
    fx = json.loads((FIXTURES / f"gen_{family}.json").read_text())
    param = next(p for p in fx["params"] if p["name"] == "in_ptr")
    raw = np.frombuffer(buffer_bytes(param["init"], param["nbytes"]), np.uint8).reshape(
        -1, fx["generated"]["in_stride"]
    )
    regs: dict[str, Lanes] = {}
    for i, name in enumerate("abc"):
        v = np.ascontiguousarray(raw[:, 8 * i : 8 * i + 8]).view(np.uint64).reshape(-1)
        regs[f"%{name}64"], regs[f"%{name}32"], regs[f"%{name}16"] = v, v & 0xFFFFFFFF, v & 0xFFFF
    slots: list[dict[str, Any]] = fx["generated"]["slots"]
    out = fx["outputs"]["out_ptr"]
    recorded = np.frombuffer(buffer_bytes(out, out["nbytes"]), np.uint64).reshape(-1, len(slots))
    return regs, slots, recorded


def _read(bits: Lanes, t: Attribute) -> Lanes:
    """Register bits as the NVVM-level value of type `t` (integers unsigned-canonical)."""
    match t:
        case Float16Type():
            return bits.astype(np.uint16).view(np.float16)
        case Float32Type():
            return bits.astype(np.uint32).view(np.float32)
        case Float64Type():
            return bits.view(np.float64)
        case _:
            assert isinstance(t, IntegerType)
            return bits.astype(np.dtype(f"u{max(t.bitwidth, 8) // 8}"))


def _bits(x: Lanes) -> Lanes:
    if x.dtype == np.bool_:
        return x.astype(np.uint64)
    return x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)


def _semantics(op: Operation) -> F.FloatFn:
    if isinstance(op, arith.CmpfOp):
        return F.compare(op)
    if not isinstance(op, arith.ExtFOp | arith.TruncFOp | arith.FPToSIOp | arith.FPToUIOp):
        return F.binary(op)
    return F.convert(op)


@pytest.mark.parametrize("t", ["f16", "f32", "f64"])
def test_nvvm_float_ops_give_silicons_bits(t: str) -> None:
    """Every op whose instruction the fixture of its type recorded with register operands
    gives the H100's bits on every recorded thread; at least the arithmetic, conversion
    and comparison ops of each type are found (the check cannot pass vacuously)."""
    if not (FIXTURES / f"gen_{t}.json").is_file():
        pytest.skip("no silicon fixtures (they come with the silicon harness)")
    regs, slots, recorded = _fixture_registers(t)
    checked: list[str] = []
    for op, spelling in _nvvm_ops(t):
        pattern = re.compile(rf"{re.escape(spelling)} %\w+((?:, %[abc]\d+)+);")
        slot = next((s for s in slots if pattern.fullmatch(s["ptx"])), None)
        if slot is None:
            continue
        match = pattern.fullmatch(slot["ptx"])
        assert match is not None
        names = [n.strip() for n in match.group(1).split(",") if n.strip()]
        args = [_read(regs[n], operand.type) for n, operand in zip(names, op.operands, strict=True)]
        got = _bits(np.asarray(_semantics(op)(*args)))
        mask = np.uint64((1 << slot["width"]) - 1)
        want = recorded[:, slot["out"]] & mask
        bad = np.flatnonzero((got & mask) != want)
        assert not bad.size, (
            f"{op.name} ({spelling}): {bad.size} threads differ, e.g. operands "
            + ", ".join(f"{int(regs[n][bad[0]]):#x}" for n in names)
            + f": model {int(got[bad[0]] & mask):#x}, silicon {int(want[bad[0]]):#x}"
        )
        checked.append(spelling)
    assert {f"add.rn.{t}", f"mul.rn.{t}", f"neg.{t}", f"setp.nan.{t}"} <= set(checked), checked
    assert len(checked) >= 10, checked


def test_integer_to_float_is_numpys_rounding() -> None:
    """sitofp/uitofp (`cvt.rn.f32.s32`/`.u32`): numpy's conversion rounds to nearest even, exactly."""
    values = np.array([0, 1, -1, 16777217, -16777217, 2**31 - 1, -(2**31), 2**24 + 3, 123456789], np.int64)
    for signed, op in ((True, arith.SIToFPOp(_value(i32), f32)), (False, arith.UIToFPOp(_value(i32), f32))):
        source = values.astype(np.int32) if signed else values.astype(np.uint32)
        got = np.asarray(F.convert(op)(source.view(np.uint32)))
        assert got.tobytes() == source.astype(np.float32).tobytes()


# --------------------------------------------------------------------------------------
# Against both lowerings: the NVVM level, our PTX and llc-22's PTX store the same bits
# --------------------------------------------------------------------------------------

EDGE: dict[str, list[int]] = {
    # bit patterns: signed zeros, denormals, normals, max, infinities, quiet and signalling
    # NaNs with payloads, both signs
    "f16": [0x0000, 0x8000, 0x0001, 0x83FF, 0x3C00, 0xBC00, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7E01, 0xFD55,
            0x7C01, 0x3555, 0x0400, 0xC900],
    "f32": [0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x3F800000, 0xBF800000, 0x7F7FFFFF, 0x7F800000,
            0xFF800000, 0x7FC00000, 0x7FC00123, 0xFFD55555, 0x7F800001, 0x3EAAAAAB, 0x4F000000, 0xCF000001],
    "f64": [0x0, 0x8000000000000000, 0x1, 0x800FFFFFFFFFFFFF, 0x3FF0000000000000, 0xBFF0000000000000,
            0x7FEFFFFFFFFFFFFF, 0x7FF0000000000000, 0xFFF0000000000000, 0x7FF8000000000000, 0x7FF8000000000123,
            0xFFFD555555555555, 0x7FF0000000000001, 0x3FD5555555555555, 0x41E0000000000000, 0xC1E0000000200000],
}  # fmt: skip
"""16 values per type; warp w pairs lane l's value with value (l + w) mod 16 of the other operand."""

INT_WIDTH = {"f16": 16, "f32": 32, "f64": 64}


def _bodies(t: str) -> Iterator[tuple[str, str, str]]:
    """(name, body computing %r from %a and %b of type t, type of %r)."""
    for name in ("addf", "subf", "mulf", "divf", "maximumf", "minimumf", "maxnumf", "minnumf"):
        yield name, f"%r = arith.{name} %a, %b : {t}", t
    for name in ("fadd", "fsub", "fmul", "fdiv"):
        yield name, f"%r = llvm.{name} %a, %b : {t}", t
    yield "negf", f"%r = arith.negf %a : {t}", t
    for cmp in ("oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno"):
        yield f"cmpf_{cmp}", f"%c = arith.cmpf {cmp}, %a, %b : {t}\n  %r = arith.extui %c : i1 to i8", "i8"
    for w in (8, 16, 32, 64):
        yield f"fptosi_i{w}", f"%r = arith.fptosi %a : {t} to i{w}", f"i{w}"
        yield f"fptoui_i{w}", f"%r = arith.fptoui %a : {t} to i{w}", f"i{w}"
    n = INT_WIDTH[t]
    yield "sitofp", f"%i = llvm.bitcast %a : {t} to i{n}\n  %r = arith.sitofp %i : i{n} to {t}", t
    yield "uitofp", f"%i = llvm.bitcast %a : {t} to i{n}\n  %r = arith.uitofp %i : i{n} to {t}", t
    yield "llvm_sitofp", f"%i = llvm.bitcast %a : {t} to i{n}\n  %r = llvm.sitofp %i : i{n} to {t}", t
    for other in FLOAT_TYPE:
        if INT_WIDTH[other] > n:
            yield f"extf_{other}", f"%r = arith.extf %a : {t} to {other}", other
            yield f"fpext_{other}", f"%r = llvm.fpext %a : {t} to {other}", other
        elif INT_WIDTH[other] < n:
            yield f"truncf_{other}", f"%r = arith.truncf %a : {t} to {other}", other


CASES = [(f"{t}_{name}", t, body, r) for t in FLOAT_TYPE for name, body, r in _bodies(t)]


def _kernel(name: str, t: str, body: str, result: str) -> str:
    return (
        f"llvm.func @{name}(%pa: !llvm.ptr<1>, %pb: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {{nvvm.kernel}} {{\n"
        "  %t = nvvm.read.ptx.sreg.tid.x : i32\n"
        f"  %qa = llvm.getelementptr %pa[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {t}\n"
        f"  %a = llvm.load %qa : !llvm.ptr<1> -> {t}\n"
        f"  %qb = llvm.getelementptr %pb[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {t}\n"
        f"  %b = llvm.load %qb : !llvm.ptr<1> -> {t}\n"
        f"  {body}\n"
        f"  %qo = llvm.getelementptr %out[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, {result}\n"
        f"  llvm.store %r, %qo : {result}, !llvm.ptr<1>\n"
        "  llvm.return\n"
        "}\n"
    )


WARPS = 4


def _operands(t: str) -> tuple[Lanes, Lanes]:
    edge = np.array(EDGE[t], np.dtype(f"u{INT_WIDTH[t] // 8}"))
    lanes = np.arange(32 * WARPS)
    a = edge[lanes % 16]
    b = edge[(lanes % 16 + lanes // 32 * 5 + (lanes % 32) // 16 * 3) % 16]
    dtype = np.dtype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[t])
    return a.view(dtype), b.view(dtype)


def _result_zeros(result: str) -> Lanes:
    dtype = {"i8": np.uint8, "i16": np.uint16, "i32": np.uint32, "i64": np.uint64, "f16": np.float16,
             "f32": np.float32, "f64": np.float64}[result]  # fmt: skip
    return np.zeros(32 * WARPS, dtype)


def _outputs(module: ModuleOp) -> dict[str, bytes]:
    got: dict[str, bytes] = {}
    for name, t, _, result in CASES:
        a, b = _operands(t)
        args = {"arg0": a, "arg1": b, "arg2": _result_zeros(result)}
        outputs = run_kernel(module, name, block=32 * WARPS, args=args).outputs
        got[name] = list(outputs.values())[2].tobytes()
    return got


def test_float_ops_agree_with_both_lowerings_bit_for_bit(upstream: Upstream) -> None:
    """Every float op of the NVVM level on edge values (NaN payloads, signalling NaNs,
    infinities, denormals, signed zeros, out-of-range conversions), as our backend's PTX
    and as llc-22's PTX: the same bits everywhere, NaNs included."""
    text = "builtin.module {\n" + "".join(_kernel(n, t, body, r) for n, t, body, r in CASES) + "}\n"
    nvvm = _outputs(_parse(text))
    ours_module = _parse(text)
    ConvertToPtxPass().apply(make_context(), ours_module)
    ours = _outputs(ours_module)
    llc = _outputs(load_ptx(upstream.to_ptx(text).encode(), "llc.ptx", SourceMap()))
    for name, _, body, _ in CASES:
        assert ours[name] == nvvm[name], f"{name}: our PTX differs from the NVVM level ({body})"
        assert llc[name] == nvvm[name], f"{name}: llc-22's PTX differs from the NVVM level ({body})"


def _parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()
