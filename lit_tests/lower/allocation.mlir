// RUN: xdsl-tmem-opt %s -p lower-tmem | filecheck %s --check-prefixes=CHECK,STRICT
// RUN: xdsl-tmem-opt %s -p 'lower-tmem{fence-policy=mojo}' | filecheck %s --check-prefixes=CHECK,MOJO
// RUN: xdsl-tmem-opt %s -p 'lower-tmem{fence-policy=mojo}' | filecheck %s --check-prefix=NOFENCE
// NOFENCE-NOT: tcgen05.fence

// TmemAllocation (docs/semantics.md §3.1): the whole warp allocates into the shared slot,
// synchronises the warp, and reads the address back; relinquish; dealloc takes the
// address as a TMEM pointer. cta_group 1 is upstream's default (no group attribute).

llvm.func @cg1(%slot: !llvm.ptr<3>) {
  %a = tmem.alloc %slot : !tmem.allocation<1, 256>
  %b = tmem.from_shared %slot : !tmem.allocation<1, 256>
  %x = tmem.base_address %b : !tmem.allocation<1, 256>
  "test.op"(%x) : (i32) -> ()
  tmem.relinquish %a : !tmem.allocation<1, 256>
  tmem.dealloc %a : !tmem.allocation<1, 256>
  llvm.return
}
// CHECK-LABEL: llvm.func @cg1(
// CHECK:         %[[COLS:.*]] = arith.constant 256 : i32
// CHECK-NEXT:    nvvm.tcgen05.alloc %{{.*}}, %[[COLS]] : !llvm.ptr<3>, i32
// STRICT-NEXT:   nvvm.tcgen05.fence <before>
// CHECK-NEXT:    %[[ALL:.*]] = arith.constant -1 : i32
// CHECK-NEXT:    nvvm.bar.warp.sync %[[ALL]] : i32
// STRICT-NEXT:   nvvm.tcgen05.fence <after>
// CHECK-NEXT:    %[[ADDR:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK-NEXT:    %[[B:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK-NEXT:    "test.op"(%[[B]]) : (i32) -> ()
// CHECK-NEXT:    nvvm.tcgen05.relinquish_alloc_permit
// CHECK-NEXT:    %[[P:.*]] = llvm.inttoptr %[[ADDR]] : i32 to !llvm.ptr<6>
// CHECK-NEXT:    nvvm.tcgen05.dealloc %[[P]], %[[COLS]] : !llvm.ptr<6>, i32
// CHECK-NEXT:    llvm.return

llvm.func @cg2(%slot: !llvm.ptr<3>) {
  %a = tmem.alloc %slot : !tmem.allocation<2, 512>
  tmem.relinquish %a : !tmem.allocation<2, 512>
  tmem.dealloc %a : !tmem.allocation<2, 512>
  llvm.return
}
// CHECK-LABEL: llvm.func @cg2(
// CHECK:         nvvm.tcgen05.alloc %{{.*}}, %{{.*}} {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i32
// CHECK:         nvvm.tcgen05.relinquish_alloc_permit {group = #nvvm.cta_group<cta_2>}
// CHECK:         nvvm.tcgen05.dealloc %{{.*}}, %{{.*}} {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>, i32
