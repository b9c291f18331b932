// RUN: xdsl-tmem-opt %s -p lower-tmem | filecheck %s

// ProducerConsumerPipeline (docs/semantics.md §2) with 3 stages: full[0..3) then empty[0..3).
llvm.func @pipeline(%bars: !llvm.ptr<3>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  tmem.pipeline.init_barriers %bars producer_arv_count 32 consumer_arv_count 5 : !tmem.pipeline<3>
  %p0 = tmem.pipeline.create %bars : !tmem.pipeline<3>
  %p = scf.for %t = %c0 to %n step %c1 iter_args(%in = %p0) -> (!tmem.pipeline<3>) : i32 {
    tmem.pipeline.wait_consumer %in : !tmem.pipeline<3>
    %ps = tmem.pipeline.producer_stage %in : !tmem.pipeline<3>
    %full = tmem.pipeline.producer_mbar %in, %ps : !tmem.pipeline<3>
    nvvm.mbarrier.arrive %full : !llvm.ptr<3>
    %p1 = tmem.pipeline.producer_step %in : !tmem.pipeline<3>
    tmem.pipeline.wait_producer %p1 : !tmem.pipeline<3>
    %cs = tmem.pipeline.consumer_stage %p1 : !tmem.pipeline<3>
    %empty = tmem.pipeline.consumer_mbar %p1, %cs : !tmem.pipeline<3>
    nvvm.mbarrier.arrive %empty : !llvm.ptr<3>
    %p2 = tmem.pipeline.consumer_step %p1 : !tmem.pipeline<3>
    scf.yield %p2 : !tmem.pipeline<3>
  }
  llvm.return
}
// CHECK-LABEL: llvm.func @pipeline(
// CHECK:         %[[C32:.*]] = arith.constant 32 : i32
// CHECK-NEXT:    %[[C5:.*]] = arith.constant 5 : i32
// CHECK-NEXT:    nvvm.mbarrier.init %bars, %[[C32]] : !llvm.ptr<3>, i32
// CHECK-NEXT:    %[[F1:.*]] = llvm.getelementptr %bars[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
// CHECK-NEXT:    nvvm.mbarrier.init %[[F1]], %[[C32]] : !llvm.ptr<3>, i32
// CHECK-NEXT:    %[[F2:.*]] = llvm.getelementptr %bars[2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
// CHECK-NEXT:    nvvm.mbarrier.init %[[F2]], %[[C32]] : !llvm.ptr<3>, i32
// CHECK-NEXT:    %[[E0:.*]] = llvm.getelementptr %bars[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
// CHECK-NEXT:    nvvm.mbarrier.init %[[E0]], %[[C5]] : !llvm.ptr<3>, i32
// CHECK:         nvvm.mbarrier.init %{{.*}}, %[[C5]] : !llvm.ptr<3>, i32
// CHECK:         nvvm.mbarrier.init %{{.*}}, %[[C5]] : !llvm.ptr<3>, i32
// The producer starts at (0, phase 1), the consumer at (0, phase 0).
// CHECK:         scf.for %t = %c0 to %n step %c1 iter_args(%[[PS:.*]] = %c0, %[[PP:.*]] = %c1, %[[CS:.*]] = %c0, %[[CP:.*]] = %c0) -> (i32, i32, i32, i32) : i32 {
// wait_consumer: empty[ps] = bars[ps + 3], parity pp; no tcgen05 fence for a plain pipeline.
// CHECK-NEXT:      %[[C3:.*]] = arith.constant 3 : i32
// CHECK-NEXT:      %[[EI:.*]] = arith.addi %[[PS]], %[[C3]] : i32
// CHECK-NEXT:      %[[E:.*]] = llvm.getelementptr %bars[%[[EI]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK-NEXT:      nvvm.mbarrier.try_wait.parity %[[E]], %[[PP]], %c0 : !llvm.ptr<3>, i32, i32
// CHECK-NEXT:      %[[FULL:.*]] = llvm.getelementptr %bars[%[[PS]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK-NEXT:      nvvm.mbarrier.arrive %[[FULL]] : !llvm.ptr<3>
// CHECK-NEXT:      %[[PS1:.*]] = arith.addi %[[PS]], %c1 : i32
// CHECK-NEXT:      %[[PW:.*]] = arith.cmpi eq, %[[PS1]], %[[C3]] : i32
// CHECK-NEXT:      %[[PS2:.*]] = arith.select %[[PW]], %c0, %[[PS1]] : i32
// CHECK-NEXT:      %[[PF:.*]] = arith.extui %[[PW]] : i1 to i32
// CHECK-NEXT:      %[[PP2:.*]] = arith.xori %[[PP]], %[[PF]] : i32
// wait_producer: full[cs], parity cp.
// CHECK-NEXT:      %[[F:.*]] = llvm.getelementptr %bars[%[[CS]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK-NEXT:      nvvm.mbarrier.try_wait.parity %[[F]], %[[CP]], %c0 : !llvm.ptr<3>, i32, i32
// CHECK-NEXT:      %[[EI2:.*]] = arith.addi %[[CS]], %[[C3]] : i32
// CHECK-NEXT:      %[[EMPTY:.*]] = llvm.getelementptr %bars[%[[EI2]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK-NEXT:      nvvm.mbarrier.arrive %[[EMPTY]] : !llvm.ptr<3>
// CHECK-NEXT:      %[[CS1:.*]] = arith.addi %[[CS]], %c1 : i32
// CHECK:           scf.yield %[[PS2]], %[[PP2]], %{{.*}}, %{{.*}} : i32, i32, i32, i32
