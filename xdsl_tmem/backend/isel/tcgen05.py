"""Rules for the `nvvm` dialect's tcgen05 ops (alloc, ld/st, mma, cp, shift, commit, ...).

Mnemonics are llc-22's (`tcgen05.mma...collector::a::discard`, ...); the tcgen05.ld/st
shape and register count come from the nvvm dialect's table
(`nvvm.Tcgen05LdStShape`). A feature the target lacks (`kind::i8`, `tcgen05.shift`
on `f` targets) is reported here, at the op, instead of as a ptxas error.
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import (
    i1,
    i32,
    i64,
)
from xdsl.ir import SSAValue

from xdsl_tmem.backend.isel.core import (
    FunctionSelector,
    address_space,
    rule,
)
from xdsl_tmem.dialects import nvvm, ptx
from xdsl_tmem.dialects.ptx import PtxType
from xdsl_tmem.dialects.utils import CtaGroupUser, constant_int

# --------------------------------------------------------------------------------------
# tcgen05
# --------------------------------------------------------------------------------------


def _cta_group(fs: FunctionSelector, op: CtaGroupUser) -> int:
    """`.cta_group::N` through the op's own accessor (`used_cta_group`)."""
    group = op.used_cta_group()
    if group is None:
        raise fs.error(op, f"{op.name} has no cta_group")  # every tcgen05 op selected here has one
    return group


@rule(nvvm.Tcgen05AllocOp)
def _tcgen05_alloc(fs: FunctionSelector, op: nvvm.Tcgen05AllocOp) -> None:
    address = fs.address(op.addr)
    shared = address_space(op.addr.type) == 3
    fs.emit(ptx.Tcgen05AllocOp(_cta_group(fs, op), shared, address.base, fs.scalar(op.n_cols), address.offset))


@rule(nvvm.Tcgen05DeallocOp)
def _tcgen05_dealloc(fs: FunctionSelector, op: nvvm.Tcgen05DeallocOp) -> None:
    fs.emit(ptx.Tcgen05DeallocOp(_cta_group(fs, op), fs.reg(fs.address(op.taddr)), fs.scalar(op.n_cols)))


@rule(nvvm.Tcgen05RelinquishAllocPermitOp)
def _tcgen05_relinquish(fs: FunctionSelector, op: nvvm.Tcgen05RelinquishAllocPermitOp) -> None:
    fs.emit(ptx.Tcgen05RelinquishOp(_cta_group(fs, op)))


@rule(nvvm.Tcgen05FenceOp)
def _tcgen05_fence(fs: FunctionSelector, op: nvvm.Tcgen05FenceOp) -> None:
    fs.emit(ptx.Tcgen05FenceOp(op.kind.data))


@rule(nvvm.Tcgen05WaitOp)
def _tcgen05_wait(fs: FunctionSelector, op: nvvm.Tcgen05WaitOp) -> None:
    fs.emit(ptx.Tcgen05WaitOp(op.kind.data))


@rule(nvvm.Tcgen05CommitOp)
def _tcgen05_commit(fs: FunctionSelector, op: nvvm.Tcgen05CommitOp) -> None:
    address = fs.address(op.addr)
    mask = None if op.multicast_mask is None else fs.reg(op.multicast_mask, "b16")
    fs.emit(ptx.Tcgen05CommitOp(_cta_group(fs, op), address.base, mask, address.offset))


def _split_offset(fs: FunctionSelector, op: nvvm.NVVMOp, offset: SSAValue | None) -> SSAValue | None:
    if offset is None:
        return None
    if (value := constant_int(offset)) is None:
        raise fs.error(op, "the 16x32bx2 half-split offset must be a constant")
    return fs.imm(value)


@rule(nvvm.Tcgen05LdOp)
def _tcgen05_ld(fs: FunctionSelector, op: nvvm.Tcgen05LdOp) -> None:
    count = nvvm.ldst_register_count(op.res.type)
    if count is None:
        raise fs.error(op, f"tcgen05.ld of {op.res.type} (the verifier allows i32 or vector<N x i32>)")
    registers = [fs.fresh("b32") for _ in range(count)]
    load = fs.emit(
        ptx.Tcgen05LdOp(
            op.shape.data,
            registers,
            fs.reg(fs.address(op.tmem_addr)),
            _split_offset(fs, op, op.offset),
            pack=op.pack is not None,
        )
    )
    fs.define(op.res, list(load.res))


@rule(nvvm.Tcgen05StOp)
def _tcgen05_st(fs: FunctionSelector, op: nvvm.Tcgen05StOp) -> None:
    values = [fs.reg(v, "b32") for v in fs.get(op.val)]
    fs.emit(
        ptx.Tcgen05StOp(
            op.shape.data,
            fs.reg(fs.address(op.tmem_addr)),
            values,
            _split_offset(fs, op, op.offset),
            unpack=op.unpack is not None,
        )
    )


@rule(nvvm.Tcgen05MMAOp)
def _tcgen05_mma(fs: FunctionSelector, op: nvvm.Tcgen05MMAOp) -> None:
    kind = op.kind.data
    if kind == nvvm.Tcgen05MMAKind.I8 and not fs.arch.mma_i8:
        raise fs.error(op, f"tcgen05.mma kind::i8 is not available on {fs.arch.name} (only sm_100a and sm_110a)")
    collector = op.collector_op.data
    a_tmem = address_space(op.matrix_a.type) == 6
    a = fs.reg(fs.address(op.matrix_a)) if a_tmem else fs.reg(op.matrix_a)
    enable = fs.scalar(op.enable_input_d)
    if not isinstance(enable.type, ptx.RegisterType) and enable.type != i1:
        enable = fs.reg(enable, "pred")
    mask = [] if op.disable_output_lane is None else [fs.reg(v, "b32") for v in fs.get(op.disable_output_lane)]
    scale = None
    if op.scale_input_d is not None:
        if not fs.arch.mma_scale:
            raise fs.error(op, f"the tcgen05.mma scale-input-d operand is not available on {fs.arch.name}")
        if (value := constant_int(op.scale_input_d)) is None:
            raise fs.error(op, "the scale-input-d operand must be a constant")
        scale = fs.imm(value)
    fs.emit(
        ptx.Tcgen05MmaOp(
            ptx.Tcgen05MmaForm(_cta_group(fs, op), kind, collector, a_tmem=a_tmem, ashift=op.a_shift is not None),
            fs.reg(fs.address(op.matrix_d)),
            a,
            fs.reg(op.matrix_b),
            fs.scalar(op.idesc),
            enable,
            mask=mask,
            scale=scale,
        )
    )


@rule(nvvm.Tcgen05CpOp)
def _tcgen05_cp(fs: FunctionSelector, op: nvvm.Tcgen05CpOp) -> None:
    source_format = None if op.src_format is None else op.src_format.data
    taddr, desc = fs.reg(fs.address(op.taddr)), fs.reg(op.smem_desc)
    fs.emit(ptx.Tcgen05CpOp(_cta_group(fs, op), op.shape.data, op.multicast.data, source_format, taddr, desc))


@rule(nvvm.Tcgen05ShiftOp)
def _tcgen05_shift(fs: FunctionSelector, op: nvvm.Tcgen05ShiftOp) -> None:
    if not fs.arch.shift:
        raise fs.error(op, f"tcgen05.shift is not available on {fs.arch.name} (only the 'a' targets)")
    fs.emit(ptx.Tcgen05ShiftOp(_cta_group(fs, op), fs.reg(fs.address(op.taddr))))


@rule(nvvm.Tcgen05MmaSmemDescOp)
def _tcgen05_mma_smem_desc(fs: FunctionSelector, op: nvvm.Tcgen05MmaSmemDescOp) -> None:
    """Bit packing as upstream's lowering does it (docs/ptx-nvvm.md §1.7): the start, LBO and
    SBO operands are already encoded (>> 4); start | LBO << 16 | SBO << 32 | 1 << 46 |
    base << 49 | mode << 52 | swizzle << 61, each field masked to its width."""

    def field(value: SSAValue, bits: int, shift: int) -> SSAValue:
        source = fs.reg(value)
        kind = cast(ptx.RegisterType, source.type).kind.data
        width = {"pred": 1, "b16": 16, "b32": 32, "b64": 64}[kind]
        if kind == "pred":
            source = fs.emit(ptx.SelpOp(PtxType.B32, fs.fresh("b32"), fs.imm(1), fs.imm(0), source)).res
            width = 32
        if width != 64:
            source = fs.emit(ptx.CvtOp(PtxType.U64, PtxType.of("u", width), fs.fresh("b64"), source)).res
        masked = fs.emit(ptx.AndOp(PtxType.B64, fs.fresh("b64"), source, fs.imm((1 << bits) - 1, i64))).res
        if shift == 0:
            return masked
        return fs.emit(ptx.ShlOp(PtxType.B64, fs.fresh("b64"), masked, fs.imm(shift, i32))).res

    parts = [
        field(op.start_addr, 14, 0),
        field(op.leading_dim_offset, 14, 16),
        field(op.stride_dim_offset, 14, 32),
        field(op.base_offset, 3, 49),
        field(op.leading_dim_mode, 1, 52),
        field(op.swizzle_mode, 3, 61),
    ]
    descriptor = fs.emit(ptx.OrOp(PtxType.B64, fs.fresh("b64"), parts[0], fs.imm(1 << 46, i64))).res
    for part in parts[1:]:
        descriptor = fs.emit(ptx.OrOp(PtxType.B64, fs.fresh("b64"), descriptor, part)).res
    fs.define(op.res, [descriptor])
