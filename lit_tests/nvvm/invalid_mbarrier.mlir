// Verifier errors of the mbarrier ops (mlir-opt-22's checks, reworded, plus the
// PTX ISA count range). `// mlir-opt-22: "..."` lines are checked by
// tests/test_nvvm_upstream.py.
// RUN: xdsl-tmem-opt %s --verify-diagnostics --split-input-file | filecheck %s

llvm.func @f(%bar: !llvm.ptr<7>, %n: i32) {
  nvvm.mbarrier.init %bar, %n : !llvm.ptr<7>, i32
  llvm.return
}
// mlir-opt-22: "operand #0 must be LLVM pointer in address space 0 or LLVM pointer in address space 3"
// CHECK: invalid_mbarrier.mlir:7:3: error: nvvm.mbarrier.init: addr must be !llvm.ptr (generic) or !llvm.ptr<3> (shared::cta), got !llvm.ptr<7>

// -----
llvm.func @f(%bar: !llvm.ptr<3>) {
  %zero = llvm.mlir.constant(0 : i32) : i32
  nvvm.mbarrier.init %bar, %zero : !llvm.ptr<3>, i32
  llvm.return
}
// [D] PTX ISA: the count is in [1, 2^20 - 1] (docs/ptx-nvvm.md §1.9; no tool here checks it)
// CHECK: error: nvvm.mbarrier.init: count must be in [1, 1048575] (mbarrier count range), got 0

// -----
llvm.func @f(%bar: !llvm.ptr<3>) {
  nvvm.mbarrier.arrive %bar {scope = #nvvm.mem_scope<gpu>} : !llvm.ptr<3>
  llvm.return
}
// mlir-opt-22: "mbarrier scope must be either CTA or Cluster"
// CHECK: error: nvvm.mbarrier.arrive: scope must be cta or cluster, got gpu

// -----
llvm.func @f(%bar: !llvm.ptr<7>) {
  %s = nvvm.mbarrier.arrive %bar {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7> -> i64
  llvm.return
}
// mlir-opt-22: "mbarrier in shared_cluster space cannot return any value"
// CHECK: error: nvvm.mbarrier.arrive: an arrive on a !llvm.ptr<7> (shared::cluster) mbarrier cannot return a state; remove the result

// -----
llvm.func @f(%bar: !llvm.ptr<6>) {
  nvvm.mbarrier.arrive %bar : !llvm.ptr<6>
  llvm.return
}
// mlir-opt-22: "or LLVM pointer in address space 7, but got '!llvm.ptr<6>'"
// CHECK: error: nvvm.mbarrier.arrive: addr must be !llvm.ptr (generic) or !llvm.ptr<3> (shared::cta) or !llvm.ptr<7> (shared::cluster), got !llvm.ptr<6>

// -----
llvm.func @f(%bar: !llvm.ptr<7>, %tx: i32) {
  %s = nvvm.mbarrier.arrive.expect_tx %bar, %tx {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>, i32 -> i64
  llvm.return
}
// mlir-opt-22: "mbarrier in shared_cluster space cannot return any value"
// CHECK: error: nvvm.mbarrier.arrive.expect_tx: an arrive on a !llvm.ptr<7> (shared::cluster) mbarrier cannot return a state; remove the result

// -----
llvm.func @f(%bar: !llvm.ptr<3>, %tx: i32) {
  nvvm.mbarrier.arrive.expect_tx %bar, %tx {scope = #nvvm.mem_scope<sys>} : !llvm.ptr<3>, i32
  llvm.return
}
// mlir-opt-22: "mbarrier scope must be either CTA or Cluster"
// CHECK: error: nvvm.mbarrier.arrive.expect_tx: scope must be cta or cluster, got sys

// -----
llvm.func @f(%bar: !llvm.ptr, %tx: i32) {
  nvvm.mbarrier.expect_tx %bar, %tx : !llvm.ptr, i32
  llvm.return
}
// mlir-opt-22: "operand #0 must be LLVM pointer in address space 3 or LLVM pointer in address space 7"
// CHECK: error: nvvm.mbarrier.expect_tx: addr must be !llvm.ptr<3> (shared::cta) or !llvm.ptr<7> (shared::cluster), got !llvm.ptr

// -----
llvm.func @f(%bar: !llvm.ptr<3>, %tx: i32) {
  nvvm.mbarrier.complete_tx %bar, %tx {scope = #nvvm.mem_scope<gpu>} : !llvm.ptr<3>, i32
  llvm.return
}
// mlir-opt-22: "mbarrier scope must be either CTA or Cluster"
// CHECK: error: nvvm.mbarrier.complete_tx: scope must be cta or cluster, got gpu

// -----
llvm.func @f(%bar: !llvm.ptr<7>, %ph: i32, %ticks: i32) {
  nvvm.mbarrier.try_wait.parity %bar, %ph, %ticks : !llvm.ptr<7>, i32, i32
  llvm.return
}
// mlir-opt-22: "operand #0 must be LLVM pointer in address space 0 or LLVM pointer in address space 3"
// CHECK: error: nvvm.mbarrier.try_wait.parity: addr must be !llvm.ptr (generic) or !llvm.ptr<3> (shared::cta), got !llvm.ptr<7>

// -----
llvm.func @f(%bar: !llvm.ptr<3>, %ph: i32) {
  %ok = nvvm.mbarrier.try_wait %bar, %ph {scope = #nvvm.mem_scope<sys>} : !llvm.ptr<3>, i32 -> i1
  llvm.return
}
// mlir-opt-22: "mbarrier scope must be either CTA or Cluster"
// CHECK: error: nvvm.mbarrier.try_wait: scope must be cta or cluster, got sys

// -----
llvm.func @f(%bar: !llvm.ptr<3>, %ph: i16) {
  %ok = "nvvm.mbarrier.test.wait"(%bar, %ph) : (!llvm.ptr<3>, i16) -> i1
  llvm.return
}
// mlir-opt-22: "operand #1 must be 64-bit signless integer or 32-bit signless integer"
// CHECK: error: nvvm.mbarrier.test.wait: operand 'state_or_phase' at position 1 does not verify: Expected one of i32, i64, but got i16

// -----
llvm.func @f(%bar: !llvm.ptr<7>, %ph: i32) {
  %ok = nvvm.mbarrier.test.wait %bar, %ph : !llvm.ptr<7>, i32 -> i1
  llvm.return
}
// mlir-opt-22: "operand #0 must be LLVM pointer in address space 0 or LLVM pointer in address space 3"
// CHECK: error: nvvm.mbarrier.test.wait: addr must be !llvm.ptr (generic) or !llvm.ptr<3> (shared::cta), got !llvm.ptr<7>
