// RUN: xdsl-tmem-opt %s -t ptx --split-input-file | filecheck %s

// Divergence reaching a loop bound through block arguments must give the loop a plain
// `bra` back edge (`bra.uni` on a lane-dependent condition is undefined behaviour, PTX
// ISA "bra"); a loop over uniform bounds keeps `bra.uni`. Each case probes a value with
// an scf.for bounded by it: the back edge is the only conditional branch that can be
// bra.uni (forward conditional branches are always a plain bra, docs/ptx_backend.md).
// tid.x differs between the lanes of a warp.

// A lane's tid.x passed through a cf.br block argument.
llvm.func @through_cf_br(%out: !llvm.ptr<1>) attributes {nvvm.kernel, nvvm.maxntid = array<i32: 128, 1, 1>} {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  cf.br ^bb1(%tid : i32)
^bb1(%x: i32):
  scf.for %j = %c0 to %x step %c1 : i32 {
    llvm.store %j, %out : i32, !llvm.ptr<1>
  }
  llvm.return
}
// CHECK-LABEL: .entry through_cf_br(
// CHECK-NOT:   @{{!?}}%p{{[0-9]+}} bra.uni
// CHECK:       .pragma "nounroll";
// CHECK:       @%p{{[0-9]+}} bra $L
// CHECK-NOT:   @{{!?}}%p{{[0-9]+}} bra.uni
// CHECK:       ret;

// -----

// tid.x passed by one side of a uniform llvm.cond_br: a loop over the parameter %n in
// the join is uniform, one over the block argument is not.
llvm.func @through_llvm_cond_br(%u: i1, %n: i32, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c0 = llvm.mlir.constant(0 : i32) : i32
  %c1 = llvm.mlir.constant(1 : i32) : i32
  llvm.cond_br %u, ^bb1(%tid : i32), ^bb1(%c0 : i32)
^bb1(%x: i32):
  scf.for %j = %c0 to %n step %c1 : i32 {
    llvm.store %j, %out : i32, !llvm.ptr<1>
  }
  scf.for %j = %c0 to %x step %c1 : i32 {
    llvm.store %j, %out : i32, !llvm.ptr<1>
  }
  llvm.return
}
// CHECK-LABEL: .entry through_llvm_cond_br(
// CHECK:       .pragma "nounroll";
// CHECK:       @%p{{[0-9]+}} bra.uni $L
// CHECK:       .pragma "nounroll";
// CHECK-NOT:   @{{!?}}%p{{[0-9]+}} bra.uni
// CHECK:       @%p{{[0-9]+}} bra $L
// CHECK-NOT:   @{{!?}}%p{{[0-9]+}} bra.uni
// CHECK:       ret;

// -----

// Sync dependence: both incoming values are constants, but lanes arrive from the two
// sides of a divergent branch, so the merged value differs between lanes.
llvm.func @join_of_divergent_branch(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %lane0 = arith.cmpi eq, %tid, %c0 : i32
  llvm.cond_br %lane0, ^a, ^b
^a:
  llvm.br ^join(%c0 : i32)
^b:
  llvm.br ^join(%c1 : i32)
^join(%x: i32):
  scf.for %j = %c0 to %x step %c1 : i32 {
    llvm.store %j, %out : i32, !llvm.ptr<1>
  }
  llvm.return
}
// CHECK-LABEL: .entry join_of_divergent_branch(
// CHECK-NOT:   @{{!?}}%p{{[0-9]+}} bra.uni
// CHECK:       .pragma "nounroll";
// CHECK:       @%p{{[0-9]+}} bra $L
// CHECK-NOT:   @{{!?}}%p{{[0-9]+}} bra.uni
// CHECK:       ret;

// -----

// The same join, reached directly by the two edges of one divergent cf.cond_br.
llvm.func @direct_join(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %lane0 = arith.cmpi eq, %tid, %c0 : i32
  cf.cond_br %lane0, ^join(%c0 : i32), ^join(%c1 : i32)
^join(%x: i32):
  scf.for %j = %c0 to %x step %c1 : i32 {
    llvm.store %j, %out : i32, !llvm.ptr<1>
  }
  llvm.return
}
// CHECK-LABEL: .entry direct_join(
// CHECK-NOT:   @{{!?}}%p{{[0-9]+}} bra.uni
// CHECK:       .pragma "nounroll";
// CHECK:       @%p{{[0-9]+}} bra $L
// CHECK-NOT:   @{{!?}}%p{{[0-9]+}} bra.uni
// CHECK:       ret;

// -----

// Temporal divergence: a loop whose exit depends on the lane; the counter is the
// same in all lanes inside the loop, but lanes leave at different iterations, so
// after the loop it differs.
llvm.func @loop_with_divergent_exit(%out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  cf.br ^head(%c0 : i32)
^head(%i: i32):
  %n = arith.addi %i, %c1 : i32
  %more = arith.cmpi ult, %n, %tid : i32
  cf.cond_br %more, ^head(%n : i32), ^exit
^exit:
  scf.for %j = %c0 to %n step %c1 : i32 {
    llvm.store %j, %out : i32, !llvm.ptr<1>
  }
  llvm.return
}
// CHECK-LABEL: .entry loop_with_divergent_exit(
// CHECK-NOT:   @{{!?}}%p{{[0-9]+}} bra.uni
// CHECK:       .pragma "nounroll";
// CHECK:       @%p{{[0-9]+}} bra $L
// CHECK-NOT:   @{{!?}}%p{{[0-9]+}} bra.uni
// CHECK:       ret;

// -----

// Still uniform: the counter of a cf loop over a parameter bound, after a divergent
// branch has reconverged (at its immediate post-dominator ^m).
llvm.func @uniform_loop_after_reconvergence(%n: i32, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %lane0 = arith.cmpi eq, %tid, %c0 : i32
  cf.cond_br %lane0, ^a, ^m
^a:
  llvm.store %c1, %out : i32, !llvm.ptr<1>
  cf.br ^m
^m:
  cf.br ^head(%c0 : i32)
^head(%i: i32):
  %next = arith.addi %i, %c1 : i32
  %more = arith.cmpi slt, %next, %n : i32
  cf.cond_br %more, ^head(%next : i32), ^e
^e:
  scf.for %j = %c0 to %next step %c1 : i32 {
    llvm.store %j, %out : i32, !llvm.ptr<1>
  }
  llvm.return
}
// CHECK-LABEL: .entry uniform_loop_after_reconvergence(
// CHECK:       .pragma "nounroll";
// CHECK:       @%p{{[0-9]+}} bra.uni $L
// CHECK:       ret;

// -----

// A divergent branch inside a uniform loop that reconverges before the loop's exit:
// every lane leaves the loop at the same iteration, so the counter stays uniform after
// it (a loop bounded by it keeps bra.uni).
llvm.func @divergent_if_in_uniform_loop(%n: i32, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
  %tid = nvvm.read.ptx.sreg.tid.x : i32
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %lane0 = arith.cmpi eq, %tid, %c0 : i32
  cf.br ^head(%c0 : i32)
^head(%i: i32):
  cf.cond_br %lane0, ^leader, ^latch
^leader:
  llvm.store %i, %out : i32, !llvm.ptr<1>
  cf.br ^latch
^latch:
  %next = arith.addi %i, %c1 : i32
  %more = arith.cmpi slt, %next, %n : i32
  cf.cond_br %more, ^head(%next : i32), ^exit
^exit:
  scf.for %j = %c0 to %next step %c1 : i32 {
    llvm.store %j, %out : i32, !llvm.ptr<1>
  }
  llvm.return
}
// CHECK-LABEL: .entry divergent_if_in_uniform_loop(
// CHECK:       .pragma "nounroll";
// CHECK:       @%p{{[0-9]+}} bra.uni $L
// CHECK:       ret;
