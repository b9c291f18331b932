// RUN: xdsl-tmem-opt %s -p lower-tmem --split-input-file --verify-diagnostics | filecheck %s
// RUN: not xdsl-tmem-opt %s -p 'lower-tmem{fence-policy=loose}' 2>&1 | filecheck %s --check-prefix=POLICY
// RUN: xdsl-tmem-opt %s -p convert-tmem-to-nvvm --split-input-file --verify-diagnostics | filecheck %s --check-prefix=UNEXPANDED

// A tmem value may only flow through tmem ops, scf.for and scf.if: anything else is
// reported at the op that carries it, not silently dropped.
func.func @f(%r: !tmem.output_ring<2, 256, 1>) {
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 3]]:1: error: convert-tmem-to-nvvm: a !tmem.output_ring<2, 256, 1> value flows through func.func, which cannot carry it (only tmem ops and scf.for, scf.if, scf.while, scf.yield, scf.condition can)
// POLICY: error: pass 'lower-tmem': fence-policy must be strict or mojo, got 'loose'; its options: fence-policy: 'str' = strict

// -----

// scf.while carries tmem values (lit_tests/lower/control_flow.mlir); unstructured
// control flow does not: the branch passing one is reported.
func.func @g(%bars: !llvm.ptr<3>, %slot: !llvm.ptr<3>) {
  %a = tmem.from_shared %slot : !tmem.allocation<1, 512>
  %r = tmem.output_ring.create %bars, %a : !tmem.allocation<1, 512> -> !tmem.output_ring<2, 256, 1>
  cf.br ^bb1(%r : !tmem.output_ring<2, 256, 1>)
^bb1(%y: !tmem.output_ring<2, 256, 1>):
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 4]]:3: error: convert-tmem-to-nvvm: a !tmem.output_ring<2, 256, 1> value flows through cf.br, which cannot carry it

// -----

// scf.execute_region is not a forwarding op of the conversion: a tmem value it yields
// is reported there.
func.func @h(%bars: !llvm.ptr<3>, %slot: !llvm.ptr<3>) {
  %a = tmem.from_shared %slot : !tmem.allocation<1, 512>
  %r = tmem.output_ring.create %bars, %a : !tmem.allocation<1, 512> -> !tmem.output_ring<2, 256, 1>
  %e = scf.execute_region -> !tmem.output_ring<2, 256, 1> {
    scf.yield %r : !tmem.output_ring<2, 256, 1>
  }
  func.return
}
// CHECK: errors.mlir:[[# @LINE - 5]]:3: error: convert-tmem-to-nvvm: a !tmem.output_ring<2, 256, 1> value flows through scf.execute_region, which cannot carry it

// -----

// convert-tmem-to-nvvm alone does not expand region ops: it says which pass does.
%r = "test.op"() : () -> !tmem.output_ring<2, 256, 1>
%r1 = tmem.output_ring.consumer %r : !tmem.output_ring<2, 256, 1> {
^bb0(%s: !tmem.tmem_stage<2, 256, 1>):
  tmem.yield
}
// UNEXPANDED: errors.mlir:[[# @LINE - 4]]:1: error: convert-tmem-to-nvvm: tmem.output_ring.consumer must be expanded first (run tmem-expand-regions, or the whole lower-tmem pipeline)
