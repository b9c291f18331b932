// mbarrier: init (shared, generic, predicated), inval, arrive (plain, with a
// state, with a count, relaxed, cluster scope on a shared::cluster pointer),
// arrive.expect_tx, expect_tx, complete_tx, the blocking try_wait.parity, the
// non-blocking try_wait / test.wait probes, fence.mbarrier.init. Expected text
// is mlir-opt-22's; tests/test_nvvm_upstream.py runs it through mlir-opt-22,
// llc-22 and ptxas.
// RUN: xdsl-tmem-opt %s | filecheck %s
// RUN: XDSL_TMEM_ROUNDTRIP
// RUN: XDSL_TMEM_GENERIC

module {
  llvm.func @mbarrier(%bar: !llvm.ptr<3>, %gbar: !llvm.ptr, %cbar: !llvm.ptr<7>, %phase: i32, %tx: i32, %pred: i1, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %one = llvm.mlir.constant(1 : i32) : i32
    %c128 = llvm.mlir.constant(128 : i32) : i32
    nvvm.mbarrier.init %bar, %one : !llvm.ptr<3>, i32
    nvvm.mbarrier.init %gbar, %c128 : !llvm.ptr, i32
    nvvm.mbarrier.init %bar, %c128, predicate = %pred : !llvm.ptr<3>, i32, i1
    nvvm.fence.mbarrier.init
    %s0 = nvvm.mbarrier.arrive %bar : !llvm.ptr<3> -> i64
    nvvm.mbarrier.arrive %bar {scope = #nvvm.mem_scope<cta>, relaxed = false} : !llvm.ptr<3>
    %s1 = nvvm.mbarrier.arrive %bar, %one {relaxed = true} : !llvm.ptr<3> -> i64
    nvvm.mbarrier.arrive %gbar : !llvm.ptr
    nvvm.mbarrier.arrive %cbar {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
    %s2 = nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32 -> i64
    nvvm.mbarrier.arrive.expect_tx %bar, %tx, predicate = %pred : !llvm.ptr<3>, i32, i1
    nvvm.mbarrier.arrive.expect_tx %cbar, %tx {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>, i32
    nvvm.mbarrier.expect_tx %bar, %tx : !llvm.ptr<3>, i32
    nvvm.mbarrier.complete_tx %bar, %tx {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<3>, i32
    %ticks = llvm.mlir.constant(1000000 : i32) : i32
    nvvm.mbarrier.try_wait.parity %bar, %phase, %ticks : !llvm.ptr<3>, i32, i32
    nvvm.mbarrier.try_wait.parity %gbar, %phase, %ticks : !llvm.ptr, i32, i32
    %w0 = nvvm.mbarrier.try_wait %bar, %phase : !llvm.ptr<3>, i32 -> i1
    %w1 = nvvm.mbarrier.try_wait %bar, %s0, %ticks {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<3>, i64, i32 -> i1
    %w2 = nvvm.mbarrier.test.wait %bar, %phase : !llvm.ptr<3>, i32 -> i1
    %w3 = nvvm.mbarrier.test.wait %gbar, %s1 {relaxed = true} : !llvm.ptr, i64 -> i1
    nvvm.mbarrier.inval %bar : !llvm.ptr<3>
    // keep the results alive through llc
    %x0 = llvm.zext %w0 : i1 to i32
    %x1 = llvm.zext %w1 : i1 to i32
    %x2 = llvm.zext %w2 : i1 to i32
    %x3 = llvm.zext %w3 : i1 to i32
    %y0 = llvm.add %x0, %x1 : i32
    %y1 = llvm.add %x2, %x3 : i32
    %y2 = llvm.add %y0, %y1 : i32
    llvm.store %y2, %out : i32, !llvm.ptr<1>
    %z0 = llvm.add %s0, %s1 : i64
    %z1 = llvm.add %z0, %s2 : i64
    llvm.store %z1, %out : i64, !llvm.ptr<1>
    llvm.return
  }
}

// CHECK-LABEL: llvm.func @mbarrier
// CHECK:      nvvm.mbarrier.init %bar, %one : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.mbarrier.init %gbar, %c128 : !llvm.ptr, i32
// CHECK-NEXT: nvvm.mbarrier.init %bar, %c128, predicate = %pred : !llvm.ptr<3>, i32, i1
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: %s0 = nvvm.mbarrier.arrive %bar : !llvm.ptr<3> -> i64
// CHECK-NEXT: nvvm.mbarrier.arrive %bar : !llvm.ptr<3>
// CHECK-NEXT: %s1 = nvvm.mbarrier.arrive %bar, %one {relaxed = true} : !llvm.ptr<3> -> i64
// CHECK-NEXT: nvvm.mbarrier.arrive %gbar : !llvm.ptr
// CHECK-NEXT: nvvm.mbarrier.arrive %cbar {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK-NEXT: %s2 = nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32 -> i64
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %bar, %tx, predicate = %pred : !llvm.ptr<3>, i32, i1
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %cbar, %tx {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>, i32
// CHECK-NEXT: nvvm.mbarrier.expect_tx %bar, %tx : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.mbarrier.complete_tx %bar, %tx {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<3>, i32
// CHECK:      nvvm.mbarrier.try_wait.parity %bar, %phase, %ticks : !llvm.ptr<3>, i32, i32
// CHECK-NEXT: nvvm.mbarrier.try_wait.parity %gbar, %phase, %ticks : !llvm.ptr, i32, i32
// CHECK-NEXT: %w0 = nvvm.mbarrier.try_wait %bar, %phase : !llvm.ptr<3>, i32 -> i1
// CHECK-NEXT: %w1 = nvvm.mbarrier.try_wait %bar, %s0, %ticks {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<3>, i64, i32 -> i1
// CHECK-NEXT: %w2 = nvvm.mbarrier.test.wait %bar, %phase : !llvm.ptr<3>, i32 -> i1
// CHECK-NEXT: %w3 = nvvm.mbarrier.test.wait %gbar, %s1 {relaxed = true} : !llvm.ptr, i64 -> i1
// CHECK-NEXT: nvvm.mbarrier.inval %bar : !llvm.ptr<3>

// GENERIC:      "nvvm.mbarrier.init"(%bar, %one) : (!llvm.ptr<3>, i32) -> ()
// GENERIC:      "nvvm.mbarrier.init"(%bar, %c128, %pred) : (!llvm.ptr<3>, i32, i1) -> ()
// GENERIC-NEXT: "nvvm.fence.mbarrier.init"() : () -> ()
// GENERIC-NEXT: %s0 = "nvvm.mbarrier.arrive"(%bar) <{relaxed = false, scope = #nvvm.mem_scope<cta>}> : (!llvm.ptr<3>) -> i64
// GENERIC-NEXT: "nvvm.mbarrier.arrive"(%bar) <{relaxed = false, scope = #nvvm.mem_scope<cta>}> : (!llvm.ptr<3>) -> ()
// GENERIC-NEXT: %s1 = "nvvm.mbarrier.arrive"(%bar, %one) <{relaxed = true, scope = #nvvm.mem_scope<cta>}> : (!llvm.ptr<3>, i32) -> i64
// GENERIC:      "nvvm.mbarrier.arrive.expect_tx"(%bar, %tx, %pred) <{relaxed = false, scope = #nvvm.mem_scope<cta>}> : (!llvm.ptr<3>, i32, i1) -> ()
// GENERIC:      "nvvm.mbarrier.expect_tx"(%bar, %tx) <{scope = #nvvm.mem_scope<cta>}> : (!llvm.ptr<3>, i32) -> ()
// GENERIC:      "nvvm.mbarrier.try_wait.parity"(%bar, %phase, %ticks) : (!llvm.ptr<3>, i32, i32) -> ()
// GENERIC:      %w1 = "nvvm.mbarrier.try_wait"(%bar, %s0, %ticks) <{relaxed = false, scope = #nvvm.mem_scope<cluster>}> : (!llvm.ptr<3>, i64, i32) -> i1
