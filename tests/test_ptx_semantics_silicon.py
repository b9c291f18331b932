"""The value semantics (xdsl_tmem/interpreter/ptx) against results recorded on a GPU.

`tests/silicon/fixtures/gen_*.json` (docs/silicon.md) hold, for every thread of a
generated straight-line PTX program, its operands and every result an H100 computed. Each
recorded instruction (or short sequence, a carry flag flowing through it) is decoded here
with `decode` and evaluated on all threads at once (threads as lanes), and must give the
recorded bits — except the approximate
instructions (`.approx`, `div.full`), whose bits the PTX ISA does not fix. The fixtures
arrive with the silicon harness; without them the test is skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from silicon_replay import FIXTURES, PROGRAMS, ROOT, buffer_bytes

from xdsl_tmem.interpreter.ptx import LANE_DTYPE, decode

FAMILIES = sorted(p.stem.removeprefix("gen_") for p in FIXTURES.glob("gen_*.json")) or [
    "int32",
    "int64",
    "f32",
    "f64",
    "f16",
    "bf16",
    "fp8",
]
"""The recorded generated families (the ones of 2026-11-25 where the fixtures are absent, to skip)."""
Lanes = np.ndarray[Any, Any]


@pytest.fixture(autouse=True)
def _quiet_fp() -> Iterator[None]:
    with np.errstate(all="ignore"):
        yield


def operands(text: str) -> list[str]:
    """The comma-separated operands of one instruction, braces kept together."""
    parts: list[str] = []
    depth, cur = 0, ""
    for ch in text:
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur.strip())
    return parts


def as_type(bits: Lanes, ty: str) -> Lanes:
    """Register bits (uint64 lanes) read as the PTX type `ty`."""
    dt = LANE_DTYPE[ty]
    if ty == "pred":
        return bits != 0
    width = dt.itemsize * 8
    return bits.astype(np.dtype(f"u{dt.itemsize}")).view(dt) if width < 64 else bits.view(dt)


def to_bits(x: Lanes) -> Lanes:
    """Result lanes as uint64 register bits: signed integers sign-extended (an .s8 result fills
    its 16-bit register), the rest zero-extended."""
    if x.dtype == np.bool_:
        return x.astype(np.uint64)
    if x.dtype.kind == "i":
        return x.astype(np.int64).view(np.uint64)
    return x.view(np.dtype(f"u{x.dtype.itemsize}")).astype(np.uint64)


def execute(text: str, regs: dict[str, Lanes], preds: dict[str, Lanes]) -> list[Lanes]:
    """One instruction, or a sequence (`add.cc ...; addc ...;`, the carry flag flowing from one to
    the next), on all lanes: each instruction's register results as uint64 bits, in order."""
    regs = dict(regs)
    carry: Lanes | None = None
    results: list[Lanes] = []
    for one in (part.strip() for part in text.split(";")):
        if not one:
            continue
        m = re.fullmatch(r"(\S+)\s+(.*)", one)
        assert m is not None, one
        op, *mods = m.group(1).split(".")
        dst, *srcs = operands(m.group(2))
        n = next(iter(regs.values())).shape[0]
        pack = srcs[0].count(",") + 1 if srcs and srcs[0].startswith("{") else 0
        unpack = dst.count(",") + 1 if dst.startswith("{") else 0
        sem = decode(op, tuple(mods), pair="|" in dst, pack=pack, unpack=unpack)
        flat = [s.strip() for src in srcs for s in src.strip("{}").split(",")]
        args: list[Any] = []
        for i, src in enumerate(flat):
            ty = sem.operands[min(i, len(sem.operands) - 1)]
            if src.lstrip("!") in preds:
                p = preds[src.lstrip("!")]
                args.append(~p if src.startswith("!") else p)
            elif src in regs:
                args.append(as_type(regs[src], ty))
            elif op == "lop3" and i == 3:
                args.append(int(src, 0))
            else:
                args.append(as_type(np.full(n, int(src, 0), np.uint64), ty))
        if sem.operands and sem.operands[-1] == "cc":
            assert carry is not None, f"{one}: no carry flag set before it"
            args.append(carry)
        out: Lanes | tuple[Lanes, ...] = sem.fn(*args)
        values: tuple[Lanes, ...] = out if isinstance(out, tuple) else (out,)
        mine: list[Lanes] = []
        for ty, value in zip(sem.results, values, strict=True):
            if ty == "cc":
                carry = value
            else:
                mine.append(to_bits(value))
        names = [d.strip() for d in dst.strip("{}").replace("|", ",").split(",")]
        regs.update(zip(names, mine, strict=True))
        results += mine
    return results


def approximate(opcode: str) -> bool:
    return ".approx" in opcode or opcode.startswith("div.full")


def replay(fixture: Path, programs: Path) -> tuple[int, dict[str, list[str]]]:
    """(results compared, the disagreements per opcode) of one generated fixture."""
    fx = json.loads(fixture.read_text())
    param = next(p for p in fx["params"] if p["name"] == "in_ptr")
    raw = np.frombuffer(buffer_bytes(param["init"], param["nbytes"]), np.uint8).reshape(
        -1, fx["generated"]["in_stride"]
    )
    a, b, c = (np.ascontiguousarray(raw[:, 8 * i : 8 * i + 8]).view(np.uint64).reshape(-1) for i in range(3))
    d = np.ascontiguousarray(raw[:, 24:28]).view(np.uint32).reshape(-1).astype(np.uint64)
    e = np.ascontiguousarray(raw[:, 28:32]).view(np.uint32).reshape(-1).astype(np.uint64)
    regs: dict[str, Lanes] = {"%d": d, "%e": e}
    for name, v in (("a", a), ("b", b), ("c", c)):
        regs[f"%{name}64"] = v
        regs[f"%{name}32"] = v & np.uint64(0xFFFFFFFF)
        regs[f"%{name}16"] = v & np.uint64(0xFFFF)
    setup = re.search(r"^\s*(setp\.\S+ %p0, [^;]+;)", (programs / fx["ptx"]).read_text(), re.M)
    assert setup is not None
    (p0,) = execute(setup.group(1).replace("%p0", "%x"), regs, {})
    preds = {"%p0": p0 != 0}
    slots: list[dict[str, Any]] = fx["generated"]["slots"]
    out = fx["outputs"]["out_ptr"]
    recorded = np.frombuffer(buffer_bytes(out, out["nbytes"]), np.uint64).reshape(-1, len(slots))
    by_text: dict[str, list[dict[str, Any]]] = {}
    for s in slots:
        by_text.setdefault(s["ptx"], []).append(s)
    compared, bad = 0, dict[str, list[str]]()
    for text, group in by_text.items():
        if approximate(group[0]["opcode"]):
            continue
        results = execute(text, regs, preds)
        for s, mine in zip(group, results, strict=True):
            mask = np.uint64((1 << s["width"]) - 1)
            got, want = mine & mask, recorded[:, s["out"]] & mask
            compared += got.size
            for t in np.flatnonzero(got != want)[:3]:
                bad.setdefault(text, []).append(
                    f"a={int(a[t]):#x} b={int(b[t]):#x} c={int(c[t]):#x} d={int(d[t]):#x} e={int(e[t]):#x}: "
                    f"model {int(got[t]):#x}, silicon {int(want[t]):#x}"
                )
    return compared, bad


EXACT_RESULTS = {
    "int32": 185_600,
    "int64": 73_472,
    "f32": 292_608,
    "f64": 174_080,
    "f16": 29_952,
    "bf16": 18_432,
    "fp8": 768,
    "misc": 44_800,
}
"""Results per family the replay compares: every recorded case (docs/silicon.md, "Programs")
but those of approximate instructions (f32 43,776; f64 4,096; f16 1,536): 819,712 in all."""


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_fixtures_bit_exact(family: str) -> None:
    """Every exactly specified result the H100 recorded, reproduced bit for bit (NaN payloads,
    signed zeros and the silicon rules of docs/silicon.md included)."""
    fixture = FIXTURES / f"gen_{family}.json"
    if not fixture.is_file() or not PROGRAMS.is_dir():
        pytest.skip(f"no silicon fixture {fixture.relative_to(ROOT)} (it comes with the silicon harness)")
    compared, bad = replay(fixture, PROGRAMS)
    assert compared == EXACT_RESULTS[family]
    assert not bad, "\n".join(f"{t}\n    " + "\n    ".join(v) for t, v in bad.items())


def silicon_report(root: Path) -> None:
    """Print the agreement per family for fixtures under another checkout (development aid)."""
    for fixture in sorted((root / "tests" / "silicon" / "fixtures").glob("gen_*.json")):
        family = fixture.stem.removeprefix("gen_")
        if fixture.is_file():
            compared, bad = replay(fixture, root / "silicon" / "programs")
            print(f"{family}: {compared} results, {len(bad)} instructions disagree")
            for t, v in bad.items():
                print(f"  {t}\n      " + "\n      ".join(v))


if __name__ == "__main__":
    import sys

    with np.errstate(all="ignore"):
        silicon_report(Path(sys.argv[1]))
