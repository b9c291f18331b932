"""Typed loads and stores of lane values at per-lane addresses (checked for data races:
races.py), and LLVM type sizes."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    VectorType,
)
from xdsl.dialects.llvm import LLVMArrayType, LLVMPointerType, LLVMStructType
from xdsl.ir import Attribute, Operation

from xdsl_tmem.interpreter import races
from xdsl_tmem.interpreter.machine import GLOBAL_BASE, RANK_SHIFT, SHARED_LIMIT, Cluster, Hazard
from xdsl_tmem.interpreter.shadow import Shadow
from xdsl_tmem.interpreter.values import WARP, Lanes, UnsupportedValue, Value, dtype_of

if TYPE_CHECKING:
    from xdsl_tmem.interpreter.executor import Warp


def alignment_of(t: Attribute) -> int:
    if isinstance(t, LLVMArrayType):
        return alignment_of(t.type)
    if isinstance(t, LLVMStructType):
        return max((alignment_of(f) for f in t.types), default=1)
    return min(size_of(t), 16) or 1


def size_of(t: Attribute) -> int:
    """Allocation size in bytes, as LLVM's NVPTX data layout gives it."""
    match t:
        case IntegerType():
            return max(1, (t.width.data + 7) // 8)
        case IndexType() | LLVMPointerType() | Float64Type():
            return 8
        case Float32Type():
            return 4
        case Float16Type() | BFloat16Type():
            return 2
        case VectorType():
            return size_of(t.element_type) * t.element_count()
        case LLVMArrayType():
            return size_of(t.type) * t.size.data
        case LLVMStructType():
            offset = 0
            for field in t.types:
                align = alignment_of(field)
                offset = (offset + align - 1) // align * align + size_of(field)
            align = alignment_of(t)
            return (offset + align - 1) // align * align
        case _:
            raise UnsupportedValue(f"size of type {t} is unknown to the interpreter")


def struct_offset(t: LLVMStructType, index: int) -> int:
    offset = 0
    for i, field in enumerate(t.types):
        align = alignment_of(field)
        offset = (offset + align - 1) // align * align
        if i == index:
            return offset
        offset += size_of(field)
    raise UnsupportedValue(f"struct {t} has no field {index}")


class Access(NamedTuple):
    """How a value of one type sits in memory."""

    size: int
    dtype: np.dtype[Any]
    elements: int
    """Elements per lane."""
    vector: bool

    @staticmethod
    def of(t: Attribute) -> Access:
        dtype = dtype_of(t)
        size = size_of(t)
        return Access(size, dtype, max(1, size // dtype.itemsize), isinstance(t, VectorType))


_SHIFT = {2: 1, 4: 2, 8: 3}


@cache
def _columns(count: int) -> NDArray[np.int64]:
    return np.arange(count, dtype=np.int64)


def _spans(lo: int, hi: int) -> Hazard:
    return Hazard(
        "out-of-bounds",
        f"one access spans several memories (addresses 0x{lo:x}..0x{hi:x}); the interpreter supports a warp "
        "access to one shared memory or one kernel buffer at a time",
    )


def _region(
    cluster: Cluster, lo: int, hi: int, size: int
) -> tuple[NDArray[np.uint8], dict[np.dtype[Any], NDArray[Any]], int, Shadow]:
    """(bytes, their views by element type, address of byte 0, shadow) of the one shared
    memory or kernel buffer holding every access of `size` bytes at `lo`..`hi`."""
    if hi < SHARED_LIMIT and lo >> RANK_SHIFT == hi >> RANK_SHIFT:
        cta, first = cluster.cta_of(lo)
        cta.shared_slice(first, hi - lo + size)
        return cta.smem, cta.smem_views, lo - first, cta.shadow
    if lo >= GLOBAL_BASE:
        buffer, _ = cluster.memory.locate(lo, size)
        if hi + size > buffer.base + buffer.data.size:
            cluster.memory.locate(hi, size)  # raises if out of bounds
            raise _spans(lo, hi)
        return buffer.data, buffer.views, buffer.base, buffer.shadow
    raise _spans(lo, hi)


def _access(
    cluster: Cluster, addresses: NDArray[Any], dtype: np.dtype[Any], size: int
) -> tuple[NDArray[Any], NDArray[np.int64], bool, Shadow, NDArray[np.int64]]:
    """(memory view, per-lane index of shape (lanes, count), indexes whole elements?,
    shadow, per-lane byte offsets) for a warp access at per-lane `addresses`, all inside
    one shared memory or one kernel buffer. Aligned accesses index the memory viewed as
    `dtype` elements (fewer, cheaper indices); misaligned ones fall back to bytes."""
    lo, hi = int(addresses.min()), int(addresses.max())
    data, views, base, shadow = _region(cluster, lo, hi, size)
    offsets = addresses.astype(np.int64) - base
    item = dtype.itemsize
    if item > 1 and not (lo - base) & (item - 1) and not int(np.bitwise_or.reduce(offsets)) & (item - 1):
        view = views.get(dtype)
        if view is None:
            view = views[dtype] = data[: data.size - data.size % item].view(dtype)
        return view, (offsets >> _SHIFT[item])[:, None] + _columns(size // item), True, shadow, offsets
    return data, offsets[:, None] + _columns(size), False, shadow, offsets


def _check(
    warp: Warp, op: Operation, shadow: Shadow, offsets: NDArray[np.int64], size: int, values: NDArray[Any] | None
) -> None:
    """`races.check_lanes` of a load (`values` None) or of a store of `values`."""
    races.check_lanes(warp, op, shadow, offsets, size, values is not None, values)


def load(warp: Warp, op: Operation, address: Value, access: Access) -> Value:
    """`warp` loads a value in its active lanes (others read 0)."""
    size, dtype, count, vector = access
    cluster = warp.cluster
    lanes = warp.lane_index()
    if not isinstance(address, np.ndarray):
        raw = cluster.read(int(address), size).view(dtype)
        races.access(warp, op, int(address), size, write=False)
        if vector:
            return np.tile(raw, (WARP, 1))
        return raw[0].item()
    if lanes is None and (where := progression(cast(Lanes, address))) is not None and where.stride >= size:
        strided = _strided_access(warp, op, where, access).copy()
        return strided if vector else strided[:, 0]
    addresses = cast(Lanes, address if lanes is None else address[lanes])
    view, index, whole, shadow, offsets = _access(cluster, addresses, dtype, size)
    _check(warp, op, shadow, offsets, size, None)
    got = view[index]
    values = got if whole else np.ascontiguousarray(got).view(dtype)
    if lanes is None:
        out = values
    else:
        out = np.zeros((WARP, count), dtype=dtype)
        out[lanes] = values
    return out if vector else out[:, 0]


def store(warp: Warp, op: Operation, address: Value, value: Value, access: Access) -> None:
    """`warp` stores `value` from its active lanes; later lanes win on overlap."""
    size, dtype, count, _ = access
    cluster = warp.cluster
    lanes = warp.lane_index()
    if isinstance(value, np.ndarray):
        per_lane = value.astype(dtype, copy=False).reshape(WARP, count)
        if lanes is not None:
            per_lane = per_lane[lanes]
    else:
        per_lane = np.full((WARP if lanes is None else len(lanes), count), value, dtype=dtype)
    if not isinstance(address, np.ndarray):
        target = cluster.read(int(address), size)
        races.access(warp, op, int(address), size, True, per_lane[-1])
        target[:] = np.ascontiguousarray(per_lane[-1]).view(np.uint8)
        return
    if lanes is None and (where := progression(cast(Lanes, address))) is not None and where.stride >= size:
        _strided_access(warp, op, where, access, per_lane)[...] = per_lane
        return
    addresses = cast(Lanes, address if lanes is None else address[lanes])
    view, index, whole, shadow, offsets = _access(cluster, addresses, dtype, size)
    _check(warp, op, shadow, offsets, size, per_lane)
    view[index] = per_lane if whole else np.ascontiguousarray(per_lane).view(np.uint8)


class Progression(NamedTuple):
    """The per-lane addresses `first + lane * stride` (`stride > 0`) of all 32 lanes:
    the common shape of a warp's access (`a + tid * k`). Where the lanes' bytes do not
    overlap (`stride >=` the access's size), the access is a strided view of the memory
    and of its shadow, without per-lane indices (`load_progression`, `store_progression`)."""

    first: int
    stride: int

    def addresses(self) -> NDArray[np.int64]:
        return np.arange(self.first, self.first + WARP * self.stride, self.stride, dtype=np.int64)


def progression(lanes: NDArray[Any]) -> Progression | None:
    """The 32 integer `lanes` as a `Progression`, if they are one."""
    if lanes.ndim != 1 or lanes.dtype.kind not in "ui":
        return None
    # (Python lists: for 32 lanes cheaper than numpy's diff and compare.)
    values: list[int] = lanes.tolist()
    first = values[0]
    stride = values[1] - first
    if stride <= 0 or values != list(range(first, first + WARP * stride, stride)):
        return None
    return Progression(first, stride)


def _strided_access(
    warp: Warp, op: Operation, where: Progression, access: Access, values: NDArray[Any] | None = None
) -> NDArray[Any]:
    """The (32, elements) view of the memory a non-overlapping progression access
    touches, after its race checks (of a load, or of a store of `values`). Unaligned
    element views are fine (numpy copes)."""
    size, dtype, count, _ = access
    first, stride = where
    data, _, base, shadow = _region(warp.cluster, first, first + (WARP - 1) * stride, size)
    start = first - base
    races.check_strided(warp, op, shadow, range(start, start + WARP * stride, stride), size, values is not None, values)
    return np.ndarray((WARP, count), dtype, data, start, (stride, dtype.itemsize))


def load_progression(warp: Warp, op: Operation, where: Progression, access: Access) -> NDArray[Any]:
    """`load` by all 32 lanes at a progression of addresses: (32, elements) values."""
    if where.stride < access.size:
        return cast(Lanes, load(warp, op, where.addresses(), access)).reshape(WARP, access.elements)
    return _strided_access(warp, op, where, access).copy()


def store_progression(warp: Warp, op: Operation, where: Progression, value: NDArray[Any], access: Access) -> None:
    """`store` of `value` ((32, elements), or (32,) for one element) by all 32 lanes at a
    progression of addresses."""
    if where.stride < access.size:  # overlapping lanes: the later ones win, as `store` orders them
        store(warp, op, where.addresses(), value, access)
        return
    values = value.astype(access.dtype, copy=False).reshape(WARP, access.elements)
    target = _strided_access(warp, op, where, access, values)
    target[...] = values
