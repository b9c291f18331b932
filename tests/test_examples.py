"""Every shipped example parses, verifies, and prints as a fixpoint (custom and generic)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from support import EXAMPLES, OptResult

RunOpt = Callable[..., OptResult]
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.mlir"))


def test_there_are_examples() -> None:
    names = {p.name for p in EXAMPLE_FILES}
    assert names >= {"matmul_cg1.mlir", "matmul_cg2.mlir", "tma_gemm_cg1.mlir", "tma_gemm_cg2.mlir"}


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_round_trips(run_opt: RunOpt, example: Path) -> None:
    first = run_opt(None, path=example)
    assert first.code == 0, first.err
    again = run_opt(first.out)
    assert again.code == 0, again.err
    assert again.out == first.out
    generic = run_opt(None, "--print-op-generic", path=example)
    assert generic.code == 0, generic.err
    assert '"tmem.' in generic.out
    from_generic = run_opt(generic.out)
    assert from_generic.code == 0, from_generic.err
    assert from_generic.out == first.out


@pytest.mark.parametrize("example", EXAMPLE_FILES, ids=lambda p: p.name)
def test_example_uses_the_three_families(example: Path) -> None:
    text = example.read_text()
    for family in ("tmem.tmem_stage.", "tmem.output_ring.", "tmem.warp_context."):
        assert family in text, f"{example.name} does not use {family}"
