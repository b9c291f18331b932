"""Reading silicon fixtures and comparing generated ones with `silicon_semantics`."""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from silicon_semantics import FLOAT_TYPES, Operands, decode, evaluate, observed

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "silicon" / "fixtures"
PROGRAMS = ROOT / "silicon" / "programs"


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def buffer_bytes(blob: dict[str, Any], nbytes: int) -> bytes:
    if blob["encoding"] == "zeros":
        return bytes(nbytes)
    assert blob["encoding"] == "zlib+base64", blob["encoding"]
    data = zlib.decompress(base64.b64decode(blob["data"]))
    assert len(data) == nbytes, (len(data), nbytes)
    return data


def output_words(fx: dict[str, Any], name: str = "out_ptr", size: int = 4) -> list[int]:
    out = fx["outputs"][name]
    data = buffer_bytes(out, out["nbytes"])
    words: tuple[int, ...] = struct.unpack(f"<{len(data) // size}{'I' if size == 4 else 'Q'}", data)
    return list(words)


def input_records(fx: dict[str, Any]) -> list[Operands]:
    param = next(p for p in fx["params"] if p["name"] == "in_ptr")
    data = buffer_bytes(param["init"], param["nbytes"])
    stride = fx["generated"]["in_stride"]
    return [Operands(*struct.unpack_from("<QQQII", data, i)) for i in range(0, len(data), stride)]


def predicate_setup(fx: dict[str, Any]) -> str:
    """The `setp ... %p0, ...` line of the program: `%p0` feeds every selp."""
    text = (PROGRAMS / fx["ptx"]).read_text()
    m = re.search(r"^\s*(setp\.\S+ %p0, [^;]+;)", text, re.M)
    assert m is not None
    return m.group(1)


def dst_type(text: str) -> str | None:
    """The float type of an instruction's result, if it has one (for NaN classification)."""
    opcode = text.split()[0].split(".")
    t = opcode[-2] if opcode[0] == "cvt" else opcode[-1]
    if opcode[0] in ("setp", "testp", "selp", "slct", "mov"):
        return None
    t = t.removesuffix("x2")
    return t if t in FLOAT_TYPES else None


@dataclass
class Comparison:
    """The outcome of one generated fixture against the reference."""

    agree: Counter[str] = field(default_factory=Counter[str])
    unspecified: Counter[str] = field(default_factory=Counter[str])
    nan_payload: Counter[str] = field(default_factory=Counter[str])
    disagree: dict[str, list[tuple[Operands, int, int]]] = field(
        default_factory=dict[str, list[tuple[Operands, int, int]]]
    )

    @property
    def cases(self) -> int:
        return (
            sum(self.agree.values())
            + sum(self.unspecified.values())
            + sum(self.nan_payload.values())
            + sum(len(v) for v in self.disagree.values())
        )


def compare(fx: dict[str, Any]) -> tuple[Comparison, Comparison]:
    """Every result of a generated fixture against the PTX ISA reference and against `observed`."""
    slots: list[dict[str, Any]] = fx["generated"]["slots"]
    nslots = len(slots)
    outs = output_words(fx, size=8)
    records = input_records(fx)
    setup = predicate_setup(fx)
    ptx, obs = Comparison(), Comparison()
    by_text: dict[str, list[dict[str, Any]]] = {}
    for s in slots:
        by_text.setdefault(s["ptx"], []).append(s)
    # an instruction's result depends only on the operands it names: evaluate each combination once
    names = {text: sorted(set(re.findall(r"%[abc](?:16|32|64)\b|%[de]\b", text))) for text in by_text}
    memo: dict[tuple[str, tuple[int, ...], bool], tuple[list[int | None], list[int | None]]] = {}
    for t, ops in enumerate(records):
        p0 = bool(evaluate(setup.replace("%p0", "%x"), ops, False)[0])
        for text, group in by_text.items():
            key = (text, tuple(ops.reg(n) for n in names[text]), p0 and "%p0" in text)
            if (pair := memo.get(key)) is None:
                ref = evaluate(text, ops, p0)
                pair = memo[key] = (ref, observed(text, ops, p0, ref))
            for i, s in enumerate(group):
                width: int = s["width"]
                slot: int = s["out"]
                got = outs[t * nslots + slot] & ((1 << width) - 1)
                for result, expected in ((ptx, pair[0]), (obs, pair[1])):
                    tally(result, text, s, ops, expected[i], got)
    return ptx, obs


def tally(result: Comparison, text: str, s: dict[str, Any], ops: Operands, want: int | None, got: int) -> None:
    if want is None:
        result.unspecified[s["opcode"]] += 1
        return
    expected = want & ((1 << s["width"]) - 1)
    if got == expected:
        result.agree[s["opcode"]] += 1
        return
    ft = dst_type(text)
    if ft is not None and s["dst"] != "pred" and both_nan(got, expected, ft, s["width"]):
        result.nan_payload[s["opcode"]] += 1
        return
    result.disagree.setdefault(s["opcode"], []).append((ops, expected, got))


def both_nan(got: int, want: int, ft: str, width: int) -> bool:
    f = FLOAT_TYPES[ft]
    parts = width // f.width
    for i in range(parts):
        g = decode((got >> (i * f.width)) & ((1 << f.width) - 1), f)
        w = decode((want >> (i * f.width)) & ((1 << f.width) - 1), f)
        same = (got >> (i * f.width)) & ((1 << f.width) - 1) == (want >> (i * f.width)) & ((1 << f.width) - 1)
        if g.is_nan != w.is_nan or (not g.is_nan and not same):
            return False
    return True
