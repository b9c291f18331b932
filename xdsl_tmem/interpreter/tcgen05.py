"""tcgen05 data layouts, descriptors and MMA numerics.

Sources (docs/tcgen05_layouts.md has the full notes and the confidence of each fact):

* [TVM] https://tvm.apache.org/docs/tirx/tile_ops/tcgen05_ld_st.html, table "Native
  images" - which register of which lane holds which TMEM cell for each tcgen05.ld/st
  shape; cross-checked against CUTLASS `cute/atom/copy_traits_sm100.hpp`
  (`Copy_Traits<SM100_TMEM_LOAD_*>`).
* [CUTLASS-desc] CUTLASS `cute/arch/mma_sm100_desc.hpp` (`UMMA::InstrDescriptor`,
  `UMMA::SmemDescriptor`, `LayoutType`) and PTX ISA 9.1 §9.7.16.4 (descriptors).
* [CUTLASS-mma] CUTLASS `cute/atom/mma_traits_sm100.hpp`: canonical shared-memory
  layouts per swizzle mode (`make_umma_desc`), the accumulator TMEM layouts
  (`UMMA::tmem_frg`) and the 2-CTA operand split (`MMA_Traits<SM100_MMA_*_2x1SM_SS>`).
* PTX ISA 9.1 §9.7.16.10.5, data-path layouts A, B, D, F.

Nothing here has run on a Blackwell GPU; facts marked [U] below are inferred, not
documented, and are refused or flagged rather than guessed where numbers would change.
"""

from __future__ import annotations

import copy as _copy
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from xdsl_tmem.dialects.nvvm import Tcgen05LdStShape

# --------------------------------------------------------------------------------------
# tcgen05.ld / st register maps [TVM]
# --------------------------------------------------------------------------------------

# The shapes, their lanes and registers per `.x1` are `nvvm.Tcgen05LdStShape`'s; this
# module adds only which register of which thread holds which cell.


@cache
def ldst_map(
    shape: Tcgen05LdStShape, registers: int, split: int = 0, pack: bool = False
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """(rows, columns) of shape (32, registers): TMEM cell of register r of lane l,
    relative to the address. With `pack`, the column is that of the low 16-bit half
    (the high half is the next column) and every column coordinate doubles."""
    lane = np.arange(32)[:, None]
    r = np.arange(registers)[None, :]
    match shape:
        case Tcgen05LdStShape.SHAPE_32X32B:
            rows, cols = lane + 0 * r, r + 0 * lane
        case Tcgen05LdStShape.SHAPE_16X64B:
            rows, cols = lane // 4 + 8 * (lane % 2) + 0 * r, (lane // 2) % 2 + 2 * r
        case Tcgen05LdStShape.SHAPE_16X128B:
            rows, cols = lane // 4 + 8 * (r % 2), lane % 4 + 4 * (r // 2)
        case Tcgen05LdStShape.SHAPE_16X256B:
            rows, cols = lane // 4 + 8 * ((r // 2) % 2), r % 2 + 2 * (lane % 4) + 8 * (r // 4)
        case Tcgen05LdStShape.SHAPE_16X32BX2:  # lanes 16-31 read the same 16 TMEM lanes `split` columns further
            rows = lane % 16 + 0 * r
            cols = (2 * r if pack else r) + (lane // 16) * split
            return rows, cols
    return rows, (2 * cols if pack else cols)


@dataclass(frozen=True)
class LdStPlan:
    """One tcgen05.ld / st form: its footprint and register map."""

    shape: Tcgen05LdStShape
    registers: int
    pack: bool
    rows: int
    """TMEM lanes touched from the address's lane."""
    columns: int
    """TMEM columns touched from the address's column."""
    flat: NDArray[np.int64]
    """(32, registers) offsets of each register's (low) cell in the flattened
    (lanes x 512 columns) TMEM, from the address."""
    lane_set: int
    """The exact TMEM lanes touched, relative to the address's lane, as a bit set."""
    column_set: int
    """The exact TMEM columns touched, relative to the address's column, as a bit set
    (16x32bx2 touches two pieces `split` columns apart, not the columns between them)."""


def bit_set(values: NDArray[np.int64]) -> int:
    bits = 0
    for value in np.unique(values):
        bits |= 1 << int(value)
    return bits


@cache
def ldst_plan(shape: Tcgen05LdStShape | str, registers: int, split: int = 0, pack: bool = False) -> LdStPlan:
    shape = Tcgen05LdStShape(shape)
    rows, cols = ldst_map(shape, registers, split, pack)
    touched = np.concatenate([cols.reshape(-1), (cols + 1).reshape(-1)]) if pack else cols
    return LdStPlan(
        shape,
        registers,
        pack,
        shape.lanes,
        int(cols.max()) + (2 if pack else 1),
        rows * 512 + cols,
        bit_set(rows),
        bit_set(touched),
    )


# --------------------------------------------------------------------------------------
# Instruction descriptor [CUTLASS-desc]
# --------------------------------------------------------------------------------------

KIND_FORMATS: dict[str, dict[int, str]] = {
    "f16": {0: "f16", 1: "bf16"},
    "tf32": {2: "tf32"},
    "f8f6f4": {0: "e4m3", 1: "e5m2", 3: "e2m3", 4: "e3m2", 5: "e2m1"},
    "i8": {0: "u8", 1: "s8"},
}
D_FORMATS = {0: "f16", 1: "f32", 2: "s32"}
K_PER_MMA = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32}
ELEMENT_BYTES = {"f16": 2, "bf16": 2, "tf32": 4, "e4m3": 1, "e5m2": 1, "u8": 1, "s8": 1, "b32": 4}
"""Bytes per element of each operand format; `b32` is the untyped 32-bit word that
`tcgen05.cp` copies (the bits go to TMEM unchanged, one word per column)."""


class DescriptorError(ValueError):
    pass


@dataclass(frozen=True)
class InstrDescriptor:
    m: int
    n: int
    d_format: str
    a_format: str
    b_format: str
    negate_a: bool
    negate_b: bool
    a_mn_major: bool
    b_mn_major: bool
    saturate: bool

    @staticmethod
    def decode(value: int, kind: str, cta_group: int) -> InstrDescriptor:
        """`decode_checked`, cached: a kernel's MMAs use a few descriptors (a refused
        one raises again each time: exceptions are not cached)."""
        return _decode_instr(value, kind, cta_group)

    @staticmethod
    def decode_checked(value: int, kind: str, cta_group: int) -> InstrDescriptor:
        """Decode and check an instruction descriptor for `kind` (bit table in docs/ptx-nvvm.md §1.7)."""
        if value & 0b111:
            raise DescriptorError(f"instruction descriptor 0x{value:08x}: sparsity (bits 0-2) is not supported")
        d_code = (value >> 4) & 0b11
        a_code, b_code = (value >> 7) & 0b111, (value >> 10) & 0b111
        n = ((value >> 17) & 0x3F) << 3
        m = ((value >> 24) & 0x1F) << 4
        formats = KIND_FORMATS[kind]
        if a_code not in formats or b_code not in formats:
            raise DescriptorError(
                f"instruction descriptor 0x{value:08x}: A/B format codes {a_code}/{b_code} are not valid for "
                f"kind::{kind} (valid: {', '.join(f'{c}={f}' for c, f in formats.items())})"
            )
        allowed_d = {"f16": (0, 1), "tf32": (1,), "f8f6f4": (0, 1), "i8": (2,)}[kind]
        if d_code not in allowed_d:
            raise DescriptorError(
                f"instruction descriptor 0x{value:08x}: D format {D_FORMATS.get(d_code, d_code)} is not valid for "
                f"kind::{kind} (valid: {', '.join(D_FORMATS[c] for c in allowed_d)})"
            )
        valid_m = (64, 128) if cta_group == 1 else (128, 256)
        if m not in valid_m:
            raise DescriptorError(
                f"instruction descriptor 0x{value:08x}: M = {m} is not valid for cta_group::{cta_group} "
                f"(valid: {', '.join(map(str, valid_m))})"
            )
        n_step = 8 if m == 64 else 16
        if not (n_step <= n <= 256 and n % n_step == 0):
            raise DescriptorError(
                f"instruction descriptor 0x{value:08x}: N = {n} must be a multiple of {n_step} in [{n_step}, 256] "
                f"for M = {m}"
            )
        a_format, b_format = formats[a_code], formats[b_code]
        if kind == "f8f6f4" and not {a_format, b_format} <= {"e4m3", "e5m2"}:
            raise DescriptorError(
                f"instruction descriptor 0x{value:08x}: {a_format}/{b_format} operands are not modelled: the bit "
                "position of 6- and 4-bit values in their one-byte shared-memory slots is not documented"
            )
        negate_a, negate_b = bool(value >> 13 & 1), bool(value >> 14 & 1)
        if kind == "i8" and (negate_a or negate_b):
            raise DescriptorError(f"instruction descriptor 0x{value:08x}: negate bits are not valid for kind::i8")
        return InstrDescriptor(
            m=m,
            n=n,
            d_format=D_FORMATS[d_code],
            a_format=a_format,
            b_format=b_format,
            negate_a=negate_a,
            negate_b=negate_b,
            a_mn_major=bool(value >> 15 & 1),
            b_mn_major=bool(value >> 16 & 1),
            saturate=bool(value >> 3 & 1),
        )


# --------------------------------------------------------------------------------------
# Shared-memory matrix descriptor [CUTLASS-desc], [CUTLASS-mma]
# --------------------------------------------------------------------------------------

SWIZZLE_BYTES = {0: 0, 2: 128, 4: 64, 6: 32}
SWIZZLE_NAMES = {0: "none", 1: "128B-base32B", 2: "128B", 4: "64B", 6: "32B"}


@dataclass(frozen=True)
class SmemDescriptor:
    start: int
    lbo: int
    sbo: int
    base_offset: int
    lbo_mode: int
    swizzle: int

    @staticmethod
    def decode(value: int) -> SmemDescriptor:
        """`decode_checked`, cached (as `InstrDescriptor.decode`)."""
        return _decode_smem(value & ((1 << 64) - 1))

    @staticmethod
    def decode_checked(value: int) -> SmemDescriptor:
        value &= (1 << 64) - 1
        if (value >> 46) & 0b111 != 0b001:
            raise DescriptorError(
                f"shared-memory descriptor 0x{value:016x}: bits 46-48 must be 0b001 (the SM100 descriptor version), "
                f"got 0b{(value >> 46) & 0b111:03b}"
            )
        desc = SmemDescriptor(
            start=(value & 0x3FFF) << 4,
            lbo=((value >> 16) & 0x3FFF) << 4,
            sbo=((value >> 32) & 0x3FFF) << 4,
            base_offset=(value >> 49) & 0b111,
            lbo_mode=(value >> 52) & 1,
            swizzle=(value >> 61) & 0b111,
        )
        if desc.swizzle not in SWIZZLE_BYTES:
            name = SWIZZLE_NAMES.get(desc.swizzle, f"code {desc.swizzle}")
            raise DescriptorError(f"shared-memory descriptor 0x{value:016x}: swizzle {name} is not supported")
        if desc.base_offset or desc.lbo_mode:
            # [U] their effect is not documented in the sources we have; refuse rather than guess.
            raise DescriptorError(
                f"shared-memory descriptor 0x{value:016x}: a non-zero base offset or LBO mode is not modelled"
            )
        return desc


_decode_instr = lru_cache(maxsize=256)(InstrDescriptor.decode_checked)
_decode_smem = lru_cache(maxsize=1024)(SmemDescriptor.decode_checked)


def swizzle(address: NDArray[np.int64], width: int) -> NDArray[np.int64]:
    """CuTe `Swizzle<B,4,3>` on the absolute byte address: the 16-byte chunk index
    (bits 4..) XOR bits 7.. (B = 3, 2, 1 for 128, 64, 32 bytes)."""
    if width == 0:
        return address
    bits = {128: 0b111, 64: 0b11, 32: 0b1}[width]
    return address ^ (((address >> 7) & bits) << 4)


@cache
def operand_addresses(desc: SmemDescriptor, rows: int, k: int, element: int, mn_major: bool) -> NDArray[np.int64]:
    """Byte address in shared memory of element (i, kk) of a rows x k operand tile
    (canonical layouts of [CUTLASS-mma] `make_umma_desc`)."""
    i = np.arange(rows)[:, None]
    kk = np.arange(k)[None, :]
    t = 16 // element  # elements per 16-byte chunk
    w = SWIZZLE_BYTES[desc.swizzle]
    if not mn_major:
        if w == 0:
            off = (i % 8) * 16 + (i // 8) * desc.sbo + (kk // t) * desc.lbo + (kk % t) * element
        else:
            off = (i % 8) * w + (i // 8) * desc.sbo + kk * element
    elif w == 0:
        off = (i % t) * element + (i // t) * desc.sbo + (kk % 8) * 16 + (kk // 8) * desc.lbo
    else:
        per_row = w // element
        off = (i % per_row) * element + (i // per_row) * desc.lbo + (kk % 8) * w + (kk // 8) * desc.sbo
    return swizzle(desc.start + off, w)


# --------------------------------------------------------------------------------------
# Element decoding
# --------------------------------------------------------------------------------------


def _fp8_table(exp_bits: int, man_bits: int, bias: int, ieee_special: bool) -> NDArray[np.float32]:
    codes = np.arange(256)
    sign = np.where(codes >> 7, -1.0, 1.0)
    exponent = (codes >> man_bits) & ((1 << exp_bits) - 1)
    mantissa = codes & ((1 << man_bits) - 1)
    normal = (1 + mantissa / (1 << man_bits)) * np.exp2(exponent - bias)
    subnormal = mantissa / (1 << man_bits) * np.exp2(1 - bias)
    value = sign * np.where(exponent == 0, subnormal, normal)
    top = (1 << exp_bits) - 1
    if ieee_special:  # e5m2: IEEE infinities and NaNs
        value = np.where((exponent == top) & (mantissa == 0), sign * np.inf, value)
        value = np.where((exponent == top) & (mantissa != 0), np.nan, value)
    else:  # e4m3 (fn): only S.1111.111 is NaN, no infinities
        value = np.where((exponent == top) & (mantissa == (1 << man_bits) - 1), np.nan, value)
    return value.astype(np.float32)


E4M3 = _fp8_table(4, 3, 7, ieee_special=False)
E5M2 = _fp8_table(5, 2, 15, ieee_special=True)


def decode_elements(raw: NDArray[np.uint8], fmt: str) -> NDArray[Any]:
    """Bytes (..., element size) → float32 values (int64 for the integer formats; the
    uint32 words themselves for `b32`)."""
    match fmt:
        case "f16":
            return raw.view(np.float16)[..., 0].astype(np.float32)
        case "bf16":
            return (raw.view(np.uint16)[..., 0].astype(np.uint32) << 16).view(np.float32)
        case "tf32":
            # tf32 reads the fp32 container; the low 13 mantissa bits are ignored [U: truncation assumed].
            return (raw.view(np.uint32)[..., 0] & np.uint32(0xFFFFE000)).view(np.float32)
        case "e4m3":
            return E4M3[raw[..., 0]]
        case "e5m2":
            return E5M2[raw[..., 0]]
        case "s8":
            return raw.view(np.int8)[..., 0].astype(np.int64)
        case "u8":
            return raw[..., 0].astype(np.int64)
        case "b32":
            return raw.view(np.uint32)[..., 0]
        case _:  # a caller's bug, not an input's: the formats are those of ELEMENT_BYTES
            raise ValueError(f"no element format '{fmt}' (known: {', '.join(ELEMENT_BYTES)})")


@dataclass(frozen=True)
class OperandPlan:
    """Where the elements of a rows x k operand tile are in shared memory: computed once
    per (descriptor, shape, element size, major-ness) and cached, since a pipeline's MMAs
    use a few descriptors over and over and building the map costs more than using it."""

    index: NDArray[np.int64]
    """(rows, k): each element's index into shared memory viewed as whole elements
    (`aligned`), else (rows, k, element) byte offsets. Read-only (shared)."""
    aligned: bool
    low: int
    """The lowest byte address."""
    high: int
    """One past the highest byte address."""
    chunks: NDArray[np.int64] | None = None
    """Where the elements, in `index` order, are whole aligned 16-byte units of shared
    memory one after the other (K-major canonical layouts): those units' indices, read as
    one gather of units instead of one per element. Read-only (shared)."""


def _chunks(index: NDArray[np.int64], element: int) -> NDArray[np.int64] | None:
    """`OperandPlan.chunks` of an element index (elements of `element` bytes), if any."""
    per = CHUNK // element
    flat = index.reshape(-1)
    if flat.size % per:
        return None
    runs = flat.reshape(-1, per)
    if (runs[:, 0] % per).any() or not np.array_equal(runs, runs[:, :1] + np.arange(per)):
        return None
    chunks = runs[:, 0] // per
    chunks.flags.writeable = False
    return chunks


CHUNK = 16
CHUNK_TYPE = np.dtype((np.void, CHUNK))


@lru_cache(maxsize=256)
def operand_plan(desc: SmemDescriptor, rows: int, k: int, element: int, mn_major: bool) -> OperandPlan:
    addresses = operand_addresses(desc, rows, k, element, mn_major)
    aligned = element == 1 or not bool((addresses % element).any())
    if aligned:
        index = addresses // element
    else:
        index = addresses[..., None] + np.arange(element)
    index.flags.writeable = False
    chunks = _chunks(index, element) if aligned else None
    return OperandPlan(index, aligned, int(addresses.min()), int(addresses.max()) + element, chunks)


def _plan_in_bounds(
    smem: NDArray[np.uint8], desc: SmemDescriptor, rows: int, k: int, fmt: str, mn_major: bool
) -> OperandPlan:
    plan = operand_plan(desc, rows, k, ELEMENT_BYTES[fmt], mn_major)
    check_bounds(plan, smem, desc, (rows, k), fmt)
    return plan


def check_bounds(
    plan: OperandPlan, smem: NDArray[np.uint8], desc: SmemDescriptor, shape: tuple[int, int], fmt: str
) -> None:
    """The tile must lie in the shared memory in use."""
    rows, k = shape
    if plan.low < 0 or plan.high > smem.size:
        raise DescriptorError(
            f"the operand tile ({rows}x{k} {fmt}, start 0x{desc.start:x}, LBO {desc.lbo}, SBO {desc.sbo}, swizzle "
            f"{SWIZZLE_NAMES[desc.swizzle]}) reaches shared offset 0x{plan.high:x}, beyond the {smem.size} bytes in use"
        )


def _elements(smem: NDArray[np.uint8], element: int) -> NDArray[Any]:
    """Shared memory viewed as whole `element`-byte units (a view)."""
    return smem if element == 1 else smem[: smem.size - smem.size % element].view(np.dtype(f"u{element}"))


def gather_operand(
    smem: NDArray[np.uint8], desc: SmemDescriptor, rows: int, k: int, fmt: str, mn_major: bool
) -> NDArray[Any]:
    """A rows x k operand tile read from one CTA's shared memory."""
    element = ELEMENT_BYTES[fmt]
    plan = _plan_in_bounds(smem, desc, rows, k, fmt, mn_major)
    if not plan.aligned:
        return decode_elements(smem[plan.index], fmt)
    return decode_elements(_elements(smem, element)[plan.index][..., None].view(np.uint8), fmt)


FLOAT_FORMATS = ("f16", "bf16", "tf32", "e4m3", "e5m2")
_TABLES = {"e4m3": E4M3, "e5m2": E5M2}
_scratch: dict[tuple[str, tuple[int, ...], str], NDArray[Any]] = {}


def scratch(name: str, shape: tuple[int, ...], dtype: str) -> NDArray[Any]:
    """A reused buffer (one per name, shape and type): the MMA path allocates no
    temporaries of its operand or accumulator size. Its content is overwritten by each use."""
    key = (name, shape, dtype)
    buffer = _scratch.get(key)
    if buffer is None:
        buffer = _scratch[key] = np.empty(shape, dtype=dtype)
    return buffer


_F16_SPECIAL = np.float32(2.0**16)
"""|x| of an f16 infinity or NaN read as a finite value by `_decode_f16` (the largest finite
f16 is 65504)."""


def _decode_f16(raw: NDArray[np.uint16], out: NDArray[np.float32]) -> None:
    """`decode_elements(…, "f16")` into `out` by integer and float32 arithmetic: the
    exponent and mantissa moved to float32's places (13 bits up) read as a float32 are the
    value times 2^-112, exactly, subnormals included; infinities and NaNs get float32's
    all-ones exponent, the payload kept (as numpy's conversion keeps it); the sign moved to
    bit 31. numpy's own conversion, and a 64K-entry table lookup that misses the cache
    between MMAs, cost several times this."""
    bits = out.view(np.uint32)
    shifted = scratch("f16", raw.shape, "u4")
    np.left_shift(raw, np.uint32(13), out=shifted, dtype=np.uint32)  # the sign lands on bit 28
    np.bitwise_and(shifted, np.uint32(0x0FFFE000), out=bits)
    np.multiply(out, np.float32(2.0**112), out=out)
    if out.size and out.max() >= _F16_SPECIAL:
        special = out >= _F16_SPECIAL
        bits[special] = (shifted[special] & np.uint32(0x0FFFE000)) + np.uint32(0x70000000)
    np.bitwise_and(shifted, np.uint32(0x10000000), out=shifted)
    np.left_shift(shifted, np.uint32(3), out=shifted)
    np.bitwise_or(bits, shifted, out=bits)


def gather_operand_into(
    smem: NDArray[np.uint8], desc: SmemDescriptor, fmt: str, mn_major: bool, out: NDArray[np.float32]
) -> None:
    """`out[...] = gather_operand(smem, desc, *out.shape, fmt, mn_major)` for the float
    formats, with one cached index map and no temporaries of the tile's size."""
    rows, k = out.shape
    gather_into(smem, _plan_in_bounds(smem, desc, rows, k, fmt, mn_major), fmt, out)


def gather_into(smem: NDArray[np.uint8], plan: OperandPlan, fmt: str, out: NDArray[np.float32]) -> None:
    """`gather_operand_into` with the plan checked against `smem` already."""
    if not plan.aligned:
        out[...] = decode_elements(smem[plan.index], fmt)
        return
    decode_into(_raw(smem, plan, ELEMENT_BYTES[fmt], out.shape), fmt, out)


def gather_raw(
    smem: NDArray[np.uint8],
    plan: OperandPlan,
    out: NDArray[Any],
    views: dict[np.dtype[Any], NDArray[Any]] | None = None,
) -> None:
    """The tile's element bits, undecoded, into `out` ((rows, k), the unsigned integer type
    of the element's size; `decode_into` decodes them), the plan checked already. `views`:
    the CTA's views of `smem` by element type (`Cta.smem_views`), where one is kept."""
    if plan.aligned and plan.chunks is not None and out.strides[1] == out.itemsize:
        # Each row as one item of its bytes: copying rows into a strided `out` costs less
        # than copying its elements.
        row = _row_type(out.shape[1] * out.itemsize)
        out.view(row)[:, 0] = _units(smem, views)[plan.chunks].view(row)
        return
    out[...] = _raw(smem, plan, out.dtype.itemsize, out.shape)


@cache
def _row_type(size: int) -> np.dtype[np.void]:
    return np.dtype((np.void, size))


def _raw(smem: NDArray[np.uint8], plan: OperandPlan, element: int, shape: tuple[int, ...]) -> NDArray[Any]:
    if not plan.aligned:
        return smem[plan.index].view(np.dtype(f"u{element}"))[..., 0]
    if plan.chunks is not None:  # the elements as whole 16-byte units: one gather of units
        return _units(smem)[plan.chunks].view(_UNSIGNED[element]).reshape(shape)
    return _elements(smem, element)[plan.index]


_UNSIGNED = {size: np.dtype(f"u{size}") for size in (1, 2, 4, 8)}
"""The unsigned integer type of each element size."""


def _units(smem: NDArray[np.uint8], views: dict[np.dtype[Any], NDArray[Any]] | None = None) -> NDArray[Any]:
    """Shared memory viewed as whole 16-byte units; kept in `views` (the CTA's
    `smem_views`) if given: making the view costs a third of the gather it serves."""
    units = None if views is None else views.get(CHUNK_TYPE)
    if units is None:
        units = smem[: smem.size - smem.size % CHUNK].view(CHUNK_TYPE)
        if views is not None:
            views[CHUNK_TYPE] = units
    return units


def decode_into(raw: NDArray[Any], fmt: str, out: NDArray[np.float32]) -> None:
    """`decode_elements` of a float format's element bits (`gather_raw`) into `out`."""
    match fmt:
        case "f16":
            _decode_f16(raw, out)
        case "bf16":  # as decode_elements: the bits moved to float32's top half
            np.left_shift(raw, np.uint32(16), out=out.view(np.uint32), dtype=np.uint32)
        case "tf32":  # as decode_elements: the low 13 bits dropped
            np.bitwise_and(raw, np.uint32(0xFFFFE000), out=out.view(np.uint32))
        case _:  # e4m3, e5m2
            np.take(_TABLES[fmt], raw, out=out)


# --------------------------------------------------------------------------------------
# Accumulator layout in TMEM [CUTLASS-mma] tmem_frg, PTX data-path layouts
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AccumulatorLayout:
    """Where D[i, j] (this CTA's rows) lives in TMEM, relative to the D address."""

    rows: int
    n: int
    lanes: NDArray[np.int64] | None
    """Lane of each element, or None for the identity layout (lane i, column j)."""
    columns: NDArray[np.int64] | None
    lane_span: int
    column_span: int
    lane_set: int
    """The exact lanes written, relative to the D address, as a bit set (layout F leaves
    lanes 16-31 of each quarter to a second M=64 accumulator at lane 16)."""
    column_set: int

    def read(self, tmem: NDArray[np.uint32], lane0: int, col0: int) -> NDArray[np.uint32]:
        if self.lanes is None or self.columns is None:
            return tmem[lane0 : lane0 + self.rows, col0 : col0 + self.n]
        return tmem[lane0 + self.lanes, col0 + self.columns]

    def write(self, tmem: NDArray[np.uint32], lane0: int, col0: int, values: NDArray[np.uint32]) -> None:
        if self.lanes is None or self.columns is None:
            tmem[lane0 : lane0 + self.rows, col0 : col0 + self.n] = values
        else:
            tmem[lane0 + self.lanes, col0 + self.columns] = values


@cache
def accumulator_layout(m: int, n: int, cta_group: int) -> AccumulatorLayout:
    """The data-path layout of D for this CTA's m / cta_group rows."""
    rows = m // cta_group
    i = np.arange(rows)[:, None]
    j = np.arange(n)[None, :]
    if cta_group == 1 and m == 64:  # layout F: 16 rows in each 32-lane quarter
        lanes, cols = i % 16 + 32 * (i // 16) + 0 * j, j + 0 * i
    elif cta_group == 2 and m == 128:  # layout B: the second half of N in lanes 64-127
        half = n // 2
        lanes, cols = i + 64 * (j // half), j % half + 0 * i
    else:  # layouts D (cg1 M=128) and A (cg2 M=256): lane i, column j
        return AccumulatorLayout(rows, n, None, None, rows, n, (1 << rows) - 1, (1 << n) - 1)
    return AccumulatorLayout(
        rows, n, lanes, cols, int(lanes.max()) + 1, int(cols.max()) + 1, bit_set(lanes), bit_set(cols)
    )


def mma_product(
    a: NDArray[Any], b: NDArray[Any], d: NDArray[np.uint32] | None, idesc: InstrDescriptor, scale_input_d: int
) -> NDArray[np.uint32]:
    """D = A·Bᵀ (+ D·2^-scale_input_d) as TMEM cells (float32 / f16 / int32 bits)."""
    if idesc.a_format in ("s8", "u8"):
        acc = a.astype(np.int64) @ b.astype(np.int64).T
        if d is not None:
            acc = acc + d.view(np.int32).astype(np.int64)
        if idesc.saturate:
            acc = np.clip(acc, -(1 << 31), (1 << 31) - 1)
        return acc.astype(np.int64).astype(np.uint32)
    if idesc.negate_a:
        a = -a
    if idesc.negate_b:
        b = -b
    with np.errstate(over="ignore", invalid="ignore"):  # inf / NaN propagate as IEEE arithmetic does [U]
        return _float_product(a, b, d, idesc, scale_input_d)


def _float_product(
    a: NDArray[Any], b: NDArray[Any], d: NDArray[np.uint32] | None, idesc: InstrDescriptor, scale_input_d: int
) -> NDArray[np.uint32]:
    acc32 = a.astype(np.float32) @ b.astype(np.float32).T
    if d is not None:
        old = (
            (d & np.uint32(0xFFFF)).astype(np.uint16).view(np.float16).astype(np.float32)
            if idesc.d_format == "f16"
            else d.view(np.float32)
        )
        acc32 = acc32 + old * np.float32(2.0**-scale_input_d)
    if idesc.d_format == "f16":
        return acc32.astype(np.float16).view(np.uint16).astype(np.uint32)
    return acc32.astype(np.float32).view(np.uint32)


def product_in_place(idesc: InstrDescriptor, layout: AccumulatorLayout) -> bool:
    """Whether `product_into` computes this MMA: float operands, an f32 D in the identity
    layout (cg1 M=128, cg2 M=256: a rectangle of TMEM); the others go through `mma_product`."""
    return layout.lanes is None and idesc.d_format == "f32" and idesc.a_format in FLOAT_FORMATS


def product_into(
    d: NDArray[np.float32], a: NDArray[np.float32], b: NDArray[np.float32], scale_input_d: int | None
) -> None:
    """`mma_product` for `product_in_place` MMAs, in place: D (a float32 view of the TMEM
    rectangle) = A·Bᵀ, or + D·2^-scale_input_d when accumulating (`scale_input_d` not None);
    A and B decoded and negated. The same float32 steps in the same order: the product is
    one BLAS sgemm of the same operands and transposition (`a @ b.T`), written straight into
    TMEM when D is overwritten (a strided output is still one sgemm call, its row stride
    the only difference), else into a reused buffer, then added to the scaled old D in
    place (product + D, the operand order of mma_product). No temporaries of the
    accumulator's size."""
    with np.errstate(over="ignore", invalid="ignore"):  # inf / NaN propagate as in mma_product
        if scale_input_d is None:
            np.matmul(a, b.T, out=d)
            return
        product = np.matmul(a, b.T, out=scratch("product", d.shape, "f4"))
        if scale_input_d:
            np.multiply(d, np.float32(2.0**-scale_input_d), out=d)
        # (x · 1 = x for every float32 x, a signalling NaN aside, which the add quiets the
        # same way whether or not it was multiplied first: scale 0 skips the multiply.)
        np.add(product, d, out=d)


DEFERRED_K = 1024
"""The most K a `DeferredProduct` gathers before its product is computed: its operands
take at most (128 + 256) x 1024 elements (0.375-1.5 MiB) per CTA, one run per CTA, and
the product's decoded operands as much again in float32, once."""


class DeferredProduct:
    """A run of MMAs into one f32 TMEM rectangle in the identity layout whose product is
    not computed yet: each MMA's operand element bits, gathered at issue (shared memory is
    rewritten after), are appended along K, A's rows then B's; the run's product is one
    decode and one sgemm over its whole K when TMEM is next read or written there
    (`Cta.tmem`, `Cta.tmem_cells`). A run starts at an MMA that overwrites D or one that
    accumulates with scale_input_d 0, and grows by the accumulating (scale 0) MMAs of the
    same D rectangle, formats and negate bits that follow it, up to `DEFERRED_K`.

    Rounding: the run's D is `A_run·B_runᵀ` (+ the D it started on) — one float32 sgemm
    over the run's K and at most one add — where MMA-by-MMA evaluation rounds each MMA's
    product and each add to D. The hardware's accumulation order and intermediate
    rounding are unspecified [U]; both are within the float32 summation bound. Which MMAs
    form a run depends only on the issuing program (the MMAs, and the TMEM accesses that
    a correct program orders after them), not on the schedule or on state copies."""

    def __init__(self, lane0: int, col0: int, rows: int, n: int, accumulate: bool, form: MmaForm):
        self.lane0, self.col0, self.rows, self.n = lane0, col0, rows, n
        self.accumulate = accumulate
        """The run's product is added to D (its first MMA accumulated), else it overwrites D."""
        self.form = form
        dtype = np.dtype(f"u{ELEMENT_BYTES[form[0]]}")
        spare = _SPARE.pop((rows + n, dtype), None)
        self.buffer: NDArray[Any] = np.empty((rows + n, 256), dtype) if spare is None else spare
        """(rows + n, at least `capacity`) element bits: A's rows then B's, K along the columns;
        `k` used. A settled run's buffer is the next run's (`_SPARE`): a new one is fresh
        pages to fault in, and growing copies."""
        self.capacity = 256
        """The columns the run has room for (what it would have allocated: `nbytes`)."""
        self.k = 0

    def matches(self, lane0: int, col0: int, rows: int, n: int, form: MmaForm, k: int) -> bool:
        """Whether an accumulating MMA of this D rectangle, form and K continues the run."""
        same = (lane0, col0, rows, n, form) == (self.lane0, self.col0, self.rows, self.n, self.form)
        return same and self.k + k <= DEFERRED_K

    def overlaps(self, lanes: tuple[int, int], columns: tuple[int, int]) -> bool:
        return (
            lanes[0] < self.lane0 + self.rows
            and self.lane0 < lanes[1]
            and columns[0] < self.col0 + self.n
            and self.col0 < columns[1]
        )

    @property
    def raw(self) -> NDArray[Any]:
        """The element bits gathered so far, (rows + n, k)."""
        return self.buffer[:, : self.k]

    def block(self, k: int) -> NDArray[Any]:
        """The (rows + n, k) columns the next MMA's operand bits go to (`extend` adds them)."""
        used = self.k
        if used + k > self.capacity:
            self.capacity = max(2 * self.capacity, used + k)
            if self.capacity > self.buffer.shape[1]:
                grown = np.empty((self.rows + self.n, self.capacity), self.buffer.dtype)
                grown[:, :used] = self.buffer[:, :used]
                self.buffer = grown
        return self.buffer[:, used : used + k]

    def extend(self, k: int) -> None:
        self.k += k

    @property
    def nbytes(self) -> int:
        return (self.rows + self.n) * self.capacity * self.buffer.itemsize

    def apply(self, tmem: NDArray[np.uint32]) -> None:
        """Write the run's D into `tmem`: the operands decoded and negated, then
        `product_into` over the run's K."""
        rows, k = self.rows, self.k
        if k:  # (else no MMA joined: the one that started the run failed its checks)
            a_format, b_format, negate_a, negate_b = self.form
            ab = scratch("deferred", (rows + self.n, DEFERRED_K), "f4")[:, :k]
            a, b = ab[:rows], ab[rows:]
            decode_into(self.buffer[:rows, :k], a_format, a)
            decode_into(self.buffer[rows:, :k], b_format, b)
            if negate_a:
                np.negative(a, out=a)
            if negate_b:
                np.negative(b, out=b)
            d = tmem[self.lane0 : self.lane0 + rows, self.col0 : self.col0 + self.n].view(np.float32)
            product_into(d, a, b, 0 if self.accumulate else None)
        # Applied once (`Cta.settle` drops the run first): the buffer is free for the next run.
        key = (self.buffer.shape[0], self.buffer.dtype)
        spare = _SPARE.get(key)
        if spare is None or spare.shape[1] < self.buffer.shape[1]:
            _SPARE[key] = self.buffer

    def copy(self) -> DeferredProduct:
        clone = _copy.copy(self)
        clone.buffer = self.buffer[:, : self.k].copy()
        clone.capacity = self.k
        return clone


_SPARE: dict[tuple[int, np.dtype[Any]], NDArray[Any]] = {}
"""Per (rows + n, element type), the largest buffer of an applied `DeferredProduct`."""


MmaForm = tuple[str, str, bool, bool]
"""What a `DeferredProduct`'s MMAs share besides D: A's and B's formats, negate A, negate B."""


@dataclass(frozen=True)
class MmaPlan:
    """One tcgen05.mma form: its decoded descriptors and what follows from them, cached
    per (kind, cta_group, raw descriptor values): a pipeline issues a few forms over and over."""

    idesc: InstrDescriptor
    a_desc: SmemDescriptor | None
    """None: A is in TMEM."""
    b_desc: SmemDescriptor
    k: int
    rows_a: int
    """A rows (and D rows) per CTA."""
    rows_b: int
    """B rows per CTA."""
    layout: AccumulatorLayout
    in_place: bool
    """`product_in_place`."""
    a_plan: OperandPlan | None
    b_plan: OperandPlan
    ab_plan: OperandPlan | None
    """cta_group 1, A in shared memory, one format: A's rows then B's, read by one gather."""
    tiles: tuple[tuple[SmemDescriptor, int, int, str, bool], ...]
    """The operand tiles in shared memory (A's, unless in TMEM, then B's) as
    `races.check_operands` takes them: descriptor, rows, k, format, MN-major."""
    form: MmaForm
    """A's and B's formats and negate bits (`DeferredProduct.form`)."""


@lru_cache(maxsize=1024)
def mma_plan(kind: str, cta_group: int, idesc_value: int, a_value: int | None, b_value: int) -> MmaPlan:
    """Decode and check the descriptors (instruction, B, A: a `DescriptorError` for the
    first refused one) of an MMA whose A is at shared descriptor `a_value` (None: in TMEM)."""
    idesc = InstrDescriptor.decode(idesc_value, kind, cta_group)
    b_desc = SmemDescriptor.decode(b_value)
    a_desc = None if a_value is None else SmemDescriptor.decode(a_value)
    k = K_PER_MMA[kind]
    rows_a, rows_b = idesc.m // cta_group, idesc.n // cta_group
    layout = accumulator_layout(idesc.m, idesc.n, cta_group)
    a_element = ELEMENT_BYTES[idesc.a_format]
    a_plan = None if a_desc is None else operand_plan(a_desc, rows_a, k, a_element, idesc.a_mn_major)
    b_plan = operand_plan(b_desc, rows_b, k, ELEMENT_BYTES[idesc.b_format], idesc.b_mn_major)
    in_place = product_in_place(idesc, layout)
    ab_plan = None
    if cta_group == 1 and a_plan is not None and a_plan.aligned and b_plan.aligned and idesc.a_format == idesc.b_format:
        index = np.concatenate([a_plan.index, b_plan.index])
        index.flags.writeable = False
        chunks = None
        if a_plan.chunks is not None and b_plan.chunks is not None:
            chunks = np.concatenate([a_plan.chunks, b_plan.chunks])
            chunks.flags.writeable = False
        ab_plan = OperandPlan(index, True, min(a_plan.low, b_plan.low), max(a_plan.high, b_plan.high), chunks)
    tiles = ((b_desc, rows_b, k, idesc.b_format, idesc.b_mn_major),)
    if a_desc is not None:
        tiles = ((a_desc, rows_a, k, idesc.a_format, idesc.a_mn_major), *tiles)
    form = (idesc.a_format, idesc.b_format, idesc.negate_a, idesc.negate_b)
    return MmaPlan(idesc, a_desc, b_desc, k, rows_a, rows_b, layout, in_place, a_plan, b_plan, ab_plan, tiles, form)
