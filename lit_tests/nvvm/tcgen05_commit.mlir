// tcgen05.commit with and without multicast_mask, cta_group 1 and 2 (separate
// kernels: ptxas rejects mixing them). Expected text is mlir-opt-22's;
// tests/test_nvvm_upstream.py runs it through mlir-opt-22, llc-22 and ptxas.
// RUN: xdsl-tmem-opt %s | filecheck %s
// RUN: XDSL_TMEM_ROUNDTRIP
// RUN: XDSL_TMEM_GENERIC

module {
  llvm.func @commit_cg1(%bar: !llvm.ptr<3>, %mask: i16) attributes {nvvm.kernel} {
    nvvm.tcgen05.commit %bar : !llvm.ptr<3>
    nvvm.tcgen05.commit %bar {group = #nvvm.cta_group<cta_1>} : !llvm.ptr<3>
    nvvm.tcgen05.commit %bar, multicast_mask = %mask : !llvm.ptr<3>, i16
    llvm.return
  }

  llvm.func @commit_cg2(%bar2: !llvm.ptr<3>) attributes {nvvm.kernel} {
    %pair = llvm.mlir.constant(3 : i16) : i16
    nvvm.tcgen05.commit %bar2 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>
    nvvm.tcgen05.commit %bar2, multicast_mask = %pair {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
    llvm.return
  }
}

// CHECK-LABEL: llvm.func @commit_cg1
// CHECK:      nvvm.tcgen05.commit %bar : !llvm.ptr<3>
// CHECK-NEXT: nvvm.tcgen05.commit %bar : !llvm.ptr<3>
// CHECK-NEXT: nvvm.tcgen05.commit %bar, multicast_mask = %mask : !llvm.ptr<3>, i16
// CHECK-LABEL: llvm.func @commit_cg2
// CHECK:      nvvm.tcgen05.commit %bar2 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>
// CHECK-NEXT: nvvm.tcgen05.commit %bar2, multicast_mask = %pair {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16

// GENERIC:      "nvvm.tcgen05.commit"(%bar) <{group = #nvvm.cta_group<cta_1>}> : (!llvm.ptr<3>) -> ()
// GENERIC:      "nvvm.tcgen05.commit"(%bar, %mask) <{group = #nvvm.cta_group<cta_1>}> : (!llvm.ptr<3>, i16) -> ()
// GENERIC:      "nvvm.tcgen05.commit"(%bar2) <{group = #nvvm.cta_group<cta_2>}> : (!llvm.ptr<3>) -> ()
// GENERIC-NEXT: "nvvm.tcgen05.commit"(%bar2, %pair) <{group = #nvvm.cta_group<cta_2>}> : (!llvm.ptr<3>, i16) -> ()
