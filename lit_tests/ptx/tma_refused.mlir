// RUN: xdsl-tmem-opt %s -t ptx --split-input-file --verify-diagnostics | filecheck %s

// The nvvm TMA forms our PTX backend refuses (no typed ptx op models their instruction
// or that option yet): a located error at the op, never a skipped op. Their text is mlir-opt-22's
// (tests/test_nvvm_tma.py compares both forms).

llvm.func @im2col(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y, %z] im2col[%off] {mode = #nvvm.tma_load_mode<im2col>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// CHECK: tma_refused.mlir:[[# @LINE - 3]]:3: error: ptx backend: nvvm.cp.async.bulk.tensor.shared.cluster.global with mode im2col has no PTX lowering here (supported: mode tile)
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global

// -----

llvm.func @im2col_w(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y, %z, %x] im2col[%off, %off] {mode = #nvvm.tma_load_mode<im2col_w>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// CHECK: tma_refused.mlir:[[# @LINE - 3]]:3: error: ptx backend: {{.*}} with mode im2col_w has no PTX lowering here
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global

// -----

llvm.func @im2col_w_128(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y, %z] im2col[%off, %off] {mode = #nvvm.tma_load_mode<im2col_w_128>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// CHECK: tma_refused.mlir:[[# @LINE - 3]]:3: error: ptx backend: {{.*}} with mode im2col_w_128 has no PTX lowering here
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global

// -----

llvm.func @gather4(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y, %z, %x, %y] {mode = #nvvm.tma_load_mode<tile_gather4>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// CHECK: tma_refused.mlir:[[# @LINE - 3]]:3: error: ptx backend: {{.*}} with mode tile_gather4 has no PTX lowering here
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.shared.cluster.global

// -----

llvm.func @store_im2col(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x, %y, %z] {mode = #nvvm.tma_store_mode<im2col>} : !llvm.ptr, <3>
  llvm.return
}
// CHECK: tma_refused.mlir:[[# @LINE - 3]]:3: error: ptx backend: nvvm.cp.async.bulk.tensor.global.shared.cta with mode im2col has no PTX lowering here
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta

// -----

llvm.func @scatter4(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x, %y, %z, %x, %y] {mode = #nvvm.tma_store_mode<tile_scatter4>} : !llvm.ptr, <3>
  llvm.return
}
// CHECK: tma_refused.mlir:[[# @LINE - 3]]:3: error: ptx backend: {{.*}} with mode tile_scatter4 has no PTX lowering here
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta

// -----

llvm.func @reduce_im2col(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.reduce %desc, %cta, box[%x, %y, %z] l2_cache_hint = %hint {mode = #nvvm.tma_store_mode<im2col>, redKind = #nvvm.tma_redux_kind<max>} : !llvm.ptr, <3>
  llvm.return
}
// CHECK: tma_refused.mlir:[[# @LINE - 3]]:3: error: ptx backend: nvvm.cp.async.bulk.tensor.reduce with mode im2col has no PTX lowering here (supported: mode tile)
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.reduce

// -----

llvm.func @bulk_load(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.shared.cluster.global %dst, %g, %bar, %n multicast_mask = %mask l2_cache_hint = %hint : !llvm.ptr<7>, <1>
  llvm.return
}
// CHECK: tma_refused.mlir:[[# @LINE - 3]]:3: error: ptx backend: nvvm.cp.async.bulk.shared.cluster.global with multicast_mask and l2_cache_hint has no PTX lowering here (supported: without multicast_mask, l2_cache_hint)
// CHECK-NEXT: nvvm.cp.async.bulk.shared.cluster.global

// -----

llvm.func @bulk_store(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.global.shared.cta %g, %cta, %n l2_cache_hint = %hint byte_mask = %mask : <1>, <3>
  llvm.return
}
// CHECK: tma_refused.mlir:[[# @LINE - 3]]:3: error: ptx backend: nvvm.cp.async.bulk.global.shared.cta with l2_cache_hint and byte_mask has no PTX lowering here (supported: without l2_cache_hint, byte_mask)
// CHECK-NEXT: nvvm.cp.async.bulk.global.shared.cta

// -----

llvm.func @acquire(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  nvvm.fence.proxy.acquire <gpu> %desc, %n
  llvm.return
}
// CHECK: tma_refused.mlir:[[# @LINE - 3]]:3: error: ptx backend: nvvm.fence.proxy.acquire has no PTX lowering yet
// CHECK-NEXT: nvvm.fence.proxy.acquire

// -----

llvm.func @release(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %z: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  nvvm.fence.proxy.release <sys>
  llvm.return
}
// CHECK: tma_refused.mlir:[[# @LINE - 3]]:3: error: ptx backend: nvvm.fence.proxy.release has no PTX lowering yet
// CHECK-NEXT: nvvm.fence.proxy.release
