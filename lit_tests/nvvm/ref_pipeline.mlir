// The hand-written reference program ref_pipeline.mlir (the 2-stage TMEM accumulator
// pipeline of tests/ptx_corpus/ref_pipeline.ptx in upstream NVVM ops), committed here
// unedited below the marker; the recorded hash keeps it so (tests/test_nvvm_upstream.py,
// which also runs it against mlir-opt-22, llc-22 and ptxas). Expected text is mlir-opt-22's.
// (No --split-input-file: the file's section rules start with `// -----`.)
// RUN: xdsl-tmem-opt %s | filecheck %s
// RUN: xdsl-tmem-opt %s --print-op-generic | xdsl-tmem-opt | filecheck %s
// RUN: xdsl-tmem-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC
// CHECK:      %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 160> : i32
// CHECK:      nvvm.tcgen05.alloc %slot, %c512 : !llvm.ptr<3>, i32
// CHECK:      nvvm.mbarrier.try_wait.parity %empty_s, %phx, %ticks : !llvm.ptr<3>, i32, i32
// CHECK:      %va = nvvm.tcgen05.ld %pa {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
// GENERIC:    %tid = "nvvm.read.ptx.sreg.tid.x"() <{range = #llvm.constant_range<i32, 0, 160>}> : () -> i32
// sha256 of the verbatim copy: 26a34e460a422f5ae93af67b599320abe12b3813504c8ca56214818594e300b8
// ---- verbatim copy of the reference program ref_pipeline.mlir below ----
// ref_pipeline.mlir -- the same 2-stage TMEM accumulator pipeline as
// ref_pipeline.ptx, written against the *upstream* MLIR 22 NVVM dialect
// (plus arith/scf for control flow). Verified with:
//
//   B=the llvm-22 bin directory (or the -22 suffixed tools on PATH)
//   $B/mlir-opt ref_pipeline.mlir --convert-scf-to-cf --convert-arith-to-llvm \
//       --convert-nvvm-to-llvm --convert-cf-to-llvm --reconcile-unrealized-casts \
//     | $B/mlir-translate --mlir-to-llvmir \
//     | $B/llc -march=nvptx64 -mcpu=sm_100a -mattr=+ptx86 -o ref_pipeline.llc.ptx
//   ptxas -arch=sm_100a -v ref_pipeline.llc.ptx -o ref_pipeline.llc.cubin
//
// Not executed on hardware. See ref_pipeline.ptx for the role description.
module {
  llvm.mlir.global internal @smem_a() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<8192 x i8>
  llvm.mlir.global internal @smem_b() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<16384 x i8>
  llvm.mlir.global internal @full_bar() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<2 x i64>
  llvm.mlir.global internal @empty_bar() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<2 x i64>
  llvm.mlir.global internal @tmem_slot() {addr_space = 3 : i32, alignment = 4 : i64} : i32

  llvm.func @ref_pipeline(%out: !llvm.ptr<1>, %a: !llvm.ptr<1>, %b: !llvm.ptr<1>, %ntiles: i32)
      attributes {nvvm.kernel, nvvm.maxntid = array<i32: 160, 1, 1>, nvvm.minctasm = 1 : i32} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c4 = arith.constant 4 : i32
    %c5 = arith.constant 5 : i32
    %c8 = arith.constant 8 : i32
    %c16 = arith.constant 16 : i32
    %c21 = arith.constant 21 : i32
    %c32 = arith.constant 32 : i32
    %c128 = arith.constant 128 : i32
    %c160 = arith.constant 160 : i32
    %c256 = arith.constant 256 : i32
    %c512 = arith.constant 512 : i32
    %c1024 = arith.constant 1024 : i32
    %lane16 = arith.constant 1048576 : i32        // 16 << 16 : +16 TMEM lanes
    %ticks = arith.constant 0 : i32               // try_wait suspend hint (must be constant)

    %slot = llvm.mlir.addressof @tmem_slot : !llvm.ptr<3>
    %fullb = llvm.mlir.addressof @full_bar : !llvm.ptr<3>
    %emptyb = llvm.mlir.addressof @empty_bar : !llvm.ptr<3>
    %sa = llvm.mlir.addressof @smem_a : !llvm.ptr<3>
    %sb = llvm.mlir.addressof @smem_b : !llvm.ptr<3>

    %tid = nvvm.read.ptx.sreg.tid.x range <i32, 0, 160> : i32
    %warp = arith.shrui %tid, %c5 : i32            // warp index in the CTA
    %is_mma = arith.cmpi eq, %warp, %c4 : i32

    // ---- (1) warp 4 allocates 512 TMEM columns, then gives up the permit
    scf.if %is_mma {
      nvvm.tcgen05.alloc %slot, %c512 : !llvm.ptr<3>, i32
      nvvm.tcgen05.relinquish_alloc_permit
    }

    // ---- (2) thread 0 initialises full[2] (count 1) and empty[2] (count 128)
    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      %f1 = llvm.getelementptr %fullb[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
      %e1 = llvm.getelementptr %emptyb[1] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i64
      nvvm.mbarrier.init %fullb, %c1 : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %f1, %c1 : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %emptyb, %c128 : !llvm.ptr<3>, i32
      nvvm.mbarrier.init %e1, %c128 : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
    }

    // ---- (3) cooperative copy of the A (8 KiB) and B (16 KiB) tiles
    scf.for %i = %tid to %c512 step %c160 : i32 {
      %src = llvm.getelementptr %a[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
      %v = llvm.load %src {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
      %dst = llvm.getelementptr %sa[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
      llvm.store %v, %dst {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
    }
    scf.for %i = %tid to %c1024 step %c160 : i32 {
      %src = llvm.getelementptr %b[%i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, vector<4xi32>
      %v = llvm.load %src {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
      %dst = llvm.getelementptr %sb[%i] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<4xi32>
      llvm.store %v, %dst {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<3>
    }
    // make generic-proxy smem writes visible to the tensor core (async proxy)
    nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}

    // ---- (4) publish TMEM address + barrier init
    nvvm.tcgen05.fence <before>
    nvvm.barrier0
    nvvm.tcgen05.fence <after>
    %tbase = llvm.load %slot : !llvm.ptr<3> -> i32

    scf.if %is_mma {
      // ================= MMA warp =================
      // smem descriptors: (addr>>4)&0x3fff | LBO(128)>>4 <<16 | SBO(512)>>4 <<32 | 1<<46
      %hi = arith.constant 0x0000402000080000 : i64
      %mask14 = arith.constant 16383 : i32
      %sa_i = llvm.ptrtoint %sa : !llvm.ptr<3> to i32
      %sb_i = llvm.ptrtoint %sb : !llvm.ptr<3> to i32
      %sa_s = arith.shrui %sa_i, %c4 : i32
      %sb_s = arith.shrui %sb_i, %c4 : i32
      %sa_m = arith.andi %sa_s, %mask14 : i32
      %sb_m = arith.andi %sb_s, %mask14 : i32
      %sa_w = arith.extui %sa_m : i32 to i64
      %sb_w = arith.extui %sb_m : i32 to i64
      %adesc0 = arith.ori %sa_w, %hi : i64
      %bdesc0 = arith.ori %sb_w, %hi : i64
      %kstep = arith.constant 16 : i64               // +256 B -> next K=16 slice
      %adesc1 = arith.addi %adesc0, %kstep : i64
      %bdesc1 = arith.addi %bdesc0, %kstep : i64
      // idesc: D=f32, A=B=f16, K-major, N=256 (32<<17), M=128 (8<<24)
      %idesc = arith.constant 0x08400010 : i32
      %false = arith.constant false
      %true = arith.constant true
      %leader = nvvm.elect.sync -> i1
      scf.for %t = %c0 to %ntiles step %c1 : i32 {
        %s = arith.andi %t, %c1 : i32
        %t2 = arith.shrui %t, %c1 : i32
        %ph = arith.andi %t2, %c1 : i32
        %phx = arith.xori %ph, %c1 : i32
        %empty_s = llvm.getelementptr %emptyb[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        %full_s = llvm.getelementptr %fullb[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        nvvm.mbarrier.try_wait.parity %empty_s, %phx, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.tcgen05.fence <after>
        %coff = arith.muli %s, %c256 : i32
        %daddr = arith.addi %tbase, %coff : i32
        %d = llvm.inttoptr %daddr : i32 to !llvm.ptr<6>
        scf.if %leader {
          nvvm.tcgen05.mma %d, %adesc0, %bdesc0, %idesc, %false {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          nvvm.tcgen05.mma %d, %adesc1, %bdesc1, %idesc, %true {kind = #nvvm.tcgen05_mma_kind<f16>, ctaGroup = #nvvm.cta_group<cta_1>} : (!llvm.ptr<6>, i64, i64, i32, i1)
          nvvm.tcgen05.commit %full_s : !llvm.ptr<3>
        }
      }
    } else {
      // ================= epilogue warps 0..3 =================
      %lanebase = arith.shli %warp, %c21 : i32       // (32*w) << 16
      %wbase = arith.addi %tbase, %lanebase : i32
      scf.for %t = %c0 to %ntiles step %c1 : i32 {
        %s = arith.andi %t, %c1 : i32
        %t2 = arith.shrui %t, %c1 : i32
        %ph = arith.andi %t2, %c1 : i32
        %empty_s = llvm.getelementptr %emptyb[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        %full_s = llvm.getelementptr %fullb[%s] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i64
        nvvm.mbarrier.try_wait.parity %full_s, %ph, %ticks : !llvm.ptr<3>, i32, i32
        nvvm.tcgen05.fence <after>
        %coff = arith.muli %s, %c256 : i32
        %sbase = arith.addi %wbase, %coff : i32
        // out + (t*128 + tid) * 256 floats
        %row = arith.muli %t, %c128 : i32
        %thr = arith.addi %row, %tid : i32
        %thr64 = arith.extui %thr : i32 to i64
        %c256_64 = arith.constant 256 : i64
        %elt = arith.muli %thr64, %c256_64 : i64
        %obase = llvm.getelementptr %out[%elt] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
        scf.for %c = %c0 to %c8 step %c1 : i32 {
          %col = arith.muli %c, %c32 : i32
          %ta = arith.addi %sbase, %col : i32
          %tb = arith.addi %ta, %lane16 : i32
          %pa = llvm.inttoptr %ta : i32 to !llvm.ptr<6>
          %pb = llvm.inttoptr %tb : i32 to !llvm.ptr<6>
          %va = nvvm.tcgen05.ld %pa {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
          %vb = nvvm.tcgen05.ld %pb {shape = #nvvm.tcgen05_ldst_shape<shape_16x256b>} : vector<16xi32>
          nvvm.tcgen05.wait <load>
          %o0 = llvm.getelementptr %obase[%col] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
          %o1 = llvm.getelementptr %o0[16] : (!llvm.ptr<1>) -> !llvm.ptr<1>, f32
          llvm.store %va, %o0 {alignment = 16 : i64} : vector<16xi32>, !llvm.ptr<1>
          llvm.store %vb, %o1 {alignment = 16 : i64} : vector<16xi32>, !llvm.ptr<1>
        }
        nvvm.tcgen05.fence <before>
        nvvm.mbarrier.arrive %empty_s : !llvm.ptr<3>
      }
    }

    // ---- teardown
    nvvm.tcgen05.fence <before>
    nvvm.barrier0
    nvvm.tcgen05.fence <after>
    scf.if %is_mma {
      %tp = llvm.inttoptr %tbase : i32 to !llvm.ptr<6>
      nvvm.tcgen05.dealloc %tp, %c512 : !llvm.ptr<6>, i32
    }
    llvm.return
  }
}
