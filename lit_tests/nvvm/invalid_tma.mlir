// Verifier errors of the TMA and bulk-copy ops: mlir-opt-22's checks (reworded to
// name the op, the value and what is allowed). `// mlir-opt-22: "..."` lines are
// checked by tests/test_nvvm_upstream.py.
// RUN: xdsl-tmem-opt %s --verify-diagnostics --split-input-file | filecheck %s

llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[] : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "expects coordinates between 1 to 5 dimension"
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: expects 1 to 5 coordinates (tensor dimensions), got 0

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %x, %x, %x, %x, %x] : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "expects coordinates between 1 to 5 dimension"
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: expects 1 to 5 coordinates (tensor dimensions), got 6

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %x] im2col[%off] {mode = #nvvm.tma_load_mode<im2col>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "to use im2col mode, the tensor has to be at least 3-dimensional"
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: mode im2col needs a tensor of at least 3 dimensions, got 2 coordinates

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %x, %x, %x] im2col[%off] {mode = #nvvm.tma_load_mode<im2col>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "im2col offsets expected 2 (provided 1)"
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: mode im2col with 4 coordinates takes 2 im2col offsets, got 1

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %x, %x] im2col[%off] : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "im2col offsets expected 0 (provided 1)"
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: mode tile with 3 coordinates takes 0 im2col offsets, got 1

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %x, %x] im2col[%off] {mode = #nvvm.tma_load_mode<im2col_w_128>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "im2col offsets expected 2 (provided 1)"
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: mode im2col_w_128 with 3 coordinates takes 2 im2col offsets, got 1

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %x, %x, %x] {mode = #nvvm.tma_load_mode<tile_gather4>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "Gather4 mode expects 5 coordinates"
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: mode tile_gather4 needs 5 coordinates, got 4

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %cta, %desc, %bar, box[%x] : !llvm.ptr<3>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "Shared::cluster destination requires address-space 7."
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: dstMem must be !llvm.ptr<7> (shared::cluster), got !llvm.ptr<3>

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x] {isCTAOnly = true} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "Shared::cta destination requires address-space 3."
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: dstMem must be !llvm.ptr<3> (shared::cta), got !llvm.ptr<7>

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %cta, %desc, %bar, box[%x] multicast_mask = %mask {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "Multicast is not supported with shared::cta mode."
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: multicast_mask needs the shared::cluster destination (isCTAOnly = false)

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %cta, %desc, %bar, box[%x] {group = #nvvm.cta_group<cta_2>, isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "CTAGroup is not supported with shared::cta mode."
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: group (cta_group) needs the shared::cluster destination (isCTAOnly = false)

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %cta, %desc, %bar, box[%x] predicate = %p {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "Predicate is supported only for shared::cluster mode."
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: a predicate needs the shared::cluster destination (isCTAOnly = false)

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %x, %x] im2col[%off, %off] predicate = %p {mode = #nvvm.tma_load_mode<im2col_w>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "Predicate is supported only for Tile and Im2col modes."
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: a predicate needs mode tile or im2col, got im2col_w

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %g, %bar, box[%x] : !llvm.ptr<7>, !llvm.ptr<1>
  llvm.return
}
// mlir-opt-22: "operand #1 must be LLVM pointer in address space 0"
// CHECK: error: nvvm.cp.async.bulk.tensor.shared.cluster.global: tmaDescriptor must be !llvm.ptr (generic), got !llvm.ptr<1>

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %dst, box[%x] : !llvm.ptr, !llvm.ptr<7>
  llvm.return
}
// mlir-opt-22: "operand #1 must be LLVM pointer in address space 3"
// CHECK: error: nvvm.cp.async.bulk.tensor.global.shared.cta: srcMem must be !llvm.ptr<3> (shared::cta), got !llvm.ptr<7>

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[] : !llvm.ptr, <3>
  llvm.return
}
// mlir-opt-22: "expects coordinates between 1 to 5 dimension"
// CHECK: error: nvvm.cp.async.bulk.tensor.global.shared.cta: expects 1 to 5 coordinates (tensor dimensions), got 0

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x] l2_cache_hint = %hint, predicate = %p : !llvm.ptr, <3>
  llvm.return
}
// mlir-opt-22: "Inline-ptx lowering unsupported with L2 cache-hint."
// CHECK: error: nvvm.cp.async.bulk.tensor.global.shared.cta: a predicate cannot be combined with l2_cache_hint

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x, %x, %x], predicate = %p {mode = #nvvm.tma_store_mode<im2col>} : !llvm.ptr, <3>
  llvm.return
}
// mlir-opt-22: "Inline-ptx lowering supported only for Tile mode."
// CHECK: error: nvvm.cp.async.bulk.tensor.global.shared.cta: a predicate needs mode tile, got im2col

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x, %x] {mode = #nvvm.tma_store_mode<im2col>} : !llvm.ptr, <3>
  llvm.return
}
// mlir-opt-22: "to use im2col mode, the tensor has to be at least 3-dimensional"
// CHECK: error: nvvm.cp.async.bulk.tensor.global.shared.cta: mode im2col needs a tensor of at least 3 dimensions, got 2 coordinates

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %cta, box[%x, %x, %x, %x] {mode = #nvvm.tma_store_mode<tile_scatter4>} : !llvm.ptr, <3>
  llvm.return
}
// mlir-opt-22: "Scatter4 mode expects 5 coordinates"
// CHECK: error: nvvm.cp.async.bulk.tensor.global.shared.cta: mode tile_scatter4 needs 5 coordinates, got 4

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.reduce %desc, %cta, box[%x, %x, %x, %x, %x] {mode = #nvvm.tma_store_mode<tile_scatter4>, redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, <3>
  llvm.return
}
// mlir-opt-22: "Scatter mode unsupported for CpAsyncBulkTensorReduceOp"
// CHECK: error: nvvm.cp.async.bulk.tensor.reduce: mode tile_scatter4 is not supported by the reduction (allowed: tile, im2col)

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.tensor.reduce %desc, %cta, box[] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, <3>
  llvm.return
}
// mlir-opt-22: "expects coordinates between 1 to 5 dimension"
// CHECK: error: nvvm.cp.async.bulk.tensor.reduce: expects 1 to 5 coordinates (tensor dimensions), got 0

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.shared.cluster.global %cta, %g, %bar, %n multicast_mask = %mask : !llvm.ptr<3>, <1>
  llvm.return
}
// mlir-opt-22: "Multicast is not supported with shared::cta mode."
// CHECK: error: nvvm.cp.async.bulk.shared.cluster.global: multicast_mask needs a shared::cluster destination (!llvm.ptr<7>), got !llvm.ptr<3>

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.shared.cluster.global %dst, %desc, %bar, %n : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}
// mlir-opt-22: "operand #1 must be LLVM pointer in address space 1"
// CHECK: error: nvvm.cp.async.bulk.shared.cluster.global: srcMem must be !llvm.ptr<1> (global), got !llvm.ptr

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.global.shared.cta %cta, %cta, %n : !llvm.ptr<3>, <3>
  llvm.return
}
// mlir-opt-22: "operand #0 must be LLVM pointer in address space 1"
// CHECK: error: nvvm.cp.async.bulk.global.shared.cta: dstMem must be !llvm.ptr<1> (global), got !llvm.ptr<3>

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.cp.async.bulk.wait_group -1
  llvm.return
}
// mlir-opt-22: "attribute 'group' failed to satisfy constraint: 32-bit signless integer attribute whose minimum value is 0"
// CHECK: error: nvvm.cp.async.bulk.wait_group: group must be a non-negative i32, got -1

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.prefetch tensormap, %g : !llvm.ptr<1>
  llvm.return
}
// mlir-opt-22: "prefetch tensormap requires a generic or constant pointer"
// CHECK: error: nvvm.prefetch: addr must be !llvm.ptr (generic) or !llvm.ptr<4> (constant), got !llvm.ptr<1>

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.prefetch tensormap in_param_space, %c4 : !llvm.ptr<4>
  llvm.return
}
// mlir-opt-22: "in_param_space can only be specified for a generic pointer"
// CHECK: error: nvvm.prefetch: in_param_space needs a generic pointer (!llvm.ptr), got !llvm.ptr<4>

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.fence.proxy.acquire <gpu> %desc, %n {toProxy = #nvvm.proxy_kind<async>}
  llvm.return
}
// mlir-opt-22: "uni-directional proxies only support tensormap for to_proxy attribute"
// CHECK: error: nvvm.fence.proxy.acquire: toProxy must be tensormap, got async

// -----
llvm.func @f(%dst: !llvm.ptr<7>, %cta: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %mask: i16, %hint: i64, %off: i16, %g: !llvm.ptr<1>, %n: i32, %p: i1, %c4: !llvm.ptr<4>) {
  nvvm.fence.proxy.release <gpu> {fromProxy = #nvvm.proxy_kind<async>}
  llvm.return
}
// mlir-opt-22: "uni-directional proxies only support generic for from_proxy attribute"
// CHECK: error: nvvm.fence.proxy.release: fromProxy must be generic, got async

// -----
// Upstream accepts the cache-level form; this dialect has only the tensormap one.
llvm.func @f(%p: !llvm.ptr<1>) {
  nvvm.prefetch level = L2, %p : !llvm.ptr<1>
  llvm.return
}
// CHECK: invalid_tma.mlir:[[# @LINE - 3]]:17: error: nvvm.prefetch: only the tensormap form (`nvvm.prefetch tensormap, %p : !llvm.ptr`) is supported; upstream's cache-level forms are not in this dialect
