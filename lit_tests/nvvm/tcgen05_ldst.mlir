// tcgen05.ld / tcgen05.st: all five shapes, pack/unpack, the 16x32bx2 offset, and
// register counts m(shape) x num up to 128 (docs/ptx-nvvm.md §1.4). Expected text is
// mlir-opt-22's; tests/test_nvvm_upstream.py runs it through mlir-opt-22, llc-22
// and ptxas.
// RUN: xdsl-tmem-opt %s | filecheck %s
// RUN: XDSL_TMEM_ROUNDTRIP
// RUN: XDSL_TMEM_GENERIC

module {
  llvm.func @ldst(%t: !llvm.ptr<6>, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
    %off = llvm.mlir.constant(2 : i64) : i64
    %a = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
    %b = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<128xi32>
    %c = nvvm.tcgen05.ld %t {pack, shape = #nvvm.tcgen05_ldst_shape<shape_16x64b>} : vector<4xi32>
    %d = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_16x128b>} : vector<2xi32>
    %e = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
    %f = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<128xi32>
    %g = nvvm.tcgen05.ld %t, %off pack {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<2xi32>
    nvvm.tcgen05.wait <load>
    nvvm.tcgen05.st %t, %a {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
    nvvm.tcgen05.st %t, %b unpack {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<128xi32>
    nvvm.tcgen05.st %t, %c {shape = #nvvm.tcgen05_ldst_shape<shape_16x64b>} : vector<4xi32>
    nvvm.tcgen05.st %t, %d {shape = #nvvm.tcgen05_ldst_shape<shape_16x128b>} : vector<2xi32>
    nvvm.tcgen05.st %t, %e {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>, unpack} : vector<16xi32>
    nvvm.tcgen05.st %t, %g, %off unpack {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<2xi32>
    nvvm.tcgen05.wait <store>
    // keep the loads alive through llc
    llvm.store %f, %out : vector<128xi32>, !llvm.ptr<1>
    llvm.return
  }
}

// CHECK-LABEL: llvm.func @ldst
// CHECK:      %a = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
// CHECK-NEXT: %b = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<128xi32>
// CHECK-NEXT: %c = nvvm.tcgen05.ld %t pack {shape = #nvvm.tcgen05_ldst_shape<shape_16x64b>} : vector<4xi32>
// CHECK-NEXT: %d = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_16x128b>} : vector<2xi32>
// CHECK-NEXT: %e = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
// CHECK-NEXT: %f = nvvm.tcgen05.ld %t {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<128xi32>
// CHECK-NEXT: %g = nvvm.tcgen05.ld %t, %off pack {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<2xi32>
// CHECK-NEXT: nvvm.tcgen05.wait <load>
// CHECK-NEXT: nvvm.tcgen05.st %t, %a {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : i32
// CHECK-NEXT: nvvm.tcgen05.st %t, %b unpack {shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>} : vector<128xi32>
// CHECK-NEXT: nvvm.tcgen05.st %t, %c {shape = #nvvm.tcgen05_ldst_shape<shape_16x64b>} : vector<4xi32>
// CHECK-NEXT: nvvm.tcgen05.st %t, %d {shape = #nvvm.tcgen05_ldst_shape<shape_16x128b>} : vector<2xi32>
// CHECK-NEXT: nvvm.tcgen05.st %t, %e unpack {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
// CHECK-NEXT: nvvm.tcgen05.st %t, %g, %off unpack {shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>} : vector<2xi32>

// GENERIC:      %a = "nvvm.tcgen05.ld"(%t) <{shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>}> : (!llvm.ptr<6>) -> i32
// GENERIC:      %c = "nvvm.tcgen05.ld"(%t) <{pack, shape = #nvvm.tcgen05_ldst_shape<shape_16x64b>}> : (!llvm.ptr<6>) -> vector<4xi32>
// GENERIC:      %g = "nvvm.tcgen05.ld"(%t, %off) <{pack, shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>}> : (!llvm.ptr<6>, i64) -> vector<2xi32>
// GENERIC:      "nvvm.tcgen05.st"(%t, %b) <{shape = #nvvm.tcgen05_ldst_shape<shape_32x32b>, unpack}> : (!llvm.ptr<6>, vector<128xi32>) -> ()
// GENERIC:      "nvvm.tcgen05.st"(%t, %g, %off) <{shape = #nvvm.tcgen05_ldst_shape<shape_16x32bx2>, unpack}> : (!llvm.ptr<6>, vector<2xi32>, i64) -> ()
