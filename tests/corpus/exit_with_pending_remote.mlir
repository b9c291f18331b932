// Hazard class: exit-with-pending-remote
// Level: nvvm
// Run: --kernel k --block 32 --cluster 2
// Exit: 3
//
// CTA 1 exits right after the cluster barrier, while CTA 0 still arrives on CTA 1's
// mbarrier: a CTA must not exit while peers may still arrive on its barriers
// (docs/semantics.md §9.17; Mojo's load warp drains its pipeline for this reason).
module {
  llvm.mlir.global internal @bar() {addr_space = 3 : i32, alignment = 8 : i64} : i64

  llvm.func @k() attributes {nvvm.cluster_dim = array<i32: 2, 1, 1>, nvvm.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %bar = llvm.mlir.addressof @bar : !llvm.ptr<3>
    %tid = nvvm.read.ptx.sreg.tid.x : i32
    %rank = nvvm.read.ptx.sreg.cluster.ctarank : i32
    %is_t0 = arith.cmpi eq, %tid, %c0 : i32
    scf.if %is_t0 {
      nvvm.mbarrier.init %bar, %c1 : !llvm.ptr<3>, i32
      nvvm.fence.mbarrier.init
    }
    nvvm.cluster.arrive {aligned}
    nvvm.cluster.wait {aligned}
    %leader = arith.cmpi eq, %rank, %c0 : i32
    scf.if %leader {
      // Some local work, then signal the peer, which does not wait for it.
      nvvm.barrier0
      nvvm.barrier0
      %remote = nvvm.mapa %bar, %c1 : !llvm.ptr<3> -> !llvm.ptr<7>
      scf.if %is_t0 {
        nvvm.mbarrier.arrive %remote {scope = #nvvm.mem_scope<cluster>} : !llvm.ptr<7>
      }
    }
    llvm.return
  }
}
