"""The H100 TMA programs (silicon/programs/tma/, docs/tma.md) run through the PTX level: each
program parsed from the file the H100 ran, launched with the fixture's inputs and its tensor
maps as `TensorMapArgument`s, must leave every recorded output byte for byte; a program that
faulted on silicon must stop with a located `tma-invalid` hazard. The expectation is the
silicon record (tests/silicon/fixtures/tma/), never our output. (tests/test_tma_model.py
replays the same fixtures through the box model alone.)"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from silicon_replay import PROGRAMS as PROGRAM_ROOT
from silicon_replay import buffer_bytes
from support import ROOT

from xdsl_tmem.diagnostics import SourceMap
from xdsl_tmem.frontend.parser import load_ptx
from xdsl_tmem.interpreter import KernelHazard, KernelStepLimit, LaunchError, run_kernel
from xdsl_tmem.interpreter.tma import SHORT_TYPES, TensorMap, TensorMapArgument

FIXTURES = ROOT / "tests" / "silicon" / "fixtures" / "tma"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.json") if p.stem != "tma_encode_checks")

FAULTS = {
    "tma_find_coord_2B", "tma_find_coord_8B", "tma_find_coord_minus2B", "tma_find_dst_none_16",
    "tma_find_dst_sw32B_64", "tma_store_coord_8B", "tma_store_neg_both", "tma_store_neg_col", "tma_store_neg_row",
    "tma_reduce_or_neg_col", "tma_store_sw128_narrow",
}  # fmt: skip
"""The programs whose launch failed on the H100 (their fixture has an `error`)."""

REFUSED = {
    **{n: "element stride in dimension 0" for n in NAMES if n.startswith("tma_find_estride0_") and "_1x" not in n},
    "tma_load_oob_f32_estride_2x2_nan": "element stride in dimension 0",
}
"""What the PTX level does not execute (docs/tma.md): the launch is refused or the model
refuses the map, with a message naming it; never a silent result."""


SPINS = sorted(n for n in NAMES if n.startswith("tma_find_narrow_"))
"""Programs with an `expect_tx` of the padded box (rows padded to the swizzle span), more
than the box's bytes: on the H100 the phase never completed and the thread gave up after
2,000,000 `test_wait`s (its flag 0). Replaying those spins is minutes of interpretation, so
the test checks the part that matters: the phase does not complete (the run stays in the
spin loop until a step limit)."""


def _fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text())


BOUNDED_SPINS = {"tma_mbarrier_tx": ("%n, 2000000;", "%n, 1;")}
"""Programs whose bounded `test_wait` loops (2,000,000 probes, then give up) poll a phase
that never completes (on the H100 too: their flag is 0). The model reports a probe that
fails again with nothing changed as a deadlock (docs/ptx-level.md); its copies complete
when issued, so nothing can complete the phase between two probes and one probe gives
the silicon's result. The replay runs the loops with a bound of 1."""


def _run(name: str, max_steps: int = 200_000) -> dict[str, bytes]:
    fx = _fixture(name)
    text = (PROGRAM_ROOT / fx["ptx"]).read_text()
    assert hashlib.sha256(text.encode()).hexdigest() == fx["ptx_sha256"], "re-record the fixture"
    if name in BOUNDED_SPINS:
        bound, one = BOUNDED_SPINS[name]
        assert text.count(bound) == 4
        text = text.replace(bound, one)
    args: dict[str, Any] = {}
    for param in fx["params"]:
        if "tensor_map" in param:
            desc = param["tensor_map"]
            template = replace(TensorMap.from_description(desc, 0), global_address=0)
            args[param["name"]] = TensorMapArgument(desc["buffer"], int(desc.get("offset", 0)), template)
        else:
            args[param["name"]] = np.frombuffer(buffer_bytes(param["init"], param["nbytes"]), np.uint8).copy()
    launch = fx["launch"]
    module = load_ptx(text, fx["ptx"], SourceMap())
    result = run_kernel(module, fx["kernel"], block=tuple(launch["block"]), grid=tuple(launch["grid"]),
                        cluster=tuple(launch["cluster"]), args=args, max_steps=max_steps)  # fmt: skip
    return {name: np.asarray(result.outputs[name]).tobytes() for name in fx["outputs"]}


@pytest.mark.parametrize("name", [n for n in NAMES if n not in FAULTS and n not in REFUSED and n not in SPINS])
def test_tma_program_replays_bit_for_bit(name: str) -> None:
    fx = _fixture(name)
    got = _run(name)
    for buffer, recorded in fx["outputs"].items():
        want = buffer_bytes(recorded, recorded["nbytes"])
        assert got[buffer] == want, f"{name}: {buffer} differs from the H100's"


@pytest.mark.parametrize("name", sorted(FAULTS - set(REFUSED)))
def test_tma_program_that_faulted_on_silicon_is_a_located_hazard(name: str) -> None:
    assert "error" in _fixture(name)
    with pytest.raises(KernelHazard) as caught:
        _run(name)
    assert caught.value.kind == "tma-invalid", caught.value
    assert "async.bulk.tensor" in caught.value.message  # cp.async.bulk.tensor or cp.reduce.async.bulk.tensor
    assert caught.value.op is not None


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_tma_program_the_model_lacks_is_refused_by_name(name: str) -> None:
    with pytest.raises((LaunchError, KernelHazard)) as caught:
        _run(name)
    message = str(caught.value)
    assert any(word in message for word in ("element_strides[0]", "is a generic instruction (ptx.inst)")), message


@pytest.mark.parametrize("name", SPINS)
def test_tma_program_whose_phase_never_completed_spins(name: str) -> None:
    fx = _fixture(name)
    assert (
        fx["tma"]["expect_tx"]
        > TensorMap.from_description(next(p["tensor_map"] for p in fx["params"] if "tensor_map" in p), 0).box_bytes()
    )
    flags = np.frombuffer(buffer_bytes(fx["outputs"]["flags_ptr"], fx["outputs"]["flags_ptr"]["nbytes"]), np.uint32)
    assert flags[0] == 0  # silicon: the wait gave up
    with pytest.raises(KernelStepLimit):
        _run(name, max_steps=20_000)


# --- the command line: --arg NAME=tensormap:... ------------------------------------------------------


def _cli_args(fx: dict[str, Any], tmp_path: Path) -> list[str]:
    """The fixture's launch as `xdsl-tmem-run` arguments: buffers as .npy files, tensor maps
    in the `tensormap:` syntax (dimension 0 first, strides in bytes)."""
    short = {v: k for k, v in SHORT_TYPES.items()}
    argv: list[str] = []
    for param in fx["params"]:
        name = param["name"]
        if "tensor_map" in param:
            d = param["tensor_map"]
            dims = "x".join(map(str, d["global_dims"]))
            strides = "x".join(map(str, d["global_strides"])) or "-"
            box = "x".join(map(str, d["box_dims"]))
            options = f"swizzle={d['swizzle']},oob={'nan' if d['oob_fill'] != 'NONE' else 'none'}"
            argv += ["--arg", f"{name}=tensormap:{d['buffer']}+{d.get('offset', 0)}:{short[d['data_type']]}:{dims}:"
                              f"{strides}:{box}:{options}"]  # fmt: skip
        else:
            np.save(tmp_path / f"{name}.npy", np.frombuffer(buffer_bytes(param["init"], param["nbytes"]), np.uint8))
            argv += ["--arg", f"{name}={tmp_path / name}.npy"]
    return argv


def test_cli_runs_a_tma_program_to_the_recorded_image(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from xdsl_tmem.tools import run

    name = "tma_load_2d_swizzle"
    fx = _fixture(name)
    source = tmp_path / "program.ptx"
    source.write_text((PROGRAM_ROOT / fx["ptx"]).read_text())
    out = tmp_path / "out"
    code = run.main([str(source), "--kernel", fx["kernel"], "--block", "128", *_cli_args(fx, tmp_path), "--out",
                     str(out)])  # fmt: skip
    assert code == 0, capsys.readouterr()
    recorded = fx["outputs"]["out_ptr"]
    assert np.load(out / "out_ptr.npy").tobytes() == buffer_bytes(recorded, recorded["nbytes"])


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("tensormap:gmem:u16:40x30:96:16x300", "tensor map box_dims[1] = 300 is invalid: 1 to 256"),
        ("tensormap:gmem:u16:40x30:100:16x8", "tensor map global_strides[0] = 100 is invalid: a multiple of 16"),
        ("tensormap:gmem:u13:40x30:96:16x8", "tensor map element type 'u13' is not one of"),
        ("tensormap:gmem:u16:40x30:96:16x8:swizzle=32B", None),  # valid: binds, then the run goes on
    ],
)
def test_cli_tensor_map_errors_exit_1_with_the_rule(
    value: str, message: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A description `cuTensorMapEncodeTiled` refuses is a usage error naming the argument,
    the field, the bad value and what is allowed (exit 1, no traceback)."""
    from xdsl_tmem.tools import run

    fx = _fixture("tma_find_coord_row3")
    source = tmp_path / "program.ptx"
    source.write_text((PROGRAM_ROOT / fx["ptx"]).read_text())
    given = _cli_args(fx, tmp_path)
    argv = [a for i, a in enumerate(given) if "tmap0=" not in (given[i : i + 2][-1] if a == "--arg" else a)]
    code = run.main([str(source), "--kernel", fx["kernel"], "--block", "128", *argv, "--arg", f"tmap0={value}"])
    captured = capsys.readouterr()
    if message is None:
        assert code == 0, captured
        return
    assert code == 1
    assert "Traceback" not in captured.err
    assert f"--arg tmap0: {message}" in captured.err, captured.err


def test_expect_tx_below_the_box_completes_the_phase_early_and_the_late_bytes_race() -> None:
    """`tma_find_coord_row3` with `expect_tx` 128 for its 256-byte box: the phase completes
    when 128 bytes have landed (PTX ISA, mbarrier: a phase completes when the pending count
    and the tx-count are both zero), the rest lands after; warp 1 copies out bytes 128..255
    after its wait passed, unordered with their landing: a data race, located at the load."""
    fx = _fixture("tma_find_coord_row3")
    text = (PROGRAM_ROOT / fx["ptx"]).read_text()
    assert text.count("[mb], 256;") == 1
    args: dict[str, Any] = {}
    for param in fx["params"]:
        if "tensor_map" in param:
            desc = param["tensor_map"]
            template = replace(TensorMap.from_description(desc, 0), global_address=0)
            args[param["name"]] = TensorMapArgument(desc["buffer"], 0, template)
        else:
            args[param["name"]] = np.frombuffer(buffer_bytes(param["init"], param["nbytes"]), np.uint8).copy()
    module = load_ptx(text.replace("[mb], 256;", "[mb], 128;"), "early.ptx", SourceMap())
    with pytest.raises(KernelHazard) as caught:
        run_kernel(module, fx["kernel"], block=128, args=args, max_steps=200_000)
    assert caught.value.kind == "smem-data-race", caught.value
    assert "cp_async_bulk_tensor" in caught.value.message or "cp.async.bulk.tensor" in caught.value.message


def test_bulk_copy_off_a_16_byte_unit_is_a_located_hazard() -> None:
    """PTX ISA 9.0, cp.async.bulk: source and destination addresses and the size are
    multiples of 16. `tma_mbarrier_tx` with its bulk load's global source moved by 8 bytes
    stops with `tma-invalid` at that instruction, naming the rule."""
    fx = _fixture("tma_mbarrier_tx")
    text = (PROGRAM_ROOT / fx["ptx"]).read_text().replace(BOUNDED_SPINS["tma_mbarrier_tx"][0], "%n, 1;")
    assert text.count("add.u64 %t, %g, 128;") == 1
    args: dict[str, Any] = {}
    for param in fx["params"]:
        if "tensor_map" in param:
            desc = param["tensor_map"]
            args[param["name"]] = TensorMapArgument(
                desc["buffer"], 0, replace(TensorMap.from_description(desc, 0), global_address=0)
            )
        else:
            args[param["name"]] = np.frombuffer(buffer_bytes(param["init"], param["nbytes"]), np.uint8).copy()
    module = load_ptx(text.replace("add.u64 %t, %g, 128;", "add.u64 %t, %g, 136;"), "moved.ptx", SourceMap())
    with pytest.raises(KernelHazard) as caught:
        run_kernel(module, fx["kernel"], block=32, args=args, max_steps=200_000)
    assert caught.value.kind == "tma-invalid", caught.value
    assert "cp.async.bulk.shared::cluster.global" in caught.value.message
    assert "multiples of 16" in caught.value.message
    assert caught.value.op is not None
