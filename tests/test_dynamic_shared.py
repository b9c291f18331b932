"""Dynamic shared memory at the NVVM level: a zero-length `external` global of address space 3
(`llvm.mlir.global external @smem() {addr_space = 3 : i32} : !llvm.array<0 x i8>`) is the
launch's dynamic shared memory. llc-22 declares it `.extern .shared .align A .b8 smem[];`
(checked here against llc-22 itself), and the CUDA Programming Guide ("Shared Memory") says
every extern shared array starts at the same address, after the static variables; its size
is the launch's (`cudaLaunchKernel`'s `sharedMem`, `--dynamic-shared`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from external import Upstream
from support import ptxas_assemble
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from xdsl_tmem.backend.target import emit_ptx
from xdsl_tmem.interpreter import KernelHazard, run_kernel
from xdsl_tmem.tools.run import make_context

# Thread i stores i at byte 4i of @dyn (after a 16-byte static @head), then every thread
# reads the word at 4i of @alias, the second extern array: the same bytes.
KERNEL = """
llvm.mlir.global internal @head() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<16 x i8>
llvm.mlir.global external @dyn() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
llvm.mlir.global external @alias() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<0 x i8>
llvm.func @k(%out: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 32, 1, 1>} {
  %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 32> : i32
  %dyn = llvm.mlir.addressof @dyn : !llvm.ptr<3>
  %alias = llvm.mlir.addressof @alias : !llvm.ptr<3>
  %p = llvm.getelementptr %dyn[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
  llvm.store %tid, %p : i32, !llvm.ptr<3>
  nvvm.barrier0
  %q = llvm.getelementptr %alias[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i32
  %v = llvm.load %q : !llvm.ptr<3> -> i32
  %base = llvm.ptrtoint %dyn : !llvm.ptr<3> to i32
  %w = arith.addi %v, %base : i32
  %o = llvm.getelementptr %out[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
  llvm.store %w, %o : i32, !llvm.ptr<1>
  llvm.return
}
"""


def _module() -> ModuleOp:
    module = Parser(make_context(), KERNEL).parse_module()
    module.verify()
    return module


def test_extern_arrays_share_the_launchs_dynamic_bytes_after_the_static_ones() -> None:
    result = run_kernel(_module(), "k", block=(32, 1, 1), args={"out": np.zeros(32, np.int32)},
                        dynamic_shared_bytes=128)  # fmt: skip
    # @head takes bytes 0-15; the extern arrays start at the next multiple of 1024 (the
    # larger of their alignments), and @alias reads what was stored through @dyn.
    np.testing.assert_array_equal(result.outputs["out"], np.arange(32) + 1024)


def test_without_dynamic_bytes_the_extern_array_is_out_of_bounds() -> None:
    with pytest.raises(KernelHazard) as caught:
        run_kernel(_module(), "k", block=(32, 1, 1), args={"out": np.zeros(32, np.int32)})
    assert caught.value.kind == "out-of-bounds", caught.value
    assert "outside its 1024 bytes of shared memory" in caught.value.message, caught.value.message


def test_the_backend_declares_it_as_llc_does(upstream: Upstream, ptxas: str, tmp_path: Path) -> None:
    ours = emit_ptx(_module())
    theirs = upstream.to_ptx(KERNEL)
    declaration = ".extern .shared .align 1024 .b8 dyn[];"
    assert declaration in theirs.splitlines()
    assert declaration in ours.splitlines()
    ptxas_assemble(ptxas, ours, tmp_path)
