// RUN: xdsl-tmem-opt %s -t ptx --split-input-file | filecheck %s

// tcgen05 instructions, spelled as llc-22 spells them in its PTX of the reference program
// (committed here as tests/ptx_corpus/nvvm_ops_examples.ptx).
llvm.func @cg1(%slot: !llvm.ptr<3>, %t: !llvm.ptr<6>, %at: !llvm.ptr<6>, %ad: i64, %bd: i64, %idesc: i32, %en: i1, %mask: i16) attributes {nvvm.kernel} {
  %c512 = llvm.mlir.constant(512 : i32) : i32
  nvvm.tcgen05.alloc %slot, %c512 : !llvm.ptr<3>, i32
  nvvm.tcgen05.relinquish_alloc_permit
  nvvm.tcgen05.fence <before>
  nvvm.tcgen05.fence <after>
  %v = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
  %s = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
  %p = nvvm.tcgen05.ld %t pack {shape = #nvvm.tcgen05_ldst_shape<shape_16x64b>} : vector<4xi32>
  %off = llvm.mlir.constant(2 : i64) : i64
  %h = nvvm.tcgen05.ld %t, %off {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<2xi32>
  nvvm.tcgen05.wait <load>
  nvvm.tcgen05.st %t, %v unpack {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
  nvvm.tcgen05.st %t, %h, %off {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<2xi32>
  nvvm.tcgen05.wait <store>
  nvvm.tcgen05.mma %t, %ad, %bd, %idesc, %en {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
  nvvm.tcgen05.mma %t, %at, %bd, %idesc, %en {kind = #nvvm.tcgen05_mma_kind<tf32>, ctaGroup = #nvvm.cta_group<cta_1>, aShift, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
  %sc = llvm.mlir.constant(3 : i64) : i64
  nvvm.tcgen05.mma %t, %ad, %bd, %idesc, %en scale = %sc {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, i64)
  %lanes = llvm.mlir.constant(dense<0> : vector<4xi32>) : vector<4xi32>
  nvvm.tcgen05.mma %t, %ad, %bd, %idesc, %en mask = %lanes {kind = #nvvm.tcgen05_mma_kind<i8>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, vector<4xi32>)
  nvvm.tcgen05.commit %slot : !llvm.ptr<3>
  nvvm.tcgen05.commit %slot, multicast_mask = %mask : !llvm.ptr<3>, i16
  nvvm.tcgen05.cp %t, %ad {shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}
  nvvm.tcgen05.cp %t, %ad {shape = #nvvm.tcgen05_cp_shape<shape_64x128b>, multicast = #nvvm.tcgen05_cp_multicast<warpx2_01_23>}
  nvvm.tcgen05.shift %t : !llvm.ptr<6>
  nvvm.tcgen05.dealloc %t, %c512 : !llvm.ptr<6>, i32
  llvm.return
}
// CHECK:      tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r[[SLOT:[0-9]+]]], 512;
// CHECK-NEXT: tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
// CHECK-NEXT: tcgen05.fence::before_thread_sync;
// CHECK-NEXT: tcgen05.fence::after_thread_sync;
// 16x256b.x4: 4 x 4 = 16 registers; 32x32b.x1: one; 16x64b.x4 pack: 4; 16x32bx2.x2 with its immediate.
// CHECK-NEXT: tcgen05.ld.sync.aligned.16x256b.x4.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r[[T:[0-9]+]]];
// CHECK-NEXT: tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r{{[0-9]+}}}, [%r[[T]]];
// CHECK-NEXT: tcgen05.ld.sync.aligned.16x64b.x4.pack::16b.b32 {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, [%r[[T]]];
// CHECK-NEXT: tcgen05.ld.sync.aligned.16x32bx2.x2.b32 {%r[[H0:[0-9]+]], %r[[H1:[0-9]+]]}, [%r[[T]]], 2;
// CHECK-NEXT: tcgen05.wait::ld.sync.aligned;
// CHECK-NEXT: tcgen05.st.sync.aligned.16x256b.x4.unpack::16b.b32 [%r[[T]]], {%r{{.*}}};
// CHECK-NEXT: tcgen05.st.sync.aligned.16x32bx2.x2.b32 [%r[[T]]], 2, {%r[[H0]], %r[[H1]]};
// CHECK-NEXT: tcgen05.wait::st.sync.aligned;
// llc's default collector is discard; A in TMEM is bracketed; the scale is an immediate.
// CHECK-NEXT: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [%r[[T]]], %rd[[AD:[0-9]+]], %rd[[BD:[0-9]+]], %r[[I:[0-9]+]], %p[[E:[0-9]+]];
// CHECK-NEXT: tcgen05.mma.cta_group::1.kind::tf32.collector::a::lastuse.ashift [%r[[T]]], [%r{{[0-9]+}}], %rd[[BD]], %r[[I]], %p[[E]];
// CHECK-NEXT: tcgen05.mma.cta_group::1.kind::f16.collector::a::discard [%r[[T]]], %rd[[AD]], %rd[[BD]], %r[[I]], %p[[E]], 3;
// The disable-output-lane mask is four registers (cta_group 1).
// CHECK-NEXT: mov.b32 %r[[Z:[0-9]+]], 0;
// CHECK:      tcgen05.mma.cta_group::1.kind::i8.collector::a::discard [%r[[T]]], %rd[[AD]], %rd[[BD]], %r[[I]], {%r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}, %r{{[0-9]+}}}, %p[[E]];
// CHECK-NEXT: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r[[SLOT]]];
// The multicast mask is a .b16 register (docs/ptx-nvvm.md §1.6).
// CHECK-NEXT: tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r[[SLOT]]], %rs{{[0-9]+}};
// CHECK-NEXT: tcgen05.cp.cta_group::1.128x256b [%r[[T]]], %rd[[AD]];
// CHECK-NEXT: tcgen05.cp.cta_group::1.64x128b.warpx2::01_23 [%r[[T]]], %rd[[AD]];
// CHECK-NEXT: tcgen05.shift.cta_group::1.down [%r[[T]]];
// CHECK-NEXT: tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r[[T]], 512;

// -----

llvm.func @cg2(%slot: !llvm.ptr<3>, %t: !llvm.ptr<6>, %ad: i64, %bd: i64, %idesc: i32, %mask: i16) attributes {nvvm.kernel} {
  %c256 = llvm.mlir.constant(256 : i32) : i32
  %true = llvm.mlir.constant(true) : i1
  nvvm.tcgen05.alloc %slot, %c256 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i32
  nvvm.tcgen05.mma %t, %ad, %bd, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, i64, i64, i32, i1)
  nvvm.tcgen05.commit %slot, multicast_mask = %mask {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<3>, i16
  nvvm.tcgen05.dealloc %t, %c256 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>, i32
  llvm.return
}
// CHECK:      tcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r{{[0-9]+}}], 256;
// enable-input-d may be an immediate (docs/ptx-nvvm.md §1.7).
// CHECK-NEXT: tcgen05.mma.cta_group::2.kind::f16.collector::a::discard [%r{{[0-9]+}}], %rd{{[0-9]+}}, %rd{{[0-9]+}}, %r{{[0-9]+}}, 1;
// CHECK-NEXT: tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r{{[0-9]+}}], %rs{{[0-9]+}};
// CHECK-NEXT: tcgen05.dealloc.cta_group::2.sync.aligned.b32 %r{{[0-9]+}}, 256;
