// RUN: xdsl-tmem-opt %s -t ptx | filecheck %s

// mbarrier, named barriers, cluster barriers, fences, elect, mapa and special registers,
// spelled as llc-22 spells them in its PTX of the reference program (committed here as
// tests/ptx_corpus/nvvm_ops_examples.ptx).
llvm.func @k(%bar: !llvm.ptr<3>, %gbar: !llvm.ptr, %cbar: !llvm.ptr<7>, %phase: i32, %tx: i32, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %c128 = llvm.mlir.constant(128 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  %ticks = llvm.mlir.constant(1000 : i32) : i32
  nvvm.mbarrier.init %bar, %c128 : !llvm.ptr<3>, i32
  nvvm.mbarrier.init %gbar, %c128 : !llvm.ptr, i32
  nvvm.fence.mbarrier.init
  %state = nvvm.mbarrier.arrive %bar : !llvm.ptr<3> -> i64
  nvvm.mbarrier.arrive %bar, %c1 : !llvm.ptr<3>
  nvvm.mbarrier.arrive %cbar {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
  %s2 = nvvm.mbarrier.arrive.expect_tx %bar, %tx : !llvm.ptr<3>, i32 -> i64
  nvvm.mbarrier.expect_tx %bar, %tx : !llvm.ptr<3>, i32
  nvvm.mbarrier.try_wait.parity %bar, %phase, %ticks : !llvm.ptr<3>, i32, i32
  %done = nvvm.mbarrier.test.wait %bar, %phase : !llvm.ptr<3>, i32 -> i1
  nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  nvvm.barrier0
  nvvm.barrier id = %c1 number_of_threads = %c128
  nvvm.barrier.arrive id = %c1 number_of_threads = %c128
  nvvm.cluster.arrive {aligned}
  nvvm.cluster.wait {aligned}
  %e = nvvm.elect.sync -> i1
  %rank = nvvm.read.ptx.sreg.cluster.ctarank : i32
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %remote = nvvm.mapa %bar, %rank : !llvm.ptr<3> -> !llvm.ptr<7>
  nvvm.mbarrier.arrive %remote {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
  %x = llvm.zext %done : i1 to i32
  %y = llvm.zext %e : i1 to i32
  %z = llvm.add %x, %y : i32
  %w = llvm.add %z, %tid : i32
  llvm.store %w, %out : i32, !llvm.ptr<1>
  %q = llvm.add %state, %s2 : i64
  %o8 = llvm.getelementptr %out[2] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i32
  llvm.store %q, %o8 : i64, !llvm.ptr<1>
  llvm.return
}
// CHECK:      mbarrier.init.shared.b64 [%r[[B:[0-9]+]]], 128;
// CHECK-NEXT: mbarrier.init.b64 [%rd[[G:[0-9]+]]], 128;
// CHECK-NEXT: fence.mbarrier_init.release.cluster;
// A used state gets a register, an unused one the sink `_`.
// CHECK-NEXT: mbarrier.arrive.shared.b64 %rd[[S:[0-9]+]], [%r[[B]]];
// CHECK-NEXT: mbarrier.arrive.shared.b64 _, [%r[[B]]], 1;
// The cluster form always takes `_` and a count (1 by default).
// CHECK-NEXT: mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r[[C:[0-9]+]]], 1;
// CHECK-NEXT: mbarrier.arrive.expect_tx.shared.b64 %rd[[S2:[0-9]+]], [%r[[B]]], %r[[TX:[0-9]+]];
// CHECK-NEXT: mbarrier.expect_tx.relaxed.cta.shared.b64 [%r[[B]]], %r[[TX]];
// The blocking wait: one probe and a branch back to it.
// CHECK-NEXT: [[WAIT:\$L[0-9]+]]:
// CHECK-NEXT: mbarrier.try_wait.parity.shared.b64 %p[[P:[0-9]+]], [%r[[B]]], %r[[PH:[0-9]+]], 1000;
// CHECK-NEXT: @!%p[[P]] bra [[WAIT]];
// CHECK-NEXT: mbarrier.test_wait.parity.shared.b64 %p{{[0-9]+}}, [%r[[B]]], %r[[PH]];
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync 0;
// CHECK-NEXT: bar.sync 1, 128;
// CHECK-NEXT: bar.arrive 1, 128;
// CHECK-NEXT: barrier.cluster.arrive.aligned;
// CHECK-NEXT: barrier.cluster.wait.aligned;
// CHECK-NEXT: elect.sync _|%p{{[0-9]+}}, -1;
// CHECK-NEXT: mov.u32 %r[[RANK:[0-9]+]], %cluster_ctarank;
// CHECK-NEXT: mov.u32 %r{{[0-9]+}}, %tid.x;
// 32-bit shared addresses: mapa.shared::cluster.u32.
// CHECK-NEXT: mapa.shared::cluster.u32 %r[[R:[0-9]+]], %r[[B]], %r[[RANK]];
// CHECK-NEXT: mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r[[R]]], 1;
// An i1 widened to i32 is a select of 1 and 0.
// CHECK-NEXT: selp.b32 %r{{[0-9]+}}, 1, 0, %p{{[0-9]+}};
// CHECK:      st.global.b32 [%rd{{[0-9]+}}], %r{{[0-9]+}};
// CHECK-NEXT: add.s64 %rd[[Q:[0-9]+]], %rd[[S]], %rd[[S2]];
// A constant getelementptr folds into the address: out + 2 * 4 bytes.
// CHECK-NEXT: st.global.b64 [%rd{{[0-9]+}}+8], %rd[[Q]];
