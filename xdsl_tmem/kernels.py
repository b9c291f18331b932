"""The kernel builder: Mojo's default SM100 matmul (docs/semantics.md §8.3, §8.4) for a
configuration, built with xDSL op constructors and verified with our verifiers.

    config = MatmulConfig(stages=4, stride=128, mma_n=128)
    module = build_matmul(config)          # a verified tmem-level ModuleOp
    text = kernel_text(config)             # the same kernel as MLIR text

Two operand paths, as the shipped examples:

* `operands="copy"` (examples/matmul_cg*.mlir): every thread copies the A and B tiles,
  already in the no-swizzle K-major core-matrix order, from global into shared memory
  once; the MMA warp runs `ntiles` tiles of the same product through the accumulator
  ring; the epilogue stores each thread's accumulator registers in load order.
* `operands="tma"` (examples/tma_gemm_cg*.mlir): a TMA load warp fills an input pipeline
  of 128B-swizzled boxes with `arrive.expect_tx`; the kernel is a GEMM C = A @ B.T over
  runtime M, N, K, persistent over the output tiles; the epilogue stores rows of C.

A configuration the verifiers refuse fails with their message (`KernelConfigError`, a
`CompileError`): a type's rule (stages * stride > 512), an op's (the view's N above the
stride, a tcgen05.ld repeat), the machine model's instruction-descriptor rule (N for M).
Facts no op can check (the K of a tile against the MMA's K, the epilogue's steps
against N) get their own message naming the field. docs/api.md, "Kernel builder".
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from io import StringIO
from pathlib import Path
from typing import Literal, NoReturn, cast, get_args

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, llvm, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    NoneAttr,
    UnitAttr,
    VectorType,
    f32,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from xdsl_tmem.api import CompileError
from xdsl_tmem.diagnostics import Diagnostic, SourceMap, verify_located
from xdsl_tmem.dialects import nvvm as nv
from xdsl_tmem.dialects import tmem
from xdsl_tmem.dialects.llvm_ext import AddrSpaceCastOp
from xdsl_tmem.dialects.nvvm.tma import TensorLoadOptions
from xdsl_tmem.interpreter.tcgen05 import D_FORMATS, ELEMENT_BYTES, K_PER_MMA, KIND_FORMATS

__all__ = [
    "EXAMPLE_CONFIGS",
    "KernelConfigError",
    "MatmulConfig",
    "build_matmul",
    "example_config",
    "example_differences",
    "kernel_text",
]

Operands = Literal["copy", "tma"]
MmaKind = Literal["f16", "tf32", "f8f6f4", "i8"]
LdShape = Literal["16x256b", "32x32b"]


@dataclass(frozen=True)
class _Kind:
    """An MMA kind with the A/B and D formats the builder gives it; their codes and sizes
    are the machine model's tables (interpreter/tcgen05.py, docs/ptx-nvvm.md §1.7)."""

    name: str
    ab_format: str
    d_format: str

    @property
    def element_bytes(self) -> int:
        return ELEMENT_BYTES[self.ab_format]

    @property
    def ab_code(self) -> int:
        """The instruction descriptor's A and B format code (A and B K-major, no negation)."""
        return next(code for code, f in KIND_FORMATS[self.name].items() if f == self.ab_format)

    @property
    def d_code(self) -> int:
        return next(code for code, f in D_FORMATS.items() if f == self.d_format)

    @property
    def k_bytes(self) -> int:
        """The bytes of K per row one tcgen05.mma consumes (32 for every kind: two 16-byte
        core matrices; PTX ISA, tcgen05.mma shapes)."""
        return K_PER_MMA[self.name] * self.element_bytes


KINDS: dict[str, _Kind] = {
    kind: _Kind(kind, ab, d)
    for kind, ab, d in (("f16", "f16", "f32"), ("tf32", "tf32", "f32"), ("f8f6f4", "e4m3", "f32"), ("i8", "s8", "s32"))
}
"""The MMA kinds and their operand formats: f16, tf32, e4m3 (f8f6f4), s8 (i8)."""

SWIZZLE_ROW_BYTES = 128
"""A 128B-swizzled TMA box row: the K extent of one input stage (docs/tma.md)."""
EPILOGUE_THREADS = 128
MMA_WARP = 4
LOAD_WARP = 5
TMEM_COLUMNS = 512


class KernelConfigError(CompileError):
    """A configuration the builder refuses; `field` names the `MatmulConfig` field a
    builder rule is about (None where an op or type verifier refused the kernel)."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(Diagnostic(message))
        self.field = field


@dataclass(frozen=True)
class MatmulConfig:
    """One Mojo default SM100 matmul. `None` fields take the default of the operand path
    (docs/api.md, "Kernel builder", lists each field's default and allowed values)."""

    cta_group: int = 1
    """1: one CTA; 2: a CTA pair (cluster of 2), the leader issues M = 256 MMAs."""
    operands: Operands = "copy"
    """`copy`: threads copy fixed operand tiles; `tma`: a TMA load warp and an input pipeline."""
    kind: MmaKind = "f16"
    """tcgen05.mma `.kind`: f16 (f16 operands), tf32, f8f6f4 (e4m3), i8 (s8; i32 results)."""
    mma_m: int | None = None
    """The MMA's M: 64 or 128 for cta_group 1, 256 for 2 (default 128 * cta_group)."""
    mma_n: int = 256
    """The MMA's N, the accumulator tile's columns."""
    k: int | None = None
    """copy: the operand tiles' K (default 32 elements); tma: one input stage's K block,
    one 128-byte swizzle row (128 / element bytes, the only value)."""
    stages: int = 2
    """Accumulator stages in TMEM."""
    stride: int | None = None
    """Columns between accumulator stages (default `mma_n`)."""
    ld_shape: LdShape | None = None
    """The epilogue's tcgen05.ld shape: 16x256b (`tmem_stage.load_upper/lower`, default for
    copy) or 32x32b (one row per thread, default for tma)."""
    ld_repeat: int | None = None
    """Its `.x` repeat (default 4 for 16x256b, 32 for 32x32b)."""
    input_stages: int = 4
    """tma: stages of the A/B input pipeline."""
    name: str | None = None
    """The kernel's name (default matmul_cg<N> / tma_gemm_cg<N>)."""


EXAMPLE_CONFIGS: dict[str, MatmulConfig] = {
    "matmul_cg1": MatmulConfig(),
    "matmul_cg2": MatmulConfig(cta_group=2),
    "tma_gemm_cg1": MatmulConfig(operands="tma"),
    "tma_gemm_cg2": MatmulConfig(cta_group=2, operands="tma"),
}
"""The configurations of the shipped examples (examples/<name>.mlir)."""


# --------------------------------------------------------------------------------------
# The resolved configuration
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """Every number of the kernel, derived from a checked `MatmulConfig`."""

    config: MatmulConfig
    name: str
    cg: int
    tma: bool
    kind: _Kind
    m: int
    n: int
    k: int
    stages: int
    stride: int
    ld_shape: LdShape
    ld_repeat: int

    @property
    def elem(self) -> int:
        return self.kind.element_bytes

    @property
    def mmas(self) -> int:
        """MMAs per tile (copy) or per K block (tma)."""
        return self.k * self.elem // self.kind.k_bytes

    @property
    def rows_a(self) -> int:
        return self.m // self.cg

    @property
    def rows_b(self) -> int:
        return self.n // self.cg

    @property
    def threads(self) -> int:
        return 32 * (LOAD_WARP + 1) if self.tma else 32 * (MMA_WARP + 1)

    @property
    def width(self) -> int:
        """Columns one epilogue load covers."""
        return 8 * self.ld_repeat if self.ld_shape == "16x256b" else self.ld_repeat

    @property
    def integer(self) -> bool:
        return self.kind.d_format == "s32"

    @property
    def acc_type(self) -> Attribute:
        return i32 if self.integer else f32

    @property
    def upper_only(self) -> bool:
        """M = 64 (cta_group 1) fills TMEM lanes 0-15 of each warp's quarter (Layout F)."""
        return self.m // self.cg == 64

    @property
    def idesc(self) -> int:
        kind = self.kind
        return (
            (kind.d_code << 4) | (kind.ab_code << 7) | (kind.ab_code << 10) | (self.n >> 3) << 17 | (self.m >> 4) << 24
        )

    @property
    def a_chunks(self) -> int:
        return self.rows_a * self.k * self.elem // 16

    @property
    def b_chunks(self) -> int:
        return self.rows_b * self.k * self.elem // 16

    @property
    def a_stage_bytes(self) -> int:
        return self.rows_a * SWIZZLE_ROW_BYTES

    @property
    def b_stage_bytes(self) -> int:
        return self.rows_b * SWIZZLE_ROW_BYTES

    @property
    def shared_stage(self) -> bool:
        """cta_group 2 with equal A and B halves: one stage size for both (the example's form)."""
        return self.cg == 2 and self.a_stage_bytes == self.b_stage_bytes

    @property
    def input_stages(self) -> int:
        return self.config.input_stages

    def ring_type(self) -> tmem.OutputRingType:
        return tmem.OutputRingType(self.stages, self.stride, self.cg)

    def stage_type(self) -> tmem.TmemStageType:
        return tmem.TmemStageType(self.stages, self.stride, self.cg)

    def context_types(self) -> tuple[tmem.MmaWarpContextType, tmem.EpilogueWarpContextType]:
        params = (self.stages, self.stride, self.cg, 32, EPILOGUE_THREADS, TMEM_COLUMNS)
        return tmem.MmaWarpContextType(*params), tmem.EpilogueWarpContextType(*params)


def _fail(field: str, value: object, allowed: str) -> KernelConfigError:
    return KernelConfigError(f"MatmulConfig.{field} = {value!r}: {allowed}", field)


def _choice(config: MatmulConfig, field: str, allowed: Sequence[object]) -> None:
    value = getattr(config, field)
    if value not in allowed:
        raise _fail(field, value, f"allowed: {', '.join(map(repr, allowed))}")


def _positive_int(config: MatmulConfig, field: str) -> None:
    value = getattr(config, field)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise _fail(field, value, "must be a positive integer")


def _plan(config: MatmulConfig) -> _Plan:
    """Check the fields no op can verify and resolve the defaults."""
    if not isinstance(config, MatmulConfig):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise KernelConfigError(f"build_matmul: expected a MatmulConfig, got {type(config).__name__}")
    for f in fields(MatmulConfig):
        if f.type in ("int", "int | None"):
            _positive_int(config, f.name)
    _choice(config, "operands", get_args(Operands))
    _choice(config, "kind", get_args(MmaKind))
    if config.ld_shape is not None:
        _choice(config, "ld_shape", get_args(LdShape))
    if config.name is not None and not str(config.name).isidentifier():
        raise _fail("name", config.name, "must be an identifier")
    tma = config.operands == "tma"
    cg = config.cta_group
    kind = KINDS[config.kind]
    ld_shape: LdShape = config.ld_shape or ("32x32b" if tma else "16x256b")
    m = config.mma_m or 128 * cg
    plan = _Plan(
        config=config,
        name=config.name or f"{'tma_gemm' if tma else 'matmul'}_cg{cg}",
        cg=cg,
        tma=tma,
        kind=kind,
        m=m,
        n=config.mma_n,
        k=config.k or (SWIZZLE_ROW_BYTES // kind.element_bytes if tma else 32),
        stages=config.stages,
        stride=config.stride or config.mma_n,
        ld_shape=ld_shape,
        ld_repeat=config.ld_repeat or (4 if ld_shape == "16x256b" else 32),
    )
    return plan


def _check_plan(plan: _Plan) -> None:
    """The builder's own rules: what the kernel's shape needs beyond any op's verifier."""
    _check_shape(plan)
    _check_epilogue(plan)
    _check_shared_memory(plan)


def _check_shape(plan: _Plan) -> None:
    mma_k = K_PER_MMA[plan.kind.name]
    if plan.tma and plan.k != SWIZZLE_ROW_BYTES // plan.elem:
        row = SWIZZLE_ROW_BYTES // plan.elem
        raise _fail("k", plan.k, f"a tma input stage holds one 128-byte swizzle row: K = {row}")
    if plan.k % mma_k:
        raise _fail("k", plan.k, f"must be a multiple of the K of one kind::{plan.config.kind} MMA ({mma_k})")
    if plan.cg == 2 and plan.m != 256:
        raise _fail("mma_m", plan.m, "cta_group 2 builds M = 256 (128 accumulator rows per CTA, lanes 0-127 of each)")
    if plan.n % plan.cg or (plan.cg == 2 and plan.rows_b % 8):
        raise _fail("mma_n", plan.n, "each CTA of the pair holds N / 2 rows of B: N must be a multiple of 16")
    if plan.tma and plan.upper_only:
        raise _fail("mma_m", plan.m, "a tma kernel's epilogue reads 128 rows per CTA: M = 128 (cta_group 1)")


def _check_epilogue(plan: _Plan) -> None:
    if plan.n % plan.width:
        raise _fail(
            "ld_repeat",
            plan.ld_repeat,
            f"one {plan.ld_shape}.x{plan.ld_repeat} load covers {plan.width} columns, which must divide N = {plan.n}",
        )
    if plan.upper_only and plan.ld_shape != "16x256b":
        raise _fail(
            "ld_shape",
            plan.ld_shape,
            "M = 64 fills TMEM lanes 0-15 of each warp's quarter (Layout F): only 16x256b (load_upper) reads them",
        )
    if plan.tma and plan.ld_shape != "32x32b":
        raise _fail("ld_shape", plan.ld_shape, "a tma kernel stores rows of C: 32x32b (one TMEM lane per thread)")


def _check_shared_memory(plan: _Plan) -> None:
    """The operand tiles (copy: static; tma: the dynamic ring) and the barriers fit one
    CTA's shared memory, as the machine model (and sm_100) has it."""
    from xdsl_tmem.interpreter.machine import MAX_SHARED_BYTES

    barriers = 8 * (2 * plan.stages + 1) + 4 + (16 * plan.input_stages if plan.tma else 0)
    if plan.tma:
        field, value = "input_stages", plan.input_stages
        a, b = plan.input_stages * plan.a_stage_bytes, plan.input_stages * plan.b_stage_bytes
    else:
        field, value = "k", plan.k
        a, b = 16 * plan.a_chunks, 16 * plan.b_chunks
    if a + b + barriers > MAX_SHARED_BYTES:
        raise _fail(
            field,
            value,
            f"the operand tiles need A {a} + B {b} bytes of shared memory (and {barriers} for the barriers), "
            f"more than the {MAX_SHARED_BYTES} of a CTA",
        )


def _check_descriptor(plan: _Plan) -> None:
    """The instruction descriptor as the machine model decodes every tcgen05.mma (the
    M/N/format rules of the PTX ISA); the same message the run would give."""
    from xdsl_tmem.interpreter.tcgen05 import DescriptorError, InstrDescriptor

    try:
        InstrDescriptor.decode_checked(plan.idesc, plan.config.kind, plan.cg)
    except DescriptorError as e:
        raise KernelConfigError(f"nvvm.tcgen05.mma: {e}", "mma_n") from None


# --------------------------------------------------------------------------------------
# IR helpers
# --------------------------------------------------------------------------------------


def _named(op: Operation, *names: str) -> SSAValue:
    for result, name in zip(op.results, names, strict=True):
        result.name_hint = name
    return op.results[0]


def _const(value: int, type_: IntegerType, name: str) -> SSAValue:
    return _named(arith.ConstantOp(IntegerAttr(value, type_)), name)


def _bool(value: bool) -> SSAValue:
    return _named(arith.ConstantOp(IntegerAttr(int(value), i1)), "true" if value else "false")


def _bin(cls: type[arith.SignlessIntegerBinaryOperation], lhs: SSAValue, rhs: SSAValue, name: str) -> SSAValue:
    return _named(cls(lhs, rhs), name)


def _cmp(lhs: SSAValue, rhs: SSAValue, predicate: str, name: str) -> SSAValue:
    return _named(arith.CmpiOp(lhs, rhs, predicate), name)


def _ext(value: SSAValue, name: str) -> SSAValue:
    return _named(arith.ExtUIOp(value, i64), name)


def _gep(base: SSAValue, index: SSAValue | int, element: Attribute, name: str) -> SSAValue:
    ptr_type = cast(llvm.LLVMPointerType, base.type)
    if isinstance(index, int):
        op = llvm.GEPOp(base, [index], element, result_type=ptr_type)
    else:
        op = llvm.GEPOp(base, [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[index], result_type=ptr_type)
    return _named(op, name)


def _ptr(space: int) -> llvm.LLVMPointerType:
    return llvm.LLVMPointerType(IntAttr(space)) if space else llvm.LLVMPointerType(NoneAttr())


def _array(size: int, element: Attribute) -> llvm.LLVMArrayType:
    return llvm.LLVMArrayType(size, element)


Body = Callable[..., Sequence[SSAValue]]


def _for(
    bounds: tuple[SSAValue, SSAValue, SSAValue], inits: Sequence[SSAValue], names: Sequence[str], body: Body
) -> list[SSAValue]:
    """`scf.for` over i32 `bounds`; `names`: the induction variable's, then each carried
    value's (`name` inside) and result's (`name`); `body(iv, *carried)` returns the yield."""
    block = Block(arg_types=[i32, *(v.type for v in inits)])
    for arg, name in zip(block.args, names[: 1 + len(inits)], strict=True):
        arg.name_hint = name
    with ImplicitBuilder(block):
        scf.YieldOp(*body(*block.args))
    op = scf.ForOp(*bounds, inits, block)
    for result, name in zip(op.results, names[1 + len(inits) :], strict=True):
        result.name_hint = name
    return list(op.results)


def _if(cond: SSAValue, then: Callable[[], None], otherwise: Callable[[], None] | None = None) -> None:
    def region(part: Callable[[], None]) -> Region:
        block = Block()
        with ImplicitBuilder(block):
            part()
            scf.YieldOp()
        return Region(block)

    scf.IfOp(cond, [], region(then), None if otherwise is None else region(otherwise))


def _region(arg_types: Sequence[Attribute], arg_names: Sequence[str], body: Callable[..., None]) -> Region:
    block = Block(arg_types=arg_types)
    for arg, name in zip(block.args, arg_names, strict=True):
        arg.name_hint = name
    with ImplicitBuilder(block):
        body(*block.args)
        tmem.YieldOp()
    return Region(block)


def _global(name: str, type_: Attribute, alignment: int, linkage: str = "internal") -> llvm.GlobalOp:
    return llvm.GlobalOp(type_, name, linkage, addr_space=3, alignment=alignment)


# --------------------------------------------------------------------------------------
# The kernel
# --------------------------------------------------------------------------------------


class _Builder:
    """Builds one kernel's function body; `c(v)` is the pooled i32 constant `%c<v>`."""

    def __init__(self, plan: _Plan, args: Sequence[SSAValue]):
        self.p = plan
        self.args = {a.name_hint: a for a in args}
        self.pool: dict[int, SSAValue] = {}
        self.v: dict[str, SSAValue] = {}

    def c(self, value: int) -> SSAValue:
        return self.pool[value]

    def arg(self, name: str) -> SSAValue:
        return self.args[name]

    # ---- prologue -----------------------------------------------------------------

    def pool_values(self) -> set[int]:
        """The i32 constants the examples declare first (ascending): loop bounds, shifts,
        warp indices and tile sizes; the others are made where they are used."""
        p = self.p
        values = {0, 1, MMA_WARP, 5, p.n // p.width, p.width}
        if p.tma:
            values |= {_log2_or(p.m), _log2_or(p.n), _log2_or(p.k), p.k, p.m, p.n, p.input_stages}
            values |= {p.rows_a, p.rows_b} if p.cg == 2 else set()
        else:
            values |= {EPILOGUE_THREADS, p.threads, p.a_chunks, p.b_chunks}
        return values

    def prologue(self) -> None:
        p = self.p
        for value in sorted(self.pool_values()):
            self.pool[value] = _const(value, i32, f"c{value}")
        if p.cg == 2:
            self.v["mask"] = _const(3, i16, "pair_mask" if p.tma else "pair")
        globals_ = [("tmem_slot", "slot"), ("accum_bars", "bars"), ("dealloc_bar", "dbar")]
        if p.tma:
            globals_.insert(1, ("input_bars", "in_bars"))
        for symbol, name in globals_:
            self.v[name] = _named(llvm.AddressOfOp(symbol, _ptr(3)), name)
        if p.tma:
            self.v["sa"] = _named(llvm.AddressOfOp("smem", _ptr(3)), "sa")
            self.v["sb"] = _gep(self.v["sa"], p.input_stages * p.a_stage_bytes, i8, "sb")
        else:
            self.v["sa"] = _named(llvm.AddressOfOp("smem_a", _ptr(3)), "sa")
            self.v["sb"] = _named(llvm.AddressOfOp("smem_b", _ptr(3)), "sb")
        self.v["tid"] = _named(nv.ThreadIdXOp(range=(0, p.threads)), "tid")
        self.v["warp"] = _bin(arith.ShRUIOp, self.v["tid"], self.c(5), "warp")
        if p.cg == 2:
            self.cluster_rank()
        if p.tma:
            self.tile_counts()

    def cluster_rank(self) -> None:
        rank = self.v["rank"] = _named(nv.ClusterCtaRankOp(), "rank")
        odd = self.v["odd"] = _bin(arith.AndIOp, rank, self.c(1), "odd")
        self.v["is_leader_cta"] = _cmp(odd, self.c(0), "eq", "is_leader_cta")
        if self.p.tma:
            self.v["leader_rank"] = _bin(arith.SubiOp, rank, odd, "leader_rank")

    def tile_counts(self) -> None:
        p, v = self.p, self.v
        v["bid"] = _named(nv.BlockIdXOp(), "bid")
        v["nctas"] = _named(nv.GridDimXOp(), "nctas")
        if p.cg == 2:
            v["first"] = _bin(arith.ShRUIOp, v["bid"], self.c(1), "pair")
            v["step"] = _bin(arith.ShRUIOp, v["nctas"], self.c(1), "npairs")
        else:
            v["first"], v["step"] = v["bid"], v["nctas"]
        v["tiles_m"] = _divide(self, self.arg("m"), p.m, "tiles_m")
        v["tiles_n"] = _divide(self, self.arg("n"), p.n, "tiles_n")
        v["ntiles"] = _bin(arith.MuliOp, v["tiles_m"], v["tiles_n"], "ntiles")
        v["nk"] = _divide(self, self.arg("k"), p.k, "nk")
        if p.cg == 2:
            v["half"] = _bin(arith.MuliOp, v["rank"], self.c(p.rows_a), "half")
            if p.rows_b != p.rows_a:
                v["half_b"] = _bin(arith.MuliOp, v["rank"], self.c(p.rows_b), "half_b")

    def init_barriers(self) -> None:
        p, v = self.p, self.v
        is_t0 = _cmp(v["tid"], self.c(0), "eq", "is_t0")
        count = p.cg * EPILOGUE_THREADS

        def then() -> None:
            if p.tma:
                tmem.PipelineInitBarriersOp(v["in_bars"], 1, 1, tmem.PipelineType(p.input_stages))
            tmem.RingInitBarriersOp(v["bars"], 1, count, p.ring_type())
            tmem.DeallocBarrierInitOp(v["dbar"], count, tmem.DeallocBarrierType(p.cg))
            nv.FenceMbarrierInitOp()

        _if(is_t0, then)

    def publish(self) -> None:
        """Barrier inits (and copied operands) visible to the CTA, or to the cluster."""
        if not self.p.tma:
            nv.FenceProxyOp(nv.ProxyKind.ASYNC_SHARED, nv.SharedSpace.CTA)
        if self.p.cg == 2:
            nv.ClusterArriveOp(aligned=True)
            nv.ClusterWaitOp(aligned=True)
        else:
            nv.Barrier0Op()

    # ---- copy operands ----------------------------------------------------------

    def copy_operands(self) -> None:
        p, v = self.p, self.v
        chunk = VectorType(i32, [4])

        def copy(src: SSAValue, dst: SSAValue, i: SSAValue, index: SSAValue, suffix: str) -> None:
            s = _gep(src, index, chunk, f"src{suffix}")
            value = _named(llvm.LoadOp(s, chunk, alignment=16), f"v{suffix}")
            d = _gep(dst, i, chunk, f"dst{suffix}")
            llvm.StoreOp(value, d, alignment=16)

        step = self.c(p.threads)
        if p.cg == 1:
            for src, dst, chunks in (("a", "sa", p.a_chunks), ("b", "sb", p.b_chunks)):

                def body(i: SSAValue, src: str = src, dst: str = dst) -> list[SSAValue]:
                    copy(self.arg(src), v[dst], i, i, "")
                    return []

                _for((v["tid"], self.c(chunks), step), [], ["i"], body)
            return
        if p.a_chunks == p.b_chunks:
            cta_off = _bin(arith.MuliOp, v["rank"], self.c(p.a_chunks), "cta_off")

            def both(i: SSAValue) -> list[SSAValue]:
                gi = _bin(arith.AddiOp, i, cta_off, "gi")
                copy(self.arg("a"), v["sa"], i, gi, "")
                copy(self.arg("b"), v["sb"], i, gi, "b")
                return []

            _for((v["tid"], self.c(p.a_chunks), step), [], ["i"], both)
            return
        for src, dst, chunks in (("a", "sa", p.a_chunks), ("b", "sb", p.b_chunks)):
            off = _bin(arith.MuliOp, v["rank"], self.c(chunks), f"cta_off_{src}")

            def half(i: SSAValue, src: str = src, dst: str = dst, off: SSAValue = off) -> list[SSAValue]:
                gi = _bin(arith.AddiOp, i, off, "gi")
                copy(self.arg(src), v[dst], i, gi, "")
                return []

            _for((v["tid"], self.c(chunks), step), [], ["i"], half)

    # ---- MMA warp ------------------------------------------------------------

    def descriptors(self) -> tuple[SSAValue, SSAValue]:
        p, v = self.p, self.v
        if p.tma:  # SWIZZLE_128B (code 2 at bit 61), SBO 1024 B, LBO 16 B (unused)
            hi = 2 << 61 | (1024 >> 4) << 32 | 1 << 16 | 1 << 46
        else:  # no swizzle, LBO 128 B (next core matrix along K), SBO 8 rows of K bytes
            hi = (p.k * p.elem * 8 >> 4) << 32 | (128 >> 4) << 16 | 1 << 46
        hi_v = _const(hi, i64, "hi")
        mask14 = _const(16383, i32, "mask14")
        out: list[SSAValue] = []
        for x in ("a", "b"):
            as_int = _named(llvm.PtrToIntOp(v[f"s{x}"], i32), f"s{x}_i")
            out.append(as_int)
        shifted = [_bin(arith.ShRUIOp, s, self.c(MMA_WARP), f"s{x}_s") for s, x in zip(out, "ab", strict=True)]
        masked = [_bin(arith.AndIOp, s, mask14, f"s{x}_m") for s, x in zip(shifted, "ab", strict=True)]
        wide = [_ext(s, f"s{x}_w") for s, x in zip(masked, "ab", strict=True)]
        a0, b0 = (_bin(arith.OrIOp, w, hi_v, f"{x}desc0") for w, x in zip(wide, "ab", strict=True))
        return a0, b0

    def mma_warp(self) -> None:
        p, v = self.p, self.v
        mma_type, _ = p.context_types()

        def body(ctx: SSAValue) -> None:
            if p.cg == 2:
                _if(v["is_leader_cta"], lambda: self.mma_loop(ctx))
            else:
                self.mma_loop(ctx)

        region = _region([mma_type], ["ctx"], body)
        tmem.MmaContextOp((v["slot"], v["bars"], v["dbar"]), mma_type, region, v.get("mask"))

    def mma_form(self) -> nv.Tcgen05MMAForm:
        return nv.Tcgen05MMAForm(self.p.cg, nv.Tcgen05MMAKind(self.p.config.kind))

    def mma_loop(self, ctx: SSAValue) -> None:
        if self.p.tma:
            self.tma_mma_loop(ctx)
        else:
            self.copy_mma_loop(ctx)

    def copy_mma_loop(self, ctx: SSAValue) -> None:
        p = self.p
        adesc, bdesc = self.descriptors()
        kstep = _const(2 * 128 >> 4, i64, "kstep")
        a_descs, b_descs = [adesc], [bdesc]
        for i in range(1, p.mmas):
            a_descs.append(_bin(arith.AddiOp, a_descs[-1], kstep, f"adesc{i}"))
            b_descs.append(_bin(arith.AddiOp, b_descs[-1], kstep, f"bdesc{i}"))
        idesc = _const(p.idesc, i32, "idesc")
        false, true = _bool(False), _bool(True)
        leader = _named(nv.ElectSyncOp(), "leader")
        ring0 = _named(tmem.ContextOutputRingOp(ctx), "ring0")

        def stage_body(stage: SSAValue) -> None:
            d = self.accumulator(stage)

            def issue() -> None:
                for i, (a, b) in enumerate(zip(a_descs, b_descs, strict=True)):
                    nv.Tcgen05MMAOp(self.mma_form(), d, a, b, idesc, false if i == 0 else true)

            _if(leader, issue)

        def tile(_t: SSAValue, ring: SSAValue) -> list[SSAValue]:
            region = _region([p.stage_type()], ["stage"], stage_body)
            return [_named(tmem.ProducerOp(ring, region, leader=leader), "next")]

        _for((self.c(0), self.arg("ntiles"), self.c(1)), [ring0], ["t", "ring", "ring_end"], tile)

    def accumulator(self, stage: SSAValue) -> SSAValue:
        p = self.p
        tensor_type = tmem.TensorType(p.m, p.n, p.acc_type, p.cg)
        acc = _named(tmem.StageTensorOp(stage, tensor_type), "acc")
        return _named(tmem.TensorAddressOp(acc), "d")

    def tma_mma_loop(self, ctx: SSAValue) -> None:
        p, v = self.p, self.v
        adesc, bdesc = self.descriptors()
        if p.shared_stage:
            units = [_const(p.a_stage_bytes >> 4, i64, "stage_units")] * 2
        else:
            units = [
                _const(p.a_stage_bytes >> 4, i64, "a_stage_units"),
                _const(p.b_stage_bytes >> 4, i64, "b_stage_units"),
            ]
        kstep = _const(p.kind.k_bytes >> 4, i64, "kstep")
        idesc = _const(p.idesc, i32, "idesc")
        true = _bool(True)
        leader = _named(nv.ElectSyncOp(), "leader")
        ring0 = _named(tmem.ContextOutputRingOp(ctx), "ring0")
        in0 = _named(tmem.PipelineCreateOp(v["in_bars"], tmem.PipelineType(p.input_stages)), "in0")

        def k_block(kb: SSAValue, pipe: SSAValue, d: SSAValue) -> list[SSAValue]:
            tmem.WaitProducerOp(pipe)
            s = _named(tmem.ConsumerStageOp(pipe), "s")
            empty = _named(tmem.ConsumerMbarOp(pipe, s), "empty")
            s64 = _ext(s, "s64")
            if p.shared_stage:
                step = _bin(arith.MuliOp, s64, units[0], "step")
                steps = [step, step]
            else:
                steps = [_bin(arith.MuliOp, s64, u, f"{x}_step") for u, x in zip(units, "ab", strict=True)]
            a_descs = [_bin(arith.AddiOp, adesc, steps[0], "a0")]
            b_descs = [_bin(arith.AddiOp, bdesc, steps[1], "b0")]
            for i in range(1, p.mmas):
                a_descs.append(_bin(arith.AddiOp, a_descs[-1], kstep, f"a{i}"))
                b_descs.append(_bin(arith.AddiOp, b_descs[-1], kstep, f"b{i}"))
            accumulate = _cmp(kb, self.c(0), "ne", "accumulate")

            def issue() -> None:
                for i, (a, b) in enumerate(zip(a_descs, b_descs, strict=True)):
                    nv.Tcgen05MMAOp(self.mma_form(), d, a, b, idesc, accumulate if i == 0 else true)
                nv.Tcgen05CommitOp(empty, v.get("mask"), p.cg)

            _if(leader, issue)
            return [_named(tmem.ConsumerStepOp(pipe), "p2")]

        def tile(_t: SSAValue, ring: SSAValue, pipe: SSAValue) -> list[SSAValue]:
            stage = _named(tmem.AcquireForMmaOp(ring), "stage")
            d = self.accumulator(stage)

            def k_body(kb: SSAValue, q: SSAValue) -> list[SSAValue]:
                return k_block(kb, q, d)

            (in_next,) = _for((self.c(0), v["nk"], self.c(1)), [pipe], ["kb", "p", "in_next"], k_body)
            ring_next = _named(tmem.ReleaseFromMmaOp(ring, stage, leader), "ring_next")
            return [ring_next, in_next]

        bounds = (v["first"], v["ntiles"], v["step"])
        _for(bounds, [ring0, in0], ["t", "ring", "in", "ring_end", "in_end"], tile)

    # ---- TMA load warp ---------------------------------------------------------

    def load_warp(self) -> None:
        p, v = self.p, self.v
        if p.cg == 2:
            tx = _const(p.cg * (p.a_stage_bytes + p.b_stage_bytes), i32, "pair_tx")
        else:
            tx = _const(p.a_stage_bytes + p.b_stage_bytes, i32, "stage_tx")
        if p.shared_stage:
            sizes = [_const(p.a_stage_bytes, i32, "stage_bytes")] * 2
        else:
            sizes = [_const(p.a_stage_bytes, i32, "a_stage_bytes"), _const(p.b_stage_bytes, i32, "b_stage_bytes")]
        elected = _named(nv.ElectSyncOp(), "elected")
        pipe_type = tmem.PipelineType(p.input_stages)
        in0 = _named(tmem.PipelineCreateOp(v["in_bars"], pipe_type), "in0")

        def k_block(kb: SSAValue, pipe: SSAValue, m0: SSAValue, n0: SSAValue) -> list[SSAValue]:
            tmem.WaitConsumerOp(pipe)
            s = _named(tmem.ProducerStageOp(pipe), "s")
            full = _named(tmem.ProducerMbarOp(pipe, s), "full")
            _if(elected, lambda: self.issue_boxes(kb, s, full, (tx, *sizes), (m0, n0)))
            return [_named(tmem.ProducerStepOp(pipe), "p2")]

        def tile(t: SSAValue, pipe: SSAValue) -> list[SSAValue]:
            m0, n0 = self.tile_origin(t, for_load=True)

            def k_body(kb: SSAValue, q: SSAValue) -> list[SSAValue]:
                return k_block(kb, q, m0, n0)

            return _for((self.c(0), v["nk"], self.c(1)), [pipe], ["kb", "p", "in_next"], k_body)

        (in_end,) = _for((v["first"], v["ntiles"], v["step"]), [in0], ["t", "in", "in_end"], tile)

        def drain(_i: SSAValue, pipe: SSAValue) -> list[SSAValue]:
            tmem.WaitConsumerOp(pipe)
            return [_named(tmem.ProducerStepOp(pipe), "p2")]

        _for((self.c(0), self.c(p.input_stages), self.c(1)), [in_end], ["i", "p", "drained"], drain)

    def issue_boxes(
        self, kb: SSAValue, s: SSAValue, full: SSAValue, sizes: Sequence[SSAValue], origin: tuple[SSAValue, SSAValue]
    ) -> None:
        p, v = self.p, self.v
        tx, a_size, b_size = sizes
        if p.cg == 2:

            def arm() -> None:  # only the leader arms full[s], with both CTAs' bytes
                nv.MBarrierArriveExpectTxOp(full, tx)

            _if(v["is_leader_cta"], arm)
            full7 = _named(nv.MapaOp(full, v["leader_rank"]), "leader_full7")
            full_i = _named(llvm.PtrToIntOp(full7, i32), "leader_full_i")
            barrier = _named(llvm.IntToPtrOp.build(operands=[full_i], result_types=[_ptr(3)]), "leader_full")
        else:
            nv.MBarrierArriveExpectTxOp(full, tx)
            barrier = full
        k0 = _bin(arith.MuliOp, kb, self.c(p.k), "k0")
        if p.shared_stage:
            off = _bin(arith.MuliOp, s, a_size, "off")
            offsets = [off, off]
        else:
            offsets = [_bin(arith.MuliOp, s, size, f"{x}_off") for size, x in zip((a_size, b_size), "ab", strict=True)]
        dsts = [_gep(v[f"s{x}"], o, i8, f"{x}_dst") for o, x in zip(offsets, "ab", strict=True)]
        dst7s = [_named(AddrSpaceCastOp(d, _ptr(7)), f"{x}_dst7") for d, x in zip(dsts, "ab", strict=True)]
        options = TensorLoadOptions(group=2) if p.cg == 2 else None
        for dst7, tensor_map, row in zip(dst7s, ("tma_a", "tma_b"), origin, strict=True):
            nv.CpAsyncBulkTensorSharedClusterGlobalOp(dst7, self.arg(tensor_map), [k0, row], barrier, options)

    def tile_origin(self, t: SSAValue, for_load: bool) -> tuple[SSAValue, SSAValue]:
        """(m0, n0) of tile t: the rows of A and B this CTA loads (`for_load`) or the
        first row of C and column this CTA's epilogue stores."""
        p, v = self.p, self.v
        tm = _bin(arith.RemUIOp, t, v["tiles_m"], "tm")
        tn = _bin(arith.DivUIOp, t, v["tiles_m"], "tn")
        if p.cg == 1:
            return _bin(arith.MuliOp, tm, self.c(p.m), "m0"), _bin(arith.MuliOp, tn, self.c(p.n), "n0")
        tile_m0 = _bin(arith.MuliOp, tm, self.c(p.m), "tile_m0")
        if not for_load:
            n0 = _bin(arith.MuliOp, tn, self.c(p.n), "n0")
            return _bin(arith.AddiOp, tile_m0, v["half"], "m0"), n0
        tile_n0 = _bin(arith.MuliOp, tn, self.c(p.n), "tile_n0")
        m0 = _bin(arith.AddiOp, tile_m0, v["half"], "m0")
        return m0, _bin(arith.AddiOp, tile_n0, v.get("half_b", v["half"]), "n0")

    # ---- epilogue ------------------------------------------------------------------

    def epilogue(self) -> None:
        p, v = self.p, self.v
        _, epi_type = p.context_types()

        def body(ctx: SSAValue) -> None:
            n64 = _ext(self.arg("n"), "n64") if p.tma else None
            ring0 = _named(tmem.ContextOutputRingOp(ctx), "ring0")

            def tile(t: SSAValue, ring: SSAValue) -> list[SSAValue]:
                def stage_body(stage: SSAValue) -> None:
                    obase = self.row_base(t, n64)
                    self.drain_stage(stage, obase)
                    tmem.ArriveEmptyOp(ring, stage)

                region = _region([p.stage_type()], ["stage"], stage_body)
                return [_named(tmem.ConsumerOp(ring, region), "next")]

            bounds = (v["first"], v["ntiles"], v["step"]) if p.tma else (self.c(0), self.arg("ntiles"), self.c(1))
            _for(bounds, [ring0], ["t", "ring", "ring_end"], tile)

        region = _region([epi_type], ["ctx"], body)
        tmem.EpilogueContextOp((v["slot"], v["bars"], v["dbar"]), epi_type, region, v.get("mask"))

    def row_base(self, t: SSAValue, n64: SSAValue | None) -> SSAValue:
        """The address of this thread's first output element of tile t."""
        p, v = self.p, self.v
        element = p.acc_type
        if n64 is not None:  # a row of C: m0 (+ 128 * rank) + tid
            m0, n0 = self.tile_origin(t, for_load=False)
            row = _bin(arith.AddiOp, m0, v["tid"], "row")
            row64, n0_64 = _ext(row, "row64"), _ext(n0, "n0_64")
            row_elt = _bin(arith.MuliOp, row64, n64, "row_elt")
            elt = _bin(arith.AddiOp, row_elt, n0_64, "elt")
            return _gep(self.arg("c"), elt, element, "obase")
        per_thread = p.n // 2 if p.upper_only else p.n
        if p.cg == 1:
            row = _bin(arith.MuliOp, t, self.c(EPILOGUE_THREADS), "row")
            thr64 = _ext(_bin(arith.AddiOp, row, v["tid"], "thr"), "thr64")
        else:
            pair_rows = _const(p.cg * EPILOGUE_THREADS, i32, f"c{p.cg * EPILOGUE_THREADS}")
            tile_row = _bin(arith.MuliOp, t, pair_rows, "tile_row")
            cta_row = _bin(arith.MuliOp, v["rank"], self.c(EPILOGUE_THREADS), "cta_row")
            row1 = _bin(arith.AddiOp, tile_row, cta_row, "row1")
            thr64 = _ext(_bin(arith.AddiOp, row1, v["tid"], "row"), "row64")
        count = _const(per_thread, i64, f"c{per_thread}_64")
        elt = _bin(arith.MuliOp, thr64, count, "elt")
        return _gep(self.arg("out"), elt, element, "obase")

    def drain_stage(self, stage: SSAValue, obase: SSAValue) -> None:
        p = self.p
        col0 = _named(tmem.StageOffsetOp(stage), "col0") if p.ld_shape == "32x32b" else None

        def step(j: SSAValue) -> list[SSAValue]:
            col = _bin(arith.MuliOp, j, self.c(p.width), "col")
            if col0 is not None:
                self.load_rows(col0, col, obase)
            else:
                self.load_halves(stage, j, col, obase)
            return []

        _for((self.c(0), self.c(p.n // p.width), self.c(1)), [], ["j"], step)

    def load_halves(self, stage: SSAValue, j: SSAValue, col: SSAValue, obase: SSAValue) -> None:
        """16x256b: the upper (and, for M = 128 per CTA, lower) 16 rows of the quarter."""
        p = self.p
        regs = 4 * p.ld_repeat
        vec = VectorType(p.acc_type, [regs])
        repeat = None if p.ld_repeat == tmem.LoadUpperOp.DEFAULT_REPEAT else p.ld_repeat
        upper = _named(tmem.LoadUpperOp(stage, vec, col, repeat), "upper")
        lower = None if p.upper_only else _named(tmem.LoadLowerOp(stage, vec, col, repeat), "lower")
        tmem.WaitLoadOp()
        if p.upper_only:  # half the registers per column step
            ocol = _bin(arith.MuliOp, j, self.c_or_const(regs), "ocol")
            llvm.StoreOp(upper, _gep(obase, ocol, p.acc_type, "o0"), alignment=16)
            return
        o0 = _gep(obase, col, p.acc_type, "o0")
        o1 = _gep(o0, regs, p.acc_type, "o1")
        llvm.StoreOp(upper, o0, alignment=16)
        llvm.StoreOp(cast(SSAValue, lower), o1, alignment=16)

    def c_or_const(self, value: int) -> SSAValue:
        return self.pool[value] if value in self.pool else _const(value, i32, f"c{value}")

    def load_rows(self, col0: SSAValue, col: SSAValue, obase: SSAValue) -> None:
        """32x32b: register j of thread i is column j of TMEM lane i (row i of the tile)."""
        p = self.p
        taddr_i = _bin(arith.AddiOp, col0, col, "taddr_i")
        taddr = _named(llvm.IntToPtrOp.build(operands=[taddr_i], result_types=[_ptr(6)]), "taddr")
        bits_type = VectorType(i32, [p.ld_repeat])
        bits = _named(nv.Tcgen05LdOp(taddr, nv.Tcgen05LdStShape.SHAPE_32X32B, bits_type), "bits")
        tmem.WaitLoadOp()
        vals = bits if p.integer else _named(llvm.BitcastOp(bits, VectorType(f32, [p.ld_repeat])), "vals")
        o = _gep(obase, col, p.acc_type, "o")
        llvm.StoreOp(vals, o, alignment=16)

    # ---- the whole body --------------------------------------------------------------

    def body(self) -> None:
        p, v = self.p, self.v
        self.prologue()
        self.init_barriers()
        if not p.tma:
            self.copy_operands()
        self.publish()
        is_mma = _cmp(v["warp"], self.c(MMA_WARP), "eq", "is_mma")
        if not p.tma:
            _if(is_mma, self.mma_warp, self.epilogue)
        else:
            is_load = _cmp(v["warp"], self.c(LOAD_WARP), "eq", "is_load")
            is_epilogue = _cmp(v["warp"], self.c(MMA_WARP), "ult", "is_epilogue")
            _if(is_load, self.load_warp)
            _if(is_mma, self.mma_warp)
            _if(is_epilogue, self.epilogue)
        llvm.ReturnOp()


def _log2_or(value: int) -> int:
    """The shift that divides by `value` (a power of two), else `value` (a divui)."""
    return value.bit_length() - 1 if value & (value - 1) == 0 else value


def _divide(b: _Builder, value: SSAValue, divisor: int, name: str) -> SSAValue:
    if divisor & (divisor - 1) == 0:
        return _bin(arith.ShRUIOp, value, b.c(divisor.bit_length() - 1), name)
    return _bin(arith.DivUIOp, value, b.c(divisor), name)


def _signature(plan: _Plan) -> tuple[list[tuple[str, Attribute]], list[dict[str, Attribute]]]:
    if plan.tma:
        byval: dict[str, Attribute] = {
            "llvm.align": IntegerAttr(64, i64),
            "llvm.byval": _array(128, i8),
            "nvvm.grid_constant": UnitAttr(),
        }
        params = [("tma_a", _ptr(0)), ("tma_b", _ptr(0)), ("c", _ptr(1)), ("m", i32), ("n", i32), ("k", i32)]
        return params, [byval, byval, {}, {}, {}, {}]
    params: list[tuple[str, Attribute]] = [("out", _ptr(1)), ("a", _ptr(1)), ("b", _ptr(1)), ("ntiles", i32)]
    return params, [{}, {}, {}, {}]


def _globals(plan: _Plan) -> list[llvm.GlobalOp]:
    out: list[llvm.GlobalOp] = []
    if plan.tma:
        out.append(_global("smem", _array(0, i8), 1024, "external"))
        out.append(_global("input_bars", _array(2 * plan.input_stages, i64), 8))
    else:
        a_bytes, b_bytes = plan.a_chunks * 16, plan.b_chunks * 16
        out.append(_global("smem_a", _array(a_bytes, i8), 1024))
        out.append(_global("smem_b", _array(b_bytes, i8), 1024))
    out.append(_global("accum_bars", _array(2 * plan.stages, i64), 8))
    out.append(_global("dealloc_bar", i64, 8))
    out.append(_global("tmem_slot", i32, 4))
    return out


def _function(plan: _Plan) -> llvm.FuncOp:
    params, arg_attrs = _signature(plan)
    block = Block(arg_types=[t for _, t in params])
    for arg, (name, _) in zip(block.args, params, strict=True):
        arg.name_hint = name
    with ImplicitBuilder(block):
        _Builder(plan, block.args).body()
    attributes: dict[str, Attribute] = {
        "nvvm.kernel": UnitAttr(),
        "nvvm.maxntid": DenseArrayBase.from_list(i32, [plan.threads, 1, 1]),
        "nvvm.minctasm": IntegerAttr(1, i32),
    }
    if plan.cg == 2:
        attributes["nvvm.cluster_dim"] = DenseArrayBase.from_list(i32, [2, 1, 1])
    # As the parser makes them: no arg_attrs where no parameter has any; unnamed_addr 0.
    props: dict[str, Attribute | None] = {"unnamed_addr": IntegerAttr(0, i64)}
    if any(arg_attrs):
        props["arg_attrs"] = ArrayAttr([DictionaryAttr(a) for a in arg_attrs])
    func = llvm.FuncOp(
        plan.name,
        llvm.LLVMFunctionType([t for _, t in params]),
        linkage=llvm.LinkageAttr("external"),
        body=Region(block),
        other_props=props,
    )
    func.attributes.update(attributes)
    return func


def _types(plan: _Plan) -> None:
    """Build the kernel's tmem types first: their verifiers state the capacity rules
    (cta_group, stages * stride <= 512, the accumulator's M for the cta_group)."""
    plan.ring_type()
    plan.context_types()
    tmem.TensorType(plan.m, plan.n, plan.acc_type, plan.cg)
    if plan.tma:
        tmem.PipelineType(plan.input_stages)


def build_matmul(config: MatmulConfig) -> ModuleOp:
    """The Mojo default SM100 matmul of `config` as a verified tmem-level module.

    Raises `KernelConfigError` (a `CompileError`) with the verifier's message for a
    configuration the dialect's types or ops refuse, or with a message naming the field
    for one the builder's own rules refuse."""
    plan = _plan(config)
    try:
        _types(plan)
    except VerifyException as e:
        raise KernelConfigError(str(e)) from None
    _check_plan(plan)
    _check_descriptor(plan)
    try:
        module = ModuleOp([*_globals(plan), _function(plan)])
    except VerifyException as e:  # an op constructor's check (a cta_group attribute)
        raise KernelConfigError(str(e)) from None
    try:
        verify_located(module, SourceMap())
    except DiagnosticException as e:
        raise KernelConfigError(str(e)) from None
    return module


def _printed(module: ModuleOp) -> str:
    stream = StringIO()
    Printer(stream).print_op(module)
    return stream.getvalue() + "\n"


def kernel_text(config: MatmulConfig) -> str:
    """`build_matmul(config)` as MLIR text (xDSL's printer)."""
    return _printed(build_matmul(config))


def example_differences(path: Path, config: MatmulConfig) -> str | None:
    """None if the program in `path` is `build_matmul(config)`: structurally the same ops,
    operands, attributes and regions, and the same text once printed (so the same value
    names); otherwise the first line that differs. The file's comments and line breaks
    are its own."""
    from xdsl_tmem.api import parse

    shipped, built = parse(path), build_matmul(config)
    for number, (ours, theirs) in enumerate(
        zip(_printed(built).splitlines(), _printed(shipped).splitlines(), strict=False), 1
    ):
        if ours != theirs:
            return f"{path}: printed line {number} is\n  {theirs.strip()}\nbut the builder's is\n  {ours.strip()}"
    if not built.is_structurally_equivalent(shipped):
        return f"{path}: prints as the builder's kernel but differs from it in structure"
    return None


def example_config(name: str) -> MatmulConfig:
    """The configuration of examples/<name>.mlir."""
    config = EXAMPLE_CONFIGS.get(name)
    if config is None:
        raise KernelConfigError(f"no example '{name}' (examples: {', '.join(EXAMPLE_CONFIGS)})")
    return config


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """A misused flag: one line and exit code 1, as the drivers."""
        self.exit(1, f"error: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m xdsl_tmem.kernels`: print a kernel of the builder, or check that the
    shipped examples hold the builder's kernels."""
    from xdsl_tmem.tools.cli import attribute_docs

    parser = _Parser(prog="python -m xdsl_tmem.kernels", description=main.__doc__)
    parser.add_argument("--example", choices=sorted(EXAMPLE_CONFIGS), help="print this example's kernel")
    parser.add_argument("--check", type=Path, metavar="DIR", help="check every example in DIR against the builder")
    docs = attribute_docs(MatmulConfig)
    defaults = MatmulConfig()
    for f in fields(MatmulConfig):
        default = getattr(defaults, f.name)  # (a None default is the docstring's to state)
        shown = "" if default is None else f" Default: {default!r}."
        parser.add_argument(f"--{f.name.replace('_', '-')}", dest=f.name, type=int if "int" in str(f.type) else str,
                            help=docs.get(f.name, "") + shown)  # fmt: skip
    options = parser.parse_args(argv)
    try:
        if options.check is not None:
            problems = [
                problem
                for name, config in EXAMPLE_CONFIGS.items()
                if (problem := example_differences(options.check / f"{name}.mlir", config)) is not None
            ]
            for problem in problems:
                print(problem, file=sys.stderr)
            return 1 if problems else 0
        config = example_config(options.example) if options.example else MatmulConfig()
        given = {f.name: getattr(options, f.name) for f in fields(MatmulConfig) if getattr(options, f.name) is not None}
        sys.stdout.write(kernel_text(replace(config, **given)))
    except CompileError as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
