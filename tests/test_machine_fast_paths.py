"""The machine model's fast paths against slow, obviously correct ones kept here.

The hot operations (benchmarks/machine_ops.py) use cached index maps and reused buffers:
`tcgen05.operand_plan` / `gather_operand_into` (an MMA operand read through its
shared-memory descriptor), `tcgen05.product_into` (the MMA product written in place into
TMEM), `tma.box_plan` (a TMA box load as one copy of 16-byte units) and the race checks
on slices or one gather (`races.check_span`, `races.check_operands`). Each is compared
with a per-element formula written from the documented rules (docs/interpreter.md,
"Numerics"; docs/tma.md), bit for bit, on random inputs; the race checks with the
reference checks they shortcut, on random access histories (same records, same report).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Sequence
from math import ceil, prod
from typing import Any, cast

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from threadpoolctl import threadpool_info, threadpool_limits
from xdsl.dialects.builtin import ModuleOp

from xdsl_tmem.dialects.nvvm import Tcgen05LdStShape
from xdsl_tmem.fence_policy import FencePolicy
from xdsl_tmem.interpreter import hazards, races, tma
from xdsl_tmem.interpreter import nvvm as N
from xdsl_tmem.interpreter.blas import single_threaded_blas
from xdsl_tmem.interpreter.executor import Program, Warp
from xdsl_tmem.interpreter.launch import Geometry
from xdsl_tmem.interpreter.machine import AsyncOp, Cluster, Cta, GlobalMemory, Hazard, Memo, SharedLayout
from xdsl_tmem.interpreter.nvvm import MmaOperands, tcgen05_mma
from xdsl_tmem.interpreter.run import connect
from xdsl_tmem.interpreter.shadow import COMP_SHIFT, GRAIN, SHARED, SITE_SHIFT, Writers
from xdsl_tmem.interpreter.tcgen05 import (
    DEFERRED_K,
    DescriptorError,
    SmemDescriptor,
    decode_into,
    gather_operand,
    gather_operand_into,
    ldst_plan,
)

ANY_OP = ModuleOp([])
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ======================================================================================
# Operand reads through shared-memory descriptors
# ======================================================================================

ELEMENT = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1}
WIDTH = {0: 0, 2: 128, 4: 64, 6: 32}
"""Swizzle code → its span in bytes (0: none)."""


@pytest.mark.parametrize("fmt", ["f16", "bf16"])
def test_every_16_bit_code_decodes_as_numpy_and_ml_dtypes_do(fmt: str) -> None:
    """`decode_into` (the arithmetic f16 decode, the bf16 shift) on all 65536 codes equals
    numpy's float16 and ml_dtypes' bfloat16 conversions to float32, bit for bit (NaN
    payloads and signs included)."""
    codes = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    out = np.empty(codes.shape, np.float32)
    decode_into(codes, fmt, out)
    kind = np.float16 if fmt == "f16" else ml_dtypes.bfloat16
    expected = codes.view(kind).astype(np.float32)
    np.testing.assert_array_equal(out.view(np.uint32), expected.view(np.uint32))


def reference_address(desc: SmemDescriptor, i: int, k: int, element: int, mn_major: bool) -> int:
    """docs/interpreter.md, "operand layouts": the byte of element (i, k), then the swizzle
    (the 16-byte chunk index XOR address bits 7.. of the absolute address)."""
    t, w = 16 // element, WIDTH[desc.swizzle]
    if not mn_major:
        if w == 0:
            offset = (i % 8) * 16 + (i // 8) * desc.sbo + (k // t) * desc.lbo + (k % t) * element
        else:
            offset = (i % 8) * w + (i // 8) * desc.sbo + k * element
    elif w == 0:
        offset = (i % t) * element + (i // t) * desc.sbo + (k % 8) * 16 + (k // 8) * desc.lbo
    else:
        per_row = w // element
        offset = (i % per_row) * element + (i // per_row) * desc.lbo + (k % 8) * w + (k // 8) * desc.sbo
    address = desc.start + offset
    if w:
        address ^= ((address >> 7) & (w // 16 - 1)) << 4
    return address


def reference_value(raw: bytes, fmt: str) -> float:
    """One element's value, decoded by ml_dtypes / the PTX format definitions."""
    match fmt:
        case "f16":
            return float(np.frombuffer(raw, np.float16)[0])
        case "bf16":
            return float(np.frombuffer(raw, ml_dtypes.bfloat16)[0])
        case "tf32":  # the fp32 container, the low 13 mantissa bits dropped
            bits = int.from_bytes(raw, "little") & 0xFFFFE000
            return float(np.array([bits], np.uint32).view(np.float32)[0])
        case "e4m3":
            return float(np.frombuffer(raw, ml_dtypes.float8_e4m3fn)[0])
        case _:
            return float(np.frombuffer(raw, ml_dtypes.float8_e5m2)[0])


def reference_operand(smem: NDArray[np.uint8], desc: SmemDescriptor, rows: int, k: int, fmt: str,
                      mn_major: bool) -> NDArray[np.float32]:  # fmt: skip
    e = ELEMENT[fmt]
    out = np.empty((rows, k), np.float32)
    for i in range(rows):
        for kk in range(k):
            a = reference_address(desc, i, kk, e, mn_major)
            out[i, kk] = reference_value(smem[a : a + e].tobytes(), fmt)
    return out


@st.composite
def operand_tiles(draw: st.DrawFn) -> tuple[SmemDescriptor, int, int, str, bool]:
    fmt = draw(st.sampled_from(list(ELEMENT)))
    swizzle = draw(st.sampled_from(list(WIDTH)))
    mn_major = draw(st.booleans())
    rows = 8 * draw(st.integers(1, 6))
    k = draw(st.sampled_from([32 // ELEMENT[fmt], 64 // ELEMENT[fmt]]))
    sixteen = st.integers(0, 96).map(lambda x: 16 * x)
    start = draw(st.integers(0, 1024).map(lambda x: 16 * x))
    return SmemDescriptor(start, draw(sixteen), draw(sixteen), 0, 0, swizzle), rows, k, fmt, mn_major


@FAST
@given(operand_tiles(), st.integers(0, 2**32 - 1))
def test_gather_matches_the_layout_formula(tile: tuple[SmemDescriptor, int, int, str, bool], seed: int) -> None:
    """Any descriptor (start, LBO, SBO, swizzle), shape, format and major-ness: the cached
    plan and the table decode read the same values as the per-element formula."""
    desc, rows, k, fmt, mn_major = tile
    smem = np.random.default_rng(seed).integers(0, 256, 40000).astype(np.uint8)
    top = max(reference_address(desc, i, kk, ELEMENT[fmt], mn_major) for i in (0, rows - 1) for kk in (0, k - 1))
    try:
        got = gather_operand(smem, desc, rows, k, fmt, mn_major)
    except DescriptorError:
        assert top + ELEMENT[fmt] > smem.size or top < 0 or desc.start + 4096 > smem.size
        return
    expected = reference_operand(smem, desc, rows, k, fmt, mn_major)
    np.testing.assert_array_equal(got, expected)
    into = np.full((rows, k), -1.0, np.float32)
    gather_operand_into(smem, desc, fmt, mn_major, into)
    np.testing.assert_array_equal(into.view(np.uint32), got.view(np.uint32))


def test_gather_refuses_a_tile_past_shared_memory() -> None:
    desc = SmemDescriptor(4096 - 256, 16, 1024, 0, 0, 2)
    with pytest.raises(DescriptorError, match="beyond the 4096 bytes in use"):
        gather_operand_into(np.zeros(4096, np.uint8), desc, "f16", False, np.empty((128, 16), np.float32))


# ======================================================================================
# TMA box loads
# ======================================================================================

SPAN = {"NONE": 0, "32B": 32, "64B": 64, "128B": 128}
DTYPE = {1: "UINT8", 2: "FLOAT16", 4: "FLOAT32"}


def reference_load(tmap: tma.TensorMap, gmem: NDArray[np.uint8], gbase: int, coords: list[int],
                   smem: NDArray[np.uint8], smem_address: int) -> list[int]:  # fmt: skip
    """docs/tma.md, element by element in box order (dimension 0 fastest): the element at
    coords[d] + k_d · elementStride[d] (dimension 0's stride ignored), zero or the NaN fill
    outside the tensor; in shared memory rows of the inner box padded to the swizzle span,
    the swizzle on the absolute address. Returns the shared byte addresses written."""
    e = tmap.element_bytes
    counts = [tmap.box_dims[0]] + [
        ceil(b / s) for b, s in zip(tmap.box_dims[1:], tmap.element_strides[1:], strict=True)
    ]
    pitch = max(counts[0] * e, SPAN[tmap.swizzle])
    strides = [e, *tmap.global_strides]
    fill = (0x7FF7).to_bytes(2, "little") * max(e // 2, 1) if tmap.oob_fill != "NONE" else bytes(e)
    written: list[int] = []
    for flat in range(prod(counts)):
        ks: list[int] = []
        rest = flat
        for n in counts:
            ks.append(rest % n)
            rest //= n
        index = [
            c + kk * (s if d else 1) for d, (c, kk, s) in enumerate(zip(coords, ks, tmap.element_strides, strict=True))
        ]
        inside = all(0 <= x < dim for x, dim in zip(index, tmap.global_dims, strict=True))
        src = tmap.global_address + sum(x * s for x, s in zip(index, strides, strict=True)) - gbase
        value = gmem[src : src + e].tobytes() if inside else fill[:e]
        row = 0
        for d in range(len(counts) - 1, 0, -1):
            row = row * counts[d] + ks[d]
        address = smem_address + row * pitch + ks[0] * e
        bits = {0: 0, 32: 1, 64: 3, 128: 7}[SPAN[tmap.swizzle]]
        address ^= ((address >> 7) & bits) << 4
        smem[address : address + e] = np.frombuffer(value, np.uint8)
        written.extend(range(address, address + e))
    return written


@st.composite
def box_loads(draw: st.DrawFn) -> tuple[tma.TensorMap, list[int], int]:
    e = draw(st.sampled_from([1, 2, 4]))
    swizzle = draw(st.sampled_from(list(SPAN)))
    rank = draw(st.integers(2, 3))
    units = draw(st.integers(1, (SPAN[swizzle] or 64) // 16))
    box = [16 * units // e] + [draw(st.integers(1, 12)) for _ in range(rank - 1)]
    dims = [box[0] * draw(st.integers(1, 3))] + [draw(st.integers(1, 20)) for _ in range(rank - 1)]
    strides: list[int] = []
    pitch = dims[0] * e
    for d in dims[1:]:
        pitch = (pitch + 15) // 16 * 16 + 16 * draw(st.integers(0, 2))
        strides.append(pitch)
        pitch *= d
    estrides = [1] + [draw(st.integers(1, 3)) for _ in range(rank - 1)]
    fill = draw(st.sampled_from(["NONE", "NAN_REQUEST_ZERO_FMA"])) if e > 1 else "NONE"
    tmap = tma.TensorMap(DTYPE[e], 256 * 1024, tuple(dims), tuple(strides), tuple(box), tuple(estrides),
                         swizzle=swizzle, oob_fill=fill)  # fmt: skip
    coords = [box[0] * draw(st.integers(-1, 3))] + [draw(st.integers(-4, 22)) for _ in range(rank - 1)]
    smem_address = 128 * draw(st.integers(0, 24))
    return tmap, coords, smem_address


@FAST
@given(box_loads(), st.integers(0, 2**32 - 1))
def test_box_load_matches_the_element_formula(load: tuple[tma.TensorMap, list[int], int], seed: int) -> None:
    """Any tile-mode map, box, coordinates (inside, across or past the tensor's edges)
    and 128-aligned destination: `load_box` (the cached plan, one copy for a box inside
    the tensor) writes what the per-element rule writes, `load_bytes` lists the same
    bytes in the same order."""
    tmap, coords, smem_address = load
    try:
        tmap.validate()
    except tma.TensorMapError:
        assume(False)
    rng = np.random.default_rng(seed)
    gbase = tmap.global_address - 256
    gmem = rng.integers(0, 256, 256 + 2 * prod(tmap.global_dims[1:]) * tmap.global_strides[-1]).astype(np.uint8)
    fast, slow = (np.full(65536, 0xAB, np.uint8) for _ in range(2))
    expected = reference_load(tmap, gmem, gbase, coords, slow, smem_address)
    assert tma.load_box(tmap, gmem, gbase, coords, fast, smem_address) == len(expected)
    np.testing.assert_array_equal(fast, slow)
    np.testing.assert_array_equal(tma.load_bytes(tmap, coords, smem_address), expected)


@pytest.mark.parametrize("inner", [64, 32])
def test_box_copy_keeps_nan_payloads(inner: int) -> None:
    """The box copy moves 16-byte units as one numpy item type (`tma.UNIT`): every byte
    arrives as it was, signalling NaNs, payloads and sign bits of either half included
    (`inner` 64: a 128-byte row, one gather into the range; 32: rows padded to the
    swizzle span, a scatter)."""
    patterns = np.array([0x7FF0000000000001, 0xFFF0000000000001, 0x7FF4000000000000, 0x7FF8000000000001,
                         0xFFFFFFFFFFFFFFFF, 0x0000000000000001, 0x8000000000000000], dtype=np.uint64)  # fmt: skip
    gmem = np.random.default_rng(0).choice(patterns, 8192).view(np.uint8)
    tmap = tma.TensorMap("FLOAT16", 0, (inner, 128), (inner * 2,), (inner, 128), (1, 1), swizzle="128B")
    fast, slow = (np.full(65536, 0xAB, np.uint8) for _ in range(2))
    reference_load(tmap, gmem, 0, [0, 0], slow, 1024)
    tma.load_box(tmap, gmem, 0, [0, 0], fast, 1024)
    assert (tma.load_plan(tmap, [0, 0], 1024)[0].gather is None) == (inner == 32)
    np.testing.assert_array_equal(fast, slow)


# ======================================================================================
# The MMA product in place
# ======================================================================================

FORMAT_CODE = {"f16": (0, "f16"), "bf16": (1, "f16"), "tf32": (2, "tf32"), "e4m3": (0, "f8f6f4")}
K_OF = {"f16": 16, "tf32": 8, "f8f6f4": 32}


def make_cluster(ctas: int) -> tuple[Cluster, Warp]:
    layout = SharedLayout()
    layout.add("tile", 65536, 1024)
    cta_list = [Cta(r, (r, 0, 0), layout) for r in range(ctas)]
    for cta in cta_list:
        cta.allocator.allocations[0] = 512
        cta.tmem_written[:] = True
        cta.shadow.host = True  # preloaded directly: count every byte as written
    cluster = Cluster(cta_list, GlobalMemory(), 32 * ctas)
    warps = [Warp(Program(ModuleOp([]), []), cluster, c, 0, Geometry((32, 1, 1))) for c in cta_list]
    connect(cluster, warps, FencePolicy.MOJO)
    warps[0].mask = np.arange(32) == 0
    return cluster, warps[0]


def smem_desc(start: int, swizzle_code: int = 2, sbo: int = 1024) -> int:
    return (start >> 4) | (1 << 16) | ((sbo >> 4) << 32) | (1 << 46) | (swizzle_code << 61)


@FAST
@given(
    st.sampled_from(list(FORMAT_CODE)),
    st.sampled_from([1, 2]),
    st.sampled_from([16, 64, 256]),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.sampled_from([0, 1, 5]),
    st.integers(0, 2**32 - 1),
)
def test_mma_in_place_matches_the_documented_numerics(
    fmt: str, cta_group: int, n: int, negate_a: bool, negate_b: bool, accumulate: bool, scale: int, seed: int
) -> None:
    """docs/interpreter.md "MMA": D = A·Bᵀ (+ D·2^-scale_input_d) in float32, the product
    one float32 matrix product of the decoded (negated) operands, then the scaled old D
    added; bit for bit, old D cells being arbitrary bit patterns (NaNs included), for
    cta_group 1 (M = 128) and 2 (M = 256: CTA v's A rows, the pair's B rows)."""
    code, kind = FORMAT_CODE[fmt]
    k = K_OF[kind]
    cluster, warp = make_cluster(cta_group)
    rng = np.random.default_rng(seed)
    a_at, b_at, rows_b = 0, 16384, n // cta_group
    a_parts: list[NDArray[np.float32]] = []
    b_parts: list[NDArray[np.float32]] = []
    old: list[NDArray[np.uint32]] = []
    for cta in cluster.ctas:
        # finite operands (how NaN operands' payloads propagate is not the point: the old D
        # cells below hold every bit pattern): the exponent's top bit clear, no e4m3 NaN code
        raw = rng.integers(0, 256, 65536).astype(np.uint8)
        if fmt == "e4m3":
            raw[(raw & 0x7F) == 0x7F] = 0x7E
        else:
            raw[ELEMENT[fmt] - 1 :: ELEMENT[fmt]] &= 0xBF
        cta.smem[:] = raw
        a_parts.append(reference_operand(cta.smem, SmemDescriptor.decode(smem_desc(a_at)), 128, k, fmt, False))
        b_parts.append(reference_operand(cta.smem, SmemDescriptor.decode(smem_desc(b_at)), rows_b, k, fmt, False))
        cta.tmem[:] = rng.integers(0, 2**32, cta.tmem.shape, dtype=np.uint64).astype(np.uint32)
        old.append(cta.tmem[:128, 8 : 8 + n].copy())
    flags = negate_a << 13 | negate_b << 14
    idesc = 1 << 4 | code << 7 | code << 10 | flags | (n >> 3) << 17 | (128 * cta_group >> 4) << 24
    operands = MmaOperands(8, smem_desc(a_at), smem_desc(b_at), idesc, int(accumulate), scale_input_d=scale)
    tcgen05_mma(warp, ANY_OP, kind, cta_group, operands)
    b = np.concatenate(b_parts) * np.float32(-1 if negate_b else 1)
    with np.errstate(all="ignore"):
        for v, cta in enumerate(cluster.ctas):
            expected = ((a_parts[v] * np.float32(-1 if negate_a else 1)) @ b.T).astype(np.float32)
            if accumulate:
                expected = (expected + old[v].view(np.float32) * np.float32(2.0**-scale)).astype(np.float32)
            np.testing.assert_array_equal(cta.tmem[:128, 8 : 8 + n], expected.view(np.uint32))


def test_a_run_computes_its_products_on_one_blas_thread() -> None:
    """interpreter/blas.py: inside `single_threaded_blas` BLAS has one thread whatever the
    caller set, so an MMA-shaped product is the one-thread product's bits, and the caller's
    setting is back after."""
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((256, 16)).astype(np.float32), rng.standard_normal((256, 16)).astype(np.float32)
    with threadpool_limits(limits=1, user_api="blas"):
        one = a @ b.T
    with threadpool_limits(limits=4, user_api="blas"):
        before = _blas_threads()
        with single_threaded_blas():
            threads = _blas_threads()
            inside = a @ b.T
        after = _blas_threads()
    assert threads == {1}
    assert after == before
    np.testing.assert_array_equal(inside.view(np.uint32), one.view(np.uint32))


def _blas_threads() -> set[int]:
    pools = cast(list[dict[str, Any]], threadpool_info())
    return {int(p["num_threads"]) for p in pools if p["user_api"] == "blas"}


# ======================================================================================
# Race checks on slices / one gather
# ======================================================================================


def history(rng: np.random.Generator, warp: Warp, size: int, sites: int) -> tuple[NDArray[np.int64], ...]:
    """Random write and read records over `size` bytes: nothing, accesses of a few clock
    components at epochs around what `warp` knows, and concurrent readers (SHARED)."""
    for s in range(1, sites + 1):
        warp.cluster.memory.sites.of(f"site {s}", "someone")
    components = rng.integers(0, warp.clock.vc.size, 3)
    patch = rng.integers(0, 4, size)

    def records(p_none: float) -> NDArray[np.int64]:
        comp = components[rng.integers(0, 3)] if rng.random() < 0.7 else rng.integers(0, warp.clock.vc.size, size)
        epoch = np.maximum(warp.clock.vc[comp] + rng.integers(-3, 1 + (rng.random() < 0.3), size), 1)
        site = rng.integers(1, sites + 1, size)
        packed = (site << SITE_SHIFT) | (np.asarray(comp) << COMP_SHIFT) | epoch
        return np.where(rng.random(size) < p_none, 0, packed).astype(np.int64) * (patch > 0)

    return records(rng.choice([0.0, 0.5, 1.0])), records(rng.choice([0.0, 0.5, 1.0]))


def _error(fn: Callable[[], None]) -> tuple[str, str] | None:
    try:
        fn()
    except Hazard as e:
        return e.kind, str(e)
    return None


def outcome(fn: Callable[[], None], cta: Cta) -> tuple[Any, ...]:
    error = _error(fn)
    shadow = cta.shadow
    prev = None if shadow.prev is None else shadow.prev.tolist()
    return error, shadow.write.copy(), shadow.read.copy(), {b: list(r) for b, r in shadow.readers.items()}, prev


def kept_outcome(fn: Callable[[], None], cta: Cta) -> tuple[Any, ...]:
    """`outcome`, read from a copy of the shadow: reading `read` records the tensor core's
    pending reads, which the history under test then keeps pending."""
    error = _error(fn)
    shadow = cta.shadow
    cta.shadow = copy.deepcopy(shadow)
    try:
        return (error, *outcome(lambda: None, cta)[1:])
    finally:
        cta.shadow = shadow


@FAST
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_check_span_is_check(seed: int, readers: bool) -> None:
    """A write of a permuted range (an unpadded TMA box): `check_span` leaves the same
    records and raises the same report as `check` of the bytes in access order."""
    rng = np.random.default_rng(seed)
    cluster, warp = make_cluster(1)
    warp.clock.vc[:] = rng.integers(1, 6, warp.clock.vc.size)
    cta = cluster.ctas[0]
    cta.shadow.host = False
    start, size = int(rng.integers(0, 1000)), int(rng.integers(16, 600))
    write, read = history(rng, warp, size, 3)
    cta.shadow.write[start : start + size], cta.shadow.read[start : start + size] = write, read
    if readers and size > 4:
        for byte in rng.choice(size, 3, replace=False).tolist():
            cta.shadow.read[start + byte] = SHARED
            cta.shadow.readers[start + byte] = [int(r) for r in history(rng, warp, 2, 3)[0] if r] or [2 << SITE_SHIFT]
    order = start + rng.permutation(size).astype(np.int64)
    clone = copy.deepcopy(cta.shadow)
    fast = outcome(lambda: races.check_span(warp, ANY_OP, cta.shadow, (start, start + size), lambda: order), cta)
    cta.shadow = clone
    slow = outcome(lambda: races.check(warp, ANY_OP, cta.shadow, order, write=True), cta)
    assert fast[0] == slow[0]
    for got, expected in zip(fast[1:3], slow[1:3], strict=True):
        np.testing.assert_array_equal(got, expected)
    assert fast[3:] == slow[3:]


@FAST
@given(st.integers(0, 2**32 - 1), st.booleans(), st.booleans())
def test_check_operands_is_check_operand_per_tile(seed: int, host: bool, overlap: bool) -> None:
    """An MMA's A and B tiles checked with one gather (`check_operands`): the same records
    and report as `check_operand` of A, then of B."""
    rng = np.random.default_rng(seed)
    cluster, warp = make_cluster(1)
    warp.clock.vc[:] = rng.integers(1, 6, warp.clock.vc.size)
    cta = cluster.ctas[0]
    cta.shadow.host = host
    write, read = history(rng, warp, 16384, 3)
    cta.shadow.write[:16384], cta.shadow.read[:16384] = write, read
    a = SmemDescriptor.decode(smem_desc(0))
    b = SmemDescriptor.decode(smem_desc(0 if overlap else 8192))
    tiles = [(a, 128, 16, "f16", False), (b, 64, 16, "f16", False)]
    clone = copy.deepcopy(cta.shadow)
    fast = outcome(lambda: races.check_operands(warp, ANY_OP, cta, tiles), cta)
    cta.shadow = clone

    def one_by_one() -> None:
        for tile in tiles:
            races.check_operand(warp, ANY_OP, cta, *tile)

    slow = outcome(one_by_one, cta)
    assert fast[0] == slow[0]
    for got, expected in zip(fast[1:3], slow[1:3], strict=True):
        np.testing.assert_array_equal(got, expected)
    assert fast[3:] == slow[3:]


def full_outcome(fn: Callable[[], None], cluster: Cluster) -> tuple[Any, ...]:
    """`outcome` and every other record a check keeps: what writes replaced, same-value
    writer groups, foreign reads, the sites noted inexact, same-value races, the range
    touched."""
    try:
        fn()
        error = None
    except Hazard as e:
        error = (e.kind, str(e))
    shadow, sites = cluster.ctas[0].shadow, cluster.memory.sites

    def array(a: NDArray[np.int64] | None) -> list[int] | None:
        return None if a is None else a.tolist()

    touched = None if shadow.touched is None else np.flatnonzero(shadow.touched).tolist()
    return (
        error, shadow.write.tolist(), shadow.read.tolist(), array(shadow.prev), array(shadow.foreign),
        {b: list(r) for b, r in shadow.readers.items()},
        {b: (list(w.members), w.before) for b, w in shadow.writers.items()},
        {b: list(d) for b, d in shadow.displaced.items()},
        sorted(sites.inexact), sites.same_value, touched,
    )  # fmt: skip


def unit_history(rng: np.random.Generator, warp: Warp, shadow: Any, span: int, extras: bool) -> None:
    """`history` over the first `span` bytes of `shadow`; with `extras`, also concurrent
    readers, same-value writer groups, what writes replaced (one or several) and an
    earlier cluster's reads."""
    write, read = history(rng, warp, span, 3)
    shadow.write[:span], shadow.read[:span] = write, read
    if not extras:
        return
    shadow.prev = np.zeros(shadow.write.size, dtype=np.int64)
    shadow.prev[:span] = history(rng, warp, span, 3)[0]
    for byte in rng.choice(span, 6, replace=False).tolist():
        packed = [int(p) for p in history(rng, warp, 3, 3)[0] if p] or [2 << SITE_SHIFT]
        match int(rng.integers(0, 3)):
            case 0:
                shadow.read[byte], shadow.readers[byte] = SHARED, packed
            case 1:
                shadow.write[byte], shadow.writers[byte] = SHARED, Writers(packed, (3 << SITE_SHIFT,))
            case _:
                shadow.prev[byte], shadow.displaced[byte] = SHARED, packed
    if rng.random() < 0.3:
        shadow.foreign = np.zeros(shadow.write.size, dtype=np.int64)
        shadow.foreign[:span] = history(rng, warp, span, 3)[1]


@FAST
@given(st.integers(0, 2**32 - 1), st.sampled_from([4, 8, 16]), st.booleans(), st.booleans(), st.booleans())
def test_check_units_is_check_of_their_bytes(seed: int, size: int, write: bool, host: bool, extras: bool) -> None:
    """A warp's aligned per-lane accesses (a cp.async's lanes) checked as whole units
    (`check_units`): the same report and records as `check` of their bytes, unit after
    unit, whatever the history (fresh, known, racing, concurrent readers, same-value
    groups, repeated units, a store writing the bytes memory holds)."""
    rng = np.random.default_rng(seed)
    cluster, warp = make_cluster(1)
    warp.clock.vc[:] = rng.integers(1, 6, warp.clock.vc.size)
    shadow = cluster.ctas[0].shadow
    shadow.host = host
    span = 2048
    if rng.random() < 0.8:
        unit_history(rng, warp, shadow, span, extras)
    lanes = int(rng.integers(1, 33))
    match int(rng.integers(0, 3)):
        case 0:  # a regular pattern: consecutive units
            first = int(rng.integers(0, span // size - lanes))
            units = np.arange(first, first + lanes, dtype=np.int64)
        case 1:  # any distinct units
            units = rng.choice(span // size, lanes, replace=False).astype(np.int64)
        case _:  # units may repeat
            units = rng.integers(0, span // size, lanes).astype(np.int64)
    index = (units[:, None] * size + np.arange(size)).reshape(-1)  # unit after unit, byte after byte
    values: NDArray[np.uint8] | None = None
    if write and rng.random() < 0.7:
        memory = cluster.ctas[0].smem
        same = rng.random() < 0.5  # the bytes memory holds: a same-value write where it races
        values = (memory[index] if same else rng.integers(0, 256, index.size).astype(np.uint8)).reshape(lanes, size)
    clone = copy.deepcopy(shadow)
    fast = full_outcome(lambda: races.check_units(warp, ANY_OP, shadow, units, size, write, values), cluster)
    cluster.ctas[0].shadow = clone
    cluster.memory.sites.inexact.clear()
    cluster.memory.sites.same_value = 0
    slow = full_outcome(lambda: races.check(warp, ANY_OP, clone, index, write, values), cluster)
    assert fast == slow


def _strided_outcomes(
    cluster: Cluster, warp: Warp, starts: range, size: int, write: bool, values: NDArray[np.uint8] | None
) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """`full_outcome` of `check_strided` of CTA 0's shadow, and of `check` of the same
    bytes on a copy of the shadow without `used` (and of the sites), which is left aside."""
    shadow = cluster.ctas[0].shadow
    clone = copy.deepcopy(shadow)
    clone.used = None
    sites = copy.deepcopy(cluster.memory.sites)
    index = (np.array(starts, dtype=np.int64)[:, None] + np.arange(size)).reshape(-1)
    fast = full_outcome(lambda: races.check_strided(warp, ANY_OP, shadow, starts, size, write, values), cluster)
    cluster.ctas[0].shadow, mine, cluster.memory.sites = clone, cluster.memory.sites, sites
    slow = full_outcome(lambda: races.check(warp, ANY_OP, clone, index, write, values), cluster)
    cluster.ctas[0].shadow, cluster.memory.sites = shadow, mine
    return fast, slow


@FAST
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_used_summary_keeps_strided_checks_exact(seed: int, host: bool) -> None:
    """`Shadow.used`, which lets a strided access (`check_strided`) skip reading the
    records of bytes no access touched: along a random sequence of strided loads and
    stores (overlapping, by a warp whose clock goes back and forth, so that some race),
    with now and then another kind of check, every strided access reports and records
    exactly as `check` of its bytes on a copy without the summary, and where the summary
    is valid, no grain it calls unused holds a record."""
    rng = np.random.default_rng(seed)
    cluster, warp = make_cluster(1)
    shadow = cluster.ctas[0].shadow
    shadow.host = host
    span = 4096
    for _ in range(10):
        warp.clock.vc[:] = rng.integers(1, 4, warp.clock.vc.size)
        if rng.random() < 0.1:  # another check: the summary goes stale
            index = rng.integers(0, span, int(rng.integers(1, 64))).astype(np.int64)
            if _error(lambda i=index: races.check(warp, ANY_OP, shadow, i, bool(rng.random() < 0.5))):
                return
            continue
        size = int(rng.choice([1, 4, 16, 64]))
        stride = size * int(rng.integers(1, 5)) + int(rng.choice([0, 0, 1]))
        lanes = min(int(rng.integers(1, 33)), (span - size) // stride + 1)
        first = int(rng.integers(0, span - (lanes - 1) * stride - size + 1))
        write = bool(rng.random() < 0.7)
        values = rng.integers(0, 256, (lanes, size)).astype(np.uint8) if write and rng.random() < 0.5 else None
        fast, slow = _strided_outcomes(cluster, warp, range(first, first + lanes * stride, stride), size, write, values)
        assert fast == slow
        if fast[0] is not None:
            return
        if shadow.used is not None and shadow.used_gen == shadow.gen:
            records = (shadow.write != 0) | (shadow.read != 0)
            if shadow.foreign is not None:
                records |= shadow.foreign != 0
            held = np.zeros(shadow.used.size, dtype=np.bool_)
            np.logical_or.at(held, np.flatnonzero(records) // GRAIN, True)
            assert not (held & ~shadow.used).any()


def pipeline_warps() -> tuple[Cluster, list[Warp]]:
    """One CTA: a producer warp (0), an MMA warp (1) and a third (2) that writes boxes
    too, seldom synchronising; clocks connected as a launch does."""
    layout = SharedLayout()
    layout.add("stages", 32768, 1024)
    cta = Cta(0, (0, 0, 0), layout)
    cluster = Cluster([cta], GlobalMemory(), 96)
    program = Program(ModuleOp([]), [])
    warps = [Warp(program, cluster, cta, w, Geometry((96, 1, 1))) for w in range(3)]
    connect(cluster, warps, FencePolicy.MOJO)
    return cluster, warps


STAGE_B = 16384
BOXES = [(0, 16384), (STAGE_B, STAGE_B + 8192), (0, 8192), (8192, 16384), (4096, 20480)]
"""Stage A (128 rows of 128 bytes), stage B (64 rows), A's halves, one straddling both."""
SITES = {name: ModuleOp([]) for name in ("tma", "mma", "st", "ld", "mma1", "mma2", "mma3")}


Event = Callable[[bool], None]
"""An access, as a function of `reference` (True: the per-byte checks the fast paths
shortcut)."""


def box_event(rng: np.random.Generator, cta: Cta, writer: Warp, box: tuple[int, int]) -> Event:
    """A TMA box over `box`, its bytes in a random order."""
    start, stop = box
    order = start + rng.permutation(stop - start).astype(np.int64)

    def event(reference: bool) -> None:
        if reference:
            races.check(writer, SITES["tma"], cta.shadow, order, write=True)
        else:
            races.check_span(writer, SITES["tma"], cta.shadow, box, lambda: order)

    return event


def mma_event(cta: Cta, mma: Warp, step: int) -> Event:
    """An MMA's A and B tiles (K-major, 128B swizzle): K step `step` (0..3) of the stages."""
    tiles = [
        (SmemDescriptor.decode(smem_desc(32 * step)), 128, 16, "f16", False),
        (SmemDescriptor.decode(smem_desc(STAGE_B + 32 * step)), 64, 16, "f16", False),
    ]

    site = SITES[f"mma{step}" if step else "mma"]  # (a k-block's MMAs are four ops: four read values)

    def event(reference: bool) -> None:
        if reference:
            for tile in tiles:
                races.check_operand(mma, site, cta, *tile)
        else:
            races.check_operands(mma, site, cta, tiles)

    return event


def pipeline_round(rng: np.random.Generator, cluster: Cluster, warps: list[Warp]) -> Iterator[Event]:
    """One k-block of a TMA / MMA pipeline, each of its synchronisations sometimes left out,
    sometimes a box of another range, by the wrong warp, or a store or load in between.
    Clock events (a synchronisation, a commit's completion) happen when the generator
    reaches them, for both runs."""
    cta = cluster.ctas[0]
    producer, mma, third = warps

    def maybe(p: float) -> bool:
        return bool(rng.random() < p)

    for box in (BOXES[0], BOXES[1]) if maybe(0.8) else (BOXES[int(rng.integers(0, len(BOXES)))],):
        writer = warps[int(rng.choice(3, p=[0.88, 0.04, 0.08]))]
        yield box_event(rng, cta, writer, box)
    if maybe(0.95):  # the full barrier
        mma.clock.acquire(producer.clock.release())
    if maybe(0.5):
        mma.clock.acquire(third.clock.release())
    for step in sorted(rng.choice(4, int(rng.integers(1, 5)), replace=False).tolist()):
        yield mma_event(cta, mma, step)
        if maybe(0.1):  # a store or a load of a few bytes by either warp
            warp, write = warps[int(rng.integers(0, 3))], maybe(0.5)
            index = int(rng.integers(0, STAGE_B + 8192 - 16)) + np.arange(int(rng.integers(1, 16)), dtype=np.int64)
            site = SITES["st" if write else "ld"]
            yield lambda _, w=warp, i=index, site=site, write=write: races.check(w, site, cta.shadow, i, write)
    if maybe(0.95):  # the commit completes
        comp = cluster.tc_base
        cluster.tc_count[0] += 1
        mma.clock.vc[comp] = max(int(mma.clock.vc[comp]), cluster.tc_count[0])
        if maybe(0.95):  # the producer's wait on the empty barrier
            producer.clock.vc[comp] = max(int(producer.clock.vc[comp]), cluster.tc_count[0])


def initialised_pipeline() -> tuple[Cluster, list[Warp]]:
    """`pipeline_warps`, shared memory initialised by two warps' stores, then a barrier."""
    cluster, warps = pipeline_warps()
    for warp in warps[:2]:
        index = np.arange(16384 * warp.index, 16384 * warp.index + 16384)
        races.check(warp, SITES["st"], cluster.ctas[0].shadow, index, True)
    clocks = [warp.clock.release() for warp in warps]
    for warp in warps:
        for clock in clocks:
            warp.clock.acquire(clock)
    return cluster, warps


@pytest.mark.parametrize("reference", [False, True])
def test_operand_summaries_see_a_partly_rewritten_stage(reference: bool) -> None:
    """Stage A's first quarter written by a box of a warp the MMA warp never synchronised
    with, then a box of the producer (which it did) over the rest of the stage and
    beyond: the MMA's A tile holds bytes of the first box, a data race (PTX memory model:
    the write and the tensor core's read are not ordered), whichever check runs."""
    rng = np.random.default_rng(0)
    cluster, (producer, mma, third) = initialised_pipeline()
    cta = cluster.ctas[0]
    for box in BOXES[:2]:  # stages A and B
        box_event(rng, cta, producer, box)(reference)
    mma.clock.acquire(producer.clock.release())
    mma_event(cta, mma, 0)(reference)
    cluster.tc_count[0] += 1  # its commit completes; the third warp observes it and the producer's box
    third.clock.vc[cluster.tc_base] = producer.clock.vc[cluster.tc_base] = cluster.tc_count[0]
    third.clock.acquire(producer.clock.release())
    box_event(rng, cta, third, (0, 4096))(reference)
    box_event(rng, cta, producer, (4096, 20480))(reference)
    mma.clock.acquire(producer.clock.release())
    with pytest.raises(Hazard) as report:
        mma_event(cta, mma, 1)(reference)
    assert report.value.kind == "smem-data-race"
    assert f"which builtin.module by {third.name} wrote" in str(report.value)


@FAST
@given(st.integers(0, 2**32 - 1))
def test_operand_summaries_are_the_per_byte_checks(seed: int) -> None:
    """The MMA operand check reads range summaries (`Spans`) where TMA boxes wrote its
    tiles: on random pipeline histories (boxes over a stage, a part of one or two, MMA
    operand reads, stores and loads that break the summaries, synchronisations, commit
    completions), after every event the same records and report as the per-byte
    checks: `check` of each box's bytes, `check_operand` of each tile."""
    rng = np.random.default_rng(seed)
    cluster, warps = initialised_pipeline()
    cta = cluster.ctas[0]
    fast, slow = cta.shadow, copy.deepcopy(cta.shadow)
    for _ in range(12):
        for event in pipeline_round(rng, cluster, warps):
            cta.shadow = fast
            got = kept_outcome(lambda e=event: e(False), cta)
            cta.shadow = slow
            expected = outcome(lambda e=event: e(True), cta)
            assert got[0] == expected[0]
            for mine, theirs in zip(got[1:3], expected[1:3], strict=True):
                np.testing.assert_array_equal(mine, theirs)
            assert got[3:] == expected[3:]
            if got[0] is not None:
                return


# ======================================================================================
# TMEM access checks: an MMA re-accumulating the cells of the previous one
# ======================================================================================

BAR = 64
"""The mbarrier the MMA warp's commits arrive on."""
D_TILES = [(0, 256), (0, 128), (128, 128), (256, 256)]
"""Accumulators (first column, columns) the MMAs write, over all 128 lanes."""


def tmem_machine() -> tuple[Cluster, list[Warp]]:
    """One CTA, an MMA warp (0) and an epilogue warp (1, lanes 32-63), 512 TMEM columns
    allocated (all unwritten), the commit barrier initialised."""
    layout = SharedLayout()
    layout.add("pad", BAR, 8)
    layout.add("bar", 8, 8)
    cta = Cta(0, (0, 0, 0), layout)
    cta.allocator.allocations[0] = 512
    cluster = Cluster([cta], GlobalMemory(), 64)
    cluster.keep_log = False
    program = Program(ModuleOp([]), [])
    warps = [Warp(program, cluster, cta, w, Geometry((64, 1, 1))) for w in range(2)]
    connect(cluster, warps, FencePolicy.MOJO)
    for warp in warps:
        warp.mask = np.arange(32) == 0
    N.mbarrier_init(warps[0], BAR, 1)
    cta.mbarriers[BAR].init_fence = (warps[0].clock.generic, int(warps[0].clock.vc[warps[0].clock.generic]))
    warps[1].clock.acquire(warps[0].clock.release())
    for warp in warps:
        warp.mask = warp.live
    return cluster, warps


TmemEvent = Callable[[Cluster, list[Warp]], None]


def tmem_mma_event(first: int, columns: int, accumulate: bool) -> TmemEvent:
    """An MMA of the MMA warp's lane 0 into all 128 lanes of columns `first`.. (`columns`)."""

    def event(cluster: Cluster, warps: list[Warp]) -> None:
        warp = warps[0]
        warp.mask = np.arange(32) == 0
        cells = ((1 << 128) - 1, ((1 << columns) - 1) << first)
        N.issue_pipe(warp, SITES["mma"], warp.cta, 0, (0, 128), (first, first + columns), cells, accumulate)
        warp.mask = warp.live

    return event


def commit_event(observe: bool) -> TmemEvent:
    """The MMA warp's commit, completed; `observe`: the epilogue waits for it."""

    def event(cluster: Cluster, warps: list[Warp]) -> None:
        warp = warps[0]
        warp.mask = np.arange(32) == 0
        N.tcgen05_commit(warp, SITES["mma"], BAR, None, 1)
        warp.mask = warp.live
        cta = warp.cta
        cta.mbarriers[BAR].pending = 1
        cluster.complete_commit(cta)
        if observe:  # the epilogue's wait on the accumulator barrier
            bar = cta.mbarriers[BAR]
            warps[1].clock.acquire(bar.history[bar.completed - 1])
            warps[1].acquires += 1

    return event


def ld_st_event(column: int, load: bool) -> TmemEvent:
    """A tcgen05.ld (or st) 32x32b.x32 of the epilogue warp at `column`."""

    def event(cluster: Cluster, warps: list[Warp]) -> None:
        plan = ldst_plan(Tcgen05LdStShape.SHAPE_32X32B, 32)
        if load:
            N.tmem_ld(warps[1], SITES["ld"], 32 << 16 | column, plan)
        else:
            N.tmem_st(warps[1], SITES["st"], 32 << 16 | column, np.zeros((32, 32), np.uint32), plan)

    return event


def tmem_events(rng: np.random.Generator, rounds: int) -> list[TmemEvent]:
    """A random history of one accumulator pipeline, tile by tile: MMAs into a tile (the
    first overwriting it), the commit completing, the epilogue observing it, loading
    part of its lane quarter (1) and waiting, the MMA warp learning of that (the empty
    barrier); each step sometimes left out or changed (another tile, a store)."""
    events: list[TmemEvent] = []

    def maybe(p: float) -> bool:
        return bool(rng.random() < p)

    for _ in range(rounds):
        first, columns = D_TILES[int(rng.integers(0, len(D_TILES)))]
        for k in range(int(rng.integers(1, 6))):
            events.append(tmem_mma_event(first, columns, k > 0 or maybe(0.1)))
        if maybe(0.9):
            events.append(commit_event(maybe(0.9)))
        for _ in range(int(rng.integers(0, 3))):
            column = first + 32 * int(rng.integers(0, columns // 32))
            events.append(ld_st_event(column, maybe(0.85)))
        if maybe(0.9):
            events.append(lambda cluster, warps: N.tmem_wait(warps[1], "ld"))
        if maybe(0.2):
            events.append(lambda cluster, warps: N.tmem_wait(warps[1], "st"))
        if maybe(0.9):
            events.append(lambda cluster, warps: warps[0].clock.acquire(warps[1].clock.release()))
    return events


def tmem_state(cluster: Cluster) -> tuple[Any, ...]:
    cta = cluster.ctas[0]
    live = [[(r.kind, r.lane_set, r.column_set, r.writes, r.accumulates, r.epoch) for r in b] for b in cta.tmem_live]
    return cta.tmem_written.copy(), cta.tmem_reader.copy(), cta.tmem_read_sync.copy(), live


@FAST
@given(st.integers(0, 2**32 - 1))
def test_repeated_accumulation_is_the_full_check(seed: int) -> None:
    """`hazards.check_access` skips the cell checks (uninitialised, stale accumulator) of an
    MMA re-accumulating exactly the cells of the live MMA before it: on random histories
    of MMAs into a few accumulators, commits, epilogue loads, stores and waits, the same
    report and TMEM bookkeeping as the full check after every event."""
    rng = np.random.default_rng(seed)
    events = tmem_events(rng, 8)
    full = hazards.overlapping

    def never_repeat(cta: Cta, record: AsyncOp, knowledge: NDArray[np.int64]) -> tuple[Any, ...]:
        superseded, conflict, _ = full(cta, record, knowledge)
        return superseded, conflict, False

    fast, slow = tmem_machine(), tmem_machine()
    for event in events:
        outcomes: list[tuple[tuple[str, str] | None, tuple[Any, ...]]] = []
        for machine, check in ((fast, full), (slow, never_repeat)):
            hazards.overlapping = check
            try:
                event(*machine)
                error = None
            except Hazard as e:
                error = (e.kind, str(e))
            finally:
                hazards.overlapping = full
            outcomes.append((error, tmem_state(machine[0])))
        if same_outcome(outcomes):
            return


def same_outcome(outcomes: Sequence[tuple[tuple[str, str] | None, tuple[Any, ...]]]) -> bool:
    """Assert the two machines' (error, `tmem_state`) agree; whether the events end here
    (an error was raised)."""
    (got_error, got), (expected_error, expected) = outcomes
    assert got_error == expected_error
    for mine, theirs in zip(got[:3], expected[:3], strict=True):
        np.testing.assert_array_equal(mine, theirs)
    assert got[3] == expected[3]
    return got_error is not None


def half_ld_event(column: int, lane: int) -> TmemEvent:
    """A tcgen05.ld 16x256b.x4 of the epilogue warp at lane `lane` (32 or 48) and `column`."""

    def event(cluster: Cluster, warps: list[Warp]) -> None:
        N.tmem_ld(warps[1], SITES["ld"], lane << 16 | column, ldst_plan(Tcgen05LdStShape.SHAPE_16X256B, 16))

    return event


def dealloc_event(first: int, columns: int) -> TmemEvent:
    """The columns' dealloc by the MMA warp (its check and the cells' flags), after the
    epilogue's waits, a completed commit and the MMA warp learning of both."""
    commit = commit_event(False)

    def event(cluster: Cluster, warps: list[Warp]) -> None:
        N.tmem_wait(warps[1], "ld")
        N.tmem_wait(warps[1], "st")
        commit(cluster, warps)
        cta = warps[0].cta
        bar = cta.mbarriers[BAR]
        warps[0].clock.acquire(bar.history[bar.completed - 1])
        warps[0].clock.acquire(warps[1].clock.release())
        hazards.check_dealloc(warps[0], cta, (first, first + columns))

    return event


@FAST
@given(st.integers(0, 2**32 - 1))
def test_tmem_flag_summaries_are_the_full_check(seed: int) -> None:
    """`Cta.tmem_full` and `Cta.tmem_read_columns`, which let the uninitialised and the
    stale-accumulator checks read no cell flag: on random accumulator pipelines (MMAs,
    commits, loads of whole and half lane quarters, re-reads after a wait, stores,
    deallocs), the same report and TMEM bookkeeping as on a machine whose summaries
    tell nothing (reset before every event), so that every check reads the flags."""
    rng = np.random.default_rng(seed)
    events = tmem_events(rng, 6)
    for _ in range(int(rng.integers(1, 12))):
        first, columns = D_TILES[int(rng.integers(0, len(D_TILES)))]
        column = first + 16 * int(rng.integers(0, columns // 16 - 3))
        extra = [half_ld_event(column, 32 + 16 * int(rng.integers(0, 2)))]
        if rng.random() < 0.2:  # a dealloc, and sometimes a load of the freed columns
            extra = [dealloc_event(first, columns), *extra[: int(rng.integers(0, 2))]]
        at = int(rng.integers(0, len(events) + 1))
        events[at:at] = extra
    fast, slow = tmem_machine(), tmem_machine()
    for event in events:
        slow[0].ctas[0].tmem_full = 0
        slow[0].ctas[0].tmem_read_columns = {key: -1 for key in range(2 * hazards.READ_BLOCKS)}
        outcomes = [(_error(lambda m=machine, e=event: e(*m)), tmem_state(machine[0])) for machine in (fast, slow)]
        if same_outcome(outcomes):
            return


def test_refilled_boxes_read_no_records(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean pipeline (every synchronisation made, four MMA sites per k-block): from the
    second round on, each box refills a range its summary knows (`races._refill`), and the
    records after every event are the per-byte checks'. Then the two hazards a refill must
    still see: a box of the producer before it observed the commit of the MMAs that read
    the stage (the tensor core's read is not ordered before the write), and a box of a
    warp that knows nothing of the previous box (write after write)."""
    refills: list[bool] = []
    shortcut = races._refill  # pyright: ignore[reportPrivateUsage]

    def counted(vc: NDArray[np.int64], shadow: Any, span: tuple[int, int]) -> int | None:
        found = shortcut(vc, shadow, span)
        refills.append(found is not None)
        return found

    monkeypatch.setattr(races, "_refill", counted)
    rng = np.random.default_rng(1)
    cluster, (producer, mma, third) = initialised_pipeline()
    cta = cluster.ctas[0]
    fast, slow = cta.shadow, copy.deepcopy(cta.shadow)

    def both(event: Event) -> tuple[Any, ...]:
        cta.shadow = fast
        got = kept_outcome(lambda: event(False), cta)
        cta.shadow = slow
        expected = outcome(lambda: event(True), cta)
        assert got[0] == expected[0]
        for mine, theirs in zip(got[1:3], expected[1:3], strict=True):
            np.testing.assert_array_equal(mine, theirs)
        assert got[3:] == expected[3:]
        return got

    def commit(observed: bool) -> None:
        comp = cluster.tc_base
        cluster.tc_count[0] += 1
        mma.clock.vc[comp] = max(int(mma.clock.vc[comp]), cluster.tc_count[0])
        if observed:
            producer.clock.vc[comp] = max(int(producer.clock.vc[comp]), cluster.tc_count[0])

    for _ in range(4):
        for box in BOXES[:2]:
            assert both(box_event(rng, cta, producer, box))[0] is None
        mma.clock.acquire(producer.clock.release())
        for step in range(4):
            assert both(mma_event(cta, mma, step))[0] is None
        commit(observed=True)
    assert refills[:2] == [False, False], refills
    assert all(refills[2:]), refills
    assert set(fast.fills) == set(BOXES[:2])  # the refills wrote no record (`Shadow.fills`)
    for step in range(4):
        both(mma_event(cta, mma, step))
    commit(observed=False)  # the producer did not wait on the empty barrier
    report = both(box_event(rng, cta, producer, BOXES[0]))[0]
    assert report is not None
    assert report[0] == "smem-data-race"
    assert "the tensor core of CTA 0" in report[1]
    cluster, (producer, mma, third) = initialised_pipeline()
    cta = cluster.ctas[0]
    fast, slow = cta.shadow, copy.deepcopy(cta.shadow)
    for box in BOXES[:2]:
        both(box_event(rng, cta, producer, box))
    report = both(box_event(rng, cta, third, BOXES[0]))[0]  # knows nothing of the producer's box
    assert report is not None
    assert report[0] == "smem-data-race"
    assert f"by {producer.name} wrote" in report[1]


def test_box_records_of_a_copied_shadow_stay_its_own() -> None:
    """A box over bytes a copy of the shadow shares (exploration copies machine states):
    the copy keeps the records it had (`write` and `prev`), whether the box's records are
    written at once or kept as a fill (`Shadow.fills`) and written later, and both then
    hold what the per-byte check leaves."""
    cluster, (producer, mma, _) = initialised_pipeline()
    cta = cluster.ctas[0]
    rng = np.random.default_rng(3)
    box_event(rng, cta, producer, BOXES[0])(False)  # a box over the stores' bytes: `prev` made
    for read in (True, False):  # a box after the tensor core's recorded read, then a refill (a fill)
        mma.clock.acquire(producer.clock.release())
        if read:
            mma_event(cta, mma, 0)(False)
            cluster.tc_count[0] += 1  # the commit completes, the producer observes it
            producer.clock.vc[cluster.tc_base] = cluster.tc_count[0]
        before = cta.shadow
        clone = before.copy()
        records = before.write.copy(), before.read.copy(), np.array(before.prev)  # (`read` records the read)
        reference = copy.deepcopy(before)
        box_event(rng, cta, producer, BOXES[0])(False)
        assert bool(before.fills) != read
        cta.shadow = reference
        box_event(rng, cta, producer, BOXES[0])(True)
        cta.shadow = before
        for mine, theirs in zip((clone.write, clone.read, clone.prev), records, strict=True):
            np.testing.assert_array_equal(mine, theirs)
        for mine, theirs in zip((before.write, before.read, before.prev), (reference.write, reference.read,
                                                                          reference.prev), strict=True):  # fmt: skip
            np.testing.assert_array_equal(mine, theirs)


def test_fills_are_written_before_any_record_is_read() -> None:
    """`Shadow.fills`: each box's range holds its write and `prev` what it replaced, once
    any of `write`, `prev`, `own_write` is looked at; a fill of the same range
    supersedes the pending one, an overlapping one writes the pending ones first."""
    from xdsl_tmem.interpreter.shadow import Shadow

    shadow = Shadow(64, 0, host=False)
    shadow.write[:] = 5 << SITE_SHIFT
    shadow.defer_fill(0, 16, 6 << SITE_SHIFT, 5 << SITE_SHIFT)
    shadow.defer_fill(0, 16, 7 << SITE_SHIFT, 6 << SITE_SHIFT)  # superseded: one fill
    shadow.defer_fill(32, 48, 8 << SITE_SHIFT, None)  # (bytes that held no write: `prev` kept)
    assert len(shadow.fills) == 2
    shadow.defer_fill(8, 40, 9 << SITE_SHIFT, None)  # overlaps both: they are written first
    assert list(shadow.fills) == [(8, 40)]
    expected_write = np.full(64, 5 << SITE_SHIFT)
    expected_write[:16], expected_write[32:48], expected_write[8:40] = 7 << SITE_SHIFT, 8 << SITE_SHIFT, 9 << SITE_SHIFT
    expected_prev = np.zeros(64, dtype=np.int64)
    expected_prev[:16] = 6 << SITE_SHIFT
    assert shadow.fills  # (still pending: `prev` was written by the first two fills only)
    np.testing.assert_array_equal(shadow.prev, expected_prev)
    assert not shadow.fills
    np.testing.assert_array_equal(shadow.write, expected_write)


@FAST
@given(st.integers(0, 2**32 - 1))
def test_new_cluster_over_touched_pages_is_the_whole_conversion(seed: int) -> None:
    """`races.new_cluster` converts only the pages the ending cluster touched (strided
    stores mark each lane's pages): the same records as converting the whole buffer, on
    random histories (earlier clusters' records anywhere, this cluster's where it
    touched; several writers, what writes replaced, concurrent readers, foreign reads)."""
    rng = np.random.default_rng(seed)
    memory = GlobalMemory()
    size = int(rng.integers(1, 12)) * 1000 + int(rng.integers(0, 1024))
    memory.add("c", np.zeros(size, np.uint8))
    _, warp = make_cluster(1)
    shadow = memory.buffers[0].shadow
    old_write, old_read = history(rng, warp, size, 3)
    shadow.write[:] = races._as_foreign(old_write)  # pyright: ignore[reportPrivateUsage]
    shadow.foreign = races._as_foreign(old_read)  # pyright: ignore[reportPrivateUsage]
    shadow.prev = races._as_foreign(history(rng, warp, size, 3)[0])  # pyright: ignore[reportPrivateUsage]
    for _ in range(int(rng.integers(0, 6))):  # accesses of this cluster: a range, or a warp's strided lanes
        if rng.random() < 0.5:
            lo = int(rng.integers(0, size))
            hi = min(size, lo + int(rng.integers(1, 3000)))
            index = np.arange(lo, hi, dtype=np.int64)
            shadow.touch(lo, hi)
        else:
            width = int(rng.integers(1, 300))
            stride = int(rng.integers(width, 3000))
            lanes = int(rng.integers(1, 33))
            lanes = max(1, min(lanes, (size - width) // stride + 1)) if size > width else 0
            if not lanes:
                continue
            first = int(rng.integers(0, size - (lanes - 1) * stride - width + 1))
            index = (np.arange(first, first + lanes * stride, stride)[:, None] + np.arange(width)).reshape(-1)
            shadow.touch_strided(first, lanes, stride, width)
        write, read = history(rng, warp, index.size, 3)
        shadow.write[index] = np.where(write > 0, write, shadow.write[index])
        shadow.read[index] = read
        for byte in rng.choice(index, min(3, index.size), replace=False).tolist():
            match int(rng.integers(0, 3)):
                case 0:
                    shadow.read[byte], shadow.readers[byte] = SHARED, [(5 << SITE_SHIFT) | 3, (6 << SITE_SHIFT) | 1]
                case 1:
                    shadow.write[byte], shadow.writers[byte] = SHARED, Writers([(5 << SITE_SHIFT) | 2], (3,))
                case _:
                    shadow.prev[byte], shadow.displaced[byte] = SHARED, [(7 << SITE_SHIFT) | 4]
    whole = copy.deepcopy(memory)
    whole.buffers[0].shadow.touched = None
    whole.buffers[0].shadow.touch(0, size)
    races.new_cluster(memory)
    races.new_cluster(whole)
    mine, theirs = shadow, whole.buffers[0].shadow
    for name in ("write", "read", "prev", "foreign"):
        np.testing.assert_array_equal(getattr(mine, name), getattr(theirs, name), err_msg=name)
    assert mine.readers == theirs.readers
    assert mine.writers == theirs.writers
    assert mine.displaced == theirs.displaced
    assert not np.flatnonzero(shadow.touched if shadow.touched is not None else []).size


# ======================================================================================
# Deferred accumulation (tcgen05.DeferredProduct)
# ======================================================================================


def _k_loop(
    cluster: Cluster, warp: Warp, rng: np.random.Generator, steps: int, after: Callable[[int], None] | None = None
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """`steps` f16 MMAs 128x256x16 into D at column 0, the first overwriting; shared memory
    rewritten after each (the MMA must have read it at issue). The exact f64 product and
    the sum of |A|·|B|ᵀ (for the f32 summation bound)."""
    cta = cluster.ctas[0]
    idesc = 1 << 4 | (256 >> 3) << 17 | (128 >> 4) << 24
    exact = np.zeros((128, 256))
    magnitude = np.zeros((128, 256))
    for step in range(steps):
        cta.smem[:] = rng.standard_normal(32768).astype(np.float16).view(np.uint8)
        a = reference_operand(cta.smem, SmemDescriptor.decode(smem_desc(0)), 128, 16, "f16", False)
        b = reference_operand(cta.smem, SmemDescriptor.decode(smem_desc(16384)), 256, 16, "f16", False)
        exact += a.astype(np.float64) @ b.astype(np.float64).T
        magnitude += np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)).T
        tcgen05_mma(warp, ANY_OP, "f16", 1, MmaOperands(0, smem_desc(0), smem_desc(16384), idesc, int(step > 0)))
        if after is not None:
            after(step)
    return exact, magnitude


def _within_f32_bound(
    got: NDArray[np.uint32], exact: NDArray[np.float64], magnitude: NDArray[np.float64], k: int
) -> None:
    """Higham §4.2: |fl(sum) - sum| <= (k-1)u / (1 - (k-1)u) · sum |a||b|, any order."""
    u = 2.0**-24
    bound = (k - 1) * u / (1 - (k - 1) * u) * magnitude
    assert np.all(np.abs(got.view(np.float32).astype(np.float64) - exact) <= bound)


def test_a_deferred_k_loop_is_the_product_within_the_f32_bound() -> None:
    """A K loop longer than DEFERRED_K (two runs: the second accumulates onto the first's
    D), operands rewritten after each issue: D read at the end is A·Bᵀ within the f32
    summation bound of numpy's f64 product."""
    cluster, warp = make_cluster(1)
    steps = DEFERRED_K // 16 + 6
    exact, magnitude = _k_loop(cluster, warp, np.random.default_rng(3), steps)
    assert cluster.ctas[0].deferred is not None  # not computed before D is read
    _within_f32_bound(cluster.ctas[0].tmem[:, :256], exact, magnitude, 16 * steps)
    assert cluster.ctas[0].deferred is None


def test_a_read_between_mmas_sees_the_accumulated_value() -> None:
    """A TMEM access overlapping D (what tcgen05.ld, st, cp, dealloc and A-from-TMEM use:
    `Cta.tmem_cells`) computes the pending product first; one elsewhere leaves it pending."""
    cluster, warp = make_cluster(1)
    cta = cluster.ctas[0]
    seen: list[NDArray[np.uint32]] = []

    def read(step: int) -> None:
        if step == 4:
            cta.tmem_cells((0, 128), (256, 288))  # beyond D: the run goes on
            assert cta.deferred is not None
            seen.append(cta.tmem_cells((32, 64), (0, 32))[32:64, :256].copy())
            assert cta.deferred is None

    rng = np.random.default_rng(4)
    exact, magnitude = _k_loop(cluster, warp, rng, 5, read)
    _within_f32_bound(seen[0], exact[32:64], magnitude[32:64], 16 * 5)
    more, more_magnitude = _k_loop_tail(cluster, warp, rng)  # accumulates onto the D read
    _within_f32_bound(cta.tmem[:, :256], exact + more, magnitude + more_magnitude, 16 * 6)


def _k_loop_tail(cluster: Cluster, warp: Warp, rng: np.random.Generator) -> tuple[NDArray[np.float64], ...]:
    """One accumulating MMA more (as `_k_loop`'s)."""
    cta = cluster.ctas[0]
    cta.smem[:] = rng.standard_normal(32768).astype(np.float16).view(np.uint8)
    a = reference_operand(cta.smem, SmemDescriptor.decode(smem_desc(0)), 128, 16, "f16", False).astype(np.float64)
    b = reference_operand(cta.smem, SmemDescriptor.decode(smem_desc(16384)), 256, 16, "f16", False).astype(np.float64)
    idesc = 1 << 4 | (256 >> 3) << 17 | (128 >> 4) << 24
    tcgen05_mma(warp, ANY_OP, "f16", 1, MmaOperands(0, smem_desc(0), smem_desc(16384), idesc, 1))
    return a @ b.T, np.abs(a) @ np.abs(b).T


def test_a_state_copy_does_not_change_the_grouping() -> None:
    """An exploration copies states mid-run (`Cta.copy`): the copy carries the pending run,
    so the original and the copy, going on alike, end with the same bits as a run never
    copied (the outputs of two schedules are compared bit for bit)."""
    results: list[NDArray[np.uint32]] = []
    copies: list[Cta] = []
    for copy_at in (None, 3):
        cluster, warp = make_cluster(1)

        def fork(step: int, at: int | None = copy_at, cl: Cluster = cluster) -> None:
            if step == at:
                copies.append(cl.ctas[0].copy(Memo()))

        _k_loop(cluster, warp, np.random.default_rng(5), 8, fork)
        results.append(cluster.ctas[0].tmem.copy())
    np.testing.assert_array_equal(results[0], results[1])
    (clone,) = copies  # holds the first 4 MMAs' run, as a run of 4 MMAs ends
    assert clone.deferred is not None
    assert clone.deferred.k == 4 * 16
    cluster, warp = make_cluster(1)
    _k_loop(cluster, warp, np.random.default_rng(5), 4)
    np.testing.assert_array_equal(clone.tmem, cluster.ctas[0].tmem)


def test_a_run_after_a_settled_one_is_as_a_first_run() -> None:
    """A run that starts after another was computed reuses its operand buffer: it holds the
    bits of its own MMAs only (the same D as the same MMAs in a fresh machine), a state copy
    of it does not share the buffer, and its memory is counted as a run's that grew from
    256 columns of K (what `data_bytes` reads)."""
    cluster, warp = make_cluster(1)
    cta = cluster.ctas[0]
    _k_loop(cluster, warp, np.random.default_rng(6), 20)
    assert cta.deferred is not None
    assert cta.deferred.nbytes == (128 + 256) * 512 * 2  # 320 of K: grown once
    cta.settle()
    copies: list[Cta] = []
    _k_loop(
        cluster, warp, np.random.default_rng(7), 3, lambda step: copies.append(cta.copy(Memo())) if step == 1 else None
    )
    assert cta.deferred is not None
    assert cta.deferred.nbytes == (128 + 256) * 256 * 2
    fresh, fresh_warp = make_cluster(1)
    _k_loop(fresh, fresh_warp, np.random.default_rng(7), 3)
    np.testing.assert_array_equal(cta.tmem, fresh.ctas[0].tmem)
    (clone,) = copies
    _k_loop(cluster, warp, np.random.default_rng(8), 2)  # the original's next run: the clone's bits stay
    shorter, shorter_warp = make_cluster(1)
    _k_loop(shorter, shorter_warp, np.random.default_rng(7), 2)
    np.testing.assert_array_equal(clone.tmem, shorter.ctas[0].tmem)
