"""Tensor maps and the TMA box copies (`cp.async.bulk.tensor`, tile mode) as pure numpy.

A `TensorMap` holds the arguments of the CUDA driver's `cuTensorMapEncodeTiled`; `validate()`
applies that function's rules (CUDA driver API reference, `cuTensorMapEncodeTiled`), as
corrected by what the H100 driver accepted (tests/silicon/fixtures/tma/tma_encode_checks.json).
`load_box`, `store_box` and `reduce_box` move one box between a global byte array and a
shared-memory byte array the way silicon does (docs/tma.md gives every rule and its source;
tests/test_tma_model.py replays the H100 fixtures bit for bit). The PTX level executes
`cp.async.bulk.tensor` through it (interpreter/ptx/tma_copy.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from math import ceil, prod
from typing import Any

import numpy as np
import numpy.typing as npt

Bytes = npt.NDArray[np.uint8]


class TensorMapError(ValueError):
    """A description that `cuTensorMapEncodeTiled` refuses (CUDA_ERROR_INVALID_VALUE)."""

    def __init__(self, field: str, value: object, allowed: str) -> None:
        super().__init__(f"tensor map {field} = {value!r} is invalid: {allowed}")
        self.field = field
        self.value = value


class TmaFault(RuntimeError):
    """What silicon turns into a launch failure (illegal instruction, misaligned address)."""


@dataclass(frozen=True)
class DataType:
    size: int
    kind: str  # "u", "s" or "f"


DATA_TYPES: dict[str, DataType] = {
    "UINT8": DataType(1, "u"),
    "UINT16": DataType(2, "u"),
    "UINT32": DataType(4, "u"),
    "INT32": DataType(4, "s"),
    "UINT64": DataType(8, "u"),
    "INT64": DataType(8, "s"),
    "FLOAT16": DataType(2, "f"),
    "FLOAT32": DataType(4, "f"),
    "FLOAT64": DataType(8, "f"),
    "BFLOAT16": DataType(2, "f"),
    "FLOAT32_FTZ": DataType(4, "f"),
    "TFLOAT32": DataType(4, "f"),
    "TFLOAT32_FTZ": DataType(4, "f"),
}
PACKED_TYPES = ("16U4_ALIGN8B", "16U4_ALIGN16B", "16U6_ALIGN16B")
"""sm_100 sub-byte types: the H100 driver refuses them; their layout is not modelled."""

SWIZZLE_SPAN = {"NONE": 0, "32B": 32, "64B": 64, "128B": 128}
ATOM_SWIZZLES = ("128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B", "128B_ATOM_64B")
"""sm_100 swizzles: the H100 driver refuses them, so their placement is unverified and refused."""
INTERLEAVES = ("NONE", "16B", "32B")
L2_PROMOTIONS = ("NONE", "L2_64B", "L2_128B", "L2_256B")
OOB_FILLS = ("NONE", "NAN_REQUEST_ZERO_FMA")

OOB_NAN_HALF = 0x7FF7
"""NAN_REQUEST_ZERO_FMA fills every out-of-bounds 16-bit half with 0x7FF7 (H100: f16, bf16 and
f32, whose fill reads 0x7FF77FF7); the documentation only says 'a special NaN constant'."""

SMEM_ALIGN = 128
"""A destination or source not 128-byte aligned is CUDA_ERROR_MISALIGNED_ADDRESS on H100."""

REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


@dataclass(frozen=True)
class TensorMap:
    """The arguments of `cuTensorMapEncodeTiled` (tile mode), enum values by their suffix
    (`data_type="FLOAT16"`, `swizzle="128B"`): what a launch argument carries in place of the
    128 opaque bytes of a `CUtensorMap`."""

    data_type: str
    global_address: int
    global_dims: tuple[int, ...]
    global_strides: tuple[int, ...]
    """Bytes between consecutive indices of dimensions 1 ... rank-1 (rank - 1 values)."""
    box_dims: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: str = "NONE"
    swizzle: str = "NONE"
    l2_promotion: str = "NONE"
    oob_fill: str = "NONE"

    @classmethod
    def from_description(cls, desc: Mapping[str, Any], address: int) -> TensorMap:
        """From the silicon specs' `tensor_map` object over a buffer at `address`."""
        return cls(
            data_type=str(desc["data_type"]),
            global_address=address + int(desc.get("offset", 0)),
            global_dims=tuple(int(x) for x in desc["global_dims"]),
            global_strides=tuple(int(x) for x in desc["global_strides"]),
            box_dims=tuple(int(x) for x in desc["box_dims"]),
            element_strides=tuple(int(x) for x in desc["element_strides"]),
            interleave=str(desc["interleave"]),
            swizzle=str(desc["swizzle"]),
            l2_promotion=str(desc["l2_promotion"]),
            oob_fill=str(desc["oob_fill"]),
        )

    @property
    def rank(self) -> int:
        return len(self.global_dims)

    @property
    def element_bytes(self) -> int:
        return DATA_TYPES[self.data_type].size

    # --- validation ---------------------------------------------------------------------------

    def validate(self, target: str = "sm_100a") -> None:
        """Raise `TensorMapError` where `cuTensorMapEncodeTiled` returns CUDA_ERROR_INVALID_VALUE."""
        self._validate_kinds(target)
        self._validate_shape()
        self._validate_box()

    def _validate_kinds(self, target: str) -> None:
        hopper = target.startswith("sm_90")
        if self.data_type in PACKED_TYPES:
            raise TensorMapError(
                "data_type", self.data_type, "packed sub-byte types are not modelled (refused on sm_90)"
            )
        if self.data_type not in DATA_TYPES:
            raise TensorMapError("data_type", self.data_type, f"one of {', '.join(DATA_TYPES)}")
        swizzles = list(SWIZZLE_SPAN) + ([] if hopper else list(ATOM_SWIZZLES))
        if self.swizzle not in swizzles:
            raise TensorMapError("swizzle", self.swizzle, f"one of {', '.join(swizzles)} on {target}")
        for name, value, allowed in (
            ("interleave", self.interleave, INTERLEAVES),
            ("l2_promotion", self.l2_promotion, L2_PROMOTIONS),
            ("oob_fill", self.oob_fill, OOB_FILLS),
        ):
            if value not in allowed:
                raise TensorMapError(name, value, f"one of {', '.join(allowed)}")
        if self.oob_fill != "NONE" and DATA_TYPES[self.data_type].kind != "f":
            raise TensorMapError(
                "oob_fill", self.oob_fill, f"NaN fill needs a floating-point type, not {self.data_type}"
            )

    def _validate_shape(self) -> None:
        if not 1 <= self.rank <= 5:
            raise TensorMapError("rank", self.rank, "1 to 5")
        if self.interleave != "NONE" and self.rank < 3:
            raise TensorMapError("rank", self.rank, f"at least 3 with interleave {self.interleave}")
        for name, values, n in (
            ("global_strides", self.global_strides, self.rank - 1),
            ("box_dims", self.box_dims, self.rank),
            ("element_strides", self.element_strides, self.rank),
        ):
            if len(values) != n:
                raise TensorMapError(name, list(values), f"{n} values for rank {self.rank}")
        align = 32 if self.interleave == "32B" else 16
        if self.global_address % align:
            raise TensorMapError("global_address", hex(self.global_address), f"a multiple of {align}")
        for i, d in enumerate(self.global_dims):
            if not 1 <= d <= 1 << 32:
                raise TensorMapError(f"global_dims[{i}]", d, "1 to 2^32")
        for i, s in enumerate(self.global_strides):
            if s % align or not 0 <= s < 1 << 40:
                raise TensorMapError(f"global_strides[{i}]", s, f"a multiple of {align} below 2^40")

    def _validate_box(self) -> None:
        for i, b in enumerate(self.box_dims):
            if not 1 <= b <= 256:
                raise TensorMapError(f"box_dims[{i}]", b, "1 to 256")
        for i, e in enumerate(self.element_strides):
            if not 1 <= e <= 8:
                raise TensorMapError(f"element_strides[{i}]", e, "1 to 8")
        inner = self.box_dims[0] * self.element_bytes
        if inner % 16:
            raise TensorMapError(
                "box_dims[0]", self.box_dims[0], f"box_dims[0] x {self.element_bytes} bytes a multiple of 16"
            )
        span = SWIZZLE_SPAN.get(self.swizzle, 128)
        if self.interleave == "NONE" and span and inner > span:
            raise TensorMapError(
                "box_dims[0]", self.box_dims[0], f"at most {span} bytes of inner box with {self.swizzle} swizzle"
            )

    # --- geometry -------------------------------------------------------------------------------

    def box_counts(self) -> tuple[int, ...]:
        """Elements per dimension in shared memory: ceil(box / elementStride), but dimension 0's
        stride is ignored (driver documentation; H100: `tma_load_oob_f32_estride_2x2_nan`)."""
        rest = (ceil(b / e) for b, e in zip(self.box_dims[1:], self.element_strides[1:], strict=True))
        return (self.box_dims[0], *rest)

    def box_bytes(self) -> int:
        """The bytes one load writes and counts as mbarrier transaction bytes (H100: a box
        narrower than its swizzle span still counts its unpadded size)."""
        return prod(self.box_counts()) * self.element_bytes

    def row_pitch(self) -> int:
        """Bytes between box rows in shared memory: the inner box, padded to the swizzle span."""
        return max(self.box_counts()[0] * self.element_bytes, SWIZZLE_SPAN[self.swizzle])

    def footprint(self) -> int:
        """Shared-memory bytes the box spans (rows padded to the swizzle span)."""
        return prod(self.box_counts()[1:]) * self.row_pitch()

    @cached_property
    def load_plans(self) -> dict[int, BoxPlan]:
        """The map's box plans by destination phase (`load_plan`), made once the model
        supports the map (a refused map raises again at each use: nothing is cached):
        on the map itself, as a box load would otherwise hash it (all its fields) to
        find them."""
        _check_supported(self)
        return {}


def swizzle_address(swizzle: str, address: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Where the byte of logical shared address `address` lands: address bits [4, 4+B) XOR bits
    [7, 7+B), B = 1, 2, 3 for 32B, 64B, 128B (CUTLASS `Swizzle<B, 4, 3>`; the absolute shared
    address, not the offset from the destination: H100 `tma_find_dst_*`)."""
    bits = {"NONE": 0, "32B": 1, "64B": 2, "128B": 3}[swizzle]
    mask = (1 << bits) - 1
    return address ^ (((address >> 7) & mask) << 4)


@lru_cache(maxsize=256)
def _check_supported(tmap: TensorMap) -> None:
    """Cached: a kernel loads through a few maps over and over (a refused map raises
    again each time: exceptions are not cached)."""
    tmap.validate()
    if tmap.interleave != "NONE":
        raise TensorMapError("interleave", tmap.interleave, "interleaved layouts are not modelled (NONE only)")
    if tmap.swizzle in ATOM_SWIZZLES:
        raise TensorMapError(
            "swizzle", tmap.swizzle, "the 128B atom swizzles are unverified on silicon and not modelled"
        )
    if tmap.element_strides[0] != 1:
        # documented as ignored; on the H100 the mbarrier phase of such a load completed early, late
        # or not at all, differently from run to run, and one image differed (docs/tma.md)
        raise TensorMapError(
            "element_strides[0]", tmap.element_strides[0], "1 in the model (silicon is not consistent)"
        )


def _check_coords(tmap: TensorMap, coords: Sequence[int], smem_address: int, what: str) -> None:
    if len(coords) != tmap.rank:
        raise TmaFault(f"{what}: {len(coords)} coordinates for a rank-{tmap.rank} tensor map")
    if smem_address % SMEM_ALIGN:
        raise TmaFault(
            f"{what}: shared address {smem_address:#x} is not a multiple of {SMEM_ALIGN} (misaligned address)"
        )
    if coords[0] * tmap.element_bytes % 16:
        raise TmaFault(
            f"{what}: coordinate {coords[0]} of dimension 0 starts {coords[0] * tmap.element_bytes % 16} bytes into a"
            " 16-byte unit (illegal instruction on H100)"
        )


def _box_addresses(
    tmap: TensorMap, coords: Sequence[int], smem_address: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """For every box element in shared-memory order: its global byte address, its (swizzled)
    shared byte address, and whether it lies inside the tensor."""
    counts = tmap.box_counts()
    esize = tmap.element_bytes
    strides = (esize, *tmap.global_strides)
    steps = (1, *tmap.element_strides[1:])
    grids = np.meshgrid(*[np.arange(n, dtype=np.int64) for n in reversed(counts)], indexing="ij")
    ks = list(reversed([g.ravel() for g in grids]))  # ks[i]: index along dimension i, dimension 0 fastest
    inside = np.ones(ks[0].shape, dtype=np.bool_)
    gaddr = np.full(ks[0].shape, tmap.global_address, dtype=np.int64)
    for i, k in enumerate(ks):
        idx = coords[i] + k * steps[i]
        inside &= (idx >= 0) & (idx < tmap.global_dims[i])
        gaddr += idx * strides[i]
    row = np.zeros(ks[0].shape, dtype=np.int64)
    for i in range(tmap.rank - 1, 0, -1):
        row = row * counts[i] + ks[i]
    logical = smem_address + row * tmap.row_pitch() + ks[0] * esize
    return gaddr, swizzle_address(tmap.swizzle, logical), inside


def _byte_offsets(addresses: npt.NDArray[np.int64], esize: int) -> npt.NDArray[np.int64]:
    return (addresses[:, None] + np.arange(esize, dtype=np.int64)[None, :]).ravel()


SWIZZLE_PERIOD = 1024
"""Every swizzle reads shared address bits below 10 only (`swizzle_address`: bits [7, 10)
into bits [4, 7)), so a destination's address modulo 1024 fixes where each byte lands
relative to the destination's 1024-byte block."""
CHUNK = 16
"""The unit a tile-mode box moves in: its rows are whole 16-byte units in global memory
(16-byte aligned address and strides, `box_dims[0]` bytes a multiple of 16, dimension 0
coordinates on 16-byte units) and the swizzles permute 16-byte units."""


@dataclass(frozen=True)
class BoxPlan:
    """Where a box load's bytes come from and go, relative to the box's first global
    byte and to the destination's 1024-byte block: computed once per (tensor map,
    destination address modulo `SWIZZLE_PERIOD`) and cached, since a pipeline loads
    through a few maps into a few stages over and over. Arrays are read-only (shared)."""

    shared: npt.NDArray[np.int64]
    """The shared byte offsets written, in box order."""
    glob: npt.NDArray[np.int64]
    """The global byte offsets read, in box order (for a box inside the tensor)."""
    chunked: bool
    """Both are runs of `CHUNK` bytes at multiples of `CHUNK`, the global ones a strided
    block (`box_shape`): the copy moves whole units."""
    shared_chunks: npt.NDArray[np.int64]
    global_chunks: npt.NDArray[np.int64]
    low: int
    high: int
    """min and max + 1 of `shared`."""
    global_low: int
    global_high: int
    contiguous: bool
    """`shared` is a permutation of [low, high) (no row padding)."""
    gather: npt.NDArray[np.int64] | None
    """Where `chunked` and `contiguous`: the global unit of each shared unit of [low, high)
    in address order (`global_chunks` permuted); else None."""
    reach: tuple[int, ...]
    """Per dimension, how far past its coordinate the box's last element lies."""
    strides: tuple[int, ...]
    """Global bytes between consecutive indices of each dimension."""
    dims: tuple[tuple[int, int], ...]
    """Per dimension, its stride and the bound below which a coordinate keeps the box inside
    the tensor along it (0 <= c < global_dims - reach), for `_copy_units`' one loop."""
    rank: int
    element_bytes: int
    """The map's, for `load_plan`'s coordinate checks."""
    row_shape: tuple[int, ...]
    row_strides: tuple[int, ...]
    row_type: np.dtype[np.void]
    """Where `chunked`: `global_chunks` as the strided block of box rows it is (checked when
    planned): the rows' shape and byte strides (dimension 1 last), a row (the units of
    dimension 0) one item of `row_type`. The box is copied out of global memory row by
    row, one item each, then placed (a gather of units straight from global memory waits
    on its scattered rows: slower where they are not in cache)."""
    order: npt.NDArray[np.int64] | None
    """Where `gather` is: the box-order position of each shared unit of [low, high) in
    address order (`gather` = `global_chunks[order]`): the placing is one gather into the
    range, no scattered stores."""


def _chunks(offsets: npt.NDArray[np.int64]) -> npt.NDArray[np.int64] | None:
    """offsets // CHUNK per unit, if `offsets` is made of whole aligned units in order."""
    if offsets.size % CHUNK:
        return None
    units = offsets.reshape(-1, CHUNK)
    starts = units[:, 0]
    if (starts % CHUNK).any() or not np.array_equal(units, starts[:, None] + np.arange(CHUNK)):
        return None
    return starts // CHUNK


@lru_cache(maxsize=256)
def box_plan(tmap: TensorMap, phase: int) -> BoxPlan:
    """The plan of a load of `tmap`'s box at the origin to shared address `phase`
    (< `SWIZZLE_PERIOD`), from `_box_addresses`, the model's one definition of a box."""
    gaddr, saddr, _ = _box_addresses(tmap, (0,) * tmap.rank, phase)
    esize = tmap.element_bytes
    shared = _byte_offsets(saddr, esize)
    glob = _byte_offsets(gaddr - tmap.global_address, esize)
    shared_chunks, global_chunks = _chunks(shared), _chunks(glob)
    block = None if shared_chunks is None or global_chunks is None else _unit_block(tmap, global_chunks)
    if shared_chunks is None or global_chunks is None or block is None:
        shared_chunks = global_chunks = np.zeros(0, dtype=np.int64)
    low, high = int(shared.min()), int(shared.max()) + 1
    contiguous = shared.size == high - low and np.unique(shared).size == shared.size
    for array in (shared, glob, shared_chunks, global_chunks):
        array.flags.writeable = False
    chunked = bool(shared_chunks.size)
    gather = order = None
    if chunked and contiguous:
        order = np.argsort(shared_chunks)
        gather = global_chunks[order]
        gather.flags.writeable = False
        order.flags.writeable = False
    steps = (1, *tmap.element_strides[1:])
    reach = tuple((n - 1) * e for n, e in zip(tmap.box_counts(), steps, strict=True))
    strides = (esize, *tmap.global_strides)
    glow, ghigh = int(glob.min()), int(glob.max()) + 1
    dims = tuple((s, d - r) for s, d, r in zip(strides, tmap.global_dims, reach, strict=True))
    row_shape, row_strides, row_type = block or ((), (), np.dtype(np.void))
    return BoxPlan(
        shared, glob, chunked, shared_chunks, global_chunks, low, high, glow, ghigh, contiguous, gather, reach, strides,
        dims, tmap.rank, esize, row_shape, row_strides, row_type, order,
    )  # fmt: skip


UnitBlock = tuple[tuple[int, ...], tuple[int, ...], np.dtype[np.void]]
"""A strided block of rows of 16-byte units: its shape and byte strides, a row's type."""


def _unit_block(tmap: TensorMap, global_chunks: npt.NDArray[np.int64]) -> UnitBlock | None:
    """(shape, byte strides, row type) of the strided block of rows of 16-byte units whose
    units in C order are `global_chunks` (a box's units in box order: dimension 0 fastest,
    each further dimension its global stride times its element stride apart), if it is
    that block."""
    counts = tmap.box_counts()
    steps = [s * e for s, e in zip(tmap.global_strides, tmap.element_strides[1:], strict=True)]
    shape = (*reversed(counts[1:]), counts[0] * tmap.element_bytes // CHUNK)
    byte_strides = (*reversed(steps), CHUNK)
    offsets = np.zeros(1, dtype=np.int64)
    for n, stride in zip(shape, byte_strides, strict=True):
        offsets = (offsets[:, None] + np.arange(n, dtype=np.int64) * stride).reshape(-1)
    if any(s % CHUNK for s in byte_strides) or not np.array_equal(offsets // CHUNK, global_chunks):
        return None
    return shape[:-1], byte_strides[:-1], np.dtype((np.void, shape[-1] * CHUNK))


def load_plan(tmap: TensorMap, coords: Sequence[int], smem_address: int) -> tuple[BoxPlan, int]:
    """`load_box`'s checks (a `TmaFault` or `TensorMapError` for what silicon refuses), then
    the box's plan and the destination's block: the shared bytes written are block + plan.shared."""
    plans = tmap.load_plans
    phase = smem_address % SWIZZLE_PERIOD
    plan = plans.get(phase)
    if plan is None:
        _check_coords(tmap, coords, smem_address, "tensor load")
        plan = plans[phase] = box_plan(tmap, phase)
    elif len(coords) != plan.rank or smem_address % SMEM_ALIGN or coords[0] * plan.element_bytes % 16:
        _check_coords(tmap, coords, smem_address, "tensor load")  # (raises: the plan's map is this one)
    return plan, smem_address - phase


UNIT = np.dtype(np.complex128)
"""A 16-byte unit as one item: numpy copies items by their size as machine words,
never converting them (a NaN's payload and its signalling bit stay: tests/
test_machine_fast_paths.py), and an 8-byte-aligned type's items on its aligned path
(a 16-byte void type's take its unaligned path, at twice the cost)."""


def units(data: Bytes) -> npt.NDArray[np.complex128]:
    """`data`'s whole 16-byte units (a view)."""
    whole = data.size - data.size % CHUNK
    return (data if whole == data.size else data[:whole]).view(UNIT)


def _copy_units(
    tmap: TensorMap,
    plan: BoxPlan,
    block: int,
    coords: Sequence[int],
    gmem: Bytes,
    gbase: int,
    smem: Bytes,
    views: tuple[npt.NDArray[np.complex128], npt.NDArray[np.complex128]] | None,
) -> bool:
    """`load_box` of a chunked plan's box as one copy of whole units, if the box lies
    inside the tensor (every element, as `_box_addresses` decides per element: the index
    along each dimension grows with k, so its first and last decide) and inside both
    arrays on unit boundaries; else False, nothing written."""
    origin = tmap.global_address - gbase
    for c, (stride, limit) in zip(coords, plan.dims, strict=True):
        if not 0 <= c < limit:
            return False
        origin += c * stride
    if (
        (origin | block) % CHUNK
        or origin + plan.global_low < 0
        or origin + plan.global_high > gmem.size - gmem.size % CHUNK
        or block + plan.high > smem.size - smem.size % CHUNK
    ):
        return False
    gunits, sunits = (units(gmem), units(smem)) if views is None else views
    # the box's units in box order: a copy of its rows out of global memory (`row_shape`)
    box = np.ndarray(plan.row_shape, plan.row_type, gunits, origin, plan.row_strides).ravel().view(UNIT)
    if plan.order is not None:
        low = (block + plan.low) // CHUNK
        sunits[low : low + plan.order.size] = box[plan.order]
    else:
        sunits[block // CHUNK :][plan.shared_chunks] = box
    return True


def load_box(
    tmap: TensorMap,
    gmem: Bytes,
    gbase: int,
    coords: Sequence[int],
    smem: Bytes,
    smem_address: int,
    planned: tuple[BoxPlan, int] | None = None,
    views: tuple[npt.NDArray[np.complex128], npt.NDArray[np.complex128]] | None = None,
) -> int:
    """`cp.async.bulk.tensor` global -> shared: write the box at `coords` into `smem` (the CTA's
    shared memory, byte 0 at shared address 0) at `smem_address`; `gmem` holds global memory
    from address `gbase`. Returns the transaction bytes the load completes on its mbarrier.
    Elements outside the tensor read as zero, or as the NaN fill; shared bytes in the row
    padding of a box narrower than its swizzle span are not written.

    A box wholly inside the tensor is one copy of whole 16-byte units through the cached
    plan (`box_plan`); the others take the element-wise path below. `planned`: what
    `load_plan(tmap, coords, smem_address)` returned (its checks passed); `views`: `gmem`'s
    and `smem`'s whole 16-byte units (`units`), where the caller keeps them."""
    plan, block = load_plan(tmap, coords, smem_address) if planned is None else planned
    if plan.chunked and _copy_units(tmap, plan, block, coords, gmem, gbase, smem, views):
        return plan.shared.size  # the box's bytes (`TensorMap.box_bytes`)
    esize = tmap.element_bytes
    gaddr, saddr, inside = _box_addresses(tmap, coords, smem_address)
    values = np.zeros((gaddr.size, esize), dtype=np.uint8)
    if tmap.oob_fill == "NAN_REQUEST_ZERO_FMA":
        values[:] = np.frombuffer(OOB_NAN_HALF.to_bytes(2, "little") * (esize // 2 or 1), dtype=np.uint8)[:esize]
    src = _byte_offsets(gaddr[inside] - gbase, esize)
    if src.size and (src.min() < 0 or src.max() >= gmem.size):
        raise TmaFault(
            f"tensor load: global bytes {gbase + src.min():#x}..{gbase + src.max():#x} outside the memory given"
        )
    values[inside] = gmem[src].reshape(-1, esize)
    smem[_byte_offsets(saddr, esize)] = values.ravel()
    return tmap.box_bytes()


def load_bytes(tmap: TensorMap, coords: Sequence[int], smem_address: int) -> npt.NDArray[np.int64]:
    """The shared byte addresses a load of the box at `coords` to `smem_address` writes, in box
    order (`load_box`'s checks first: a `TmaFault` or `TensorMapError` for what silicon refuses)."""
    plan, block = load_plan(tmap, coords, smem_address)
    return plan.shared + block


def store_bytes(
    tmap: TensorMap, gmem: Bytes, gbase: int, coords: Sequence[int], smem_address: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The global byte offsets (from `gbase`) a store of the box at `coords` writes and the
    shared byte addresses it reads (`store_box`'s checks first)."""
    return _store_addresses(tmap, gmem, gbase, coords, smem_address, "tensor store")


def _store_addresses(
    tmap: TensorMap, gmem: Bytes, gbase: int, coords: Sequence[int], smem_address: int, what: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The global and shared byte offsets of the in-bounds elements of a store or reduction."""
    _check_supported(tmap)
    _check_coords(tmap, coords, smem_address, what)
    if any(c < 0 for c in coords):
        raise TmaFault(f"{what}: negative coordinates {list(coords)} (illegal instruction on H100)")
    if tmap.swizzle != "NONE" and tmap.box_counts()[0] * tmap.element_bytes < SWIZZLE_SPAN[tmap.swizzle]:
        raise TmaFault(
            f"{what}: a {tmap.swizzle}-swizzled box whose rows are narrower than the span (illegal address on H100,"
            " with the source buffer just the padded size; not modelled)"
        )
    esize = tmap.element_bytes
    gaddr, saddr, inside = _box_addresses(tmap, coords, smem_address)
    dst = _byte_offsets(gaddr[inside] - gbase, esize)
    if dst.size and (dst.min() < 0 or dst.max() >= gmem.size):
        raise TmaFault(f"{what}: global bytes {gbase + dst.min():#x}..{gbase + dst.max():#x} outside the memory given")
    return dst, _byte_offsets(saddr[inside], esize)


def store_box(tmap: TensorMap, gmem: Bytes, gbase: int, coords: Sequence[int], smem: Bytes, smem_address: int) -> None:
    """`cp.async.bulk.tensor` shared -> global: the in-bounds elements of the box are written,
    the rest of the box is dropped (clipping)."""
    dst, src = _store_addresses(tmap, gmem, gbase, coords, smem_address, "tensor store")
    gmem[dst] = smem[src]


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
_SIGNED = {4: np.int32, 8: np.int64}


def _reduce(op: str, old: npt.NDArray[Any], src: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """The PTX ISA's reduction operators (`cp.reduce.async.bulk`): inc/dec wrap at the source value."""
    if op == "add":
        return old + src
    if op == "min":
        return np.minimum(old, src)
    if op == "max":
        return np.maximum(old, src)
    if op == "inc":
        return np.where(old >= src, 0, old + 1).astype(old.dtype)
    if op == "dec":
        return np.where((old == 0) | (old > src), src, old - 1).astype(old.dtype)
    if op == "and":
        return old & src
    if op == "or":
        return old | src
    return old ^ src


def reduce_box(
    op: str, tmap: TensorMap, gmem: Bytes, gbase: int, coords: Sequence[int], smem: Bytes, smem_address: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """`cp.reduce.async.bulk.tensor`: global = op(global, shared) on the in-bounds elements;
    the global byte offsets written and the shared bytes read (as `store_bytes`).
    Integer types only (float add/min/max round per the ISA and are not modelled yet)."""
    if op not in REDUCE_OPS:
        raise TensorMapError("reduction", op, f"one of {', '.join(REDUCE_OPS)}")
    kind = DATA_TYPES[tmap.data_type].kind if tmap.data_type in DATA_TYPES else "?"
    if kind not in "us":
        raise TensorMapError("data_type", tmap.data_type, "an integer type for a modelled reduction")
    if op in ("inc", "dec") and (kind != "u" or tmap.element_bytes != 4):
        raise TensorMapError("data_type", tmap.data_type, f".{op} is defined for u32 only")
    dst, src = _store_addresses(tmap, gmem, gbase, coords, smem_address, f"tensor reduction .{op}")
    dtype = (_SIGNED if kind == "s" else _UNSIGNED)[tmap.element_bytes]
    old = gmem[dst].view(dtype)
    new = _reduce(op, old, smem[src].view(dtype))
    gmem[dst] = np.asarray(new, dtype=dtype).view(np.uint8)
    return dst, src


# --- the launch argument ------------------------------------------------------------------------------

SHORT_TYPES = {
    "u8": "UINT8", "u16": "UINT16", "u32": "UINT32", "s32": "INT32", "u64": "UINT64", "s64": "INT64",
    "f16": "FLOAT16", "bf16": "BFLOAT16", "f32": "FLOAT32", "f64": "FLOAT64", "tf32": "TFLOAT32",
}  # fmt: skip
OPTION_KEYS = {"swizzle": "swizzle", "interleave": "interleave", "l2": "l2_promotion", "oob": "oob_fill"}
TENSORMAP_ARG_FORM = "tensormap:BUFFER[+OFFSET]:TYPE:DIMS:STRIDES:BOX[:estrides=AxB,swizzle=128B,oob=nan,l2=256B]"


@dataclass(frozen=True)
class TensorMapArgument:
    """A tensor-map kernel parameter as a launch describes it: the map over the global buffer
    `buffer` (another argument), `offset` bytes in; `bind` fixes the address once it is placed."""

    buffer: str
    offset: int
    template: TensorMap
    """The map with `global_address` 0."""

    def bind(self, buffer_address: int) -> TensorMap:
        tmap = replace(self.template, global_address=buffer_address + self.offset)
        tmap.validate()
        return tmap


def _ints(text: str, what: str) -> tuple[int, ...]:
    if text == "-":
        return ()
    try:
        return tuple(int(x, 0) for x in text.split("x"))
    except ValueError:
        raise ValueError(f"{what} '{text}' is not numbers joined by 'x' (or '-' for none)") from None


def parse_tensor_map_arg(text: str) -> TensorMapArgument:
    """`tensormap:a+0:f16:4096x4096:8192:64x128:swizzle=128B` (dimension 0 first, as
    cuTensorMapEncodeTiled numbers them; strides in bytes for dimensions 1 ...; element strides
    default to 1, the options to NONE). Raises ValueError naming what is wrong."""
    parts = text.split(":")
    if len(parts) not in (6, 7) or parts[0] != "tensormap":
        raise ValueError(f"'{text}' is not {TENSORMAP_ARG_FORM}")
    buffer, _, offset = parts[1].partition("+")
    if parts[2] not in SHORT_TYPES:
        raise ValueError(f"tensor map element type '{parts[2]}' is not one of {', '.join(SHORT_TYPES)}")
    dims = _ints(parts[3], "DIMS")
    estrides = (1,) * len(dims)
    options = dict.fromkeys(OPTION_KEYS.values(), "NONE")
    for item in parts[6].split(",") if len(parts) == 7 else []:
        key, _, value = item.partition("=")
        if key == "estrides":
            estrides = _ints(value, "estrides")
        elif key in OPTION_KEYS:
            value = {"nan": "NAN_REQUEST_ZERO_FMA", "none": "NONE"}.get(value, value)
            options[OPTION_KEYS[key]] = f"L2_{value}" if key == "l2" and value != "NONE" else value
        else:
            raise ValueError(f"tensor map option '{key}' is not one of estrides, {', '.join(OPTION_KEYS)}")
    template = TensorMap(
        data_type=SHORT_TYPES[parts[2]],
        global_address=0,
        global_dims=dims,
        global_strides=_ints(parts[4], "STRIDES"),
        box_dims=_ints(parts[5], "BOX"),
        element_strides=estrides,
        interleave=options["interleave"],
        swizzle=options["swizzle"],
        l2_promotion=options["l2_promotion"],
        oob_fill=options["oob_fill"],
    )
    template.validate()
    return TensorMapArgument(buffer, int(offset or "0", 0), template)
