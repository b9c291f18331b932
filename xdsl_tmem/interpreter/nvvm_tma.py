"""`nvvm` TMA and bulk copies at the NVVM level, and tensor-map kernel parameters.

The ops decode their operands here and act through `interpreter/bulk_copy.py`, the
machine actions the PTX level's instructions (interpreter/ptx/tma_copy.py) call too, so a
copy lands, races and completes on its mbarrier alike at both levels. Each active lane
(whose `predicate` holds) issues its own copy, as each executing thread does in PTX.

A tensor map is a kernel parameter spelled as upstream MLIR 22 passes a `CUtensorMap`
`__grid_constant__` parameter: `%tmap: !llvm.ptr {llvm.align = 64 : i64, llvm.byval =
!llvm.array<128 x i8>, nvvm.grid_constant}` (llc-22 declares it `.param .align 64 .b8
k_param_0[128]` and takes its generic address with `mov` and `cvta.param`). Its value is
the parameter's address, `machine.PARAM_BASE` + its offset in the parameter space as our
backend lays it out; the launch describes the map (`tma.TensorMapArgument`).

Refused before the run (`refusal`), naming the op and the option: the im2col, im2col_w,
tile_gather4 and tile_scatter4 modes (the model's copies are tile mode), and the
non-tensor copies' multicast mask and byte mask (not modelled). The reduction's float
types are refused when issued, by `tma.reduce_box` (`tma-invalid`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, cast

from xdsl.dialects import llvm
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, IntegerType
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.ir import Attribute, Operation

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.dialects.nvvm.base import address_space
from xdsl_tmem.interpreter import bulk_copy
from xdsl_tmem.interpreter.executor import Warp, WarpFunctions, as_warp
from xdsl_tmem.interpreter.memory import alignment_of, size_of
from xdsl_tmem.interpreter.nvvm import at
from xdsl_tmem.interpreter.values import Value

TENSOR_MAP_BYTES = 128
"""A `CUtensorMap` is 128 opaque bytes, 64-byte aligned (CUDA driver API, `CUtensorMap`;
cuda.h declares it `alignas(64)`)."""
TENSOR_MAP_SPELLING = "!llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}"


# --------------------------------------------------------------------------------------
# Kernel parameters
# --------------------------------------------------------------------------------------


def argument_attributes(kernel: Operation, index: int) -> dict[str, Attribute]:
    """The attributes of the kernel's parameter `index` (`{llvm.byval = ..., ...}`)."""
    attrs = cast(Any, kernel).arg_attrs if hasattr(kernel, "arg_attrs") else None
    if attrs is None or index >= len(attrs.data):
        return {}
    entry = attrs.data[index]
    return dict(entry.data) if isinstance(entry, DictionaryAttr) else {}


def byval_type(kernel: Operation, index: int) -> Attribute | None:
    """The pointee type of a byval parameter (`llvm.byval = T`), or None."""
    return argument_attributes(kernel, index).get("llvm.byval")


def tensor_map_problem(kernel: Operation, index: int, t: Attribute) -> str | None:
    """Why parameter `index` (of type `t`) cannot take a tensor map, or None if it can."""
    attrs = argument_attributes(kernel, index)
    pointee = byval_type(kernel, index)
    if address_space(t) != 0 or pointee is None:
        return f"parameter of type {t} is no byval tensor map"
    if size_of(pointee) != TENSOR_MAP_BYTES:
        return f"its byval type {pointee} is not {TENSOR_MAP_BYTES} bytes"
    if "nvvm.grid_constant" not in attrs:
        return "it lacks nvvm.grid_constant (without it llc-22 copies the parameter to local memory)"
    align = attrs.get("llvm.align")
    if not isinstance(align, IntegerAttr) or cast(IntegerAttr, align).value.data < 64:
        return "it needs llvm.align = 64 : i64 (a CUtensorMap is 64-byte aligned)"
    return None


def parameter_offsets(kernel: Operation, types: Sequence[Attribute]) -> list[int]:
    """Each parameter's offset in the parameter space, laid out as our backend declares
    the parameters (isel/kernel.py): byval ones at their `llvm.align`, pointers 8 bytes (4
    in the shared::cluster and tensor spaces), scalars their size (i1 one byte)."""
    offsets: list[int] = []
    end = 0
    for i, t in enumerate(types):
        pointee = byval_type(kernel, i)
        if pointee is not None:
            align_attr = argument_attributes(kernel, i).get("llvm.align")
            size = size_of(pointee)
            align = cast(IntegerAttr, align_attr).value.data if isinstance(align_attr, IntegerAttr) else 1
        elif isinstance(t, llvm.LLVMPointerType):
            size = align = 4 if address_space(t) in (6, 7) else 8
        elif isinstance(t, IntegerType) and cast(IntegerType, t).bitwidth <= 8:
            size = align = 1
        else:
            size, align = size_of(cast(Attribute, t)), alignment_of(cast(Attribute, t))
        start = (end + align - 1) // align * align
        offsets.append(start)
        end = start + size
    return offsets


# --------------------------------------------------------------------------------------
# The ops
# --------------------------------------------------------------------------------------


def _lanes(warp: Warp, predicate: Value | None) -> list[int]:
    """The active lanes that issue (a per-thread predicate operand)."""
    lanes = warp.active_lanes()
    return lanes if predicate is None else [lane for lane in lanes if at(predicate, lane)]


def _refuse_mode(op: Operation, mode: str) -> str | None:
    if mode != "tile":
        return f"{op.name} with mode {mode} is not executed by the model (only mode tile)"
    return None


class _LoadSlots(NamedTuple):
    """Where a tensor load's operands are in its operand values (None: absent), and whether
    it is the cta_group::2 form: computed once per op, since the optional operands'
    accessors decode the segment sizes at each read."""

    dst: int
    tmap: int
    mbar: int
    mask: int | None
    predicate: int | None
    coordinates: tuple[int, ...]
    pair: bool


def _tensor_load_slots(op: nvvm.CpAsyncBulkTensorSharedClusterGlobalOp) -> _LoadSlots:
    index = {value: i for i, value in enumerate(op.operands)}
    mask, predicate = op.multicast_mask, op.predicate
    return _LoadSlots(
        index[op.dst_mem],
        index[op.tma_descriptor],
        index[op.mbar],
        None if mask is None else index[mask],
        None if predicate is None else index[predicate],
        tuple(index[c] for c in op.coordinates),
        op.group is not None and op.group.as_int() == 2,
    )


@register_impls
class NvvmTmaFunctions(WarpFunctions):
    def refusal(self, op: Operation) -> str | None:
        match op:
            case nvvm.CpAsyncBulkTensorSharedClusterGlobalOp():
                if op.multicast_mask is not None and op.group is not None:
                    return f"{op.name}: multicast_mask with group is not modelled (its mbarrier mapping is unverified)"
                return _refuse_mode(op, op.mode.data.value)
            case nvvm.CpAsyncBulkTensorGlobalSharedCtaOp() | nvvm.CpAsyncBulkTensorReduceOp():
                return _refuse_mode(op, op.mode.data.value)
            case nvvm.CpAsyncBulkSharedClusterGlobalOp() if op.multicast_mask is not None:
                return f"{op.name} with multicast_mask is not executed by the model"
            case nvvm.CpAsyncBulkGlobalSharedCtaOp() if op.byte_mask is not None:
                return f"{op.name} with byte_mask is not executed by the model"
            case _:
                return None

    @impl(nvvm.CpAsyncBulkTensorSharedClusterGlobalOp)
    def run_tensor_load(
        self, interp: Interpreter, op: nvvm.CpAsyncBulkTensorSharedClusterGlobalOp, args: PythonValues
    ) -> PythonValues:
        warp = as_warp(interp)
        slots = self.static(op, _tensor_load_slots)
        dst, tmap_at, mbar, pair = args[slots.dst], args[slots.tmap], args[slots.mbar], slots.pair
        mask = None if slots.mask is None else args[slots.mask]
        maps = warp.cluster.memory.tensor_maps
        for lane in _lanes(warp, None if slots.predicate is None else args[slots.predicate]):
            tmap = bulk_copy.tensor_map_at(maps, at(tmap_at, lane), op.name)
            coords = [bulk_copy.signed32(at(args[c], lane)) for c in slots.coordinates]
            ranks = None if mask is None else at(mask, lane) & 0xFFFF
            for to, bar in bulk_copy.multicast_targets(ranks, at(dst, lane), at(mbar, lane)):
                bulk_copy.tensor_load(warp, op, op.name, tmap, coords, to, bar, pair)
        return ()

    def _to_global(
        self,
        interp: Interpreter,
        op: nvvm.CpAsyncBulkTensorGlobalSharedCtaOp | nvvm.CpAsyncBulkTensorReduceOp,
        args: PythonValues,
    ) -> PythonValues:
        warp = as_warp(interp)
        values = dict(zip(op.operands, args, strict=True))
        reduction = op.red_kind.data.value if isinstance(op, nvvm.CpAsyncBulkTensorReduceOp) else None
        predicate = getattr(op, "predicate", None)
        maps = warp.cluster.memory.tensor_maps
        for lane in _lanes(warp, None if predicate is None else values[predicate]):
            tmap = bulk_copy.tensor_map_at(maps, at(values[op.tma_descriptor], lane), op.name)
            coords = [bulk_copy.signed32(at(values[c], lane)) for c in op.coordinates]
            bulk_copy.tensor_store(warp, op, op.name, tmap, coords, at(values[op.src_mem], lane), reduction, lane)
        return ()

    run_tensor_store = impl(nvvm.CpAsyncBulkTensorGlobalSharedCtaOp)(_to_global)
    run_tensor_reduce = impl(nvvm.CpAsyncBulkTensorReduceOp)(_to_global)

    @impl(nvvm.CpAsyncBulkSharedClusterGlobalOp)
    def run_bulk_load(
        self, interp: Interpreter, op: nvvm.CpAsyncBulkSharedClusterGlobalOp, args: PythonValues
    ) -> PythonValues:
        warp = as_warp(interp)
        dst, src, mbar, size = args[:4]
        for lane in warp.active_lanes():
            bulk_copy.bulk_load(warp, op, op.name, at(dst, lane), at(src, lane), at(size, lane), at(mbar, lane))
        return ()

    @impl(nvvm.CpAsyncBulkGlobalSharedCtaOp)
    def run_bulk_store(
        self, interp: Interpreter, op: nvvm.CpAsyncBulkGlobalSharedCtaOp, args: PythonValues
    ) -> PythonValues:
        warp = as_warp(interp)
        dst, src, size = args[:3]
        for lane in warp.active_lanes():
            bulk_copy.bulk_store(warp, op, op.name, at(dst, lane), at(src, lane), at(size, lane), lane)
        return ()

    @impl(nvvm.CpAsyncBulkCommitGroupOp)
    def run_commit_group(
        self, interp: Interpreter, op: nvvm.CpAsyncBulkCommitGroupOp, args: PythonValues
    ) -> PythonValues:
        """Each active lane closes its bulk async-group (bulk_copy.py: the stores' reads
        of shared memory are pending until a wait completes them)."""
        warp = as_warp(interp)
        bulk_copy.bulk_commit(warp, warp.active_lanes())
        return ()

    @impl(nvvm.CpAsyncBulkWaitGroupOp)
    def run_wait_group(self, interp: Interpreter, op: nvvm.CpAsyncBulkWaitGroupOp, args: PythonValues) -> PythonValues:
        """`wait_group` and `wait_group.read` alike complete the reads of all but the
        `group` most recent groups (the model's stores wrote global memory when issued)."""
        warp = as_warp(interp)
        bulk_copy.bulk_wait(warp, warp.active_lanes(), op.group.value.data)
        return ()

    @impl(nvvm.PrefetchTensormapOp)
    def run_prefetch(self, interp: Interpreter, op: nvvm.PrefetchTensormapOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        maps = warp.cluster.memory.tensor_maps
        for lane in _lanes(warp, None if op.predicate is None else args[1]):
            bulk_copy.check_prefetch(maps, at(args[0], lane), op.name)
        return ()

    def _tensormap_fence(self, interp: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        """`fence.proxy.tensormap::generic`: orders generic-proxy writes of a tensor map
        before tensormap-proxy reads of it. The model's tensor maps are launch arguments
        (grid-constant parameters, never written), so there is nothing to order."""
        return ()

    run_fence_acquire = impl(nvvm.FenceProxyAcquireOp)(_tensormap_fence)
    run_fence_release = impl(nvvm.FenceProxyReleaseOp)(_tensormap_fence)
