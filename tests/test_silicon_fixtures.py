"""The silicon fixtures (tests/silicon/fixtures/, recorded on an H100 by silicon/run_on_device.py).

Checked here, without a GPU: every fixture is well formed and belongs to the committed
program and spec; every program assembles with ptxas for sm_90a and sm_100a; the runner's
host side and the generator reproduce what is committed; the hand-written programs' records
equal what the PTX ISA's mbarrier, barrier, cluster and warp-instruction semantics imply;
and where numpy or ml_dtypes are authoritative (IEEE round-to-nearest arithmetic, integer
wraparound, the fp8 tables) they agree with the generated results directly. Every generated
result is replayed bit for bit through the PTX value semantics by
tests/test_ptx_semantics_silicon.py (docs/ptx-semantics.md). What the PTX interpreter's
replay must compare is in tests/silicon/README.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import struct
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
import numpy.typing as npt
import pytest
from silicon_replay import FIXTURES, PROGRAMS, ROOT, buffer_bytes, load, output_words

from xdsl_tmem.backend.ptxas import assemble

NAMES = sorted(p.stem for p in FIXTURES.glob("*.json"))
SPECS = sorted(p.stem for p in PROGRAMS.glob("*.json"))
PTX_FILES = sorted(p.name for p in PROGRAMS.glob("*.ptx"))


def test_every_spec_has_a_fixture() -> None:
    assert SPECS == NAMES
    assert len(NAMES) == 15


@pytest.mark.parametrize("name", NAMES)
def test_fixture_well_formed(name: str) -> None:
    fx = load(name)
    spec: dict[str, Any] = json.loads((PROGRAMS / f"{name}.json").read_text())
    assert "error" not in fx
    assert fx["name"] == name
    assert fx["ptx"] == spec["ptx"]
    assert fx["kernel"] == spec["kernel"]
    text = (PROGRAMS / fx["ptx"]).read_text()
    assert fx["ptx_sha256"] == hashlib.sha256(text.encode()).hexdigest(), "the program changed since it was recorded"
    assert f".entry {fx['kernel']}(" in text
    launch = fx["launch"]
    assert (launch["grid"], launch["block"], launch["cluster"]) == (spec["grid"], spec["block"], spec["cluster"])
    assert launch["dynamic_smem"] == spec["dynamic_smem"]
    assert all(g % c == 0 for g, c in zip(launch["grid"], launch["cluster"], strict=True))
    assert [(p["name"], p["nbytes"], p["init"]) for p in fx["params"]] == [
        (p["name"], p["buffer"]["nbytes"], p["buffer"]["init"]) for p in spec["params"]
    ]
    assert sorted(fx["outputs"]) == sorted(spec["outputs"])
    for out_name, out in fx["outputs"].items():
        nbytes = next(p["nbytes"] for p in fx["params"] if p["name"] == out_name)
        assert out["nbytes"] == nbytes
        assert len(output_words(fx, out_name)) * 4 == nbytes
    assert fx["device"]["name"] == "NVIDIA H100 80GB HBM3"
    assert fx["device"]["compute_capability"] == "9.0"
    assert re.fullmatch(r"\d{3}\.\d+\.\d+", fx["device"]["driver"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", fx["recorded"])
    if name.startswith("gen_"):
        assert fx["generated"] == spec["generated"]


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
@pytest.mark.parametrize("ptx_file", PTX_FILES)
def test_program_assembles(ptxas: str, ptx_file: str, arch: str) -> None:
    text = (PROGRAMS / ptx_file).read_text()
    assert re.search(r"^\.version 8\.6$", text, re.M)
    assert re.search(r"^\.target sm_90$", text, re.M)
    assert assemble(text, arch, ptxas=ptxas)


def load_script(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """A script of silicon/ as a module (registered first: its dataclasses look themselves up there)."""
    spec = importlib.util.spec_from_file_location(f"silicon_{name}", ROOT / "silicon" / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


def test_runner_dry_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The runner's host side (specs, buffers, fixture format) with the fake launcher: what re-recording writes."""
    runner = load_script("run_on_device", monkeypatch)
    assert runner.main([str(tmp_path), "--fake"]) == 0
    written = json.loads((tmp_path / "fixtures.json").read_text())
    assert [f["name"] for f in written["fixtures"]] == [n for n in NAMES if n.startswith("gen_")] + [
        n for n in NAMES if not n.startswith("gen_")
    ]
    keys = ("name", "ptx", "ptx_sha256", "kernel", "launch", "params", "loaded_with", "generated")
    for fx in written["fixtures"]:
        committed = load(fx["name"])
        assert {k: fx.get(k) for k in keys} == {k: committed.get(k) for k in keys}
        assert sorted(fx) == sorted(committed)
        assert fx["outputs"].keys() == committed["outputs"].keys()


def test_generator_reproduces_the_programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate = load_script("generate", monkeypatch)
    monkeypatch.setattr(generate, "PROGRAMS", tmp_path)
    generate.write_all(list(generate.FAMILIES))
    for path in sorted(tmp_path.iterdir()):
        assert path.read_text() == (PROGRAMS / path.name).read_text(), path.name


# --- hand-written programs against PTX ISA semantics -----------------------------------------


def test_mbarrier_phases() -> None:
    w = output_words(load("mbarrier_phases"))
    # part A: pending counts are read from the state an arrive returns, i.e. before that arrive
    assert w[512:541] == [
        4, 0, 3, 2, 0, 0, 1,        # phase 0: arrive, test_wait, noComplete, arrive; parity 1 = the phase before
        1, 1, 1, 1, 0, 1, 0, 1,     # last arrival completes phase 0; try_wait with a hint times out on phase 1
        4, 0, 0, 1,                 # phase 1 waits for its 32 transaction bytes
        4, 0, 1,                    # phase 2: arrive.expect_tx, then complete_tx
        4, 0, 1,                    # phase 3: arrive_drop
        3, 0, 1,                    # phase 4 expects 3 arrivals
        0xC0FFEE,
    ]  # fmt: skip
    for tid in range(64):
        assert w[8 * tid : 8 * tid + 8] == [1, 1, 0, 0, 1, 1, 0, tid % 32], tid


def test_named_barriers() -> None:
    w = output_words(load("named_barriers"))
    for tid in range(128):
        warp, other = tid // 32, (tid + 37) % 128
        handoff = {1: 0xABCD0001, 3: 0xABCD0002}.get(warp, 0)
        popc_half = sum(1 for t in range(64 * (warp // 2), 64 * (warp // 2) + 64) if t % 3 == 0)
        expected = [43, 0, 1, 1, popc_half, handoff, other + 1, 3 * other, 26, 0, 85, 1]
        assert w[12 * tid : 12 * tid + 12] == expected, tid


def shfl(values: list[int], lane: int, mode: str, b: int, c: int) -> tuple[int, int]:
    """PTX ISA `shfl.sync` pseudocode (all 32 lanes in membermask)."""
    bval, cval, segmask = b & 0x1F, c & 0x1F, (c >> 8) & 0x1F
    max_lane = (lane & segmask) | (cval & ~segmask)
    min_lane = lane & segmask
    if mode == "up":
        j, ok = lane - bval, lane - bval >= max_lane
    elif mode == "down":
        j, ok = lane + bval, lane + bval <= max_lane
    elif mode == "bfly":
        j, ok = lane ^ bval, lane ^ bval <= max_lane
    else:
        j = min_lane | (bval & ~segmask)
        ok = j <= max_lane
    return (values[j] if ok else values[lane]), int(ok)


def test_warp_ops() -> None:
    w = output_words(load("warp_ops"))
    m3 = sum(1 << lane for lane in range(32) if lane % 3 == 0)
    for tid in range(64):
        warp, lane = divmod(tid, 32)
        v = [0xA0000 + 0x100 * warp + x for x in range(32)]
        mine = m3 if lane % 3 == 0 else ~m3 & 0xFFFFFFFF
        leader = (mine & -mine).bit_length() - 1  # silicon elects the lowest lane of membermask
        expected = [
            0, int(lane == 0),
            *shfl(v, lane, "up", 1, 0), *shfl(v, lane, "down", 5, 0x1F), *shfl(v, lane, "bfly", 3, 0x1F),
            *shfl(v, lane, "idx", lane * 7 & 63, 0x1F),
            shfl(v, lane, "idx", 2, 0x181F)[0], *shfl(v, lane, "up", 3, 0x1800), *shfl(v, lane, "down", 2, 0x0C1B),
            m3, 0, 1, 0,                              # ballot, all, any, uni
            0xF << (4 * (lane >> 2)), 0xFFFFFFFF, 1, 0, 0,  # match.any, match.all (equal), match.all (unequal)
            0xFFFFFFFF, sum(range(32)), v[31],        # activemask, redux.add, redux.max
            leader, int(lane == leader),
            v[30 - lane] if lane % 3 == 0 else v[1], 1,
            mine & 0xFFFF,                            # ballot of lane < 16 over the branch's lanes
        ]  # fmt: skip
        assert w[32 * tid : 32 * tid + 32] == expected, tid
        exited = warp == 1 and lane >= 20
        tail = [mine & (0xFF << (8 * (lane >> 3))), sum(x for x in range(32) if mine >> x & 1)]
        tail += [0, 0] if exited else [0xFFFFFFFF if warp == 0 else 0xFFFFF, 0]
        assert w[2048 + 4 * tid : 2048 + 4 * tid + 4] == tail, tid


@pytest.mark.parametrize("n", [2, 4])
def test_cluster_dsmem(n: int) -> None:
    fx = load(f"cluster_dsmem_c{n}")
    w = output_words(fx)
    ctas = fx["launch"]["grid"][0]
    for cta in range(ctas):
        rank, prev = cta % n, (cta % n + n - 1) % n
        for tid in range(64):
            lead = tid == 0
            expected = [
                rank, n, cta // n, rank, ctas // n, n, 1, ((rank + 1) % n) << 8 | 0x5A,
                3 if lead else 0, 0x2000 + prev if lead else 0, 0x1000 + prev, 1, 64 * n, cta, tid, 0,
            ]  # fmt: skip
            i = 16 * (cta * 64 + tid)
            assert w[i : i + 16] == expected, (cta, tid)


def test_mbarrier_ring() -> None:
    w = output_words(load("mbarrier_ring"))
    for tid in range(64):
        warp, lane = divmod(tid, 32)
        consumed = [1000 * i + lane for i in range(24)] if warp == 1 else [0] * 24
        # stage 0's barriers completed phases 0-5: parity 1 names the last one
        assert w[32 * tid : 32 * tid + 26] == [*consumed, 24, 3], tid


def test_bulk_copy() -> None:
    fx = load("bulk_copy")
    src = fx["params"][0]
    data = list(struct.unpack("<128I", buffer_bytes(src["init"], src["nbytes"])))
    assert output_words(fx, "out_ptr") == data + data
    assert output_words(fx, "flags_ptr") == [1] * 64


# --- numpy / ml_dtypes where they are authoritative ---------------------------------------

NUMPY_SLOTS: dict[str, list[tuple[str, str]]] = {
    "f32": [("add.rn.f32", "add"), ("sub.rn.f32", "sub"), ("mul.rn.f32", "mul"), ("div.rn.f32", "div"),
            ("sqrt.rn.f32", "sqrt"), ("cvt.rn.f16.f32", "f16"), ("cvt.rn.bf16.f32", "bf16"), ("cvt.f64.f32", "f64")],
    "f64": [("add.rn.f64", "add"), ("sub.rn.f64", "sub"), ("mul.rn.f64", "mul"), ("div.rn.f64", "div"),
            ("sqrt.rn.f64", "sqrt"), ("cvt.rn.f32.f64", "f32")],
    "int32": [("add.s32", "add"), ("sub.s32", "sub"), ("mul.lo.s32", "mul")],
    "int64": [("add.s64", "add"), ("sub.s64", "sub"), ("mul.lo.s64", "mul")],
}  # fmt: skip


def numpy_result(op: str, a: npt.NDArray[Any], b: npt.NDArray[Any]) -> npt.NDArray[Any]:
    with np.errstate(all="ignore"):
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "div":
            return a / b
        if op == "sqrt":
            return np.sqrt(a)
        return a.astype({"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}[op])


@pytest.mark.parametrize("family", sorted(NUMPY_SLOTS))
def test_numpy_agrees_where_authoritative(family: str) -> None:
    """IEEE round-to-nearest arithmetic and conversions, and integer wraparound, as numpy computes them.

    A NaN result is only required to be a NaN (numpy keeps x86's payload rules).
    """
    fx = load(f"gen_{family}")
    width = 32 if family in ("f32", "int32") else 64
    utype, ftype = (np.uint32, np.float32) if width == 32 else (np.uint64, np.float64)
    param = fx["params"][0]
    records = np.frombuffer(buffer_bytes(param["init"], param["nbytes"]), dtype=np.uint64).reshape(-1, 4)
    a_bits, b_bits = records[:, 0].astype(utype), records[:, 1].astype(utype)
    view = utype if family.startswith("int") else ftype
    a, b = a_bits.view(view), b_bits.view(view)
    slots = fx["generated"]["slots"]
    outs = np.frombuffer(buffer_bytes(fx["outputs"]["out_ptr"], fx["outputs"]["out_ptr"]["nbytes"]), dtype=np.uint64)
    outs = outs.reshape(len(records), len(slots))
    for opcode, op in NUMPY_SLOTS[family]:
        slot = next(s for s in slots if s["opcode"] == opcode)
        want = numpy_result(op, a, b)
        bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[want.dtype.itemsize]
        got = outs[:, slot["out"]].astype(bits)
        if family.startswith("int"):
            assert np.array_equal(got, want.astype(bits)), opcode
            continue
        nan = np.isnan(want.astype(np.float64))
        got_float = got.view(want.dtype).astype(np.float64)
        assert np.array_equal(np.isnan(got_float), nan), opcode
        assert np.array_equal(got[~nan], want.view(bits)[~nan]), opcode
        assert nan.any(), opcode  # the edge values reach NaN results


@pytest.mark.parametrize(("opcode", "fp8"), [("cvt.rn.f16x2.e4m3x2", "e4m3"), ("cvt.rn.f16x2.e5m2x2", "e5m2")])
def test_ml_dtypes_agree_on_fp8(opcode: str, fp8: str) -> None:
    """Every e4m3 / e5m2 byte widened to f16 as ml_dtypes does it (the byte pair's high byte to the high half)."""
    fx = load("gen_fp8")
    param = fx["params"][0]
    records = np.frombuffer(buffer_bytes(param["init"], param["nbytes"]), dtype=np.uint64).reshape(-1, 4)
    pairs = records[:, 0].astype(np.uint16)
    dtype = ml_dtypes.float8_e4m3fn if fp8 == "e4m3" else ml_dtypes.float8_e5m2
    halves = [(pairs >> shift).astype(np.uint8).view(dtype).astype(np.float16).view(np.uint16) for shift in (0, 8)]
    want = halves[0].astype(np.uint32) | halves[1].astype(np.uint32) << 16
    slots = fx["generated"]["slots"]
    slot = next(s for s in slots if s["opcode"] == opcode)
    outs = np.frombuffer(buffer_bytes(fx["outputs"]["out_ptr"], fx["outputs"]["out_ptr"]["nbytes"]), dtype=np.uint64)
    got = outs.reshape(len(records), len(slots))[:, slot["out"]].astype(np.uint32)
    nan = np.isnan(want.view(np.float16).reshape(-1, 2)).any(axis=1)
    assert nan.sum() == (2 if fp8 == "e4m3" else 6) * 2  # the NaN encodings, in either byte
    assert np.array_equal(got[~nan], want[~nan])
