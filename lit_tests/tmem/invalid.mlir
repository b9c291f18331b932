// RUN: xdsl-tmem-opt %s --verify-diagnostics --split-input-file | filecheck %s
// One chunk per op verifier; every message names the op, the value and what is allowed.

%base, %c2 = "test.op"() : () -> (i32, i32)
%two = arith.constant 2 : i32
%s = tmem.tmem_stage.create %base, %two : !tmem.tmem_stage<2, 256, 1>
// CHECK: invalid.mlir:6:1: error: tmem.tmem_stage.create: stage index 2 out of range [0, 2) for !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %s = tmem.tmem_stage.create %base, %two : !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: ^

// -----
%base = "test.op"() : () -> i32
%c = arith.constant 5 : i32
%s = tmem.tmem_stage.from_offset %base, %c : !tmem.tmem_stage<4, 128, 1>
// CHECK: error: tmem.tmem_stage.from_offset: stage index 5 out of range [0, 4) for !tmem.tmem_stage<4, 128, 1>

// -----
%a = "test.op"() : () -> !tmem.allocation<1, 256>
%c0 = arith.constant 0 : i32
%s = tmem.tmem_stage.from_alloc %a, %c0 : !tmem.allocation<1, 256> -> !tmem.tmem_stage<2, 256, 1>
// CHECK: error: tmem.tmem_stage.from_alloc: num_stages * stride = 2 * 256 = 512 exceeds the 256 columns of !tmem.allocation<1, 256>

// -----
%a = "test.op"() : () -> !tmem.allocation<2, 512>
%c0 = arith.constant 0 : i32
%s = tmem.tmem_stage.from_alloc %a, %c0 : !tmem.allocation<2, 512> -> !tmem.tmem_stage<2, 256, 1>
// CHECK: error: tmem.tmem_stage.from_alloc: cta_group 1 of the stages does not match !tmem.allocation<2, 512>

// -----
%s = "test.op"() : () -> !tmem.tmem_stage<4, 128, 1>
%t = tmem.tmem_stage.tensor %s : !tmem.tmem_stage<4, 128, 1> -> !tmem.tensor<128x256xf32, 1>
// CHECK: error: tmem.tmem_stage.tensor: the view's N = 256 columns exceed the stage stride 128 of !tmem.tmem_stage<4, 128, 1>; it would overlap the next stage

// -----
%s = "test.op"() : () -> !tmem.tmem_stage<2, 256, 1>
%t = tmem.tmem_stage.tensor %s : !tmem.tmem_stage<2, 256, 1> -> !tmem.tensor<128x256xf32, 2>
// CHECK: error: tmem.tmem_stage.tensor: !tmem.tensor<128x256xf32, 2> does not match the cta_group of !tmem.tmem_stage<2, 256, 1>

// -----
%s = "test.op"() : () -> !tmem.tmem_stage<1, 512, 1>
%v = tmem.tmem_stage.load_upper %s repeat 64 : !tmem.tmem_stage<1, 512, 1> -> vector<256xf32>
// CHECK: error: tmem.tmem_stage.load_upper: repeat must be a power of two with 4 * repeat <= 128 registers (16x256b, so 1..32), got 64

// -----
%s = "test.op"() : () -> !tmem.tmem_stage<2, 256, 1>
%v = tmem.tmem_stage.load_lower %s repeat 3 : !tmem.tmem_stage<2, 256, 1> -> vector<12xf32>
// CHECK: error: tmem.tmem_stage.load_lower: repeat must be a power of two with 4 * repeat <= 128 registers (16x256b, so 1..32), got 3

// -----
%s = "test.op"() : () -> !tmem.tmem_stage<2, 256, 1>
%v = tmem.tmem_stage.load_upper %s : !tmem.tmem_stage<2, 256, 1> -> vector<8xf32>
// CHECK: error: tmem.tmem_stage.load_upper: 16x256b with repeat 4 moves 4 * 4 = 16 registers per thread, but the vector has 8

// -----
%s = "test.op"() : () -> !tmem.tmem_stage<2, 256, 1>
%v = tmem.tmem_stage.load_upper %s : !tmem.tmem_stage<2, 256, 1> -> vector<16xf16>
// CHECK: error: tmem.tmem_stage.load_upper: registers must be a vector of f32 or i32, got vector<16xf16>

// -----
%s = "test.op"() : () -> !tmem.tmem_stage<2, 256, 1>
%c = arith.constant 240 : i32
%v = tmem.tmem_stage.load_upper %s[%c] : !tmem.tmem_stage<2, 256, 1> -> vector<16xf32>
// CHECK: invalid.mlir:[[# @LINE - 1]]:1: error: tmem.tmem_stage.load_upper: column 240 + width 32 (16x256b x4) = 272 leaves the stage: the columns [240, 272) must lie in [0, stride 256)

// -----
// A column that arith folds to a constant: the 8th 32-column sub-tile of a
// 224-column stage, loaded 64 columns wide (x8: 8 columns per repeat).
%s = "test.op"() : () -> !tmem.tmem_stage<2, 224, 1>
%c6 = arith.constant 6 : i32
%c32 = arith.constant 32 : i32
%col = arith.muli %c6, %c32 : i32
%v = tmem.tmem_stage.load_lower %s[%col] repeat 8 : !tmem.tmem_stage<2, 224, 1> -> vector<32xf32>
// CHECK: invalid.mlir:[[# @LINE - 1]]:1: error: tmem.tmem_stage.load_lower: column 192 + width 64 (16x256b x8) = 256 leaves the stage: the columns [192, 256) must lie in [0, stride 224)

// -----
// No column: the access starts at the stage's first column.
%s = "test.op"() : () -> !tmem.tmem_stage<4, 16, 1>
%v = tmem.tmem_stage.load_upper %s : !tmem.tmem_stage<4, 16, 1> -> vector<16xf32>
// CHECK: invalid.mlir:[[# @LINE - 1]]:1: error: tmem.tmem_stage.load_upper: column 0 + width 32 (16x256b x4) = 32 leaves the stage: the columns [0, 32) must lie in [0, stride 16)

// -----
%s, %v = "test.op"() : () -> (!tmem.tmem_stage<2, 256, 1>, vector<4xf32>)
%c = arith.constant -8 : i32
tmem.tmem_stage.store_upper %s[%c], %v repeat 1 : !tmem.tmem_stage<2, 256, 1>, vector<4xf32>
// CHECK: invalid.mlir:[[# @LINE - 1]]:1: error: tmem.tmem_stage.store_upper: column -8 + width 8 (16x256b x1) = 0 leaves the stage: the columns [-8, 0) must lie in [0, stride 256)

// -----
%s, %v = "test.op"() : () -> (!tmem.tmem_stage<2, 256, 1>, vector<4xi32>)
tmem.tmem_stage.store_lower %s, %v repeat 2 : !tmem.tmem_stage<2, 256, 1>, vector<4xi32>
// CHECK: error: tmem.tmem_stage.store_lower: 16x256b with repeat 2 moves 4 * 2 = 8 registers per thread, but the vector has 4

// -----
%bars = "test.op"() : () -> !llvm.ptr<3>
tmem.output_ring.init_barriers %bars producer_arv_count 0 consumer_arv_count 128 : !tmem.output_ring<2, 256, 1>
// CHECK: error: tmem.output_ring.init_barriers: producer_arv_count must be in [1, 1048575] (mbarrier count range), got 0

// -----
%bars = "test.op"() : () -> !llvm.ptr<3>
tmem.pipeline.init_barriers %bars producer_arv_count 1 consumer_arv_count 1048576 : !tmem.pipeline<4>
// CHECK: error: tmem.pipeline.init_barriers: consumer_arv_count must be in [1, 1048575] (mbarrier count range), got 1048576

// -----
%bar = "test.op"() : () -> !llvm.ptr<3>
tmem.dealloc_barrier.init %bar arrival_count 0 : !tmem.dealloc_barrier<2>
// CHECK: error: tmem.dealloc_barrier.init: arrival_count must be in [1, 1048575] (mbarrier count range), got 0

// -----
// Barrier counts against the warp contexts on the same barriers (Mojo
// compute_accum_barrier_counts): empty[i] = cta_group * epilogue threads.
%slot, %bars, %dbar = "test.op"() : () -> (!llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<3>)
tmem.output_ring.init_barriers %bars producer_arv_count 1 consumer_arv_count 127 : !tmem.output_ring<2, 256, 1>
%c = tmem.warp_context.epilogue_create %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>
// CHECK: invalid.mlir:[[# @LINE - 2]]:1: error: tmem.output_ring.init_barriers: consumer_arv_count is 127, but tmem.warp_context.epilogue_create builds !tmem.epilogue_warp_context<2, 256, 1, 32, 128> on these barriers: empty[i] gets one arrival per epilogue thread of each of the cta_group CTAs, cta_group * epilogue_threads = 1 * 128 = 128

// -----
// cta_group 2: both CTAs' epilogue threads arrive on the leader's empty[i]. The
// barriers are matched through `llvm.mlir.addressof` of one global, and a region op.
llvm.mlir.global internal @bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<4 x i64>
llvm.func @k(%slot: !llvm.ptr<3>, %dbar: !llvm.ptr<3>, %m: i16) {
  %b0 = llvm.mlir.addressof @bars : !llvm.ptr<3>
  tmem.output_ring.init_barriers %b0 producer_arv_count 1 consumer_arv_count 128 : !tmem.output_ring<2, 256, 2>
  %b1 = llvm.mlir.addressof @bars : !llvm.ptr<3>
  tmem.warp_context.mma %slot, %b1, %dbar mma_complete_mask %m : !tmem.mma_warp_context<2, 256, 2, 32, 128> {
  ^bb0(%ctx: !tmem.mma_warp_context<2, 256, 2, 32, 128>):
    tmem.yield
  }
  llvm.return
}
// CHECK: invalid.mlir:[[# @LINE - 8]]:3: error: tmem.output_ring.init_barriers: consumer_arv_count is 128, but tmem.warp_context.mma builds !tmem.mma_warp_context<2, 256, 2, 32, 128> on these barriers: empty[i] gets one arrival per epilogue thread of each of the cta_group CTAs, cta_group * epilogue_threads = 2 * 128 = 256

// -----
// full[i] gets the one commit of release_from_mma, with or without contexts.
%bars = "test.op"() : () -> !llvm.ptr<3>
tmem.output_ring.init_barriers %bars producer_arv_count 2 consumer_arv_count 128 : !tmem.output_ring<2, 256, 1>
// CHECK: invalid.mlir:[[# @LINE - 1]]:1: error: tmem.output_ring.init_barriers: producer_arv_count is 2, but full[i] gets exactly 1 arrival per stage (the one tcgen05.commit of release_from_mma); it must be 1

// -----
// The dealloc barrier: every epilogue thread of both CTAs signals it (cta_group 2).
%slot, %bars, %dbar = "test.op"() : () -> (!llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<3>)
%m = arith.constant 3 : i16
tmem.dealloc_barrier.init %dbar arrival_count 128 : !tmem.dealloc_barrier<2>
%c = tmem.warp_context.mma_create %slot, %bars, %dbar mma_complete_mask %m : !tmem.mma_warp_context<2, 256, 2, 32, 128>
// CHECK: invalid.mlir:[[# @LINE - 2]]:1: error: tmem.dealloc_barrier.init: arrival_count is 128, but tmem.warp_context.mma_create builds !tmem.mma_warp_context<2, 256, 2, 32, 128> on these barriers: the barrier gets one arrival per epilogue thread of each of the cta_group CTAs, cta_group * epilogue_threads = 2 * 128 = 256

// -----
%bars, %a = "test.op"() : () -> (!llvm.ptr<3>, !tmem.allocation<1, 512>)
%m = arith.constant 1 : i16
%r = tmem.output_ring.create %bars, %a mma_complete_mask %m : !tmem.allocation<1, 512> -> !tmem.output_ring<2, 256, 1>
// CHECK: error: tmem.output_ring.create: mma_complete_mask is only used by cta_group 2 (multicast commit); cta_group 1 commits to its own CTA, remove the mask

// -----
%bars, %a = "test.op"() : () -> (!llvm.ptr<3>, !tmem.allocation<2, 512>)
%r = tmem.output_ring.create %bars, %a : !tmem.allocation<2, 512> -> !tmem.output_ring<2, 256, 2>
// CHECK: error: tmem.output_ring.create: cta_group 2 needs an mma_complete_mask (i16 mask of the CTA pair, e.g. 0b11)

// -----
%bars, %a = "test.op"() : () -> (!llvm.ptr<3>, !tmem.allocation<2, 512>)
%m = arith.constant 0 : i16
%r = tmem.output_ring.create %bars, %a mma_complete_mask %m : !tmem.allocation<2, 512> -> !tmem.output_ring<2, 256, 2>
// CHECK: error: tmem.output_ring.create: mma_complete_mask must be non-zero, got 0

// -----
%bars, %a = "test.op"() : () -> (!llvm.ptr<3>, !tmem.allocation<1, 128>)
%r = tmem.output_ring.create %bars, %a : !tmem.allocation<1, 128> -> !tmem.output_ring<2, 128, 1>
// CHECK: error: tmem.output_ring.create: num_stages * stride = 2 * 128 = 256 exceeds the 128 columns of !tmem.allocation<1, 128>

// -----
%r = "test.op"() : () -> !tmem.output_ring<2, 256, 1>
%s = tmem.output_ring.acquire_for_mma %r : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<1, 256, 1>
// CHECK: error: tmem.output_ring.acquire_for_mma: the stage type must be !tmem.tmem_stage<2, 256, 1>, got !tmem.tmem_stage<1, 256, 1>

// -----
%r, %s = "test.op"() : () -> (!tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 128, 1>)
%r2 = tmem.output_ring.release_from_mma %r, %s : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 128, 1>
// CHECK: error: tmem.output_ring.release_from_mma: the stage type must be !tmem.tmem_stage<2, 256, 1>, got !tmem.tmem_stage<2, 128, 1>

// -----
%r, %s = "test.op"() : () -> (!tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<4, 128, 1>)
tmem.output_ring.arrive_empty %r, %s : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<4, 128, 1>
// CHECK: error: tmem.output_ring.arrive_empty: the stage type must be !tmem.tmem_stage<2, 256, 1>, got !tmem.tmem_stage<4, 128, 1>

// -----
%r = "test.op"() : () -> !tmem.output_ring<2, 256, 1>
%r2 = tmem.output_ring.producer %r : !tmem.output_ring<2, 256, 1> {
^bb0(%s: !tmem.tmem_stage<1, 512, 1>):
  tmem.yield
}
// CHECK: error: tmem.output_ring.producer: the body must take (!tmem.tmem_stage<2, 256, 1>) as block arguments, got (!tmem.tmem_stage<1, 512, 1>)

// -----
%r = "test.op"() : () -> !tmem.output_ring<2, 256, 1>
%r2 = tmem.output_ring.consumer %r : !tmem.output_ring<2, 256, 1> {
^bb0(%s: !tmem.tmem_stage<2, 256, 1>, %x: i32):
  tmem.yield
}
// CHECK: error: tmem.output_ring.consumer: the body must take (!tmem.tmem_stage<2, 256, 1>) as block arguments, got (!tmem.tmem_stage<2, 256, 1>, i32)

// -----
%r = "test.op"() : () -> !tmem.output_ring<2, 256, 1>
%r2, %v = tmem.output_ring.per_k_consumer %r : !tmem.output_ring<2, 256, 1> -> i32 {
^bb0(%s: !tmem.tmem_stage<2, 256, 1>):
  %f = arith.constant 1.0 : f32
  tmem.yield %f : f32
}
// CHECK: error: tmem.output_ring.per_k_consumer: tmem.yield passes (f32) but the op declares (i32)

// -----
%m, %r = "test.op"() : () -> (!tmem.mma_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<1, 256, 1>)
%r2 = tmem.warp_context.mma_per_k_stage %m, %r : !tmem.mma_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<1, 256, 1> {
^bb0(%s: !tmem.tmem_stage<1, 256, 1>):
  tmem.yield
}
// CHECK: error: tmem.warp_context.mma_per_k_stage: the ring must be !tmem.output_ring<2, 256, 1>, got !tmem.output_ring<1, 256, 1>

// -----
%e, %r, %p = "test.op"() : () -> (!tmem.epilogue_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<2, 256, 1>, !tmem.pipeline<4>)
%r2, %p2 = tmem.warp_context.epilogue_per_k_stage %e, %r, %p : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<2, 256, 1>, !tmem.pipeline<4> {
^bb0(%s: !tmem.tmem_stage<2, 256, 1>):
  tmem.yield
}
// CHECK: error: tmem.warp_context.epilogue_per_k_stage: the body must take (!tmem.tmem_stage<2, 256, 1>, i32) as block arguments, got (!tmem.tmem_stage<2, 256, 1>)

// -----
%slot, %bars, %dbar = "test.op"() : () -> (!llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<3>)
tmem.warp_context.mma %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128> {
^bb0(%ctx: !tmem.epilogue_warp_context<2, 256, 1, 32, 128>):
  tmem.yield
}
// CHECK: error: tmem.warp_context.mma: the body must take (!tmem.mma_warp_context<2, 256, 1, 32, 128>) as block arguments, got (!tmem.epilogue_warp_context<2, 256, 1, 32, 128>)

// -----
%m = "test.op"() : () -> !tmem.mma_warp_context<2, 256, 1, 32, 128>
%r = tmem.warp_context.output_ring %m : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.output_ring<2, 128, 1>
// CHECK: error: tmem.warp_context.output_ring: the result type must be !tmem.output_ring<2, 256, 1>, got !tmem.output_ring<2, 128, 1>

// -----
%m = "test.op"() : () -> !tmem.epilogue_warp_context<1, 256, 2, 32, 128, 256>
%a = tmem.warp_context.tmem %m : !tmem.epilogue_warp_context<1, 256, 2, 32, 128, 256> -> !tmem.allocation<2, 512>
// CHECK: error: tmem.warp_context.tmem: the result type must be !tmem.allocation<2, 256>, got !tmem.allocation<2, 512>

// -----
%db, %a = "test.op"() : () -> (!tmem.dealloc_barrier<2>, !tmem.allocation<1, 512>)
tmem.dealloc_barrier.complete_dealloc %db, %a : !tmem.dealloc_barrier<2>, !tmem.allocation<1, 512>
// CHECK: error: tmem.dealloc_barrier.complete_dealloc: !tmem.dealloc_barrier<2> and !tmem.allocation<1, 512> differ in cta_group

// -----
%p = "test.op"() : () -> !tmem.pipeline<4>
%c = arith.constant 4 : i32
%b = tmem.pipeline.consumer_mbar %p, %c : !tmem.pipeline<4>
// CHECK: error: tmem.pipeline.consumer_mbar: stage index 4 out of range [0, 4)

// -----
%slot, %bars, %dbar = "test.op"() : () -> (!llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<3>)
%m = arith.constant 3 : i16
%ctx = tmem.warp_context.mma_create %slot, %bars, %dbar mma_complete_mask %m : !tmem.mma_warp_context<2, 256, 1, 32, 128>
// CHECK: error: tmem.warp_context.mma_create: mma_complete_mask is only used by cta_group 2 (multicast commit); cta_group 1 commits to its own CTA, remove the mask

// -----
%slot, %bars, %dbar = "test.op"() : () -> (!llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<3>)
%ctx = tmem.warp_context.epilogue_create %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 2, 32, 128>
// CHECK: error: tmem.warp_context.epilogue_create: cta_group 2 needs an mma_complete_mask (i16 mask of the CTA pair, e.g. 0b11)

// -----
// Named barrier 1 needs 32 + 128 threads; a 128-thread kernel would deadlock.
llvm.func @k(%slot: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %dbar: !llvm.ptr<3>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
  %ctx = tmem.warp_context.mma_create %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128>
  llvm.return
}
// CHECK: error: tmem.warp_context.mma_create: named barrier 1 needs mma_threads + epilogue_threads = 160 threads, but kernel @k has at most 128 (nvvm.maxntid/reqntid); it would deadlock

// -----
// ptxas rejects a function that uses both cta_group::1 and cta_group::2.
llvm.func @mixed(%slot: !llvm.ptr<3>) attributes {nvvm.kernel} {
  %a = tmem.alloc %slot : !tmem.allocation<1, 256>
  %b = tmem.alloc %slot : !tmem.allocation<2, 256>
  llvm.return
}
// CHECK: invalid.mlir:[[# @LINE - 3]]:3: error: tmem.alloc: function @mixed mixes cta_group 1 (first used by tmem.alloc) and cta_group 2; ptxas rejects a function that uses both

// -----
tmem.yield
// CHECK: error: 'tmem.yield' expects parent op to be one of 'tmem.output_ring.producer', 'tmem.output_ring.consumer'
