"""The TMA model (xdsl_tmem/interpreter/tma.py) against the H100 fixtures of silicon/programs/tma/.

Every load fixture's shared-memory image, every store/reduction fixture's global buffer and the
multicast images are reproduced bit for bit from the recorded inputs alone; the programs that
faulted on silicon fault in the model; `TensorMap.validate` agrees with the driver's verdict on
every description of the encode table; the mbarrier transaction experiments replay through the
machine model's `MBarrier`. The fixtures' format is in tests/silicon/README.md, the findings in
docs/tma.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import sys
from dataclasses import replace
from math import prod
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from silicon_replay import ROOT, buffer_bytes

from xdsl_tmem.backend.ptxas import assemble
from xdsl_tmem.interpreter.machine import MBarrier
from xdsl_tmem.interpreter.tma import (
    Bytes,
    TensorMap,
    TensorMapError,
    TmaFault,
    load_box,
    parse_tensor_map_arg,
    reduce_box,
    store_box,
    swizzle_address,
)

SPECS = ROOT / "silicon" / "programs" / "tma"
FIXTURES = ROOT / "tests" / "silicon" / "fixtures" / "tma"
NAMES = sorted(p.stem for p in SPECS.glob("*.json"))
PROGRAMS = [n for n in NAMES if n != "tma_encode_checks"]


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def spec(name: str) -> dict[str, Any]:
    return json.loads((SPECS / f"{name}.json").read_text())


def param_bytes(fx: dict[str, Any], name: str) -> Bytes:
    p = next(p for p in fx["params"] if p["name"] == name)
    return np.frombuffer(buffer_bytes(p["init"], p["nbytes"]), dtype=np.uint8).copy()


def output(fx: dict[str, Any], name: str) -> Bytes:
    out = fx["outputs"][name]
    return np.frombuffer(buffer_bytes(out, out["nbytes"]), dtype=np.uint8)


def tensor_maps(fx: dict[str, Any]) -> list[TensorMap]:
    """Each tensor map over its buffer, the buffer at global address 0."""
    return [TensorMap.from_description(p["tensor_map"], 0) for p in fx["params"] if "tensor_map" in p]


def kind(name: str) -> str:
    return "store" if name.startswith(("tma_store", "tma_reduce")) else name.split("_")[1]


# --- the fixtures belong to the programs ----------------------------------------------------------


def test_every_spec_has_a_fixture() -> None:
    assert NAMES == sorted(p.stem for p in FIXTURES.glob("*.json"))
    assert len(NAMES) == 58


@pytest.mark.parametrize("name", PROGRAMS)
def test_fixture_matches_its_program(name: str) -> None:
    fx, sp = load(name), spec(name)
    text = (ROOT / "silicon" / "programs" / fx["ptx"]).read_text()
    assert fx["ptx_sha256"] == hashlib.sha256(text.encode()).hexdigest(), "the program changed since it was recorded"
    assert fx["kernel"] == sp["kernel"]
    assert [p["name"] for p in fx["params"]] == [p["name"] for p in sp["params"]]
    assert [p["tensor_map"] for p in fx["params"] if "tensor_map" in p] == [
        p["tensor_map"] for p in sp["params"] if "tensor_map" in p
    ]
    assert fx["device"]["name"] == "NVIDIA H100 80GB HBM3"
    assert fx["tma"] == sp["tma"]


@pytest.mark.parametrize("arch", ["sm_90a", "sm_100a"])
def test_programs_assemble(ptxas: str, arch: str) -> None:
    for path in sorted(SPECS.glob("*.ptx")):
        text = path.read_text()
        assert re.search(r"^\.version 8\.6$", text, re.M)
        assert re.search(r"^\.target sm_90$", text, re.M)
        assert assemble(text, arch, ptxas=ptxas), path.name


def load_script(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec_ = importlib.util.spec_from_file_location(f"silicon_{name}", ROOT / "silicon" / f"{name}.py")
    assert spec_ is not None
    assert spec_.loader is not None
    module = importlib.util.module_from_spec(spec_)
    monkeypatch.setitem(sys.modules, spec_.name, module)
    spec_.loader.exec_module(module)
    return module


def test_generator_reproduces_the_programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    generate = load_script("generate_tma", monkeypatch)
    monkeypatch.setattr(generate, "PROGRAMS", tmp_path)
    generate.write_all()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in SPECS.iterdir())
    for path in sorted(tmp_path.iterdir()):
        assert path.read_text() == (SPECS / path.name).read_text(), path.name


def test_runner_dry_run_keeps_the_tensor_maps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = load_script("run_on_device", monkeypatch)
    assert runner.main([str(tmp_path), "--fake", "--programs", str(SPECS)]) == 0
    written = json.loads((tmp_path / "fixtures.json").read_text())["fixtures"]
    assert [f["name"] for f in written] == NAMES
    for fx in written:
        committed = load(fx["name"])
        if "encode_checks" in fx:
            assert [c["tensor_map"] for c in fx["encode_checks"]] == [
                c["tensor_map"] for c in committed["encode_checks"]
            ]
        else:
            assert fx["params"] == committed["params"]


# --- loads ------------------------------------------------------------------------------------------

FAULTS = {
    "tma_find_coord_2B": "16-byte unit",
    "tma_find_coord_8B": "16-byte unit",
    "tma_find_coord_minus2B": "16-byte unit",
    "tma_find_dst_none_16": "misaligned",
    "tma_find_dst_sw32B_64": "misaligned",
    "tma_store_coord_8B": "16-byte unit",
    "tma_store_neg_both": "negative",
    "tma_store_neg_col": "negative",
    "tma_store_neg_row": "negative",
    "tma_reduce_or_neg_col": "negative",
    "tma_store_sw128_narrow": "narrower than the span",
}
FAULT_CODES = {"misaligned": "MISALIGNED_ADDRESS", "narrower than the span": "ILLEGAL_ADDRESS"}
UNMODELLED = "tma_load_oob_f32_estride_2x2_nan"
ESTRIDE0 = [n for n in PROGRAMS if n.startswith("tma_find_estride0_") and not n.startswith("tma_find_estride0_1x")]
LOADS = [
    n for n in PROGRAMS if kind(n) in ("load", "find") and n not in FAULTS and n != UNMODELLED and n not in ESTRIDE0
]
STORES = [n for n in PROGRAMS if kind(n) == "store" and n not in FAULTS]


def test_faults_are_the_recorded_errors() -> None:
    recorded = {n: load(n)["error"] for n in PROGRAMS if "error" in load(n)}
    assert sorted(recorded) == sorted(FAULTS)
    for name, err in recorded.items():
        assert err.endswith("CUDA_ERROR_" + FAULT_CODES.get(FAULTS[name], "ILLEGAL_INSTRUCTION")), (name, err)


@pytest.mark.parametrize("name", LOADS)
def test_load_images_bit_for_bit(name: str) -> None:
    """Each case: the shared buffer filled with 0xA5, one load, the first copy_bytes compared."""
    fx = load(name)
    tma: dict[str, Any] = fx["tma"]
    gmem = param_bytes(fx, "gmem")
    maps = tensor_maps(fx)
    out, flags = output(fx, "out_ptr"), output(fx, "flags_ptr").view(np.uint32)
    size = tma["copy_bytes"]
    for k, case in enumerate(tma["cases"]):
        smem = np.full(8192, tma["fill"], dtype=np.uint8)
        tmap = maps[int(case["tmap"])]
        tx = load_box(tmap, gmem, 0, case["coords"], smem, tma["dst"][k])
        assert bytes(smem[:size]) == bytes(out[k * size : (k + 1) * size]), (name, k, case)
        # the phase completes iff expect_tx equals the bytes the load counts
        expect = int(tma.get("expect_tx") or tmap.box_bytes())
        assert flags[k] == int(expect == tx), (name, k, int(flags[k]), expect, tx)


def test_element_stride_in_dimension_0_is_refused() -> None:
    """The driver accepts elementStrides[0] = 2 and documents it as ignored. On the H100, case 0
    (box rows 1, 3, 5 in bounds) loaded as if it were 1, but case 1 (rows 18, 20, 22 of 20: one
    in bounds) completed its 96 transaction bytes and wrote no byte at all. The model refuses."""
    fx = load(UNMODELLED)
    (tmap,) = tensor_maps(fx)
    out, flags = output(fx, "out_ptr"), output(fx, "flags_ptr").view(np.uint32)
    assert list(flags) == [1, 1, 0]
    assert set(out[256:512].tolist()) == {0xA5}
    with pytest.raises(TensorMapError, match=r"element_strides\[0\] = 2"):
        load_box(tmap, param_bytes(fx, "gmem"), 0, (8, 1), np.zeros(256, np.uint8), 0)


@pytest.mark.parametrize("name", ESTRIDE0)
def test_element_stride_in_dimension_0_loads_are_refused(name: str) -> None:
    """Single loads with elementStrides[0] > 1 (a second run gave different flags for three of them)."""
    fx = load(name)
    (tmap,) = tensor_maps(fx)
    assert tmap.element_strides[0] > 1
    with pytest.raises(TensorMapError, match=r"element_strides\[0\]"):
        load_box(tmap, param_bytes(fx, "gmem"), 0, fx["tma"]["cases"][0]["coords"], np.zeros(256, np.uint8), 0)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_faulting_programs_fault_in_the_model(name: str) -> None:
    fx = load(name)
    tma: dict[str, Any] = fx["tma"]
    gmem = param_bytes(fx, "gmem")
    (tmap,) = tensor_maps(fx)
    case = tma["cases"][0]  # the first case faults
    smem = np.zeros(8192, dtype=np.uint8)
    if case["op"] == "load":
        with pytest.raises(TmaFault, match=FAULTS[name]):
            load_box(tmap, gmem, 0, case["coords"], smem, tma["dst"][0])
    elif case["op"] == "store":
        with pytest.raises(TmaFault, match=FAULTS[name]):
            store_box(tmap, gmem, 0, case["coords"], smem, 0)
    else:
        with pytest.raises(TmaFault, match=FAULTS[name]):
            reduce_box(case["op"], tmap, gmem, 0, case["coords"], smem, 0)


def store_fill(case: int, nbytes: int) -> Bytes:
    """What the store programs' threads write to shared word i before case `case` (generate_tma.store_value)."""
    i = np.arange(nbytes // 4, dtype=np.uint32)
    words = ((case + 1) << 24) | ((i * 0x9E37) & 0xFFFFFF)
    return words.astype("<u4").view(np.uint8).copy()


@pytest.mark.parametrize("name", STORES)
def test_store_and_reduce_results_bit_for_bit(name: str) -> None:
    fx = load(name)
    gmem = param_bytes(fx, "gmem")
    maps = tensor_maps(fx)
    size = max(m.footprint() for m in maps)
    for k, case in enumerate(fx["tma"]["cases"]):
        smem = store_fill(k, size)
        if case["op"] == "store":
            store_box(maps[int(case["tmap"])], gmem, 0, case["coords"], smem, 0)
        else:
            reduce_box(case["op"], maps[int(case["tmap"])], gmem, 0, case["coords"], smem, 0)
    assert bytes(gmem) == bytes(output(fx, "gmem"))


@pytest.mark.parametrize("n", [2, 4])
def test_multicast_images_bit_for_bit(n: int) -> None:
    """Each CTA of the cluster holds the boxes of the loads whose ctaMask names it, 0xA5 elsewhere."""
    fx = load(f"tma_multicast_c{n}")
    gmem = param_bytes(fx, "gmem")
    (tmap,) = tensor_maps(fx)
    box = tmap.box_bytes()
    masks = [int(m) for m in re.findall(r"mov\.u16 %mask, (\d+);", program_text(fx))]  # the ctaMask operands
    out, flags = output(fx, "out_ptr"), output(fx, "flags_ptr").view(np.uint32)
    assert len(masks) == len(fx["tma"]["cases"]) == 2
    for rank in range(n):
        smem = np.full(2 * box, 0xA5, dtype=np.uint8)
        for j, (case, mask) in enumerate(zip(fx["tma"]["cases"], masks, strict=True)):
            if mask >> rank & 1:
                load_box(tmap, gmem, 0, case["coords"], smem, j * box)
        assert bytes(smem) == bytes(out[rank * 2 * box : (rank + 1) * 2 * box]), rank
        assert flags[rank] == 1
    assert fx["tma"]["multicast"]["expect_tx"] == [box * sum(m >> r & 1 for m in masks) for r in range(n)]


def program_text(fx: dict[str, Any]) -> str:
    return (ROOT / "silicon" / "programs" / fx["ptx"]).read_text()


# --- mbarrier transaction accounting ------------------------------------------------------------------


def test_mbarrier_transaction_experiments_replay_through_the_machine_model() -> None:
    """Each experiment's test_wait results, one thread in program order, through `MBarrier`:
    expect_tx raises the tx-count, complete_tx lowers it (below zero too), arrive.expect_tx is
    expect_tx then arrive, and a phase completes when pending arrivals and tx-count are both 0."""
    fx = load("tma_mbarrier_tx")
    out = output(fx, "out_ptr").view(np.uint32)
    got: list[int] = []
    for exp in fx["tma"]["experiments"]:
        mb = MBarrier(cta=0, offset=0, expected=exp["count"], pending=exp["count"])
        for step in exp["steps"]:
            op, *arg = step.split()
            if op == "test":
                got.append(int(mb.parity_passes(int(arg[0]))))
            elif op in ("expect", "arrive_expect"):
                mb.add_tx(int(arg[0]))
                if op == "arrive_expect":
                    mb.arrive(1)
            elif op == "complete":
                mb.add_tx(-int(arg[0]))
            else:
                mb.arrive(1)
    assert got == list(out[: fx["tma"]["records"]])


def test_mbarrier_real_copies() -> None:
    """An exact expect_tx completes with the tensor load; 16 bytes too many keep the phase open
    until a complete_tx of 16; a non-tensor bulk copy completes its bytes; the images are the
    model's box and the global bytes."""
    fx = load("tma_mbarrier_tx")
    rec = fx["tma"]["records"]
    out = output(fx, "out_ptr")
    words = out.view(np.uint32)
    assert list(words[rec : rec + 4]) == [1, 0, 1, 1]
    gmem = param_bytes(fx, "gmem")
    (tmap,) = tensor_maps(fx)
    box = fx["tma"]["box_bytes"]
    smem = np.zeros(box, dtype=np.uint8)
    assert load_box(tmap, gmem, 0, (4, 2), smem, 0) == box
    image = out[4 * (rec + 4) :]
    assert bytes(image[:box]) == bytes(smem)
    assert bytes(image[box : box + 256]) == bytes(gmem[128:384])
    after = output(fx, "gmem")
    assert bytes(after[512:768]) == bytes(gmem[128:384])
    assert bytes(after[:512]) == bytes(gmem[:512])
    assert bytes(after[768:]) == bytes(gmem[768:])


# --- validation against the driver --------------------------------------------------------------------


def encode_checks() -> list[dict[str, Any]]:
    return load("tma_encode_checks")["encode_checks"]


@pytest.mark.parametrize("check", encode_checks(), ids=lambda c: str(c["name"]))
def test_validate_agrees_with_the_driver(check: dict[str, Any]) -> None:
    """Accepted by cuTensorMapEncodeTiled (code 0) iff `validate` accepts it, for the H100 (sm_90)."""
    desc = check["tensor_map"]
    tmap = TensorMap.from_description(desc, 1 << 20)
    if check["code"] == 0:
        tmap.validate("sm_90a")
    else:
        with pytest.raises(TensorMapError, match=r"^tensor map .* is invalid: "):
            tmap.validate("sm_90a")


def test_validate_names_the_field() -> None:
    good = TensorMap("UINT16", 0, (64, 32), (128,), (64, 8), (1, 1), swizzle="128B")
    good.validate()
    with pytest.raises(TensorMapError, match=r"box_dims\[1\] = 257 is invalid: 1 to 256"):
        TensorMap("UINT16", 0, (64, 32), (128,), (64, 257), (1, 1)).validate()
    with pytest.raises(TensorMapError, match=r"global_strides\[0\] = 120 is invalid: a multiple of 16"):
        TensorMap("UINT16", 0, (64, 32), (120,), (64, 8), (1, 1)).validate()
    with pytest.raises(TensorMapError, match="at most 64 bytes of inner box with 64B swizzle"):
        TensorMap("UINT16", 0, (64, 32), (128,), (64, 8), (1, 1), swizzle="64B").validate()
    # the sm_100 swizzles: valid there, refused by the H100 driver, and not modelled
    atom = TensorMap("UINT16", 0, (64, 32), (128,), (64, 8), (1, 1), swizzle="128B_ATOM_32B")
    atom.validate("sm_100a")
    with pytest.raises(TensorMapError, match="swizzle"):
        atom.validate("sm_90a")
    with pytest.raises(TensorMapError, match="unverified"):
        load_box(atom, np.zeros(4096, np.uint8), 0, (0, 0), np.zeros(2048, np.uint8), 0)


def test_swizzle_is_the_cutlass_xor_pattern() -> None:
    """Independent of the fixtures: 128B swizzle permutes the eight 16-byte chunks of each
    128-byte row by XOR with the row index mod 8 (CUTLASS Swizzle<3,4,3>)."""
    rows = np.arange(8, dtype=np.int64)[:, None]
    chunks = np.arange(8, dtype=np.int64)[None, :]
    moved = swizzle_address("128B", rows * 128 + chunks * 16)
    assert (moved == rows * 128 + (chunks ^ rows) * 16).all()
    assert (swizzle_address("NONE", rows * 128) == rows * 128).all()


# --- the proposed launch argument ------------------------------------------------------------------


def test_tensor_map_argument_parses_to_the_encode_arguments() -> None:
    arg = parse_tensor_map_arg("tensormap:a+256:f16:40x30:96:16x8:swizzle=32B,oob=nan,l2=256B,estrides=1x2")
    assert (arg.buffer, arg.offset) == ("a", 256)
    assert arg.bind(4096) == TensorMap(
        "FLOAT16", 4352, (40, 30), (96,), (16, 8), (1, 2), "NONE", "32B", "L2_256B", "NAN_REQUEST_ZERO_FMA"
    )
    assert parse_tensor_map_arg("tensormap:b:u8:300:-:64").template.global_strides == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("tensormap:a:f16:40x30:96", "is not tensormap:BUFFER"),
        ("tensormap:a:f17:40x30:96:16x8", "element type 'f17'"),
        ("tensormap:a:f16:40xq:96:16x8", "DIMS '40xq'"),
        ("tensormap:a:f16:40x30:96:16x8:wrap=1", "option 'wrap'"),
        ("tensormap:a:f16:40x30:90:16x8", r"global_strides\[0\] = 90 is invalid"),
        ("tensormap:a:u16:40x30:96:16x8:oob=nan", "NaN fill needs a floating-point type"),
    ],
)
def test_tensor_map_argument_errors_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_tensor_map_arg(text)


def test_bind_checks_the_address() -> None:
    arg = parse_tensor_map_arg("tensormap:a+8:f32:64x4:256:32x4")
    with pytest.raises(TensorMapError, match="global_address = '0x1008' is invalid: a multiple of 16"):
        arg.bind(4096)


# --- beyond the fixtures: numpy slicing as the reference ------------------------------------------------


@st.composite
def boxes(draw: st.DrawFn) -> tuple[TensorMap, tuple[int, ...], Bytes]:
    """A u16 / f32 tensor of rank 1-3 with padded rows, a box, coordinates that may clip."""
    dtype = draw(st.sampled_from(["UINT16", "FLOAT32"]))
    esize = 2 if dtype == "UINT16" else 4
    per16 = 16 // esize
    rank = draw(st.integers(1, 3))
    dims = tuple(draw(st.integers(1, 12)) * (per16 if i == 0 else 1) for i in range(rank))
    row = -(-dims[0] * esize // 16) * 16 + 16 * draw(st.integers(0, 2))
    strides = tuple(row * prod(dims[1:i]) for i in range(1, rank))
    box = (per16 * draw(st.integers(1, 4)), *(draw(st.integers(1, 6)) for _ in range(rank - 1)))
    coords = (per16 * draw(st.integers(-3, 3)), *(draw(st.integers(-4, d)) for d in dims[1:]))
    nbytes = row * prod(dims[1:])
    gmem = np.frombuffer(draw(st.binary(min_size=nbytes, max_size=nbytes)), dtype=np.uint8).copy()
    return TensorMap(dtype, 0, dims, strides, box, (1,) * rank), coords, gmem


def reference_box(tmap: TensorMap, coords: tuple[int, ...], gmem: Bytes) -> Bytes:
    """The box by numpy: the tensor as an array of elements, zero-padded, sliced."""
    esize, rank = tmap.element_bytes, tmap.rank
    row = tmap.global_strides[0] if rank > 1 else gmem.size
    rows = gmem.reshape(-1, row)[:, : tmap.global_dims[0] * esize].reshape(-1, tmap.global_dims[0], esize)
    tensor = rows.reshape(*reversed(tmap.global_dims), esize)  # outermost dimension first
    pad = 64  # more than any coordinate or box of `boxes` reaches outside
    padded = np.pad(tensor, [(pad, pad)] * rank + [(0, 0)])
    index = tuple(slice(pad + c, pad + c + b) for c, b in zip(reversed(coords), reversed(tmap.box_dims), strict=True))
    return padded[index].ravel()


@settings(max_examples=60, deadline=None)
@given(boxes())
def test_load_box_is_numpy_slicing(case: tuple[TensorMap, tuple[int, ...], Bytes]) -> None:
    tmap, coords, gmem = case
    smem = np.zeros(tmap.footprint(), dtype=np.uint8)
    assert load_box(tmap, gmem, 0, coords, smem, 0) == smem.size
    assert bytes(smem) == bytes(reference_box(tmap, coords, gmem))


@settings(max_examples=40, deadline=None)
@given(boxes(), st.sampled_from(["32B", "64B", "128B"]))
def test_swizzled_load_is_a_permutation_of_the_plain_one(
    case: tuple[TensorMap, tuple[int, ...], Bytes], swizzle: str
) -> None:
    """A swizzled box holds the plain box's rows, each at the swizzle span's pitch, 16-byte
    chunks XORed by the row's 128-byte index (what the fixtures showed)."""
    tmap, coords, gmem = case
    span = int(swizzle[:-1])
    assume(tmap.box_dims[0] * tmap.element_bytes <= span)
    swz = replace(tmap, swizzle=swizzle)
    plain = np.zeros(tmap.footprint(), dtype=np.uint8)
    load_box(tmap, gmem, 0, coords, plain, 0)
    smem = np.zeros(swz.footprint(), dtype=np.uint8)
    load_box(swz, gmem, 0, coords, smem, 0)
    inner = tmap.box_dims[0] * tmap.element_bytes
    for r, line in enumerate(plain.reshape(-1, inner)):
        for c in range(inner // 16):
            at = r * span + c * 16
            at ^= ((at >> 7) & (span // 16 - 1)) << 4
            assert bytes(smem[at : at + 16]) == bytes(line[c * 16 : c * 16 + 16])


@settings(max_examples=40, deadline=None)
@given(boxes())
def test_store_writes_back_what_a_load_read(case: tuple[TensorMap, tuple[int, ...], Bytes]) -> None:
    """Storing a loaded box into zeroed memory restores exactly the in-bounds elements."""
    tmap, coords, gmem = case
    assume(all(c >= 0 for c in coords))
    smem = np.zeros(tmap.footprint(), dtype=np.uint8)
    load_box(tmap, gmem, 0, coords, smem, 0)
    back = np.zeros_like(gmem)
    store_box(tmap, back, 0, coords, smem, 0)
    mask = np.zeros_like(gmem)
    store_box(tmap, mask, 0, coords, np.full_like(smem, 0xFF), 0)
    assert bytes(back) == bytes(np.where(mask == 0xFF, gmem, 0).astype(np.uint8))
