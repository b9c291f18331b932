"""`llvm`: globals in shared memory, pointer arithmetic, loads and stores, integer ops.

Pointers are addresses (machine.py): a shared-memory global's address is its offset in
the CTA's layout (declaration order, aligned, as ptxas places `.shared` variables)
plus the CTA's rank bits; kernel buffers are global addresses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

import numpy as np
from xdsl.dialects import llvm
from xdsl.dialects.builtin import VectorType
from xdsl.interpreter import (
    Interpreter,
    PythonValues,
    ReturnedValues,
    TerminatorValue,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from xdsl_tmem.dialects import nvvm
from xdsl_tmem.dialects.llvm_ext import AddrSpaceCastOp, ExtractElementOp
from xdsl_tmem.interpreter import arith as A
from xdsl_tmem.interpreter import floats as F
from xdsl_tmem.interpreter.executor import StructuredGen, Warp, WarpFunctions, as_warp, impl_structured
from xdsl_tmem.interpreter.func import call
from xdsl_tmem.interpreter.machine import GLOBAL_BASE, RANK_SHIFT, SHARED_LIMIT, Hazard
from xdsl_tmem.interpreter.memory import Access, load, size_of, store, struct_offset
from xdsl_tmem.interpreter.values import WARP, Lanes, UnsupportedValue, Value, as_signed, dtype_of, width_of

_MASK64 = (1 << 64) - 1


def _w(op: Operation) -> int:
    return width_of(op.results[0].type)


def _binary(fn: Callable[[Value, Value, int], Value]):
    def run(self: LlvmFunctions, interp: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return (fn(args[0], args[1], self.static(op, _w)),)

    return run


def _float(plan: Callable[[Any], F.FloatFn]):
    """An impl computing `plan(op)` (the op's PTX semantics, derived once per op)."""

    def run(self: LlvmFunctions, interp: Interpreter, op: Operation, args: PythonValues) -> PythonValues:
        return (self.static(op, plan)(*args),)

    return run


def _zero(t: Attribute) -> Value:
    dtype = dtype_of(t)
    if isinstance(t, VectorType):
        return np.zeros((WARP, cast(VectorType, t).element_count()), dtype=dtype)
    return dtype.type(0).item()


def gep_plan(op: llvm.GEPOp) -> tuple[int, tuple[tuple[int, int], ...]]:
    """`llvm.getelementptr` as (constant byte offset, ((stride, index width) per dynamic index))."""
    constant = 0
    dynamic: list[tuple[int, int]] = []
    current: Attribute = op.elem_type
    ssa = iter(op.ssa_indices)
    for position, raw in enumerate(op.rawConstantIndices.iter_values()):
        if position > 0 and isinstance(current, llvm.LLVMStructType):
            constant += struct_offset(current, raw)  # struct indices are constants (verifier)
            current = current.types.data[raw]
            continue
        if position > 0:
            if not isinstance(current, llvm.LLVMArrayType):
                raise UnsupportedValue(f"llvm.getelementptr cannot index into {current}")
            current = current.type
        stride = size_of(current)
        if raw == llvm.GEP_USE_SSA_VAL:
            dynamic.append((stride, width_of(next(ssa).type)))
        else:
            constant += raw * stride
    return constant, tuple(dynamic)


def gep_offset(plan: tuple[int, tuple[tuple[int, int], ...]], indices: PythonValues) -> Value:
    """The byte offset of a `llvm.getelementptr` (dynamic indices are sign-extended)."""
    offset: Value = plan[0]
    for (stride, width), value in zip(plan[1], indices, strict=True):
        index = as_signed(value, width)
        if isinstance(index, np.ndarray):
            # A new array (astype copies), so scaled and summed in place: the common GEP
            # (one dynamic index, no constant part) then costs one array operation.
            term: Lanes = cast(Lanes, index).astype(np.int64)
            if stride != 1:
                term *= stride
            if isinstance(offset, np.ndarray):
                term += offset
            elif offset:
                term += offset
            offset = term
        else:
            offset = offset + index * stride
    return offset


def check_window(warp: Warp, address: Value, space: int, what: str) -> None:
    """What `cvta.to` requires of an address (the same number in every space of the
    model): that each active lane's lies in the target space's window (1: global memory,
    3: this CTA's shared memory, 7: the cluster's; 0, generic, takes any)."""
    lanes = warp.lane_index()
    if isinstance(address, np.ndarray):
        selected = cast(np.ndarray[Any, Any], address if lanes is None else address[lanes])
        addresses = {int(v) for v in selected.reshape(-1).tolist()}
    else:
        addresses = {int(address)}
    ranks = {3: [warp.cta.rank], 7: list(range(len(warp.cluster.ctas)))}
    for a in sorted(addresses):
        if space == 1 and a < GLOBAL_BASE:
            window = "global memory"
        elif space in ranks and (a >= SHARED_LIMIT or a >> RANK_SHIFT not in ranks[space]):
            window = "this CTA's shared memory" if space == 3 else "the cluster's shared memory"
        else:
            continue
        raise Hazard(
            "out-of-bounds",
            f"{what}: address 0x{a:x} is not in {window} (cvta.to on such an address is undefined)",
        )


def _cast_types(op: Operation) -> tuple[Attribute, Attribute]:
    return op.operands[0].type, op.results[0].type


@register_impls
class LlvmFunctions(WarpFunctions):
    @impl(llvm.AddressOfOp)
    def run_addressof(self, interp: Interpreter, op: llvm.AddressOfOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        name = op.global_name.string_value()
        placed = warp.cta.layout.symbols.get(name)
        if placed is None:
            raise UnsupportedValue(
                f"llvm.mlir.addressof @{name}: only shared-memory (addr_space 3) globals are supported"
            )
        return ((warp.cta.rank << RANK_SHIFT) | placed[0],)

    @impl(llvm.ConstantOp)
    def run_constant(self, interp: Interpreter, op: llvm.ConstantOp, args: PythonValues) -> PythonValues:
        return (A.constant(self, op),)

    @impl(llvm.ZeroOp)
    def run_zero(self, interp: Interpreter, op: llvm.ZeroOp, args: PythonValues) -> PythonValues:
        return (_zero(op.res.type),)

    @impl(llvm.UndefOp)
    def run_undef(self, interp: Interpreter, op: llvm.UndefOp, args: PythonValues) -> PythonValues:
        # Undefined contents: zeros, so that runs are reproducible.
        return (_zero(op.res.type),)

    @impl(llvm.GEPOp)
    def run_gep(self, interp: Interpreter, op: llvm.GEPOp, args: PythonValues) -> PythonValues:
        base = args[0]
        offset = gep_offset(self.static(op, gep_plan), args[1:])
        if isinstance(offset, np.ndarray):
            start: Lanes | int = cast(Lanes, base).view(np.int64) if isinstance(base, np.ndarray) else int(base)
            lanes = cast(Lanes, offset)
            lanes += start  # (`gep_offset`'s own array)
            return (lanes.view(np.uint64),)
        if isinstance(base, np.ndarray):
            return (base + np.uint64(offset & _MASK64),)  # wraps modulo 2^64 like the hardware
        return ((int(base) + offset) & _MASK64,)

    @impl(llvm.LoadOp)
    def run_load(self, interp: Interpreter, op: llvm.LoadOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        access = self.static(op, lambda o: Access.of(o.dereferenced_value.type))
        return (load(warp, op, args[0], access),)

    @impl(llvm.StoreOp)
    def run_store(self, interp: Interpreter, op: llvm.StoreOp, args: PythonValues) -> PythonValues:
        warp = as_warp(interp)
        value, address = args
        access = self.static(op, lambda o: Access.of(o.value.type))
        store(warp, op, address, value, access)
        return ()

    @impl(llvm.PtrToIntOp)
    def run_ptrtoint(self, interp: Interpreter, op: llvm.PtrToIntOp, args: PythonValues) -> PythonValues:
        return (A.int_resize(args[0], 64, self.static(op, _w), signed=False),)

    @impl(llvm.IntToPtrOp)
    def run_inttoptr(self, interp: Interpreter, op: llvm.IntToPtrOp, args: PythonValues) -> PythonValues:
        return (A.int_resize(args[0], self.static(op, A.widths)[0], 64, signed=False),)

    @impl(llvm.BitcastOp)
    def run_bitcast(self, interp: Interpreter, op: llvm.BitcastOp, args: PythonValues) -> PythonValues:
        return (A.bitcast(args[0], *self.static(op, _cast_types)),)

    @impl(ExtractElementOp)
    def run_extractelement(self, interp: Interpreter, op: ExtractElementOp, args: PythonValues) -> PythonValues:
        vector, position = args
        if isinstance(position, np.ndarray):
            picked: Any = vector[np.arange(WARP), position.astype(np.int64)]
        else:
            picked = vector[:, int(position)]
        return (picked.copy(),)

    @impl(llvm.InsertElementOp)
    def run_insertelement(self, interp: Interpreter, op: llvm.InsertElementOp, args: PythonValues) -> PythonValues:
        vector, value, position = args
        out = vector.copy()
        if isinstance(position, np.ndarray):
            out[np.arange(WARP), position.astype(np.int64)] = value
        else:
            out[:, int(position)] = value
        return (out,)

    @impl(AddrSpaceCastOp)
    def run_addrspacecast(self, interp: Interpreter, op: AddrSpaceCastOp, args: PythonValues) -> PythonValues:
        """An address is the same number in every space of the model (machine.py), so
        the cast keeps it and checks what `cvta.to` requires: that it lies in the
        target space's window (shared::cta: this CTA's shared memory)."""
        space = self.static(op, lambda o: nvvm.address_space(o.res.type))
        if space is None:
            raise UnsupportedValue("llvm.addrspacecast of vectors of pointers is not supported by the interpreter")
        if space not in (0, 1, 3, 7):
            raise UnsupportedValue(f"llvm.addrspacecast to address space {space}: the machine model has no such memory")
        check_window(as_warp(interp), args[0], space, f"llvm.addrspacecast to address space {space}")
        return (args[0],)

    # -- integer and float arithmetic (the forms --convert-arith-to-llvm produces) -----

    run_add = impl(llvm.AddOp)(_binary(A.int_add))
    run_sub = impl(llvm.SubOp)(_binary(A.int_sub))
    run_mul = impl(llvm.MulOp)(_binary(A.int_mul))
    run_and = impl(llvm.AndOp)(_binary(A.int_bitwise("and")))
    run_or = impl(llvm.OrOp)(_binary(A.int_bitwise("or")))
    run_xor = impl(llvm.XOrOp)(_binary(A.int_bitwise("xor")))
    run_shl = impl(llvm.ShlOp)(_binary(lambda a, b, w: A.int_shift(a, b, w, "shl")))
    run_lshr = impl(llvm.LShrOp)(_binary(lambda a, b, w: A.int_shift(a, b, w, "shrui")))
    run_ashr = impl(llvm.AShrOp)(_binary(lambda a, b, w: A.int_shift(a, b, w, "shrsi")))
    run_udiv = impl(llvm.UDivOp)(_binary(lambda a, b, w: A.int_div(a, b, w, signed=False, rem=False)))
    run_sdiv = impl(llvm.SDivOp)(_binary(lambda a, b, w: A.int_div(a, b, w, signed=True, rem=False)))
    run_urem = impl(llvm.URemOp)(_binary(lambda a, b, w: A.int_div(a, b, w, signed=False, rem=True)))
    run_srem = impl(llvm.SRemOp)(_binary(lambda a, b, w: A.int_div(a, b, w, signed=True, rem=True)))

    @impl(llvm.ICmpOp)
    def run_icmp(self, interp: Interpreter, op: llvm.ICmpOp, args: PythonValues) -> PythonValues:
        return (A.int_cmp(args[0], args[1], *self.static(op, A.cmp_static)),)

    @impl(llvm.SelectOp)
    def run_select(self, interp: Interpreter, op: llvm.SelectOp, args: PythonValues) -> PythonValues:
        return (A.select(args[0], args[1], args[2], self.static(op, A.result_type)),)

    @impl(llvm.ZExtOp)
    def run_zext(self, interp: Interpreter, op: llvm.ZExtOp, args: PythonValues) -> PythonValues:
        return (A.int_resize(args[0], *self.static(op, A.widths), signed=False),)

    @impl(llvm.SExtOp)
    def run_sext(self, interp: Interpreter, op: llvm.SExtOp, args: PythonValues) -> PythonValues:
        return (A.int_resize(args[0], *self.static(op, A.widths), signed=True),)

    @impl(llvm.TruncOp)
    def run_trunc(self, interp: Interpreter, op: llvm.TruncOp, args: PythonValues) -> PythonValues:
        return (A.int_resize(args[0], *self.static(op, A.widths), signed=False),)

    # Float ops: as the PTX instruction each lowers to (floats.py).
    run_fadd = impl(llvm.FAddOp)(_float(F.binary))
    run_fmul = impl(llvm.FMulOp)(_float(F.binary))
    run_fsub = impl(llvm.FSubOp)(_float(F.binary))
    run_fdiv = impl(llvm.FDivOp)(_float(F.binary))
    run_sitofp = impl(llvm.SIToFPOp)(_float(F.convert))
    run_fpext = impl(llvm.FPExtOp)(_float(F.convert))

    # -- calls ------------------------------------------------------------------------

    @impl_structured(llvm.CallOp)
    def run_call(self, warp: Warp, op: llvm.CallOp, args: PythonValues) -> StructuredGen:
        if op.callee is None:
            raise UnsupportedValue("llvm.call: indirect calls are not supported")
        return (yield call(warp, warp.get_op_for_symbol(op.callee), args))

    @impl_terminator(llvm.ReturnOp)
    def run_return(
        self, interp: Interpreter, op: llvm.ReturnOp, args: PythonValues
    ) -> tuple[TerminatorValue, PythonValues]:
        return ReturnedValues(args), ()
