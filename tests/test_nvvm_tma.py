"""The nvvm TMA and bulk-copy ops against the oracles.

* text: the forms the backend refuses (`lit_tests/ptx/tma_refused.mlir`; the lowered
  ones are `lit_tests/nvvm/tma.mlir`, covered by tests/test_nvvm_upstream.py) print
  exactly as mlir-opt-22 prints them, custom and generic, and mlir-opt-22 reads ours;
* verdicts: over grids of forms (modes x ranks x im2col offsets x destination x
  predicate ...) we accept exactly what mlir-opt-22 accepts;
* PTX: the TMA instructions our backend selects are llc-22's, one for one, with their
  modifiers, for the same NVVM (`mlir-translate-22 | llc-22 -mcpu=sm_100a`);
* the NVVM-level interpreter refuses, at the op, the modes its model does not execute
  (it runs the rest: tests/test_nvvm_tma_run.py).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from external import Upstream
from support import LIT_TESTS, OptResult, run_cli
from test_nvvm_upstream import nvvm_ops, our_verdicts, upstream_verdicts

RunOpt = Callable[..., OptResult]

REFUSED = LIT_TESTS / "ptx" / "tma_refused.mlir"
LOWERED = [LIT_TESTS / "nvvm" / "tma.mlir", LIT_TESTS / "ptx" / "tma.mlir"]

_ARGS = (
    "%p7: !llvm.ptr<7>, %p3: !llvm.ptr<3>, %p0: !llvm.ptr, %p1: !llvm.ptr<1>, %bar: !llvm.ptr<3>, "
    "%p4: !llvm.ptr<4>, %p5: !llvm.ptr<5>, %i: i32, %h: i16, %d: i64, %b: i1"
)


def printed(run_opt: RunOpt, text: str, *args: str) -> str:
    result = run_opt(text, *args)
    assert result.code == 0, result.err
    return result.out


def chunks(bodies: Sequence[str]) -> list[str]:
    return [f"llvm.func @case{n}({_ARGS}) {{\n  {body}\n  llvm.return\n}}\n" for n, body in enumerate(bodies)]


def assert_same_verdicts(run_opt: RunOpt, upstream: Upstream, bodies: Sequence[str]) -> None:
    cases = chunks(bodies)
    theirs = upstream_verdicts(upstream, cases)
    mine = our_verdicts(run_opt, cases)
    differ = [body for body, a, b in zip(bodies, theirs, mine, strict=True) if a != b]
    assert not differ, f"verdicts differ from mlir-opt-22 on: {differ}"
    assert any(theirs), "a grid must contain valid forms"
    assert not all(theirs), "a grid must contain invalid forms"


def box(rank: int) -> str:
    return "box[" + ", ".join(["%i"] * rank) + "]"


def offsets(count: int) -> str:
    return "" if count == 0 else " im2col[" + ", ".join(["%h"] * count) + "]"


def test_load_grid_matches_upstream(run_opt: RunOpt, upstream: Upstream) -> None:
    bodies: list[str] = []
    modes = ("tile", "im2col", "im2col_w", "im2col_w_128", "tile_gather4")
    for mode, rank, count, dst, cta_only, extra in itertools.product(
        modes, (0, 1, 2, 3, 4, 5, 6), (0, 1, 2, 3), ("%p7", "%p3"), (False, True), ("", "predicate", "mask", "group")
    ):
        if (extra or dst == "%p3" or cta_only) and (count, rank) not in ((0, 2), (2, 4), (1, 3), (0, 5)):
            continue  # the destinations and optional parts are crossed with a few shapes only
        attrs = [f"mode = #nvvm.tma_load_mode<{mode}>"] if mode != "tile" else []
        if cta_only:
            attrs.append("isCTAOnly = true")
        if extra == "group":
            attrs.append("group = #nvvm.cta_group<cta_2>")
        tail = {"predicate": " predicate = %b", "mask": " multicast_mask = %h"}.get(extra, "")
        attr = f" {{{', '.join(attrs)}}}" if attrs else ""
        dst_type = "!llvm.ptr<7>" if dst == "%p7" else "!llvm.ptr<3>"
        bodies.append(
            f"nvvm.cp.async.bulk.tensor.shared.cluster.global {dst}, %p0, %bar, {box(rank)}{offsets(count)}{tail}"
            f"{attr} : {dst_type}, !llvm.ptr"
        )
    assert_same_verdicts(run_opt, upstream, bodies)


def test_store_and_reduce_grid_matches_upstream(run_opt: RunOpt, upstream: Upstream) -> None:
    bodies: list[str] = []
    for op, mode, rank, hint, predicate in itertools.product(
        ("store", "reduce"), ("tile", "im2col", "tile_scatter4"), (0, 1, 2, 3, 4, 5, 6), (False, True), (False, True)
    ):
        if op == "reduce" and predicate:
            continue  # the reduction has no predicate operand
        attrs = [f"mode = #nvvm.tma_store_mode<{mode}>"] if mode != "tile" else []
        if op == "reduce":
            attrs.append("redKind = #nvvm.tma_redux_kind<add>")
        attr = f" {{{', '.join(attrs)}}}" if attrs else ""
        tail = (" l2_cache_hint = %d" if hint else "") + (", predicate = %b" if predicate else "")
        name = "global.shared.cta" if op == "store" else "reduce"
        bodies.append(f"nvvm.cp.async.bulk.tensor.{name} %p0, %p3, {box(rank)}{tail}{attr} : !llvm.ptr, <3>")
    assert_same_verdicts(run_opt, upstream, bodies)


def test_bulk_copy_grid_matches_upstream(run_opt: RunOpt, upstream: Upstream) -> None:
    pointers = {"%p7": "!llvm.ptr<7>", "%p3": "!llvm.ptr<3>", "%p0": "!llvm.ptr", "%p1": "!llvm.ptr<1>"}
    bodies: list[str] = []
    for (dst, dst_t), (src, src_t), mask, hint in itertools.product(
        pointers.items(), pointers.items(), (False, True), (False, True)
    ):
        tail = (" multicast_mask = %h" if mask else "") + (" l2_cache_hint = %d" if hint else "")
        bodies.append(f"nvvm.cp.async.bulk.shared.cluster.global {dst}, {src}, %bar, %i{tail} : {dst_t}, {src_t}")
        tail = (" l2_cache_hint = %d" if hint else "") + (" byte_mask = %h" if mask else "")
        bodies.append(f"nvvm.cp.async.bulk.global.shared.cta {dst}, {src}, %i{tail} : {dst_t}, {src_t}")
    for space, param, predicate in itertools.product((0, 1, 3, 4, 5), (False, True), (False, True)):
        ptr_type = "!llvm.ptr" if space == 0 else f"!llvm.ptr<{space}>"
        head = "tensormap in_param_space" if param else "tensormap"
        operands = f"%p{space}, predicate = %b : {ptr_type}, i1" if predicate else f"%p{space} : {ptr_type}"
        bodies.append(f"nvvm.prefetch {head}, {operands}")
    for group, read in itertools.product((-1, 0, 3), ("", " {read}")):
        bodies.append(f"nvvm.cp.async.bulk.wait_group {group}{read}")
    for scope, proxies in itertools.product(("cta", "cluster", "gpu", "sys"), ("", "generic", "async")):
        attr = f" {{fromProxy = #nvvm.proxy_kind<{proxies}>}}" if proxies else ""
        bodies.append(f"nvvm.fence.proxy.release <{scope}>{attr}")
        attr = f" {{toProxy = #nvvm.proxy_kind<{proxies}>}}" if proxies else ""
        bodies.append(f"nvvm.fence.proxy.acquire <{scope}> %p0, %i{attr}")
    assert_same_verdicts(run_opt, upstream, bodies)


@pytest.mark.parametrize("index", range(len(REFUSED.read_text().split("// -----"))))
def test_refused_form_text_is_upstreams(run_opt: RunOpt, upstream: Upstream, index: int) -> None:
    chunk = REFUSED.read_text().split("// -----")[index]
    expected = nvvm_ops(upstream.parse(chunk))
    assert expected, "the chunk has no nvvm ops"
    assert nvvm_ops(printed(run_opt, chunk)) == expected
    generic = nvvm_ops(upstream.parse(chunk, "--mlir-print-op-generic"))
    assert nvvm_ops(printed(run_opt, chunk, "--print-op-generic")) == generic
    assert upstream.parse(printed(run_opt, chunk)) == upstream.parse(chunk)
    assert upstream.parse(printed(run_opt, chunk, "--print-op-generic")) == upstream.parse(chunk)


_TMA_INSTRUCTION = re.compile(
    r"^\s*(@%?!?\w+\s+)?((?:cp\.async\.bulk|cp\.reduce\.async\.bulk|prefetch|fence\.proxy\.tensormap)[\w.:]*)", re.M
)


def tma_instructions(ptx: str) -> Counter[tuple[bool, str]]:
    """(guarded, opcode with modifiers) of every TMA / bulk-copy / tensormap instruction."""
    return Counter((guard is not None and guard != "", op) for guard, op in _TMA_INSTRUCTION.findall(ptx))


@pytest.mark.parametrize("program", LOWERED, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_tma_instructions_match_llc(run_opt: RunOpt, upstream: Upstream, program: Path) -> None:
    result = run_opt(None, "-t", "ptx", path=program)
    assert result.code == 0, result.err
    expected = tma_instructions(upstream.to_ptx(program.read_text()))
    assert sum(expected.values()) >= 8, "llc-22's PTX has too few TMA instructions"
    assert tma_instructions(result.out) == expected


def test_nvvm_level_interpreter_refuses_what_the_model_does_not_execute(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The TMA ops run at the NVVM level (tests/test_nvvm_tma_run.py); a mode the model
    does not execute is refused at the op, before running, naming it."""
    source = tmp_path / "tma.mlir"
    source.write_text(
        "llvm.func @k(%desc: !llvm.ptr, %s: !llvm.ptr<3>, %x: i32) attributes {nvvm.kernel} {\n"
        "  nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %s, box[%x, %x, %x] "
        "{mode = #nvvm.tma_store_mode<im2col>} : !llvm.ptr, <3>\n"
        "  llvm.return\n}\n"
    )
    result = run_cli(capsys, str(source), "--kernel", "k", "--block", "32", "--arg", "desc=null",
                     "--arg", "s=null", "--arg", "x=0")  # fmt: skip
    assert result.code == 1
    assert result.err.startswith(
        f"{source}:2:3: error: xdsl-tmem-run: nvvm.cp.async.bulk.tensor.global.shared.cta with mode im2col "
        "is not executed by the model (only mode tile)"
    ), result.err
