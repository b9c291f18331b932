// Module-level verifier rules upstream MLIR enforces and xDSL 0.74 lacks
// (xdsl_tmem/verifier.py), and the parser's located name errors. The
// `// mlir-opt-22: "..."` lines are checked by tests/test_nvvm_upstream.py.
// RUN: xdsl-tmem-opt %s --verify-diagnostics --split-input-file | filecheck %s

llvm.func @f() {
  %a = llvm.add %b, %b : i32
  %b = llvm.mlir.constant(1 : i32) : i32
  llvm.return
}
// mlir-opt-22: "operand #0 does not dominate this use"
// CHECK: invalid_module.mlir:7:3: error: llvm.add: operand #0 (%b) does not dominate this use: it is defined later in the block

// -----
llvm.func @f(%c: i1) {
  llvm.cond_br %c, ^a, ^b
^a:
  %x = llvm.mlir.constant(1 : i32) : i32
  llvm.br ^j
^b:
  llvm.br ^j
^j:
  %y = llvm.add %x, %x : i32
  llvm.return
}
// mlir-opt-22: "operand #0 does not dominate this use"
// CHECK: invalid_module.mlir:[[# @LINE - 4]]:3: error: llvm.add: operand #0 (%x) does not dominate this use: its block does not dominate the block of this use

// -----
llvm.func @f(%c: i1) -> i32 {
  %r = scf.if %c -> (i32) {
    %a = llvm.mlir.constant(1 : i32) : i32
    scf.yield %a, %a : i32, i32
  } else {
    %b = llvm.mlir.constant(2 : i32) : i32
    scf.yield %b : i32
  }
  llvm.return %r : i32
}
// mlir-opt-22: "region branch point has 2 operands, but region successor needs 1 inputs"
// CHECK: invalid_module.mlir:[[# @LINE - 10]]:3: error: scf.if: region #0 yields 2 value(s) (i32, i32) but the op has 1 result(s) (i32); each region's scf.yield must yield the op's result types

// -----
llvm.func @f() {
  %p = llvm.mlir.addressof @nope : !llvm.ptr
  llvm.return
}
// mlir-opt-22: "must reference a global defined by 'llvm.mlir.global'"
// CHECK: invalid_module.mlir:[[# @LINE - 4]]:3: error: llvm.mlir.addressof: @nope is not defined; it must name an llvm.mlir.global or llvm.func of the enclosing symbol table

// -----
llvm.func @k() attributes {nvvm.kernel, nvvm.maxntid = array<i64: 128, 1, 1>} {
  llvm.return
}
// mlir-opt-22: "attribute must be integer array with maximum 3 index"
// CHECK: invalid_module.mlir:[[# @LINE - 4]]:1: error: llvm.func: 'nvvm.maxntid' must be an array<i32: ...> of 1 to 3 dimensions, got array<i64: 128, 1, 1>

// -----
llvm.func @k() attributes {nvvm.kernel, nvvm.minctasm = "two"} {
  llvm.return
}
// mlir-opt-22: "attribute must be integer constant"
// CHECK: error: llvm.func: 'nvvm.minctasm' must be an integer constant, got "two"

// -----
llvm.func @k() attributes {nvvm.kernel, nvvm.blocksareclusters} {
  llvm.return
}
// mlir-opt-22: "attribute must be used along with 'nvvm.reqntid' and 'nvvm.cluster_dim'"
// CHECK: error: llvm.func: 'nvvm.blocksareclusters' must be used along with 'nvvm.reqntid' and 'nvvm.cluster_dim'

// -----
llvm.func @f() {
  foo.bar
  llvm.return
}
// mlir-opt-22: "Dialect `foo' not found for custom op 'foo.bar'"
// CHECK: invalid_module.mlir:[[# @LINE - 4]]:3: error: unregistered operation 'foo.bar': no dialect 'foo' is registered

// -----
llvm.func @f() {
  %y = llvm.add %x, %x : i32
  llvm.return
}
// mlir-opt-22: "use of undeclared SSA value name"
// CHECK: invalid_module.mlir:[[# @LINE - 4]]:3: error: use of undefined value %x: no operation or block argument in scope defines it

// -----
llvm.func @f() {
  %y = llvm.add %!, %! : i32
  llvm.return
}
// mlir-opt-22: "invalid SSA name"
// CHECK: invalid_module.mlir:[[# @LINE - 4]]:17: error: invalid SSA value name after '%': expected digits, or a letter or one of '$._-' followed by letters, digits and '$._-'
