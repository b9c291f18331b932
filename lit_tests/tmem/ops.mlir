// RUN: XDSL_TMEM_ROUNDTRIP
// RUN: XDSL_TMEM_GENERIC
// RUN: xdsl-tmem-opt %s --split-input-file | xdsl-tmem-opt --split-input-file | filecheck %s

// Every tmem op in its custom form; the generic form must re-parse to the same text.

// ---- allocation (TmemAllocation)
%slot, %bars, %dbar = "test.op"() : () -> (!llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<3>)
%c0 = arith.constant 0 : i32
%c1 = arith.constant 1 : i32
%a = tmem.alloc %slot : !tmem.allocation<1, 512>
%b = tmem.from_shared %slot : !tmem.allocation<1, 256>
%base = tmem.base_address %a : !tmem.allocation<1, 512>
tmem.relinquish %a : !tmem.allocation<1, 512>
tmem.dealloc %a : !tmem.allocation<1, 512>
// CHECK:      %a = tmem.alloc %slot : !tmem.allocation<1, 512>
// CHECK-NEXT: %b = tmem.from_shared %slot : !tmem.allocation<1, 256>
// CHECK-NEXT: %base = tmem.base_address %a : !tmem.allocation<1, 512>
// CHECK-NEXT: tmem.relinquish %a : !tmem.allocation<1, 512>
// CHECK-NEXT: tmem.dealloc %a : !tmem.allocation<1, 512>
// GENERIC: %a = "tmem.alloc"(%slot) : (!llvm.ptr<3>) -> !tmem.allocation<1, 512>

// ---- tmem_stage (TmemStage, TmemTensor)
%s0 = tmem.tmem_stage.create %base, %c1 : !tmem.tmem_stage<2, 256, 1>
%s1 = tmem.tmem_stage.from_alloc %a, %c0 : !tmem.allocation<1, 512> -> !tmem.tmem_stage<2, 256, 1>
%s2 = tmem.tmem_stage.from_offset %base, %c1 : !tmem.tmem_stage<2, 256, 1>
%off = tmem.tmem_stage.offset %s1 : !tmem.tmem_stage<2, 256, 1>
%idx = tmem.tmem_stage.index %s1 : !tmem.tmem_stage<2, 256, 1>
%addr = tmem.tmem_stage.address %s1 : !tmem.tmem_stage<2, 256, 1>
%t = tmem.tmem_stage.tensor %s1 : !tmem.tmem_stage<2, 256, 1> -> !tmem.tensor<128x256xf32, 1>
%toff = tmem.tensor.offset %t : !tmem.tensor<128x256xf32, 1>
%taddr = tmem.tensor.address %t : !tmem.tensor<128x256xf32, 1>
%u = tmem.tmem_stage.load_upper %s1 : !tmem.tmem_stage<2, 256, 1> -> vector<16xf32>
%l = tmem.tmem_stage.load_lower %s1[%c1] repeat 8 : !tmem.tmem_stage<2, 256, 1> -> vector<32xi32>
tmem.wait_load
tmem.tmem_stage.store_upper %s1, %u : !tmem.tmem_stage<2, 256, 1>, vector<16xf32>
tmem.tmem_stage.store_lower %s1[%off], %l repeat 8 : !tmem.tmem_stage<2, 256, 1>, vector<32xi32>
tmem.wait_store
// CHECK:      %s0 = tmem.tmem_stage.create %base, %c1 : !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %s1 = tmem.tmem_stage.from_alloc %a, %c0 : !tmem.allocation<1, 512> -> !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %s2 = tmem.tmem_stage.from_offset %base, %c1 : !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %off = tmem.tmem_stage.offset %s1 : !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %idx = tmem.tmem_stage.index %s1 : !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %addr = tmem.tmem_stage.address %s1 : !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %t = tmem.tmem_stage.tensor %s1 : !tmem.tmem_stage<2, 256, 1> -> !tmem.tensor<128x256xf32, 1>
// CHECK-NEXT: %toff = tmem.tensor.offset %t : !tmem.tensor<128x256xf32, 1>
// CHECK-NEXT: %taddr = tmem.tensor.address %t : !tmem.tensor<128x256xf32, 1>
// CHECK-NEXT: %u = tmem.tmem_stage.load_upper %s1 : !tmem.tmem_stage<2, 256, 1> -> vector<16xf32>
// CHECK-NEXT: %l = tmem.tmem_stage.load_lower %s1[%c1] repeat 8 : !tmem.tmem_stage<2, 256, 1> -> vector<32xi32>
// CHECK-NEXT: tmem.wait_load
// CHECK-NEXT: tmem.tmem_stage.store_upper %s1, %u : !tmem.tmem_stage<2, 256, 1>, vector<16xf32>
// CHECK-NEXT: tmem.tmem_stage.store_lower %s1[%off], %l repeat 8 : !tmem.tmem_stage<2, 256, 1>, vector<32xi32>
// CHECK-NEXT: tmem.wait_store
// GENERIC: %addr = "tmem.tmem_stage.address"(%s1) : (!tmem.tmem_stage<2, 256, 1>) -> !llvm.ptr<6>
// GENERIC: %l = "tmem.tmem_stage.load_lower"(%s1, %c1) <{repeat = 8 : i32}> : (!tmem.tmem_stage<2, 256, 1>, i32) -> vector<32xi32>

// ---- pipeline (ProducerConsumerPipeline)
tmem.pipeline.init_barriers %bars producer_arv_count 1 consumer_arv_count 4 : !tmem.pipeline<4>
%p = tmem.pipeline.create %bars : !tmem.pipeline<4>
tmem.pipeline.wait_producer %p : !tmem.pipeline<4>
tmem.pipeline.wait_consumer %p : !tmem.pipeline<4>
%ps = tmem.pipeline.producer_stage %p : !tmem.pipeline<4>
%cs = tmem.pipeline.consumer_stage %p : !tmem.pipeline<4>
%p1 = tmem.pipeline.producer_step %p : !tmem.pipeline<4>
%p2 = tmem.pipeline.consumer_step %p1 : !tmem.pipeline<4>
%full = tmem.pipeline.producer_mbar %p2, %ps : !tmem.pipeline<4>
%empty = tmem.pipeline.consumer_mbar %p2, %cs : !tmem.pipeline<4>
// CHECK:      tmem.pipeline.init_barriers %bars producer_arv_count 1 consumer_arv_count 4 : !tmem.pipeline<4>
// CHECK-NEXT: %p = tmem.pipeline.create %bars : !tmem.pipeline<4>
// CHECK-NEXT: tmem.pipeline.wait_producer %p : !tmem.pipeline<4>
// CHECK-NEXT: tmem.pipeline.wait_consumer %p : !tmem.pipeline<4>
// CHECK-NEXT: %ps = tmem.pipeline.producer_stage %p : !tmem.pipeline<4>
// CHECK-NEXT: %cs = tmem.pipeline.consumer_stage %p : !tmem.pipeline<4>
// CHECK-NEXT: %p1 = tmem.pipeline.producer_step %p : !tmem.pipeline<4>
// CHECK-NEXT: %p2 = tmem.pipeline.consumer_step %p1 : !tmem.pipeline<4>
// CHECK-NEXT: %full = tmem.pipeline.producer_mbar %p2, %ps : !tmem.pipeline<4>
// CHECK-NEXT: %empty = tmem.pipeline.consumer_mbar %p2, %cs : !tmem.pipeline<4>
// GENERIC: "tmem.pipeline.init_barriers"(%bars) <{producer_arv_count = 1 : i32, consumer_arv_count = 4 : i32, ring_type = !tmem.pipeline<4>}> : (!llvm.ptr<3>) -> ()

// ---- output_ring (OutputTilePipeline)
tmem.output_ring.init_barriers %bars producer_arv_count 1 consumer_arv_count 128 : !tmem.output_ring<2, 256, 1>
%r = tmem.output_ring.create %bars, %a : !tmem.allocation<1, 512> -> !tmem.output_ring<2, 256, 1>
%ms = tmem.output_ring.acquire_for_mma %r : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>
%r1 = tmem.output_ring.release_from_mma %r, %ms : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
%es = tmem.output_ring.acquire_for_epilogue %r : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>
tmem.output_ring.arrive_empty %r, %es : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
%r2 = tmem.output_ring.release_from_epilogue %r : !tmem.output_ring<2, 256, 1>
%r3 = tmem.output_ring.producer %r : !tmem.output_ring<2, 256, 1> {
^bb0(%st: !tmem.tmem_stage<2, 256, 1>):
  tmem.yield
}
%r4, %v = tmem.output_ring.consumer %r : !tmem.output_ring<2, 256, 1> -> vector<16xf32> {
^bb0(%st: !tmem.tmem_stage<2, 256, 1>):
  %x = tmem.tmem_stage.load_upper %st : !tmem.tmem_stage<2, 256, 1> -> vector<16xf32>
  tmem.wait_load
  tmem.output_ring.arrive_empty %r, %st : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
  tmem.yield %x : vector<16xf32>
}
%r5 = tmem.output_ring.per_k_producer %r : !tmem.output_ring<2, 256, 1> {
^bb0(%st: !tmem.tmem_stage<2, 256, 1>):
  tmem.yield
}
%r6, %i, %j = tmem.output_ring.per_k_consumer %r : !tmem.output_ring<2, 256, 1> -> i32, i32 {
^bb0(%st: !tmem.tmem_stage<2, 256, 1>):
  tmem.yield %c0, %c1 : i32, i32
}
// CHECK:      tmem.output_ring.init_barriers %bars producer_arv_count 1 consumer_arv_count 128 : !tmem.output_ring<2, 256, 1>
// CHECK-NEXT: %r = tmem.output_ring.create %bars, %a : !tmem.allocation<1, 512> -> !tmem.output_ring<2, 256, 1>
// CHECK-NEXT: %ms = tmem.output_ring.acquire_for_mma %r : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %r1 = tmem.output_ring.release_from_mma %r, %ms : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %es = tmem.output_ring.acquire_for_epilogue %r : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: tmem.output_ring.arrive_empty %r, %es : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %r2 = tmem.output_ring.release_from_epilogue %r : !tmem.output_ring<2, 256, 1>
// CHECK-NEXT: %r3 = tmem.output_ring.producer %r : !tmem.output_ring<2, 256, 1> {
// CHECK-NEXT: ^{{.*}}(%st: !tmem.tmem_stage<2, 256, 1>):
// CHECK-NEXT:   tmem.yield
// CHECK-NEXT: }
// CHECK-NEXT: %r4, %v = tmem.output_ring.consumer %r : !tmem.output_ring<2, 256, 1> -> vector<16xf32> {
// CHECK:        tmem.yield %x : vector<16xf32>
// CHECK:      %r5 = tmem.output_ring.per_k_producer %r : !tmem.output_ring<2, 256, 1> {
// CHECK:      %r6, %i, %j = tmem.output_ring.per_k_consumer %r : !tmem.output_ring<2, 256, 1> -> i32, i32 {
// CHECK:        tmem.yield %c0, %c1 : i32, i32

// -----

// ---- cta_group 2 ring: the commit multicasts with mma_complete_mask
%bars, %a2 = "test.op"() : () -> (!llvm.ptr<3>, !tmem.allocation<2, 512>)
%mask = arith.constant 3 : i16
%r = tmem.output_ring.create %bars, %a2 mma_complete_mask %mask : !tmem.allocation<2, 512> -> !tmem.output_ring<1, 512, 2>
// CHECK: %r = tmem.output_ring.create %bars, %a2 mma_complete_mask %mask : !tmem.allocation<2, 512> -> !tmem.output_ring<1, 512, 2>
// GENERIC: %r = "tmem.output_ring.create"(%bars, %a2, %mask) : (!llvm.ptr<3>, !tmem.allocation<2, 512>, i16) -> !tmem.output_ring<1, 512, 2>

// -----

// ---- warp_context (TmemDeallocBarrier, MmaWarpContext, EpilogueWarpContext)
%slot, %bars, %dbar, %alloc = "test.op"() : () -> (!llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<3>, !tmem.allocation<1, 512>)
tmem.dealloc_barrier.init %dbar arrival_count 128 : !tmem.dealloc_barrier<1>
%db = tmem.dealloc_barrier.create %dbar : !tmem.dealloc_barrier<1>
tmem.dealloc_barrier.signal_peer %db : !tmem.dealloc_barrier<1>
tmem.dealloc_barrier.signal_self %db : !tmem.dealloc_barrier<1>
tmem.dealloc_barrier.signal_complete %db : !tmem.dealloc_barrier<1>
tmem.dealloc_barrier.wait %db : !tmem.dealloc_barrier<1>
tmem.dealloc_barrier.complete_dealloc %db, %alloc : !tmem.dealloc_barrier<1>, !tmem.allocation<1, 512>
%m = tmem.warp_context.mma_create %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128>
tmem.warp_context.mma_enter %m : !tmem.mma_warp_context<2, 256, 1, 32, 128>
%mr = tmem.warp_context.output_ring %m : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.output_ring<2, 256, 1>
%mt = tmem.warp_context.tmem %m : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.allocation<1, 512>
%md = tmem.warp_context.dealloc_barrier %m : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.dealloc_barrier<1>
%mr2 = tmem.warp_context.mma_per_k_stage %m, %mr : !tmem.mma_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<2, 256, 1> {
^bb0(%st: !tmem.tmem_stage<2, 256, 1>):
  tmem.yield
}
tmem.warp_context.mma_exit %m : !tmem.mma_warp_context<2, 256, 1, 32, 128>
%e = tmem.warp_context.epilogue_create %slot, %bars, %dbar : !tmem.epilogue_warp_context<1, 128, 1, 32, 128, 128>
%er = tmem.warp_context.output_ring %e : !tmem.epilogue_warp_context<1, 128, 1, 32, 128, 128> -> !tmem.output_ring<1, 128, 1>
%in = tmem.pipeline.create %bars : !tmem.pipeline<3>
%er2, %in2 = tmem.warp_context.epilogue_per_k_stage %e, %er, %in : !tmem.epilogue_warp_context<1, 128, 1, 32, 128, 128>, !tmem.output_ring<1, 128, 1>, !tmem.pipeline<3> {
^bb0(%st: !tmem.tmem_stage<1, 128, 1>, %in_idx: i32):
  tmem.yield
}
tmem.warp_context.epilogue_exit %e : !tmem.epilogue_warp_context<1, 128, 1, 32, 128, 128>
tmem.warp_context.mma %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128> {
^bb0(%ctx: !tmem.mma_warp_context<2, 256, 1, 32, 128>):
  tmem.yield
}
%n = tmem.warp_context.epilogue %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> -> i32 {
^bb0(%ctx: !tmem.epilogue_warp_context<2, 256, 1, 32, 128>):
  %z = arith.constant 7 : i32
  tmem.yield %z : i32
}
// CHECK:      tmem.dealloc_barrier.init %dbar arrival_count 128 : !tmem.dealloc_barrier<1>
// CHECK-NEXT: %db = tmem.dealloc_barrier.create %dbar : !tmem.dealloc_barrier<1>
// CHECK-NEXT: tmem.dealloc_barrier.signal_peer %db : !tmem.dealloc_barrier<1>
// CHECK-NEXT: tmem.dealloc_barrier.signal_self %db : !tmem.dealloc_barrier<1>
// CHECK-NEXT: tmem.dealloc_barrier.signal_complete %db : !tmem.dealloc_barrier<1>
// CHECK-NEXT: tmem.dealloc_barrier.wait %db : !tmem.dealloc_barrier<1>
// CHECK-NEXT: tmem.dealloc_barrier.complete_dealloc %db, %alloc : !tmem.dealloc_barrier<1>, !tmem.allocation<1, 512>
// CHECK-NEXT: %m = tmem.warp_context.mma_create %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128>
// CHECK-NEXT: tmem.warp_context.mma_enter %m : !tmem.mma_warp_context<2, 256, 1, 32, 128>
// CHECK-NEXT: %mr = tmem.warp_context.output_ring %m : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.output_ring<2, 256, 1>
// CHECK-NEXT: %mt = tmem.warp_context.tmem %m : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.allocation<1, 512>
// CHECK-NEXT: %md = tmem.warp_context.dealloc_barrier %m : !tmem.mma_warp_context<2, 256, 1, 32, 128> -> !tmem.dealloc_barrier<1>
// CHECK-NEXT: %mr2 = tmem.warp_context.mma_per_k_stage %m, %mr : !tmem.mma_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<2, 256, 1> {
// CHECK:      tmem.warp_context.mma_exit %m : !tmem.mma_warp_context<2, 256, 1, 32, 128>
// CHECK-NEXT: %e = tmem.warp_context.epilogue_create %slot, %bars, %dbar : !tmem.epilogue_warp_context<1, 128, 1, 32, 128, 128>
// CHECK:      %er2, %in2 = tmem.warp_context.epilogue_per_k_stage %e, %er, %in : !tmem.epilogue_warp_context<1, 128, 1, 32, 128, 128>, !tmem.output_ring<1, 128, 1>, !tmem.pipeline<3> {
// CHECK-NEXT: ^{{.*}}(%st{{.*}}: !tmem.tmem_stage<1, 128, 1>, %in_idx: i32):
// CHECK:      tmem.warp_context.epilogue_exit %e : !tmem.epilogue_warp_context<1, 128, 1, 32, 128, 128>
// CHECK-NEXT: tmem.warp_context.mma %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128> {
// CHECK:      %n = tmem.warp_context.epilogue %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> -> i32 {
// GENERIC: "tmem.warp_context.mma"(%slot, %bars, %dbar) <{context_type = !tmem.mma_warp_context<2, 256, 1, 32, 128>}> ({

// -----

// The max_cols parameter of a warp context defaults to 512 and is then not printed.
%slot, %bars, %dbar = "test.op"() : () -> (!llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<3>)
%m = tmem.warp_context.mma_create %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128, 512>
// CHECK: %m = tmem.warp_context.mma_create %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128>

// -----

// The lane that issued the MMAs can be named explicitly for the commit.
%r, %s, %p = "test.op"() : () -> (!tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>, i1)
%m, %mr = "test.op"() : () -> (!tmem.mma_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<2, 256, 1>)
%r1 = tmem.output_ring.release_from_mma %r, %s leader %p : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
%r2 = tmem.output_ring.producer %r leader %p : !tmem.output_ring<2, 256, 1> {
^bb0(%st: !tmem.tmem_stage<2, 256, 1>):
  tmem.yield
}
%r3 = tmem.output_ring.per_k_producer %r leader %p : !tmem.output_ring<2, 256, 1> {
^bb0(%st: !tmem.tmem_stage<2, 256, 1>):
  tmem.yield
}
%r4 = tmem.warp_context.mma_per_k_stage %m, %mr leader %p : !tmem.mma_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<2, 256, 1> {
^bb0(%st: !tmem.tmem_stage<2, 256, 1>):
  tmem.yield
}
// CHECK:      %r1 = tmem.output_ring.release_from_mma %r, %s leader %p : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %r2 = tmem.output_ring.producer %r leader %p : !tmem.output_ring<2, 256, 1> {
// CHECK:      %r3 = tmem.output_ring.per_k_producer %r leader %p : !tmem.output_ring<2, 256, 1> {
// CHECK:      %r4 = tmem.warp_context.mma_per_k_stage %m, %mr leader %p : !tmem.mma_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<2, 256, 1> {
// GENERIC: "tmem.output_ring.release_from_mma"(%r, %s, %p) : (!tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>, i1) -> !tmem.output_ring<2, 256, 1>
