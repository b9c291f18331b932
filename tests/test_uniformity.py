"""The warp-uniformity analysis behind `bra.uni` (xdsl_tmem/backend/uniformity.py).

Expectations follow from the PTX execution model, not from our output: `%tid.x`
differs between the lanes of a warp, kernel parameters and constants do not, and a
value is uniform only when a rule proves it (an op the analysis does not know is
divergent even on uniform operands).
"""

from __future__ import annotations

import pytest
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xdsl_tmem.backend.uniformity import divergent_values
from xdsl_tmem.tools.run import make_context


def divergent_names(body: str, signature: str = "%n: i32, %p: !llvm.ptr<1>", attrs: str = "") -> set[str]:
    """Names (`%x`) of the divergent values of a kernel with `body`."""
    text = f"llvm.func @k({signature}) attributes {{nvvm.kernel{attrs}}} {{\n{body}\n}}\n"
    module = Parser(make_context(), text).parse_module()
    assert isinstance(module, ModuleOp)
    (fn,) = [op for op in module.body.block.ops if isinstance(op, llvm.FuncOp)]
    return {v.name_hint for v in divergent_values(fn) if v.name_hint is not None}


def test_unknown_op_with_uniform_operands_is_divergent() -> None:
    body = """
  %known = arith.addi %n, %n : i32
  %unknown = "test.op"(%n) : (i32) -> i32
  %after = arith.addi %unknown, %n : i32
  llvm.return"""
    assert divergent_names(body) == {"unknown", "after"}


def test_block_arguments_of_an_unknown_region_are_divergent() -> None:
    body = """
  "test.op"() ({
  ^bb0(%inner: i32):
    %use = arith.addi %inner, %n : i32
    "test.termop"() : () -> ()
  }) : () -> ()
  llvm.return"""
    assert divergent_names(body) == {"inner", "use"}


def test_sources_and_parameters() -> None:
    body = """
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %lane = nvvm.read.ptx.sreg.laneid : i32
  %cta = nvvm.read.ptx.sreg.ctaid.x : i32
  %ntid = nvvm.read.ptx.sreg.ntid.x : i32
  %c5 = arith.constant 5 : i32
  %warp = arith.shrui %tid, %c5 : i32
  %mixed = arith.addi %cta, %lane : i32
  %x = llvm.load %p : !llvm.ptr<1> -> i32
  %q = llvm.getelementptr %p[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  %y = llvm.load %q : !llvm.ptr<1> -> i32
  llvm.return"""
    # The warp index is uniform only when warps are tid.x slices (1-D block here).
    one_d = divergent_names(body, attrs=", nvvm.maxntid = array<i32: 128, 1, 1>")
    assert one_d == {"tid", "lane", "mixed", "q", "y"}
    assert divergent_names(body) == one_d | {"warp"}


@pytest.mark.parametrize(("bound", "init", "expected"), [
    ("%n", "%n", set[str]()),
    ("%tid", "%n", {"i", "acc", "sum", "next"}),
    ("%n", "%tid", {"acc", "sum", "next"}),
])  # fmt: skip
def test_scf_for(bound: str, init: str, expected: set[str]) -> None:
    body = f"""
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %sum = scf.for %i = %c0 to {bound} step %c1 iter_args(%acc = {init}) -> (i32) : i32 {{
    %next = arith.addi %acc, %i : i32
    scf.yield %next : i32
  }}
  llvm.return"""
    assert divergent_names(body) == expected | {"tid"}


def test_scf_if_on_divergent_condition_merges_divergently() -> None:
    body = """
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %lane0 = arith.cmpi eq, %tid, %c0 : i32
  %r = scf.if %lane0 -> (i32) {
    scf.yield %c0 : i32
  } else {
    scf.yield %c1 : i32
  }
  llvm.return"""
    assert divergent_names(body) == {"tid", "lane0", "r"}


def test_cf_block_arguments() -> None:
    """Data dependence (x), sync dependence at a join (j), temporal divergence out of
    a loop with a lane-dependent exit (out; inside the loop m is the same in every
    lane still running), and a uniform loop (k) after the divergent branch reconverged."""
    body = """
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  cf.br ^data(%tid : i32)
^data(%x: i32):
  %lane0 = arith.cmpi eq, %x, %c0 : i32
  cf.cond_br %lane0, ^a, ^b
^a:
  cf.br ^join(%c0 : i32)
^b:
  cf.br ^join(%c1 : i32)
^join(%j: i32):
  cf.br ^head(%c0 : i32)
^head(%m: i32):
  %m1 = arith.addi %m, %c1 : i32
  %more = arith.cmpi ult, %m1, %tid : i32
  cf.cond_br %more, ^head(%m1 : i32), ^exit(%m1 : i32)
^exit(%out: i32):
  cf.br ^uniform(%c0 : i32)
^uniform(%k: i32):
  %k1 = arith.addi %k, %c1 : i32
  %again = arith.cmpi slt, %k1, %n : i32
  cf.cond_br %again, ^uniform(%k1 : i32), ^end
^end:
  llvm.return"""
    assert divergent_names(body) == {"tid", "x", "lane0", "j", "more", "out"}
