"""Generate the TMA programs run on silicon (`silicon/programs/tma/`).

Every program is PTX `.version 8.6` / `.target sm_90` (assembles for sm_90a and sm_100a).
Tensor maps are kernel parameters `.param .align 64 .b8 tmapK[128]` that the runner
encodes on the device with `cuTensorMapEncodeTiled` from the spec's `tensor_map`
description (format in tests/silicon/README.md).

Load programs (`tma_load_*`): for each case, every thread fills the shared buffer with
0xA5 bytes, `fence.proxy.async.shared::cta`, `barrier.sync`; thread 0 issues
`mbarrier.arrive.expect_tx` with the box's shared-memory size and one
`cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`; all threads
wait on the mbarrier (a bounded loop of the non-blocking `test_wait.parity`); thread 0 records whether the phase
completed in `flags[case]`; all threads then copy `copy_bytes` of shared memory (the box
and what follows it) verbatim to `out + case * copy_bytes` with `ld.shared.u32` /
`st.global.u32`. So `out` holds the exact shared-memory image each load left (bytes TMA
did not write keep 0xA5).

Store programs (`tma_store`): for each case the threads write `value(case, i)` to shared
word i, fence, barrier, and thread 0 issues a tensor store or reduction
(`cp.async.bulk.tensor` / `cp.reduce.async.bulk.tensor` `.global.shared::cta.bulk_group`),
`commit_group`, `wait_group 0`; the tensor's global buffer after the kernel is the output.

`python silicon/generate_tma.py` rewrites `silicon/programs/tma/`.
"""

from __future__ import annotations

import json
import random
import sys
import zlib
from base64 import b64encode
from dataclasses import dataclass, field
from math import ceil, prod
from pathlib import Path
from typing import Any

PROGRAMS = Path(__file__).resolve().parent / "programs" / "tma"
SEED = 20261125
THREADS = 128
FILL = 0xA5A5A5A5
WAIT_LIMIT = 2_000_000

ELEM_BYTES = {
    "16U4_ALIGN8B": 1,
    "UINT8": 1,
    "UINT16": 2,
    "UINT32": 4,
    "INT32": 4,
    "FLOAT16": 2,
    "BFLOAT16": 2,
    "FLOAT32": 4,
    "FLOAT64": 8,
}


def encode(data: bytes) -> dict[str, str]:
    if not any(data):
        return {"encoding": "zeros"}
    return {"encoding": "zlib+base64", "data": b64encode(zlib.compress(data, 9)).decode()}


def random_bytes(n: int, salt: str) -> bytes:
    rng = random.Random(f"{SEED}:{salt}")
    return bytes(rng.getrandbits(8) for _ in range(n))


@dataclass(frozen=True)
class TMap:
    """A tensor map parameter: the `cuTensorMapEncodeTiled` arguments over a global buffer."""

    buffer: str
    dtype: str
    dims: tuple[int, ...]
    strides: tuple[int, ...]  # bytes, rank - 1 of them
    box: tuple[int, ...]
    estrides: tuple[int, ...] = ()
    swizzle: str = "NONE"
    oob_fill: str = "NONE"
    l2_promotion: str = "NONE"
    interleave: str = "NONE"
    offset: int = 0

    @property
    def rank(self) -> int:
        return len(self.dims)

    def element_strides(self) -> tuple[int, ...]:
        return self.estrides or (1,) * self.rank

    def smem_bytes(self) -> int:
        """The box's size in shared memory: ceil(box / elementStride) elements per dimension."""
        n = prod(ceil(b / e) for b, e in zip(self.box, self.element_strides(), strict=True))
        return n * ELEM_BYTES[self.dtype]

    def describe(self) -> dict[str, Any]:
        return {
            "buffer": self.buffer,
            "offset": self.offset,
            "data_type": self.dtype,
            "rank": self.rank,
            "global_dims": list(self.dims),
            "global_strides": list(self.strides),
            "box_dims": list(self.box),
            "element_strides": list(self.element_strides()),
            "interleave": self.interleave,
            "swizzle": self.swizzle,
            "l2_promotion": self.l2_promotion,
            "oob_fill": self.oob_fill,
        }


@dataclass(frozen=True)
class Case:
    tmap: int
    coords: tuple[int, ...]
    op: str = "load"  # load | store | add | min | max | inc | dec | and | or | xor
    dst: int = 0  # the destination's offset from the 1024-aligned shared buffer


@dataclass
class Program:
    name: str
    comment: str
    buffers: dict[str, bytes]
    tmaps: list[TMap]
    cases: list[Case]
    copy_bytes: int = 0
    outputs: list[str] = field(default_factory=list)
    prefetch: bool = True
    expect: int = 0  # expect_tx bytes per load; 0: the box's size


HEADER = ".version 8.6\n.target sm_90\n.address_size 64\n\n"


def _params(prog: Program, extra: list[str]) -> str:
    lines = [f"\t.param .u64 {b}" for b in prog.buffers]
    lines += [f"\t.param .align 64 .b8 tmap{k}[128]" for k in range(len(prog.tmaps))]
    lines += [f"\t.param .u64 {e}" for e in extra]
    return ",\n".join(lines)


def _prologue(prog: Program, ptrs: list[str]) -> list[str]:
    body = [
        "\t.reg .b64 %out, %flags, %o, %t;",
        f"\t.reg .b64 %tm<{len(prog.tmaps)}>;",
        "\t.reg .b32 %tx, %a, %v, %i, %n, %c0, %c1, %c2, %c3, %c4;",
        "\t.reg .b16 %mask;",
        "\t.reg .pred %leader, %q, %more, %loop;",
        "",
    ]
    for p in ptrs:
        reg = {"out_ptr": "%out", "flags_ptr": "%flags"}[p]
        body += [f"\tld.param.u64 {reg}, [{p}];", f"\tcvta.to.global.u64 {reg}, {reg};"]
    for k in range(len(prog.tmaps)):
        # the generic address of the byval parameter, as nvcc does for a __grid_constant__ CUtensorMap
        body += [f"\tmov.u64 %tm{k}, tmap{k};", f"\tcvta.param.u64 %tm{k}, %tm{k};"]
    body += ["\tmov.u32 %tx, %tid.x;", "\tsetp.eq.u32 %leader, %tx, 0;"]
    return body


def _smem_loop(label: str, nbytes: int, inner: list[str]) -> list[str]:
    """for (i = 4 tid; i < nbytes; i += 4 THREADS) inner (with %a = buf + i)."""
    return [
        "\tshl.b32 %i, %tx, 2;",
        f"{label}:",
        f"\tsetp.lt.u32 %loop, %i, {nbytes};",
        f"\t@!%loop bra {label}_END;",
        "\tmov.u32 %a, buf;",
        "\tadd.u32 %a, %a, %i;",
        *inner,
        f"\tadd.u32 %i, %i, {4 * THREADS};",
        f"\tbra {label};",
        f"{label}_END:",
    ]


def _coords(coords: tuple[int, ...]) -> tuple[list[str], str]:
    movs = [f"\tmov.b32 %c{d}, {c};" for d, c in enumerate(coords)]
    return movs, "{" + ", ".join(f"%c{d}" for d in range(len(coords))) + "}"


def _wait(label: str, parity: int) -> list[str]:
    return [
        "\tmov.u32 %n, 0;",
        f"{label}:",
        f"\tmbarrier.test_wait.parity.shared::cta.b64 %q, [mb], {parity};",
        "\tadd.u32 %n, %n, 1;",
        f"\tsetp.lt.u32 %more, %n, {WAIT_LIMIT};",
        f"\t@%q bra {label}_DONE;",
        f"\t@%more bra {label};",
        f"{label}_DONE:",
    ]


def load_program(prog: Program) -> str:
    smem = max(prog.copy_bytes, 16)
    lines = [f"// {line}" if line else "//" for line in prog.comment.splitlines()]
    lines += [HEADER.rstrip("\n"), "", f".shared .align 1024 .b8 buf[{smem}];", ".shared .align 8 .b64 mb;", ""]
    lines += [f".visible .entry {prog.name}(", _params(prog, ["out_ptr", "flags_ptr"]), ")", "{"]
    body = _prologue(prog, ["out_ptr", "flags_ptr"])
    body += [
        "\t@!%leader bra INIT_DONE;",
        *[f"\tprefetch.tensormap [%tm{k}];" for k in range(len(prog.tmaps)) if prog.prefetch],
        "\tmbarrier.init.shared::cta.b64 [mb], 1;",
        "INIT_DONE:",
    ]
    for k, case in enumerate(prog.cases):
        tm = prog.tmaps[case.tmap]
        movs, vec = _coords(case.coords)
        body += [f"\t// case {k}: tmap{case.tmap} at {list(case.coords)}, {tm.smem_bytes()} bytes to buf+{case.dst}"]
        body += _smem_loop(f"FILL{k}", smem, [f"\tst.shared.u32 [%a], {FILL};"])
        body += ["\tfence.proxy.async.shared::cta;", "\tbarrier.sync 0;", f"\t@!%leader bra ISSUED{k};", *movs]
        body += [
            f"\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [mb], {prog.expect or tm.smem_bytes()};",
            f"\tcp.async.bulk.tensor.{tm.rank}d.shared::cluster.global.mbarrier::complete_tx::bytes"
            f" [buf+{case.dst}], [%tm{case.tmap}, {vec}], [mb];",
            f"ISSUED{k}:",
        ]
        body += _wait(f"WAIT{k}", k % 2)
        body += [
            f"\t@!%leader bra RECORDED{k};",
            "\tselp.u32 %v, 1, 0, %q;",
            f"\tst.global.u32 [%flags+{4 * k}], %v;",
            f"RECORDED{k}:",
        ]
        body += _smem_loop(
            f"COPY{k}",
            prog.copy_bytes,
            [
                "\tld.shared.u32 %v, [%a];",
                "\tcvt.u64.u32 %t, %i;",
                "\tadd.u64 %o, %out, %t;",
                f"\tst.global.u32 [%o+{k * prog.copy_bytes}], %v;",
            ],
        )
        body += ["\tbarrier.sync 0;"]
    body += ["\tret;", "}"]
    return "\n".join(lines + body) + "\n"


def store_value(case: int, word: int) -> int:
    """What threads write to shared word `word` before store case `case`: distinct and case-tagged."""
    return ((case + 1) << 24) | (word * 0x9E37) & 0xFFFFFF


def store_program(prog: Program) -> str:
    smem = max(tm.smem_bytes() for tm in prog.tmaps)
    lines = [f"// {line}" if line else "//" for line in prog.comment.splitlines()]
    lines += [HEADER.rstrip("\n"), "", f".shared .align 1024 .b8 buf[{smem}];", ""]
    lines += [f".visible .entry {prog.name}(", _params(prog, []), ")", "{"]
    body = _prologue(prog, [])
    for k, case in enumerate(prog.cases):
        tm = prog.tmaps[case.tmap]
        movs, vec = _coords(case.coords)
        body += [f"\t// case {k}: {case.op} through tmap{case.tmap} at {list(case.coords)}"]
        body += _smem_loop(
            f"FILL{k}",
            smem,
            [
                "\tshr.u32 %v, %i, 2;",
                "\tmul.lo.u32 %v, %v, 40503;",  # 0x9E37
                "\tand.b32 %v, %v, 16777215;",
                f"\tor.b32 %v, %v, {(k + 1) << 24};",
                "\tst.shared.u32 [%a], %v;",
            ],
        )
        body += ["\tfence.proxy.async.shared::cta;", "\tbarrier.sync 0;", f"\t@!%leader bra DONE{k};", *movs]
        dims = f"{tm.rank}d"
        if case.op == "store":
            body += [f"\tcp.async.bulk.tensor.{dims}.global.shared::cta.bulk_group [%tm{case.tmap}, {vec}], [buf];"]
        else:
            body += [
                f"\tcp.reduce.async.bulk.tensor.{dims}.global.shared::cta.{case.op}.tile.bulk_group"
                f" [%tm{case.tmap}, {vec}], [buf];"
            ]
        wait = "cp.async.bulk.wait_group.read 0;" if k == len(prog.cases) - 1 else "cp.async.bulk.wait_group 0;"
        body += ["\tcp.async.bulk.commit_group;", f"\t{wait}", f"DONE{k}:", "\tbarrier.sync 0;"]
    body += ["\tret;", "}"]
    return "\n".join(lines + body) + "\n"


# --- the programs -------------------------------------------------------------------------------


def programs() -> list[Program]:
    out: list[Program] = []

    # 1D: u8 tensor of 300 elements, box of 64: inside, clipped at the end, negative, past the end
    g1 = random_bytes(320, "1d")
    out.append(
        Program(
            "tma_load_1d",
            "1D tile loads of a u8 tensor (300 elements, box 64): inside, clipped at either end, wholly\n"
            "outside; the last case loads a FLOAT32 view with NaN fill (box 16, clipped).",
            {"gmem": g1},
            [TMap("gmem", "UINT8", (300,), (), (64,)),
             TMap("gmem", "FLOAT32", (75,), (), (16,), oob_fill="NAN_REQUEST_ZERO_FMA")],
            [Case(0, (0,)), Case(0, (96,)), Case(0, (256,)), Case(0, (-16,)), Case(0, (304,)), Case(0, (-64,)),
             Case(1, (68,)), Case(1, (-4,))],
            copy_bytes=128,
        )
    )  # fmt: skip

    # 2D u16, 40 x 30 elements, rows 96 bytes apart (16 bytes of padding per row), every swizzle
    g2 = random_bytes(96 * 32, "2d")
    maps2 = [
        TMap("gmem", "UINT16", (40, 30), (96,), (16, 8)),
        TMap("gmem", "UINT16", (40, 30), (96,), (16, 8), swizzle="32B"),
        TMap("gmem", "UINT16", (40, 30), (96,), (32, 8), swizzle="64B"),
        TMap("gmem", "UINT16", (40, 30), (96,), (64, 16), swizzle="128B"),
    ]
    cases2: list[Case] = []
    for m in range(len(maps2)):
        cases2 += [Case(m, (0, 0)), Case(m, (8, 5)), Case(m, (32, 24)), Case(m, (-8, -4))]
    cases2 += [Case(0, (40, 0)), Case(3, (-64, 0)), Case(2, (8, 29))]
    out.append(
        Program(
            "tma_load_2d_swizzle",
            "2D tile loads of a u16 tensor (40 x 30, rows 96 bytes apart), swizzle none/32B/64B/128B;\n"
            "clipped and negative coordinates.",
            {"gmem": g2},
            maps2,
            cases2,
            copy_bytes=2048,
        )
    )

    # 3D..5D u32/f32 tensors with padded strides
    g3 = random_bytes(8192, "nd")
    maps3 = [
        TMap("gmem", "UINT32", (6, 5, 4), (32, 176), (4, 4, 2)),
        TMap("gmem", "UINT32", (6, 3, 3, 3), (32, 96, 304), (4, 2, 2, 2)),
        TMap("gmem", "FLOAT32", (6, 2, 3, 2, 3), (32, 64, 208, 416), (4, 2, 2, 2, 2), oob_fill="NAN_REQUEST_ZERO_FMA"),
        TMap("gmem", "UINT8", (32, 7, 5), (48, 336), (32, 4, 4), swizzle="32B"),
    ]
    out.append(
        Program(
            "tma_load_nd",
            "3D, 4D and 5D tile loads (u32, f32 with NaN fill, u8 with 32B swizzle), padded strides,\n"
            "clipped in several dimensions at once.",
            {"gmem": g3},
            maps3,
            [Case(0, (0, 0, 0)), Case(0, (4, 2, 3)), Case(0, (-4, -3, -1)),
             Case(1, (0, 0, 0, 0)), Case(1, (4, 2, 2, 2)), Case(1, (0, -1, -1, -1)),
             Case(2, (0, 0, 0, 0, 0)), Case(2, (4, 1, 2, 1, 2)), Case(2, (-4, 0, -1, 0, -1)),
             Case(3, (0, 0, 0)), Case(3, (0, 5, 3)), Case(3, (-16, -2, 0))],
            copy_bytes=1024,
        )
    )  # fmt: skip

    # OOB fill: f32, f16, bf16 with NONE and NAN_REQUEST_ZERO_FMA; element strides; L2 promotion
    g4 = random_bytes(64 * 24, "oob")
    maps4 = [
        TMap("gmem", "FLOAT32", (12, 20), (64,), (8, 4)),
        TMap("gmem", "FLOAT32", (12, 20), (64,), (8, 4), oob_fill="NAN_REQUEST_ZERO_FMA"),
        TMap("gmem", "FLOAT16", (24, 20), (64,), (16, 4), oob_fill="NAN_REQUEST_ZERO_FMA"),
        TMap("gmem", "BFLOAT16", (24, 20), (64,), (16, 4), oob_fill="NAN_REQUEST_ZERO_FMA", l2_promotion="L2_256B"),
        TMap("gmem", "FLOAT32", (12, 20), (64,), (8, 6), estrides=(1, 3)),
        TMap("gmem", "FLOAT32", (12, 20), (64,), (8, 5), estrides=(2, 2), oob_fill="NAN_REQUEST_ZERO_FMA"),
        TMap("gmem", "UINT16", (24, 20), (64,), (16, 8), estrides=(1, 8), l2_promotion="L2_128B"),
    ]
    names4 = ["f32", "f32_nan", "f16_nan", "bf16_nan", "f32_estride_1x3", "f32_estride_2x2_nan", "u16_estride_1x8"]
    for name, m in zip(names4, maps4, strict=True):
        out.append(
            Program(
                f"tma_load_oob_{name}",
                "Out-of-bounds fill NONE vs NAN_REQUEST_ZERO_FMA for f32, f16, bf16; element strides > 1\n"
                "(dimension 0's is ignored by TMA per the driver documentation); L2 promotion.",
                {"gmem": g4},
                [m],
                [Case(0, (8, 1)), Case(0, (8, 18)), Case(0, (-8, -2))],
                copy_bytes=256,
            )
        )
    out.append(
        Program(
            "tma_load_oob_f64_nan",
            "NaN fill of an f64 tensor (6 x 20, rows 64 bytes apart), clipped and negative boxes.",
            {"gmem": g4},
            [TMap("gmem", "FLOAT64", (6, 20), (64,), (4, 4), oob_fill="NAN_REQUEST_ZERO_FMA")],
            [Case(0, (4, 1)), Case(0, (-2, -2)), Case(0, (0, 18))],
            copy_bytes=256,
        )
    )

    # stores and reductions: u32 tensor 20 x 12, rows 96 bytes apart
    g5 = random_bytes(96 * 12, "store")
    maps5 = [
        TMap("gmem", "UINT32", (20, 12), (96,), (8, 4)),
        TMap("gmem", "UINT32", (20, 12), (96,), (16, 4), swizzle="64B"),
    ]
    for name, coords in (
        ("inside", (0, 0)),
        ("clip_end", (16, 10)),
        ("past_end", (24, 0)),
        ("neg_row", (0, -2)),
        ("neg_col", (-4, 0)),
        ("neg_both", (-4, -2)),
        ("coord_8B", (2, 0)),
    ):
        out.append(
            Program(
                f"tma_store_{name}",
                f"One shared -> global tensor store at {list(coords)}\n(bulk_group + commit_group + wait_group).",
                {"gmem": g5},
                maps5[:1],
                [Case(0, coords, "store")],
                outputs=["gmem"],
            )
        )
    out.append(
        Program(
            "tma_store_sw64",
            "Shared -> global tensor stores from a 64B-swizzled box.",
            {"gmem": g5},
            maps5[1:],
            [Case(0, (4, 4), "store"), Case(0, (12, 9), "store")],
            outputs=["gmem"],
        )
    )
    for name, box in (("sw128", (32, 4)), ("sw128_narrow", (8, 4))):
        out.append(
            Program(
                f"tma_store_{name}",
                f"Shared -> global tensor stores from a 128B-swizzled box of {box[0] * 4} bytes a row"
                " (rows padded to 128 bytes in shared memory when narrower).",
                {"gmem": g5},
                [TMap("gmem", "UINT32", (20, 12), (96,), box, swizzle="128B")],
                [Case(0, (0, 0), "store"), Case(0, (8 if box[0] == 8 else 16, 8), "store")],
                outputs=["gmem"],
            )
        )
    for case in (
        Case(0, (8, 0), "add"),
        Case(0, (12, 4), "min"),
        Case(0, (0, 4), "max"),
        Case(0, (4, 8), "inc"),
        Case(0, (12, 8), "dec"),
        Case(0, (16, 4), "and"),
        Case(0, (4, 10), "or"),
        Case(0, (12, 6), "xor"),
        Case(0, (-4, 10), "or"),
    ):
        name = case.op if case.coords[0] >= 0 else f"{case.op}_neg_col"
        out.append(
            Program(
                f"tma_reduce_{name}",
                f"cp.reduce.async.bulk.tensor .{case.op} on u32 at {list(case.coords)}",
                {"gmem": g5},
                maps5[:1],
                [case],
                outputs=["gmem"],
            )
        )
    return out


def finding_programs() -> list[Program]:
    """One load each, each run in its own process (a fault ends the CUDA context): what silicon
    does where the documentation is silent. Dimension 0's start in bytes not a multiple of 16;
    destinations that are not aligned to the swizzle pattern's period; boxes narrower than the
    swizzle span (`expect` is the padded size: the phase completes only if TMA counts it)."""
    g = random_bytes(96 * 32, "2d")
    plain = TMap("gmem", "UINT16", (40, 30), (96,), (16, 8))
    sw = {
        z: TMap("gmem", "UINT16", (40, 30), (96,), (8 * int(z[:-1]) // 16, 8), swizzle=z)
        for z in ("32B", "64B", "128B")
    }
    progs = [
        Program(
            f"tma_find_coord_{name}",
            f"one 2D u16 load at {coords}: dimension 0 starts {name} into a 16-byte unit",
            {"gmem": g},
            [plain],
            [Case(0, coords)],
            copy_bytes=256,
            prefetch=False,
        )
        for name, coords in (("2B", (1, 0)), ("8B", (4, 0)), ("minus2B", (-1, 0)), ("row3", (0, 3)))
    ]
    for z, dst in (("32B", 128), ("32B", 64), ("64B", 256), ("64B", 128), ("128B", 512), ("128B", 128)):
        progs.append(
            Program(
                f"tma_find_dst_sw{z}_{dst}",
                f"one {z}-swizzled load to buf + {dst}",
                {"gmem": g},
                [sw[z]],
                [Case(0, (0, 0), dst=dst)],
                copy_bytes=2048,
                prefetch=False,
            )
        )
    progs.append(
        Program(
            "tma_find_dst_none_16",
            "one unswizzled load to buf + 16",
            {"gmem": g},
            [plain],
            [Case(0, (0, 0), dst=16)],
            copy_bytes=512,
            prefetch=False,
        )
    )
    for z, inner in (("128B", 8), ("128B", 16), ("128B", 32), ("64B", 8), ("64B", 16), ("32B", 8)):
        m = TMap("gmem", "UINT16", (40, 30), (96,), (inner, 8), swizzle=z)
        span = int(z[:-1])
        progs.append(
            Program(
                f"tma_find_narrow_sw{z}_{2 * inner}",
                f"{z} swizzle, inner box {2 * inner} bytes, 8 rows; expect_tx {8 * span} (rows padded to the span)",
                {"gmem": g},
                [m],
                [Case(0, (0, 0))],
                copy_bytes=4096,
                prefetch=False,
                expect=8 * span,
            )
        )
    # dimension 0's element stride, documented as ignored (f32 12 x 20, rows 64 bytes apart)
    g4 = random_bytes(64 * 24, "oob")
    for name, box, es, coords in (
        ("2x2_row18", (8, 5), (2, 2), (8, 18)),
        ("2x1_row18", (8, 5), (2, 1), (8, 18)),
        ("1x2_row18", (8, 5), (1, 2), (8, 18)),
        ("2x2_col0_row18", (8, 5), (2, 2), (0, 18)),
        ("2x2_row16", (8, 5), (2, 2), (8, 16)),
        ("2x2_row19", (8, 5), (2, 2), (8, 19)),
        ("4x1_row0", (8, 4), (4, 1), (0, 0)),
    ):
        m = TMap("gmem", "FLOAT32", (12, 20), (64,), box, estrides=es)
        progs.append(
            Program(
                f"tma_find_estride0_{name}",
                f"one f32 load, box {list(box)}, element strides {list(es)}, at {list(coords)}",
                {"gmem": g4},
                [m],
                [Case(0, coords)],
                copy_bytes=256,
                prefetch=False,
            )
        )
    return progs  # fmt: skip


def multicast_program(n: int) -> tuple[str, Program, list[int]]:
    """`.multicast::cluster` in a cluster of `n`: two issuers, each to the CTAs of its mask."""
    issues = [(0, 0b11, (4, 1)), (1, 0b11, (8, 4))] if n == 2 else [(0, 0b1011, (4, 1)), (2, 0b0110, (8, 4))]
    tm = TMap("gmem", "UINT32", (12, 6), (64,), (8, 4))
    box = tm.smem_bytes()
    prog = Program(
        f"tma_multicast_c{n}",
        f"cp.async.bulk.tensor .multicast::cluster in one cluster of {n} CTAs x {THREADS} threads. Issuers\n"
        + "".join(f"rank {r} mask {m:#06b} at {list(c)} into buf{j}; " for j, (r, m, c) in enumerate(issues))
        + "\neach CTA expects the bytes of the loads\n"
        "whose mask names it, waits, and copies buf0 and buf1 (pre-filled with 0xA5) to\n"
        f"out + rank * {2 * box}; flags[rank] = phase 0 completed within the bounded wait.",
        {"gmem": random_bytes(64 * 6, f"mc{n}")},
        [tm],
        [],
        copy_bytes=box,
    )
    expect = [box * sum(1 for _, m, _ in issues if m >> r & 1) for r in range(n)]
    lines = [f"// {line}" for line in prog.comment.splitlines()]
    lines += [HEADER.rstrip("\n"), "", f".shared .align 1024 .b8 buf[{2 * box}];", ".shared .align 8 .b64 mb;", ""]
    lines += [f".visible .entry {prog.name}(", _params(prog, ["out_ptr", "flags_ptr"]), ")", "{"]
    body = _prologue(prog, ["out_ptr", "flags_ptr"])
    body += ["\t.reg .b32 %rank;", "\tmov.u32 %rank, %cluster_ctarank;"]
    body += _smem_loop("FILL", 2 * box, [f"\tst.shared.u32 [%a], {FILL};"])
    body += [
        "\tfence.proxy.async.shared::cta;",
        "\t@%leader mbarrier.init.shared::cta.b64 [mb], 1;",
        "\tfence.mbarrier_init.release.cluster;",
        "\tbarrier.cluster.arrive.release.aligned;",
        "\tbarrier.cluster.wait.acquire.aligned;",
        "\t@!%leader bra ISSUED;",
    ]
    for r in range(n):
        op = (
            f"mbarrier.arrive.expect_tx.shared::cta.b64 _, [mb], {expect[r]};"
            if expect[r]
            else "mbarrier.arrive.shared::cta.b64 _, [mb];"
        )
        body += [f"\tsetp.eq.u32 %q, %rank, {r};", f"\t@%q {op}"]
    for j, (r, m, c) in enumerate(issues):
        movs, vec = _coords(c)
        body += [f"\tsetp.ne.u32 %q, %rank, {r};", f"\t@%q bra SKIP{j};", *movs, f"\tmov.u16 %mask, {m};"]
        body += [
            "\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            f" [buf+{j * box}], [%tm0, {vec}], [mb], %mask;",
            f"SKIP{j}:",
        ]
    body += ["ISSUED:", *_wait("WAIT", 0)]
    body += [
        "\t@!%leader bra RECORDED;",
        "\tselp.u32 %v, 1, 0, %q;",
        "\tmul.wide.u32 %t, %rank, 4;",
        "\tadd.u64 %o, %flags, %t;",
        "\tst.global.u32 [%o], %v;",
        "RECORDED:",
        "\tmul.wide.u32 %t, %rank, " + str(2 * box) + ";",
        "\tadd.u64 %out, %out, %t;",
    ]
    body += _smem_loop(
        "COPY",
        2 * box,
        ["\tld.shared.u32 %v, [%a];", "\tcvt.u64.u32 %t, %i;", "\tadd.u64 %o, %out, %t;", "\tst.global.u32 [%o], %v;"],
    )
    # no CTA may exit while a multicast into it is in flight
    body += ["\tbarrier.cluster.arrive.release.aligned;", "\tbarrier.cluster.wait.acquire.aligned;", "\tret;", "}"]
    prog.cases = [Case(0, c) for _, _, c in issues]
    return "\n".join(lines + body) + "\n", prog, expect


# (barrier count, steps): a step is "expect N", "complete N", "arrive", "arrive_expect N" or
# "test P" (records mbarrier.test_wait.parity P as 0/1). One thread, program order only.
TX_EXPERIMENTS: list[tuple[int, list[str]]] = [
    (1, ["test 0", "expect 64", "test 0", "complete 64", "test 0", "arrive", "test 0", "test 1"]),
    (1, ["complete 32", "test 0", "arrive_expect 32", "test 0"]),
    (1, ["arrive_expect 16", "test 0", "complete 16", "test 0"]),
    (1, ["complete 16", "test 0", "arrive", "test 0", "expect 16", "test 0", "expect 8", "complete 8", "test 0"]),
    (2, ["arrive_expect 16", "test 0", "arrive", "test 0", "complete 16", "test 0"]),
    (1, ["expect 8", "expect 8", "arrive", "complete 8", "test 0", "complete 8", "test 0", "test 1"]),
    (1, ["arrive_expect 48", "complete 16", "complete 16", "test 0", "complete 16", "test 0",
         "arrive_expect 8", "test 1", "complete 8", "test 1", "test 0"]),
]  # fmt: skip


def tx_program() -> tuple[str, dict[str, Any]]:
    """`expect_tx` / `complete_tx` accounting, then real copies (bulk and tensor) with exact and wrong counts."""
    nrec = sum(1 for _, steps in TX_EXPERIMENTS for st in steps if st.startswith("test"))
    tm = TMap("gmem", "UINT32", (16, 8), (64,), (8, 4))
    box = tm.smem_bytes()
    comment = (
        "mbarrier transaction accounting on silicon, one thread (thread 0 of 32), program order only.\n"
        f"out[0..{nrec - 1}]: mbarrier.test_wait.parity results (0/1) of the steps of TX_EXPERIMENTS\n"
        "(silicon/generate_tma.py), each experiment on a fresh barrier. Then, on further barriers:\n"
        f"out[{nrec}]: bounded wait after arrive.expect_tx {box} + a {box}-byte tensor load (exact count);\n"
        f"out[{nrec + 1}]: bounded wait after arrive.expect_tx {box + 16} + the same load (over-count: never\n"
        f"completes by itself); out[{nrec + 2}]: bounded wait after a further complete_tx 16;\n"
        f"out[{nrec + 3}]: bounded wait after expect_tx 256 + arrive + non-tensor cp.async.bulk of 256 bytes;\n"
        f"out[{nrec + 4}..]: the tensor box ({box} B), then the 256 bulk bytes, read from shared memory;\n"
        "then a non-tensor bulk store of the 256 bytes to gmem + 512 (commit_group, wait_group.read)."
    )
    lines = [f"// {line}" for line in comment.splitlines()]
    nmb = len(TX_EXPERIMENTS) + 3
    lines += [
        HEADER.rstrip("\n"),
        "",
        f".shared .align 1024 .b8 buf[{box + 256}];",
        f".shared .align 8 .b64 mbs[{nmb}];",
        "",
    ]
    prog = Program("tma_mbarrier_tx", comment, {"gmem": random_bytes(1024, "tx")}, [tm], [])
    lines += [f".visible .entry {prog.name}(", _params(prog, ["out_ptr"]), ")", "{"]
    body = _prologue(prog, ["out_ptr"])
    body += ["\t.reg .b64 %g, %mb;", "\tld.param.u64 %g, [gmem];", "\tcvta.to.global.u64 %g, %g;"]
    body += ["\t@!%leader bra END;"]
    rec = 0
    for e, (count, steps) in enumerate(TX_EXPERIMENTS):
        mb = f"[mbs+{8 * e}]"
        body += [
            f"\t// experiment {e}: count {count}: {', '.join(steps)}",
            f"\tmbarrier.init.shared::cta.b64 {mb}, {count};",
        ]
        for st in steps:
            op, *arg = st.split()
            if op == "test":
                body += [
                    f"\tmbarrier.test_wait.parity.shared::cta.b64 %q, {mb}, {arg[0]};",
                    "\tselp.u32 %v, 1, 0, %q;",
                    f"\tst.global.u32 [%out+{4 * rec}], %v;",
                ]
                rec += 1
            elif op == "expect":
                body += [f"\tmbarrier.expect_tx.shared::cta.b64 {mb}, {arg[0]};"]
            elif op == "complete":
                body += [f"\tmbarrier.complete_tx.shared::cta.b64 {mb}, {arg[0]};"]
            elif op == "arrive":
                body += [f"\tmbarrier.arrive.shared::cta.b64 _, {mb};"]
            else:
                body += [f"\tmbarrier.arrive.expect_tx.shared::cta.b64 _, {mb}, {arg[0]};"]
    e0 = len(TX_EXPERIMENTS)

    def wait(label: str, e: int, slot: int) -> list[str]:
        return [
            "\tmov.u32 %n, 0;",
            f"{label}:",
            f"\tmbarrier.test_wait.parity.shared::cta.b64 %q, [mbs+{8 * e}], 0;",
            "\tadd.u32 %n, %n, 1;",
            f"\tsetp.lt.u32 %more, %n, {WAIT_LIMIT};",
            f"\t@%q bra {label}_DONE;",
            f"\t@%more bra {label};",
            f"{label}_DONE:",
            "\tselp.u32 %v, 1, 0, %q;",
            f"\tst.global.u32 [%out+{4 * slot}], %v;",
        ]

    movs, vec = _coords((4, 2))
    for e in range(e0, e0 + 3):
        body += [f"\tmbarrier.init.shared::cta.b64 [mbs+{8 * e}], 1;"]
    body += ["\tfence.proxy.async.shared::cta;", *movs]

    def load(off: int) -> str:
        return (
            "\tcp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
            f" [buf], [%tm0, {vec}], [mbs+{off}];"
        )

    body += [f"\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [mbs+{8 * e0}], {box};", load(8 * e0)]
    body += wait("EXACT", e0, rec)
    body += [f"\tmbarrier.arrive.expect_tx.shared::cta.b64 _, [mbs+{8 * (e0 + 1)}], {box + 16};", load(8 * (e0 + 1))]
    body += wait("OVER", e0 + 1, rec + 1)
    body += [f"\tmbarrier.complete_tx.shared::cta.b64 [mbs+{8 * (e0 + 1)}], 16;"]
    body += wait("OVER2", e0 + 1, rec + 2)
    body += [
        f"\tmbarrier.expect_tx.shared::cta.b64 [mbs+{8 * (e0 + 2)}], 256;",
        f"\tmbarrier.arrive.shared::cta.b64 _, [mbs+{8 * (e0 + 2)}];",
        "\tadd.u64 %t, %g, 128;",
        "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
        f" [buf+{box}], [%t], 256, [mbs+{8 * (e0 + 2)}];",
    ]
    body += wait("BULK", e0 + 2, rec + 3)
    body += ["\tmov.u32 %i, 0;", "COPY:", "\tmov.u32 %a, buf;", "\tadd.u32 %a, %a, %i;", "\tld.shared.u32 %v, [%a];"]
    body += ["\tcvt.u64.u32 %t, %i;", "\tadd.u64 %o, %out, %t;", f"\tst.global.u32 [%o+{4 * (rec + 4)}], %v;"]
    body += ["\tadd.u32 %i, %i, 4;", f"\tsetp.lt.u32 %loop, %i, {box + 256};", "\t@%loop bra COPY;"]
    body += [
        "\tadd.u64 %t, %g, 512;",
        f"\tcp.async.bulk.global.shared::cta.bulk_group [%t], [buf+{box}], 256;",
        "\tcp.async.bulk.commit_group;",
        "\tcp.async.bulk.wait_group.read 0;",
        "END:",
        "\tret;",
        "}",
    ]
    nwords = rec + 4 + (box + 256) // 4
    spec = spec_of(prog, f"tma/{prog.name}.ptx", prog.name, [("out_ptr", 4 * nwords)])
    spec["block"] = [32, 1, 1]
    spec["outputs"] = ["gmem", "out_ptr"]
    spec["tma"] = {
        "experiments": [{"count": c, "steps": s} for c, s in TX_EXPERIMENTS],
        "records": rec,
        "box_bytes": box,
    }
    return "\n".join(lines + body) + "\n", spec


def _check(
    name: str,
    dtype: str = "UINT16",
    dims: tuple[int, ...] = (64, 32),
    strides: tuple[int, ...] = (128,),
    box: tuple[int, ...] = (64, 8),
    **kw: Any,
) -> dict[str, Any]:
    return {"name": name, "tensor_map": TMap("gmem", dtype, dims, strides, box, **kw).describe()}


def encode_checks() -> list[dict[str, Any]]:
    """Descriptions given to cuTensorMapEncodeTiled on the device; the verdicts are the fixture."""
    c = _check
    checks = [
        c("valid 2D u16, 128B swizzle", swizzle="128B"),
        c("valid, address 16 bytes into the buffer", offset=16),
        c("address 8 bytes into the buffer (not 16-aligned)", offset=8),
        c("address 4 bytes into the buffer", offset=4),
        c("stride 120 (not a multiple of 16)", strides=(120,)),
        c("stride 144 (multiple of 16, padded row)", strides=(144,)),
        c("stride 64, less than a row of 128 bytes", strides=(64,)),
        c("stride 0", strides=(0,)),
        c("stride 2^40", strides=(1 << 40,)),
        c("stride 2^40 - 16", strides=((1 << 40) - 16,)),
        c("box 257 in dimension 1", box=(8, 257)),
        c("box 256 in dimension 1", box=(8, 256)),
        c("box 256 in dimension 0 (512 bytes, no swizzle)", box=(256, 8)),
        c("box 0 in dimension 1", box=(8, 0)),
        c("box larger than the tensor (box 64 rows of a 32-row tensor)", box=(8, 64)),
        c("inner box 24 bytes (not a multiple of 16)", box=(12, 8)),
        c("inner box 8 bytes", box=(4, 8)),
        c("32B swizzle, inner box 32 bytes", box=(16, 8), swizzle="32B"),
        c("32B swizzle, inner box 64 bytes", box=(32, 8), swizzle="32B"),
        c("64B swizzle, inner box 64 bytes", box=(32, 8), swizzle="64B"),
        c("64B swizzle, inner box 128 bytes", box=(64, 8), swizzle="64B"),
        c("128B swizzle, inner box 256 bytes", box=(128, 8), swizzle="128B"),
        c("128B swizzle, inner box 16 bytes", box=(8, 8), swizzle="128B"),
        c("128B_ATOM_32B swizzle", swizzle="128B_ATOM_32B"),
        c("128B_ATOM_32B_FLIP_8B swizzle", swizzle="128B_ATOM_32B_FLIP_8B"),
        c("128B_ATOM_64B swizzle", swizzle="128B_ATOM_64B"),
        c("global dim 0", dims=(64, 0)),
        c("global dim 2^32", dims=(64, 1 << 32), strides=(128,)),
        c("global dim 2^32 + 1", dims=(64, (1 << 32) + 1), strides=(128,)),
        c("element stride 8", box=(64, 8), estrides=(1, 8)),
        c("element stride 9", box=(64, 9), estrides=(1, 9)),
        c("element stride 0", estrides=(1, 0)),
        c("element stride 2 in dimension 0", estrides=(2, 1)),
        c("element stride 9 in dimension 0", estrides=(9, 1)),
        c("NaN fill on a u16 tensor", oob_fill="NAN_REQUEST_ZERO_FMA"),
        c("NaN fill on f16", dtype="FLOAT16", oob_fill="NAN_REQUEST_ZERO_FMA"),
        c("NaN fill on f32", dtype="FLOAT32", dims=(32, 32), box=(32, 8), oob_fill="NAN_REQUEST_ZERO_FMA"),
        c("L2 promotion 256B", l2_promotion="L2_256B"),
        c("rank 1", dims=(64,), strides=(), box=(64,)),
        c("rank 5", dims=(64, 2, 2, 2, 2), strides=(128, 256, 512, 1024), box=(64, 1, 1, 1, 1)),
        c("rank 5, strides not increasing", dims=(64, 2, 2, 2, 2), strides=(128, 1024, 512, 256), box=(64, 1, 1, 1, 1)),
        c("rank 3, stride of dimension 2 below dimension 1's extent", dims=(64, 4, 4), strides=(128, 256),
          box=(64, 2, 2)),
        c("rank 2, box 1 x 1 of f64", dtype="FLOAT64", dims=(16, 16), box=(2, 1)),
        c("interleave 16B, rank 2", interleave="16B", box=(8, 8)),
        c("interleave 16B, rank 3", dims=(8, 16, 16), strides=(16, 256), box=(8, 8, 8), interleave="16B"),
        c("interleave 32B, rank 3, no swizzle", dims=(16, 16, 16), strides=(32, 512), box=(16, 8, 8), interleave="32B"),
        c("interleave 32B, rank 3, 32B swizzle", dims=(16, 16, 16), strides=(32, 512), box=(16, 8, 8),
          interleave="32B", swizzle="32B"),
        c("interleave 32B, stride 48", dims=(16, 16, 16), strides=(48, 768), box=(16, 8, 8), interleave="32B",
          swizzle="32B"),
        c("interleave 16B, inner box 8 bytes", dims=(8, 16, 16), strides=(16, 256), box=(4, 8, 8), interleave="16B"),
        c("16U4_ALIGN8B data type", dtype="16U4_ALIGN8B", dims=(128, 32), box=(128, 8)),
        c("rank 0", dims=(), strides=(), box=()),
        c("rank 6", dims=(64, 2, 2, 2, 2, 2), strides=(128, 256, 512, 1024, 2048), box=(64, 1, 1, 1, 1, 1)),
    ]  # fmt: skip
    return checks


def spec_of(prog: Program, ptx_file: str, kernel: str, extra_params: list[tuple[str, int]]) -> dict[str, Any]:
    params: list[dict[str, Any]] = [
        {"name": n, "buffer": {"dtype": "u8", "nbytes": len(b), "init": encode(b)}} for n, b in prog.buffers.items()
    ]
    params += [{"name": f"tmap{k}", "tensor_map": tm.describe()} for k, tm in enumerate(prog.tmaps)]
    params += [
        {"name": n, "buffer": {"dtype": "u32", "nbytes": size, "init": encode(bytes(size))}} for n, size in extra_params
    ]
    outputs = prog.outputs or [n for n, _ in extra_params]
    return {
        "kernel": kernel,
        "ptx": ptx_file,
        "grid": [1, 1, 1],
        "block": [THREADS, 1, 1],
        "cluster": [1, 1, 1],
        "dynamic_smem": 0,
        "params": params,
        "outputs": outputs,
        "tma": {"cases": [{"tmap": c.tmap, "coords": list(c.coords), "op": c.op} for c in prog.cases],
                "copy_bytes": prog.copy_bytes, "fill": FILL & 0xFF, "dst": [c.dst for c in prog.cases],
                "expect_tx": prog.expect or None},
    }  # fmt: skip


def write_all() -> None:
    PROGRAMS.mkdir(parents=True, exist_ok=True)
    for prog in programs() + finding_programs():
        if prog.outputs:
            text, extra = store_program(prog), []
        else:
            text, extra = (
                load_program(prog),
                [("out_ptr", prog.copy_bytes * len(prog.cases)), ("flags_ptr", 4 * len(prog.cases))],
            )
        (PROGRAMS / f"{prog.name}.ptx").write_text(text)
        spec = spec_of(prog, f"tma/{prog.name}.ptx", prog.name, extra)
        (PROGRAMS / f"{prog.name}.json").write_text(json.dumps(spec, indent=1) + "\n")
    text, spec = tx_program()
    (PROGRAMS / "tma_mbarrier_tx.ptx").write_text(text)
    (PROGRAMS / "tma_mbarrier_tx.json").write_text(json.dumps(spec, indent=1) + "\n")
    checks = {"encode_checks": encode_checks(), "buffer_bytes": 1 << 20}
    (PROGRAMS / "tma_encode_checks.json").write_text(json.dumps(checks, indent=1) + "\n")
    for n in (2, 4):
        text, prog, expect = multicast_program(n)
        (PROGRAMS / f"{prog.name}.ptx").write_text(text)
        box = prog.copy_bytes
        spec = spec_of(prog, f"tma/{prog.name}.ptx", prog.name, [("out_ptr", 2 * box * n), ("flags_ptr", 4 * n)])
        spec["grid"] = spec["cluster"] = [n, 1, 1]
        spec["tma"]["multicast"] = {"expect_tx": expect}
        (PROGRAMS / f"{prog.name}.json").write_text(json.dumps(spec, indent=1) + "\n")


if __name__ == "__main__":
    write_all()
    sys.exit(0)
