// tcgen05.mma (kinds f16/tf32/f8f6f4/i8; A from a descriptor or from TMEM;
// ctaGroup, collectorOp, aShift, scale, mask), tcgen05.mma_smem_desc, tcgen05.cp
// and tcgen05.shift. Expected text is mlir-opt-22's; tests/test_nvvm_upstream.py
// runs it through mlir-opt-22, llc-22 and ptxas.
// RUN: xdsl-tmem-opt %s | filecheck %s
// RUN: XDSL_TMEM_ROUNDTRIP
// RUN: XDSL_TMEM_GENERIC

module {
  llvm.func @mma_cg1(%d: !llvm.ptr<6>, %at: !llvm.ptr<6>, %ad: i64, %bd: i64, %idesc: i32, %en: i1, %out: !llvm.ptr<1>) attributes {nvvm.kernel} {
    nvvm.tcgen05.mma %d, %ad, %bd, %idesc, %en {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
    nvvm.tcgen05.mma %d, %at, %bd, %idesc, %en {kind = #nvvm.tcgen05_mma_kind<tf32>, ctaGroup = #nvvm.cta_group<cta_1>, collectorOp = #nvvm.tcgen05_mma_collectorop<discard>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
    nvvm.tcgen05.mma %d, %ad, %bd, %idesc, %en {kind = #nvvm.tcgen05_mma_kind<f8f6f4>, ctaGroup = #nvvm.cta_group<cta_1>, collectorOp = #nvvm.tcgen05_mma_collectorop<use>} : (!llvm.ptr<6>, i64, i64, i32, i1)
    nvvm.tcgen05.mma %d, %ad, %bd, %idesc, %en {kind = #nvvm.tcgen05_mma_kind<i8>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
    %scale = llvm.mlir.constant(15 : i64) : i64
    %lanes = llvm.mlir.constant(dense<0> : vector<4xi32>) : vector<4xi32>
    nvvm.tcgen05.mma %d, %at, %bd, %idesc, %en scale = %scale mask = %lanes {aShift, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<tf32>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, i64, vector<4xi32>)
    nvvm.tcgen05.mma %d, %ad, %bd, %idesc, %en mask = %lanes {kind = #nvvm.tcgen05_mma_kind<i8>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1, vector<4xi32>)

    %start = llvm.mlir.constant(1024 : i32) : i32
    %lbo = llvm.mlir.constant(128 : i32) : i32
    %sbo = llvm.mlir.constant(512 : i32) : i32
    %base = llvm.mlir.constant(0 : i8) : i8
    %mode = llvm.mlir.constant(false) : i1
    %swizzle = llvm.mlir.constant(2 : i8) : i8
    %desc = nvvm.tcgen05.mma_smem_desc (%start, %lbo, %sbo, %base, %mode, %swizzle) : (i32, i32, i32, i8, i1, i8) -> i64
    llvm.store %desc, %out : i64, !llvm.ptr<1>

    nvvm.tcgen05.cp %d, %desc {shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}
    nvvm.tcgen05.cp %d, %desc {shape = #nvvm.tcgen05_cp_shape<shape_4x256b>, multicast = #nvvm.tcgen05_cp_multicast<none>}
    nvvm.tcgen05.cp %d, %desc {shape = #nvvm.tcgen05_cp_shape<shape_128x128b>, srcFormat = #nvvm.tcgen05_cp_src_fmt<b4x16_p64>}
    nvvm.tcgen05.cp %d, %desc {shape = #nvvm.tcgen05_cp_shape<shape_64x128b>, multicast = #nvvm.tcgen05_cp_multicast<warpx2_02_13>}
    nvvm.tcgen05.cp %d, %desc {shape = #nvvm.tcgen05_cp_shape<shape_32x128b>, multicast = #nvvm.tcgen05_cp_multicast<warpx4>, srcFormat = #nvvm.tcgen05_cp_src_fmt<b6x16_p32>}
    nvvm.tcgen05.shift %d : !llvm.ptr<6>
    llvm.return
  }

  llvm.func @mma_cg2(%d2: !llvm.ptr<6>, %at2: !llvm.ptr<6>, %ad2: i64, %bd2: i64, %idesc2: i32, %en2: i1) attributes {nvvm.kernel} {
    %lanes8 = llvm.mlir.constant(dense<0> : vector<8xi32>) : vector<8xi32>
    nvvm.tcgen05.mma %d2, %at2, %bd2, %idesc2, %en2 mask = %lanes8 {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_2>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, vector<8xi32>)
    nvvm.tcgen05.cp %d2, %ad2 {group = #nvvm.cta_group<cta_2>, shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}
    nvvm.tcgen05.shift %d2 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>
    llvm.return
  }
}

// CHECK-LABEL: llvm.func @mma_cg1
// CHECK:      nvvm.tcgen05.mma %d, %ad, %bd, %idesc, %en {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK-NEXT: nvvm.tcgen05.mma %d, %at, %bd, %idesc, %en {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<tf32>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1)
// CHECK-NEXT: nvvm.tcgen05.mma %d, %ad, %bd, %idesc, %en {collectorOp = #nvvm.tcgen05_mma_collectorop<use>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f8f6f4>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK-NEXT: nvvm.tcgen05.mma %d, %ad, %bd, %idesc, %en {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<i8>} : (!llvm.ptr<6>, i64, i64, i32, i1)
// CHECK:      nvvm.tcgen05.mma %d, %at, %bd, %idesc, %en scale = %scale mask = %lanes {aShift, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<tf32>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, i64, vector<4xi32>)
// CHECK-NEXT: nvvm.tcgen05.mma %d, %ad, %bd, %idesc, %en mask = %lanes {ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<i8>} : (!llvm.ptr<6>, i64, i64, i32, i1, vector<4xi32>)
// CHECK:      %desc = nvvm.tcgen05.mma_smem_desc(%start, %lbo, %sbo, %base, %mode, %swizzle) : (i32, i32, i32, i8, i1, i8) -> i64
// CHECK:      nvvm.tcgen05.cp %d, %desc {shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}
// CHECK-NEXT: nvvm.tcgen05.cp %d, %desc {shape = #nvvm.tcgen05_cp_shape<shape_4x256b>}
// CHECK-NEXT: nvvm.tcgen05.cp %d, %desc {shape = #nvvm.tcgen05_cp_shape<shape_128x128b>, srcFormat = #nvvm.tcgen05_cp_src_fmt<b4x16_p64>}
// CHECK-NEXT: nvvm.tcgen05.cp %d, %desc {multicast = #nvvm.tcgen05_cp_multicast<warpx2_02_13>, shape = #nvvm.tcgen05_cp_shape<shape_64x128b>}
// CHECK-NEXT: nvvm.tcgen05.cp %d, %desc {multicast = #nvvm.tcgen05_cp_multicast<warpx4>, shape = #nvvm.tcgen05_cp_shape<shape_32x128b>, srcFormat = #nvvm.tcgen05_cp_src_fmt<b6x16_p32>}
// CHECK-NEXT: nvvm.tcgen05.shift %d : !llvm.ptr<6>
// CHECK-LABEL: llvm.func @mma_cg2
// CHECK:      nvvm.tcgen05.mma %d2, %at2, %bd2, %idesc2, %en2 mask = %lanes8 {ctaGroup = #nvvm.cta_group<cta_2>, kind = #nvvm.tcgen05_mma_kind<f16>} : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, vector<8xi32>)
// CHECK-NEXT: nvvm.tcgen05.cp %d2, %ad2 {group = #nvvm.cta_group<cta_2>, shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}
// CHECK-NEXT: nvvm.tcgen05.shift %d2 {group = #nvvm.cta_group<cta_2>} : !llvm.ptr<6>

// GENERIC:      "nvvm.tcgen05.mma"(%d, %ad, %bd, %idesc, %en) <{collectorOp = #nvvm.tcgen05_mma_collectorop<discard>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<f16>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>}> : (!llvm.ptr<6>, i64, i64, i32, i1) -> ()
// GENERIC:      "nvvm.tcgen05.mma"(%d, %at, %bd, %idesc, %en, %scale, %lanes) <{aShift, collectorOp = #nvvm.tcgen05_mma_collectorop<lastuse>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<tf32>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1>}> : (!llvm.ptr<6>, !llvm.ptr<6>, i64, i32, i1, i64, vector<4xi32>) -> ()
// GENERIC-NEXT: "nvvm.tcgen05.mma"(%d, %ad, %bd, %idesc, %en, %lanes) <{collectorOp = #nvvm.tcgen05_mma_collectorop<discard>, ctaGroup = #nvvm.cta_group<cta_1>, kind = #nvvm.tcgen05_mma_kind<i8>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 1>}> : (!llvm.ptr<6>, i64, i64, i32, i1, vector<4xi32>) -> ()
// GENERIC:      %desc = "nvvm.tcgen05.mma_smem_desc"(%start, %lbo, %sbo, %base, %mode, %swizzle) : (i32, i32, i32, i8, i1, i8) -> i64
// GENERIC:      "nvvm.tcgen05.cp"(%d, %desc) <{group = #nvvm.cta_group<cta_1>, multicast = #nvvm.tcgen05_cp_multicast<none>, shape = #nvvm.tcgen05_cp_shape<shape_128x256b>}> : (!llvm.ptr<6>, i64) -> ()
// GENERIC:      "nvvm.tcgen05.shift"(%d) <{group = #nvvm.cta_group<cta_1>}> : (!llvm.ptr<6>) -> ()
