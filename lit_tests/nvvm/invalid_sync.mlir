// Verifier errors of the synchronisation, identity and special-register ops:
// mlir-opt-22's checks (reworded) and what ptxas or mlir-translate-22 reject.
// `// mlir-opt-22: "..."` and `// toolchain: "..."` lines are checked by
// tests/test_nvvm_upstream.py.
// RUN: xdsl-tmem-opt %s --verify-diagnostics --split-input-file | filecheck %s

llvm.func @f(%n: i32) {
  nvvm.barrier number_of_threads = %n
  llvm.return
}
// mlir-opt-22: "barrier id is missing, it should be set between 0 to 15"
// CHECK: invalid_sync.mlir:8:3: error: nvvm.barrier: number_of_threads needs a barrier id (0 to 15)

// -----
llvm.func @f() {
  %id = llvm.mlir.constant(16 : i32) : i32
  nvvm.barrier id = %id
  llvm.return
}
// toolchain: "Barrier number '16' out of range, expected to be in range [0..15]"
// CHECK: error: nvvm.barrier: barrier id must be in [0, 15], got 16

// -----
llvm.func @f() {
  %id = llvm.mlir.constant(1 : i32) : i32
  %n = arith.constant 100 : i32
  nvvm.barrier id = %id number_of_threads = %n
  llvm.return
}
// toolchain: "Number of threads participating in barrier must be in multiple of warp size"
// CHECK: error: nvvm.barrier: number_of_threads must be a multiple of the warp size (32), got 100

// -----
llvm.func @f(%out: !llvm.ptr) {
  %r = nvvm.barrier -> i32
  llvm.store %r, %out : i32, !llvm.ptr
  llvm.return
}
// mlir-translate-22 crashes on this:
// toolchain: "PLEASE submit a bug report"
// CHECK: error: nvvm.barrier: only a reduction (#nvvm.reduction<...>) has a result

// -----
llvm.func @f(%p: i32) {
  "nvvm.barrier"(%p) <{operandSegmentSizes = array<i32: 0, 0, 1>}> : (i32) -> ()
  llvm.return
}
// CHECK: error: nvvm.barrier: a reduction needs both reductionOp and its predicate operand

// -----
llvm.func @f() {
  %id = llvm.mlir.constant(16 : i32) : i32
  %n = llvm.mlir.constant(128 : i32) : i32
  nvvm.barrier.arrive id = %id number_of_threads = %n
  llvm.return
}
// toolchain: "Barrier number '16' out of range, expected to be in range [0..15]"
// CHECK: error: nvvm.barrier.arrive: barrier id must be in [0, 15], got 16

// -----
llvm.func @f() {
  %n = llvm.mlir.constant(100 : i32) : i32
  nvvm.barrier.arrive number_of_threads = %n
  llvm.return
}
// toolchain: "Number of threads participating in barrier must be in multiple of warp size"
// CHECK: error: nvvm.barrier.arrive: number_of_threads must be a multiple of the warp size (32), got 100

// -----
llvm.func @f() {
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<tensormap>}
  llvm.return
}
// mlir-opt-22: "tensormap proxy is not a supported proxy kind"
// CHECK: error: nvvm.fence.proxy: kind tensormap is not supported (allowed: alias, async, async.global, async.shared)

// -----
llvm.func @f() {
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>}
  llvm.return
}
// mlir-opt-22: "async_shared fence requires space attribute"
// CHECK: error: nvvm.fence.proxy: kind async.shared needs a space (#nvvm.shared_space<cta|cluster>)

// -----
llvm.func @f() {
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<alias>, space = #nvvm.shared_space<cta>}
  llvm.return
}
// mlir-opt-22: "only async_shared fence can have space attribute"
// CHECK: error: nvvm.fence.proxy: only kind async.shared takes a space, got kind alias

// -----
llvm.func @f() {
  nvvm.fence.proxy
  llvm.return
}
// mlir-opt-22: "requires attribute 'kind'"
// CHECK: error: nvvm.fence.proxy: property 'kind' expected in operation 'nvvm.fence.proxy'

// -----
llvm.func @f(%p: !llvm.ptr<3>, %r: i32) {
  %q = nvvm.mapa %p, %r : !llvm.ptr<3> -> !llvm.ptr<3>
  llvm.return
}
// mlir-opt-22: "result #0 must be LLVM pointer in address space 0 or LLVM pointer in address space 7"
// CHECK: error: nvvm.mapa: result must be !llvm.ptr<7> for a !llvm.ptr<3> operand, got !llvm.ptr<3>

// -----
llvm.func @f(%p: !llvm.ptr, %r: i32) {
  %q = nvvm.mapa %p, %r : !llvm.ptr -> !llvm.ptr<7>
  llvm.return
}
// mlir-opt-22: "failed to verify that Valid address-space check(or mapping) for mapa Op"
// CHECK: error: nvvm.mapa: result must be !llvm.ptr for a !llvm.ptr operand, got !llvm.ptr<7>

// -----
llvm.func @f() {
  %e = nvvm.elect.sync -> i32
  llvm.return
}
// mlir-opt-22: "result #0 must be 1-bit signless integer"
// CHECK: error: nvvm.elect.sync: the result must be i1, got i32

// -----
llvm.func @f() {
  %t = nvvm.read.ptx.sreg.tid.x range <i64, 0, 160> : i32
  llvm.return
}
// toolchain: "Attribute 'range(i64 0, 160)' applied to incompatible type!"
// CHECK: error: nvvm.read.ptx.sreg.tid.x: range type i64 must match the result type i32

// -----
llvm.func @f(%mask: i64) {
  "nvvm.bar.warp.sync"(%mask) : (i64) -> ()
  llvm.return
}
// mlir-opt-22: "operand #0 must be 32-bit signless integer"
// CHECK: error: nvvm.bar.warp.sync: operand 'mask' at position 0 does not verify: Expected attribute i32 but got i64
