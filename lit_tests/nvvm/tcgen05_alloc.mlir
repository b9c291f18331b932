// tcgen05 allocation, fences and waits: custom form, generic form, round trip.
// Expected text is what mlir-opt-22 prints for the same input (defaults elided in
// the custom form, spelled out in the generic form). Upstream parse and the
// PTX/ptxas route are checked by tests/test_nvvm_upstream.py.
// RUN: xdsl-tmem-opt %s | filecheck %s
// RUN: XDSL_TMEM_ROUNDTRIP
// RUN: XDSL_TMEM_GENERIC

module {
  llvm.func @alloc_cg1(%slot: !llvm.ptr<3>, %gslot: !llvm.ptr, %n: i32, %t: !llvm.ptr<6>) attributes {nvvm.kernel} {
    %c512 = llvm.mlir.constant(512 : i32) : i32
    nvvm.tcgen05.alloc %slot, %c512 : !llvm.ptr<3>, i32
    nvvm.tcgen05.alloc %gslot, %n {group = #nvvm.cta_group<cta_1>} : !llvm.ptr, i32
    nvvm.tcgen05.relinquish_alloc_permit
    nvvm.tcgen05.fence <before>
    nvvm.barrier0
    nvvm.tcgen05.fence <after>
    nvvm.tcgen05.wait <load>
    nvvm.tcgen05.wait <store>
    nvvm.tcgen05.dealloc %t, %c512 : !llvm.ptr<6>, i32
    llvm.return
  }

  // cta_group::2 lives in its own kernel: ptxas rejects a kernel that mixes both.
  llvm.func @alloc_cg2(%slot2: !llvm.ptr<3>, %t2: !llvm.ptr<6>) attributes {nvvm.kernel} {
    %c256 = llvm.mlir.constant(256 : i32) : i32
    nvvm.tcgen05.alloc %slot2, %c256 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i32
    nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
    nvvm.tcgen05.dealloc %t2, %c256 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>, i32
    llvm.return
  }
}

// CHECK-LABEL: llvm.func @alloc_cg1
// CHECK:       nvvm.tcgen05.alloc %slot, %c512 : !llvm.ptr<3>, i32
// CHECK-NEXT:  nvvm.tcgen05.alloc %gslot, %n : !llvm.ptr, i32
// CHECK-NEXT:  nvvm.tcgen05.relinquish_alloc_permit{{$}}
// CHECK-NEXT:  nvvm.tcgen05.fence <before>
// CHECK-NEXT:  nvvm.barrier0
// CHECK-NEXT:  nvvm.tcgen05.fence <after>
// CHECK-NEXT:  nvvm.tcgen05.wait <load>
// CHECK-NEXT:  nvvm.tcgen05.wait <store>
// CHECK-NEXT:  nvvm.tcgen05.dealloc %t, %c512 : !llvm.ptr<6>, i32
// CHECK-LABEL: llvm.func @alloc_cg2
// CHECK:       nvvm.tcgen05.alloc %slot2, %c256 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i32
// CHECK-NEXT:  nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
// CHECK-NEXT:  nvvm.tcgen05.dealloc %t2, %c256 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>, i32

// GENERIC:      "nvvm.tcgen05.alloc"(%slot, %c512) <{group = #nvvm.cta_group<cta_1>}> : (!llvm.ptr<3>, i32) -> ()
// GENERIC-NEXT: "nvvm.tcgen05.alloc"(%gslot, %n) <{group = #nvvm.cta_group<cta_1>}> : (!llvm.ptr, i32) -> ()
// GENERIC-NEXT: "nvvm.tcgen05.relinquish_alloc_permit"() <{group = #nvvm.cta_group<cta_1>}> : () -> ()
// GENERIC-NEXT: "nvvm.tcgen05.fence"() <{kind = #nvvm.tcgen05_fence<before>}> : () -> ()
// GENERIC-NEXT: "nvvm.barrier0"() : () -> ()
// GENERIC-NEXT: "nvvm.tcgen05.fence"() <{kind = #nvvm.tcgen05_fence<after>}> : () -> ()
// GENERIC-NEXT: "nvvm.tcgen05.wait"() <{kind = #nvvm.tcgen05_wait<load>}> : () -> ()
// GENERIC-NEXT: "nvvm.tcgen05.wait"() <{kind = #nvvm.tcgen05_wait<store>}> : () -> ()
// GENERIC-NEXT: "nvvm.tcgen05.dealloc"(%t, %c512) <{group = #nvvm.cta_group<cta_1>}> : (!llvm.ptr<6>, i32) -> ()
// GENERIC:      "nvvm.tcgen05.alloc"(%slot2, %c256) <{group = #nvvm.cta_group<cta_2>}> : (!llvm.ptr<3>, i32) -> ()
// GENERIC-NEXT: "nvvm.tcgen05.relinquish_alloc_permit"() <{group = #nvvm.cta_group<cta_2>}> : () -> ()
// GENERIC-NEXT: "nvvm.tcgen05.dealloc"(%t2, %c256) <{group = #nvvm.cta_group<cta_2>}> : (!llvm.ptr<6>, i32) -> ()
