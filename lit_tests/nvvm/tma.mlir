// TMA: cp.async.bulk.tensor loads (tile mode; multicast, L2 hint, cta_group,
// shared::cta, predicated) and stores (tile; L2 hint, predicated), bulk async-groups,
// prefetch.tensormap (generic, const, param, predicated): the forms our PTX backend
// lowers (the others, ../ptx/tma_refused.mlir). Expected text is mlir-opt-22's;
// tests/test_nvvm_upstream.py runs it through mlir-opt-22, llc-22 and ptxas.
// RUN: xdsl-tmem-opt %s | filecheck %s
// RUN: XDSL_TMEM_ROUNDTRIP
// RUN: XDSL_TMEM_GENERIC

module {
  llvm.func @tma(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %p: i1) attributes {nvvm.kernel} {
    %bytes = llvm.mlir.constant(4096 : i32) : i32
    nvvm.prefetch tensormap, %desc : !llvm.ptr
    nvvm.prefetch tensormap in_param_space, %desc : !llvm.ptr
    nvvm.prefetch tensormap, %desc, predicate = %p : !llvm.ptr, i1
    nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x] : !llvm.ptr<7>, !llvm.ptr
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y] : !llvm.ptr<7>, !llvm.ptr
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y, %z, %x, %y] multicast_mask = %mask l2_cache_hint = %hint : !llvm.ptr<7>, !llvm.ptr
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y] multicast_mask = %mask {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<7>, !llvm.ptr
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y] {group = #nvvm.cta_group<cta_1>} : !llvm.ptr<7>, !llvm.ptr
    nvvm.cp.async.bulk.tensor.shared.cluster.global %cta, %desc, %bar, box[%x, %y, %z] l2_cache_hint = %hint {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
    nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y] predicate = %p : !llvm.ptr<7>, !llvm.ptr
    nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x, %y] : !llvm.ptr, !llvm.ptr<3>
    nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x, %y, %z] l2_cache_hint = %hint : !llvm.ptr, <3>
    nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x], predicate = %p : !llvm.ptr, <3>
    nvvm.cp.async.bulk.commit.group
    nvvm.cp.async.bulk.wait_group 1 {read}
    nvvm.cp.async.bulk.wait_group 0
    llvm.return
  }
  // A tensor map in the constant space (not a kernel: ptxas refuses cvta.const on a kernel's parameter).
  llvm.func @tma_const(%cdesc: !llvm.ptr<4>) {
    nvvm.prefetch tensormap, %cdesc : !llvm.ptr<4>
    llvm.return
  }
}

// CHECK-LABEL: llvm.func @tma(
// CHECK-NEXT: %bytes = llvm.mlir.constant(4096 : i32) : i32
// CHECK-NEXT: nvvm.prefetch tensormap, %desc : !llvm.ptr
// CHECK-NEXT: nvvm.prefetch tensormap in_param_space, %desc : !llvm.ptr
// CHECK-NEXT: nvvm.prefetch tensormap, %desc, predicate = %p : !llvm.ptr, i1
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x] : !llvm.ptr<7>, !llvm.ptr
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y] : !llvm.ptr<7>, !llvm.ptr
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y, %z, %x, %y] multicast_mask = %mask l2_cache_hint = %hint : !llvm.ptr<7>, !llvm.ptr
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y] multicast_mask = %mask {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<7>, !llvm.ptr
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y] {group = #nvvm.cta_group<cta_1>} : !llvm.ptr<7>, !llvm.ptr
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %cta, %desc, %bar, box[%x, %y, %z] l2_cache_hint = %hint {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y] predicate = %p : !llvm.ptr<7>, !llvm.ptr
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x, %y] : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x, %y, %z] l2_cache_hint = %hint : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x], predicate = %p : !llvm.ptr, <3>
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 1 {read}
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0
// CHECK-LABEL: llvm.func @tma_const(
// CHECK-NEXT: nvvm.prefetch tensormap, %cdesc : !llvm.ptr<4>
// GENERIC: "nvvm.prefetch"(%desc) <{tensormap}> : (!llvm.ptr) -> ()
// GENERIC: "nvvm.prefetch"(%desc, %p) <{tensormap}> : (!llvm.ptr, i1) -> ()
// GENERIC: "nvvm.mbarrier.arrive.expect_tx"(%bar, %bytes) <{relaxed = false, scope = #nvvm.mem_scope<cta>}> : (!llvm.ptr<3>, i32) -> ()
// GENERIC: "nvvm.cp.async.bulk.tensor.shared.cluster.global"(%dst, %desc, %x, %bar) <{isCTAOnly = false, mode = #nvvm.tma_load_mode<tile>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0>}> : (!llvm.ptr<7>, !llvm.ptr, i32, !llvm.ptr<3>) -> ()
// GENERIC: "nvvm.cp.async.bulk.tensor.shared.cluster.global"(%dst, %desc, %x, %y, %bar, %p) <{isCTAOnly = false, mode = #nvvm.tma_load_mode<tile>, operandSegmentSizes = array<i32: 1, 1, 2, 1, 0, 0, 0, 1>}> : (!llvm.ptr<7>, !llvm.ptr, i32, i32, !llvm.ptr<3>, i1) -> ()
// GENERIC: "nvvm.cp.async.bulk.tensor.global.shared.cta"(%desc, %cta, %x, %y) <{mode = #nvvm.tma_store_mode<tile>, operandSegmentSizes = array<i32: 1, 1, 2, 0, 0>}> : (!llvm.ptr, !llvm.ptr<3>, i32, i32) -> ()
// GENERIC: "nvvm.cp.async.bulk.tensor.global.shared.cta"(%desc, %cta, %x, %p) <{mode = #nvvm.tma_store_mode<tile>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>}> : (!llvm.ptr, !llvm.ptr<3>, i32, i1) -> ()
// GENERIC: "nvvm.cp.async.bulk.commit.group"() : () -> ()
// GENERIC: "nvvm.cp.async.bulk.wait_group"() <{group = 1 : i32, read}> : () -> ()
