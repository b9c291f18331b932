// The NVVM level executes the TMA and bulk-copy ops (docs/tma.md, "NVVM ops"); the options its
// model does not execute are refused at the op, before the run, naming the op and the option
// (exit code 1). One kernel per refusal (the first refused op stops the launch).
//
// RUN: not xdsl-tmem-run %s --kernel im2col_load --block 32 --arg d=null --arg t=null --arg b=null --arg x=0 --arg o=0 2>&1 | filecheck %s --check-prefix=LOAD
// LOAD: tma_refused.mlir:[[# @LINE + 21]]:3: error: xdsl-tmem-run: nvvm.cp.async.bulk.tensor.shared.cluster.global with mode im2col is not executed by the model (only mode tile)
//
// RUN: not xdsl-tmem-run %s --kernel gather4 --block 32 --arg d=null --arg t=null --arg b=null --arg x=0 2>&1 | filecheck %s --check-prefix=GATHER
// GATHER: tma_refused.mlir:[[# @LINE + 23]]:3: error: xdsl-tmem-run: nvvm.cp.async.bulk.tensor.shared.cluster.global with mode tile_gather4 is not executed by the model (only mode tile)
//
// RUN: not xdsl-tmem-run %s --kernel multicast_pair --block 32 --arg d=null --arg t=null --arg b=null --arg x=0 --arg m=3 2>&1 | filecheck %s --check-prefix=PAIR
// PAIR: tma_refused.mlir:[[# @LINE + 25]]:3: error: xdsl-tmem-run: nvvm.cp.async.bulk.tensor.shared.cluster.global: multicast_mask with group is not modelled (its mbarrier mapping is unverified)
//
// RUN: not xdsl-tmem-run %s --kernel scatter4 --block 32 --arg t=null --arg s=null --arg x=0 2>&1 | filecheck %s --check-prefix=SCATTER
// SCATTER: tma_refused.mlir:[[# @LINE + 27]]:3: error: xdsl-tmem-run: nvvm.cp.async.bulk.tensor.global.shared.cta with mode tile_scatter4 is not executed by the model (only mode tile)
//
// RUN: not xdsl-tmem-run %s --kernel im2col_reduce --block 32 --arg t=null --arg s=null --arg x=0 2>&1 | filecheck %s --check-prefix=REDUCE
// REDUCE: tma_refused.mlir:[[# @LINE + 29]]:3: error: xdsl-tmem-run: nvvm.cp.async.bulk.tensor.reduce with mode im2col is not executed by the model (only mode tile)
//
// RUN: not xdsl-tmem-run %s --kernel bulk_multicast --block 32 --arg d=null --arg g=null --arg b=null --arg n=16 --arg m=3 2>&1 | filecheck %s --check-prefix=BULKMC
// BULKMC: tma_refused.mlir:[[# @LINE + 31]]:3: error: xdsl-tmem-run: nvvm.cp.async.bulk.shared.cluster.global with multicast_mask is not executed by the model
//
// RUN: not xdsl-tmem-run %s --kernel byte_mask --block 32 --arg g=null --arg s=null --arg n=16 --arg m=3 2>&1 | filecheck %s --check-prefix=BYTES
// BYTES: tma_refused.mlir:[[# @LINE + 33]]:3: error: xdsl-tmem-run: nvvm.cp.async.bulk.global.shared.cta with byte_mask is not executed by the model

llvm.func @im2col_load(%d: !llvm.ptr<7>, %t: !llvm.ptr, %b: !llvm.ptr<3>, %x: i32, %o: i16) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %d, %t, %b, box[%x, %x, %x] im2col[%o] {mode = #nvvm.tma_load_mode<im2col>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}

llvm.func @gather4(%d: !llvm.ptr<7>, %t: !llvm.ptr, %b: !llvm.ptr<3>, %x: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %d, %t, %b, box[%x, %x, %x, %x, %x] {mode = #nvvm.tma_load_mode<tile_gather4>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}

llvm.func @multicast_pair(%d: !llvm.ptr<7>, %t: !llvm.ptr, %b: !llvm.ptr<3>, %x: i32, %m: i16) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.shared.cluster.global %d, %t, %b, box[%x, %x] multicast_mask = %m {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<7>, !llvm.ptr
  llvm.return
}

llvm.func @scatter4(%t: !llvm.ptr, %s: !llvm.ptr<3>, %x: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.global.shared.cta %t, %s, box[%x, %x, %x, %x, %x] {mode = #nvvm.tma_store_mode<tile_scatter4>} : !llvm.ptr, <3>
  llvm.return
}

llvm.func @im2col_reduce(%t: !llvm.ptr, %s: !llvm.ptr<3>, %x: i32) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.tensor.reduce %t, %s, box[%x, %x, %x] {mode = #nvvm.tma_store_mode<im2col>, redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, <3>
  llvm.return
}

llvm.func @bulk_multicast(%d: !llvm.ptr<7>, %g: !llvm.ptr<1>, %b: !llvm.ptr<3>, %n: i32, %m: i16) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.shared.cluster.global %d, %g, %b, %n multicast_mask = %m : !llvm.ptr<7>, <1>
  llvm.return
}

llvm.func @byte_mask(%g: !llvm.ptr<1>, %s: !llvm.ptr<3>, %n: i32, %m: i16) attributes {nvvm.kernel} {
  nvvm.cp.async.bulk.global.shared.cta %g, %s, %n byte_mask = %m : <1>, <3>
  llvm.return
}
