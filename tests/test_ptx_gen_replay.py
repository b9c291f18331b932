"""The generated silicon programs (`silicon/programs/gen_*.ptx`, docs/silicon.md) run as PTX
kernels through the PTX level: each file an H100 ran (its sha256 checked against the
fixture), parsed and recognized (every value instruction a typed op), launched once with the
fixture's grid and block and its input buffer, all threads together. Every result slot the
fixture records must hold the H100's bits, except the slots of the approximate instructions
(`.approx`, `div.full`), whose bits the PTX ISA does not fix: the same rule as the value
semantics' own silicon test (`approximate` in tests/test_ptx_semantics_silicon.py).

The expectation is the silicon record, never our output."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray
from silicon_replay import FIXTURES, PROGRAMS, buffer_bytes, load
from test_ptx_semantics_silicon import EXACT_RESULTS, approximate

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.frontend.parser import load_ptx
from xdsl_tmem.interpreter import run_kernel

FAMILIES = sorted(p.stem for p in FIXTURES.glob("gen_*.json"))


def _run(fixture: dict[str, Any]) -> NDArray[np.uint64]:
    text = (PROGRAMS / fixture["ptx"]).read_text()
    assert hashlib.sha256(text.encode()).hexdigest() == fixture["ptx_sha256"], "re-record the fixture"
    launch = fixture["launch"]
    args = {
        p["name"]: np.frombuffer(buffer_bytes(p["init"], p["nbytes"]), p["dtype"].replace("u", "uint")).copy()
        for p in fixture["params"]
    }
    module = load_ptx(text, fixture["ptx"], SourceMap())
    result = run_kernel(module, fixture["kernel"], block=tuple(launch["block"]), grid=tuple(launch["grid"]),
                        cluster=tuple(launch["cluster"]), args=args)  # fmt: skip
    return np.asarray(result.outputs["out_ptr"]).view(np.uint64)


@pytest.mark.parametrize("name", FAMILIES)
def test_generated_program_replays_through_the_ptx_level(name: str) -> None:
    """One launch of all the fixture's threads (256 to 2,304 per program, 9,600 in all):
    819,712 exact results compared over the eight programs, each equal to the H100's."""
    fixture = load(name)
    slots: list[dict[str, Any]] = fixture["generated"]["slots"]
    out = fixture["outputs"]["out_ptr"]
    recorded = np.frombuffer(buffer_bytes(out, out["nbytes"]), np.uint64).reshape(-1, len(slots))
    got = _run(fixture).reshape(-1, len(slots))
    launch: dict[str, list[int]] = fixture["launch"]
    threads = int(np.prod(launch["block"]) * np.prod(launch["grid"]))
    assert got.shape == recorded.shape == (threads, len(slots))
    compared, bad = 0, list[str]()
    for s in slots:
        if approximate(s["opcode"]):
            continue
        mask = np.uint64((1 << s["width"]) - 1)
        mine, want = got[:, s["out"]] & mask, recorded[:, s["out"]] & mask
        compared += mine.size
        for t in np.flatnonzero(mine != want)[:2]:
            bad.append(f"{s['ptx']} (slot {s['out']}), thread {t}: model {int(mine[t]):#x}, silicon {int(want[t]):#x}")
    assert not bad, "\n".join(bad[:40])
    # the results the semantics test compares for this family: no slot skipped but the approximate
    assert compared == EXACT_RESULTS[name.removeprefix("gen_")]
