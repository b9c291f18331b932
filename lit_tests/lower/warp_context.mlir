// RUN: xdsl-tmem-opt %s -p lower-tmem --split-input-file | filecheck %s --check-prefixes=CHECK,STRICT
// RUN: xdsl-tmem-opt %s -p 'lower-tmem{fence-policy=mojo}' --split-input-file | filecheck %s --check-prefixes=CHECK,MOJO
// RUN: xdsl-tmem-opt %s -p 'lower-tmem{fence-policy=mojo}' --split-input-file | filecheck %s --check-prefix=NOFENCE
// NOFENCE-NOT: tcgen05.fence

// The TMEM lifecycle (docs/semantics.md §5, §7), cta_group 1 with 32 MMA + 128 epilogue
// threads: allocate, publish on named barrier 1 (160 threads); the epilogue syncs on
// it and reads the slot; at exit the epilogue arrives on the dealloc barrier and the
// MMA warp relinquishes, waits it with parity 0, and deallocates.
llvm.func @mma(%slot: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %dbar: !llvm.ptr<3>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 160, 1, 1>} {
  tmem.warp_context.mma %slot, %bars, %dbar : !tmem.mma_warp_context<2, 256, 1, 32, 128> {
  ^bb0(%ctx: !tmem.mma_warp_context<2, 256, 1, 32, 128>):
    "test.op"() : () -> ()
    tmem.yield
  }
  llvm.return
}
// CHECK-LABEL: llvm.func @mma(
// CHECK:         nvvm.tcgen05.alloc %slot, %[[COLS:.*]] : !llvm.ptr<3>, i32
// STRICT-NEXT:   nvvm.tcgen05.fence <before>
// CHECK-NEXT:    %{{.*}} = arith.constant -1 : i32
// CHECK-NEXT:    nvvm.bar.warp.sync %{{.*}} : i32
// STRICT-NEXT:   nvvm.tcgen05.fence <after>
// CHECK-NEXT:    %[[ADDR:.*]] = llvm.load %slot : !llvm.ptr<3> -> i32
// STRICT-NEXT:   nvvm.tcgen05.fence <before>
// CHECK-NEXT:    %[[N:.*]] = arith.constant 160 : i32
// CHECK-NEXT:    %[[ID:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    nvvm.barrier.arrive id = %[[ID]] number_of_threads = %[[N]]
// CHECK-NEXT:    "test.op"() : () -> ()
// CHECK-NEXT:    nvvm.tcgen05.relinquish_alloc_permit
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    nvvm.mbarrier.try_wait.parity %dbar, %[[ZERO]], %[[ZERO]] : !llvm.ptr<3>, i32, i32
// STRICT-NEXT:   nvvm.tcgen05.fence <after>
// CHECK-NEXT:    %[[P:.*]] = llvm.inttoptr %[[ADDR]] : i32 to !llvm.ptr<6>
// CHECK-NEXT:    nvvm.tcgen05.dealloc %[[P]], %[[COLS]] : !llvm.ptr<6>, i32
// CHECK-NEXT:    llvm.return

// -----

llvm.func @epilogue(%slot: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %dbar: !llvm.ptr<3>) {
  tmem.warp_context.epilogue %slot, %bars, %dbar : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> {
  ^bb0(%ctx: !tmem.epilogue_warp_context<2, 256, 1, 32, 128>):
    %a = tmem.warp_context.tmem %ctx : !tmem.epilogue_warp_context<2, 256, 1, 32, 128> -> !tmem.allocation<1, 512>
    %x = tmem.base_address %a : !tmem.allocation<1, 512>
    "test.op"(%x) : (i32) -> ()
    tmem.yield
  }
  llvm.return
}
// CHECK-LABEL: llvm.func @epilogue(
// CHECK:         %[[N:.*]] = arith.constant 160 : i32
// CHECK-NEXT:    %[[ID:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    nvvm.barrier id = %[[ID]] number_of_threads = %[[N]]
// STRICT-NEXT:   nvvm.tcgen05.fence <after>
// CHECK-NEXT:    %[[ADDR:.*]] = llvm.load %slot : !llvm.ptr<3> -> i32
// CHECK-NEXT:    "test.op"(%[[ADDR]]) : (i32) -> ()
// STRICT-NEXT:   nvvm.tcgen05.fence <before>
// CHECK-NEXT:    nvvm.mbarrier.arrive %dbar : !llvm.ptr<3>
// CHECK-NEXT:    llvm.return

// -----

// cta_group 2: 2 x 128 epilogue threads signal both dealloc barriers: the peer's
// (mapa to rank ^ 1, cluster-scope arrive), then their own.
llvm.func @epilogue_cg2(%slot: !llvm.ptr<3>, %bars: !llvm.ptr<3>, %dbar: !llvm.ptr<3>) {
  %mask = arith.constant 3 : i16
  %ctx = tmem.warp_context.epilogue_create %slot, %bars, %dbar mma_complete_mask %mask : !tmem.epilogue_warp_context<2, 256, 2, 32, 128>
  tmem.warp_context.epilogue_exit %ctx : !tmem.epilogue_warp_context<2, 256, 2, 32, 128>
  llvm.return
}
// CHECK-LABEL: llvm.func @epilogue_cg2(
// CHECK:         %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    nvvm.barrier id = %[[ONE]] number_of_threads = %{{.*}}
// STRICT-NEXT:   nvvm.tcgen05.fence <after>
// CHECK-NEXT:    %{{.*}} = llvm.load %slot : !llvm.ptr<3> -> i32
// STRICT-NEXT:   nvvm.tcgen05.fence <before>
// CHECK-NEXT:    %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK-NEXT:    %[[PEER:.*]] = arith.xori %[[RANK]], %[[ONE]] : i32
// CHECK-NEXT:    %[[REMOTE:.*]] = nvvm.mapa %dbar, %[[PEER]] : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT:    nvvm.mbarrier.arrive %[[REMOTE]] {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
// CHECK-NEXT:    nvvm.mbarrier.arrive %dbar : !llvm.ptr<3>
// CHECK-NEXT:    llvm.return

// -----

// The explicit TmemDeallocBarrier ops.
llvm.func @dealloc_barrier(%dbar: !llvm.ptr<3>, %slot: !llvm.ptr<3>) {
  tmem.dealloc_barrier.init %dbar arrival_count 256 : !tmem.dealloc_barrier<2>
  %db = tmem.dealloc_barrier.create %dbar : !tmem.dealloc_barrier<2>
  %a = tmem.from_shared %slot : !tmem.allocation<2, 128>
  tmem.dealloc_barrier.signal_self %db : !tmem.dealloc_barrier<2>
  tmem.dealloc_barrier.wait %db : !tmem.dealloc_barrier<2>
  tmem.dealloc_barrier.complete_dealloc %db, %a : !tmem.dealloc_barrier<2>, !tmem.allocation<2, 128>
  llvm.return
}
// CHECK-LABEL: llvm.func @dealloc_barrier(
// CHECK:         %[[C256:.*]] = arith.constant 256 : i32
// CHECK-NEXT:    nvvm.mbarrier.init %dbar, %[[C256]] : !llvm.ptr<3>, i32
// CHECK-NEXT:    %[[ADDR:.*]] = llvm.load %slot : !llvm.ptr<3> -> i32
// STRICT-NEXT:   nvvm.tcgen05.fence <before>
// CHECK-NEXT:    nvvm.mbarrier.arrive %dbar : !llvm.ptr<3>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    nvvm.mbarrier.try_wait.parity %dbar, %[[ZERO]], %[[ZERO]] : !llvm.ptr<3>, i32, i32
// STRICT-NEXT:   nvvm.tcgen05.fence <after>
// CHECK-NEXT:    nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
// CHECK-NEXT:    nvvm.mbarrier.try_wait.parity %dbar, %[[ZERO]], %[[ZERO]] : !llvm.ptr<3>, i32, i32
// STRICT-NEXT:   nvvm.tcgen05.fence <after>
// CHECK-NEXT:    %[[COLS:.*]] = arith.constant 128 : i32
// CHECK-NEXT:    %[[P:.*]] = llvm.inttoptr %[[ADDR]] : i32 to !llvm.ptr<6>
// CHECK-NEXT:    nvvm.tcgen05.dealloc %[[P]], %[[COLS]] {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>, i32
