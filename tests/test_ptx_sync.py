"""Barriers with reductions, atomics and `st.async` on the machine model (issue 13):
`bar.red` at the NVVM level and at the PTX level (ours and hand-written), `atom`/`red`
against numpy, and the race detector's treatment of atomics (they do not race with each
other, only with plain accesses). Expectations come from numpy and the PTX ISA text."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest
from gemm_reference import parse
from numpy.typing import NDArray

from xdsl_tmem.backend.target import ConvertToPtxPass
from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.frontend.parser import load_ptx
from xdsl_tmem.interpreter import KernelHazard, run_kernel
from xdsl_tmem.interpreter.atomics import apply
from xdsl_tmem.tools.run import make_context

THREADS = 96
"""Three warps (the reductions span them)."""

# ---- bar.red ------------------------------------------------------------------------------

_NVVM_BAR_RED = """\
llvm.func @k(%in: !llvm.ptr<1>, %out: !llvm.ptr<1>) attributes {{nvvm.kernel}} {{
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %i = arith.extui %tid : i32 to i64
  %src = llvm.getelementptr %in[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
  %v = llvm.load %src : !llvm.ptr<1> -> i32
  %r = nvvm.barrier #nvvm.reduction<{op}> %v -> i32
  %dst = llvm.getelementptr %out[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
  llvm.store %r, %dst : i32, !llvm.ptr<1>
  llvm.return
}}
"""


def _votes(pattern: str) -> NDArray[np.uint32]:
    """Predicates as i32 (any non-zero value is true)."""
    tid = np.arange(THREADS)
    values = {"some": (tid % 3 == 0) * (tid + 7), "all": tid + 1, "none": 0 * tid}[pattern]
    return values.astype(np.uint32)


def _bar_red_numpy(op: str, votes: NDArray[np.uint32]) -> int:
    true = votes != 0
    return {"popc": int(true.sum()), "and": int(true.all()), "or": int(true.any())}[op]


@pytest.mark.parametrize("pattern", ["some", "all", "none"])
@pytest.mark.parametrize("op", ["popc", "and", "or"])
@pytest.mark.parametrize("level", ["nvvm", "ptx"])
def test_barrier_reduction_gives_every_thread_the_reduction(level: str, op: str, pattern: str) -> None:
    """PTX ISA 9.0, bar.red: every thread gets the reduction of the predicate over all
    participating threads (`.popc` the count of true ones, `.and`/`.or` all/any), here
    over three warps; at the NVVM level (`nvvm.barrier #nvvm.reduction<...>`, whose i32
    predicate is true when non-zero) and through our backend's `bar.red` at the PTX level."""
    module = parse(_NVVM_BAR_RED.format(op=op))
    if level == "ptx":
        ConvertToPtxPass().apply(make_context(), module)
    votes = _votes(pattern)
    names = ("in", "out") if level == "nvvm" else ("k_param_0", "k_param_1")  # the backend names .params so
    args = {names[0]: votes, names[1]: np.zeros(THREADS, np.uint32)}
    got = run_kernel(module, "k", block=THREADS, args=args, schedule="random", seed=3).outputs[names[1]]
    assert np.asarray(got).tolist() == [_bar_red_numpy(op, votes)] * THREADS


_DIVERGENT_RED = """\
.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out_ptr)
{
\t.reg .b64 %out, %t;
\t.reg .b32 %tx, %lane, %r;
\t.reg .pred %odd, %p;
\tld.param.u64 %out, [out_ptr];
\tcvta.to.global.u64 %out, %out;
\tmov.u32 %tx, %tid.x;
\tmov.u32 %lane, %laneid;
\tand.b32 %r, %lane, 1;
\tsetp.eq.u32 %odd, %r, 1;
\tsetp.lt.u32 %p, %tx, 40;
\t@%odd bra ODD;
\tbarrier.red.popc.u32 %r, 3, !%p;
\tbra.uni DONE;
ODD:
\tbarrier.red.popc.u32 %r, 3, !%p;
DONE:
\tmul.wide.u32 %t, %tx, 4;
\tadd.u64 %out, %out, %t;
\tst.global.u32 [%out], %r;
\tret;
}
"""


def test_non_aligned_reduction_reached_from_two_instructions() -> None:
    """`barrier.red` without `.aligned`: the even and the odd lanes of every warp reach
    it from different instructions; the warp arrives once both halves did, and every
    thread gets the count over all 96 threads of the negated predicate (tid >= 40: 56)."""
    module = load_ptx(_DIVERGENT_RED, "k.ptx", SourceMap())
    for schedule, seed in (("rr", 0), ("random", 1), ("random", 2)):
        out = run_kernel(module, "k", block=THREADS, args={"out_ptr": np.zeros(THREADS, np.uint32)},
                         schedule=schedule, seed=seed).outputs["out_ptr"]  # fmt: skip
        assert np.asarray(out).tolist() == [int((np.arange(THREADS) >= 40).sum())] * THREADS


@pytest.mark.parametrize("spelling", ["barrier.red.popc.aligned.u32", "bar.red.popc.u32"])
def test_aligned_reduction_under_divergence_is_a_hazard(spelling: str) -> None:
    """`.aligned` (and `bar`, which is aligned) requires every thread of the warp to
    execute the same instruction: reached from two, `divergent-sync-aligned`."""
    module = load_ptx(_DIVERGENT_RED.replace("barrier.red.popc.u32", spelling), "k.ptx", SourceMap())
    with pytest.raises(KernelHazard) as caught:
        run_kernel(module, "k", block=THREADS, args={"out_ptr": np.zeros(THREADS, np.uint32)})
    assert caught.value.kind == "divergent-sync-aligned", caught.value.message


# ---- atom / red ---------------------------------------------------------------------------

_ATOM_KERNEL = """\
.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .u64 mem_ptr, .param .u64 arg_ptr, .param .u64 old_ptr)
{{
\t.reg .b64 %mem, %arg, %old, %t;
\t.reg .{bits} %b, %d;
\t.reg .b32 %tx;
\tld.param.u64 %mem, [mem_ptr];
\tld.param.u64 %arg, [arg_ptr];
\tld.param.u64 %old, [old_ptr];
\tcvta.to.global.u64 %mem, %mem;
\tcvta.to.global.u64 %arg, %arg;
\tcvta.to.global.u64 %old, %old;
\tmov.u32 %tx, %tid.x;
\tmul.wide.u32 %t, %tx, {size};
\tadd.u64 %mem, %mem, %t;
\tadd.u64 %arg, %arg, %t;
\tadd.u64 %old, %old, %t;
\tld.global.{bits} %b, [%arg];
\t{inst}
\tst.global.{bits} [%old], %d;
\tret;
}}
"""

_CASES = [("add", "u32"), ("add", "s32"), ("add", "u64"), ("add", "f32"), ("add", "f64"), ("min", "u32"),
          ("min", "s32"), ("max", "u64"), ("max", "s64"), ("and", "b32"), ("or", "b64"), ("xor", "b32"),
          ("exch", "b64"), ("inc", "u32"), ("dec", "u32"), ("cas", "b32")]  # fmt: skip

_EDGES = {
    4: [0, 1, 5, 6, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE],
    8: [0, 1, 5, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF],
}


def _numpy_new(operation: str, dtype: np.dtype[Any], old: NDArray[Any], b: NDArray[Any]) -> NDArray[Any]:
    """numpy's (and the PTX ISA's) value for each lane's own location."""
    unsigned = np.dtype(f"u{dtype.itemsize}")
    if operation == "add":
        if dtype.kind == "f":
            return old + b  # round to nearest even (no subnormals among the inputs)
        return (old.view(unsigned) + b.view(unsigned)).view(dtype)
    if operation in ("min", "max"):
        return np.minimum(old, b) if operation == "min" else np.maximum(old, b)
    if operation in ("and", "or", "xor"):
        return {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[operation](old, b)
    if operation == "exch":
        return b.copy()
    if operation == "inc":  # PTX ISA: (old >= b) ? 0 : old + 1
        return np.where(old >= b, 0, old + np.uint32(1)).astype(dtype)
    if operation == "dec":  # PTX ISA: (old == 0 || old > b) ? b : old - 1
        return np.where((old == 0) | (old > b), b, old - np.uint32(1)).astype(dtype)
    raise AssertionError(operation)


def _values(dtype: np.dtype[Any], rng: np.random.Generator, count: int) -> NDArray[Any]:
    if dtype.kind == "f":
        values = rng.standard_normal(count) * 1000
        values[:4] = [0.0, -0.0, 1.5, -2.25]
        return values.astype(dtype)
    edges = np.array(_EDGES[dtype.itemsize], dtype=np.uint64)
    raw = rng.integers(0, 1 << 63, count, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, count, np.uint64)
    raw[: len(edges)] = edges
    return rng.permutation(raw).astype(f"u{dtype.itemsize}").view(dtype)


@pytest.mark.parametrize(("operation", "ptype"), _CASES, ids=[f"{o}.{t}" for o, t in _CASES])
def test_atom_on_own_locations_computes_as_numpy(operation: str, ptype: str) -> None:
    """`atom.global.op.type d, [a], b` with every thread on its own location: `d` is the
    old value, the location becomes `old op b` (numpy, edge values included; `cas`
    stores `c` where `old == b`: b is every other thread's old value)."""
    dtype = np.dtype({"b32": "u4", "b64": "u8"}.get(ptype, {"u32": "u4", "s32": "i4", "u64": "u8", "s64": "i8",
                                                             "f32": "f4", "f64": "f8"}.get(ptype, "u4")))  # fmt: skip
    rng = np.random.default_rng(zlib.crc32(f"{operation}.{ptype}".encode()))
    old, b = _values(dtype, rng, 64), _values(dtype, rng, 64)
    if operation in ("inc", "dec"):
        b[:8] = old[:8]  # the wrap boundaries: old == b
    bits = f"b{8 * dtype.itemsize}"
    if operation == "cas":
        b[::2] = old[::2]
        inst = f"atom.global.cas.{ptype} %d, [%mem], %b, 12345;"
        expected = np.where(old == b, dtype.type(12345), old)
    else:
        inst = f"atom.global.{operation}.{ptype} %d, [%mem], %b;"
        expected = _numpy_new(operation, dtype, old, b)
    text = _ATOM_KERNEL.format(size=dtype.itemsize, bits=bits, inst=inst)
    args = {"mem_ptr": old.copy(), "arg_ptr": b, "old_ptr": np.zeros(64, dtype)}
    outputs = run_kernel(load_ptx(text, "k.ptx", SourceMap()), "k", block=64, args=args).outputs
    np.testing.assert_array_equal(np.asarray(outputs["old_ptr"]).view(dtype), old)
    np.testing.assert_array_equal(np.asarray(outputs["mem_ptr"]).view(dtype), expected)


def test_atom_add_f32_flushes_subnormals() -> None:
    """PTX ISA 9.0, atom: `.add.f32` flushes subnormal inputs and results to zero of
    their sign (from the ISA text; not measured on silicon)."""
    tiny = np.float32(1e-40)
    f32 = np.dtype(np.float32)
    assert apply("add", f32, tiny, np.float32(1.0)) == np.float32(1.0)
    assert np.signbit(apply("add", f32, -tiny, np.float32(-0.0)))
    assert apply("add", f32, np.float32(1.5), np.float32(2.25)) == np.float32(3.75)


_CONTENDED = """\
.version 8.6
.target sm_90
.address_size 64
.shared .align 8 .b8 cell[8];
.visible .entry k(.param .u64 out_ptr, .param .u64 olds_ptr)
{{
\t.reg .b64 %out, %olds, %t;
\t.reg .b32 %tx, %v, %d, %a;
\t.reg .pred %p;
\tld.param.u64 %out, [out_ptr];
\tld.param.u64 %olds, [olds_ptr];
\tcvta.to.global.u64 %out, %out;
\tcvta.to.global.u64 %olds, %olds;
\tmov.u32 %tx, %tid.x;
\tsetp.eq.u32 %p, %tx, 0;
\t@%p st.shared.u32 [cell], 0;
\tbar.sync 0;
\tadd.u32 %v, %tx, 1;
\tmov.u32 %a, cell;
\t{red}
\tatom.shared.add.u32 %d, [%a+4], %v;
\tmul.wide.u32 %t, %tx, 4;
\tadd.u64 %olds, %olds, %t;
\tst.global.u32 [%olds], %d;
\tbar.sync 0;
\t@%p ld.shared.u32 %v, [cell];
\t@%p st.global.u32 [%out], %v;
\tret;
}}
"""


def test_contended_atomics_sum_without_a_race() -> None:
    """Every thread of three warps adds tid + 1 to one shared word (`red`) and to
    another (`atom`), with no barrier between the warps' atomics: no race (atomics on
    one location are never a data race), the sum is numpy's, and the `atom` results are
    the partial sums of one order of the additions (each old value plus its addend is
    another thread's old value or the final sum)."""
    text = _CONTENDED.format(red="red.shared.add.u32 [%a], %v;").replace(
        "\t@%p st.shared.u32 [cell], 0;\n", "\t@%p st.shared.v2.u32 [cell], {0, 0};\n"
    )
    module = load_ptx(text, "k.ptx", SourceMap())
    addends = np.arange(THREADS, dtype=np.uint64) + 1
    for schedule, seed in (("rr", 0), ("random", 5)):
        args = {"out_ptr": np.zeros(1, np.uint32), "olds_ptr": np.zeros(THREADS, np.uint32)}
        outputs = run_kernel(module, "k", block=THREADS, args=args, schedule=schedule, seed=seed).outputs
        total = int(addends.sum())
        assert np.asarray(outputs["out_ptr"]).tolist() == [total]
        olds = np.asarray(outputs["olds_ptr"]).astype(np.uint64)
        order = np.argsort(olds)
        chain = np.concatenate([[0], np.cumsum(addends[order])])
        np.testing.assert_array_equal(olds[order], chain[:-1])


_MIXED = """\
.version 8.6
.target sm_90
.address_size 64
.visible .entry k(.param .u64 cell_ptr)
{{
\t.reg .b64 %cell;
\t.reg .b32 %tx, %w, %d;
\t.reg .pred %first;
\tld.param.u64 %cell, [cell_ptr];
\tcvta.to.global.u64 %cell, %cell;
\tmov.u32 %tx, %tid.x;
\tshr.u32 %w, %tx, 5;
\tsetp.eq.u32 %first, %w, 0;
\t@%first bra FIRST;
\t{other}
\tret;
FIRST:
\tatom.global.add.u32 %d, [%cell], 1;
\tret;
}}
"""


@pytest.mark.parametrize(
    ("other", "race"),
    [("red.global.add.u32 [%cell], 2;", False),
     ("atom.global.exch.b32 %d, [%cell], 7;", False),
     ("st.global.u32 [%cell], 7;", True),
     ("ld.global.u32 %d, [%cell];", True)],
)  # fmt: skip
def test_atomics_race_only_with_plain_accesses(other: str, race: bool) -> None:
    """Warp 0's `atom.add` and warp 1's access of the same word, unsynchronised: with
    another atomic no race (PTX ISA, memory consistency model: atomics are morally
    strong); with a plain store or load, `global-data-race`, under either order."""
    module = load_ptx(_MIXED.format(other=other), "k.ptx", SourceMap())
    for seed in range(4):
        args = {"cell_ptr": np.zeros(1, np.uint32)}
        if not race:
            run_kernel(module, "k", block=64, args=args, schedule="random", seed=seed)
            continue
        with pytest.raises(KernelHazard) as caught:
            run_kernel(module, "k", block=64, args=args, schedule="random", seed=seed)
        assert caught.value.kind == "global-data-race", caught.value.message


# ---- st.async -----------------------------------------------------------------------------

_ST_ASYNC = """\
.version 8.6
.target sm_90
.address_size 64
.shared .align 8 .b64 bar;
.shared .align 8 .b32 slot[2];
.visible .entry k(.param .u64 out_ptr)
{{
\t.reg .b64 %out, %v64;
\t.reg .b32 %tx, %a, %m, %v, %w;
\t.reg .pred %p, %q;
\tld.param.u64 %out, [out_ptr];
\tcvta.to.global.u64 %out, %out;
\tmov.u32 %tx, %tid.x;
\tsetp.eq.u32 %p, %tx, 0;
\t@!%p bra DONE;
\tmbarrier.init.shared::cta.b64 [bar], 1;
\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [bar], {expect};
\tmov.u32 %a, slot;
\tmov.u32 %m, bar;
\tmov.b64 %v64, 0x0000000700000005;
\tst.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b32 [%a], {{5, 7}}, [%m];
WAIT:
\tmbarrier.try_wait.parity.shared::cta.b64 %q, [bar], 0;
\t@!%q bra WAIT;
\tld.shared.v2.u32 {{%v, %w}}, [slot];
\tst.global.v2.u32 [%out], {{%v, %w}};
DONE:
\tret;
}}
"""


def test_st_async_completes_its_bytes_on_the_mbarrier() -> None:
    """`st.async ... complete_tx::bytes.v2.b32` stores 8 bytes and completes 8
    transaction bytes on the mbarrier (PTX ISA 9.0, st.async): with `expect_tx 8` the
    phase completes and the wait reads the stored words; with `expect_tx 12` it never
    does (a deadlock)."""
    from xdsl_tmem.interpreter import KernelDeadlock

    module = load_ptx(_ST_ASYNC.format(expect=8), "k.ptx", SourceMap())
    out = run_kernel(module, "k", block=32, args={"out_ptr": np.zeros(2, np.uint32)}).outputs["out_ptr"]
    assert np.asarray(out).tolist() == [5, 7]
    with pytest.raises(KernelDeadlock):
        run_kernel(load_ptx(_ST_ASYNC.format(expect=12), "k.ptx", SourceMap()), "k", block=32,
                   args={"out_ptr": np.zeros(2, np.uint32)})  # fmt: skip


_PART_EXITS = """\
.version 8.6
.target sm_90
.address_size 64
.shared .align 4 .b32 val;
.visible .entry k(.param .u64 out_ptr)
{
\t.reg .b64 %out, %t;
\t.reg .b32 %tx, %lane, %v;
\t.reg .pred %w1, %lo;
\tld.param.u64 %out, [out_ptr];
\tcvta.to.global.u64 %out, %out;
\tmov.u32 %tx, %tid.x;
\tmov.u32 %lane, %laneid;
\tsetp.ge.u32 %w1, %tx, 32;
\t@!%w1 bra WARP0;
\tst.shared.u32 [val], 42;
\tbarrier.sync 1, 64;
\tret;
WARP0:
\tsetp.lt.u32 %lo, %lane, 16;
\t@%lo bra LOW;
\tret;
LOW:
\tbarrier.sync 1, 64;
\tld.shared.u32 %v, [val];
\tmul.wide.u32 %t, %tx, 4;
\tadd.u64 %out, %out, %t;
\tst.global.u32 [%out], %v;
\tret;
}
"""


def test_non_aligned_barrier_counts_the_warp_once_its_other_lanes_exited() -> None:
    """Lanes 0-15 of warp 0 reach `barrier.sync 1, 64` while lanes 16-31 are still to run
    and then exit: the barrier waits for the warp's non-exited threads only (PTX ISA
    9.0, barrier), so warp 0 arrives when its other lanes exit, the barrier completes
    with warp 1, and lanes 0-15 read what warp 1 stored before it."""
    module = load_ptx(_PART_EXITS, "k.ptx", SourceMap())
    for schedule, seed in (("rr", 0), ("random", 1), ("random", 2)):
        out = run_kernel(module, "k", block=64, args={"out_ptr": np.zeros(64, np.uint32)}, schedule=schedule,
                         seed=seed).outputs["out_ptr"]  # fmt: skip
        assert np.asarray(out).tolist() == [42] * 16 + [0] * 48


_SPELLINGS = [
    ("bar.red.popc.u32 %r1, 0, %p1;", "ptx.bar_red"),
    ("bar.cta.red.and.pred %p2, 1, 64, !%p1;", "ptx.bar_red"),
    ("barrier.red.or.aligned.pred %p2, 0, %p1;", "ptx.bar_red"),
    ("barrier.cta.red.popc.u32 %r1, %r2, !%p1;", "ptx.bar_red"),
    ("barrier.cta.sync.aligned 0;", "ptx.barrier"),
    ("barrier.cta.arrive 1, 64;", "ptx.barrier"),
    ("atom.relaxed.cluster.shared::cluster.add.u32 %r1, [%r2+4], 1;", "ptx.atom"),
    ("atom.global.cas.b64 %rd1, [%rd2], %rd3, %rd4;", "ptx.atom_cas"),
    ("atom.exch.b32 %r1, [%rd2], %r3;", "ptx.atom"),
    ("red.release.gpu.global.max.s64 [%rd2], %rd3;", "ptx.red"),
    ("red.relaxed.cluster.shared::cluster.add.u32 [%r2], 1;", "ptx.red"),
    ("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%r1], {%r2, %r3, %r4, %r5}, [%r6];",
     "ptx.st_async"),
]  # fmt: skip


def test_every_spelling_is_recognized_and_prints_back() -> None:
    """The spellings of the PTX ISA's bar/barrier, atom/red and st.async syntax that the
    model executes become their typed op, which prints the line back as written."""
    from xdsl_tmem.backend.printer import operand_text
    from xdsl_tmem.dialects import ptx

    body = "\n".join(f"\t{line}" for line, _ in _SPELLINGS)
    text = (
        ".version 8.6\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n"
        "\t.reg .pred %p<3>;\n\t.reg .b32 %r<7>;\n\t.reg .b64 %rd<5>;\n" + body + "\n\tret;\n}\n"
    )
    module = load_ptx(text, "k.ptx", SourceMap())
    ops = [op for op in module.walk() if isinstance(op, ptx.Instruction) and not isinstance(op, ptx.RetOp)]
    assert [op.name for op in ops] == [name for _, name in _SPELLINGS]
    assert [op.ptx_line(operand_text) for op in ops] == [line for line, _ in _SPELLINGS]
