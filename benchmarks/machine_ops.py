"""Per-operation cost of the machine model's hot operations, hazard checks on.

Each operation is timed at the level the interpreters execute it: the machine-model
functions `interpreter/nvvm.py` (`tcgen05_mma`, `tmem_ld`, `tcgen05_commit`) and
`interpreter/bulk_copy.py` (`tensor_load`: a `cp.async.bulk.tensor` box load with its
`complete_tx`) that both the NVVM and the PTX interpreter call, on a real machine state
(`Cta`, `Cluster`, `Warp`, clocks connected as a launch connects them). The loop is one
GEMM k-block as the TMA GEMM runs it: TMA A (128 rows x 64 f16, 128B swizzle) and B into
a stage, the K = 64 of the stage as MMAs of K = 16 (descriptors 32 bytes apart), a
commit, the tensor core completing it (the producer then acquires its clock, as its
wait on the empty barrier would). So every check sees the records a pipeline leaves:
the last writes of the stage, the tensor core's reads of it, the MMAs in flight.

Next to each: a numpy-only lower bound, the same data movement with nothing else (the
operand product with operands already decoded, the box copy as one fancy-index copy
from a precomputed map, the TMEM gather).

Usage: python benchmarks/machine_ops.py [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from xdsl_tmem.dialects.nvvm import Tcgen05LdStShape
from xdsl_tmem.fence_policy import FencePolicy
from xdsl_tmem.interpreter import bulk_copy, races, tma
from xdsl_tmem.interpreter import nvvm as N
from xdsl_tmem.interpreter.blas import single_threaded_blas
from xdsl_tmem.interpreter.executor import Program, Warp
from xdsl_tmem.interpreter.launch import Geometry
from xdsl_tmem.interpreter.machine import Cluster, Cta, GlobalMemory, SharedLayout
from xdsl_tmem.interpreter.run import connect
from xdsl_tmem.interpreter.tcgen05 import K_PER_MMA, SmemDescriptor, ldst_plan, operand_addresses


class FakeOp:
    """What the machine functions read of an op: its name (reports, sites)."""

    def __init__(self, name: str):
        self.name = name
        self.cta_group = None

    def mnemonic(self) -> str:
        return self.name


def op(name: str) -> Operation:
    return cast(Operation, FakeOp(name))


STAGE_A, STAGE_B, BARRIERS = 0, 128 * 128, 128 * 128 + 256 * 128
SMEM = BARRIERS + 64


def smem_desc(start: int, sbo: int = 1024, swizzle: int = 2) -> int:
    """K-major canonical layout: 8-row groups SBO apart, 128B swizzle (code 2)."""
    return (start >> 4) | (1 << 16) | ((sbo >> 4) << 32) | (1 << 46) | (swizzle << 61)


def instr_desc(m: int, n: int, ab_code: int) -> int:
    """D f32 (bits 4-5 = 1), A/B format codes, N >> 3 at bit 17, M >> 4 at bit 24."""
    return (1 << 4) | (ab_code << 7) | (ab_code << 10) | ((n >> 3) << 17) | ((m >> 4) << 24)


@dataclass
class Machine:
    cluster: Cluster
    warps: list[Warp]
    """One per CTA; the first issues the MMAs."""
    memory: GlobalMemory

    @property
    def warp(self) -> Warp:
        return self.warps[0]


def machine(ctas: int, rows: int, gmem: NDArray[Any]) -> Machine:
    """A cluster of `ctas` CTAs with one warp each, shared memory written, TMEM allocated."""
    layout = SharedLayout()
    layout.add("stages", BARRIERS, 1024)
    layout.add("bars", 64, 8)
    memory = GlobalMemory()
    memory.add("g", gmem)
    cta_list = [Cta(r, (r, 0, 0), layout) for r in range(ctas)]
    cluster = Cluster(cta_list, memory, total_threads=32 * ctas)
    cluster.keep_log = False
    cluster.replayable = False
    program = Program(ModuleOp([]), [])
    warps = [Warp(program, cluster, c, 0, Geometry((32, 1, 1))) for c in cta_list]
    connect(cluster, warps, FencePolicy.MOJO)
    rng = np.random.default_rng(0)
    for c, w in zip(cta_list, warps, strict=True):
        c.smem[:BARRIERS] = rng.integers(0, 256, BARRIERS).astype(np.uint8) & 0x3B  # finite f16 / f32
        races.check(w, op("st.shared"), c.shadow, np.arange(BARRIERS, dtype=np.int64), write=True)
        c.allocator.allocations[0] = 512
        c.cta_group = None
    warp = warps[0]
    for c, w in zip(cta_list, warps, strict=True):
        N.mbarrier_init(w, (c.rank << 24) | BARRIERS, 1)
        c.mbarriers[BARRIERS].init_fence = (w.clock.generic, int(w.clock.vc[w.clock.generic]))
    for w in warps[1:]:
        warp.clock.acquire(w.clock.vc)
    return Machine(cluster, warps, memory)


Timer = dict[str, list[tuple[float, float]]]
"""Per operation: (wall, CPU) seconds of each call. The CPU time (of every thread of the
process: BLAS threads spinning count) is the steadier figure on a shared machine."""


def timed(samples: Timer, name: str, fn: Callable[[], object]) -> None:
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    samples.setdefault(name, []).append((time.perf_counter() - start, time.process_time() - cpu))


def gemm_blocks(samples: Timer, label: str, kind: str, cta_group: int, ab_code: int, element: int, blocks: int) -> None:
    """`blocks` k-blocks of a 128B-swizzled, K-major GEMM: per block 2 TMA loads (cta_group
    1 only), 128 / element / k MMAs, a commit and its completion. The MMAs accumulate into
    one D: their products are deferred (tcgen05.DeferredProduct) and computed when D is
    read at the end (the epilogue's tcgen05.ld would), or every DEFERRED_K. Three rows: the
    K loop's cost per MMA, product included (the real use: the sum over the loop and the
    final read, divided by the MMAs); each MMA's issue alone (per call); and an MMA whose
    product is computed right after it (`alone`: an MMA then the read of its D)."""
    k = K_PER_MMA[kind]
    m, n = 128 * cta_group, 256
    inner = 128 // element  # elements of one 128-byte swizzle row
    gmem = np.zeros(4096 * 256, dtype=np.uint8)
    gmem[:] = np.random.default_rng(1).integers(0, 256, gmem.size).astype(np.uint8) & 0x3B
    mach = machine(cta_group, m, gmem)
    warp, cluster = mach.warp, mach.cluster
    base = mach.memory.buffers[0].base
    dtype = {2: "FLOAT16", 4: "FLOAT32", 1: "UINT8"}[element]
    pitch = 4096
    tmaps = [
        tma.TensorMap(dtype, base, (pitch // element, rows), (pitch,), (inner, rows), (1, 1), swizzle="128B")
        for rows in (128, 256)
    ]
    mma, commit, tma_op = op(f"nvvm.tcgen05.mma.{label}"), op("nvvm.tcgen05.commit"), op("cp.async.bulk.tensor")
    idesc = instr_desc(m, n, ab_code)
    for block in range(blocks):
        for producer in mach.warps:  # each CTA loads its A and B rows (cta_group 2: half of each)
            for tmap, dst in ((tmaps[0], STAGE_A), (tmaps[1 if cta_group == 1 else 0], STAGE_B)):
                bar = producer.cta.mbarriers[BARRIERS]
                bar.tx += tmap.box_bytes()  # the producer's expect_tx (its arrival stays pending)
                coords = [(block % (pitch // 128)) * inner, 0]
                rank = producer.cta.rank << 24
                timed(
                    samples,
                    "tma",
                    lambda t=tmap, d=dst, c=coords, p=producer, r=rank: bulk_copy.tensor_load(
                        cast(Any, p), tma_op, "cp.async.bulk.tensor", t, c, r | d, r | BARRIERS, False
                    ),
                )
            warp.clock.acquire(producer.clock.release())  # the full barrier's phase, observed by the MMA warp
        for step in range(128 // (k * element)):
            operands = N.MmaOperands(
                d=0,
                a=smem_desc(STAGE_A + 32 * step),
                b=smem_desc(STAGE_B + 32 * step),
                idesc=idesc,
                enable_input_d=int(block > 0 or step > 0),
            )
            warp.mask = np.arange(32) == 0
            timed(samples, f"mma {label} issue", lambda o=operands: N.tcgen05_mma(warp, mma, kind, cta_group, o))
            warp.mask = warp.live
        warp.mask = np.arange(32) == 0
        timed(samples, "commit", lambda: N.tcgen05_commit(warp, commit, BARRIERS, None, cta_group))
        warp.mask = warp.live
        bar = warp.cta.mbarriers[BARRIERS]
        bar.pending = 1
        timed(samples, "complete", lambda: cluster.complete_commit(warp.cta))
        for producer in mach.warps:  # the producers' waits on the empty barrier
            producer.clock.acquire(bar.history[bar.completed - 1])
    final: Timer = {}
    timed(final, "read", lambda: [cta.settle() for cta in mach.cluster.ctas])  # what the epilogue's ld does first
    issued = samples[f"mma {label} issue"][-blocks * (128 // (k * element)) :]
    loop = [sum(s[i] for s in issued) + final["read"][0][i] for i in range(2)]
    samples[f"mma {label}"] = [(loop[0] / len(issued), loop[1] / len(issued))]
    for step in range(32):  # alone: each MMA's product computed before the next (overwriting D)
        operands = N.MmaOperands(d=0, a=smem_desc(STAGE_A + 32 * (step % 4)), b=smem_desc(STAGE_B + 32 * (step % 4)),
                                 idesc=idesc, enable_input_d=0)  # fmt: skip
        warp.mask = np.arange(32) == 0
        timed(samples, f"mma {label} alone", lambda o=operands: (N.tcgen05_mma(warp, mma, kind, cta_group, o),
                                                                [c.settle() for c in mach.cluster.ctas]))  # fmt: skip
        warp.mask = warp.live
        warp.cta.inflight.clear()  # not committed: only the product's cost is of interest here


def tmem_loads(samples: Timer, repeat: int) -> None:
    gmem = np.zeros(256, dtype=np.uint8)
    mach = machine(1, 128, gmem)
    warp = mach.warp
    st, ld = op("nvvm.tcgen05.st"), op("nvvm.tcgen05.ld")
    for shape, registers, name in ((Tcgen05LdStShape.SHAPE_32X32B, 32, "32x32b.x32"),
                                   (Tcgen05LdStShape.SHAPE_16X256B, 32, "16x256b.x8")):  # fmt: skip
        plan = ldst_plan(shape, registers)
        N.tmem_st(warp, st, 0, np.arange(32 * registers, dtype=np.uint32).reshape(32, registers), plan)
        N.tmem_wait(warp, "st")
        for _ in range(repeat):
            timed(samples, f"tcgen05.ld {name}", lambda p=plan: N.tmem_ld(warp, ld, 0, p))
            timed(samples, f"tcgen05.wait::ld ({name})", lambda: N.tmem_wait(warp, "ld"))


def lower_bounds(samples: Timer, repeat: int) -> None:
    """The numpy-only work of each operation."""
    rng = np.random.default_rng(2)
    smem = rng.integers(0, 256, 65536).astype(np.uint8) & 0x3B
    a_map = operand_addresses(SmemDescriptor.decode(smem_desc(0)), 128, 16, 2, False) // 2
    b_map = operand_addresses(SmemDescriptor.decode(smem_desc(16384)), 256, 16, 2, False) // 2
    a16, b16 = smem[:4096].view(np.float16).reshape(128, 16), smem[4096:12288].view(np.float16).reshape(256, 16)
    d = np.zeros((128, 256), np.float32)
    out = np.empty((128, 256), np.float32)
    a32, b32 = a16.astype(np.float32), b16.astype(np.float32)
    view = smem.view(np.uint16)
    for _ in range(repeat):
        timed(samples, "np: f32 product + D", lambda: np.add(np.matmul(a32, b32.T, out=out), d, out=out))
        timed(samples, "np: gather+decode+product", lambda: np.add(
            np.matmul(view[a_map].view(np.float16).astype(np.float32),
                      view[b_map].view(np.float16).astype(np.float32).T, out=out),
            d, out=out))  # fmt: skip
    box_src = np.arange(16384, dtype=np.int64)
    box_dst = rng.permutation(16384)
    g = rng.integers(0, 256, 1 << 20).astype(np.uint8)
    chunks_src, chunks_dst = np.arange(1024), rng.permutation(1024)
    g16, s16 = g.view("V16"), np.zeros(65536, np.uint8).view("V16")
    for _ in range(repeat):
        timed(samples, "np: box bytes (fancy index)", lambda: smem.__setitem__(box_dst, g[box_src]))
        timed(samples, "np: box 16B chunks", lambda: s16.__setitem__(chunks_dst, g16[chunks_src]))
    tmem = np.zeros((128, 512), np.uint32).reshape(-1)
    flat = ldst_plan(Tcgen05LdStShape.SHAPE_16X256B, 32).flat
    for _ in range(repeat):
        timed(samples, "np: tmem gather 32x32", lambda: tmem[flat])


GOALS = {"mma f16 cg1": 30e-6, "tma": 15e-6}
"""Issue 14 / 15: a 4096^3 GEMM (131,072 MMAs, 65,536 box loads) in <= 10 s."""


def main() -> None:
    parser = argparse.ArgumentParser(description="Per-operation cost of the machine model")
    parser.add_argument("--repeat", type=int, default=50, help="k-blocks / calls per operation (default 50)")
    args = parser.parse_args()
    samples: Timer = {}
    with single_threaded_blas():
        gemm_blocks(samples, "f16 cg1", "f16", 1, 0, 2, args.repeat)
        gemm_blocks(samples, "f16 cg2", "f16", 2, 0, 2, args.repeat // 2 or 1)
        gemm_blocks(samples, "tf32 cg1", "tf32", 1, 2, 4, args.repeat)
        gemm_blocks(samples, "e4m3 cg1", "f8f6f4", 1, 0, 1, args.repeat)
        tmem_loads(samples, args.repeat * 4)
        lower_bounds(samples, args.repeat * 4)
    print("mma X: one K loop's cost per MMA, product and final read included (wall, CPU: the mean);")
    print("mma X issue: each call's issue (the product deferred); mma X alone: an MMA and its product")
    print(f"{'operation':36s} {'wall median':>12s} {'wall min':>9s} {'CPU median':>11s}   calls")
    for name, values in samples.items():
        goal = GOALS.get(name)
        note = f"   goal <= {goal * 1e6:.0f} us" if goal else ""
        wall, cpu = [v[0] for v in values], [v[1] for v in values]
        print(
            f"{name:36s} {statistics.median(wall) * 1e6:10.1f}us {min(wall) * 1e6:7.1f}us "
            f"{statistics.median(cpu) * 1e6:9.1f}us {len(values):7d}{note}"
        )


if __name__ == "__main__":
    main()
