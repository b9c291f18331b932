// RUN: xdsl-tmem-opt %s -p lower-tmem | filecheck %s

// TmemStage (docs/semantics.md §3.7): offset = base + index * stride; the 16x256b loads
// and stores address offset + column, the lower half at + (16 << 16) = 1048576
// (§1.4). Upstream tcgen05.ld/st move i32 registers; f32 views are bitcasts.

llvm.func @stage(%base: i32, %index: i32, %col: i32) {
  %s = tmem.tmem_stage.create %base, %index : !tmem.tmem_stage<2, 256, 1>
  %off = tmem.tmem_stage.offset %s : !tmem.tmem_stage<2, 256, 1>
  %idx = tmem.tmem_stage.index %s : !tmem.tmem_stage<2, 256, 1>
  %addr = tmem.tmem_stage.address %s : !tmem.tmem_stage<2, 256, 1>
  "test.op"(%off, %idx, %addr) : (i32, i32, !llvm.ptr<6>) -> ()
  llvm.return
}
// CHECK-LABEL: llvm.func @stage(
// CHECK:         %[[S:.*]] = arith.constant 256 : i32
// CHECK-NEXT:    %[[M:.*]] = arith.muli %index{{.*}}, %[[S]] : i32
// CHECK-NEXT:    %[[OFF:.*]] = arith.addi %base{{.*}}, %[[M]] : i32
// CHECK:         %[[P:.*]] = llvm.inttoptr %[[OFF]] : i32 to !llvm.ptr<6>
// CHECK-NEXT:    "test.op"(%[[OFF]], %index{{.*}}, %[[P]]) : (i32, i32, !llvm.ptr<6>) -> ()

llvm.func @from_offset(%offset: i32, %index: i32) {
  %s = tmem.tmem_stage.from_offset %offset, %index : !tmem.tmem_stage<4, 128, 1>
  %off = tmem.tmem_stage.offset %s : !tmem.tmem_stage<4, 128, 1>
  "test.op"(%off) : (i32) -> ()
  llvm.return
}
// from_offset back-computes base = offset - index * 128, so that offset() == offset.
// CHECK-LABEL: llvm.func @from_offset(
// CHECK:         %[[S:.*]] = arith.constant 128 : i32
// CHECK-NEXT:    %[[M:.*]] = arith.muli %index{{.*}}, %[[S]] : i32
// CHECK-NEXT:    %[[BASE:.*]] = arith.subi %offset, %[[M]] : i32
// CHECK-NEXT:    %[[OFF:.*]] = arith.addi %[[BASE]], %[[M]] : i32
// CHECK-NEXT:    "test.op"(%[[OFF]]) : (i32) -> ()

llvm.func @loads(%slot: !llvm.ptr<3>, %col: i32) {
  %a = tmem.from_shared %slot : !tmem.allocation<1, 512>
  %c1 = arith.constant 1 : i32
  %s = tmem.tmem_stage.from_alloc %a, %c1 : !tmem.allocation<1, 512> -> !tmem.tmem_stage<2, 256, 1>
  %u = tmem.tmem_stage.load_upper %s[%col] : !tmem.tmem_stage<2, 256, 1> -> vector<16xf32>
  %l = tmem.tmem_stage.load_lower %s[%col] repeat 2 : !tmem.tmem_stage<2, 256, 1> -> vector<8xi32>
  tmem.wait_load
  tmem.tmem_stage.store_upper %s, %u : !tmem.tmem_stage<2, 256, 1>, vector<16xf32>
  tmem.tmem_stage.store_lower %s, %l repeat 2 : !tmem.tmem_stage<2, 256, 1>, vector<8xi32>
  tmem.wait_store
  llvm.return
}
// A constant index folds into the offset: base + 1 * 256.
// CHECK-LABEL: llvm.func @loads(
// CHECK:         %[[A:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK:         %[[C256:.*]] = arith.constant 256 : i32
// CHECK-NEXT:    %[[OFF:.*]] = arith.addi %[[A]], %[[C256]] : i32
// CHECK-NEXT:    %[[UA:.*]] = arith.addi %[[OFF]], %col{{.*}} : i32
// CHECK-NEXT:    %[[UP:.*]] = llvm.inttoptr %[[UA]] : i32 to !llvm.ptr<6>
// CHECK-NEXT:    %[[UR:.*]] = nvvm.tcgen05.ld %[[UP]] {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
// CHECK-NEXT:    %{{.*}} = llvm.bitcast %[[UR]] : vector<16xi32> to vector<16xf32>
// CHECK:         %[[LANE16:.*]] = arith.constant 1048576 : i32
// CHECK-NEXT:    %[[LA:.*]] = arith.addi %{{.*}}, %[[LANE16]] : i32
// CHECK-NEXT:    %[[LP:.*]] = llvm.inttoptr %[[LA]] : i32 to !llvm.ptr<6>
// CHECK-NEXT:    %[[L:.*]] = nvvm.tcgen05.ld %[[LP]] {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<8xi32>
// CHECK-NEXT:    nvvm.tcgen05.wait <load>
// CHECK:         %[[UI:.*]] = llvm.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK:         nvvm.tcgen05.st %{{.*}}, %[[UI]] {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
// CHECK:         nvvm.tcgen05.st %{{.*}}, %[[L]] {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<8xi32>
// CHECK-NEXT:    nvvm.tcgen05.wait <store>

llvm.func @tensor(%base: i32, %index: i32) {
  %s = tmem.tmem_stage.create %base, %index : !tmem.tmem_stage<2, 256, 2>
  %t = tmem.tmem_stage.tensor %s : !tmem.tmem_stage<2, 256, 2> -> !tmem.tensor<256x256xf32, 2>
  %o = tmem.tensor.offset %t : !tmem.tensor<256x256xf32, 2>
  %p = tmem.tensor.address %t : !tmem.tensor<256x256xf32, 2>
  "test.op"(%o, %p) : (i32, !llvm.ptr<6>) -> ()
  llvm.return
}
// CHECK-LABEL: llvm.func @tensor(
// CHECK:         %[[OFF:.*]] = arith.addi %base{{.*}}, %{{.*}} : i32
// CHECK-NEXT:    %[[P:.*]] = llvm.inttoptr %[[OFF]] : i32 to !llvm.ptr<6>
// CHECK-NEXT:    "test.op"(%[[OFF]], %[[P]]) : (i32, !llvm.ptr<6>) -> ()
