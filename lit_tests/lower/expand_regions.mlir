// RUN: xdsl-tmem-opt %s -p tmem-expand-regions --split-input-file | filecheck %s

// Each region op becomes what Mojo's __enter__ / __exit__ do, around the inlined body.

%r, %leader = "test.op"() : () -> (!tmem.output_ring<2, 256, 1>, i1)
%r1, %x = tmem.output_ring.producer %r leader %leader : !tmem.output_ring<2, 256, 1> -> i32 {
^bb0(%s: !tmem.tmem_stage<2, 256, 1>):
  %v = "test.op"(%s) : (!tmem.tmem_stage<2, 256, 1>) -> i32
  tmem.yield %v : i32
}
"test.op"(%r1, %x) : (!tmem.output_ring<2, 256, 1>, i32) -> ()
// OutputProducer: acquire_for_mma, body, release_from_mma (committing from %leader).
// CHECK:      %[[S:.*]] = tmem.output_ring.acquire_for_mma %r : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %[[V:.*]] = "test.op"(%[[S]]) : (!tmem.tmem_stage<2, 256, 1>) -> i32
// CHECK-NEXT: %[[R1:.*]] = tmem.output_ring.release_from_mma %r, %[[S]] leader %leader : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: "test.op"(%[[R1]], %[[V]])

// -----

%r = "test.op"() : () -> !tmem.output_ring<2, 256, 1>
%r1 = tmem.output_ring.consumer %r : !tmem.output_ring<2, 256, 1> {
^bb0(%s: !tmem.tmem_stage<2, 256, 1>):
  "test.op"(%s) : (!tmem.tmem_stage<2, 256, 1>) -> ()
  tmem.yield
}
// OutputConsumer: acquire_for_epilogue, body, release_from_epilogue -- and no arrive.
// CHECK:      %[[S:.*]] = tmem.output_ring.acquire_for_epilogue %r : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: "test.op"(%[[S]])
// CHECK-NEXT: %{{.*}} = tmem.output_ring.release_from_epilogue %r : !tmem.output_ring<2, 256, 1>
// CHECK-NOT:  arrive_empty

// -----

%r = "test.op"() : () -> !tmem.output_ring<2, 256, 1>
%r1 = tmem.output_ring.per_k_consumer %r : !tmem.output_ring<2, 256, 1> {
^bb0(%s: !tmem.tmem_stage<2, 256, 1>):
  "test.op"(%s) : (!tmem.tmem_stage<2, 256, 1>) -> ()
  tmem.yield
}
// PerKConsumerStage: the exit arrives on empty[index] before release_from_epilogue.
// CHECK:      %[[S:.*]] = tmem.output_ring.acquire_for_epilogue %r
// CHECK-NEXT: "test.op"(%[[S]])
// CHECK-NEXT: tmem.output_ring.arrive_empty %r, %[[S]] : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
// CHECK-NEXT: %{{.*}} = tmem.output_ring.release_from_epilogue %r

// -----

%r = "test.op"() : () -> !tmem.output_ring<2, 256, 1>
%r1 = tmem.output_ring.per_k_producer %r : !tmem.output_ring<2, 256, 1> {
^bb0(%s: !tmem.tmem_stage<2, 256, 1>):
  tmem.yield
}
// MmaKStage: as the producer; without `leader` the release elects the lane itself.
// CHECK:      %[[S:.*]] = tmem.output_ring.acquire_for_mma %r
// CHECK-NEXT: %{{.*}} = tmem.output_ring.release_from_mma %r, %[[S]] : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>

// -----

%ctx, %r, %in = "test.op"() : () -> (!tmem.epilogue_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<2, 256, 1>, !tmem.pipeline<3>)
%r1, %in1 = tmem.warp_context.epilogue_per_k_stage %ctx, %r, %in : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>, !tmem.output_ring<2, 256, 1>, !tmem.pipeline<3> {
^bb0(%s: !tmem.tmem_stage<2, 256, 1>, %in_index: i32):
  "test.op"(%s, %in_index) : (!tmem.tmem_stage<2, 256, 1>, i32) -> ()
  tmem.yield
}
// EpilogueKContext: enter = acquire_for_epilogue + record the input consumer stage;
// exit = input consumer_step, arrive on the output empty[index], release_from_epilogue.
// CHECK:      %[[S:.*]] = tmem.output_ring.acquire_for_epilogue %r
// CHECK-NEXT: %[[I:.*]] = tmem.pipeline.consumer_stage %in : !tmem.pipeline<3>
// CHECK-NEXT: "test.op"(%[[S]], %[[I]])
// CHECK-NEXT: %{{.*}} = tmem.pipeline.consumer_step %in : !tmem.pipeline<3>
// CHECK-NEXT: tmem.output_ring.arrive_empty %r, %[[S]]
// CHECK-NEXT: %{{.*}} = tmem.output_ring.release_from_epilogue %r

// -----

%slot, %bars, %dbar = "test.op"() : () -> (!llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<3>)
%mask = arith.constant 3 : i16
%n = tmem.warp_context.mma %slot, %bars, %dbar mma_complete_mask %mask : !tmem.mma_warp_context<1, 512, 2, 32, 128> -> i32 {
^bb0(%ctx: !tmem.mma_warp_context<1, 512, 2, 32, 128>):
  %ring = tmem.warp_context.output_ring %ctx : !tmem.mma_warp_context<1, 512, 2, 32, 128> -> !tmem.output_ring<1, 512, 2>
  %r1 = tmem.warp_context.mma_per_k_stage %ctx, %ring : !tmem.mma_warp_context<1, 512, 2, 32, 128>, !tmem.output_ring<1, 512, 2> {
  ^bb1(%s: !tmem.tmem_stage<1, 512, 2>):
    tmem.yield
  }
  %v = "test.op"() : () -> i32
  tmem.yield %v : i32
}
"test.op"(%n) : (i32) -> ()
// MmaWarpContext: create, enter, body, exit; the nested MmaKStage expands too.
// CHECK:      %[[CTX:.*]] = tmem.warp_context.mma_create %slot, %bars, %dbar mma_complete_mask %mask : !tmem.mma_warp_context<1, 512, 2, 32, 128>
// CHECK-NEXT: tmem.warp_context.mma_enter %[[CTX]]
// CHECK-NEXT: %[[RING:.*]] = tmem.warp_context.output_ring %[[CTX]]
// CHECK-NEXT: %[[S:.*]] = tmem.output_ring.acquire_for_mma %[[RING]]
// CHECK-NEXT: %{{.*}} = tmem.output_ring.release_from_mma %[[RING]], %[[S]]
// CHECK-NEXT: %[[V:.*]] = "test.op"() : () -> i32
// CHECK-NEXT: tmem.warp_context.mma_exit %[[CTX]]
// CHECK-NEXT: "test.op"(%[[V]])

// -----

%slot, %bars, %dbar = "test.op"() : () -> (!llvm.ptr<3>, !llvm.ptr<3>, !llvm.ptr<3>)
tmem.warp_context.epilogue %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> {
^bb0(%ctx: !tmem.epilogue_warp_context<2, 256, 1, 32, 128>):
  "test.op"(%ctx) : (!tmem.epilogue_warp_context<2, 256, 1, 32, 128>) -> ()
  tmem.yield
}
// EpilogueWarpContext: create (sync + read the slot), body, exit.
// CHECK:      %[[CTX:.*]] = tmem.warp_context.epilogue_create %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 1, 32, 128>
// CHECK-NEXT: "test.op"(%[[CTX]])
// CHECK-NEXT: tmem.warp_context.epilogue_exit %[[CTX]]
