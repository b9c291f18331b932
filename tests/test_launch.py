"""The typed launch description (`Launch`) and the one `FencePolicy` type: what the driver,
`run_kernel`, exploration and validation take (docs/interpreter.md, "From Python")."""

from __future__ import annotations

import ast
import importlib.util

import numpy as np
import pytest
from support import ROOT
from test_interpreter import REF_PIPELINE, expected_cg1, f16_operands, load

from xdsl_tmem.fence_policy import FencePolicy, fence_policy
from xdsl_tmem.interpreter import (
    BufferArgument,
    Launch,
    LaunchError,
    Limits,
    RacePolicy,
    ScalarArgument,
    Schedule,
    run_kernel,
    run_launch,
)
from xdsl_tmem.interpreter.explore import explore_random
from xdsl_tmem.interpreter.hazards import WarpClock
from xdsl_tmem.tools import run

LAUNCH_FILES = [
    "xdsl_tmem/tools/run.py",
    "xdsl_tmem/interpreter/launch.py",
    "xdsl_tmem/interpreter/run.py",
    "xdsl_tmem/interpreter/explore.py",
    "xdsl_tmem/interpreter/validate.py",
    "xdsl_tmem/interpreter/trace.py",
]


def test_a_launch_computes_the_reference_gemm() -> None:
    """`run_launch` on a `Launch` built field by field gives numpy's product."""
    a, b = f16_operands(3, 128, 256)
    out = np.zeros(2 * 128 * 256, np.float32)
    arguments = {
        "out": BufferArgument(out),
        "a": BufferArgument(a),
        "b": BufferArgument(b),
        "ntiles": ScalarArgument(2),
    }
    launch = Launch("ref_pipeline", (160, 1, 1), arguments=arguments, schedule=Schedule.RANDOM, seed=3)
    result = run_launch(load(REF_PIPELINE), launch)
    expected = expected_cg1(a, b, 2)
    np.testing.assert_allclose(result.outputs["out"].reshape(expected.shape), expected, rtol=1e-5, atol=1e-4)
    assert not out.any()  # the run works on a copy
    assert (result.report.schedule, result.report.seed) == ("random", 3)


def test_run_kernel_keywords_describe_a_launch() -> None:
    """The documented keywords and their defaults (docs/interpreter.md) map onto the fields."""
    a = np.zeros(4, np.float16)
    launch = Launch.create("k", block=160, cluster=(2,), args={"a": a, "n": 3}, seed=4, fence_policy="mojo")
    assert launch == Launch(
        "k",
        (160, 1, 1),
        None,
        (2, 1, 1),
        {"a": BufferArgument(a), "n": ScalarArgument(3)},
        Schedule.RR,
        4,
        Limits(max_steps=10_000_000),
        FencePolicy.MOJO,
    )
    assert Launch.create("k", block=(32, 2), grid=4).grid == (4, 1, 1)
    assert Launch.create("k", block=32).race_policy is RacePolicy.SAME_VALUE
    assert Launch.create("k", block=32, race_policy="strict").race_policy is RacePolicy.STRICT


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"schedule": "fifo"}, "unknown schedule 'fifo' (use rr or random)"),
        ({"fence_policy": "weak"}, "unknown fence policy 'weak' (use strict or mojo)"),
        ({"race_policy": "lax"}, "unknown race policy 'lax' (use same-value or strict)"),
        ({"dynamic_shared_bytes": -1}, "dynamic_shared_bytes must be a non-negative integer, got -1"),
        ({"grid": 0}, "grid must be 1 to 3 positive integers, got 0"),
        ({"cluster": (1, 2, 3, 4)}, "cluster must be 1 to 3 positive integers, got (1, 2, 3, 4)"),
        (
            {"args": {"x": [1, 2]}},
            "argument 'x' must be a numpy array (for a pointer), a number, a PointerArgument, a StructArgument or a "
            "TensorMapArgument, got [1, 2]",
        ),
    ],
)
def test_a_bad_launch_is_refused_when_described(options: dict[str, object], message: str) -> None:
    with pytest.raises(LaunchError) as caught:
        Launch.create("k", block=32, **options)  # pyright: ignore[reportArgumentType]
    assert caught.value.message == message


def test_run_kernel_still_runs_a_kernel() -> None:
    """The documented keyword API (docs/interpreter.md) against numpy."""
    a, b = f16_operands(1, 128, 256)
    out = np.zeros(128 * 256, np.float32)
    args = {"out": out, "a": a, "b": b, "ntiles": 1}
    result = run_kernel(load(REF_PIPELINE), "ref_pipeline", block=160, args=args, fence_policy="mojo")
    expected = expected_cg1(a, b, 1)
    np.testing.assert_allclose(result.outputs["out"].reshape(expected.shape), expected, rtol=1e-5, atol=1e-4)


def test_the_driver_flags_describe_a_launch() -> None:
    args = run.build_parser().parse_args(
        ["f.mlir", "--kernel", "k", "--block", "128x2", "--grid", "4", "--arg", "n=7", "--schedule", "random",
         "--seed", "9", "--max-steps", "50", "--max-states", "60", "--max-memory", "2", "--fence-policy", "mojo"]
    )  # fmt: skip
    assert run.parse_launch(args) == Launch(
        "k", (128, 2, 1), (4, 1, 1), (1, 1, 1), {"n": ScalarArgument(7)}, Schedule.RANDOM, 9, Limits(50, 60, 2 << 20),
        FencePolicy.MOJO,
    )  # fmt: skip


def test_random_exploration_starts_at_the_launch_seed() -> None:
    a, b = f16_operands(0, 128, 256)
    args = {"out": np.zeros(128 * 256, np.float32), "a": a, "b": b, "ntiles": 1}
    launch = Launch.create("ref_pipeline", block=160, args=args, seed=5)
    result = explore_random(load(REF_PIPELINE), launch, 2)
    assert (result.verdict, result.explored, result.seed) == ("SAFE", 2, None)


def test_one_fence_policy_type_reaches_the_hazard_clocks() -> None:
    """Under mojo a warp's tcgen05 work shares its ordinary clock; under strict (PTX: only a
    tcgen05.fence carries it across a thread sync) it has its own (hazards.py)."""
    assert fence_policy("mojo") is FencePolicy.MOJO
    with pytest.raises(ValueError, match="fence-policy must be strict or mojo, got 'weak'"):
        fence_policy("weak")
    mojo, strict = WarpClock(4, 0, 1, FencePolicy.MOJO), WarpClock(4, 0, 1, FencePolicy.STRICT)
    assert mojo.vc_tc is mojo.vc
    assert strict.vc_tc is not strict.vc


def test_no_launch_function_takes_more_than_8_parameters() -> None:
    for path in LAUNCH_FILES:
        for node in ast.walk(ast.parse((ROOT / path).read_text())):
            if isinstance(node, ast.FunctionDef):
                a = node.args
                names = [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, (a.vararg, a.kwarg))]
                count = len([n for n in names if n.arg not in ("self", "cls")])
                assert count <= 8, f"{path}: {node.name} takes {count} parameters"


def test_the_package_ships_no_test_helpers() -> None:
    """The external-tool runner is for tests and benchmarks only (tests/external.py)."""
    assert importlib.util.find_spec("xdsl_tmem.tools.external") is None
    assert (ROOT / "tests" / "external.py").is_file()
