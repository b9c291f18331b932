// RUN: xdsl-tmem-opt %s -t ptx | filecheck %s
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_103a}' | filecheck %s
// ptxas assembles it for every target:
// REQUIRES: ptxas
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_100a}' --ptxas 2>&1 >/dev/null | filecheck %s --check-prefix=PTXAS
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_100f}' --ptxas 2>&1 >/dev/null | filecheck %s --check-prefix=PTXAS
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_103a}' --ptxas 2>&1 >/dev/null | filecheck %s --check-prefix=PTXAS
// RUN: xdsl-tmem-opt %s -t 'ptx{arch=sm_110a}' --ptxas 2>&1 >/dev/null | filecheck %s --check-prefix=PTXAS
// PTXAS: ptxas: k (sm_1{{[01]}}{{[0-9]}}{{[af]}}): {{[0-9]+}} registers

// The nvvm TMA ops as llc-22 spells them (mlir-translate-22 --mlir-to-llvmir | llc-22
// -mcpu=sm_100a): `.tile` on the intrinsic forms, none on the predicated ones (inline
// PTX upstream), the tensor map a 64-bit generic address, shared addresses 32-bit (llc:
// 64-bit), a small offset folded into the shared address.
llvm.func @k(%smem: !llvm.ptr<3>, %desc: !llvm.ptr, %bar: !llvm.ptr<3>, %x: i32, %y: i32, %mask: i16, %hint: i64, %p: i1, %g: !llvm.ptr<1>, %n: i32) attributes {nvvm.kernel} {
  %c2 = llvm.mlir.constant(2 : i32) : i32
  %dst = llvm.getelementptr %smem[1024] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  %cl = llvm.addrspacecast %dst : !llvm.ptr<3> to !llvm.ptr<7>
  nvvm.prefetch tensormap, %desc : !llvm.ptr
  nvvm.prefetch tensormap in_param_space, %desc : !llvm.ptr
  nvvm.cp.async.bulk.tensor.shared.cluster.global %dst, %desc, %bar, box[%x, %y] {isCTAOnly = true} : !llvm.ptr<3>, !llvm.ptr
  nvvm.cp.async.bulk.tensor.shared.cluster.global %cl, %desc, %bar, box[%x, %y, %c2] multicast_mask = %mask l2_cache_hint = %hint {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<7>, !llvm.ptr
  nvvm.cp.async.bulk.tensor.shared.cluster.global %cl, %desc, %bar, box[%x] predicate = %p : !llvm.ptr<7>, !llvm.ptr
  nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %dst, box[%x, %y] l2_cache_hint = %hint : !llvm.ptr, <3>
  nvvm.cp.async.bulk.tensor.global.shared.cta %desc, %smem, box[%x], predicate = %p : !llvm.ptr, <3>
  nvvm.cp.async.bulk.commit.group
  nvvm.cp.async.bulk.wait_group 0 {read}
  nvvm.cp.async.bulk.wait_group 2
  nvvm.cp.async.bulk.tensor.reduce %desc, %dst, box[%x, %y] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, <3>
  nvvm.cp.async.bulk.tensor.reduce %desc, %smem, box[%x] l2_cache_hint = %hint {redKind = #nvvm.tma_redux_kind<dec>} : !llvm.ptr, <3>
  nvvm.cp.async.bulk.shared.cluster.global %cl, %g, %bar, %n : !llvm.ptr<7>, <1>
  nvvm.cp.async.bulk.shared.cluster.global %dst, %g, %bar, %n : !llvm.ptr<3>, <1>
  nvvm.cp.async.bulk.global.shared.cta %g, %dst, %n : <1>, <3>
  llvm.return
}
// CHECK:      prefetch.tensormap [%[[DESC:rd[0-9]+]]];
// CHECK-NEXT: cvta.to.param.u64 %[[PARAM:rd[0-9]+]], %[[DESC]];
// CHECK-NEXT: prefetch.param.tensormap [%[[PARAM]]];
// CHECK:      cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%[[SMEM:r[0-9]+]]+1024], [%[[DESC]], {%[[X:r[0-9]+]], %[[Y:r[0-9]+]]}], [%[[BAR:r[0-9]+]]];
// CHECK:      cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint.cta_group::2 [%{{r[0-9]+}}], [%[[DESC]], {%[[X]], %[[Y]], 2}], [%[[BAR]]], %[[MASK:rs[0-9]+]], %[[HINT:rd[0-9]+]];
// CHECK-NEXT: @%[[P:p[0-9]+]] cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [%{{r[0-9]+}}], [%[[DESC]], {%[[X]]}], [%[[BAR]]];
// CHECK-NEXT: cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group.L2::cache_hint [%[[DESC]], {%[[X]], %[[Y]]}], [%[[SMEM]]+1024], %[[HINT]];
// CHECK-NEXT: @%[[P]] cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [%[[DESC]], {%[[X]]}], [%[[SMEM]]];
// CHECK-NEXT: cp.async.bulk.commit_group;
// CHECK-NEXT: cp.async.bulk.wait_group.read 0;
// CHECK-NEXT: cp.async.bulk.wait_group 2;
// CHECK-NEXT: cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%[[DESC]], {%[[X]], %[[Y]]}], [%[[SMEM]]+1024];
// CHECK-NEXT: cp.reduce.async.bulk.tensor.1d.global.shared::cta.dec.tile.bulk_group.L2::cache_hint [%[[DESC]], {%[[X]]}], [%[[SMEM]]], %[[HINT]];
// CHECK:      cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%{{r[0-9]+}}], [%[[G:rd[0-9]+]]], %[[N:r[0-9]+]], [%[[BAR]]];
// CHECK-NEXT: cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes [%[[SMEM]]+1024], [%[[G]]], %[[N]], [%[[BAR]]];
// CHECK-NEXT: cp.async.bulk.global.shared::cta.bulk_group [%[[G]]], [%[[SMEM]]+1024], %[[N]];
