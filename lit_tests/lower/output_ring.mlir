// RUN: xdsl-tmem-opt %s -p lower-tmem --split-input-file | filecheck %s --check-prefixes=CHECK,STRICT
// RUN: xdsl-tmem-opt %s -p 'lower-tmem{fence-policy=mojo}' --split-input-file | filecheck %s --check-prefixes=CHECK,MOJO
// RUN: xdsl-tmem-opt %s -p 'lower-tmem{fence-policy=mojo}' --split-input-file | filecheck %s --check-prefix=NOFENCE
// NOFENCE-NOT: tcgen05.fence

// OutputTilePipeline (docs/semantics.md §2, §4.3): barriers full[0..2) then empty[0..2), 8 B
// each; producer starts at (stage 0, phase 1), consumer at (0, 0); a step increments
// the stage and on wrap to 0 flips the phase.

llvm.func @init(%bars: !llvm.ptr<3>) {
  tmem.output_ring.init_barriers %bars producer_arv_count 1 consumer_arv_count 128 : !tmem.output_ring<2, 256, 1>
  llvm.return
}
// CHECK-LABEL: llvm.func @init(
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[C128:.*]] = arith.constant 128 : i32
// CHECK-NEXT:    nvvm.mbarrier.init %bars, %[[ONE]] : !llvm.ptr<3>, i32
// CHECK-NEXT:    %[[F1:.*]] = llvm.getelementptr %bars[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
// CHECK-NEXT:    nvvm.mbarrier.init %[[F1]], %[[ONE]] : !llvm.ptr<3>, i32
// CHECK-NEXT:    %[[E0:.*]] = llvm.getelementptr %bars[2] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
// CHECK-NEXT:    nvvm.mbarrier.init %[[E0]], %[[C128]] : !llvm.ptr<3>, i32
// CHECK-NEXT:    %[[E1:.*]] = llvm.getelementptr %bars[3] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
// CHECK-NEXT:    nvvm.mbarrier.init %[[E1]], %[[C128]] : !llvm.ptr<3>, i32
// CHECK-NEXT:    llvm.return

// -----

// The MMA side in a tile loop, cta_group 1: wait empty[stage] with the producer phase,
// commit on full[index] from one elected lane, step. Only the producer (stage, phase)
// stays loop-carried.
llvm.func @mma(%bars: !llvm.ptr<3>, %slot: !llvm.ptr<3>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %a = tmem.from_shared %slot : !tmem.allocation<1, 512>
  %r0 = tmem.output_ring.create %bars, %a : !tmem.allocation<1, 512> -> !tmem.output_ring<2, 256, 1>
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%ring = %r0) -> (!tmem.output_ring<2, 256, 1>) : i32 {
    %s = tmem.output_ring.acquire_for_mma %ring : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>
    %d = tmem.tmem_stage.address %s : !tmem.tmem_stage<2, 256, 1>
    "test.op"(%d) : (!llvm.ptr<6>) -> ()
    %next = tmem.output_ring.release_from_mma %ring, %s : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
    scf.yield %next : !tmem.output_ring<2, 256, 1>
  }
  llvm.return
}
// CHECK-LABEL: llvm.func @mma(
// CHECK:         %[[BASE:.*]] = llvm.load %slot : !llvm.ptr<3> -> i32
// CHECK:         %{{.*}}, %{{.*}} = scf.for %t = %c0 to %n step %c1 iter_args(%[[STAGE:.*]] = %c0, %[[PHASE:.*]] = %c1) -> (i32, i32) : i32 {
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT:      %[[EI:.*]] = arith.addi %[[STAGE]], %[[TWO]] : i32
// CHECK-NEXT:      %[[EMPTY:.*]] = llvm.getelementptr %bars[%[[EI]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK-NEXT:      nvvm.mbarrier.try_wait.parity %[[EMPTY]], %[[PHASE]], %c0 : !llvm.ptr<3>, i32, i32
// STRICT-NEXT:     nvvm.tcgen05.fence <after>
// CHECK-NEXT:      %[[STRIDE:.*]] = arith.constant 256 : i32
// CHECK-NEXT:      %[[COL:.*]] = arith.muli %[[STAGE]], %[[STRIDE]] : i32
// CHECK-NEXT:      %[[OFF:.*]] = arith.addi %[[BASE]], %[[COL]] : i32
// CHECK-NEXT:      %[[D:.*]] = llvm.inttoptr %[[OFF]] : i32 to !llvm.ptr<6>
// CHECK-NEXT:      "test.op"(%[[D]]) : (!llvm.ptr<6>) -> ()
// CHECK-NEXT:      %[[ELECTED:.*]] = nvvm.elect.sync -> i1
// CHECK-NEXT:      %[[FULL:.*]] = llvm.getelementptr %bars[%[[STAGE]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK-NEXT:      scf.if %[[ELECTED]] {
// CHECK-NEXT:        nvvm.tcgen05.commit %[[FULL]] : !llvm.ptr<3>
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[NS:.*]] = arith.addi %[[STAGE]], %c1 : i32
// CHECK-NEXT:      %[[WRAP:.*]] = arith.cmpi eq, %[[NS]], %[[TWO]] : i32
// CHECK-NEXT:      %[[S2:.*]] = arith.select %[[WRAP]], %c0, %[[NS]] : i32
// CHECK-NEXT:      %[[FLIP:.*]] = arith.extui %[[WRAP]] : i1 to i32
// CHECK-NEXT:      %[[P2:.*]] = arith.xori %[[PHASE]], %[[FLIP]] : i32
// CHECK-NEXT:      scf.yield %[[S2]], %[[P2]] : i32, i32
// CHECK-NEXT:    }

// -----

// The epilogue side, cta_group 1: wait full[stage] with the consumer phase; the
// arrive on the local empty[index] is its own op; release only steps.
llvm.func @epilogue(%bars: !llvm.ptr<3>, %slot: !llvm.ptr<3>, %n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %a = tmem.from_shared %slot : !tmem.allocation<1, 512>
  %r0 = tmem.output_ring.create %bars, %a : !tmem.allocation<1, 512> -> !tmem.output_ring<2, 256, 1>
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%ring = %r0) -> (!tmem.output_ring<2, 256, 1>) : i32 {
    %s = tmem.output_ring.acquire_for_epilogue %ring : !tmem.output_ring<2, 256, 1> -> !tmem.tmem_stage<2, 256, 1>
    tmem.output_ring.arrive_empty %ring, %s : !tmem.output_ring<2, 256, 1>, !tmem.tmem_stage<2, 256, 1>
    %next = tmem.output_ring.release_from_epilogue %ring : !tmem.output_ring<2, 256, 1>
    scf.yield %next : !tmem.output_ring<2, 256, 1>
  }
  llvm.return
}
// CHECK-LABEL: llvm.func @epilogue(
// CHECK:         %{{.*}}, %{{.*}} = scf.for %t = %c0 to %n step %c1 iter_args(%[[STAGE:.*]] = %c0, %[[PHASE:.*]] = %c0) -> (i32, i32) : i32 {
// CHECK-NEXT:      %[[FULL:.*]] = llvm.getelementptr %bars[%[[STAGE]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// CHECK-NEXT:      nvvm.mbarrier.try_wait.parity %[[FULL]], %[[PHASE]], %c0 : !llvm.ptr<3>, i32, i32
// STRICT-NEXT:     nvvm.tcgen05.fence <after>
// CHECK-NEXT:      %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT:      %[[EI:.*]] = arith.addi %[[STAGE]], %[[TWO]] : i32
// CHECK-NEXT:      %[[EMPTY:.*]] = llvm.getelementptr %bars[%[[EI]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
// STRICT-NEXT:     nvvm.tcgen05.fence <before>
// CHECK-NEXT:      nvvm.mbarrier.arrive %[[EMPTY]] : !llvm.ptr<3>
// CHECK-NEXT:      %[[NS:.*]] = arith.addi %[[STAGE]], %c1 : i32
// CHECK-NEXT:      %[[WRAP:.*]] = arith.cmpi eq, %[[NS]], %[[TWO]] : i32
// CHECK-NEXT:      %[[S2:.*]] = arith.select %[[WRAP]], %c0, %[[NS]] : i32
// CHECK-NEXT:      %[[FLIP:.*]] = arith.extui %[[WRAP]] : i1 to i32
// CHECK-NEXT:      %[[P2:.*]] = arith.xori %[[PHASE]], %[[FLIP]] : i32
// CHECK-NEXT:      scf.yield %[[S2]], %[[P2]] : i32, i32

// -----

// cta_group 2: the commit multicasts with mma_complete_mask; the epilogue arrives on
// the leader CTA's empty[index] through mapa (rank & ~1) and a cluster-scope arrive.
// A single-stage ring flips the phase on every step.
llvm.func @cg2(%bars: !llvm.ptr<3>, %slot: !llvm.ptr<3>, %leader: i1) {
  %mask = arith.constant 3 : i16
  %a = tmem.from_shared %slot : !tmem.allocation<2, 512>
  %r0 = tmem.output_ring.create %bars, %a mma_complete_mask %mask : !tmem.allocation<2, 512> -> !tmem.output_ring<1, 512, 2>
  %s = tmem.output_ring.acquire_for_mma %r0 : !tmem.output_ring<1, 512, 2> -> !tmem.tmem_stage<1, 512, 2>
  %r1 = tmem.output_ring.release_from_mma %r0, %s leader %leader : !tmem.output_ring<1, 512, 2>, !tmem.tmem_stage<1, 512, 2>
  %e = tmem.output_ring.acquire_for_epilogue %r1 : !tmem.output_ring<1, 512, 2> -> !tmem.tmem_stage<1, 512, 2>
  tmem.output_ring.arrive_empty %r1, %e : !tmem.output_ring<1, 512, 2>, !tmem.tmem_stage<1, 512, 2>
  %r2 = tmem.output_ring.release_from_epilogue %r1 : !tmem.output_ring<1, 512, 2>
  %s2 = tmem.output_ring.acquire_for_mma %r2 : !tmem.output_ring<1, 512, 2> -> !tmem.tmem_stage<1, 512, 2>
  llvm.return
}
// CHECK-LABEL: llvm.func @cg2(
// CHECK:         %[[EMPTY:.*]] = llvm.getelementptr %bars[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
// CHECK-NEXT:    nvvm.mbarrier.try_wait.parity %[[EMPTY]], %[[ONE:.*]], %[[ZERO:.*]] : !llvm.ptr<3>, i32, i32
// STRICT-NEXT:   nvvm.tcgen05.fence <after>
// CHECK-NEXT:    scf.if %leader {
// CHECK-NEXT:      nvvm.tcgen05.commit %bars, multicast_mask = %mask {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[P:.*]] = arith.xori %[[ONE]], %[[ONE]] : i32
// The consumer's first wait is on full[0] with parity 0.
// CHECK-NEXT:    nvvm.mbarrier.try_wait.parity %bars, %[[ZERO]], %[[ZERO]] : !llvm.ptr<3>, i32, i32
// STRICT-NEXT:   nvvm.tcgen05.fence <after>
// STRICT-NEXT:   nvvm.tcgen05.fence <before>
// CHECK-NEXT:    %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK-NEXT:    %[[NOT1:.*]] = arith.constant -2 : i32
// CHECK-NEXT:    %[[LEAD:.*]] = arith.andi %[[RANK]], %[[NOT1]] : i32
// CHECK-NEXT:    %[[REMOTE:.*]] = nvvm.mapa %[[EMPTY]], %[[LEAD]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT:    nvvm.mbarrier.arrive %[[REMOTE]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// The producer's second wait: empty[0] with the flipped phase.
// CHECK:         nvvm.mbarrier.try_wait.parity %[[EMPTY]], %[[P]], %[[ZERO]] : !llvm.ptr<3>, i32, i32
