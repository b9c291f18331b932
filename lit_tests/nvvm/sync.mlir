// Synchronisation and identity: barrier0, barrier (id, number_of_threads,
// reduction), barrier.arrive, bar.warp.sync, cluster.arrive[.relaxed],
// cluster.wait, fence.proxy, elect.sync, mapa and the read.ptx.sreg.* special
// registers (with and without `range`). Expected text is mlir-opt-22's;
// tests/test_nvvm_upstream.py runs it through mlir-opt-22, llc-22 and ptxas.
// RUN: xdsl-tmem-opt %s | filecheck %s
// RUN: XDSL_TMEM_ROUNDTRIP
// RUN: XDSL_TMEM_GENERIC

module {
  llvm.func @sync(%bar: !llvm.ptr<3>, %gen: !llvm.ptr, %rank: i32, %v: i32, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %id = llvm.mlir.constant(1 : i32) : i32
    %n = llvm.mlir.constant(160 : i32) : i32
    %all = llvm.mlir.constant(-1 : i32) : i32
    nvvm.barrier0
    nvvm.barrier
    nvvm.barrier id = %id
    nvvm.barrier id = %id number_of_threads = %n
    %pop = nvvm.barrier #nvvm.reduction<popc> %v -> i32
    nvvm.barrier.arrive number_of_threads = %n
    nvvm.barrier.arrive id = %id number_of_threads = %n
    nvvm.bar.warp.sync %all : i32
    nvvm.cluster.arrive
    nvvm.cluster.wait
    nvvm.cluster.arrive.relaxed {aligned}
    nvvm.cluster.wait {aligned}
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
    nvvm.fence.proxy {space = #nvvm.shared_space<cluster>, kind = #nvvm.proxy_kind<async.shared>}
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async>}
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.global>}
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<alias>}
    %e0 = nvvm.elect.sync -> i1
    %e1 = nvvm.elect.sync %all -> i1
    %remote = nvvm.mapa %bar, %rank : !llvm.ptr<3> -> !llvm.ptr<7>
    %gremote = nvvm.mapa %gen, %rank : !llvm.ptr -> !llvm.ptr

    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 160> : i32
    %tidy = nvvm.read.ptx.sreg.tid.y : i32
    %ntid = nvvm.read.ptx.sreg.ntid.x range <i32, 1, 1025> : i32
    %cta = nvvm.read.ptx.sreg.ctaid.x : i32
    %ncta = nvvm.read.ptx.sreg.nctaid.x : i32
    %lane = nvvm.read.ptx.sreg.laneid range <i32, 0, 32> : i32
    %warp = nvvm.read.ptx.sreg.warpid : i32
    %ws = nvvm.read.ptx.sreg.warpsize : i32
    %crank = nvvm.read.ptx.sreg.cluster.ctarank : i32
    %cn = nvvm.read.ptx.sreg.cluster.nctarank : i32
    %cid = nvvm.read.ptx.sreg.clusterid.x : i32
    %ncid = nvvm.read.ptx.sreg.nclusterid.x : i32
    %cctaid = nvvm.read.ptx.sreg.cluster.ctaid.x : i32
    %cnctaid = nvvm.read.ptx.sreg.cluster.nctaid.x : i32
    %smid = nvvm.read.ptx.sreg.smid : i32
    %lmask = nvvm.read.ptx.sreg.lanemask.lt : i32
    %clk = nvvm.read.ptx.sreg.clock64 : i64

    // keep the results alive through llc
    %b0 = llvm.zext %e0 : i1 to i32
    %b1 = llvm.zext %e1 : i1 to i32
    %s0 = llvm.add %b0, %b1 : i32
    %s1 = llvm.add %s0, %pop : i32
    %s2 = llvm.add %s1, %tid : i32
    %s3 = llvm.add %s2, %tidy : i32
    %s4 = llvm.add %s3, %ntid : i32
    %s5 = llvm.add %s4, %cta : i32
    %s6 = llvm.add %s5, %ncta : i32
    %s7 = llvm.add %s6, %lane : i32
    %s8 = llvm.add %s7, %warp : i32
    %s9 = llvm.add %s8, %ws : i32
    %s10 = llvm.add %s9, %crank : i32
    %s11 = llvm.add %s10, %cn : i32
    %s12 = llvm.add %s11, %cid : i32
    %s13 = llvm.add %s12, %ncid : i32
    %s14 = llvm.add %s13, %cctaid : i32
    %s15 = llvm.add %s14, %cnctaid : i32
    %s16 = llvm.add %s15, %smid : i32
    %s17 = llvm.add %s16, %lmask : i32
    llvm.store %s17, %out : i32, !llvm.ptr<1>
    llvm.store %clk, %out : i64, !llvm.ptr<1>
    llvm.store %s17, %remote : i32, !llvm.ptr<7>
    llvm.store %s17, %gremote : i32, !llvm.ptr
    llvm.return
  }
}

// CHECK-LABEL: llvm.func @sync
// CHECK:      nvvm.barrier0
// CHECK-NEXT: nvvm.barrier{{$}}
// CHECK-NEXT: nvvm.barrier id = %id{{$}}
// CHECK-NEXT: nvvm.barrier id = %id number_of_threads = %n{{$}}
// CHECK-NEXT: %pop = nvvm.barrier #nvvm.reduction<popc> %v -> i32
// CHECK-NEXT: nvvm.barrier.arrive number_of_threads = %n{{$}}
// CHECK-NEXT: nvvm.barrier.arrive id = %id number_of_threads = %n{{$}}
// CHECK-NEXT: nvvm.bar.warp.sync %all : i32
// CHECK-NEXT: nvvm.cluster.arrive{{$}}
// CHECK-NEXT: nvvm.cluster.wait{{$}}
// CHECK-NEXT: nvvm.cluster.arrive.relaxed {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cluster>}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async>}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.global>}
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<alias>}
// CHECK-NEXT: %e0 = nvvm.elect.sync -> i1
// CHECK-NEXT: %e1 = nvvm.elect.sync %all -> i1
// CHECK-NEXT: %remote = nvvm.mapa %bar, %rank : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: %gremote = nvvm.mapa %gen, %rank : !llvm.ptr -> !llvm.ptr
// CHECK-NEXT: %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 160> : i32
// CHECK-NEXT: %tidy = nvvm.read.ptx.sreg.tid.y : i32
// CHECK-NEXT: %ntid = nvvm.read.ptx.sreg.ntid.x range <i32, 1, 1025> : i32
// CHECK-NEXT: %cta = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK-NEXT: %ncta = nvvm.read.ptx.sreg.nctaid.x : i32
// CHECK-NEXT: %lane = nvvm.read.ptx.sreg.laneid range <i32, 0, 32> : i32
// CHECK-NEXT: %warp = nvvm.read.ptx.sreg.warpid : i32
// CHECK-NEXT: %ws = nvvm.read.ptx.sreg.warpsize : i32
// CHECK-NEXT: %crank = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK-NEXT: %cn = nvvm.read.ptx.sreg.cluster.nctarank : i32
// CHECK-NEXT: %cid = nvvm.read.ptx.sreg.clusterid.x : i32
// CHECK-NEXT: %ncid = nvvm.read.ptx.sreg.nclusterid.x : i32
// CHECK-NEXT: %cctaid = nvvm.read.ptx.sreg.cluster.ctaid.x : i32
// CHECK-NEXT: %cnctaid = nvvm.read.ptx.sreg.cluster.nctaid.x : i32
// CHECK-NEXT: %smid = nvvm.read.ptx.sreg.smid : i32
// CHECK-NEXT: %lmask = nvvm.read.ptx.sreg.lanemask.lt : i32
// CHECK-NEXT: %clk = nvvm.read.ptx.sreg.clock64 : i64

// GENERIC:      "nvvm.barrier0"() : () -> ()
// GENERIC-NEXT: "nvvm.barrier"() <{operandSegmentSizes = array<i32: 0, 0, 0>}> : () -> ()
// GENERIC-NEXT: "nvvm.barrier"(%id) <{operandSegmentSizes = array<i32: 1, 0, 0>}> : (i32) -> ()
// GENERIC-NEXT: "nvvm.barrier"(%id, %n) <{operandSegmentSizes = array<i32: 1, 1, 0>}> : (i32, i32) -> ()
// GENERIC-NEXT: %pop = "nvvm.barrier"(%v) <{operandSegmentSizes = array<i32: 0, 0, 1>, reductionOp = #nvvm.reduction<popc>}> : (i32) -> i32
// GENERIC-NEXT: "nvvm.barrier.arrive"(%n) : (i32) -> ()
// GENERIC-NEXT: "nvvm.barrier.arrive"(%id, %n) : (i32, i32) -> ()
// GENERIC-NEXT: "nvvm.bar.warp.sync"(%all) : (i32) -> ()
// GENERIC-NEXT: "nvvm.cluster.arrive"() : () -> ()
// GENERIC-NEXT: "nvvm.cluster.wait"() : () -> ()
// GENERIC-NEXT: "nvvm.cluster.arrive.relaxed"() <{aligned}> : () -> ()
// GENERIC-NEXT: "nvvm.cluster.wait"() <{aligned}> : () -> ()
// GENERIC-NEXT: "nvvm.fence.proxy"() <{kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}> : () -> ()
// GENERIC:      %e1 = "nvvm.elect.sync"(%all) : (i32) -> i1
// GENERIC-NEXT: %remote = "nvvm.mapa"(%bar, %rank) : (!llvm.ptr<3>, i32) -> !llvm.ptr<7>
// GENERIC:      %tid = "nvvm.read.ptx.sreg.tid.x"() <{range = #llvm.constant_range<i32, 0, 160>}> : () -> i32
// GENERIC-NEXT: %tidy = "nvvm.read.ptx.sreg.tid.y"() : () -> i32
