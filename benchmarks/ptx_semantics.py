"""Cost of one warp-instruction's value semantics: the callables of
`xdsl_tmem.interpreter.ptx.decode` on 32-lane numpy arrays.

The PTX interpreter's goal is >= 1,000,000 warp-instructions/s (1 us each, everything
included); this measures only the arithmetic a pre-decoded instruction calls, so the
figures say how much of that microsecond the numerics take. Decoding is not timed (it
happens once per instruction, before the run).

Usage: python benchmarks/ptx_semantics.py [--repeat N]
"""

from __future__ import annotations

import argparse
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np

from xdsl_tmem.interpreter.ptx import decode

LANES = 32


def cases() -> list[tuple[str, Callable[..., Any], tuple[Any, ...]]]:
    rng = np.random.default_rng(0)
    i32 = [rng.integers(-(2**31), 2**31 - 1, LANES, dtype=np.int64).astype(np.int32) for _ in range(3)]
    u32 = [x.view(np.uint32) for x in i32]
    f32 = [rng.standard_normal(LANES).astype(np.float32) for _ in range(3)]
    spellings: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
        ("add.s32", (i32[0], i32[1]), {}),
        ("add.rn.f32", (f32[0], f32[1]), {}),
        ("fma.rn.f32", (f32[0], f32[1], f32[2]), {}),
        ("fma.rz.f32", (f32[0], f32[1], f32[2]), {}),
        ("setp.lt.s32", (i32[0], i32[1]), {}),
        ("selp.b32", (u32[0], u32[1], i32[2] > 0), {}),
        ("cvt.rn.f16.f32", (f32[0],), {}),
        ("cvt.rn.f16x2.f32", (f32[0], f32[1]), {}),
        ("cvt.rn.satfinite.e4m3x2.f32", (f32[0], f32[1]), {}),
        ("cvt.rni.s32.f32", (f32[0],), {}),
        ("lop3.b32", (u32[0], u32[1], u32[2], 0x96), {}),
        ("shf.l.wrap.b32", (u32[0], u32[1], u32[2] & np.uint32(63)), {}),
        ("mul.hi.u32", (u32[0], u32[1]), {}),
        ("mad.lo.s32", (i32[0], i32[1], i32[2]), {}),
        ("prmt.b32", (u32[0], u32[1], u32[2]), {}),
        ("prmt.b32 (immediate 0x5410)", (u32[0], u32[1], 0x5410), {}),
        ("bfe.u32", (u32[0], u32[1] & np.uint32(31), u32[2] & np.uint32(31)), {}),
        ("ex2.approx.ftz.f32", (f32[0],), {}),
    ]
    out: list[tuple[str, Callable[..., Any], tuple[Any, ...]]] = []
    for name, args, kw in spellings:
        op, *mods = name.split(" ")[0].split(".")
        out.append((name, decode(op, tuple(mods), **kw).fn, args))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description="ns per warp-instruction of PTX value semantics")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--number", type=int, default=20000)
    opts = parser.parse_args()
    print(f"numpy {np.__version__}, {LANES} lanes, best of {opts.repeat} x {opts.number} calls")
    with np.errstate(all="ignore"):
        for name, fn, args in cases():
            best = min(timeit.repeat(lambda fn=fn, args=args: fn(*args), number=opts.number, repeat=opts.repeat))
            print(f"  {name:32s} {best / opts.number * 1e9:8.0f} ns/warp-instruction")


if __name__ == "__main__":
    main()
